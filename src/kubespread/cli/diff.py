"""``kubespread diff -f CLUSTER --before A --after B``: how placements and spread change between
two versions of the same manifests (or two scheduler configurations).

Both versions go through ``schedule``'s own run (``run_placement``) with the same seed, and
their spread rows are ``schedule``'s (``scheduler.views``): this module only pairs and shows
them. Pods are paired by name, then, within a workload, in the order they were placed (a
changed pod template renames a Deployment's pods: its ReplicaSet's hash changes)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from kubespread.api.keys import zone_of
from kubespread.cli.common import Output, err, out, print_data, run_placement, short_kind, short_ns, table
from kubespread.cli.options import (
    FilesOption,
    MaxPodsOption,
    OutputOption,
    ProgressOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
)
from kubespread.cli.render.placement import node_namer, spread_rows
from kubespread.cli.render.spread import domains_text, skew_text
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.cluster.workloads import ownership
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.sim.placement import PlacementResult

__all__ = ["diff_command", "diff_placements"]


def _pods(result: PlacementResult) -> list[dict[str, Any]]:
    """The pods the run placed or left pending, as they ended: node (None: pending), zone
    and owner (the top owner: a Deployment, not its ReplicaSet, as ``deploy/web``)."""
    cluster = result.sim.cluster
    rows = []
    for pod in result.involved_pods():
        top = ownership(cluster, pod).top
        node = pod.spec.node_name or None
        zone = zone_of(cluster.nodes[node].metadata.labels) if node and node in cluster.nodes else None
        owner = f"{short_kind(top.kind)}/{top.name}" if top else f"pod/{pod.metadata.name}"
        rows.append(
            {
                "namespace": pod.namespace,
                "name": pod.metadata.name,
                "owner": owner,
                "node": node,
                "zone": zone,
            }
        )
    return rows


def _change(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    if before["node"] == after["node"]:
        return "same"
    if before["node"] is None:
        return "placed"
    return "pending" if after["node"] is None else "moved"


def _pair(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Same namespace and name first; the rest within their owner, in placement order."""
    by_name = {(p["namespace"], p["name"]): p for p in after}
    pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
    left_before = []
    for p in before:
        q = by_name.pop((p["namespace"], p["name"]), None)
        if q is None:
            left_before.append(p)
        else:
            pairs.append((p, q))
    left_after: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for q in by_name.values():
        left_after.setdefault((q["namespace"], q["owner"]), []).append(q)
    for p in left_before:
        rest = left_after.get((p["namespace"], p["owner"]))
        pairs.append((p, rest.pop(0) if rest else None))
    pairs += [(None, q) for rest in left_after.values() for q in rest]
    return [
        {
            "namespace": (b or a or {})["namespace"],
            "owner": (b or a or {})["owner"],
            "before": _placement(b),
            "after": _placement(a),
            "change": _change(b, a),
        }
        for b, a in pairs
    ]


