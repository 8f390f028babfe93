"""``kubespread simulate SCENARIO``: run a scenario over virtual time and show each step."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from kubespread.cli.common import (
    STRICT_HINT,
    STRICT_PREFIXES,
    Output,
    err,
    kube_features,
    out,
    print_data,
    progress_bar,
    short_kind,
    short_ns,
    table,
)
from kubespread.cli.options import (
    ContextOption,
    KubeconfigOption,
    KubeVersionOption,
    MaxPodsOption,
    OutputOption,
    ValidateOption,
    at_least_one,
)
from kubespread.cli.render.placement import print_preemptions
from kubespread.cli.render.spread import OUT_LEGEND, RAW_LEGEND, has_left_out, has_raw_column, spread_table
from kubespread.cli.render.workload import workload_label
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.cluster.workloads import WorkloadRef
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.scheduler.scheduler import Decision
    from kubespread.sim.run import SimulationResult
    from kubespread.sim.runs import OutcomeSpread, RunsResult, StepSpread
    from kubespread.sim.scenario import Step
    from kubespread.sim.simulate import SimulateHooks, SimulateOutcome, SimulateRequest

__all__ = ["simulate_command"]


class OutputForm(StrEnum):
    """How ``-o json|yaml`` writes the steps (``kubespread.sim.delta``)."""

    delta = "delta"
    full = "full"


#: under the title when a step shows spread
_SPREAD_LEGEND = "pods per domain and skew/maxSkew: as the scheduler counts them"


def _workload_spread_table(ws: dict[str, Any]) -> Table:
    """One WorkloadSpread: per subset its bound (maxReplicas as resolved now), the active pods,
    missingReplicas (-1: unbounded) and whether it is marked unschedulable."""
    target = ws["target"]
    title = f"workloadspread/{short_ns(ws['namespace'], ws['name'])}"
    if target:
        kind = short_kind(target["kind"])
        title += f" → {kind}/{target['name']} ({ws['workloadReplicas']} replicas)"
    t = table("subset", ("max", "right"), ("replicas", "right"), ("missing", "right"), "state", title=title)
    for s in ws["subsets"]:
        bound = "-" if s["limit"] is None else str(s["limit"])
        if isinstance(s["maxReplicas"], str):
            bound = f"{bound} ({s['maxReplicas']})"
        state = "unschedulable" if s["unschedulable"] else "schedulable"
        if s["failedCount"]:
            state += f", failed {s['failedCount']}x"
        missing = "-" if s["missingReplicas"] is None else str(s["missingReplicas"])
        t.add_row(s["name"], bound, str(s["replicas"]), missing, state)
    return t


def _fmt_time(t: float) -> str:
    return f"{t:g}s"


def _print_step(step: dict[str, Any], title: str) -> None:
    out.print(f"[bold]{title}[/]  [dim]t={_fmt_time(step['time'])}[/]", markup=True)
    if step["distribution"]:
        out.print(spread_table(step["distribution"], label="controller"))
    for ws in step.get("workloadSpreads", []):
        out.print(_workload_spread_table(ws))
    for b in step.get("podDisruptionBudgets", []):
        allowed = b["disruptionsAllowed"]
        out.print(
            f"  pdb/{short_ns(b['namespace'], b['name'])}: {b['currentHealthy']} healthy of "
            f"{b['expectedPods']} expected, {b['desiredHealthy']} desired; "
            f"{allowed} disruption{'s' if allowed != 1 else ''} allowed",
            markup=False,
        )
    running = sum(1 for p in step["pods"] if p["node"] and p["phase"] == "Running" and not p["terminating"])
    terminating = sum(1 for p in step["pods"] if p["terminating"])
    summary = f"  pods: {running} running, {len(step['pending'])} pending"
    if terminating:
        summary += f", {terminating} terminating"
    out.print(summary, markup=False)
    shown: list[str] = []  # each hint once, after the run of pending pods it is for
    pending = step["pending"]
    for i, p in enumerate(pending):
        why = p["message"] or "not tried yet (gated, or no scheduler with its schedulerName)"
        out.print(
            f"  [yellow]pending[/] {short_ns(p['namespace'], p['name'])}: {why}",
            markup=True,
            highlight=False,
        )
        hints = p.get("hints", [])
        if i + 1 < len(pending) and pending[i + 1].get("hints", []) == hints:
            continue
        for h in hints:
            if h not in shown:
                shown.append(h)
                out.print(f"  [cyan]hint:[/] {h}", markup=True, highlight=False)
    for e in step.get("evictions", []):
        if e["reason"] == "Preempted":
            continue  # the preempted section below shows them, with their preemptor
        o = e["object"]
        out.print(
            f"  [red]evicted[/] {short_ns(o['namespace'], o['name'])} ({e['reason']}): {e['message']}",
            markup=True,
            highlight=False,
        )
    for e in step.get("events", []):
        o = e["object"]
        if o["kind"] == "Pod" and e["reason"] in ("DisruptionBudget", "FailedEviction"):
            out.print(
                f"  [yellow]{e['reason']}[/] {short_ns(o['namespace'], o['name'])}: {e['message']}",
                markup=True,
                highlight=False,
            )
        if o["kind"] == "WorkloadSpread":
            colour = "yellow" if e["type"] == "Warning" else "cyan"
            out.print(
                f"  [{colour}]{e['reason']}[/] {short_ns(o['namespace'], o['name'])}: {e['message']}",
                markup=True,
                highlight=False,
            )
    from kubespread.scheduler.views import Preemption

    print_preemptions([Preemption.from_dict(p) for p in step.get("preemptions", [])], indent="  ")
    for r in step.get("rejections", []):
        out.print(f"  [red]refused[/] {r['object']}: {r['message']}", markup=True, highlight=False)
    out.print()


#: a step's parts that, equal to the step before's with nothing happened, mean "no change"
_STATE: tuple[str, ...] = ("distribution", "pending", "workloadSpreads", "podDisruptionBudgets", "nodes")
#: what happened in a step (any of them: the step is shown)
_HAPPENED: tuple[str, ...] = ("events", "rejections", "preemptions")


def _changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether ``after`` shows anything ``before`` did not: a spread, pending pod, budget,
    WorkloadSpread or node state that differs, or any event, refusal or preemption of its own."""
    return any(after.get(k) for k in _HAPPENED) or any(before.get(k) != after.get(k) for k in _STATE)


