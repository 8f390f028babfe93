"""``provision --report DIR``: the cluster before and after the addition, per zone (the nodes
added shaded), and the pods of the run per zone before and after, on one page."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kubespread.api.keys import LABEL_ZONE
from kubespread.cluster.state import ClusterState
from kubespread.plan.provision import ProvisionResult
from kubespread.report.html import Table, write_report
from kubespread.report.plots import _integer_axis, _new_figure, _png

__all__ = ["provision_png", "write_provision_report"]

_NO_ZONE = "(no zone)"


def _zone_of(cluster: ClusterState) -> dict[str, str]:
    return {n: node.metadata.labels.get(LABEL_ZONE, _NO_ZONE) for n, node in cluster.nodes.items()}


def _per_zone(zones: Mapping[str, str], nodes: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in nodes:
        out[zones[n]] = out.get(zones[n], 0) + 1
    return out


def provision_png(result: ProvisionResult) -> bytes | None:
    """Two panels per zone: nodes (existing, added shaded) and the run's pods placed, before
    and after; None without the settled clusters."""
    if result.before is None or result.after is None:
        return None
    before, after = result.before.cluster, result.after.cluster
    zones_after = _zone_of(after)
    zones = sorted(set(zones_after.values()))
    added = {n for a in result.additions for n in a.names}
    existing = _per_zone(zones_after, [n for n in after.nodes if n not in added])
    new = _per_zone(zones_after, [n for n in after.nodes if n in added])
    zones_before = _zone_of(before)
    run_before = [
        before.node_of(k) for k in before.pods if k in result.placements or k in result.pending_before
    ]
    pods_before = _per_zone(zones_before, [n for n in run_before if n])
    pods_after = _per_zone(zones_after, result.placements.values())
    fig = _new_figure(max(6.0, 1.2 * len(zones) + 3), 3.6)
    left, right = fig.subplots(1, 2)
    xs = list(range(len(zones)))
    left.bar(xs, [existing.get(z, 0) for z in zones], color="#4c72b0", label="existing")
    left.bar(
        xs,
        [new.get(z, 0) for z in zones],
        bottom=[existing.get(z, 0) for z in zones],
        color="#dd8452",
        hatch="//",
        alpha=0.6,
        label="added",
    )
    left.set_xticks(xs, zones)
    left.set_title("nodes per zone")
    left.legend(loc="upper left", fontsize="small")
    width = 0.4
    right.bar([x - width / 2 for x in xs], [pods_before.get(z, 0) for z in zones], width, label="before")
    right.bar([x + width / 2 for x in xs], [pods_after.get(z, 0) for z in zones], width, label="after")
    right.set_xticks(xs, zones)
    right.set_title(
        f"pods placed ({len(result.pending_before)} pending before, {len(result.pending_after)} after)"
    )
    right.legend(loc="upper left", fontsize="small")
    for ax in (left, right):
        _integer_axis(ax.yaxis)
    return _png(fig)


def write_provision_report(directory: Path | str, result: ProvisionResult) -> Path:
    """``DIR/report.html``: the picture, what is added and what stays pending."""
    tables: list[Table] = [
        (
            "Nodes to add",
            ["template", "zone", "count", "cost", "pods", "nodes"],
            [
                [a.template, a.zone, a.count, f"{a.cost:g}", a.pods, ", ".join(a.names)]
                for a in result.additions
            ],
        ),
        (
            "Still pending after the addition",
            ["pod", "workload", "kube-scheduler's message"],
            [[p.pod, p.workload, p.reason] for p in result.pending_after],
        ),
    ]
    how = "proven minimum" if result.proven else f"best found (at least {result.lower_bound})"
    return write_report(
        directory,
        title="kubespread provision",
        subtitle=f"add {result.nodes} node(s), cost {result.cost:g}: {how}",
        steps=[],
        tables=tables,
        figures=[
            (
                provision_png(result),
                "Nodes and placed pods per zone, before and after the addition",
                "Left: nodes per zone, the added ones hatched. Right: the pods of the run placed per "
                "zone on the cluster as it is (before) and with the nodes added (after), as the "
                "scheduler placed them in the replay.",
            )
        ],
    )
