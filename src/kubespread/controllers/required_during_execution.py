"""Which running pods break a RequiredDuringSchedulingRequiredDuringExecution rule now.

The pod affinity design's step 9: a pod whose RequiredDuringExecution node affinity, pod
affinity or pod anti-affinity ceased to hold (a node or pod label changed, a partner went
away) is to be evicted. This module only finds them, as a pure function of a ClusterState, so
that the controller acting on it decides when (the design leaves the wait before declaring an
affinity broken to whichever component kills) and tests can check the rule on its own.

Whom to evict is the design's rule, "the pod with the rule that became violated": when a
pod's relabelling breaks another pod's anti-affinity, the pod *with* the anti-affinity term is
reported, not the relabelled one. Each broken term is one :class:`Violation`.

What is checked, for every bound pod that is neither terminating nor finished and has an RDE
rule (IgnoredDuringExecution rules are never reported):

* node affinity: the node must still match the RDE node selector (its terms ORed);
* pod anti-affinity, per term: no *other* pod matching the term (the term's namespaces or
  namespaceSelector, and its labelSelector) runs in the pod's topology domain; a node without
  the topology key has no domain and so no conflict, as at scheduling time. With daemon
  namespaces (the scheduler's daemonCoexistence) a pair is exempt when either pod is in one;
* pod affinity, per term: some other pod matching the term runs in the pod's domain; a node
  without the key cannot satisfy it. The scheduler's first-pod allowance carries over: a term
  no other pod anywhere satisfies (on a node with the key), while the pod matches it itself,
  is not broken, so the lone pod of a self-affine group is left alone.

The other pods counted are bound, not finished and not terminating: a pod on its way out
neither breaks an anti-affinity (the conflict is resolving) nor keeps an affinity alive.
Terms are matched with the scheduler's own :class:`AffinityTerm` and node selectors with its
:class:`RequiredNodeAffinity`, so "violated" means what "infeasible" means there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.predicates import (
    AffinityTerm,
    RequiredNodeAffinity,
    daemon_namespaces,
    namespace_labels,
)

if TYPE_CHECKING:
    from kubespread.cluster.events import ClusterEvent
    from kubespread.controllers.host import Cancellable, ControllerHost

__all__ = [
    "DEFAULT_AFFINITY_GRACE_SECONDS",
    "EVICTION_REASON",
    "NODE_AFFINITY",
    "POD_AFFINITY",
    "POD_ANTI_AFFINITY",
    "RequiredDuringExecutionController",
    "Violation",
    "execution_violations",
]

NODE_AFFINITY = "NodeAffinity"
POD_AFFINITY = "PodAffinity"
POD_ANTI_AFFINITY = "PodAntiAffinity"


@dataclass(frozen=True)
class Violation:
    """One broken RequiredDuringExecution rule of one pod: the pod to evict and why."""

    pod: str  # "namespace/name" of the pod whose rule is broken
    kind: str  # NodeAffinity | PodAffinity | PodAntiAffinity
    term: int  # index in the rule's RequiredDuringExecution list; -1 for node affinity as a whole
    message: str


def _running(pod: Pod) -> bool:
    return bool(pod.spec.node_name) and not pod.is_terminating and not pod.is_finished


def _has_rde(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    na, pa, anti = aff.node_affinity, aff.pod_affinity, aff.pod_anti_affinity
    return bool(
        (na is not None and na.required_during_scheduling_required_during_execution is not None)
        or (pa is not None and pa.required_during_scheduling_required_during_execution)
        or (anti is not None and anti.required_during_scheduling_required_during_execution)
    )


class _Matcher:
    """The other running pods a term selects, by node; namespace labels looked up once."""

    def __init__(self, cluster: ClusterState, daemons: frozenset[str]) -> None:
        self.cluster = cluster
        self.daemons = daemons
        self._ns_labels: dict[str, Mapping[str, str]] = {}

    def matching(
        self, term: AffinityTerm, nodes: list[str], exclude: str, *, skip_daemons: bool
    ) -> Iterator[tuple[str, str]]:
        """(pod key, node) of the running pods on ``nodes`` other than ``exclude`` that
        ``term`` selects, in node then pod key order."""
        cluster = self.cluster
        for node in sorted(nodes):
            pods = cluster.pods_on_node(node)
            for key in sorted(pods):
                other = pods[key]
                if key == exclude or not _running(other):
                    continue
                ns = other.namespace
                if skip_daemons and ns in self.daemons:
                    continue
                labels = self._ns_labels.get(ns)
                if labels is None:
                    labels = self._ns_labels[ns] = namespace_labels(cluster, ns)
                if term.matches(ns, other.metadata.labels, labels):
                    yield key, node

    def domain(self, node: str, topology_key: str) -> list[str] | None:
        """The nodes sharing ``node``'s value of the key; None when the node lacks it."""
        value = self.cluster.nodes[node].metadata.labels.get(topology_key)
        if value is None:
            return None
        return list(self.cluster.nodes_with_label(topology_key, value))

    def keyed_nodes(self, topology_key: str) -> list[str]:
        """Every node carrying the key (the union of its domains)."""
        return [n for by_value in self.cluster.node_label_values(topology_key).values() for n in by_value]


