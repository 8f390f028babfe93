"""What every command shares: consoles, the -f and -o options, loading with reporting."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from kubespread.io import Manifests, dump_data, load

__all__ = ["FilesOption", "Output", "OutputOption", "err", "load_or_exit", "out", "print_data"]

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


FilesOption = Annotated[
    list[Path],
    typer.Option(
        "-f",
        "--filename",
        help="Manifest file, directory (recursive: *.yaml, *.yml, *.json) or - for stdin. Repeatable.",
    ),
]
OutputOption = Annotated[Output, typer.Option("-o", "--output", help="Output format.")]


def print_data(data: Any, fmt: Output) -> None:
    """Machine-readable output goes to stdout unstyled, so it can be piped."""
    typer.echo(dump_data(data, fmt.value), nl=False)


def report_warnings(manifests: Manifests) -> None:
    for p in manifests.warnings:
        err.print(f"[yellow]warning:[/] {p}", markup=True, highlight=False)


def load_or_exit(files: list[Path], *, allow_errors: bool = False) -> Manifests:
    """Load every -f path; print warnings; on load errors print them all and exit 1."""
    if not files:
        err.print("error: no input: give one or more -f PATH (a file, a directory, or - for stdin)")
        raise typer.Exit(2)
    manifests = load([str(f) for f in files])
    report_warnings(manifests)
    if manifests.errors and not allow_errors:
        for p in manifests.errors:
            err.print(str(p), markup=False)
        n = len(manifests.errors)
        err.print(f"error: {n} problem{'s' if n != 1 else ''} while loading manifests", markup=False)
        raise typer.Exit(1)
    return manifests
