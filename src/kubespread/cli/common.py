"""What every command shares: consoles, output formats, loading with reporting, running the
placement with a progress bar. The shared options are in ``cli/options.py``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console, ConsoleDimensions, JustifyMethod
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.segment import Segment
from rich.table import Table

from kubespread.api.features import FeatureGates
from kubespread.cli.pipe import closed_pipe
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.cluster.workloads import short_kind
from kubespread.io import Manifests, dump_data, load
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.api.meta import KubeObject
    from kubespread.scheduler.profile import Profile
    from kubespread.scheduler.timings import CycleTimings
    from kubespread.sim.placement import PlacementResult, ScheduleRequest

__all__ = [
    "PIPE_WIDTH",
    "STRICT_HINT",
    "STRICT_PREFIXES",
    "Output",
    "WideOutput",
    "err",
    "in_namespace",
    "input_namespaces",
    "kube_features",
    "load_or_exit",
    "missing_namespace",
    "out",
    "placing",
    "print_data",
    "print_problems",
    "profiles_or_exit",
    "progress_bar",
    "require_nodes",
    "run_placement",
    "schedule_request",
    "scheduler_profiles_or_exit",
    "server_features",
    "short_kind",
    "short_ns",
    "table",
    "timings_table",
    "warn_assumed_namespaces",
]

#: the width a console renders at when it does not write to a terminal: wide enough that no
#: table or line is ever wrapped, so a pipe or a file gets one line per row, as kubectl's
PIPE_WIDTH = 1 << 16


class _Console(Console):
    """A console that wraps to the terminal's width on a terminal and never wraps otherwise:
    tables sized to their content, one line per row, no trailing blanks (``| head``,
    ``| grep`` and files see what kubectl would print)."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self.is_terminal or self._width is not None:
            return size
        return ConsoleDimensions(PIPE_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        text = super()._render_buffer(buffer)
        return text if self.is_terminal else _TRAILING_BLANKS.sub("", text)

    def on_broken_pipe(self) -> None:
        """The reader closed the pipe (``| head``): end as kubectl does (rich's own exits 1)."""
        self.quiet = True
        closed_pipe()


_TRAILING_BLANKS = re.compile(r"[ \t]+$", re.MULTILINE)

out: Console = _Console(highlight=False, soft_wrap=True)
err: Console = _Console(stderr=True, highlight=False, soft_wrap=True)


def table(*columns: str | tuple[str, JustifyMethod], title: str | None = None) -> Table:
    """The one table style of every command: kubectl's (no borders, bold headers, two spaces
    between columns). On a terminal a long cell folds within its column; to a pipe or a file
    the console never wraps (``PIPE_WIDTH``), so every row stays one line."""
    t = Table(
        title=title, title_justify="left", box=None, pad_edge=False, show_edge=False, header_style="bold"
    )
    for c in columns:
        if isinstance(c, str):
            t.add_column(c, overflow="fold")
        else:
            t.add_column(c[0], justify=c[1], overflow="fold")
    return t


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class WideOutput(StrEnum):
    """``-o`` of the commands whose table has more to show: ``wide`` adds columns (and keeps
    node names whole) where kubectl's ``-o wide`` would, instead of wrapping anything."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"

    @property
    def is_table(self) -> bool:
        return self in (WideOutput.table, WideOutput.wide)


def print_data(data: Any, fmt: Output | WideOutput) -> None:
    """Machine-readable output goes to stdout unstyled, so it can be piped."""
    typer.echo(dump_data(data, fmt.value), nl=False)


def report_warnings(manifests: Manifests) -> None:
    for p in manifests.warnings:
        err.print(f"[yellow]warning:[/] {p}", markup=True, highlight=False)


def load_or_exit(
    files: list[Path],
    *,
    allow_errors: bool = False,
    kubeconfig: Path | None = None,
    context: str | None = None,
    validate: Validation = Validation.STRICT,
) -> Manifests:
    """Load the live cluster (with --kubeconfig or --context) then every -f path; print
    warnings; on load errors print them all and exit 1."""
    live = kubeconfig is not None or context is not None
    if not files and not live:
        err.print(
            "error: no input: give one or more -f PATH (a file, a directory, or - for stdin) "
            "or --kubeconfig FILE"
        )
        raise typer.Exit(2)
    manifests = Manifests()
    if live:
        from kubespread.live.kube import LiveError
        from kubespread.live.source import read_cluster

        try:
            manifests.extend(read_cluster(kubeconfig, context))
        except LiveError as e:
            err.print(f"error: {e}", markup=False, highlight=False)
            raise typer.Exit(1) from None
    if files:
        manifests.extend(load([str(f) for f in files], validate=validate))
    report_warnings(manifests)
    if manifests.errors and not allow_errors:
        for p in manifests.errors:
            err.print(str(p), markup=False)
        n = len(manifests.errors)
        err.print(f"error: {n} problem{'s' if n != 1 else ''} while loading manifests", markup=False)
        if any(p.message.startswith(STRICT_PREFIXES) for p in manifests.errors):
            err.print(STRICT_HINT, markup=False, highlight=False)
        raise typer.Exit(1)
    return manifests


STRICT_PREFIXES = ('unknown field "', 'duplicate field "')
STRICT_HINT = (
    "hint: unknown and duplicate fields are refused as kubectl's default (strict) does; "
    "fix them, or pass --validate=warn to load the manifests without them"
)


def in_namespace(manifests: Manifests, namespace: str) -> None:
    """``-n NAMESPACE`` as ``kubectl apply -n`` reads it: every namespaced object to create that
    names no namespace is created in it; one that names another is an error (kubectl's words),
    all of them printed, exit 1. What a dump holds (stored objects) keeps its namespace."""
    from kubespread.admission.apiserver import is_stored

    problems = []
    for lo in manifests.objects:
        obj = lo.obj
        if not obj.NAMESPACED or is_stored(obj):
            continue
        if not obj.metadata.namespace:
            obj.metadata.namespace = namespace
        elif obj.metadata.namespace != namespace:
            problems.append(
                f"{lo.where('metadata.namespace')}: {lo.ref}: the namespace from the provided object "
                f'"{obj.metadata.namespace}" does not match the namespace "{namespace}". You must pass '
                f"'--namespace={obj.metadata.namespace}' to perform this operation."
            )
    if problems:
        print_problems(problems, "in the input (-n)")
        raise typer.Exit(1)


def require_nodes(manifests: Manifests, command: str) -> None:
    """Exit 1 when the input holds no Node: nothing could be placed, and a run would only show
    every pod pending for a reason the user did not cause."""
    from kubespread.api.core import Node

    if any(isinstance(lo.obj, Node) for lo in manifests.objects):
        return
    err.print(
        f"error: the input has no nodes: {command} places pods onto the nodes of a cluster; give "
        "one with -f (e.g. -f examples/snapshot/cluster.yaml, a kubectl dump or Node manifests) "
        "or read it with --kubeconfig",
        markup=False,
        highlight=False,
    )
    raise typer.Exit(1)


def input_namespaces(manifests: Manifests) -> frozenset[str] | None:
    """The namespaces the input says exist: its Namespace objects' names, or None when it has
    none (bare manifests: every namespace is taken to exist, as the simulated API server does)."""
    from kubespread.api.core import Namespace

    names = [ns.metadata.name for ns in manifests.of_kind(Namespace)]
    return frozenset(names) if names else None


def missing_namespace(obj: KubeObject, namespaces: frozenset[str] | None) -> str | None:
    """NamespaceLifecycle's refusal of creating ``obj`` (``namespaces "prod" not found``), or None.
    A stored object (a dump's) was created already: its namespace exists."""
    from kubespread.admission.apiserver import is_stored
    from kubespread.admission.framework import AdmissionContext
    from kubespread.admission.namespace_lifecycle import NamespaceLifecycle

    if namespaces is None or is_stored(obj):
        return None
    refusal = NamespaceLifecycle().mutate(obj, AdmissionContext.create(namespaces=namespaces))
    return None if refusal is None else refusal.message


def warn_assumed_namespaces(manifests: Manifests) -> None:
    """One warning naming the namespaces objects are to be created in when the input has no
    Namespace objects at all: they are assumed to exist (kube-apiserver would refuse a create in
    one that does not). The namespaces every cluster has are not named."""
    from kubespread.admission.apiserver import is_stored
    from kubespread.admission.namespace_lifecycle import SYSTEM_NAMESPACES

    if input_namespaces(manifests) is not None:
        return
    assumed = sorted(
        {
            lo.obj.namespace
            for lo in manifests.objects
            if lo.obj.NAMESPACED and not is_stored(lo.obj) and lo.obj.namespace not in SYSTEM_NAMESPACES
        }
    )
    if assumed:
        err.print(
            "[yellow]warning:[/] the input has no Namespace objects; assuming these namespaces "
            f"exist: {escape(', '.join(assumed))}",
            markup=True,
            highlight=False,
        )


def print_problems(problems: list[str], what: str) -> None:
    """Every located problem, then a one-line count (``error: 2 problems in the input``)."""
    for p in problems:
        err.print(p, markup=False, highlight=False)
    n = len(problems)
    err.print(f"error: {n} problem{'s' if n != 1 else ''} {what}", markup=False, highlight=False)


def progress_bar(enabled: bool = True) -> Progress:
    """A progress bar on stderr for long runs; silent when stderr is not a terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not enabled or not err.is_terminal,
    )


def kube_features(
    given: FeatureGates | None,
    kubeconfig: Path | None = None,
    context: str | None = None,
    *,
    live: bool = False,
) -> FeatureGates:
    """The version a command answers as: ``--kube-version`` (or KUBESPREAD_KUBE_VERSION) when
    given; in live modes (``--kubeconfig``/``--context``, or ``live``: a command that always
    talks to a cluster) the API server's /version, brought within 1.33-1.38 with a warning
    when outside; else 1.35."""
    from kubespread.api.features import features_for

    if given is not None:
        return given
    if kubeconfig is None and context is None and not live:
        return features_for()
    from kubespread.live.kube import LiveError
    from kubespread.live.source import server_version

    try:
        reported = server_version(kubeconfig, context)
    except LiveError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    return server_features(reported)


def server_features(reported: str | None) -> FeatureGates:
    """The gates of the version an API server reports (``1.36``), brought within 1.33-1.38
    with a warning when outside; 1.35, warned, when it reports none."""
    from kubespread.api.features import KUBE_VERSIONS, KubeVersion, features_for

    if reported is None:
        err.print("[yellow]warning:[/] the API server's /version gave no version: answering as 1.35")
        return features_for("1.35")
    version = KubeVersion.parse(reported)
    nearest = min(KUBE_VERSIONS[-1], max(KUBE_VERSIONS[0], version))
    if nearest != version:
        err.print(
            f"[yellow]warning:[/] the API server is v{version}; kubespread answers as {nearest} "
            "(give --kube-version to choose)"
        )
    return features_for(nearest)


def profiles_or_exit(
    path: Path | None, validate: Validation = Validation.STRICT, features: FeatureGates | None = None
) -> dict[str, Profile] | None:
    """:func:`scheduler_profiles_or_exit`, and the default profiles when there is no file but a
    version (None when neither: the simulation's own defaults, v1.35's)."""
    profiles = scheduler_profiles_or_exit(path, validate, features)
    if profiles is None and features is not None:
        from kubespread.scheduler.config import default_profiles

        profiles = default_profiles(features=features)
    return profiles


def scheduler_profiles_or_exit(
    path: Path | None, validate: Validation = Validation.STRICT, features: FeatureGates | None = None
) -> dict[str, Profile] | None:
    """The profiles of a KubeSchedulerConfiguration file (None: the default profile), answering
    as ``features``' version; exit 1 with every problem located when the file is not one valid
    configuration."""
    if path is None:
        return None
    from kubespread.api.schedconfig import KubeSchedulerConfiguration
    from kubespread.scheduler.config import ConfigError, profiles_from_config

    manifests = load_or_exit([path], validate=validate)
    configs = [lo for lo in manifests.objects if isinstance(lo.obj, KubeSchedulerConfiguration)]
    if len(configs) != 1 or len(manifests.objects) != 1:
        err.print(f"error: {path}: --scheduler-config must hold exactly one KubeSchedulerConfiguration")
        raise typer.Exit(1)
    (lo,) = configs
    assert isinstance(lo.obj, KubeSchedulerConfiguration)
    try:
        return profiles_from_config(lo.obj, features=features)
    except ConfigError as e:
        located = [f"{lo.where(getattr(x, 'field', None))}: {x}" for x in e.errors]
        print_problems(located, "in the scheduler configuration")
        raise typer.Exit(1) from None


def schedule_request(
    files: list[Path],
    scheduler_config: Path | None,
    seed: int,
    kubeconfig: Path | None = None,
    context: str | None = None,
    validate: Validation = Validation.STRICT,
    max_pods: int = DEFAULT_MAX_PODS,
    command: str = "schedule",
    namespace: str | None = None,
    features: FeatureGates | None = None,
) -> ScheduleRequest:
    """The loading edge of ``schedule`` (and of what starts from it): the scheduler
    configuration, the live cluster and every -f path loaded into a ScheduleRequest, as
    ``features``' version, the objects to create that name no namespace put in
    ``namespace`` (``-n``); every input problem is printed and exits 1."""
    from kubespread.sim.placement import ScheduleRequest

    profiles = profiles_or_exit(scheduler_config, validate, features)
    manifests = load_or_exit(files, kubeconfig=kubeconfig, context=context, validate=validate)
    if namespace is not None:
        in_namespace(manifests, namespace)
    require_nodes(manifests, command)
    warn_assumed_namespaces(manifests)
    return ScheduleRequest(manifests, profiles, seed, max_pods, features=features)


@contextmanager
def placing(progress: bool) -> Iterator[Callable[[int, int, str], None]]:
    """A progress bar for placing (its ``on_step``); a PlacementError raised inside is
    printed, every problem located, and exits 1."""
    from kubespread.sim.placement import PlacementError

    with progress_bar(progress) as bar:
        task = bar.add_task("placing", total=None)

        def on_step(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=max(total, 1), description=what[:40], refresh=True)

        try:
            yield on_step
        except PlacementError as e:
            bar.stop()
            print_problems(e.problems, "in the input; nothing was placed")
            raise typer.Exit(1) from None


def run_placement(
    files: list[Path],
    scheduler_config: Path | None,
    seed: int,
    progress: bool,
    kubeconfig: Path | None = None,
    context: str | None = None,
    validate: Validation = Validation.STRICT,
    max_pods: int = DEFAULT_MAX_PODS,
    command: str = "schedule",
    namespace: str | None = None,
    features: FeatureGates | None = None,
    distributions: bool = True,
) -> PlacementResult:
    """Load (:func:`schedule_request`), then run the ``schedule`` use case
    (``kubespread.sim.placement.schedule``) with a progress bar, as ``features``' version
    (None: 1.35); every input problem is printed and exits 1. ``distributions`` False: the
    snapshots keep no spread of every workload (a caller that never reads them)."""
    from dataclasses import replace

    from kubespread.sim.placement import schedule

    request = schedule_request(
        files, scheduler_config, seed, kubeconfig, context, validate, max_pods, command, namespace, features
    )
    if not distributions:
        request = replace(request, distributions=False)
    with placing(progress) as on_step:
        return schedule(request, on_step=on_step)


def short_ns(namespace: str, name: str) -> str:
    """``name`` in the default namespace, else ``namespace/name``."""
    return name if namespace == "default" else f"{namespace}/{name}"


def timings_table(t: CycleTimings, pods: int | None = None) -> tuple[Table, str]:
    """Where cycle time went (CycleTimings.rows): per extension point and plugin, then the
    framework's own work, the µs (and with ``pods``, the µs per pod of that many cycles) and
    the share of the cycles' time; with the summary line "plugins N µs of the M µs cycle"."""
    t_ = table(
        "extension point",
        "plugin",
        ("µs", "right"),
        *((("µs/pod", "right"),) if pods else ()),
        ("share", "right"),
        ("status", "left"),
    )
    cycle = t.cycle_ns or 1
    for r in t.rows():
        cells = [r.point, r.name, f"{r.ns / 1000:,.1f}"]
        if pods:
            cells.append(f"{r.ns / 1000 / pods:,.1f}")
        cells += [f"{100 * r.ns / cycle:.1f}%", "" if r.status in ("Success", "") else r.status]
        t_.add_row(*cells, style="dim" if r.framework else None)

    def part(ns: int) -> str:
        return f"{ns / 1000:,.0f} µs ({100 * ns / cycle:.1f}%)"

    what = f"{pods} cycles' {t.cycle_ns / 1000:,.0f} µs" if pods else f"the {t.cycle_ns / 1000:,.0f} µs cycle"
    summary = (
        f"plugins {t.plugin_ns / 1000:,.0f} µs of {what} ({100 * t.plugin_ns / cycle:.1f}%); "
        f"framework {part(t.framework_ns)}; in no row {part(t.other_ns)}"
    )
    return t_, summary
