"""The fewest (then cheapest) nodes to add so that every new pod fits: the placement model
with offered nodes (``PlacementModel.offers``), solved by CP-SAT.

Each offer is a node template's identical copies, each with an "added" boolean
(``Encoding.added``); a pod only goes to an added node, and a spread domain only an offered
node gives counts only when one is added (``Encoding._offered_minimum``). Copies of one
template are interchangeable, so the symmetry is broken: copy k is added only when copy k-1
is, and holds no more pods than it. The objective is lexicographic by weights: fewest nodes,
then the least cost. When not every pod fits even with every offered node, the most that
fit are placed first (a second solve), the fewest nodes for those.

``exclude``: count vectors (nodes per offer) that must not be the answer, the no-good cuts a
replay adds when the scheduler does not land every pod on that addition.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ortools.sat.python import cp_model

from kubespread.solve.encode import Encoding
from kubespread.solve.model import PlacementModel, SolveError, Spread

__all__ = ["NoAddition", "OfferSolution", "lower_bound", "relaxation", "solve_offers", "truncated"]


class NoAddition(SolveError):
    """The solver found no addition in time; ``lower_bound``: the fewest nodes it proved
    necessary meanwhile (0 when none)."""

    def __init__(self, message: str, lower_bound: int = 0) -> None:
        super().__init__(message)
        self.lower_bound = lower_bound


@dataclass(frozen=True, slots=True)
class OfferSolution:
    """Nodes added per offer (in the model's order), where the pods go, how many are placed,
    whether CP-SAT proved it optimal, and a lower bound on the nodes (the gap when not)."""

    added: tuple[int, ...]
    by_group: list[dict[str, int]]
    placed: int
    proven: bool
    lower_bound: int
    status: str
    seconds: float

    @property
    def nodes(self) -> int:
        return sum(self.added)


def _encode(
    model: PlacementModel, exclude: Sequence[Sequence[int]], *, exact: bool
) -> tuple[Encoding, list[Any]]:
    """The encoding with the offers' symmetry broken and the excluded vectors cut; the
    number of nodes added per offer."""
    b = Encoding(model, exact=exact, assume=False)
    m = b.m
    counts = []
    groups = model.groups
    for offer in model.offers:
        for n in offer.nodes:
            users = [gi for gi in range(len(groups)) if n in b.x[gi]]
            room = model.room.get(n, {})
            for r, free in room.items():
                load = [groups[gi].request[r] * b.x[gi][n] for gi in users if groups[gi].request.get(r)]
                if load:
                    # redundant with the room per node, but it ties the room to the node being
                    # added: the linear relaxation then bounds the nodes by the pods' requests
                    m.add(sum(load) <= max(free, 0) * b.added[n])
    for t, offer in enumerate(model.offers):
        loads = [sum(b.x[gi][n] for gi in range(len(model.groups)) if n in b.x[gi]) for n in offer.nodes]
        for k in range(1, len(offer.nodes)):
            m.add_implication(b.added[offer.nodes[k]], b.added[offer.nodes[k - 1]])
            if not isinstance(loads[k], int) or loads[k]:
                m.add(loads[k] <= loads[k - 1])
        count = m.new_int_var(0, len(offer.nodes), f"count[{t}]")
        m.add(count == sum(b.added[n] for n in offer.nodes))
        counts.append(count)
    for vector in exclude:
        differs = []
        for count, want in zip(counts, vector, strict=True):
            less, more = m.new_bool_var(""), m.new_bool_var("")
            m.add(count <= want - 1).only_enforce_if(less)
            m.add(count >= want + 1).only_enforce_if(more)
            differs += [less, more]
        m.add_bool_or(differs)
    return b, counts


def _weights(model: PlacementModel) -> tuple[int, list[int]]:
    """The weight of one node (more than every cost together) and each offer's cost; with
    one cost for all, cost is nodes and only nodes are counted."""
    costs = [o.cost for o in model.offers]
    if len(set(costs)) <= 1:
        return 1, [0 for _ in costs]
    per_node = sum(o.cost * len(o.nodes) for o in model.offers) + 1
    return per_node, costs


def _hinted(b: Encoding, hint: Sequence[Mapping[str, int]], time_limit: float) -> None:
    """Start the search from a known arrangement (per group, pods per node): the model with
    the arrangement fixed is solved first (quick: only what follows from it is left), and
    its whole solution becomes the hint (CP-SAT takes up a complete, feasible hint at once;
    a partial one it may spend its time repairing). When that fails, the partial hint."""
    fixed = b.m.clone()
    for xs, known in zip(b.x, hint, strict=True):
        for node, v in xs.items():
            fixed.add(fixed.get_int_var_from_proto_index(v.index) == int(known.get(node, 0)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1
    if solver.solve(fixed) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        for i, value in enumerate(solver.response_proto.solution):
            b.m.add_hint(b.m.get_int_var_from_proto_index(i), value)
        return
    used = {n for counts in hint for n, k in counts.items() if k}
    for xs, known in zip(b.x, hint, strict=True):
        for node, v in xs.items():
            b.m.add_hint(v, int(known.get(node, 0)))
    for node, v in b.added.items():
        b.m.add_hint(v, node in used)


def _as_solution(
    model: PlacementModel, b: Encoding, hint: Sequence[Mapping[str, int]]
) -> tuple[tuple[int, ...], list[dict[str, int]]]:
    """The hint as an answer: nodes used per offer (its offered nodes come first in each
    offer's order), pods per node of the model."""
    used = {n for counts in hint for n, k in counts.items() if k}
    added = tuple(sum(1 for n in o.nodes if n in used) for o in model.offers)
    by_group = [
        {n: k for n, k in known.items() if k and n in xs} for xs, known in zip(b.x, hint, strict=True)
    ]
    return added, by_group


def solve_offers(
    model: PlacementModel,
    *,
    time_limit: float = 10.0,
    workers: int = 1,
    exclude: Sequence[Sequence[int]] = (),
    hint: Sequence[Mapping[str, int]] | None = None,
    at_least: int = 0,
) -> OfferSolution:
    """The fewest then cheapest additions that place every pod of the model (or the most
    that can be placed, when not all can); raises SolveError when the solver finds no
    arrangement within ``time_limit`` (every offer excluded included). ``hint``: a known
    arrangement per group (its offered nodes in each offer's order, as the symmetry breaking
    wants them), from which the search starts; ``at_least``: nodes known to be needed (a
    bound proved on a relaxation), which lets the search stop once it reaches them. One
    worker is deterministic; more search better on large models but may return another of
    several equal optima."""
    started = time.perf_counter()
    node_weight, costs = _weights(model)
    b, counts = _encode(model, exclude, exact=True)
    if at_least > 0:
        b.m.add(sum(counts) >= at_least)  # a bound proved elsewhere: one found there is optimal
    objective = sum(node_weight * c + cost * c for c, cost in zip(counts, costs, strict=True))
    b.m.minimize(objective)
    start = None
    if hint is not None:
        _hinted(b, hint, time_limit / 3)
        start = _as_solution(model, b, hint)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.1, time_limit - (time.perf_counter() - started))
    solver.parameters.num_workers = workers
    status = solver.solve(b.m)
    if start is not None and status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # the search found nothing in time: the start is the answer, with what was proved
        bound = int(solver.best_objective_bound // node_weight) if status == cp_model.UNKNOWN else 0
        added, by_group = start
        placed = sum(sum(c.values()) for c in by_group)
        return OfferSolution(
            added,
            by_group,
            placed,
            False,
            min(max(bound, 0), sum(added)),
            "HINT",
            time.perf_counter() - started,
        )
    if status == cp_model.INFEASIBLE:
        # not every pod fits: the most that do, then the fewest nodes for them
        most, _ = _encode(model, exclude, exact=False)
        most.m.maximize(sum(v for xs in most.x for v in xs.values()))
        left = max(0.1, time_limit - (time.perf_counter() - started))
        solver.parameters.max_time_in_seconds = left
        first = solver.solve(most.m)
        if first not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise NoAddition(
                f"the solver found no arrangement ({solver.status_name(first)}) within {time_limit:g} s"
            )
        target = int(solver.objective_value)
        b, counts = _encode(model, exclude, exact=False)
        b.require(sum(v for xs in b.x for v in xs.values()) == target)
        b.m.minimize(sum(node_weight * c + cost * c for c, cost in zip(counts, costs, strict=True)))
        solver.parameters.max_time_in_seconds = max(0.1, time_limit - (time.perf_counter() - started))
        status = solver.solve(b.m)
        if first != cp_model.OPTIMAL and status == cp_model.OPTIMAL:
            status = cp_model.FEASIBLE  # the most placed was not proven
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = int(solver.best_objective_bound // node_weight) if status == cp_model.UNKNOWN else 0
        raise NoAddition(f"the solver found no arrangement ({name}) within {time_limit:g} s", max(bound, 0))
    added = tuple(int(solver.value(c)) for c in counts)
    by_group = [{n: int(solver.value(v)) for n, v in xs.items()} for xs in b.x]
    by_group = [{n: k for n, k in c.items() if k} for c in by_group]
    placed = sum(sum(c.values()) for c in by_group)
    proven = status == cp_model.OPTIMAL
    bound = sum(added) if proven else int(solver.best_objective_bound // node_weight)
    return OfferSolution(
        added, by_group, placed, proven, min(bound, sum(added)), name, time.perf_counter() - started
    )


@dataclass(frozen=True, slots=True)
class _Pool:
    """Nodes taken together in the relaxation: an offer's (``offer`` its index, their number
    a variable) or existing nodes alike in everything the relaxation keeps (``size`` of them):
    their values of the kept keys, each group's capacity on one, the room of one, and which
    spread constraints count them."""

    nodes: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]
    capacity: tuple[int, ...]
    room: tuple[tuple[str, int], ...]
    counted: tuple[bool, ...]
    offer: int = -1


def _kept_keys(model: PlacementModel, labels: Mapping[str, Mapping[str, str]]) -> set[str]:
    """The spread keys every offer's nodes share one value of (or all lack): zones, not
    hostnames."""
    keys = {s.topology_key for g in model.groups for s in g.spreads}
    kept = set()
    for key in keys:
        if all(len({labels.get(n, {}).get(key) for n in o.nodes}) <= 1 for o in model.offers):
            kept.add(key)
    return kept


def _pools(model: PlacementModel, labels: Mapping[str, Mapping[str, str]], kept: set[str]) -> list[_Pool]:
    groups = model.groups
    spreads = [s for g in groups for s in g.spreads if s.topology_key in kept]
    caps: dict[str, list[int]] = {}
    for gi, g in enumerate(groups):
        for n in g.nodes:
            caps.setdefault(n.name, [0] * len(groups))[gi] = n.capacity
    offer_of = {n: t for t, o in enumerate(model.offers) for n in o.nodes}

    def key_of(name: str) -> tuple[Any, Any, Any, Any]:
        lab = labels.get(name, {})
        return (
            tuple(sorted((k, lab[k]) for k in kept if k in lab)),
            tuple(caps[name]),
            tuple(sorted(model.room.get(name, {}).items())),
            tuple(name in s.counted for s in spreads),
        )

    alike: dict[tuple[Any, Any, Any, Any], list[str]] = {}
    for name in caps:
        if name not in offer_of:
            alike.setdefault(key_of(name), []).append(name)
    out = [_Pool(tuple(names), k[0], k[1], k[2], k[3]) for k, names in alike.items()]
    for t, o in enumerate(model.offers):
        if o.nodes and o.nodes[0] in caps:
            k = key_of(o.nodes[0])
            out.append(_Pool(o.nodes, k[0], k[1], k[2], k[3], offer=t))
    return out


def lower_bound(model: PlacementModel, *, time_limit: float = 2.0, workers: int = 1) -> int:
    """:func:`relaxation`'s bound."""
    return relaxation(model, time_limit=time_limit, workers=workers)[0]


def relaxation(
    model: PlacementModel, *, time_limit: float = 2.0, workers: int = 1
) -> tuple[int, tuple[int, ...] | None]:
    """A lower bound on the nodes to add, from a relaxation with nodes taken together: each
    template's offered nodes (a count) and existing nodes alike in all it keeps (so a model
    of thousands of nodes becomes one of a few pools). Per pool and group, pods within the
    group's capacity per node times the nodes; resources summed over the pool; spread over
    keys all of a template's nodes share a value of (zones) kept as the full model has it;
    spread over other keys (hostnames) and pod affinity left out; anti-affinity of a group
    to itself over a key each node has its own value of: one pod per node. Any answer of
    the full model is one of this model's, so the bound CP-SAT proves on it bounds the full
    model's. 0 when not every pod fits."""
    if not model.offers:
        return 0, None
    groups = model.groups
    labels: dict[str, dict[str, str]] = {}
    for g in groups:
        for n in g.nodes:
            labels.setdefault(n.name, n.labels)
    kept = _kept_keys(model, labels)
    pools = _pools(model, labels, kept)
    m = cp_model.CpModel()
    count = [m.new_int_var(0, len(o.nodes), f"c[{t}]") for t, o in enumerate(model.offers)]
    size: list[Any] = [count[p.offer] if p.offer >= 0 else len(p.nodes) for p in pools]
    y: list[dict[int, Any]] = []
    for gi, g in enumerate(groups):
        ys: dict[int, Any] = {}
        for pi, p in enumerate(pools):
            cap = p.capacity[gi]
            if cap <= 0:
                continue
            ys[pi] = m.new_int_var(0, min(g.count, cap * len(p.nodes)), "")
            m.add(ys[pi] <= cap * size[pi])
            unique = next(
                (a for a in g.anti if gi in a.members and _own_values(p.nodes, labels, a.topology_key)), None
            )
            if unique is not None:
                m.add(ys[pi] <= size[pi])
        m.add(sum(ys.values()) == g.count)
        y.append(ys)
    for pi, p in enumerate(pools):
        for r, free in p.room:
            load = [
                groups[gi].request[r] * ys[pi]
                for gi, ys in enumerate(y)
                if pi in ys and groups[gi].request.get(r)
            ]
            if len(load) > 1 or (load and p.offer >= 0):
                m.add(sum(load) <= max(free, 0) * size[pi])
    spreads = [(gi, s) for gi, g in enumerate(groups) for s in g.spreads if s.topology_key in kept]
    for si, (gi, s) in enumerate(spreads):
        _pooled_spread(m, gi, si, s, pools, y, size, model.count)
    m.minimize(sum(count))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    status = solver.solve(m)
    found = (
        tuple(int(solver.value(c)) for c in count)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        else None
    )
    if status == cp_model.OPTIMAL:
        return round(solver.objective_value), found
    if status in (cp_model.FEASIBLE, cp_model.UNKNOWN):
        return max(0, math.ceil(solver.best_objective_bound - 1e-6)), found
    return 0, None


def truncated(model: PlacementModel, limits: Sequence[int]) -> PlacementModel:
    """The model with at most ``limits[t]`` nodes of each offer (the first ones): a much
    smaller model where the relaxation says how many suffice. A domain only dropped nodes
    gave is gone."""
    keep = {n for o, k in zip(model.offers, limits, strict=True) for n in o.nodes[:k]}
    gone = {n for o in model.offers for n in o.nodes} - keep
    groups = []
    for g in model.groups:
        spreads = []
        for sp in g.spreads:
            offered = {d: tuple(n for n in ns if n not in gone) for d, ns in sp.offered.items()}
            empty = {d for d, ns in offered.items() if not ns}
            spreads.append(
                replace(
                    sp,
                    existing={d: k for d, k in sp.existing.items() if d not in empty},
                    counted=sp.counted - gone,
                    offered={d: ns for d, ns in offered.items() if ns},
                )
            )
        groups.append(replace(g, nodes=[n for n in g.nodes if n.name not in gone], spreads=spreads))
    offers = tuple(replace(o, nodes=o.nodes[:k]) for o, k in zip(model.offers, limits, strict=True))
    room = {n: r for n, r in model.room.items() if n not in gone}
    return PlacementModel(groups, room, model.relaxed, model.balance, offers)


def _own_values(nodes: Sequence[str], labels: Mapping[str, Mapping[str, str]], key: str) -> bool:
    """Whether each of the nodes has a value of ``key`` no other has (a hostname)."""
    values = [labels.get(n, {}).get(key) for n in nodes]
    return None not in values and len(set(values)) == len(values)


def _pooled_spread(
    m: cp_model.CpModel,
    gi: int,
    si: int,
    s: Spread,
    pools: Sequence[_Pool],
    y: Sequence[Mapping[int, Any]],
    size: Sequence[Any],
    pods: int,
) -> None:
    """A spread constraint over a kept key in the relaxation: as the full model's, over
    pools (``si``: its index among the kept constraints, for the pools' counted flags)."""
    key = s.topology_key
    domain = [dict(p.labels).get(key) for p in pools]
    totals: dict[str, Any] = {d: s.existing.get(d, 0) for d in s.existing}
    mine: dict[str, list[Any]] = {}
    for pi, p in enumerate(pools):
        d = domain[pi]
        if d is None or not p.counted[si]:
            continue
        for h in s.members:
            if pi in y[h]:
                totals[d] = totals.get(d, 0) + y[h][pi]
        if pi in y[gi]:
            mine.setdefault(d, []).append(y[gi][pi])
    present: dict[str, Any] = {}
    for d in s.offered:
        if d not in s.existing:
            continue
        nodes = [size[pi] for pi, p in enumerate(pools) if p.offer >= 0 and domain[pi] == d and p.counted[si]]
        b = m.new_bool_var("")
        if nodes:
            m.add(sum(nodes) >= 1).only_enforce_if(b)
            m.add(sum(nodes) == 0).only_enforce_if(~b)
        else:
            m.add(b == 0)
        present[d] = b
    low = m.new_int_var(0, sum(s.existing.values()) + pods, "")
    for d in s.existing:
        ct = m.add(low <= totals[d])
        if d in present:
            ct.only_enforce_if(present[d])
    short = max(s.min_domains, 1) - (len(s.existing) - len(present))
    if short > 0:
        enough = m.new_bool_var("")
        m.add(sum(present.values()) >= short).only_enforce_if(enough)
        m.add(low == 0).only_enforce_if(~enough)
    for d, terms in mine.items():
        here = m.new_bool_var("")
        m.add(sum(terms) >= 1).only_enforce_if(here)
        m.add(sum(terms) == 0).only_enforce_if(~here)
        m.add(totals.get(d, 0) - low <= s.max_skew).only_enforce_if(here)
