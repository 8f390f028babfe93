"""The Typer application with every command registered: ``kubespread COMMAND``. The
executables build one with their command alone (:func:`kubespread.cli.root.app_for`); this
one is for callers that want them all (tests, the README and golden generators)."""

from __future__ import annotations

from kubespread.cli.root import new_app, register

__all__ = ["app", "main"]

app = register(new_app())


def main() -> None:
    """The executables' entry, kept here for callers of ``kubespread.cli.app:main``: the same
    as :func:`kubespread.cli.main` (the named command alone, the collector's thresholds, the
    freeze at exit), so that such a caller runs what a user runs."""
    from kubespread.cli import main as executables_main

    executables_main()
