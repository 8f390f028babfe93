"""``kubespread admit``: one manifest on stdin, kube-apiserver's answer as JSON on stdout.

The interface of shared/conformance/admission: exit 0 for acceptances and rejections alike.
"""

from __future__ import annotations

import json
import sys

import typer

__all__ = ["admit_command"]


def admit_command() -> None:
    """Admit one manifest from stdin as kube-apiserver would (dry run); print the answer as JSON."""
    from kubespread.admission.apiserver import admit_text

    answer = admit_text(sys.stdin.read())
    typer.echo(json.dumps(answer, indent=1, ensure_ascii=False))
