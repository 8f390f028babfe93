"""N identical new pods on a cluster as a CP-SAT model: how many fit, and where.

Replicas of one template are interchangeable, so the model has one integer per feasible node
(how many new pods it gets) rather than a boolean per (pod, node): no symmetric solutions to
explore. What decides a node's feasibility comes from the scheduler itself: the template,
stripped of its spread constraints, is run through ``schedule_one`` on the cluster as it is
(node-local filters, room for one pod, inter-pod (anti-)affinity against existing pods in
both directions). What depends on how many new pods go where is modelled:

- resources: ``count * request <= allocatable - requested`` per resource, and the pod limit;
- required anti-affinity among the new pods (a term that selects the template itself): at
  most one new pod per domain of the term's key;
- DoNotSchedule topology spread in its final state, counted by the plugin's own PreFilter
  (``views.constraint_views``): for every domain that receives a new pod,
  ``matching(d) - global minimum <= maxSkew`` (the minimum is 0 below minDomains domains).
  That is the Filter's ``matching + self-match - minimum`` for each new pod judged with
  itself removed.

Every arrangement is re-checked (:func:`verify`): each placed pod, taken off its node in the
final state, must pass the profile's Filter there again; a mismatch raises.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from ortools.sat.python import cp_model

from kubespread.api.core import Pod
from kubespread.api.keys import LABEL_HOSTNAME
from kubespread.api.resources import pod_requests
from kubespread.cluster.nodeinfo import NodeInfo, pod_host_ports
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Status
from kubespread.scheduler.predicates import namespace_labels, required_pod_terms
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.views import profile_views

__all__ = [
    "ANTI_AFFINITY",
    "FAMILIES",
    "RESOURCES",
    "SPREAD",
    "Placement",
    "PlacementModel",
    "SolveError",
    "VerificationError",
    "build_model",
    "clones",
    "conflict",
    "iter_clones",
    "placed",
    "relaxed",
    "solve",
    "verify",
]

#: the constraint families a model can leave out (to see which of them binds)
RESOURCES: Final = "resources"
SPREAD: Final = "spread"
ANTI_AFFINITY: Final = "antiAffinity"
FAMILIES: Final = (RESOURCES, SPREAD, ANTI_AFFINITY)

_DO_NOT_SCHEDULE: Final = "DoNotSchedule"


class SolveError(Exception):
    """The input asks for something the model does not express (one line)."""


class VerificationError(SolveError):
    """The solver's arrangement fails the scheduler's own Filter: the model is wrong."""


@dataclass(frozen=True, slots=True)
class Spread:
    """One DoNotSchedule constraint in final-state form: existing matching pods per eligible
    domain, the domains of the feasible nodes, and whether new pods count (self-match)."""

    topology_key: str
    max_skew: int
    min_domains: int
    existing: dict[str, int]
    self_match: int


@dataclass(frozen=True, slots=True)
class NodeSlot:
    """A feasible node: how many new pods its resources admit and what limits that."""

    name: str
    labels: dict[str, str]
    capacity: int
    limited_by: tuple[str, ...]


@dataclass(slots=True)
class PlacementModel:
    """What the CP-SAT model is built from (plain data, so tests can brute-force it)."""

    count: int
    nodes: list[NodeSlot]
    spreads: list[Spread]
    anti_keys: list[str]
    relaxed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Placement:
    """The solver's answer: new pods per node (nodes with none left out), whether the count
    is proven maximal (CP-SAT OPTIMAL), and the solve time."""

    counts: dict[str, int]
    proven: bool
    seconds: float
    status: str
    saturated: tuple[str, ...] = field(default=())

    @property
    def placed(self) -> int:
        return sum(self.counts.values())


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


def _stripped(template: Pod) -> Pod:
    """The template as a clone but with no DoNotSchedule spread (its own or the profile's
    defaults): its feasible nodes are those every other filter admits on the cluster as it
    is; the spread is modelled in its final state instead."""
    data = template.to_dict()
    spec = data.setdefault("spec", {})
    spec["topologySpreadConstraints"] = [dict(_NO_FILTERING_SPREAD)]
    spec.pop("nodeName", None)
    return Pod.from_dict(data)


def _capacity(info: NodeInfo, template: Pod, count: int) -> tuple[int, tuple[str, ...]]:
    """How many copies of the template fit the node's free resources, and the resources that
    stop it there (NodeResourcesFit's comparison, repeated ``k`` times)."""
    request = pod_requests(template)
    alloc, used = info.allocatable, info.requested
    limits: dict[str, int] = {"pods": alloc.allowed_pod_number - info.pod_count}
    for name, want, have, taken in (
        ("cpu", request.milli_cpu, alloc.milli_cpu, used.milli_cpu),
        ("memory", request.memory, alloc.memory, used.memory),
        ("ephemeral-storage", request.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage),
    ):
        if want > 0:
            limits[name] = (have - taken) // want
    for name, want in request.scalar.items():
        if want > 0:
            limits[name] = (alloc.scalar.get(name, 0) - used.scalar.get(name, 0)) // want
    if pod_host_ports(template):
        limits["hostPort"] = 1
    cap = max(0, min(min(limits.values()), count))
    binding = tuple(sorted(n for n, v in limits.items() if v == cap))
    return cap, binding


def build_model(cluster: ClusterState, template: Pod, profile: Profile, count: int) -> PlacementModel:
    """The model's data for ``count`` copies of ``template`` on ``cluster``."""
    affinity, anti = required_pod_terms(template)
    if affinity:
        raise SolveError("required pod affinity is not modelled yet (only anti-affinity)")
    decision = schedule_one(_stripped(template), cluster, profile)
    feasible = set(decision.feasible)
    views = [v for v in profile_views(cluster, template, profile) if v.when_unsatisfiable == _DO_NOT_SCHEDULE]
    spreads = [
        Spread(
            topology_key=v.constraint.topology_key,
            max_skew=v.constraint.max_skew,
            min_domains=v.constraint.min_domains,
            existing=dict(v.domains),
            self_match=v.self_match,
        )
        for v in views
    ]
    ns_labels = namespace_labels(cluster, template.namespace)
    anti_keys = sorted(
        {t.topology_key for t in anti if t.matches(template.namespace, template.metadata.labels, ns_labels)}
    )
    nodes: list[NodeSlot] = []
    for name in cluster.node_names.tolist():
        if name not in feasible:
            continue
        node = cluster.nodes[name]
        labels = dict(node.metadata.labels)
        # the Filter rejects a node missing a DoNotSchedule key, or outside every counted domain
        if any(labels.get(s.topology_key) not in s.existing for s in spreads):
            continue
        cap, binding = _capacity(cluster.node_info(name), template, count)
        if cap > 0:
            nodes.append(NodeSlot(name, labels, cap, binding))
    return PlacementModel(count=count, nodes=nodes, spreads=spreads, anti_keys=anti_keys)


def relaxed(model: PlacementModel, family: str) -> PlacementModel:
    """The model without one constraint family (resources: every node takes them all)."""
    if family == RESOURCES:
        nodes = [NodeSlot(n.name, n.labels, model.count, ()) for n in model.nodes]
        return PlacementModel(model.count, nodes, model.spreads, model.anti_keys, model.relaxed | {family})
    if family == SPREAD:
        return PlacementModel(model.count, model.nodes, [], model.anti_keys, model.relaxed | {family})
    if family == ANTI_AFFINITY:
        return PlacementModel(model.count, model.nodes, model.spreads, [], model.relaxed | {family})
    raise ValueError(f"unknown constraint family {family!r}")


def _domains(nodes: Sequence[NodeSlot], key: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        value = n.labels.get(key)
        if value is not None:
            out.setdefault(value, []).append(i)
    return out


def solve(model: PlacementModel, *, time_limit: float = 10.0, workers: int = 1) -> Placement:
    """The most copies the model admits (CP-SAT, maximizing the number placed)."""
    started = time.perf_counter()
    nodes = model.nodes
    if not nodes or model.count == 0:
        return Placement({}, True, time.perf_counter() - started, "OPTIMAL")
    m = cp_model.CpModel()
    x = [m.new_int_var(0, n.capacity, f"x[{n.name}]") for n in nodes]
    m.add(sum(x) <= model.count)
    for key in model.anti_keys:
        for members in _domains(nodes, key).values():
            m.add(sum(x[i] for i in members) <= 1)
    for s in model.spreads:
        by_domain = _domains(nodes, s.topology_key)
        big = sum(s.existing.values()) + model.count
        totals: dict[str, Any] = {}  # CP-SAT linear expressions
        for d, have in s.existing.items():
            members = by_domain.get(d, [])
            totals[d] = have + s.self_match * sum(x[i] for i in members) if members else have
        low = m.new_int_var(0, big, f"min[{s.topology_key}]")
        if len(s.existing) < s.min_domains:
            m.add(low == 0)
        else:
            for t in totals.values():
                m.add(low <= t)
        for d, members in by_domain.items():
            used = m.new_bool_var(f"used[{s.topology_key}={d}]")
            m.add(sum(x[i] for i in members) == 0).only_enforce_if(~used)
            m.add(totals[d] - low <= s.max_skew).only_enforce_if(used)
    m.maximize(sum(x))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = workers
    status = solver.solve(m)
    seconds = time.perf_counter() - started
    name = solver.status_name(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise SolveError(f"the solver found no arrangement ({name}) within {time_limit:g} s")
    counts = {n.name: int(solver.value(v)) for n, v in zip(nodes, x, strict=True)}
    counts = {k: v for k, v in counts.items() if v}
    saturated = tuple(n.name for n in nodes if counts.get(n.name, 0) == n.capacity)
    return Placement(counts, status == cp_model.OPTIMAL, seconds, name, saturated)


@contextmanager
def placed(cluster: ClusterState, pods: Sequence[Pod], counts: dict[str, int]) -> Iterator[list[Pod]]:
    """The cluster with the pods bound as ``counts`` says (in node order), taken off again on
    leaving; yields the pods bound."""
    bound: list[Pod] = []
    it = iter(pods)
    with cluster.hypothetical():
        try:
            for node, k in counts.items():
                for _ in range(k):
                    pod = next(it)
                    cluster.add(pod)
                    cluster.bind(pod.key, node)
                    bound.append(pod)
            yield bound
        finally:
            for pod in bound:
                cluster.delete_pod(pod.key)


def verify(cluster: ClusterState, template: Pod, profile: Profile, counts: dict[str, int]) -> None:
    """Re-check an arrangement with the scheduler: in the final state, one new pod per used
    node (replicas are interchangeable) is taken off and scheduled again (``schedule_one``:
    PreFilter and Filter against all the others); its node must be among the feasible ones.
    Raises :class:`VerificationError` otherwise."""
    pods = clones(template, sum(counts.values()), cluster.pods)
    with placed(cluster, pods, counts) as bound:
        by_node: dict[str, Pod] = {}
        for pod in bound:
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
                    f"solver placed {counts[node]} pod(s) on {node} but the scheduler rejects one "
                    f"there ({why})"
                )


def _why(stage: str, status: Status) -> str:
    reasons = "; ".join(status.reasons) or status.code.name
    return f"{stage} {status.plugin}: {reasons}"


def conflict(model: PlacementModel, *, time_limit: float = 10.0) -> list[str] | None:
    """A minimal set of constraints that together forbid placing all ``model.count`` copies,
    None when an arrangement places them all (or the solver cannot tell in time). One CP-SAT
    assumption guards each constraint (resources; each spread constraint; each anti-affinity
    key); the solver's ``SufficientAssumptionsForInfeasibility`` is then shrunk by dropping
    one at a time while what is left stays infeasible. [] when no node is feasible at all."""
    names = [RESOURCES]
    names += [f"topology spread {s.topology_key} maxSkew {s.max_skew}" for s in model.spreads]
    names += [f"pod anti-affinity {k}" for k in model.anti_keys]

    def infeasible(active: list[int]) -> tuple[bool, list[int]]:
        status, core = _with_assumptions(model, active, time_limit)
        return status == cp_model.INFEASIBLE, core

    if model.count == 0:
        return None
    if not model.nodes:
        return []
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
    """Solve "all copies placed" with the constraints numbered as in :func:`conflict`, those
    in ``active`` assumed; (status, indices of a sufficient infeasible subset)."""
    nodes = model.nodes
    m = cp_model.CpModel()
    lits = [m.new_bool_var(f"a{i}") for i in range(1 + len(model.spreads) + len(model.anti_keys))]
    x = [m.new_int_var(0, model.count, f"x[{n.name}]") for n in nodes]
    m.add(sum(x) == model.count)
    for i, n in enumerate(nodes):
        m.add(x[i] <= n.capacity).only_enforce_if(lits[0])
    for j, s in enumerate(model.spreads, 1):
        by_domain = _domains(nodes, s.topology_key)
        big = sum(s.existing.values()) + model.count
        totals: dict[str, Any] = {}
        for d, have in s.existing.items():
            members = by_domain.get(d, [])
            totals[d] = have + s.self_match * sum(x[i] for i in members) if members else have
        low = m.new_int_var(0, big, f"min[{j}]")
        if len(s.existing) < s.min_domains:
            m.add(low == 0).only_enforce_if(lits[j])
        else:
            for t in totals.values():
                m.add(low <= t).only_enforce_if(lits[j])
        for d, members in by_domain.items():
            used = m.new_bool_var(f"used[{j}={d}]")
            m.add(sum(x[i] for i in members) == 0).only_enforce_if(~used)
            m.add(totals[d] - low <= s.max_skew).only_enforce_if([used, lits[j]])
    for k, key in enumerate(model.anti_keys, 1 + len(model.spreads)):
        for members in _domains(nodes, key).values():
            m.add(sum(x[i] for i in members) <= 1).only_enforce_if(lits[k])
    m.add_assumptions([lits[i] for i in active])
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1
    status = solver.solve(m)
    core: list[int] = []
    if status == cp_model.INFEASIBLE:
        core = [int(i) for i in solver.sufficient_assumptions_for_infeasibility()]
        index = {lit.index: i for i, lit in enumerate(lits)}
        core = [index[i] for i in core if i in index]
    return int(status), core
