"""The command line. ``main`` is what the ``kubespread`` and ``kubectl-spread`` executables
and ``python -m kubespread`` run."""

from __future__ import annotations

import os
import sys

__all__ = ["main", "prog_name"]


def prog_name(argv0: str, args: list[str] | None = None) -> str:
    """How usage lines name the program: ``kubectl spread`` when kubectl runs its plugin
    ``kubectl-spread`` (krew's naming), else ``kubespread``. Shell completion is for the
    executable itself (a name with no space): ``kubectl-spread``."""
    name = os.path.basename(argv0)
    if not name.startswith("kubectl-spread"):
        return "kubespread"
    completing = "_KUBECTL_SPREAD_COMPLETE" in os.environ or any(
        a in ("--install-completion", "--show-completion") for a in args or []
    )
    return "kubectl-spread" if completing else "kubectl spread"


def main() -> None:
    """``--version`` answers before Typer and the commands are imported (about a second of
    imports a version check should not pay); everything else runs the Typer app."""
    if sys.argv[1:] == ["--version"]:
        from kubespread import __version__

        print(f"kubespread {__version__}")
        return
    from kubespread.cli.app import app

    app(prog_name=prog_name(sys.argv[0], sys.argv[1:]))
