"""The placement model as CP-SAT (OR-Tools) constraints, and :func:`solve`.

- resources: per node, the groups' requests summed stay within allocatable minus requested
  (one group alone: an upper bound per node), the pod limit, host ports;
- required anti-affinity among new pods: a term of group g that selects group h keeps h out
  of every domain (of the term's key) holding a pod of g, both ways (kube checks the
  incoming pod's terms and the existing pods' terms); g selecting itself: one per domain;
- required pod affinity: each domain (of each term's key) holding a pod of g holds another
  pod matching all of g's terms, existing or new, unless no such pod exists anywhere and g
  matches its own terms (kube's first-pod rule);
- DoNotSchedule topology spread in its final state, counted by the plugin's own PreFilter
  (``views.constraint_views``: existing matching pods per eligible domain, the nodes whose
  pods count): for every node holding a pod of g, ``matching(d) - global minimum <=
  maxSkew`` (the minimum is 0 below minDomains domains), new pods of every group the
  selector matches counted. That is the Filter's ``matching + self-match - minimum`` for
  each new pod judged with itself removed.

Rebalancing uses the same model with the pods running now as ``Group.keep`` (they may stay
where they run whatever the filters say today, or be evicted and placed again) and
``balance`` (every spread constraint within maxSkew over every eligible domain, the skew the
tables show); the objective is then the most pods kept, i.e. the fewest evictions.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from kubespread.solve.model import (
    AFFINITY,
    ANTI_AFFINITY,
    RESOURCES,
    SPREAD,
    AffinityRule,
    AntiTerm,
    Group,
    Placement,
    PlacementModel,
    SolveError,
    Spread,
    guards,
)

__all__ = ["Encoding", "solve"]


class Encoding:
    """One CP-SAT model of a PlacementModel; with ``assume`` each constraint is guarded by a
    literal (for :func:`conflict`), else all hold."""

    def __init__(self, model: PlacementModel, *, exact: bool, assume: bool) -> None:
        self.model = model
        self.m = cp_model.CpModel()
        self.lits: dict[tuple[str, int, int], Any] = {}
        if assume:
            for name, key in guards(model):
                self.lits[key] = self.m.new_bool_var(name)
        self.assume = assume
        self.x: list[dict[str, Any]] = []
        self._used: dict[tuple[int, str], Any] = {}
        self._by_value: dict[tuple[int, str], dict[str, list[str]]] = {}
        res = self._guard((RESOURCES, -1, 0))
        #: per offered node, a boolean: it is added (provisioning)
        self.added: dict[str, Any] = {
            node: self.m.new_bool_var(f"added[{node}]") for offer in model.offers for node in offer.nodes
        }
        for gi, g in enumerate(model.groups):
            xs: dict[str, Any] = {}
            for n in g.nodes:
                ub = g.count if assume else n.capacity
                xs[n.name] = self.m.new_int_var(0, ub, f"x[{gi},{n.name}]")
                if assume and RESOURCES not in model.relaxed:
                    self.require(xs[n.name] <= n.capacity, res)
                if n.name in self.added:
                    # a pod on a node that is not added: none
                    self.m.add(xs[n.name] <= ub * self.added[n.name])
            self.x.append(xs)
            total = sum(xs.values())
            self.require(total == g.count if exact else total <= g.count)
        if RESOURCES not in model.relaxed:
            self._shared_resources(res)
        for gi, g in enumerate(model.groups):
            for i, s in enumerate(g.spreads):
                self._spread(gi, s, self._guard((SPREAD, gi, i)))
            for i, t in enumerate(g.anti):
                self._anti(gi, t, self._guard((ANTI_AFFINITY, gi, i)))
            if g.affinity is not None:
                self._affinity(gi, g.affinity, self._guard((AFFINITY, gi, 0)))

    def _guard(self, key: tuple[str, int, int]) -> list[Any]:
        lit = self.lits.get(key)
        return [] if lit is None else [lit]

    def require(self, cond: Any, enforce: Sequence[Any] = ()) -> None:
        """Add ``cond`` when every literal of ``enforce`` holds; a constant condition (all
        its terms known) that is false forbids ``enforce`` instead."""
        if isinstance(cond, (bool, np.bool_)):
            if not cond:
                if enforce:
                    self.m.add_bool_or([~lit for lit in enforce])
                else:
                    self.m.add_bool_or([])
            return
        ct = self.m.add(cond)
        if enforce:
            ct.only_enforce_if(list(enforce))

    def nodes_of(self, gi: int, key: str) -> dict[str, list[str]]:
        """The group's nodes by their value of ``key`` (nodes without it left out)."""
        cache = self._by_value.get((gi, key))
        if cache is None:
            cache = {}
            for n in self.model.groups[gi].nodes:
                value = n.labels.get(key)
                if value is not None:
                    cache.setdefault(value, []).append(n.name)
            self._by_value[(gi, key)] = cache
        return cache

    def used(self, gi: int, node: str) -> Any:
        """A boolean: the group has a pod on the node."""
        key = (gi, node)
        if key not in self._used:
            b = self.m.new_bool_var(f"u[{gi},{node}]")
            v = self.x[gi][node]
            self.m.add(v >= 1).only_enforce_if(b)
            self.m.add(v == 0).only_enforce_if(~b)
            self._used[key] = b
        return self._used[key]

    def arrives(self, gi: int, node: str, g: Group) -> Any:
        """A boolean: a new pod of the group lands on the node (more than it keeps there)."""
        kept = g.keep.get(node, 0)
        if not kept:
            return self.used(gi, node)
        b = self.m.new_bool_var(f"new[{gi},{node}]")
        v = self.x[gi][node]
        self.m.add(v >= kept + 1).only_enforce_if(b)
        self.m.add(v <= kept).only_enforce_if(~b)
        return b

    def kept(self) -> Any:
        """The pods that stay where they run (per group and node, min(now, final))."""
        out = []
        for gi, g in enumerate(self.model.groups):
            for node, now in g.keep.items():
                v = self.x[gi].get(node)
                if v is None or now <= 0:
                    continue
                s = self.m.new_int_var(0, now, f"kept[{gi},{node}]")
                self.m.add(s <= v)
                out.append(s)
        return sum(out) if out else 0

    def any_in(self, gi: int, nodes: Sequence[str], name: str) -> Any:
        """A boolean: the group has a pod on one of the nodes."""
        if len(nodes) == 1:
            return self.used(gi, nodes[0])
        b = self.m.new_bool_var(name)
        total = sum(self.x[gi][n] for n in nodes)
        self.m.add(total == 0).only_enforce_if(~b)
        self.m.add(total >= 1).only_enforce_if(b)
        return b

    def domain_sum(
        self, members: Iterable[int], key: str, value: str, only: frozenset[str] | None = None
    ) -> Any:
        """New pods of ``members`` on the nodes of one domain (those in ``only``, if given);
        0 when no member may use one of them."""
        terms = [
            self.x[h][n]
            for h in members
            for n in self.nodes_of(h, key).get(value, ())
            if only is None or n in only
        ]
        return sum(terms) if terms else 0

    def _shared_resources(self, res: list[Any]) -> None:
        """Nodes two or more groups may use: requests summed within the free room; host
        ports held by two groups: one pod between them."""
        users: dict[str, list[int]] = {}
        for gi, g in enumerate(self.model.groups):
            for n in g.nodes:
                users.setdefault(n.name, []).append(gi)
        groups = self.model.groups
        for node, gis in users.items():
            if len(gis) < 2:
                continue
            room = self.model.room.get(node, {})
            for r in sorted({r for gi in gis for r in groups[gi].request}):
                load = [groups[gi].request[r] * self.x[gi][node] for gi in gis if r in groups[gi].request]
                if len(load) > 1:
                    # an overcommitted node (room below 0) takes no new pod, and holds none now
                    self.require(sum(load) <= max(room.get(r, 0), 0), res)
            for a, b in ((a, b) for i, a in enumerate(gis) for b in gis[i + 1 :]):
                if _ports_clash(groups[a].ports, groups[b].ports):
                    self.require(self.x[a][node] + self.x[b][node] <= 1, res)

    def _present(self, nodes: Sequence[str], name: str) -> Any:
        """A boolean: one of the offered nodes is added."""
        if len(nodes) == 1:
            return self.added[nodes[0]]
        b = self.m.new_bool_var(name)
        self.m.add_max_equality(b, [self.added[n] for n in nodes])
        return b

    def _spread(self, gi: int, s: Spread, lit: list[Any]) -> None:
        key = s.topology_key
        mine = self.nodes_of(gi, key)
        totals: dict[str, Any] = {}
        for d in set(s.existing) | set(mine):
            totals[d] = s.existing.get(d, 0) + self.domain_sum(s.members, key, d, s.counted)
        offered = {d: nodes for d, nodes in s.offered.items() if d in s.existing}
        if offered:
            low = self._offered_minimum(gi, s, totals, offered, lit)
        elif len(s.existing) < s.min_domains or not s.existing:
            low = 0
        else:
            big = sum(s.existing.values()) + self.model.count
            low = self.m.new_int_var(0, big, f"min[{gi},{key}]")
            for d in s.existing:
                self.require(low <= totals[d], lit)
        if self.model.balance:
            # the skew over every eligible domain, as ``views`` shows it
            for d in s.existing:
                self.require(totals[d] - low <= s.max_skew, lit)
        # a pod on a counted node is in its domain's total; one on another node is not
        g = self.model.groups[gi]
        for d, nodes in mine.items():
            counted = [n for n in nodes if n in s.counted]
            if counted and not self.model.balance:
                here = self.any_in(gi, counted, f"in[{gi},{key}={d}]")
                self.require(totals[d] - low <= s.max_skew, [here, *lit])
            for n in nodes:
                if n not in s.counted:
                    # only a new pod is judged there (a kept one is not scheduled again)
                    self.require(totals[d] + s.self_match - low <= s.max_skew, [self.arrives(gi, n, g), *lit])

    def _offered_minimum(
        self,
        gi: int,
        s: Spread,
        totals: Mapping[str, Any],
        offered: Mapping[str, tuple[str, ...]],
        lit: list[Any],
    ) -> Any:
        """The global minimum when some domains exist only if a node is added there: a
        domain counts (for the minimum and towards minDomains) only then; below minDomains
        domains the minimum is 0. ``low`` may be chosen below the true minimum: a smaller
        one only makes the skew harder to keep, so the solver takes the true one when it
        needs it."""
        key = s.topology_key
        big = sum(s.existing.values()) + self.model.count
        low = self.m.new_int_var(0, big, f"min[{gi},{key}]")
        present = {d: self._present(nodes, f"dom[{gi},{key}={d}]") for d, nodes in offered.items()}
        for d in s.existing:
            self.require(low <= totals[d], [*lit, *([present[d]] if d in present else [])])
        real = len(s.existing) - len(present)
        short = max(s.min_domains, 1) - real
        if short > 0:
            enough = self.m.new_bool_var(f"enough[{gi},{key}]")
            self.m.add(sum(present.values()) >= short).only_enforce_if(enough)
            self.require(low == 0, [~enough, *lit])
        return low

    def _anti(self, gi: int, t: AntiTerm, lit: list[Any]) -> None:
        key = t.topology_key
        others = [h for h in t.members if h != gi]
        for d, mine in self.nodes_of(gi, key).items():
            if gi in t.members:
                self.require(sum(self.x[gi][n] for n in mine) <= 1, lit)
            theirs = self.domain_sum(others, key, d) if others else 0
            if isinstance(theirs, int):
                continue
            here = self.any_in(gi, mine, f"anti[{gi},{key}={d}]")
            self.require(theirs == 0, [here, *lit])

    def _affinity(self, gi: int, a: AffinityRule, lit: list[Any]) -> None:
        need = 2 if a.self_match else 1  # judged with itself removed
        lonely: list[Any] = []
        if a.self_match and not a.any_existing:
            # kube's first pod: no pod matching all terms anywhere, and it matches them
            first = self.m.new_bool_var(f"first[{gi}]")
            on_keyed = [
                self.x[h][n.name]
                for h in a.members
                for n in self.model.groups[h].nodes
                if any(k in n.labels for k in a.keys)
            ]
            self.require(sum(on_keyed) == 1, [first])
            lonely = [~first]
        for key in dict.fromkeys(a.keys):
            for d, mine in self.nodes_of(gi, key).items():
                here = self.any_in(gi, mine, f"aff[{gi},{key}={d}]")
                total = a.existing.get(key, {}).get(d, 0) + self.domain_sum(a.members, key, d)
                self.require(total >= need, [here, *lit, *lonely])