def _print_table(doc: dict[str, Any], *, changes_only: bool = True) -> None:
    name = doc["scenario"] or "scenario"
    out.print(f"[bold]{name}[/] (seed {doc['seed']})", markup=True)
    steps = [doc["initial"], *doc["steps"]]
    if any(s["distribution"] for s in steps):
        out.print(Text(_SPREAD_LEGEND, style="dim"))
    if any(has_left_out(s["distribution"]) for s in steps):
        out.print(Text(OUT_LEGEND, style="dim"))
    if any(has_raw_column(s["distribution"]) for s in steps):
        out.print(Text(RAW_LEGEND, style="dim"))
    out.print()
    _print_step(doc["initial"], "initial cluster")
    previous, compact = doc["initial"], False
    for step in doc["steps"]:
        title = f"step {step['index'] + 1}: {step['description']}"
        if changes_only and not _changed(previous, step):
            out.print(
                f"[bold]{title}[/]  [dim]t={_fmt_time(step['time'])}: no change[/]",
                markup=True,
                highlight=False,
            )
            compact = True
        else:
            if compact:  # the one-line steps together, a blank line before the next block
                out.print()
            _print_step(step, title)
            compact = False
        previous = step


def _runs_at_least_one(value: int | None) -> int | None:
    """--runs: not given (one deterministic run), else at least 1."""
    return value if value is None else at_least_one(value)


