"""The baseline ``provision --compare autoscaler`` shows: what cluster-autoscaler would add, one
node group per loop, by its binpacking estimator and its ``least-waste`` expander.

It follows, as documented upstream (kubernetes/autoscaler):

- ``cluster-autoscaler/estimator/binpacking_estimator.go`` (``Estimate``,
  ``tryToScheduleOnExistingNodes``, ``tryToScheduleOnNewNodes``): per node group, the pending
  pods in equivalence groups, larger first (``decreasing_pod_orderer.go``), each group first
  tried on the nodes added so far in this estimate (the first that passes the filters), then
  on the last node added, else on one more new node from the template; a pod the fresh node
  does not take either ends the estimate (the zonal-spread case the upstream comment names),
  and so does a last-added node left empty. Judging is by the filters only: a node "fits"
  when it is among ``schedule_one``'s feasible nodes; no scores;
- ``cluster-autoscaler/expander/waste/waste.go`` (``BestOption``): among the node groups
  whose estimate helps a pod, the one wasting the least fraction of CPU plus memory
  (requested by the pods it helps over the new nodes' CPU and memory);
- the scale-up loop (``core/scaleup/orchestrator``): one node group scaled per loop, then the
  real scheduler places the pods (here: the nodes settled in, :func:`replay`), and the pods
  still pending start the next loop.

Where it departs: the new nodes' CPU and memory are their allocatable (waste.go reads the
template's capacity; a template here gives allocatable); ties between equally wasteful groups
go to the first template given, not at random (the upstream fallback); no limiter but
``--max-per-template`` per group; the cluster's KubeSchedulerConfiguration defaults apply in
the filters (upstream builds its own framework, kubernetes/autoscaler#3879); a pod is judged
with its own scheduler profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubespread.api.core import Node, Pod
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.api.resources import node_allocatable, pod_requests
from kubespread.cluster.state import ClusterState
from kubespread.plan.nodegroups import NodeTemplate, new_nodes, replay
from kubespread.plan.workloads import template_key
from kubespread.scheduler.scheduler import schedule_one
from kubespread.sim.baseline import Baseline
from kubespread.sim.rows import JsonDoc

__all__ = ["AutoscalerResult", "ScaleUp", "estimate"]


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """One loop's scale-up: the node group, how many nodes, the pods the estimate helped."""

    loop: int
    template: str
    zone: str
    count: int
    cost: float
    helped: int
    waste: float


@dataclass(frozen=True, slots=True)
class AutoscalerResult:
    """Every loop's scale-up, the pods still pending after the last, and their reasons."""

    scale_ups: tuple[ScaleUp, ...]
    pending_after: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def nodes(self) -> int:
        return sum(s.count for s in self.scale_ups)

    @property
    def cost(self) -> float:
        return sum(s.cost for s in self.scale_ups)

    def to_dict(self) -> JsonDoc:
        def number(x: float) -> float | int:
            return int(x) if float(x).is_integer() else round(x, 6)

        return {
            "estimator": "binpacking",
            "expander": "least-waste",
            "add": [
                {
                    "template": s.template,
                    "zone": s.zone,
                    "count": s.count,
                    "cost": number(s.cost),
                    "loop": s.loop,
                    "helped": s.helped,
                    "waste": round(s.waste, 4),
                }
                for s in self.scale_ups
            ],
            "nodes": self.nodes,
            "cost": number(self.cost),
            "loops": len(self.scale_ups),
            "pendingAfter": list(self.pending_after),
        }


def _pending(cluster: ClusterState) -> list[Pod]:
    return [p for _, p in sorted(cluster.unbound_pods.items()) if not p.is_terminating and not p.is_finished]


def _size(pod: Pod, node: Node) -> float:
    """decreasing_pod_orderer's score: the pod's CPU and memory as shares of the node's."""
    r = pod_requests(pod)
    alloc = node_allocatable(node)
    cpu, mem = alloc.milli_cpu, alloc.memory
    return (r.milli_cpu / cpu if cpu else 0.0) + (r.memory / mem if mem else 0.0)


