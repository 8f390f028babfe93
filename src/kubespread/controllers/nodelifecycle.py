"""Node lifecycle: cordon, drain, failure, recovery, removal and arrival of nodes over time.

One controller plays the parts kube splits between several components, because in a
simulation they act on the same events:

* the node lifecycle controller's *TaintNodesByCondition* pass: the NoSchedule taints that
  mirror ``spec.unschedulable`` and the node conditions (Ready=False → ``not-ready``,
  Ready=Unknown → ``unreachable``, MemoryPressure/DiskPressure/PIDPressure/NetworkUnavailable
  =True → their taints). A condition that is absent asks for no taint, so the
  ``not-ready:NoSchedule`` taint admission puts on every new Node is removed at once from a
  node that is Ready or reports no conditions at all (kube does the same; a node without
  conditions is taken for Ready throughout);
* its NoExecute tainting: Ready=False → ``not-ready:NoExecute``, Ready=Unknown →
  ``unreachable:NoExecute``, Ready=True → neither; a node without a Ready condition keeps
  whatever NoExecute taints it has (nothing says it is healthy or not). Taints it adds carry
  ``timeAdded``, as SwapNodeControllerTaint writes it;
* its MarkPodsNotReady: when a node stops being Ready, its pods' Ready condition turns False
  (event ``NodeNotReady`` "Node is not ready" on each, ``NodeNotReady`` on the node);
* the NoExecute taint manager (taint eviction controller), see :meth:`NodeLifecycleController.sync`;
* the parts of the kubelet, kubectl and the pod GC that the scenario verbs stand for:
  :meth:`~NodeLifecycleController.cordon`, :meth:`~NodeLifecycleController.drain`,
  :meth:`~NodeLifecycleController.fail`, :meth:`~NodeLifecycleController.recover`,
  :meth:`~NodeLifecycleController.delete`, :meth:`~NodeLifecycleController.add`.

Taint manager, as taint_eviction.go decides: for each pod on a node with NoExecute taints, each
taint takes the *first* of the pod's tolerations that tolerates it; a taint none tolerates
means eviction now; otherwise the smallest tolerationSeconds among those chosen tolerations
(≤ 0 counting as 0) is how long the pod may stay, and none having tolerationSeconds means
forever. The wait is counted from when the controller first saw the pod on the tainted node
(kube's ``now``; for taints added while the pod runs that is the taint's ``timeAdded``), and
an eviction already pending is never pushed back or brought forward by a later change,
only cancelled (taints removed, the pod now tolerating forever, the pod gone). Evicting
records ``TaintManagerEviction`` "Marking for deletion Pod ns/name" (Normal, as kube), sets the
pod's ``DisruptionTarget`` condition (``DeletionByTaintManager``) and deletes it gracefully;
cancelling records ``TaintManagerEviction`` "Cancelling deletion of Pod ns/name". Admission's
DefaultTolerationSeconds gives every pod 300 s for ``not-ready`` and ``unreachable``, hence
the five minutes before a failed node's pods are replaced.

Drain evicts through the Eviction API, so PodDisruptionBudgets hold: a refused eviction is
tried again every 5 s, as kubectl drain does (the taint manager deletes, as kube's does, and
ignores budgets). Not modelled: node-monitor-grace-period (``fail`` is the moment the node is
marked Unknown, not the kubelet's last heartbeat 40-50 s earlier), the zone disruption rate
limits, leases, the pod GC's 40 s quarantine. Finished
(Succeeded/Failed) pods are left alone by the taint manager and by drain, where kube would
delete them: they hold nothing, and without the Job controller's tracking finalizers their
deletion would lose a Job's count.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kubespread.admission.framework import Rejection
from kubespread.api.core import Node, NodeCondition, Pod, PodCondition
from kubespread.api.keys import TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE
from kubespread.api.taints import NO_EXECUTE, NO_SCHEDULE, Taint, toleration_time
from kubespread.api.timestamps import timestamp
from kubespread.cluster.errors import SimulationError
from kubespread.cluster.events import ClusterEvent, EventType

if TYPE_CHECKING:
    from kubespread.controllers.host import Cancellable, ControllerHost

__all__ = [
    "DRAIN_EVICTION_REASON",
    "DRAIN_RETRY_SECONDS",
    "MIRROR_POD_ANNOTATION",
    "TAINT_EVICTION_REASON",
    "NodeLifecycleController",
]

#: event reason of drain's evictions: the reason the API server's eviction writes on the pod
#: (its DisruptionTarget condition), which is what ``kubectl describe pod`` shows of a drain
DRAIN_EVICTION_REASON: Final = "EvictionByEvictionAPI"
#: how long kubectl drain waits before trying again an eviction a disruption budget refused
DRAIN_RETRY_SECONDS: Final = 5.0
#: event reason of the NoExecute taint manager, for evictions and their cancellation
TAINT_EVICTION_REASON: Final = "TaintManagerEviction"
#: the kubelet's mark on a static pod's API mirror, which drain leaves alone
MIRROR_POD_ANNOTATION: Final = "kubernetes.io/config.mirror"

_READY: Final = "Ready"
#: condition type → {status: NoSchedule taint key} (nodeConditionToTaintKeyStatusMap)
_CONDITION_TAINTS: Final[dict[str, dict[str, str]]] = {
    _READY: {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
_MANAGED_NO_SCHEDULE: Final = frozenset(
    {key for by_status in _CONDITION_TAINTS.values() for key in by_status.values()} | {TAINT_UNSCHEDULABLE}
)
_READY_NO_EXECUTE: Final = {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE}
#: the conditions the kubelet posts, which the controller sets Unknown when it stops (and their
#: healthy form, for when it comes back)
_KUBELET_CONDITIONS: Final[dict[str, tuple[str, str, str]]] = {
    _READY: ("True", "KubeletReady", "kubelet is posting ready status"),
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}


@dataclass
class _Seen:
    """What the controller last observed of a node: transitions are judged against it."""

    ready: str  # the Ready condition's status; "True" when there is none
    unschedulable: bool
    noexec: tuple[Taint, ...]  # the taint manager's view of the node's NoExecute taints


@dataclass
class _Pending:
    """A scheduled taint-manager eviction (kube's TimedWorker)."""

    pod: Pod  # as it was when scheduled: for the cancellation event once it is gone
    node: str
    created: float
    due: float
    timer: Cancellable


def _condition(node: Node, type_: str) -> NodeCondition | None:
    return next((c for c in node.status.conditions if c.type == type_), None)


def _ready_status(node: Node) -> str:
    ready = _condition(node, _READY)
    return ready.status if ready is not None else "True"


def _no_execute(node: Node) -> tuple[Taint, ...]:
    return tuple(t for t in node.spec.taints if t.effect == NO_EXECUTE)


def _editable(node: Node) -> Node:
    """A copy whose spec, status, taint and condition lists may be replaced (metadata shared)."""
    new = copy.copy(node)
    new.spec = copy.copy(node.spec)
    new.spec.taints = list(node.spec.taints)
    new.status = copy.copy(node.status)
    new.status.conditions = list(node.status.conditions)
    return new


def _with_status(cond: NodeCondition, status: str, reason: str, message: str) -> NodeCondition:
    new = copy.copy(cond)
    new.status, new.reason, new.message = status, reason, message
    return new


def _reconciled_taints(node: Node, stamp: str) -> list[Taint] | None:
    """The node's taints with the controller-managed ones brought in line with its spec and
    conditions (new ones stamped ``stamp``), or None when nothing changes."""
    taints = node.spec.taints
    wanted: list[str] = []
    for cond in node.status.conditions:
        key = _CONDITION_TAINTS.get(cond.type, {}).get(cond.status)
        if key is not None and key not in wanted:
            wanted.append(key)
    if node.spec.unschedulable:
        wanted.append(TAINT_UNSCHEDULABLE)

    def managed(t: Taint) -> bool:
        return t.effect == NO_SCHEDULE and t.key in _MANAGED_NO_SCHEDULE

    kept = [t for t in taints if not managed(t) or t.key in wanted]
    present = {t.key for t in kept if managed(t)}
    added = [Taint(key=k, effect=NO_SCHEDULE, time_added=stamp) for k in wanted if k not in present]
    ready = _condition(node, _READY)
    if ready is not None:
        want = _READY_NO_EXECUTE.get(ready.status)
        kept = [
            t
            for t in kept
            if not (t.effect == NO_EXECUTE and t.key in _READY_NO_EXECUTE.values() and t.key != want)
        ]
        if want is not None and not any(t.effect == NO_EXECUTE and t.key == want for t in kept):
            added.append(Taint(key=want, effect=NO_EXECUTE, time_added=stamp))
    result = kept + added
    return None if result == taints else result


def _drainable(pod: Pod) -> bool:
    """Whether ``kubectl drain --ignore-daemonsets --force --delete-emptydir-data`` evicts it."""
    if pod.is_terminating or pod.is_finished or MIRROR_POD_ANNOTATION in pod.metadata.annotations:
        return False
    ref = pod.metadata.controller_ref()
    return ref is None or ref.kind != "DaemonSet"


class NodeLifecycleController:
    """Keeps node taints in step with node state, evicts pods from NoExecute-tainted nodes,
    and carries out the scenario's node verbs (each takes a node name)."""

    name = "nodelifecycle"

    def __init__(self) -> None:
        self._sim: ControllerHost | None = None
        self._seen: dict[str, _Seen] = {}
        self._pending: dict[str, _Pending] = {}
        #: pod key → the timer of a drain's next eviction attempt (refused by a budget)
        self._drain_retries: dict[str, Cancellable] = {}

    @property
    def sim(self) -> ControllerHost:
        if self._sim is None:
            raise SimulationError("the node lifecycle controller has not been started")
        return self._sim

    # ------------------------------------------------------------------ controller protocol
    def start(self, sim: ControllerHost) -> None:
        """Subscribe, take the nodes as they are for the baseline of transitions, and queue
        every node once (its taints reconciled, its NoExecute taints applied to its pods)."""
        self._sim = sim
        sim.cluster.subscribe(self._on_event, kinds=(Node.KIND, Pod.KIND))
        for name in sorted(sim.cluster.nodes):
            self._seen[name] = self._baseline(sim.cluster.nodes[name])
            sim.enqueue(self, f"node:{name}")

    def sync(self, key: str) -> None:
        """``node:<name>``: reconcile the node's managed taints, act on Ready/unschedulable
        transitions, and when its NoExecute taints changed, run the taint manager over its
        pods. ``pod:<ns/name>``: run the taint manager for that pod (new on a tainted node,
        tolerations changed, or gone: its pending eviction cancelled)."""
        kind, _, name = key.partition(":")
        if kind == "node":
            self._sync_node(name)
        elif kind == "pod":
            self._sync_pod(name)

    def pending_evictions(self) -> dict[str, float]:
        """Pod key → virtual time its taint-manager eviction is due, by pod key."""
        return {key: p.due for key, p in sorted(self._pending.items())}

    # ------------------------------------------------------------------ node verbs
    def cordon(self, name: str) -> None:
        """``kubectl cordon``: spec.unschedulable, and the controller's unschedulable taint."""
        node = self._node(name)
        if not node.spec.unschedulable:
            new = _editable(node)
            new.spec.unschedulable = True
            self.sim.update(new)
        self._sync_node(name)

    def uncordon(self, name: str) -> None:
        """``kubectl uncordon``: spec.unschedulable and the unschedulable taint removed."""
        node = self._node(name)
        if node.spec.unschedulable:
            new = _editable(node)
            new.spec.unschedulable = False
            self.sim.update(new)
        self._sync_node(name)

    def drain(self, name: str) -> list[str]:
        """``kubectl drain --ignore-daemonsets --force --delete-emptydir-data``: cordon, then
        evict every pod on the node but DaemonSet-controlled, mirror, finished and already
        terminating ones, each after its own grace period. Returns the pods evicted at once.

        Evictions go through the Eviction API, which sets the pod's DisruptionTarget condition
        and may refuse one that would break a PodDisruptionBudget (429): kubectl then retries
        that pod every 5 s (:data:`DRAIN_RETRY_SECONDS`, virtual time, a timer that does not
        hold a step) until it is evicted or gone, so a drain waits for the budget rather than
        breaking it; :meth:`draining` lists the pods still waiting. A granted eviction records
        a Warning event ``EvictionByEvictionAPI`` (that condition's reason) with kubectl's line
        "evicting pod ns/name"; a pod's first refusal records ``DisruptionBudget`` with
        kubectl's "error when evicting pods/... (will retry after 5s): ..." line (kube records
        no event of its own for either). Any other refusal ends the drain of that pod, as
        kubectl gives up on it (``FailedEviction``)."""
        self.cordon(name)
        evicted: list[str] = []
        for key in sorted(self.sim.cluster.pods_on_node(name)):
            pod = self.sim.cluster.pods.get(key)
            if pod is None or not _drainable(pod):
                continue
            if self._drain_evict(pod, first=True):
                evicted.append(key)
        return evicted

    def taint(self, name: str, taint: Taint) -> None:
        """``kubectl taint nodes NAME key=value:effect --overwrite``: the taint set (one of the
        same key and effect replaced, an identical one kept); a NoExecute taint gets its
        timeAdded. The taint manager then evicts the pods that do not tolerate it."""
        node = self._node(name)
        new = _editable(node)
        added = Taint(key=taint.key, value=taint.value, effect=taint.effect)
        if taint.effect == NO_EXECUTE:
            added.time_added = timestamp(self.sim.now)
        if any(
            (t.key, t.value, t.effect) == (taint.key, taint.value, taint.effect) for t in node.spec.taints
        ):
            return  # already there: nothing changes (its timeAdded kept)
        new.spec.taints = [t for t in new.spec.taints if (t.key, t.effect) != (taint.key, taint.effect)]
        new.spec.taints.append(added)
        self.sim.update(new)
        self._sync_node(name)

    def untaint(self, name: str, key: str, effect: str = "") -> None:
        """``kubectl taint nodes NAME key[:effect]-``: the node's taints with that key (and
        effect, when given) removed; SimulationError when it has none, as kubectl fails."""
        node = self._node(name)
        new = _editable(node)
        kept = [t for t in new.spec.taints if not (t.key == key and effect in ("", t.effect))]
        if len(kept) == len(new.spec.taints):
            raise SimulationError(f"taint {key}{':' + effect if effect else ''} not found on node {name}")
        new.spec.taints = kept
        self.sim.update(new)
        self._sync_node(name)

    def draining(self) -> list[str]:
        """The pods a drain is still trying to evict (waiting on a disruption budget), by key."""
        return sorted(self._drain_retries)

    def _drain_evict(self, pod: Pod, *, first: bool) -> bool:
        """One eviction attempt of kubectl drain's loop; True when granted."""
        key = pod.key
        self._drain_retries.pop(key, None)
        refused = self.sim.evict(key, reason=DRAIN_EVICTION_REASON, message=f"evicting pod {key}")
        if refused is None:
            return True
        where = f'pods/"{pod.metadata.name}" -n "{pod.namespace}"'
        if refused.code != 429:
            self.sim.record(
                pod, "FailedEviction", f"error when evicting {where}: {refused.message}", type="Warning"
            )
            return False
        if first:
            self.sim.record(
                pod,
                "DisruptionBudget",
                f"error when evicting {where} (will retry after 5s): {refused.message}",
                type="Warning",
            )
        uid = pod.metadata.uid
        self._drain_retries[key] = self.sim.after(DRAIN_RETRY_SECONDS, lambda: self._drain_retry(key, uid))
        return False

    def _drain_retry(self, key: str, uid: str) -> None:
        """The retry 5 s on: done when the pod is gone, replaced or already terminating."""
        self._drain_retries.pop(key, None)
        pod = self.sim.cluster.pods.get(key)
        if pod is None or pod.metadata.uid != uid or pod.is_terminating:
            return
        self._drain_evict(pod, first=False)

    def fail(self, name: str) -> None:
        """The kubelet stops reporting: the node's kubelet conditions turn Unknown, it is
        tainted ``unreachable`` (NoSchedule and NoExecute), its pods are marked not Ready,
        and the taint manager evicts or schedules the eviction of each. Pods deleted while
        it lasts stay Terminating (nothing on the node confirms the kill)."""
        node = self._node(name)
        self.sim.set_node_reachable(name, False)
        new = _editable(node)
        conditions = new.status.conditions
        for i, cond in enumerate(conditions):
            if cond.type in _KUBELET_CONDITIONS:
                conditions[i] = _with_status(
                    cond, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."
                )
        if _condition(new, _READY) is None:
            conditions.append(
                NodeCondition(
                    type=_READY,
                    status="Unknown",
                    reason="NodeStatusUnknown",
                    message="Kubelet stopped posting node status.",
                )
            )
        self.sim.update(new)
        self._sync_node(name)

    def recover(self, name: str) -> None:
        """The kubelet is back: Ready=True, the unreachable/not-ready taints removed (pending
        taint-manager evictions cancelled), its pods Ready again, and the pods deleted
        meanwhile finish terminating."""
        node = self._node(name)
        self.sim.set_node_reachable(name, True)
        new = _editable(node)
        conditions = new.status.conditions
        for i, cond in enumerate(conditions):
            healthy = _KUBELET_CONDITIONS.get(cond.type)
            if healthy is not None and (cond.type == _READY or cond.status == "Unknown"):
                conditions[i] = _with_status(cond, *healthy)
        if _condition(new, _READY) is None:
            conditions.append(
                NodeCondition(
                    type=_READY,
                    status="True",
                    reason="KubeletReady",
                    message="kubelet is posting ready status",
                )
            )
        self.sim.update(new)
        self._sync_node(name)
        self.sim.finish_terminations(name)

    def delete(self, name: str) -> None:
        """Remove the node: its pods are force-deleted (grace 0, as the pod GC does for pods
        of a node that no longer exists), then the node."""
        self._node(name)
        for key in sorted(self.sim.cluster.pods_on_node(name)):
            self.sim.delete(Pod.KIND, key, grace_seconds=0)
        self.sim.delete(Node.KIND, name)

    def add(self, node: Node) -> Node | Rejection:
        """Create a node through the API server (admission taints it ``not-ready``; the
        controller lifts that at once unless the node reports Ready False or Unknown)."""
        outcome = self.sim.create(node)
        if isinstance(outcome, Rejection):
            return outcome
        self._sync_node(outcome.metadata.name)
        return self.sim.cluster.nodes[outcome.metadata.name]

    # ------------------------------------------------------------------ events
    def _baseline(self, node: Node) -> _Seen:
        return _Seen(ready=_ready_status(node), unschedulable=node.spec.unschedulable, noexec=())

    def _on_event(self, ev: ClusterEvent) -> None:
        if ev.kind == Node.KIND:
            node: Node = ev.obj
            name = node.metadata.name
            if ev.type is EventType.DELETED:
                self._seen.pop(name, None)
                self.sim.set_node_reachable(name, True)
                self.sim.record(
                    node, "RemovingNode", f"Node {name} event: Removing Node {name} from Controller"
                )
                return
            if ev.type is EventType.ADDED:
                self._seen[name] = self._baseline(node)
                self.sim.record(
                    node, "RegisteredNode", f"Node {name} event: Registered Node {name} in Controller"
                )
            self.sim.enqueue(self, f"node:{name}")
            return
        if ev.kind != Pod.KIND:
            return
        pod: Pod = ev.obj
        key = pod.key
        if ev.type is EventType.DELETED or ev.type is EventType.UNBOUND:
            interested = key in self._pending
        elif ev.type is EventType.BOUND:
            interested = key in self._pending or self._tainted(pod.spec.node_name)
        elif ev.type is EventType.UPDATED:
            old: Pod | None = ev.old
            interested = (key in self._pending or self._tainted(pod.spec.node_name)) and (
                old is None or (old.spec is not pod.spec and old.spec.tolerations != pod.spec.tolerations)
            )
        else:
            interested = False
        if interested:
            self.sim.enqueue(self, f"pod:{key}")

    def _tainted(self, node_name: str) -> bool:
        seen = self._seen.get(node_name) if node_name else None
        return seen is not None and bool(seen.noexec)

    # ------------------------------------------------------------------ node sync
    def _node(self, name: str) -> Node:
        node = self.sim.cluster.nodes.get(name)
        if node is None:
            raise SimulationError(f'node "{name}" not found')
        return node

    def _sync_node(self, name: str) -> None:
        sim = self.sim
        node = sim.cluster.nodes.get(name)
        if node is None:
            self._seen.pop(name, None)
            return
        taints = _reconciled_taints(node, timestamp(sim.now))
        if taints is not None:
            new = _editable(node)
            new.spec.taints = taints
            sim.update(new)
            node = new
        seen = self._seen.setdefault(name, self._baseline(node))
        was_ready, ready = seen.ready == "True", _ready_status(node)
        seen.ready = ready
        if was_ready and ready != "True":
            self._went_not_ready(node)
        elif not was_ready and ready == "True":
            self._went_ready(node)
        if seen.unschedulable != node.spec.unschedulable:
            seen.unschedulable = node.spec.unschedulable
            if sim.node_reachable(name):  # the kubelet reports it
                status = "NodeNotSchedulable" if node.spec.unschedulable else "NodeSchedulable"
                sim.record(node, status, f"Node {name} status is now: {status}")
        noexec = _no_execute(node)
        if noexec != seen.noexec:
            seen.noexec = noexec
            self._taint_pass(name, list(noexec))

    def _went_not_ready(self, node: Node) -> None:
        """MarkPodsNotReady, and the node's status-change event."""
        sim, name = self.sim, node.metadata.name
        sim.record(node, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        for key in sorted(sim.cluster.pods_on_node(name)):
            pod = sim.cluster.pods[key]
            if self._set_pod_ready(pod, "False"):
                sim.record(pod, "NodeNotReady", "Node is not ready", type="Warning")

    def _went_ready(self, node: Node) -> None:
        """The kubelet reports the node (and its running pods) Ready again."""
        sim, name = self.sim, node.metadata.name
        sim.record(node, "NodeReady", f"Node {name} status is now: NodeReady")
        if not sim.node_reachable(name):
            return
        for key in sorted(sim.cluster.pods_on_node(name)):
            pod = sim.cluster.pods[key]
            if not pod.is_terminating:
                self._set_pod_ready(pod, "True")

    def _set_pod_ready(self, pod: Pod, status: str) -> bool:
        """Set the status of the pod's Ready condition, if it has one that differs."""
        conditions = list(pod.status.conditions)
        for i, cond in enumerate(conditions):
            if cond.type == _READY:
                if cond.status == status:
                    return False
                conditions[i] = copy.copy(cond)
                conditions[i].status = status
                self._store_conditions(pod, conditions)
                return True
        return False

    def _mark_disruption(self, pod: Pod, reason: str, message: str) -> None:
        """The DisruptionTarget condition a taint-manager deletion writes first."""
        self.sim.update(pod.with_disruption_target(reason, message))

    def _store_conditions(self, pod: Pod, conditions: list[PodCondition]) -> None:
        updated = copy.copy(pod)
        updated.status = copy.copy(pod.status)
        updated.status.conditions = conditions
        self.sim.update(updated)

    # ------------------------------------------------------------------ taint manager
    def _taint_pass(self, node_name: str, taints: list[Taint]) -> None:
        """handleNodeUpdate: every pod on the node against its (new) NoExecute taints."""
        cluster = self.sim.cluster
        keys = sorted(cluster.pods_on_node(node_name))
        for key in keys:
            if not taints:
                self._cancel(key)
            else:
                self._process(cluster.pods[key], taints)

    def _sync_pod(self, key: str) -> None:
        """handlePodUpdate: a pod gone, moved or replaced under the same name loses its
        pending eviction; one on a tainted node is (re)considered."""
        pod = self.sim.cluster.pods.get(key)
        pending = self._pending.get(key)
        if pending is not None and (
            pod is None or pod.metadata.uid != pending.pod.metadata.uid or pod.spec.node_name != pending.node
        ):
            self._cancel(key)
        if pod is None or not pod.spec.node_name:
            return
        seen = self._seen.get(pod.spec.node_name)
        if seen is not None and seen.noexec:
            self._process(pod, list(seen.noexec))

    def _process(self, pod: Pod, taints: list[Taint]) -> None:
        """processPodOnNode: evict now, schedule, keep, or cancel the pod's eviction."""
        key = pod.key
        if pod.is_terminating or pod.is_finished:
            return
        wait = toleration_time(pod.spec.tolerations, taints)
        if wait is None:
            self._cancel(key)
            self._evict(key)
            return
        if wait == math.inf:
            self._cancel(key)
            return
        now = self.sim.now
        start, due = now, now + wait
        pending = self._pending.get(key)
        if pending is not None:
            start = pending.created
            if start + wait < due or pending.due == start + wait:
                return  # the eviction already pending stands
            self._cancel(key)
        due = start + wait
        if due <= now:
            self._evict(key)
            return
        timer = self.sim.after(due - now, lambda: self._fire(key))
        self._pending[key] = _Pending(pod=pod, node=pod.spec.node_name, created=start, due=due, timer=timer)

    def _fire(self, key: str) -> None:
        if self._pending.pop(key, None) is not None:
            self._evict(key)

    def _evict(self, key: str) -> None:
        """deletePodHandler: the event, the DisruptionTarget condition, a graceful delete."""
        pod = self.sim.cluster.pods.get(key)
        if pod is None or pod.is_terminating:
            return
        self.sim.record(pod, TAINT_EVICTION_REASON, f"Marking for deletion Pod {key}")
        self._mark_disruption(pod, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
        self.sim.delete(Pod.KIND, key)

    def _cancel(self, key: str) -> None:
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.timer.cancel()
            self.sim.record(pending.pod, TAINT_EVICTION_REASON, f"Cancelling deletion of Pod {key}")
