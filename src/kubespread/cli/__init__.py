"""The command line. ``main`` is what the ``kubespread`` and ``kubectl-spread`` executables
and ``python -m kubespread`` run."""

from __future__ import annotations

import gc
import os
import sys

from kubespread.cli.progname import prog_name

__all__ = ["main", "prog_name"]


def main() -> None:
    """``--version`` answers before Typer and the commands are imported (about a second of
    imports a version check should not pay); everything else runs the Typer app, with the
    named command's module alone imported when a command is named."""
    from kubespread.cli.pipe import quiet_on_closed_pipe

    if sys.argv[1:] == ["--version"]:
        from kubespread import __version__

        quiet_on_closed_pipe(lambda: print(f"kubespread {__version__}"))
        return
    from kubespread.api.model import collect_less
    from kubespread.cli.root import app_for

    collect_less()
    app = app_for(sys.argv[1:], os.environ)
    try:
        quiet_on_closed_pipe(lambda: app(prog_name=prog_name(sys.argv[0], sys.argv[1:])))
    finally:
        # the command is done and its files closed: what it built is frozen so that the
        # interpreter's last collection at exit does not walk it (a 100,000-pod dump's
        # millions of objects: 6% of a `schedule`); the process frees it all at once anyway
        gc.freeze()
