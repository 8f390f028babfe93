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
    MaxPodsOption,
    Output,
    OutputOption,
    ValidateOption,
    err,
    out,
    print_data,
    progress_bar,
    short_kind,
    short_ns,
    table,
)
from kubespread.cli.schedule import print_preemptions
from kubespread.cli.spread import OUT_LEGEND, RAW_LEGEND, has_left_out, has_raw_column, spread_table
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.sim.hints import PendingHints

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
    print_preemptions(step.get("preemptions", []), indent="  ")
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
            "--report", metavar="DIR", help="Write DIR/report.html: one self-contained page with pictures."
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
            "the step before (one line otherwise); --all-steps shows every step in full.",
        ),
    ] = True,
    output_form: Annotated[
        OutputForm,
        typer.Option(
            "--output-form",
            metavar="FORM",
            help="-o json|yaml: delta (the initial state, then what each step changed) or full "
            "(every pod at every step).",
        ),
    ] = OutputForm.delta,
    dump: Annotated[
        Path | None,
        typer.Option(
            "--dump",
            metavar="FILE",
            help="Write the final cluster as a kubectl List (input for schedule, rebalance).",
        ),
    ] = None,
) -> None:
    """Run a scenario over virtual time: apply, scale, update, fail nodes, advance the clock;
    show where the pods are after every step, what is pending and why, and what was evicted.

    SCENARIO is a scenario file (kind: Scenario)."""
    from kubespread.admission.framework import AdmissionOptions
    from kubespread.api.duration import parse_duration
    from kubespread.controllers import default_controllers
    from kubespread.controllers.workloadspread import FLAVOURS, WorkloadSpreadOptions
    from kubespread.sim.delta import delta_dict, full_dict
    from kubespread.sim.hints import PendingHints
    from kubespread.sim.placement import PROGRESS_EVERY
    from kubespread.sim.run import simulate
    from kubespread.sim.scenario import ScenarioError, load_scenario

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
    options = AdmissionOptions(
        hard_anti_affinity_limit=hard_anti_affinity_limit,
        limit_pod_hard_anti_affinity_topology=limit_topology,
    )
    try:
        loaded = load_scenario(scenario, validation=validate)
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
    bar = progress_bar(progress)
    with bar:
        task = bar.add_task("simulating", total=len(loaded.steps))

        doing = ["settling the cluster as given"]
        placed = [0]

        def on_step(step: Any) -> None:
            doing[0] = f"step {step.index + 1}: {step.action}"
            bar.update(task, completed=step.index, description=doing[0])

        def on_decision(decision: Any) -> None:  # a long step (a big Deployment) shows its pods
            if decision.selected is None:
                return
            placed[0] += 1
            if placed[0] % PROGRESS_EVERY == 0:
                bar.update(task, description=f"{doing[0]}: {placed[0]:,} pods placed")

        hints = PendingHints()
        try:
            result = simulate(
                loaded,
                controllers=default_controllers(
                    affinity_grace_seconds=grace,
                    workloadspread=WorkloadSpreadOptions(flavour=workloadspread_flavour),  # type: ignore[arg-type]
                ),
                admission=options,
                on_step=on_step,
                on_decision=on_decision,
                max_pods=max_pods,
                after_step=hints,
            )
        except ScenarioError as e:
            for p in e.problems:
                err.print(f"error: {p}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        bar.update(task, completed=len(loaded.steps))
    if dump is not None and result.sim is not None:
        from kubespread.io.dump import cluster_objects, dump_objects

        try:
            dump.write_text(dump_objects(cluster_objects(result.sim.cluster)))
        except OSError as e:
            err.print(f"error: cannot write {dump}: {e.strerror or e}", markup=False)
            raise typer.Exit(1) from None
        err.print(f"dump: {dump}", markup=False, highlight=False)
    # the full form: the table's and the report's input, and -o json|yaml's when asked for
    full = output is Output.table or report is not None or output_form is OutputForm.full
    doc = full_dict(result, hints.decorate) if full else None
    if output is Output.table:
        assert doc is not None
        _print_table(doc, changes_only=changes_only)
    elif output_form is OutputForm.full:
        print_data(doc, output)
    else:
        print_data(delta_dict(result, hints.decorate), output)
    if report is not None:
        assert doc is not None
        path = _write_report(report, doc, result, hints)
        err.print(f"report: {path}", markup=False, highlight=False)


def _write_report(directory: Path, doc: dict[str, Any], result: Any, hints: PendingHints) -> Path:
    from kubespread.report import write_report
    from kubespread.sim.placement import report_explanation

    steps = [{**doc["initial"], "label": "initial cluster"}]
    steps += [{**s, "label": f"step {s['index'] + 1}: {s['description']}"} for s in doc["steps"]]
    explanation: dict[str, Any] | None = None
    if hints.first is not None:  # at the step where the pod was pending
        index, explanation = hints.first
        explanation = {**explanation, "at": steps[index + 1]["label"]}
    elif result.sim is not None:
        explained = report_explanation(result.sim)
        explanation = None if explained is None else {**explained.to_dict(), "at": "the end"}
    return write_report(
        directory,
        title=f"kubespread simulate: {doc['scenario'] or 'scenario'}",
        subtitle=f"seed {doc['seed']}, {len(doc['steps'])} steps",
        steps=steps,
        explanation=explanation,
    )
