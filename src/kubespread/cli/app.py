"""The Typer application with every command registered: ``kubespread COMMAND``. The
executables build one with their command alone (:func:`kubespread.cli.root.app_for`); this
one is for callers that want them all (tests, the README and golden generators)."""

from __future__ import annotations

import sys

from kubespread.cli.pipe import quiet_on_closed_pipe
from kubespread.cli.progname import prog_name
from kubespread.cli.root import new_app, plain_message, register

__all__ = ["app", "main", "plain_message"]

app = register(new_app())


def main() -> None:
    """The executables' entry, kept here for callers of ``kubespread.cli.app:main``: the app
    under the program name ``kubespread.cli.main`` gives it (this module has imported Typer and
    the commands already, so ``--version`` is answered by the app's own option, in the same
    words)."""
    quiet_on_closed_pipe(lambda: app(prog_name=prog_name(sys.argv[0], sys.argv[1:])))
