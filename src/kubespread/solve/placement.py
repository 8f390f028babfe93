"""New pods on a cluster as a CP-SAT model: how many fit, and where.

The pods come in **groups** of interchangeable copies (one pod template: the replicas of a
ReplicaSet, a rollout's two ReplicaSets as two groups, each StatefulSet pod a group of its
own), so the model has one integer per (group, feasible node), how many of the group's pods
the node gets, rather than a boolean per (pod, node): no symmetric solutions to explore.

What decides where a group *may* go comes from the scheduler itself: the template, stripped
of its DoNotSchedule spread and its required pod affinity, is run through ``schedule_one`` on
the cluster as it is (node-local filters, room for one pod, anti-affinity against existing
pods in both directions). What depends on how many new pods go where is modelled:

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

Every arrangement is re-checked (:func:`verify`): in the final state, one pod of each group
on each node it uses is taken off and scheduled again; it must pass the Filter there.

Rebalancing uses the same model with the pods running now as ``Group.keep`` (they may stay
where they run whatever the filters say today, or be evicted and placed again) and
``balance`` (every spread constraint within maxSkew over every eligible domain, the skew the
tables show); the objective is then the most pods kept, i.e. the fewest evictions
(:func:`solve_by_parts` splits the groups no rule links).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
from ortools.sat.python import cp_model

from kubespread.api.core import DO_NOT_SCHEDULE, Pod
from kubespread.api.keys import LABEL_HOSTNAME
from kubespread.api.resources import pod_requests
from kubespread.cluster.nodeinfo import NodeInfo, pod_host_ports
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Status
from kubespread.scheduler.predicates import (
    AffinityTerm,
    namespace_labels,
    required_affinity_domains,
    required_pod_terms,
)
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.views import profile_views

__all__ = [
    "AFFINITY",
    "ANTI_AFFINITY",
    "FAMILIES",
    "RESOURCES",
    "SPREAD",
    "Group",
    "Placement",
    "PlacementModel",
    "SolveError",
    "VerificationError",
    "build_groups",
    "build_model",
    "clones",
    "components",
    "conflict",
    "evictions",
    "iter_clones",
    "relaxed",
    "solve",
    "solve_by_parts",
    "verify",
    "verify_groups",
]

#: the constraint families a model can leave out (to see which of them binds)
RESOURCES: Final = "resources"
SPREAD: Final = "spread"
ANTI_AFFINITY: Final = "antiAffinity"
AFFINITY: Final = "affinity"
FAMILIES: Final = (RESOURCES, SPREAD, ANTI_AFFINITY, AFFINITY)

_PODS: Final = "pods"


class SolveError(Exception):
    """The input asks for something the model does not express (one line)."""


class VerificationError(SolveError):
    """The solver's arrangement fails the scheduler's own Filter: the model is wrong."""


@dataclass(frozen=True, slots=True)
class Spread:
    """One DoNotSchedule constraint of a group in final-state form: existing matching pods per
    eligible domain, the nodes whose pods count, and the groups whose pods it matches."""

    topology_key: str
    max_skew: int
    min_domains: int
    existing: dict[str, int]
    self_match: int
    counted: frozenset[str] = frozenset()
    members: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        more = f" minDomains {self.min_domains}" if self.min_domains > 1 else ""
        return f"topology spread {self.topology_key} maxSkew {self.max_skew}{more}"


@dataclass(frozen=True, slots=True)
class AntiTerm:
    """A required anti-affinity term of a group and the groups whose pods it selects."""

    topology_key: str
    members: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"pod anti-affinity {self.topology_key}"


@dataclass(frozen=True, slots=True)
class AffinityRule:
    """A group's required pod affinity terms together: per term key, existing pods matching
    all terms per domain; the groups whose pods match all terms; whether any such pod exists
    (else the first-pod rule may apply) and whether the group matches its own terms."""

    keys: tuple[str, ...]
    existing: dict[str, dict[str, int]]
    members: tuple[int, ...]
    any_existing: bool
    self_match: bool

    @property
    def name(self) -> str:
        return f"pod affinity {','.join(dict.fromkeys(self.keys))}"


@dataclass(frozen=True, slots=True)
class NodeSlot:
    """A node a group may use: how many of its pods the free resources admit alone, and
    what limits that."""

    name: str
    labels: dict[str, str]
    capacity: int
    limited_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Group:
    """Interchangeable new pods: a template, how many, where they may go, their rules."""

    name: str
    template: Pod
    count: int
    nodes: list[NodeSlot]
    spreads: list[Spread] = field(default_factory=list)
    anti: list[AntiTerm] = field(default_factory=list)
    affinity: AffinityRule | None = None
    request: dict[str, int] = field(default_factory=dict)
    ports: frozenset[tuple[str, str, int]] = frozenset()
    #: pods of the group running now, per node, that may stay (not in the cluster the model
    #: was built on): a node keeps them whatever the filters say now (IgnoredDuringExecution)
    keep: dict[str, int] = field(default_factory=dict)

    @property
    def kept_now(self) -> int:
        return sum(self.keep.values())

    @property
    def anti_keys(self) -> list[str]:
        return sorted({t.topology_key for t in self.anti})


@dataclass(slots=True)
class PlacementModel:
    """What the CP-SAT model is built from (plain data, so tests can brute-force it).
    ``room``: free resources per node (only read when groups share a node)."""

    groups: list[Group]
    room: dict[str, dict[str, int]] = field(default_factory=dict)
    relaxed: frozenset[str] = frozenset()
    #: every spread constraint within maxSkew over every eligible domain (the skew a table
    #: shows), not only at the pods' own domains (the Filter's condition): rebalancing
    balance: bool = False

    @property
    def count(self) -> int:
        return sum(g.count for g in self.groups)

    def constraint_names(self) -> list[str]:
        """The constraints :func:`conflict` can name, in its numbering (resources first)."""
        return [name for name, _ in _guards(self)]


@dataclass(frozen=True, slots=True)
class Placement:
    """The solver's answer: new pods per node for each group (nodes with none left out),
    whether the count is proven maximal (CP-SAT OPTIMAL), and the solve time."""

    by_group: list[dict[str, int]]
    proven: bool
    seconds: float
    status: str
    saturated: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """New pods per node, all groups together."""
        out: dict[str, int] = {}
        for counts in self.by_group:
            for node, k in counts.items():
                out[node] = out.get(node, 0) + k
        return out

    @property
    def placed(self) -> int:
        return sum(sum(c.values()) for c in self.by_group)


# ------------------------------------------------------------------ pods


def clones(template: Pod, count: int, taken: Iterable[str] = ()) -> list[Pod]:
    """``count`` copies of the template, named ``<name>-<i>`` (avoiding keys in ``taken``),
    unbound: the replicas a controller would create."""
    return list(iter_clones(template, count, taken))


def iter_clones(template: Pod, count: int, taken: Iterable[str] = ()) -> Iterator[Pod]:
    """:func:`clones` one at a time (greedy stops at the first pending one: a large --max
    does not build pods it never tries)."""
    data = template.to_dict()
    meta = data.setdefault("metadata", {})
    base = meta.get("name") or meta.get("generateName", "pod").rstrip("-") or "pod"
    meta.pop("generateName", None)
    meta.pop("uid", None)
    data.get("spec", {}).pop("nodeName", None)
    data.pop("status", None)
    ns = template.namespace
    used = set(taken)
    made = 0
    i = 0
    while made < count:
        i += 1
        name = f"{base}-{i}"
        if f"{ns}/{name}" in used:
            continue
        meta["name"] = name
        made += 1
        yield Pod.from_dict(data)


#: what stands in for a template's spread constraints when judging the cluster as it is: a
#: ScheduleAnyway one never filters, and keeps the profile's default constraints away too
_NO_FILTERING_SPREAD: Final = {
    "maxSkew": 1,
    "topologyKey": LABEL_HOSTNAME,
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {},
}

_REQUIRED_FORMS: Final = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "requiredDuringSchedulingRequiredDuringExecution",
)


def _stripped(template: Pod) -> Pod:
    """The template as a clone but with no DoNotSchedule spread (its own or the profile's
    defaults) and no required pod affinity: its feasible nodes are those every other filter
    admits on the cluster as it is; spread and affinity are modelled in the final state."""
    data = template.to_dict()
    spec = data.setdefault("spec", {})
    spec["topologySpreadConstraints"] = [dict(_NO_FILTERING_SPREAD)]
    spec.pop("nodeName", None)
    pod_affinity = (spec.get("affinity") or {}).get("podAffinity")
    if pod_affinity:
        for form in _REQUIRED_FORMS:
            pod_affinity.pop(form, None)
    return Pod.from_dict(data)


#: the filters that judge room on a node (resources, pod count, host ports)
_ROOM_PLUGINS: Final = ("NodeResourcesFit", "NodePorts")


def _weightless(template: Pod) -> Pod:
    """:func:`_stripped` asking for no resources and no host ports: the nodes it admits are
    those the template fails only for want of room."""
    data = _stripped(template).to_dict()
    spec = data.setdefault("spec", {})
    for field_name in ("containers", "initContainers"):
        for c in spec.get(field_name) or []:
            c.pop("resources", None)
            for port in c.get("ports") or []:
                port.pop("hostPort", None)
                port.pop("hostIP", None)
    spec.pop("overhead", None)
    spec.pop("resources", None)
    return Pod.from_dict(data)


def _request(template: Pod) -> dict[str, int]:
    """The template's requests by resource name (only those above 0), one pod slot."""
    r = pod_requests(template)
    out = {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral-storage": r.ephemeral_storage, **r.scalar}
    return {_PODS: 1, **{k: v for k, v in out.items() if v > 0}}


def _free(info: NodeInfo) -> dict[str, int]:
    alloc, used = info.allocatable, info.requested
    out = {
        _PODS: alloc.allowed_pod_number - info.pod_count,
        "cpu": alloc.milli_cpu - used.milli_cpu,
        "memory": alloc.memory - used.memory,
        "ephemeral-storage": alloc.ephemeral_storage - used.ephemeral_storage,
    }
    for name in set(alloc.scalar) | set(used.scalar):
        out[name] = alloc.scalar.get(name, 0) - used.scalar.get(name, 0)
    return out


def _capacity(
    free: Mapping[str, int], request: Mapping[str, int], ports: bool, count: int
) -> tuple[int, tuple[str, ...]]:
    """How many copies fit the node's free resources alone, and the resources that stop it
    there (NodeResourcesFit's comparison, repeated ``k`` times)."""
    limits = {name: free.get(name, 0) // want for name, want in request.items()}
    if ports:
        limits["hostPort"] = 1
    cap = max(0, min(min(limits.values()), count))
    binding = tuple(sorted(n for n, v in limits.items() if v == cap))
    return cap, binding


# ------------------------------------------------------------------ building


def build_model(cluster: ClusterState, template: Pod, profile: Profile, count: int) -> PlacementModel:
    """The model for ``count`` copies of one template on ``cluster``."""
    return build_groups(cluster, [(template.key, template, count)], profile)


def build_groups(
    cluster: ClusterState,
    wanted: Sequence[tuple[str, Pod, int]],
    profile: Profile,
    *,
    keep: Sequence[Mapping[str, int]] | None = None,
    actions: tuple[str, ...] = (DO_NOT_SCHEDULE,),
    balance: bool = False,
) -> PlacementModel:
    """The model for groups ``(name, template, count)`` on ``cluster`` (which holds none of
    them): every group's rules against the cluster and against each other. ``keep``: per
    group, its pods running now per node (taken out of ``cluster``), which may stay;
    ``actions``: the whenUnsatisfiable values modelled as hard (ScheduleAnyway too when
    rebalancing with every constraint); ``balance``: see :class:`PlacementModel`."""
    templates = [t for _, t, _ in wanted]
    ns_labels = {t.namespace: namespace_labels(cluster, t.namespace) for t in templates}
    node_names = [str(n) for n in cluster.node_names.tolist()]
    free = {n: _free(cluster.node_info(n)) for n in node_names}
    groups: list[Group] = []
    for gi, (name, template, count) in enumerate(wanted):
        kept = dict(keep[gi]) if keep is not None else {}
        affinity_terms, anti_terms = required_pod_terms(template)
        decision = schedule_one(_stripped(template), cluster, profile)
        feasible = set(decision.feasible)
        if any(r.status.plugin in _ROOM_PLUGINS for r in decision.rejections.values()):
            # nodes only full: in the model with no room, so that relaxing resources (what
            # binds, a conflict) may use them
            full = set(schedule_one(_weightless(template), cluster, profile).feasible) - feasible
        else:
            full = set()
        spreads = _spreads(cluster, template, profile, templates, node_names, actions)
        anti = []
        for t in anti_terms:
            members = tuple(
                j
                for j, h in enumerate(templates)
                if t.matches(h.namespace, h.metadata.labels, ns_labels[h.namespace])
            )
            if members:
                anti.append(AntiTerm(t.topology_key, members))
        affinity = (
            _affinity(cluster, template, affinity_terms, templates, ns_labels) if affinity_terms else None
        )
        needed_keys = [s.topology_key for s in spreads] + (list(affinity.keys) if affinity else [])
        request = _request(template)
        ports = frozenset(pod_host_ports(template))
        nodes: list[NodeSlot] = []
        for node in node_names:
            labels = dict(cluster.nodes[node].metadata.labels)
            # the Filter rejects a node missing a DoNotSchedule key or an affinity term's key
            admitted = node in feasible or node in full
            if admitted and all(k in labels for k in needed_keys):
                cap, binding = _capacity(free[node], request, bool(ports), count)
                if node in full:
                    cap = 0
            else:
                admitted, cap, binding = False, 0, ("filtered",)
            if kept.get(node, 0) > cap:
                cap = kept[node]
            if cap > 0 or admitted:
                nodes.append(NodeSlot(node, labels, cap, binding))
        groups.append(Group(name, template, count, nodes, spreads, anti, affinity, request, ports, kept))
    used = {n.name for g in groups for n in g.nodes}
    room = {n: free[n] for n in node_names if n in used} if len(groups) > 1 else {}
    return PlacementModel(groups, room, balance=balance)


def _spreads(
    cluster: ClusterState,
    template: Pod,
    profile: Profile,
    templates: Sequence[Pod],
    node_names: list[str],
    actions: tuple[str, ...] = (DO_NOT_SCHEDULE,),
) -> list[Spread]:
    out = []
    for v in profile_views(cluster, template, profile):
        if v.when_unsatisfiable not in actions:
            continue
        if v.defaulted and v.when_unsatisfiable != DO_NOT_SCHEDULE:
            continue  # a profile's soft default (System: zone 5, hostname 3) stays soft
        c = v.constraint
        members = tuple(
            j
            for j, h in enumerate(templates)
            if h.namespace == template.namespace and c.selector.matches(h.metadata.labels)
        )
        mask = v.eligible if v.eligible is not None else np.ones(len(node_names), dtype=bool)
        counted = frozenset(n for n, ok in zip(node_names, mask.tolist(), strict=True) if ok)
        out.append(
            Spread(c.topology_key, c.max_skew, c.min_domains, dict(v.domains), v.self_match, counted, members)
        )
    return out


def _affinity(
    cluster: ClusterState,
    template: Pod,
    terms: Sequence[AffinityTerm],
    templates: Sequence[Pod],
    ns_labels: Mapping[str, Mapping[str, str]],
) -> AffinityRule:
    """The group's required affinity: existing pods matching all terms per domain (the
    Filter's own count), and the groups whose pods match all terms."""
    existing = required_affinity_domains(cluster, terms)
    members = tuple(
        j
        for j, h in enumerate(templates)
        if all(t.matches(h.namespace, h.metadata.labels, ns_labels[h.namespace]) for t in terms)
    )
    me = templates.index(template)
    any_existing = any(existing.values())
    return AffinityRule(tuple(t.topology_key for t in terms), existing, members, any_existing, me in members)


def relaxed(model: PlacementModel, family: str) -> PlacementModel:
    """The model without one constraint family (resources: every node takes them all)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown constraint family {family!r}")
    groups = []
    for g in model.groups:
        if family == RESOURCES:
            g = replace(
                g, nodes=[NodeSlot(n.name, n.labels, g.count, ()) for n in g.nodes], ports=frozenset()
            )
        elif family == SPREAD:
            g = replace(g, spreads=[])
        elif family == ANTI_AFFINITY:
            g = replace(g, anti=[])
        else:
            g = replace(g, affinity=None)
        groups.append(g)
    return PlacementModel(groups, model.room, model.relaxed | {family}, model.balance)


# ------------------------------------------------------------------ CP-SAT


def _guards(model: PlacementModel) -> list[tuple[str, tuple[str, int, int]]]:
    """Every constraint one assumption can switch: (name, (kind, group, index))."""
    many = len(model.groups) > 1
    out: list[tuple[str, tuple[str, int, int]]] = []
    if RESOURCES not in model.relaxed:
        out.append((RESOURCES, (RESOURCES, -1, 0)))
    for gi, g in enumerate(model.groups):
        prefix = f"{g.name}: " if many else ""
        out += [(prefix + s.name, (SPREAD, gi, i)) for i, s in enumerate(g.spreads)]
        out += [(prefix + t.name, (ANTI_AFFINITY, gi, i)) for i, t in enumerate(g.anti)]
        if g.affinity is not None:
            out.append((prefix + g.affinity.name, (AFFINITY, gi, 0)))
    return out


class _Builder:
    """One CP-SAT model of a PlacementModel; with ``assume`` each constraint is guarded by a
    literal (for :func:`conflict`), else all hold."""

    def __init__(self, model: PlacementModel, *, exact: bool, assume: bool) -> None:
        self.model = model
        self.m = cp_model.CpModel()
        self.lits: dict[tuple[str, int, int], Any] = {}
        if assume:
            for name, key in _guards(model):
                self.lits[key] = self.m.new_bool_var(name)
        self.assume = assume
        self.x: list[dict[str, Any]] = []
        self._used: dict[tuple[int, str], Any] = {}
        self._by_value: dict[tuple[int, str], dict[str, list[str]]] = {}
        res = self._guard((RESOURCES, -1, 0))
        for gi, g in enumerate(model.groups):
            xs: dict[str, Any] = {}
            for n in g.nodes:
                ub = g.count if assume else n.capacity
                xs[n.name] = self.m.new_int_var(0, ub, f"x[{gi},{n.name}]")
                if assume and RESOURCES not in model.relaxed:
                    self.require(xs[n.name] <= n.capacity, res)
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
                    self.require(sum(load) <= room.get(r, 0), res)
            for a, b in ((a, b) for i, a in enumerate(gis) for b in gis[i + 1 :]):
                if _ports_clash(groups[a].ports, groups[b].ports):
                    self.require(self.x[a][node] + self.x[b][node] <= 1, res)

    def _spread(self, gi: int, s: Spread, lit: list[Any]) -> None:
        key = s.topology_key
        mine = self.nodes_of(gi, key)
        totals: dict[str, Any] = {}
        for d in set(s.existing) | set(mine):
            totals[d] = s.existing.get(d, 0) + self.domain_sum(s.members, key, d, s.counted)
        if len(s.existing) < s.min_domains or not s.existing:
            low: Any = 0
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
    b = _Builder(model, exact=moving, assume=False)
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
                cap, _ = _capacity(free, g.request, bool(g.ports), g.count)
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


# ------------------------------------------------------------------ checking


@contextmanager
def _bound(
    cluster: ClusterState, plan: Sequence[tuple[Sequence[Pod], Mapping[str, int]]]
) -> Iterator[list[list[Pod]]]:
    out: list[list[Pod]] = []
    every: list[Pod] = []
    with cluster.hypothetical():
        try:
            for pods, counts in plan:
                it = iter(pods)
                mine: list[Pod] = []
                for node, k in counts.items():
                    for _ in range(k):
                        pod = next(it)
                        cluster.add(pod)
                        every.append(pod)
                        cluster.bind(pod.key, node)
                        mine.append(pod)
                out.append(mine)
            yield out
        finally:
            for pod in every:
                cluster.delete_pod(pod.key)


def verify(cluster: ClusterState, template: Pod, profile: Profile, counts: dict[str, int]) -> None:
    """:func:`verify_groups` for copies of one template."""
    verify_groups(cluster, [template], profile, [counts])


def verify_groups(
    cluster: ClusterState, templates: Sequence[Pod], profile: Profile, by_group: Sequence[Mapping[str, int]]
) -> None:
    """Re-check an arrangement with the scheduler: in the final state, one pod of each group
    on each node it uses (copies are interchangeable) is taken off and scheduled again
    (``schedule_one``: PreFilter and Filter against all the others); its node must be among
    the feasible ones. Raises :class:`VerificationError` otherwise."""
    taken = set(cluster.pods)
    plan: list[tuple[list[Pod], Mapping[str, int]]] = []
    for template, counts in zip(templates, by_group, strict=True):
        pods = clones(template, sum(counts.values()), taken)
        taken |= {p.key for p in pods}
        plan.append((pods, counts))
    with _bound(cluster, plan) as bound:
        for mine, (_, counts) in zip(bound, plan, strict=True):
            by_node: dict[str, Pod] = {}
            for pod in mine:
                by_node.setdefault(cluster.node_of(pod.key), pod)
            for node, pod in by_node.items():
                cluster.delete_pod(pod.key)
                try:
                    decision = schedule_one(pod, cluster, profile)
                finally:
                    cluster.add(pod)
                    cluster.bind(pod.key, node)
                if node not in decision.feasible:
                    rejection = decision.rejections.get(node)
                    why = "not reached" if rejection is None else _why(rejection.stage, rejection.status)
                    raise VerificationError(
                        f"solver placed {counts[node]} pod(s) of {pod.metadata.labels or pod.key} on {node} "
                        f"but the scheduler rejects one there ({why})"
                    )


def _why(stage: str, status: Status) -> str:
    reasons = "; ".join(status.reasons) or status.code.name
    return f"{stage} {status.plugin}: {reasons}"


# ------------------------------------------------------------------ conflicts


def conflict(model: PlacementModel, *, time_limit: float = 10.0) -> list[str] | None:
    """A minimal set of constraints that together forbid placing every new pod, None when an
    arrangement places them all (or the solver cannot tell in time). One CP-SAT assumption
    guards each constraint (resources; each group's spread constraints, anti-affinity terms
    and affinity); the solver's ``SufficientAssumptionsForInfeasibility`` is then shrunk by
    dropping one at a time while what is left stays infeasible. [] when some group has no
    feasible node at all."""
    guards = _guards(model)
    names = [name for name, _ in guards]
    if model.count == 0:
        return None
    if any(g.count and not g.nodes for g in model.groups):
        return []

    def infeasible(active: list[int]) -> tuple[bool, list[int]]:
        status, core = _with_assumptions(model, active, time_limit)
        return status == cp_model.INFEASIBLE, core

    bad, core = infeasible(list(range(len(names))))
    if not bad:
        return None
    kept = sorted(core)
    for i in list(kept):
        trial = [j for j in kept if j != i]
        if infeasible(trial)[0]:
            kept = trial
    return [names[i] for i in kept]


def _with_assumptions(model: PlacementModel, active: list[int], time_limit: float) -> tuple[int, list[int]]:
    """Solve "every new pod placed" with the constraints numbered as in :func:`conflict`,
    those in ``active`` assumed; (status, indices of a sufficient infeasible subset)."""
    b = _Builder(model, exact=True, assume=True)
    keys = [key for _, key in _guards(model)]
    lits = [b.lits[k] for k in keys]
    b.m.add_assumptions([lits[i] for i in active])
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1
    status = solver.solve(b.m)
    core: list[int] = []
    if status == cp_model.INFEASIBLE:
        index = {lit.index: i for i, lit in enumerate(lits)}
        core = [index[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in index]
    return int(status), core