def _placement(p: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if p is None else {"name": p["name"], "node": p["node"], "zone": p["zone"]}


def _spread_key(row: dict[str, Any]) -> tuple[str, str, str]:
    """A spread row's owner label and key: its top owner (a Deployment's ReplicaSets differ between
    versions when the template changed), else its controller, else its pod."""
    owner, workload = row.get("owner"), row.get("workload")
    if owner:
        label = f"{short_kind(owner['kind'])}/{owner['name']}"
    elif workload:
        label = f"{short_kind(workload['kind'])}/{workload['name']}"
    else:
        label = f"pod/{row['pod']}"
    return row["namespace"], label, row["topologyKey"]


def _pair_spread(before: Iterable[dict[str, Any]], after: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for side, version in (("before", before), ("after", after)):
        for r in version:
            ns, label, key = _spread_key(r)
            entry = rows.setdefault(
                (ns, label, key),
                {"namespace": ns, "owner": label, "topologyKey": key, "before": None, "after": None},
            )
            entry[side] = entry[side] or r  # a workload mid-rollout: its first controller's row
    return list(rows.values())


def diff_placements(before: PlacementResult, after: PlacementResult) -> dict[str, Any]:
    """The ``-o json|yaml`` document: every pod paired with its change, the spread per
    workload and constraint before and after (``schedule``'s rows), and the totals."""
    pods = _pair(_pods(before), _pods(after))
    return {
        "pods": pods,
        "spread": _pair_spread(spread_rows(before), spread_rows(after)),
        "before": {"placed": len(before.placements), "pending": len(before.final.pending)},
        "after": {"placed": len(after.placements), "pending": len(after.final.pending)},
    }


def _where(p: dict[str, Any] | None, short: Any) -> str:
    if p is None:
        return "-"
    if p["node"] is None:
        return "pending"
    return f"{short(p['node'])} ({p['zone'] or '-'})"


def _print_diff(doc: dict[str, Any], node_names: list[str]) -> None:
    short, note = node_namer(node_names)
    changed = [p for p in doc["pods"] if p["change"] != "same"]
    b, a = doc["before"], doc["after"]
    head = (
        f"{len(doc['pods'])} pod(s): {len(changed)} changed, {len(doc['pods']) - len(changed)} on the same "
        f"node; pending {b['pending']} -> {a['pending']}"
    )
    out.print(Text(head + (f" ({note})" if note else ""), style="bold"))
    if changed:
        t = table("pod", "change", "before", "after")
        for p in changed:
            name = (p["after"] or p["before"])["name"]
            t.add_row(
                short_ns(p["namespace"], name),
                p["change"],
                _where(p["before"], short),
                _where(p["after"], short),
            )
        out.print(t)
    rows = [r for r in doc["spread"] if _spread_changed(r)]
    out.print()
    if not rows:
        out.print("spread: the same before and after")
        return
    out.print(Text("spread (as the scheduler counts it; skew/maxSkew)", style="bold"))
    t = table("workload", "key", "before", ("skew", "right"), "after", ("skew", "right"))
    for r in rows:
        shorten = short if "hostname" in r["topologyKey"] else str
        kind, name = r["owner"].split("/", 1)
        defaulted = any(s and s["defaulted"] for s in (r["before"], r["after"]))
        key = r["topologyKey"].rsplit("/", 1)[-1] + (" (default)" if defaulted else "")
        cells = [f"{kind}/{short_ns(r['namespace'], name)}", key]
        for side in ("before", "after"):
            s = r[side]
            if s is None:
                cells += ["-", "-"]
            elif s["skew"] is None:
                cells += [domains_text(s["rawDomains"], shorten), "-"]
            else:
                cells += [
                    domains_text(s["domains"], shorten, s["leftOutDomains"], s["rawDomains"]),
                    skew_text(s),
                ]
        t.add_row(*cells)
    out.print(t)


def _spread_changed(r: dict[str, Any]) -> bool:
    b, a = r["before"], r["after"]
    if b is None or a is None:
        return True
    fields = ("domains", "skew", "leftOutDomains", "rawDomains", "maxSkew", "whenUnsatisfiable")
    return any(b.get(f) != a.get(f) for f in fields)


def diff_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    before: Annotated[
        list[Path],
        typer.Option("--before", metavar="FILE", help="The first version of the manifests. Repeatable."),
    ] = [],  # noqa: B006
    after: Annotated[
        list[Path],
        typer.Option("--after", metavar="FILE", help="The second version of the manifests. Repeatable."),
    ] = [],  # noqa: B006
    scheduler_config: SchedulerConfigOption = None,
    before_config: Annotated[
        Path | None,
        typer.Option("--before-config", metavar="FILE", help="The first scheduler configuration."),
    ] = None,
    after_config: Annotated[
        Path | None,
        typer.Option("--after-config", metavar="FILE", help="The second scheduler configuration."),
    ] = None,
    output: OutputOption = Output.table,
    seed: SeedOption = 0,
    progress: ProgressOption = True,
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
) -> None:
    """How placements and spread change between two versions of the same manifests, or two
    scheduler configurations: both are scheduled as `schedule` does, with the same seed.

    The cluster (-f) is the same for both; --before and --after are added to it (the old and
    the new Deployment, say), --before-config and --after-config replace --scheduler-config.
    Shown: each pod whose node changed, and the spread of each workload and constraint whose
    counts or skew changed."""
    if bool(before) != bool(after) or (before_config is None) != (after_config is None):
        err.print("error: give both --before and --after, or both --before-config and --after-config")
        raise typer.Exit(2)
    if not before and before_config is None:
        err.print(
            "error: nothing to compare: give --before and --after, or --before-config and --after-config"
        )
        raise typer.Exit(2)
    if before_config is not None and scheduler_config is not None:
        err.print("error: --scheduler-config and --before-config/--after-config exclude each other")
        raise typer.Exit(2)
    results = [
        run_placement(
            [*files, *version],
            config if config is not None else scheduler_config,
            seed,
            progress,
            validate=validate,
            max_pods=max_pods,
            command="diff",
        )
        for version, config in ((before, before_config), (after, after_config))
    ]
    doc = diff_placements(*results)
    if output is Output.table:
        names = list(dict.fromkeys([*results[0].sim.cluster.nodes, *results[1].sim.cluster.nodes]))
        _print_diff(doc, names)
    else:
        print_data(doc, output)
    refused = [
        (side, r) for side, res in zip(("before", "after"), results, strict=True) for r in res.rejections
    ]
    for side, r in refused:
        err.print(f"refused ({side}) {r.source}: {r.object}: {r.message}", markup=False, highlight=False)
    if refused:
        err.print(f"error: the API server refused {len(refused)} object(s)", markup=False)
        raise typer.Exit(1)
