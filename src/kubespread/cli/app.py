"""The Typer application: ``kubespread COMMAND``."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from kubespread import __version__
from kubespread.cli.progname import prog_name


def plain_message(message: str) -> str:
    """A parameter error in Click's words: Typer converts values with pydantic, whose messages
    read "Value error, 'x' is not one of ..." and "Input should be a valid integer, unable to
    parse string as an integer"."""
    message = message.removeprefix("Value error, ")
    m = re.match(r"Input should be (.*?)(?:, .*)?$", message)
    return f"must be {m.group(1)}" if m else message


class _Command(TyperCommand):
    """A command whose usage line names its arguments as kubectl does (``explain POD``), not
    in Typer's braces (``{POD}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [re.sub(r"^\{(.*)\}$", r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


class _Group(TyperGroup):
    """The root command: parameter errors of every command reach the user in plain words."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as e:
            e.message = plain_message(e.message)
            raise


app = typer.Typer(
    cls=_Group,
    name="kubespread",
    help="Kubernetes topology-aware pod placement, faithful to kube-scheduler: "
    "validate, place and explain pods before you deploy them.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
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


def _wrap_help_at_spaces() -> None:
    """Help wraps at spaces only: Click's wrapper also breaks after hyphens, which splits
    names and values (``kube-`` / ``system``, ``read-`` / ``only``) over two lines. Typer
    vendors Click; when its wrapper is not where this expects, the default stays."""
    try:
        from typer._click import _textwrap
    except ImportError:  # pragma: no cover - another Typer layout
        return

    class SpaceWrapper(_textwrap.TextWrapper):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["break_on_hyphens"] = False
            super().__init__(*args, **kwargs)

    _textwrap.TextWrapper = SpaceWrapper  # type: ignore[misc]


_wrap_help_at_spaces()


def _register() -> None:
    """Commands import their modules lazily at registration, keeping --version fast."""
    from kubespread.cli.admit import admit_command
    from kubespread.cli.audit import audit_command
    from kubespread.cli.bench import bench_command
    from kubespread.cli.capacity import capacity_command
    from kubespread.cli.diff import diff_command
    from kubespread.cli.evaluate import evaluate_command
    from kubespread.cli.explain import explain_command
    from kubespread.cli.get import get_command
    from kubespread.cli.live import controller_command, manifests_command, scheduler_command, webhook_app
    from kubespread.cli.provision import provision_command
    from kubespread.cli.rebalance import rebalance_command
    from kubespread.cli.schedule import schedule_command
    from kubespread.cli.simulate import simulate_command
    from kubespread.cli.validate import validate_command

    # one line each in `kubespread --help`, kubectl's way; the docstrings stay the commands' own help
    commands: list[tuple[str, str, Callable[..., None]]] = [
        ("schedule", "Place pods and workloads onto a cluster", schedule_command),
        ("explain", "Why a pod goes to a node, or stays pending", explain_command),
        ("validate", "Validate manifests as kube-apiserver would", validate_command),
        ("get", "List the nodes or pods of manifests", get_command),
        ("admit", "Admit one manifest from stdin (dry run), as JSON", admit_command),
        ("evaluate", "Answer a conformance input document", evaluate_command),
        ("bench", "Measure scheduling throughput (pods/s)", bench_command),
        ("simulate", "Run a scenario over virtual time", simulate_command),
        ("diff", "Compare two versions' placements and spread", diff_command),
        ("capacity", "How many more replicas of a pod fit", capacity_command),
        ("provision", "The fewest nodes to add so that nothing stays pending", provision_command),
        ("rebalance", "Plan the fewest evictions that bring spread within maxSkew", rebalance_command),
        ("audit", "Fail every zone, rack or node in turn and see what survives", audit_command),
        ("scheduler", "Run as a secondary scheduler of a cluster", scheduler_command),
        ("controller", "Run the WorkloadSpread controller", controller_command),
        ("manifests", "Print what deploys the webhook, controller and scheduler", manifests_command),
    ]
    for name, summary, command in commands:
        app.command(name, cls=_Command, short_help=summary)(command)
    app.add_typer(webhook_app, name="webhook", short_help="Run the admission webhook, or print its manifests")


_register()


def main() -> None:
    """The executables' entry, kept here for callers of ``kubespread.cli.app:main``: the app
    under the program name ``kubespread.cli.main`` gives it (this module has imported Typer and
    the commands already, so ``--version`` is answered by the app's own option, in the same
    words)."""
    app(prog_name=prog_name(sys.argv[0], sys.argv[1:]))
