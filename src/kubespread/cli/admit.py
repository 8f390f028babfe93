"""``kubespread admit``: one manifest on stdin, kube-apiserver's answer as JSON on stdout.

The interface of shared/conformance/admission: exit 0 for acceptances and rejections alike.
The flags switch on admission rules a default kube-apiserver v1.36 does not run (see
kubespread.admission.hard_anti_affinity); without them the answer is kube-apiserver's.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from kubespread.cli.options import KubeVersionOption

__all__ = ["admit_command"]


def admit_command(
    hard_anti_affinity_limit: Annotated[
        bool,
        typer.Option(
            "--hard-anti-affinity-limit",
            help="Refuse pods whose required anti-affinity selects all namespaces "
            "(namespaceSelector: {}) with a topologyKey other than kubernetes.io/hostname.",
        ),
    ] = False,
    limit_pod_hard_anti_affinity_topology: Annotated[
        bool,
        typer.Option(
            "--limit-pod-hard-anti-affinity-topology",
            help="Refuse pods with any required anti-affinity topologyKey other than "
            "kubernetes.io/hostname (kube's LimitPodHardAntiAffinityTopology plugin).",
        ),
    ] = False,
    kube_version: KubeVersionOption = None,
) -> None:
    """Admit one manifest from stdin as kube-apiserver would (dry run); print the answer as JSON."""
    from kubespread.admission.apiserver import admit_text
    from kubespread.admission.framework import AdmissionContext, AdmissionOptions
    from kubespread.api.features import features_for

    options = AdmissionOptions(
        hard_anti_affinity_limit=hard_anti_affinity_limit,
        limit_pod_hard_anti_affinity_topology=limit_pod_hard_anti_affinity_topology,
        features=kube_version or features_for(),
    )
    answer = admit_text(sys.stdin.buffer.read(), context=AdmissionContext.create(options=options))
    typer.echo(json.dumps(answer, indent=1, ensure_ascii=False))
