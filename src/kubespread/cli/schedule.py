"""``kubespread schedule -f CLUSTER -f PODS``: where these pods land, how they spread, what
stays pending and why. Also home of what ``explain`` shares with it: running the placement
with a progress bar and shortening node names for an 80-column terminal."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from kubespread.api.keys import zone_of
from kubespread.cli.common import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    MaxPodsOption,
    ValidateOption,
    WideOutput,
    WideOutputOption,
    err,
    load_or_exit,
    out,
    print_data,
    print_problems,
    progress_bar,
    require_nodes,
    scheduler_profiles_or_exit,
    short_ns,
    table,
    warn_assumed_namespaces,
)
from kubespread.cli.spread import OUT_LEGEND, RAW_LEGEND, has_left_out, has_raw_column, spread_table
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.plan.optimal import OptimalResult
    from kubespread.sim.placement import PlacementResult

__all__ = [
    "ProgressOption",
    "ReportOption",
    "SchedulerConfigOption",
    "SeedOption",
    "node_namer",
    "print_preemptions",
    "run_placement",
    "schedule_command",
    "spread_rows",
]

#: ``--fail-on-pending``'s exit status: 1 is an error in the input, 2 a usage error
EXIT_PENDING = 3

SchedulerConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--scheduler-config",
        metavar="FILE",
        help="A KubeSchedulerConfiguration file (default: v1.35's defaults).",
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", metavar="N", help="Seed for generated pod names and score ties.")
]
ProgressOption = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr (terminals only).")
]
ReportOption = Annotated[
    Path | None,
    typer.Option(
        "--report", metavar="DIR", help="Write DIR/report.html: one self-contained page with pictures."
    ),
]


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
) -> PlacementResult:
    """Load, then place (kubespread.sim.placement); every input problem is printed and exits 1."""
    from kubespread.sim.placement import PlacementError, place

    profiles = scheduler_profiles_or_exit(scheduler_config, validate)
    manifests = load_or_exit(files, kubeconfig=kubeconfig, context=context, validate=validate)
    require_nodes(manifests, command)
    warn_assumed_namespaces(manifests)
    with progress_bar(progress) as bar:
        task = bar.add_task("placing", total=None)

        def on_step(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=max(total, 1), description=what[:40], refresh=True)

        try:
            return place(manifests, profiles=profiles, seed=seed, on_step=on_step, max_pods=max_pods)
        except PlacementError as e:
            bar.stop()
            print_problems(e.problems, "in the input; nothing was placed")
            raise typer.Exit(1) from None


def node_namer(names: list[str]) -> tuple[Any, str]:
    """(short, note): node names without their shared DNS suffix (``.eu-west-1.compute.internal``)
    so tables fit 80 columns; the note says what was cut. Names stay whole when cutting would
    make two of them equal."""
    parts = [n.split(".", 1) for n in names]
    suffixes = {p[1] for p in parts if len(p) == 2}
    if len(suffixes) != 1 or any(len(p) != 2 for p in parts):
        return (lambda n: n), ""
    (suffix,) = suffixes
    if len({p[0] for p in parts}) != len(names):
        return (lambda n: n), ""
    cut = "." + suffix
    return (lambda n: n[: -len(cut)] if n and n.endswith(cut) else n), f"node names end in {cut}"


def spread_rows(result: PlacementResult) -> list[dict[str, Any]]:
    """The ``spread`` rows of ``-o json``: ``PlacementResult.spread`` (the workloads placed or
    pending in this run, per constraint, as ``kubespread.scheduler.views`` counts them)."""
    return [row.to_dict() for row in result.spread()]


def print_spread(rows: list[dict[str, Any]], short: Any) -> None:
    if not rows:
        return
    out.print(Text("spread (as the scheduler counts it; skew/maxSkew)", style="bold"))
    out.print(spread_table(rows, short, label="owner"))
    if has_left_out(rows):
        out.print(Text(OUT_LEGEND, style="dim"))
    if has_raw_column(rows):
        out.print(Text(RAW_LEGEND, style="dim"))


def print_pending(pending: list[dict[str, Any]]) -> None:
    for p in pending:
        why = p["message"] or "not tried (scheduling gates, or no scheduler with its schedulerName)"
        line = Text.assemble(("pending ", "yellow"), short_ns(p["namespace"], p["name"]), ": ", why)
        out.print(line, soft_wrap=False)


def _fmt_seconds(t: float | None) -> str:
    return "-" if t is None else f"{t:g}s"


def print_preemptions(entries: list[dict[str, Any]], short: Any = lambda n: n, *, indent: str = "") -> None:
    """The preempted section: per preemptor, its nominated node, when, where it then ran and
    why that node won; then each victim (priority, node, the PodDisruptionBudget its
    eviction breaks)."""
    if not entries:
        return
    out.print(
        Text(f"{indent}preempted (victims deleted gracefully; the preemptor waits nominated)", style="bold")
    )
    for e in entries:
        node = short(e["nominatedNode"])
        if e.get("time") is None:
            when = "if scheduled now"
        else:
            when = f"at {_fmt_seconds(e['time'])}"
            if e.get("scheduledNode"):
                when += f", running on {short(e['scheduledNode'])} at {_fmt_seconds(e['scheduledAt'])}"
            else:
                when += ", waiting for its victims to terminate"
        pod = short_ns(*e["pod"].split("/", 1))
        out.print(Text.assemble(f"{indent}  ", (pod, "bold"), f" -> {node} ({when})"), soft_wrap=False)
        out.print(Text(f"{indent}    why {node}: {e['reason'] or '-'}", style="dim"), soft_wrap=False)
        for v in e["victims"]:
            pdb = f", breaks pdb/{v['pdb']}" if v["pdb"] else ""
            victim = short_ns(v["namespace"], v["name"])
            line = Text.assemble(
                f"{indent}    ",
                ("evicts ", "red"),
                victim,
                f" (priority {v['priority']}, on {short(v['node'])}{pdb})",
            )
            out.print(line, soft_wrap=False)


def _print_table(result: PlacementResult, spread: list[dict[str, Any]], wide: bool = False) -> None:
    """``wide``: node names whole, each pod's count of feasible nodes found and of nodes tied
    at its best score. A line under the table when ties crossed zones."""
    short, note = (str, "") if wide else node_namer(list(result.sim.cluster.nodes))
    placed = result.placements
    pending = result.final.pending
    victims = {(v["namespace"], v["name"]) for e in result.preemptions for v in e["victims"]}
    head = f"placed {len(placed)} pod(s), {len(pending)} pending"
    if victims:
        head += f", {len(victims)} preempted"
    if note:
        head += f" ({note})"
    out.print(Text(head, style="bold"))
    if placed:
        t = table("pod", "node", "zone", ("score", "right"))
        if wide:
            t.add_column("feasible", justify="right")
            t.add_column("tied", justify="right")
        for p in placed:
            score = "-" if p["score"] is None else str(p["score"])  # the only feasible node: not scored
            name = short_ns(p["namespace"], p["name"])
            if (p["namespace"], p["name"]) in victims:
                name += " (preempted)"
            extra = [str(p["feasibleNodes"]), str(p["tiedNodes"])] if wide else []
            t.add_row(name, short(p["node"]), p["zone"] or "-", score, *extra)
        out.print(t)
        across = sum(1 for p in placed if p.get("tiedZones"))
        if across:
            out.print(
                Text(
                    f"{across} placement(s) tied across zones: kubespread answers as kube-scheduler at "
                    "parallelism 1; at kube's parallelism 16 these could land in another zone "
                    "(`kubespread simulate --runs N` shows the spread)",
                    style="yellow",
                ),
                soft_wrap=False,
            )
    out.print()
    if result.preemptions:
        print_preemptions(result.preemptions, short)
        out.print()
    print_spread(spread, short)
    if pending:
        out.print()
        print_pending(pending)
    for r in result.rejections:
        out.print(Text.assemble(("refused ", "red"), f"{r['source']}: {r['object']}: {r['message']}"))
    for f in result.failed_creates:
        out.print(Text.assemble(("failed ", "red"), f"{f['object']}: {f['message']}"))


def _print_optimal(result: PlacementResult, solved: OptimalResult | None) -> None:
    """The optimal section: greedy vs optimal pods per node, then the bind order."""
    out.print()
    if solved is None:
        out.print(Text("optimal: nothing pending", style="bold"))
        return
    short, _ = node_namer(list(result.sim.cluster.nodes))
    what = "workload" if len(solved.workloads) == 1 else "workloads"
    out.print(
        Text(f"optimal ({what} {solved.title}, {solved.scope} solved at once)", style="bold"), soft_wrap=False
    )
    if solved.error:
        out.print(Text.assemble(("not solved ", "red"), solved.error), soft_wrap=False)
        return
    if solved.pending:
        proven = "proven" if solved.proven else "not proven (time limit)"
        out.print(Text(f"no arrangement places all of them ({proven})", style="yellow"))
        for why in solved.limited_by:
            out.print(Text(f"  {why}"), soft_wrap=False)
        if solved.conflict:
            out.print(Text(f"  conflicting: {' + '.join(solved.conflict)}"), soft_wrap=False)
        elif solved.conflict == []:
            out.print(Text("  conflicting: no node admits some of the pods"), soft_wrap=False)
        return
    t = table("node", "zone", ("greedy", "right"), ("optimal", "right"))
    for name, zone, greedy_n, optimal_n in greedy_vs_optimal(result, solved):
        t.add_row(short(name), zone, str(greedy_n), str(optimal_n))
    out.print(t)
    out.print(Text("bind order (pinned: required node affinity metadata.name In [node])", style="bold"))
    for i, e in enumerate(solved.bind_order, 1):
        ns, name = e["pod"].split("/", 1)
        pin = " (pinned)" if e["pinned"] else ""
        out.print(Text(f"  {i}. {short_ns(ns, name)} -> {short(e['node'])}{pin}"), soft_wrap=False)


def greedy_vs_optimal(result: PlacementResult, solved: OptimalResult) -> list[tuple[str, str, int, int]]:
    """(node, zone, pods there under kube-scheduler's placement, under the optimal one) for
    the solved workload, by node: what the table and the report both show."""
    nodes = result.sim.cluster.nodes
    greedy_counts = _per_node(solved.greedy)
    optimal_counts = _per_node(solved.assignments)
    return [
        (
            name,
            zone_of(nodes[name].metadata.labels) or "-",
            greedy_counts.get(name, 0),
            optimal_counts.get(name, 0),
        )
        for name in sorted(set(greedy_counts) | set(optimal_counts))
    ]


def _optimal_tables(result: PlacementResult, solved: OptimalResult | None) -> list[Any]:
    """The report's side-by-side view: per zone, then per node."""
    if solved is None or solved.error or solved.pending:
        return []
    rows = greedy_vs_optimal(result, solved)
    zones: dict[str, list[int]] = {}
    for _, zone, g, o in rows:
        acc = zones.setdefault(zone, [0, 0])
        acc[0] += g
        acc[1] += o
    title = f"Greedy vs optimal: {solved.title}"
    return [
        (
            f"{title}, per zone",
            ["zone", "greedy", "optimal"],
            [[z, str(g), str(o)] for z, (g, o) in sorted(zones.items())],
        ),
        (
            f"{title}, per node",
            ["node", "zone", "greedy", "optimal"],
            [[n, z, str(g), str(o)] for n, z, g, o in rows],
        ),
    ]


def _per_node(assignments: dict[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in assignments.values():
        counts[node] = counts.get(node, 0) + 1
    return counts


def _workload_id(row: dict[str, Any]) -> str:
    """A spread row's workload: its owner (a Deployment's ReplicaSets are one), else the pod."""
    if row["owner"]:
        return f"{row['owner']['kind']}/{row['owner']['name']}"
    return f"Pod/{row['pod']}"


def write_placement_report(
    directory: Path,
    result: PlacementResult,
    title: str,
    explanation: dict[str, Any] | None,
    spread: list[dict[str, Any]] | None = None,
    extra_tables: list[Any] | None = None,
) -> Path:
    """``spread``: the run's ``spread_rows`` when the caller has them already;
    ``extra_tables`` (title, headers, rows) follow the placements (``--optimal``'s view)."""
    from kubespread.report import write_report

    if spread is None:
        spread = spread_rows(result)

    steps = [{**result.initial.to_dict(), "label": "the cluster as given"}]
    steps += [{**s.to_dict(), "label": s.description} for s in result.steps]
    # the pictures follow the workloads this run placed or left pending, not the whole dump
    involved = {(r["namespace"], _workload_id(r)) for r in spread}
    for step in steps:
        step["distribution"] = [
            d for d in step["distribution"] if (d["namespace"], _workload_id(d)) in involved
        ]
    rows = [
        [short_ns(p["namespace"], p["name"]), p["node"], p["zone"] or "-", str(p["score"] or "-")]
        for p in result.placements
    ]
    tables = [("Placements", ["pod", "node", "zone", "score"], rows)] if rows else []
    tables += extra_tables or []
    return write_report(directory, title=title, steps=steps, explanation=explanation, tables=tables)


def schedule_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: WideOutputOption = WideOutput.table,
    scheduler_config: SchedulerConfigOption = None,
    seed: SeedOption = 0,
    report: ReportOption = None,
    progress: ProgressOption = True,
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
    optimal: Annotated[
        bool,
        typer.Option(
            "--optimal",
            help="When pods stay pending, solve every pending workload at once (CP-SAT): "
            "place all where an arrangement exists, with a bind order the scheduler replays; "
            "else the most that fit and what binds.",
        ),
    ] = False,
    fail_on_pending: Annotated[
        bool,
        typer.Option(
            "--fail-on-pending",
            help=f"Exit {EXIT_PENDING} when any pod stays pending (CI pipelines); the output is the same.",
        ),
    ] = False,
) -> None:
    """Place pods onto a cluster: nodes, bound pods and a kubectl dump as they are; new pods
    and workloads (Deployments, ReplicaSets, StatefulSets, Jobs become their pods) created in
    order. Shows each placement, the spread per topology key and why pods stay pending."""
    result = run_placement(
        files, scheduler_config, seed, progress, kubeconfig, context, validate, max_pods=max_pods
    )
    spread = spread_rows(result)
    solved = None
    if optimal:
        from kubespread.plan.optimal import optimal as solve_optimal

        solved = solve_optimal(result)
    if output.is_table:
        _print_table(result, spread, wide=output is WideOutput.wide)
        if optimal:
            _print_optimal(result, solved)
    else:
        doc = result.to_dict()
        doc["spread"] = spread
        if optimal:
            doc["optimal"] = None if solved is None else solved.to_dict()
        print_data(doc, output)
    if report is not None:
        from kubespread.sim.placement import report_explanation

        explained = report_explanation(result.sim)
        title = "kubespread schedule"
        path = write_placement_report(
            report,
            result,
            title,
            explained.to_dict() if explained else None,
            spread,
            extra_tables=_optimal_tables(result, solved) if optimal else None,
        )
        err.print(f"report: {path}", markup=False, highlight=False)
    if result.rejections:
        n = len(result.rejections)
        err.print(f"error: the API server refused {n} object(s)", markup=False)
        raise typer.Exit(1)
    if fail_on_pending and result.final.pending:
        n = len(result.final.pending)
        err.print(f"error: {n} pod(s) pending (--fail-on-pending)", markup=False, highlight=False)
        raise typer.Exit(EXIT_PENDING)
