"""The Typer application: ``kubespread COMMAND``."""

from __future__ import annotations

from typing import Annotated

import typer

from kubespread import __version__

app = typer.Typer(
    name="kubespread",
    help="Kubernetes topology-aware pod placement, faithful to kube-scheduler: "
    "validate, place and explain pods before you deploy them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kubespread {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kubespread."""


def _register() -> None:
    """Commands import their modules lazily at registration, keeping --version fast."""
    from kubespread.cli.admit import admit_command
    from kubespread.cli.audit import audit_command
    from kubespread.cli.bench import bench_command
    from kubespread.cli.capacity import capacity_command
    from kubespread.cli.evaluate import evaluate_command
    from kubespread.cli.explain import explain_command
    from kubespread.cli.get import get_command
    from kubespread.cli.live import controller_command, scheduler_command, webhook_app
    from kubespread.cli.rebalance import rebalance_command
    from kubespread.cli.schedule import schedule_command
    from kubespread.cli.simulate import simulate_command
    from kubespread.cli.validate import validate_command

    app.command("schedule")(schedule_command)
    app.command("explain")(explain_command)
    app.command("validate")(validate_command)
    app.command("get")(get_command)
    app.command("admit")(admit_command)
    app.command("evaluate")(evaluate_command)
    app.command("bench")(bench_command)
    app.command("simulate")(simulate_command)
    app.command("capacity")(capacity_command)
    app.command("rebalance")(rebalance_command)
    app.command("audit")(audit_command)
    app.command("scheduler")(scheduler_command)
    app.command("controller")(controller_command)
    app.add_typer(webhook_app, name="webhook")


_register()


def main() -> None:
    app()