def _ports_clash(a: frozenset[tuple[str, str, int]], b: frozenset[tuple[str, str, int]]) -> bool:
    """Two host-port sets that cannot share a node (NodePorts' rule: same protocol and port,
    and the same IP or either on 0.0.0.0)."""
    for ip, proto, port in a:
        for ip2, proto2, port2 in b:
            if port == port2 and proto == proto2 and (ip == ip2 or "0.0.0.0" in (ip, ip2)):
                return True
    return False


def solve(
    model: PlacementModel,
    *,
    time_limit: float = 10.0,
    workers: int = 1,
    hint: Sequence[Mapping[str, int]] | None = None,
    max_moves: int | None = None,
) -> Placement:
    """The most new pods the model admits (CP-SAT, maximizing the number placed); with pods
    to keep (``Group.keep``), every pod placed and the most of them kept where they run
    (fewest evictions, at most ``max_moves``). ``hint``: a known arrangement per group
    (greedy's, or where the pods run now), from which the search starts."""
    started = time.perf_counter()
    if not any(g.nodes for g in model.groups) or model.count == 0:
        return Placement([{} for _ in model.groups], True, time.perf_counter() - started, "OPTIMAL")
    moving = any(g.keep for g in model.groups)
    b = Encoding(model, exact=moving, assume=False)
    m = b.m
    if moving:
        kept = b.kept()
        if max_moves is not None:
            b.require(sum(g.kept_now for g in model.groups) - kept <= max_moves)
        m.maximize(kept)
    else:
        m.maximize(sum(v for xs in b.x for v in xs.values()))
    if hint is not None:
        for xs, known in zip(b.x, hint, strict=True):
            for node, v in xs.items():
                m.add_hint(v, int(known.get(node, 0)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    status = solver.solve(m)
    seconds = time.perf_counter() - started
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise SolveError(f"the solver found no arrangement ({name}) within {time_limit:g} s")
    by_group = [{n: int(solver.value(v)) for n, v in xs.items()} for xs in b.x]
    by_group = [{n: k for n, k in c.items() if k} for c in by_group]
    saturated = tuple(
        n.name
        for g, c in zip(model.groups, by_group, strict=True)
        for n in g.nodes
        if c.get(n.name, 0) == n.capacity
    )
    return Placement(by_group, status == cp_model.OPTIMAL, seconds, name, saturated)
