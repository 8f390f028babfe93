"""``kubespread evaluate``: the conformance interface — one input document on stdin (or a
file), the answer as JSON on stdout. Malformed input exits 2 with a one-line error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from kubespread.cli.options import KubeVersionOption

__all__ = ["evaluate_command"]


def evaluate_command(
    input_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="INPUT",
            hidden=True,
            help="Input document (JSON); stdin when omitted or '-'.",
            show_default=False,
        ),
    ] = None,
    indent: Annotated[int | None, typer.Option(metavar="N", help="Indent the JSON answer.")] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Start each preemption's dry run at a seeded random offset among the potential "
            "nodes (kube-scheduler picks a random one); without it the dry run starts at the "
            "first potential node in the input's node order.",
            show_default=False,
        ),
    ] = None,
    kube_version: KubeVersionOption = None,
) -> None:
    """Schedule the incoming pods of a conformance input document and print the answer. An
    unschedulable pod's entry carries "preemption": the node it is nominated to and the victims
    to evict there (null and [] when preemption cannot help); in sequence mode the victims are
    deleted before the next pod is judged and the preemptor is nominated, not bound.

    INPUT is the input document (JSON); stdin when omitted or -. A document's "kubeVersion"
    ("1.36") says which version answers it; --kube-version only answers those without one."""
    from kubespread.harness.evaluate import EvaluateError, evaluate

    source = "stdin" if input_file is None or str(input_file) == "-" else str(input_file)
    try:
        text = sys.stdin.read() if source == "stdin" else Path(source).read_text()
    except OSError as e:
        _fail(f"{source}: {e.strerror or e}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        _fail(f"{source}: not JSON: {e.msg} (line {e.lineno}, column {e.colno})")
    try:
        answer = evaluate(doc, seed=seed, features=kube_version)
    except EvaluateError as e:
        _fail(f"{source}: {e}")
    typer.echo(json.dumps(answer, indent=indent, ensure_ascii=False))


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
