"""What ``schedule``, ``explain``, ``diff``, ``audit``, ``rebalance`` and ``simulate`` show
alike of a placement: node names shortened for 80 columns, the preempted section, and the
HTML report of a placement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from kubespread.cli.common import out, short_ns

if TYPE_CHECKING:
    from kubespread.scheduler.views import Preemption, SpreadRow
    from kubespread.sim.placement import PlacementResult

__all__ = ["node_namer", "print_preemptions", "write_placement_report"]


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


def _fmt_seconds(t: float | None) -> str:
    return "-" if t is None else f"{t:g}s"


def print_preemptions(
    entries: Sequence[Preemption], short: Callable[[str], str] = lambda n: n, *, indent: str = ""
) -> None:
    """The preempted section: per preemptor, its nominated node, when, where it then ran and
    why that node won; then each victim (priority, node, the PodDisruptionBudget its
    eviction breaks)."""
    if not entries:
        return
    out.print(
        Text(f"{indent}preempted (victims deleted gracefully; the preemptor waits nominated)", style="bold")
    )
    for e in entries:
        node = short(e.nominated_node or "")
        if e.time is None:
            when = "if scheduled now"
        else:
            when = f"at {_fmt_seconds(e.time)}"
            if e.scheduled_node:
                when += f", running on {short(e.scheduled_node)} at {_fmt_seconds(e.scheduled_at)}"
            else:
                when += ", waiting for its victims to terminate"
        pod = short_ns(*e.pod.split("/", 1))
        out.print(Text.assemble(f"{indent}  ", (pod, "bold"), f" -> {node} ({when})"), soft_wrap=False)
        out.print(Text(f"{indent}    why {node}: {e.reason or '-'}", style="dim"), soft_wrap=False)
        for v in e.victims:
            pdb = f", breaks pdb/{v.pdb}" if v.pdb else ""
            victim = short_ns(v.namespace, v.name)
            line = Text.assemble(
                f"{indent}    ",
                ("evicts ", "red"),
                victim,
                f" (priority {v.priority}, on {short(v.node or '')}{pdb})",
            )
            out.print(line, soft_wrap=False)


def _workload_id(row: dict[str, Any]) -> str:
    """A distribution row's workload: its owner (a Deployment's ReplicaSets are one), else the pod."""
    if row["owner"]:
        return f"{row['owner']['kind']}/{row['owner']['name']}"
    return f"Pod/{row['pod']}"


def _spread_id(row: SpreadRow) -> str:
    """A spread row's workload, as :func:`_workload_id` names a distribution row's."""
    return f"{row.top.kind}/{row.top.name}" if row.top else f"Pod/{row.pod}"


def write_placement_report(
    directory: Path,
    result: PlacementResult,
    title: str,
    explanation: dict[str, Any] | None,
    spread: Sequence[SpreadRow] | None = None,
    extra_tables: list[Any] | None = None,
) -> Path:
    """``spread``: the run's ``PlacementResult.spread()`` when the caller has it already;
    ``extra_tables`` (title, headers, rows) follow the placements (``--optimal``'s view)."""
    from kubespread.report import write_report

    if spread is None:
        spread = result.spread()

    steps = [{**result.initial.to_dict(), "label": "the cluster as given"}]
    steps += [{**s.to_dict(), "label": s.description} for s in result.steps]
    # the pictures follow the workloads this run placed or left pending, not the whole dump
    involved = {(r.namespace, _spread_id(r)) for r in spread}
    for step in steps:
        step["distribution"] = [
            d for d in step["distribution"] if (d["namespace"], _workload_id(d)) in involved
        ]
    rows = [
        [short_ns(p.namespace, p.name), p.node, p.zone or "-", str(p.score or "-")] for p in result.placements
    ]
    tables = [("Placements", ["pod", "node", "zone", "score"], rows)] if rows else []
    tables += extra_tables or []
    return write_report(directory, title=title, steps=steps, explanation=explanation, tables=tables)
