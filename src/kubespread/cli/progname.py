"""How usage lines name the program. Apart from the Typer app so that both the executables'
entry (``kubespread.cli.main``) and the app's own ``main`` use it without importing each
other, and without Typer."""

from __future__ import annotations

import os

__all__ = ["prog_name"]


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
