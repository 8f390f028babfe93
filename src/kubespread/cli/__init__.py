"""The ``kubespread`` command line (Typer + Rich); one module per command group."""
