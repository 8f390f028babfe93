"""``kubespread schedule -f CLUSTER -f PODS``: where these pods land, how they spread, what
stays pending and why. What other commands share with it lives in ``cli/common.py`` (running
the placement with a progress bar), ``cli/options.py`` and ``cli/render/``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from kubespread.cli.common import (
    WideOutput,
    err,
    kube_features,
    out,
    print_data,
    run_placement,
    short_ns,
    table,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    MaxPodsOption,
    NamespaceOption,
    ProgressOption,
    ReportOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
    WideOutputOption,
)
from kubespread.cli.render.placement import node_namer, print_preemptions, write_placement_report
from kubespread.cli.render.spread import OUT_LEGEND, RAW_LEGEND, has_left_out, has_raw_column, spread_table
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubespread.plan.optimal import Comparison, OptimalResult
    from kubespread.sim.placement import PlacementResult
    from kubespread.sim.run import PendingPod

__all__ = ["schedule_command"]

#: ``--fail-on-pending``'s exit status: 1 is an error in the input, 2 a usage error
EXIT_PENDING = 3


def print_spread(rows: list[dict[str, Any]], short: Any) -> None:
    if not rows:
        return
    out.print(Text("spread (as the scheduler counts it; skew/maxSkew)", style="bold"))
    out.print(spread_table(rows, short, label="owner"))
    if has_left_out(rows):
        out.print(Text(OUT_LEGEND, style="dim"))
    if has_raw_column(rows):
        out.print(Text(RAW_LEGEND, style="dim"))


def print_pending(pending: Sequence[PendingPod]) -> None:
    for p in pending:
        why = p.message or "not tried (scheduling gates, or no scheduler with its schedulerName)"
        line = Text.assemble(("pending ", "yellow"), short_ns(p.namespace, p.name), ": ", why)
        out.print(line, soft_wrap=False)


def _print_table(result: PlacementResult, spread: list[dict[str, Any]], wide: bool = False) -> None:
    """``wide``: node names whole, each pod's count of feasible nodes found and of nodes tied
    at its best score. A line under the table when ties crossed zones."""
    short, note = (str, "") if wide else node_namer(list(result.sim.cluster.nodes))
    placed = result.placements
    pending = result.final.pending
    victims = {(v.namespace, v.name) for e in result.preemptions for v in e.victims}
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
            score = "-" if p.score is None else str(p.score)  # the only feasible node: not scored
            name = short_ns(p.namespace, p.name)
            if (p.namespace, p.name) in victims:
                name += " (preempted)"
            extra = [str(p.feasible_nodes), str(p.ties.nodes)] if wide else []
            t.add_row(name, short(p.node), p.zone or "-", score, *extra)
        out.print(t)
        across = sum(1 for p in placed if p.ties.across_zones)
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
        out.print(Text.assemble(("refused ", "red"), f"{r.source}: {r.object}: {r.message}"))
    for f in result.failed_creates:
        out.print(Text.assemble(("failed ", "red"), f"{f.object}: {f.message}"))


def _print_optimal(result: PlacementResult, solved: OptimalResult | None, rows: list[Comparison]) -> None:
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
    for r in rows:
        t.add_row(short(r.node), r.zone, str(r.greedy), str(r.optimal))
    out.print(t)
    out.print(Text("bind order (pinned: required node affinity metadata.name In [node])", style="bold"))
    for i, e in enumerate(solved.bind_order, 1):
        ns, name = e.pod.split("/", 1)
        pin = " (pinned)" if e.pinned else ""
        out.print(Text(f"  {i}. {short_ns(ns, name)} -> {short(e.node)}{pin}"), soft_wrap=False)


def _optimal_tables(solved: OptimalResult | None, rows: list[Comparison]) -> list[Any]:
    """The report's side-by-side view: per zone, then per node."""
    from kubespread.plan.optimal import per_zone

    if solved is None or not rows:
        return []
    title = f"Greedy vs optimal: {solved.title}"
    return [
        (
            f"{title}, per zone",
            ["zone", "greedy", "optimal"],
            [[z.zone, str(z.greedy), str(z.optimal)] for z in per_zone(rows)],
        ),
        (
            f"{title}, per node",
            ["node", "zone", "greedy", "optimal"],
            [[r.node, r.zone, str(r.greedy), str(r.optimal)] for r in rows],
        ),
    ]


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
    namespace: NamespaceOption = None,
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
            help=f"Exit {EXIT_PENDING} when any pod stays pending or a workload can create no pod "
            "(CI pipelines); the output is the same.",
        ),
    ] = False,
    kube_version: KubeVersionOption = None,
) -> None:
    """Place pods onto a cluster: nodes, bound pods and a kubectl dump as they are; new pods
    and workloads (Deployments, ReplicaSets, StatefulSets, Jobs become their pods) created in
    order. Shows each placement, the spread per topology key and why pods stay pending."""
    result = run_placement(
        files,
        scheduler_config,
        seed,
        progress,
        kubeconfig,
        context,
        validate,
        max_pods=max_pods,
        namespace=namespace,
        features=kube_features(kube_version, kubeconfig, context),
        # the table reads only the involved workloads' spread (result.spread()), not every
        # workload's per step: a dump of 100,000 pods need not count them twice
        distributions=not output.is_table or report is not None,
    )
    spread = result.spread()
    solved, compared = None, []
    if optimal:
        from kubespread.plan.optimal import greedy_vs_optimal
        from kubespread.plan.optimal import optimal as solve_optimal

        solved = solve_optimal(result)
        compared = [] if solved is None else greedy_vs_optimal(result, solved)
    if output.is_table:
        _print_table(result, [r.to_dict() for r in spread], wide=output is WideOutput.wide)
        if optimal:
            _print_optimal(result, solved, compared)
    else:
        doc = result.to_dict()
        doc["spread"] = [r.to_dict() for r in spread]
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
            extra_tables=_optimal_tables(solved, compared) if optimal else None,
        )
        err.print(f"report: {path}", markup=False, highlight=False)
    if result.rejections:
        n = len(result.rejections)
        err.print(f"error: the API server refused {n} object(s)", markup=False)
        raise typer.Exit(1)
    failed = result.failed_creates  # a workload whose pods the API server refuses: none pending, none placed
    if fail_on_pending and (result.final.pending or failed):
        what = [f"{len(result.final.pending)} pod(s) pending"] if result.final.pending else []
        what += [f"{len(failed)} workload(s) could not create pods"] if failed else []
        err.print(f"error: {', '.join(what)} (--fail-on-pending)", markup=False, highlight=False)
        raise typer.Exit(EXIT_PENDING)