def _node_affinity(cluster: ClusterState, pod: Pod, node: str) -> list[Violation]:
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    rde = na.required_during_scheduling_required_during_execution if na is not None else None
    if rde is None or RequiredNodeAffinity({}, None, rde).matches(cluster.nodes[node]):
        return []
    why = f"node {node} no longer matches the required node affinity (requiredDuringExecution)"
    return [Violation(pod.key, NODE_AFFINITY, -1, why)]


def _anti_affinity(m: _Matcher, pod: Pod, node: str) -> list[Violation]:
    aff = pod.spec.affinity
    anti = aff.pod_anti_affinity if aff is not None else None
    if anti is None or (m.daemons and pod.namespace in m.daemons):
        return []
    out = []
    for i, raw in enumerate(anti.required_during_scheduling_required_during_execution):
        term = AffinityTerm.parse(pod.namespace, raw)
        nodes = m.domain(node, term.topology_key)
        if nodes is None:
            continue
        hit = next(m.matching(term, nodes, pod.key, skip_daemons=bool(m.daemons)), None)
        if hit is not None:
            why = (
                f"pod anti-affinity term [{i}] (topologyKey {term.topology_key}) matches pod "
                f"{hit[0]} on node {hit[1]}"
            )
            out.append(Violation(pod.key, POD_ANTI_AFFINITY, i, why))
    return out


def _affinity(m: _Matcher, pod: Pod, node: str) -> list[Violation]:
    aff = pod.spec.affinity
    pa = aff.pod_affinity if aff is not None else None
    if pa is None:
        return []
    pod_ns = pod.namespace
    out = []
    for i, raw in enumerate(pa.required_during_scheduling_required_during_execution):
        term = AffinityTerm.parse(pod_ns, raw)
        key = term.topology_key
        head = f"pod affinity term [{i}] (topologyKey {key})"
        nodes = m.domain(node, key)
        if nodes is None:
            out.append(Violation(pod.key, POD_AFFINITY, i, f"{head}: node {node} has no label {key}"))
            continue
        if next(m.matching(term, nodes, pod.key, skip_daemons=False), None) is not None:
            continue
        alone = next(m.matching(term, m.keyed_nodes(key), pod.key, skip_daemons=False), None) is None
        if alone and term.matches(pod_ns, pod.metadata.labels, namespace_labels(m.cluster, pod_ns)):
            continue  # the first pod of a self-affine group: nothing to be with yet
        value = m.cluster.nodes[node].metadata.labels[key]
        out.append(Violation(pod.key, POD_AFFINITY, i, f"{head} matches no other pod in {key}={value}"))
    return out


def execution_violations(
    cluster: ClusterState, *, daemon_namespaces: frozenset[str] = frozenset()
) -> list[Violation]:
    """Every broken RequiredDuringExecution rule of the cluster's running pods, sorted by pod
    key, kind and term. ``daemon_namespaces``: the scheduler's daemonCoexistence namespaces
    (pairs with a pod in one are exempt from anti-affinity); empty for kube's rules."""
    m = _Matcher(cluster, frozenset(daemon_namespaces))
    out: list[Violation] = []
    for pod in cluster.pods.values():
        if not _running(pod) or not _has_rde(pod):
            continue
        node = pod.spec.node_name
        out += _node_affinity(cluster, pod, node)
        out += _affinity(m, pod, node)
        out += _anti_affinity(m, pod, node)
    out.sort(key=lambda v: (v.pod, v.kind, v.term))
    return out