def simulate_command(
    scenario: Annotated[
        Path, typer.Argument(metavar="SCENARIO", hidden=True, help="Scenario file (kind: Scenario).")
    ],
    output: OutputOption = Output.table,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr (terminals only).")
    ] = True,
    hard_anti_affinity_limit: Annotated[
        bool,
        typer.Option(
            "--hard-anti-affinity-limit/--no-hard-anti-affinity-limit",
            help="Refuse pods whose required anti-affinity covers all namespaces with a topologyKey "
            "other than kubernetes.io/hostname (the pod affinity design's limit).",
        ),
    ] = True,
    limit_topology: Annotated[
        bool,
        typer.Option(
            "--limit-pod-hard-anti-affinity-topology",
            help="Also refuse any required anti-affinity whose topologyKey is not kubernetes.io/hostname "
            "(kube's LimitPodHardAntiAffinityTopology admission plugin).",
        ),
    ] = False,
    affinity_grace: Annotated[
        str,
        typer.Option(
            "--affinity-grace-period",
            metavar="DURATION",
            help="How long a broken RequiredDuringExecution pod affinity may last before the pod is evicted.",
        ),
    ] = "60s",
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            metavar="DIR",
            help="Write DIR/report.html: one self-contained page with pictures. With --runs: the "
            "first run's.",
        ),
    ] = None,
    workloadspread_flavour: Annotated[
        str,
        typer.Option(
            "--workloadspread",
            metavar="FLAVOUR",
            help="WorkloadSpread behaviour where the proposal and OpenKruise differ: proposal "
            "(10-minute recovery, deletion costs 100/0/-100, Adaptive resource check) or openkruise.",
        ),
    ] = "proposal",
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
    changes_only: Annotated[
        bool,
        typer.Option(
            "--changes-only/--all-steps",
            help="Table: show a step only when its spread, pending pods or events differ from "
            "the step before (one line otherwise; with --runs, in some run); --all-steps shows "
            "every step in full.",
        ),
    ] = True,
    output_form: Annotated[
        OutputForm,
        typer.Option(
            "--output-form",
            metavar="FORM",
            help="-o json|yaml: delta (the initial state, then what each step changed) or full "
            "(every pod at every step). Ignored with --runs (its summary has one form).",
        ),
    ] = OutputForm.delta,
    dump: Annotated[
        Path | None,
        typer.Option(
            "--dump",
            metavar="FILE",
            help="Write the final cluster as a kubectl List (input for schedule, rebalance). "
            "With --runs: the first run's.",
        ),
    ] = None,
    runs: Annotated[
        int | None,
        typer.Option(
            "--runs",
            metavar="N",
            callback=_runs_at_least_one,
            help="Replay the scenario N times, one after the other, with the scheduler's pick among "
            "equally scored nodes drawn at random (what the race of kube-scheduler's 16 threads "
            "makes of it), run i (from 0) with seed S+i; show per step each workload's pods per "
            "domain and the pending pods as min/median/max over the runs, and whether every run "
            "ended the step alike. --dump and --report show the first run (seed S); -o json|yaml "
            "writes the summary (--output-form does not apply).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            metavar="S",
            help="With --runs: the first run's seed (default: the scenario's seed). Names and uids "
            "the API server generates draw from it too.",
        ),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    kube_version: KubeVersionOption = None,
) -> None:
    """Run a scenario over virtual time: apply, scale, update, fail nodes, advance the clock;
    show where the pods are after every step, what is pending and why, and what was evicted.
    With --runs N, replay it N times with the scheduler's ties drawn at random and show per
    step what every run agrees on and what differs between runs.

    SCENARIO is a scenario file (kind: Scenario). With --kubeconfig (or --context), or the
    scenario's ``cluster: {kubeconfig: FILE, context: NAME}``, the cluster is read once from
    that API server (before the scenario's own cluster objects) and the steps run offline on
    it: nothing is written to it."""
    from kubespread.admission.framework import AdmissionOptions
    from kubespread.api.duration import parse_duration
    from kubespread.controllers.workloadspread import FLAVOURS, WorkloadSpreadOptions
    from kubespread.sim.placement import PROGRESS_EVERY
    from kubespread.sim.scenario import ScenarioError, load_scenario
    from kubespread.sim.simulate import SimulateHooks, SimulateRequest

    if workloadspread_flavour not in FLAVOURS:
        err.print(
            f"error: --workloadspread: must be one of {', '.join(FLAVOURS)}, got {workloadspread_flavour!r}"
        )
        raise typer.Exit(2)
    grace = parse_duration(affinity_grace)
    if grace is None:
        err.print(
            f"error: --affinity-grace-period: must be a duration such as 60s or 2m, got {affinity_grace!r}"
        )
        raise typer.Exit(2)
    if seed is not None and runs is None:
        err.print("error: --seed: only with --runs (a single run uses the scenario's seed field)")
        raise typer.Exit(2)
    try:
        loaded = load_scenario(scenario, validation=validate, features=kube_features(kube_version))
    except ScenarioError as e:
        for p in e.problems:
            err.print(p, markup=False, highlight=False)
        n = len(e.problems)
        err.print(f"error: {n} problem{'s' if n != 1 else ''} in the scenario", markup=False)
        if any(mark in p for p in e.problems for mark in STRICT_PREFIXES):
            err.print(STRICT_HINT, markup=False, highlight=False)
        raise typer.Exit(1) from None
    for w in loaded.warnings:
        err.print(f"[yellow]warning:[/] {w}", markup=True, highlight=False)
    if kubeconfig is not None or context is not None or loaded.live is not None:
        from kubespread.live.kube import LiveError
        from kubespread.live.source import read_cluster

        if kubeconfig is None and context is None and loaded.live is not None:
            kubeconfig, context = loaded.live.kubeconfig, loaded.live.context
        try:  # read once, then simulated offline: a snapshot of what runs, as -f files would be
            cluster = read_cluster(kubeconfig, context)
        except LiveError as e:
            err.print(f"error: {e}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        loaded.cluster = [*cluster.objects, *loaded.cluster]
    request = SimulateRequest(
        loaded,
        runs=runs,
        seed=seed,
        admission=AdmissionOptions(
            hard_anti_affinity_limit=hard_anti_affinity_limit,
            limit_pod_hard_anti_affinity_topology=limit_topology,
        ),
        affinity_grace_seconds=grace,
        workloadspread=WorkloadSpreadOptions(flavour=workloadspread_flavour),  # type: ignore[arg-type]
        max_pods=max_pods,
        keep_first=dump is not None or report is not None,
        explain_first=report is not None,
    )
    if runs is not None:
        _simulate_runs(
            request, progress=progress, output=output, changes_only=changes_only, dump=dump, report=report
        )
        return
    bar = progress_bar(progress)
    with bar:
        task = bar.add_task("simulating", total=len(loaded.steps))
        doing = ["settling the cluster as given"]
        placed = [0]

        def on_step(step: Step) -> None:
            doing[0] = f"step {step.index + 1}: {step.action}"
            bar.update(task, completed=step.index, description=doing[0])

        def on_decision(decision: Decision) -> None:  # a long step (a big Deployment) shows its pods
            if decision.selected is None:
                return
            placed[0] += 1
            if placed[0] % PROGRESS_EVERY == 0:
                bar.update(task, description=f"{doing[0]}: {placed[0]:,} pods placed")

        outcome = _run_or_exit(request, SimulateHooks(on_step=on_step, on_decision=on_decision))
        bar.update(task, completed=len(loaded.steps))
    result = outcome.result
    assert result is not None
    if dump is not None:
        _write_dump(dump, result)
    # the full form: the table's and the report's input, and -o json|yaml's when asked for
    full = output is Output.table or report is not None or output_form is OutputForm.full
    doc = outcome.full_doc() if full else None
    if output is Output.table:
        assert doc is not None
        _print_table(doc, changes_only=changes_only)
    elif output_form is OutputForm.full:
        print_data(doc, output)
    else:
        print_data(outcome.delta_doc(), output)
    if report is not None:
        assert doc is not None
        path = _write_report(report, doc, outcome)
        err.print(f"report: {path}", markup=False, highlight=False)


def _run_or_exit(request: SimulateRequest, hooks: SimulateHooks) -> SimulateOutcome:
    """The ``simulate`` use case; a step that cannot be carried out is printed and exits 1."""
    from kubespread.sim.scenario import ScenarioError
    from kubespread.sim.simulate import run_scenario

    try:
        return run_scenario(request, hooks)
    except ScenarioError as e:
        for p in e.problems:
            err.print(f"error: {p}", markup=False, highlight=False)
        raise typer.Exit(1) from None


def _write_dump(path: Path, result: SimulationResult, note: str = "") -> None:
    """``--dump``: the run's final cluster as a kubectl List; ``note`` says which run."""
    from kubespread.io.dump import cluster_objects, dump_objects

    if result.sim is None:
        return
    try:
        path.write_text(dump_objects(cluster_objects(result.sim.cluster)))
    except OSError as e:
        err.print(f"error: cannot write {path}: {e.strerror or e}", markup=False)
        raise typer.Exit(1) from None
    err.print(f"dump: {path}{note}", markup=False, highlight=False)


# ------------------------------------------------------------------ --runs


#: under the title of the --runs table
_RUNS_LEGEND = "pods per domain: each workload's own running pods, min/median/max over the runs"


def _simulate_runs(
    request: SimulateRequest,
    *,
    progress: bool,
    output: Output,
    changes_only: bool,
    dump: Path | None,
    report: Path | None,
) -> None:
    """``--runs N``: the runs one after the other (kubespread.sim.runs), then their summary;
    --dump and --report show the first run."""
    from kubespread.sim.placement import PROGRESS_EVERY
    from kubespread.sim.simulate import SimulateHooks

    runs = request.runs
    assert runs is not None
    bar = progress_bar(progress)
    with bar:
        task = bar.add_task("simulating", total=runs)
        run = [0, 0]  # the run's index and seed
        doing = [""]
        placed = [0]

        def on_run(i: int, s: int) -> None:
            run[:] = [i, s]
            placed[0] = 0
            doing[0] = f"run {i + 1}/{runs} (seed {s})"
            bar.update(task, completed=i, description=doing[0])

        def on_step(step: Step) -> None:
            doing[0] = f"run {run[0] + 1}/{runs} (seed {run[1]}): step {step.index + 1}: {step.action}"
            bar.update(task, description=doing[0])

        def on_decision(decision: Decision) -> None:
            if decision.selected is None:
                return
            placed[0] += 1
            if placed[0] % PROGRESS_EVERY == 0:
                bar.update(task, description=f"{doing[0]}: {placed[0]:,} pods placed")

        outcome = _run_or_exit(request, SimulateHooks(on_run, on_step, on_decision))
        bar.update(task, completed=runs)
    summary = outcome.runs
    assert summary is not None
    note = f" (run 1 of {runs}, seed {summary.seeds[0]})"
    if dump is not None:
        assert outcome.result is not None
        _write_dump(dump, outcome.result, note)
    if output is Output.table:
        _print_runs_table(summary, changes_only=changes_only)
    else:
        print_data(summary.to_dict(), output)
    if report is not None:
        path = _write_report(report, outcome.full_doc(), outcome)
        err.print(f"report: {path}{note}", markup=False, highlight=False)


def _median(value: float) -> str:
    return f"{value:g}"


def _runs_table(spreads: list[OutcomeSpread]) -> Table:
    """One line per workload, key and domain: the pods there over the runs, a line that
    differs between runs in yellow. A key with more than 6 domains (hostnames) gets one line
    per distinct min/median/max, counting its domains."""
    t = table(
        "controller", "key", "domain", ("min", "right"), ("median", "right"), ("max", "right"), title=None
    )
    for s in spreads:
        ref = WorkloadRef(s.namespace, *s.workload) if s.workload else None
        label = workload_label(ref, s.namespace, s.pod or "")
        key = s.topology_key.rsplit("/", 1)[-1]
        if len(s.domains) <= 6:
            lines = [(d, c) for d, c in s.domains.items()]
        else:
            groups: dict[Any, list[str]] = {}
            for d, c in s.domains.items():
                groups.setdefault(c, []).append(d)
            lines = [
                (names[0] if len(names) == 1 else f"{len(names)} domains", c) for c, names in groups.items()
            ]
        for domain, c in lines:
            style = None if c.certain else "yellow"
            t.add_row(label, key, domain, str(c.min), _median(c.median), str(c.max), style=style)
    return t


def _step_title(step: StepSpread) -> str:
    return "initial cluster" if step.index < 0 else f"step {step.index + 1}: {step.description}"


def _print_runs_table(summary: RunsResult, *, changes_only: bool = True) -> None:
    """Each step's spread over the runs (a step no run changed is one line with
    --changes-only), its pending pods and verdict; then the steps that differ."""
    name = summary.scenario or "scenario"
    first, last = summary.seeds[0], summary.seeds[-1]
    seeds = f"seed {first}" if first == last else f"seeds {first}-{last}"
    n = summary.runs
    out.print(
        f"[bold]{name}[/] ({n} run{'s' if n != 1 else ''}, ties drawn at random, {seeds})",
        markup=True,
        highlight=False,
    )
    if any(s.distribution for s in summary.steps):
        out.print(Text(_RUNS_LEGEND, style="dim"))
    out.print()
    compact = False
    for step in summary.steps:
        title = _step_title(step)
        a, b = step.time
        when = f"t={_fmt_time(a)}" if a == b else f"t={_fmt_time(a)}-{_fmt_time(b)}"
        if changes_only and not step.changed:
            out.print(f"[bold]{title}[/]  [dim]{when}: no change in any run[/]", markup=True, highlight=False)
            compact = True
            continue
        if compact:
            out.print()
        compact = False
        out.print(f"[bold]{title}[/]  [dim]{when}[/]", markup=True, highlight=False)
        if step.distribution:
            out.print(_runs_table(step.distribution))
        p = step.pending
        if p.certain:
            pending = f"{p.min} in every run"
        else:
            pending = f"min {p.min}, median {_median(p.median)}, max {p.max}"
        out.print(f"  pending: {pending}", markup=False, highlight=False)
        colour = "green" if step.identical else "yellow"
        out.print(f"  [{colour}]{step.verdict}[/]", markup=True, highlight=False)
        out.print()
    differ = [_step_title(s).split(":", 1)[0] for s in summary.steps if not s.identical]
    if compact:
        out.print()
    if differ:
        out.print(f"differs between runs at: {', '.join(differ)}", markup=False, highlight=False)
    else:
        out.print(f"every step identical in every run ({n} runs)", markup=False, highlight=False)


def _write_report(directory: Path, doc: dict[str, Any], outcome: SimulateOutcome) -> Path:
    from kubespread.report import write_report

    steps = [{**doc["initial"], "label": "initial cluster"}]
    steps += [{**s, "label": f"step {s['index'] + 1}: {s['description']}"} for s in doc["steps"]]
    explanation: dict[str, Any] | None = None
    explained = outcome.report_explanation()
    if explained is not None:
        index, made = explained  # at the step where the pod was pending, else at the end
        explanation = {**made, "at": "the end" if index is None else steps[index + 1]["label"]}
    return write_report(
        directory,
        title=f"kubespread simulate: {doc['scenario'] or 'scenario'}",
        subtitle=f"seed {doc['seed']}, {len(doc['steps'])} steps",
        steps=steps,
        explanation=explanation,
    )
