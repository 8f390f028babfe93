"""The Typer application's frame: the root group, its options, and the table of commands,
each imported only when registered. ``kubespread COMMAND`` registers COMMAND alone (its
module's imports are most of a short command's CPU time); help, completion and unknown names
get every command (:mod:`kubespread.cli.app`)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from kubespread.cli.pipe import closed_pipe, is_closed_pipe


class _Command(TyperCommand):
    """A command whose usage line names its arguments as kubectl does (``explain POD``), not
    in Typer's braces (``{POD}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [re.sub(r"^\{(.*)\}$", r"\1", piece) for piece in super().collect_usage_pieces(ctx)]


class _Group(TyperGroup):
    """The root command: a closed pipe ends every command as kubectl's would (``cli/pipe.py``)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as e:  # before Click makes a closed pipe a silent exit 1
            if is_closed_pipe(e):
                closed_pipe()
            raise


def _version(value: bool) -> None:
    if value:
        from kubespread import __version__

        typer.echo(f"kubespread {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kubespread."""


def new_app() -> typer.Typer:
    """The root group with its ``--version`` option and no command yet."""
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
    app.callback()(_root)
    return app


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


#: every command in `kubespread --help`'s order: name, its line there (kubectl's way; the
#: docstrings stay the commands' own help), and the module and function that implement it
COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("schedule", "Place pods and workloads onto a cluster", "schedule", "schedule_command"),
    ("explain", "Why a pod goes to a node, or stays pending", "explain", "explain_command"),
    ("validate", "Validate manifests as kube-apiserver would", "validate", "validate_command"),
    ("get", "List the nodes or pods of manifests", "get", "get_command"),
    ("admit", "Admit one manifest from stdin (dry run), as JSON", "admit", "admit_command"),
    ("evaluate", "Answer a conformance input document", "evaluate", "evaluate_command"),
    ("bench", "Measure scheduling throughput (pods/s)", "bench", "bench_command"),
    ("simulate", "Run a scenario over virtual time", "simulate", "simulate_command"),
    ("diff", "Compare two versions' placements and spread", "diff", "diff_command"),
    ("capacity", "How many more replicas of a pod fit", "capacity", "capacity_command"),
    ("provision", "The fewest nodes to add so that nothing stays pending", "provision", "provision_command"),
    (
        "rebalance",
        "Plan the fewest evictions that bring spread within maxSkew",
        "rebalance",
        "rebalance_command",
    ),
    ("audit", "Fail every zone, rack or node in turn and see what survives", "audit", "audit_command"),
    ("check", "Gate changed manifests before they merge (CI)", "check", "check_command"),
    ("scheduler", "Run as a secondary scheduler of a cluster", "live", "scheduler_command"),
    ("controller", "Run the WorkloadSpread controller", "live", "controller_command"),
    ("manifests", "Print what deploys the webhook, controller and scheduler", "live", "manifests_command"),
)
#: the sub-application registered after the commands: name, its line, module, attribute
GROUPS: tuple[tuple[str, str, str, str], ...] = (
    ("webhook", "Run the admission webhook, or print its manifests", "live", "webhook_app"),
)


def _imported(module: str, attr: str) -> Any:
    return getattr(importlib.import_module(f"kubespread.cli.{module}"), attr)


def register(app: typer.Typer, only: str | None = None) -> typer.Typer:
    """Every command and group on ``app``, or the one named ``only``: a command's module is
    imported here, when it is registered."""
    for name, summary, module, attr in COMMANDS:
        if only in (None, name):
            app.command(name, cls=_Command, short_help=summary)(_imported(module, attr))
    for name, summary, module, attr in GROUPS:
        if only in (None, name):
            app.add_typer(_imported(module, attr), name=name, short_help=summary)
    return app


def app_for(args: Sequence[str], environ: Mapping[str, str]) -> typer.Typer:
    """The app that runs ``args``: with only their command registered when they start with
    a command's name, else every command (the root's help and errors list them all, and shell
    completion needs them)."""
    completing = any(k.startswith("_") and k.endswith("_COMPLETE") for k in environ)
    names = {c[0] for c in COMMANDS} | {g[0] for g in GROUPS}
    only = args[0] if args and args[0] in names and not completing else None
    return register(new_app(), only)
