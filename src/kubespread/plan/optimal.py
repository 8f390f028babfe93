"""``kubespread schedule --optimal``: after the greedy run, one pending workload solved at once.

When pods stay pending, the pods of one workload (one controller, one pod template: identical
copies) are taken together, those the greedy scheduler placed and those it left pending, and
placed by the CP-SAT count model (``kubespread.solve``) on the final cluster without them
(every other pod fixed where it is). The arrangement is re-checked with the scheduler's own
Filter (``solve.verify``).

A **bind order** then makes the greedy scheduler land them exactly there: the pods are
replayed one by one through ``schedule_one`` on a copy of that cluster; a pod goes where the
scheduler sends it when that node still has room in the arrangement (copies are
interchangeable), otherwise it is pinned with a required node affinity on ``metadata.name``
to a node that still has room, and scheduled again. The replay must reproduce the
arrangement node for node, or an error is raised.

When no arrangement places them all, the most the model places is reported, ``proven`` when
CP-SAT proved that no arrangement places them all, with the constraint families that bind
(each one relaxed in turn) and a minimal conflicting set (``solve.conflict``: one assumption
per constraint, the solver's infeasible subset shrunk until each member is needed).
Only one workload is solved per run (the first pending one); others are named as left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubespread.api.core import Pod
from kubespread.cluster.state import OBJECT_KINDS, ClusterState
from kubespread.plan.capacity import binding_limits
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.sim.placement import PlacementResult
from kubespread.solve import SolveError, build_model, conflict, solve, verify

__all__ = ["OptimalResult", "ReplayError", "optimal", "pinned"]


class ReplayError(SolveError):
    """Replaying the bind order through the scheduler does not reproduce the arrangement."""


@dataclass
class OptimalResult:
    """The ``optimal`` block of ``schedule -o json``; ``error`` says why nothing was solved."""

    workload: str = ""
    assignments: dict[str, str] = field(default_factory=dict)
    greedy: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    proven: bool = False
    bind_order: list[dict[str, Any]] = field(default_factory=list)
    limited_by: list[str] = field(default_factory=list)
    conflict: list[str] | None = None
    left_out: list[str] = field(default_factory=list)
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "workload": self.workload,
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
        if self.left_out:
            doc["leftOut"] = self.left_out
        if self.error:
            doc["error"] = self.error
        return doc


def _template_key(pod: Pod) -> Any:
    """What makes two pods interchangeable copies: labels, and the spec but for the node."""
    data = pod.to_dict()
    spec = dict(data.get("spec", {}))
    spec.pop("nodeName", None)
    return (pod.namespace, repr(sorted(pod.metadata.labels.items())), repr(spec))


def _group_of(pod: Pod) -> tuple[str, str, str]:
    ref = pod.metadata.controller_ref()
    if ref is None:
        return (pod.namespace, "Pod", pod.metadata.name)
    return (pod.namespace, ref.kind, ref.name)


def _without(cluster: ClusterState, drop: set[str]) -> ClusterState:
    """A copy of the cluster: nodes, namespaces, kept objects and bound pods but ``drop``."""
    copy = ClusterState()
    for ns in cluster.namespaces.values():
        copy.add_namespace(ns)
    for node in cluster.nodes.values():
        copy.add_node(node)
    for kind in OBJECT_KINDS:
        for obj in cluster.objects(kind.KIND).values():
            copy.add_object(obj)
    for key, pod in cluster.pods.items():
        if key not in drop and cluster.node_of(key):
            copy.add_pod(pod)
    return copy


def _unbound(pod: Pod) -> Pod:
    data = pod.to_dict()
    data.get("spec", {}).pop("nodeName", None)
    data.pop("status", None)
    return Pod.from_dict(data)


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
    cluster: ClusterState, pods: list[Pod], profile: Profile, counts: dict[str, int]
) -> list[dict[str, Any]]:
    """The bind order: each pod through ``schedule_one`` on ``cluster`` (bound there as it
    goes), pinned where the scheduler's choice has no room left in ``counts``. Raises
    ReplayError unless every pod lands and the result is ``counts`` exactly."""
    room = dict(counts)
    order: list[dict[str, Any]] = []
    for pod in pods:
        decision = schedule_one(pod, cluster, profile)
        chosen, pin = decision.selected, False
        if chosen is None or room.get(chosen, 0) <= 0:
            chosen = None
            # every node with room: a pin can change what the Filter counts (spread's
            # nodeAffinityPolicy Honor), so one the pod fails unpinned may take it pinned
            for node in [n for n, k in room.items() if k > 0]:
                again = schedule_one(pinned(pod, node), cluster, profile)
                if again.selected == node:
                    chosen, pin = node, True
                    break
            if chosen is None:
                raise ReplayError(f"replay: the scheduler places {pod.key} on no node with room left")
        cluster.add(pod)
        cluster.bind(pod.key, chosen)
        room[chosen] -= 1
        order.append({"pod": pod.key, "node": chosen, "pinned": pin})
    landed: dict[str, int] = {}
    for entry in order:
        landed[entry["node"]] = landed.get(entry["node"], 0) + 1
    if landed != {n: k for n, k in counts.items() if k}:
        raise ReplayError(f"replay lands {landed}, the arrangement is {counts}")
    return order


def optimal(result: PlacementResult, *, time_limit: float = 10.0) -> OptimalResult | None:
    """Solve the first pending workload at once (see the module notes); None when nothing is
    pending."""
    sim = result.sim
    cluster = sim.cluster
    pods = cluster.pods
    pending_keys = [f"{p['namespace']}/{p['name']}" for p in result.final.pending]
    pending_keys = [k for k in pending_keys if k in pods]
    if not pending_keys:
        return None
    groups: dict[tuple[str, str, str], list[str]] = {}
    for key in pending_keys:
        groups.setdefault(_group_of(pods[key]), []).append(key)
    (namespace, kind, name), _ = next(iter(groups.items()))
    out = OptimalResult(workload=f"{namespace}/{kind}/{name}")
    out.left_out = [f"{ns}/{k}/{n}" for (ns, k, n) in list(groups)[1:]]
    first = pods[groups[(namespace, kind, name)][0]]
    shape = _template_key(first)
    run_keys = {f"{p['namespace']}/{p['name']}" for p in result.placements}
    members = [
        k
        for k, p in pods.items()
        if _group_of(p) == (namespace, kind, name) and (k in run_keys or k in pending_keys)
    ]
    if any(_template_key(pods[k]) != shape for k in members):
        out.error = "the workload's pods are not copies of one template (a rollout in progress?)"
        return out
    out.greedy = {k: cluster.node_of(k) for k in members if cluster.node_of(k)}
    profile = sim.profiles.get(first.spec.scheduler_name or "default-scheduler")
    if profile is None:
        out.error = f"no scheduler profile {first.spec.scheduler_name!r}"
        return out
    base = _without(cluster, set(members))
    template = _unbound(first)
    try:
        model = build_model(base, template, profile, len(members))
        answer = solve(model, time_limit=time_limit)
        verify(base, template, profile, answer.counts)
    except SolveError as e:
        out.error = str(e)
        return out
    out.proven = answer.proven
    if answer.placed < len(members):
        out.pending = sorted(members)
        if answer.proven:
            out.limited_by = binding_limits(model, answer.placed, max(0.1, time_limit / 4))
        out.limited_by.insert(0, f"at most {answer.placed} of {len(members)} fit")
        out.conflict = conflict(model, time_limit=time_limit)
        if out.conflict is not None:
            out.proven = True  # the assumptions' solve proved "all of them" infeasible
        return out
    # the greedy run's placed pods first (in its order), then the pending ones
    ordered = [
        k
        for k in dict.fromkeys([*(f"{p['namespace']}/{p['name']}" for p in result.placements), *pending_keys])
        if k in set(members)
    ]
    try:
        out.bind_order = replay(base, [_unbound(pods[k]) for k in ordered], profile, answer.counts)
    except ReplayError as e:
        out.error = str(e)
        return out
    out.assignments = {e["pod"]: e["node"] for e in out.bind_order}
    return out
