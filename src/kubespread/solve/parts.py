"""Solving a rebalancing model one set of linked groups at a time (:func:`solve_by_parts`),
with a relaxation that bounds the fewest evictions from below."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kubespread.solve.encode import solve
from kubespread.solve.model import RESOURCES, Group, NodeSlot, Placement, PlacementModel, slot_capacity

__all__ = ["components", "evictions", "solve_by_parts"]


def components(model: PlacementModel) -> list[list[int]]:
    """The groups in sets no rule links (a spread selecting, an anti-affinity or affinity
    term matching a group of another set): only node resources couple two sets."""
    parent = list(range(len(model.groups)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for gi, g in enumerate(model.groups):
        linked = [m for s in g.spreads for m in s.members] + [m for t in g.anti for m in t.members]
        if g.affinity is not None:
            linked += list(g.affinity.members)
        for h in linked:
            parent[find(h)] = find(gi)
    out: dict[int, list[int]] = {}
    for gi in range(len(model.groups)):
        out.setdefault(find(gi), []).append(gi)
    return list(out.values())


def evictions(model: PlacementModel, placement: Placement) -> int:
    """Pods the arrangement takes off the nodes they run on (``Group.keep``)."""
    return sum(
        max(0, now - counts.get(node, 0))
        for g, counts in zip(model.groups, placement.by_group, strict=True)
        for node, now in g.keep.items()
    )


def _part(
    model: PlacementModel, indices: Sequence[int], room: Mapping[str, Mapping[str, int]]
) -> PlacementModel:
    """The groups ``indices`` alone (rules renumbered), each node's capacity recomputed
    from ``room``: what the other groups leave free."""
    local = {g: i for i, g in enumerate(indices)}

    def remap(members: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(local[m] for m in members if m in local)

    groups = []
    for gi in indices:
        g = model.groups[gi]
        nodes = []
        for n in g.nodes:
            free = room.get(n.name)
            cap = n.capacity
            if free is not None and RESOURCES not in model.relaxed:
                cap, _ = slot_capacity(free, g.request, bool(g.ports), g.count)
                cap = max(cap, g.keep.get(n.name, 0))
            nodes.append(NodeSlot(n.name, n.labels, cap, n.limited_by))
        groups.append(
            replace(
                g,
                nodes=nodes,
                spreads=[replace(sp, members=remap(sp.members)) for sp in g.spreads],
                anti=[replace(t, members=remap(t.members)) for t in g.anti],
                affinity=None
                if g.affinity is None
                else replace(g.affinity, members=remap(g.affinity.members)),
            )
        )
    part_room = {n: dict(r) for n, r in room.items()} if len(indices) > 1 else {}
    return PlacementModel(groups, part_room, model.relaxed, model.balance)


def _merged(model: PlacementModel) -> PlacementModel:
    """A relaxation of ``model``: no resources, and the nodes no rule tells apart made one
    (the same value of every topology key a rule names, counted alike by every spread
    constraint), holding the pods they hold together. Its fewest evictions bound the model's
    from below (a merged node keeps min(sum now, sum final) >= the sum of each node's
    min(now, final)), and it is small: a zone spread alone leaves one node per zone."""
    keys = sorted(
        {sp.topology_key for g in model.groups for sp in g.spreads}
        | {t.topology_key for g in model.groups for t in g.anti}
        | {k for g in model.groups if g.affinity is not None for k in g.affinity.keys}
    )
    every = [sp for g in model.groups for sp in g.spreads]

    def signature(n: NodeSlot) -> tuple[Any, ...]:
        return (tuple(n.labels.get(k) for k in keys), tuple(n.name in sp.counted for sp in every))

    rep: dict[tuple[Any, ...], str] = {}
    for g in model.groups:
        for n in g.nodes:
            rep.setdefault(signature(n), n.name)
    counted = [{r for sig, r in rep.items() if sig[1][i]} for i in range(len(every))]
    groups = []
    i = 0
    for g in model.groups:
        nodes: dict[str, NodeSlot] = {}
        keep: dict[str, int] = {}
        for n in g.nodes:
            r = rep[signature(n)]
            nodes.setdefault(r, NodeSlot(r, n.labels, g.count, ()))
            if g.keep.get(n.name):
                keep[r] = keep.get(r, 0) + g.keep[n.name]
        spreads = []
        for sp in g.spreads:
            spreads.append(replace(sp, counted=frozenset(counted[i])))
            i += 1
        groups.append(replace(g, nodes=list(nodes.values()), spreads=spreads, keep=keep, ports=frozenset()))
    return PlacementModel(groups, {}, model.relaxed | {RESOURCES}, model.balance)


def _charge(room: dict[str, dict[str, int]], g: Group, counts: Mapping[str, int], sign: int) -> None:
    for node, k in counts.items():
        free = room.get(node)
        if free is None:
            continue
        for r, want in g.request.items():
            free[r] = free.get(r, 0) - sign * want * k


def solve_by_parts(model: PlacementModel, *, time_limit: float = 10.0) -> Placement:
    """:func:`solve` for the fewest evictions, one set of linked groups at a time
    (:func:`components`) when only node resources couple them: each set is solved with the
    room the others leave (the sets solved so far where they were put, the rest where they
    run), so the whole stays within every node's resources. The total is proven minimal when
    each set's solve is, and it equals the sum of each set's minimum with resources relaxed
    (a lower bound of the joint minimum); else it is an upper bound, ``proven`` false. One
    set, or no pods to keep: the joint model."""
    parts = components(model)
    if len(parts) < 2 or not any(g.keep for g in model.groups) or not model.room:
        return solve(model, time_limit=time_limit)
    started = time.perf_counter()
    room = {n: dict(r) for n, r in model.room.items()}
    for g in model.groups:
        _charge(room, g, g.keep, +1)  # every kept pod where it runs, to begin with
    by_group: list[dict[str, int]] = [{} for _ in model.groups]
    proven = True
    bound = 0
    total = 0
    for indices in parts:
        for gi in indices:
            _charge(room, model.groups[gi], model.groups[gi].keep, -1)
        sub = _part(model, indices, room)
        found = solve(sub, time_limit=time_limit)
        proven = proven and found.proven
        for gi, counts in zip(indices, found.by_group, strict=True):
            by_group[gi] = counts
            _charge(room, model.groups[gi], counts, +1)
        total += evictions(sub, found)
        merged = _merged(sub)
        loose = solve(merged, time_limit=time_limit)
        proven = proven and loose.proven
        bound += evictions(merged, loose)
    seconds = time.perf_counter() - started
    placement = Placement(by_group, proven and total == bound, seconds, "OPTIMAL" if proven else "FEASIBLE")
    return placement
