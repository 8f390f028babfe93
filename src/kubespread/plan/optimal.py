"""``kubespread schedule --optimal``: after the greedy run, the new pods solved at once.

When pods stay pending, every workload with a pending pod is taken, with all of its pods of
this run (those the greedy scheduler placed and those it left pending), and the pods are
placed by the CP-SAT model (``kubespread.solve``) on the final cluster without them (every
other pod fixed where it is). A workload's pods form groups of copies of one template: a
ReplicaSet's replicas are one group, a rollout's two ReplicaSets two, each StatefulSet pod a
group of its own. When that does not place them all, the scope widens to every pod of the
run (a workload the scheduler placed in full may have to move to make room).
The arrangement is re-checked with the scheduler's own Filter (``solve.verify_groups``).

A **bind order** then makes the greedy scheduler land them exactly there: the pods are
replayed one by one through ``schedule_one`` on a copy of that cluster; a pod goes where the
scheduler sends it when that node still has room for its group in the arrangement (copies
are interchangeable), otherwise it is pinned with a required node affinity on
``metadata.name`` to a node that still has room, and scheduled again; a pod no node takes
yet waits for the others and is tried again. The replay must reproduce the arrangement node
for node, or an error is raised.

When no arrangement places them all, the most the model places is reported, ``proven`` when
CP-SAT proved that no arrangement places them all, with the constraint families that bind
(each one relaxed in turn) and a minimal conflicting set (``solve.conflict``: one assumption
per constraint, the solver's infeasible subset shrunk until each member is needed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.plan.capacity import binding_limits
from kubespread.plan.workloads import cluster_without, template_key, unbound, workload_of
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.selection import NodeOrder
from kubespread.sim.placement import PlacementResult
from kubespread.solve import SolveError, build_groups, conflict, solve, verify_groups

__all__ = ["OptimalResult", "ReplayError", "optimal", "pinned", "replay"]

#: the scopes tried in turn
PENDING_WORKLOADS: Final = "pending workloads"
ALL_NEW_PODS: Final = "all new pods"


class ReplayError(SolveError):
    """Replaying the bind order through the scheduler does not reproduce the arrangement."""


@dataclass
class OptimalResult:
    """The ``optimal`` block of ``schedule -o json``; ``error`` says why nothing was solved."""

    workloads: list[str] = field(default_factory=list)
    scope: str = PENDING_WORKLOADS
    assignments: dict[str, str] = field(default_factory=dict)
    greedy: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    proven: bool = False
    bind_order: list[dict[str, Any]] = field(default_factory=list)
    limited_by: list[str] = field(default_factory=list)
    conflict: list[str] | None = None
    error: str = ""

    @property
    def title(self) -> str:
        return ", ".join(self.workloads)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "workloads": self.workloads,
            "scope": self.scope,
            "assignments": self.assignments,
            "greedy": self.greedy,
            "pending": self.pending,
            "proven": self.proven,
            "bindOrder": self.bind_order,
        }
        if self.limited_by:
            doc["limitedBy"] = self.limited_by
        if self.conflict is not None:
            doc["conflict"] = self.conflict
        if self.error:
            doc["error"] = self.error
        return doc


def pinned(pod: Pod, node: str) -> Pod:
    """The pod with a required node affinity ``metadata.name In [node]`` added to each of its
    node selector terms (ANDed with what they already ask)."""
    data = pod.to_dict()
    spec = data.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    pin = {"key": "metadata.name", "operator": "In", "values": [node]}
    required["nodeSelectorTerms"] = [{**t, "matchFields": [*t.get("matchFields", []), pin]} for t in terms]
    return Pod.from_dict(data)


def replay(
    cluster: ClusterState,
    pods: Sequence[Pod],
    profile: Profile,
    room: dict[tuple[int, str], int],
    group_of: dict[str, int],
) -> list[dict[str, Any]]:
    """The bind order: each pod through ``schedule_one`` on ``cluster`` (bound there as it
    goes), pinned where the scheduler's choice has no room left for its group in ``room``
    ((group, node) -> pods); a pod that lands nowhere yet is tried again after the others.
    Raises ReplayError unless every pod lands and the result is ``room`` exactly."""
    left = dict(room)
    order: list[dict[str, Any]] = []
    waiting = list(pods)
    nodes = NodeOrder.of(cluster)  # a fresh kube-scheduler's node order and start index
    while waiting:
        deferred: list[Pod] = []
        for pod in waiting:
            gi = group_of[pod.key]
            landed = _land(cluster, pod, profile, gi, left, nodes)
            if landed is None:
                deferred.append(pod)
                continue
            node, pin = landed
            cluster.add(pod)
            cluster.bind(pod.key, node)
            left[(gi, node)] -= 1
            order.append({"pod": pod.key, "node": node, "pinned": pin})
        if len(deferred) == len(waiting):
            raise ReplayError(f"replay: the scheduler places {deferred[0].key} on no node with room left")
        waiting = deferred
    if any(left.values()):
        raise ReplayError(f"replay leaves room unused: { ({k: v for k, v in left.items() if v}) }")
    return order


def _land(
    cluster: ClusterState,
    pod: Pod,
    profile: Profile,
    gi: int,
    left: dict[tuple[int, str], int],
    nodes: NodeOrder,
) -> tuple[str, bool] | None:
    """Where the scheduler puts ``pod`` (as created, or pinned to a node with room): only the
    cycle that places it moves the start index, as only that pod would be created."""
    trial = nodes.fork()
    decision = schedule_one(pod, cluster, profile, order=trial)
    chosen = decision.selected
    if chosen is not None and left.get((gi, chosen), 0) > 0:
        nodes.next_start = trial.next_start
        return chosen, False
    # every node with room: a pin can change what the Filter counts (spread's
    # nodeAffinityPolicy Honor), so one the pod fails unpinned may take it pinned
    for (g, node), k in left.items():
        if g != gi or k <= 0:
            continue
        trial = nodes.fork()
        if schedule_one(pinned(pod, node), cluster, profile, order=trial).selected == node:
            nodes.next_start = trial.next_start
            return node, True
    return None


@dataclass(frozen=True, slots=True)
class _Scope:
    """The pods solved together, grouped into copies of one template."""

    members: list[str]
    groups: list[list[str]]
    names: list[str]


def _scope(pods: Mapping[str, Pod], keys: list[str]) -> _Scope:
    shapes: dict[Any, list[str]] = {}
    for k in keys:
        shapes.setdefault(template_key(pods[k]), []).append(k)
    groups = list(shapes.values())
    per_workload: dict[str, int] = {}
    for g in groups:
        w = workload_of(pods[g[0]])
        per_workload[w] = per_workload.get(w, 0) + 1
    names = []
    for g in groups:
        w = workload_of(pods[g[0]])
        names.append(w if per_workload[w] == 1 else (g[0] if len(g) == 1 else f"{g[0]} (+{len(g) - 1})"))
    return _Scope(keys, groups, names)


def optimal(result: PlacementResult, *, time_limit: float = 10.0) -> OptimalResult | None:
    """Solve the pending workloads at once, then every new pod when that is not enough (see
    the module notes); None when nothing is pending."""
    sim = result.sim
    cluster = sim.cluster
    pods = cluster.pods
    pending_keys = [k for k in (f"{p['namespace']}/{p['name']}" for p in result.final.pending) if k in pods]
    if not pending_keys:
        return None
    run_order = [
        k
        for k in dict.fromkeys([*(f"{p['namespace']}/{p['name']}" for p in result.placements), *pending_keys])
        if k in pods and (k in pending_keys or cluster.node_of(k))
    ]
    workloads = list(dict.fromkeys(workload_of(pods[k]) for k in pending_keys))
    first = [k for k in run_order if workload_of(pods[k]) in set(workloads)]
    scopes = [(PENDING_WORKLOADS, first)]
    if len(run_order) > len(first):
        scopes.append((ALL_NEW_PODS, run_order))
    out = OptimalResult()
    for scope_name, keys in scopes:
        out = _solve_scope(result, keys, scope_name, time_limit)
        if out.error or not out.pending:
            break
    return out


def _solve_scope(
    result: PlacementResult, keys: list[str], scope_name: str, time_limit: float
) -> OptimalResult:
    sim = result.sim
    cluster = sim.cluster
    pods = cluster.pods
    scope = _scope(pods, keys)
    out = OptimalResult(
        workloads=list(dict.fromkeys(workload_of(pods[k]) for k in keys)),
        scope=scope_name,
        greedy={k: cluster.node_of(k) for k in keys if cluster.node_of(k)},
    )
    schedulers = {pods[k].spec.scheduler_name or "default-scheduler" for k in keys}
    if len(schedulers) > 1:
        out.error = (
            f"the pods name different schedulers ({', '.join(sorted(schedulers))}); solve one at a time"
        )
        return out
    (scheduler,) = schedulers
    profile = sim.profiles.get(scheduler)
    if profile is None:
        out.error = f"no scheduler profile {scheduler!r}"
        return out
    base = cluster_without(cluster, set(keys))
    templates = [unbound(pods[g[0]]) for g in scope.groups]
    wanted = [(name, t, len(g)) for name, t, g in zip(scope.names, templates, scope.groups, strict=True)]
    hint = [_counts(out.greedy, g) for g in scope.groups]
    try:
        model = build_groups(base, wanted, profile)
        answer = solve(model, time_limit=time_limit, hint=hint)
        verify_groups(base, templates, profile, answer.by_group)
    except SolveError as e:
        out.error = str(e)
        return out
    out.proven = answer.proven
    if answer.placed < len(keys):
        out.pending = sorted(keys)
        if answer.proven:
            out.limited_by = binding_limits(
                model, answer.placed, max(0.1, time_limit / 4), set(answer.saturated)
            )
        out.limited_by.insert(0, f"at most {answer.placed} of {len(keys)} fit")
        out.conflict = conflict(model, time_limit=time_limit)
        if out.conflict is not None:
            out.proven = True  # the assumptions' solve proved "all of them" infeasible
        return out
    group_of = {k: gi for gi, g in enumerate(scope.groups) for k in g}
    room = {(gi, node): k for gi, counts in enumerate(answer.by_group) for node, k in counts.items()}
    try:
        out.bind_order = replay(base, [unbound(pods[k]) for k in keys], profile, room, group_of)
    except ReplayError as e:
        out.error = str(e)
        return out
    out.assignments = {e["pod"]: e["node"] for e in out.bind_order}
    return out


def _counts(greedy: dict[str, str], keys: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        node = greedy.get(k)
        if node:
            out[node] = out.get(node, 0) + 1
    return out