def _groups(pods: Sequence[Pod], node: Node) -> list[list[Pod]]:
    shapes: dict[Any, list[Pod]] = {}
    for pod in pods:
        shapes.setdefault(template_key(pod), []).append(pod)
    return sorted(shapes.values(), key=lambda g: -_size(g[0], node))


def _fits(baseline: Baseline, pod: Pod, nodes: Sequence[str]) -> str | None:
    """The first of ``nodes`` the pod passes every filter on (the predicate checker)."""
    if not nodes:
        return None
    profile = baseline.profiles.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)
    if profile is None:
        return None
    feasible = set(schedule_one(pod, baseline.cluster, profile, timed=False).feasible)
    return next((n for n in nodes if n in feasible), None)


def _estimate(
    baseline: Baseline, t: NodeTemplate, pending: Sequence[Pod], limit: int
) -> tuple[int, list[Pod]]:
    """binpacking_estimator.go's Estimate for one node group, in a trial: the nodes with pods
    and the pods they take."""
    taken = set(baseline.cluster.nodes)
    added: list[str] = []
    with_pods: set[str] = set()
    helped: list[Pod] = []
    with baseline.trial() as cluster:

        def bind(pod: Pod, node: str) -> None:
            cluster.bind(pod.key, node)
            with_pods.add(node)
            helped.append(pod)

        for group in _groups(pending, t.node):
            i = 0
            while i < len(group):
                node = _fits(baseline, group[i], added)
                if node is None:
                    break
                bind(group[i], node)
                i += 1
            for pod in group[i:]:
                last = added[-1] if added else None
                if last is not None and _fits(baseline, pod, [last]) == last:
                    bind(pod, last)
                    continue
                if last is not None and last not in with_pods:
                    break
                if len(added) >= limit:
                    break
                (fresh,) = new_nodes(t, 1, taken)
                taken.add(fresh.metadata.name)
                cluster.add(fresh)
                added.append(fresh.metadata.name)
                if _fits(baseline, pod, [fresh.metadata.name]) is None:
                    break
                bind(pod, fresh.metadata.name)
    return len(with_pods), helped


def _waste(t: NodeTemplate, count: int, pods: Sequence[Pod]) -> float:
    """waste.go: unrequested CPU plus memory, each as a share of the new nodes' own."""
    alloc = node_allocatable(t.node)
    cpu, mem = alloc.milli_cpu * count, alloc.memory * count
    want_cpu = sum(pod_requests(p).milli_cpu for p in pods)
    want_mem = sum(pod_requests(p).memory for p in pods)
    out = 0.0
    if cpu:
        out += (cpu - want_cpu) / cpu
    if mem:
        out += (mem - want_mem) / mem
    return out


def estimate(
    baseline: Baseline, templates: Sequence[NodeTemplate], max_per_template: int
) -> AutoscalerResult:
    """The scale-up loops until nothing is pending or no node group helps (see the module
    notes), every group at most ``max_per_template`` nodes in all."""
    current = baseline
    added: dict[str, list[Node]] = {t.name: [] for t in templates}
    taken = set(baseline.cluster.nodes)
    scale_ups: list[ScaleUp] = []
    loop = 0
    while True:
        pending = _pending(current.cluster)
        if not pending:
            break
        best: tuple[float, int, NodeTemplate, int, list[Pod]] | None = None
        for i, t in enumerate(templates):
            room = max_per_template - len(added[t.name])
            if room <= 0:
                continue
            count, helped = _estimate(current, t, pending, room)
            if count == 0 or not helped:
                continue
            waste = _waste(t, count, helped)
            if best is None or (waste, i) < (best[0], best[1]):
                best = (waste, i, t, count, helped)
        if best is None:
            break
        waste, _, t, count, helped = best
        loop += 1
        nodes = new_nodes(t, count, taken | {n.metadata.name for ns in added.values() for n in ns})
        added[t.name] += nodes
        scale_ups.append(ScaleUp(loop, t.name, t.zone, count, t.cost * count, len(helped), waste))
        current = replay(baseline, [n for ns in added.values() for n in ns])
    names = tuple(n.metadata.name for ns in added.values() for n in ns)
    return AutoscalerResult(tuple(scale_ups), tuple(p.key for p in _pending(current.cluster)), names)