# ------------------------------------------------------------------ the controller

#: how long a broken pod *affinity* may last before the pod is evicted (the design: "a
#: configurable property of whichever component does the killing")
DEFAULT_AFFINITY_GRACE_SECONDS: Final = 60.0
EVICTION_REASON: Final = "Evicted"
#: how long to wait before trying again an eviction a PodDisruptionBudget refused (429)
EVICTION_RETRY_SECONDS: Final = 5.0
_KEY: Final = "all"
#: the kinds whose events can break or mend a term (the rest never reach the controller)
_KINDS: Final = ("Pod", "Node", "Namespace")


class RequiredDuringExecutionController:
    """Evicts the pods :func:`execution_violations` reports (the design's step 9).

    Broken node affinity and anti-affinity evict at once: waiting cannot mend them, and the
    anti-affinity conflict grows with every second both pods run. Broken pod affinity waits
    ``affinity_grace_seconds`` first (a partner restarting for an update comes back), and is
    evicted only if still broken then. The check runs after every change that can break a rule
    (pod labels, pods arriving or leaving, node labels, namespace labels), over the pods with
    RDE rules only; daemon namespaces come from the scheduler profiles' InterPodAffinity
    daemonCoexistence option, so eviction and scheduling agree. Evictions go through the
    Eviction API: one a PodDisruptionBudget refuses is tried again 5 s later (a long timer).
    """

    name = "requiredduringexecution"

    def __init__(self, *, affinity_grace_seconds: float = DEFAULT_AFFINITY_GRACE_SECONDS) -> None:
        self.affinity_grace_seconds = affinity_grace_seconds
        self._sim: ControllerHost | None = None
        self._daemons: frozenset[str] = frozenset()
        self._waiting: dict[tuple[str, str, int], Cancellable] = {}
        #: pods with an RDE rule: without any, no change can break one and the check is skipped
        self._carriers: set[str] = set()
        #: a check is due again because a disruption budget refused an eviction
        self._retrying = False

    def start(self, sim: ControllerHost) -> None:
        self._sim = sim
        self._daemons = daemon_namespaces(sim.profiles)
        self._carriers = {key for key, pod in sim.cluster.pods.items() if _has_rde(pod)}
        sim.cluster.subscribe(self._on_event, kinds=_KINDS)
        sim.enqueue(self, _KEY)

    def _on_event(self, ev: ClusterEvent) -> None:
        if ev.kind == "Pod":
            if ev.type.value == "Deleted" or not _has_rde(ev.obj):
                self._carriers.discard(ev.obj.key)
            else:
                self._carriers.add(ev.obj.key)
        if self._carriers and ev.kind in _KINDS and self._sim is not None:
            self._sim.enqueue(self, _KEY)

    def sync(self, key: str) -> None:
        sim = self._sim
        assert sim is not None
        found = execution_violations(sim.cluster, daemon_namespaces=self._daemons)
        broken = {(v.pod, v.kind, v.term) for v in found}
        for mark in [m for m in self._waiting if m not in broken]:
            self._waiting.pop(mark).cancel()  # mended within the grace period
        evicted: set[str] = set()
        for v in found:
            if v.pod in evicted:
                continue
            mark = (v.pod, v.kind, v.term)
            if v.kind == POD_AFFINITY and self.affinity_grace_seconds > 0:
                if mark not in self._waiting:
                    self._waiting[mark] = sim.after(
                        self.affinity_grace_seconds, lambda: sim.enqueue(self, _KEY), settle=True
                    )
                    continue
                if not self._expired(mark):
                    continue
                self._waiting.pop(mark)
            evicted.add(v.pod)
            refused = sim.evict(
                v.pod, reason=EVICTION_REASON, message=f"RequiredDuringExecution {v.kind} broken: {v.message}"
            )
            if refused is not None and refused.code == 429 and not self._retrying:
                # a PodDisruptionBudget holds it: look again later, as an Eviction API client backs off
                self._retrying = True
                sim.after(EVICTION_RETRY_SECONDS, self._retry)

    def _retry(self) -> None:
        assert self._sim is not None
        self._retrying = False
        self._sim.enqueue(self, _KEY)

    def _expired(self, mark: tuple[str, str, int]) -> bool:
        assert self._sim is not None
        return self._waiting[mark].time <= self._sim.now
