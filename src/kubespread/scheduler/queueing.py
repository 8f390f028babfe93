"""Queueing hints: which cluster changes may make a rejected pod schedulable (kube v1.35's
EnqueueExtensions, fwk.ClusterEvent and QueueingHintFn).

A plugin that rejects pods declares, in ``events_to_register()``, the kinds of change
(:class:`EventKind`: a resource and a set of :class:`ActionType` bits) that can undo its
rejection, each with a hint function answering, for one pending pod and one concrete change,
:data:`QUEUE` or :data:`QUEUE_SKIP`. The scheduling queue asks only the plugins that rejected
the pod (see :mod:`kubespread.scheduler.queue`), so a cordon of an unrelated node no longer
retries a pod that NodeAffinity rejected.

This module also turns a :class:`~kubespread.cluster.events.ClusterEvent` into the events
kube-scheduler's informer handlers would raise (:func:`queueing_events`): a node update
becomes one event per changed scheduling property (``NodeSchedulingPropertiesChange``), a
bound pod's update one per changed pod property (``PodSchedulingPropertiesChange``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntFlag, StrEnum
from typing import TYPE_CHECKING, Any, Final

from kubespread.api.core import Node, Pod
from kubespread.api.resources import node_allocatable, pod_requests
from kubespread.cluster.events import ClusterEvent, EventType

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "ALL_EVENTS",
    "POD_ADD_LABEL_DELETE",
    "QUEUE",
    "QUEUE_SKIP",
    "UNSCHEDULABLE_TIMEOUT",
    "ActionType",
    "EventKind",
    "EventRegistration",
    "EventResource",
    "HintFn",
    "QueueingEvent",
    "QueueingHint",
    "node_update_actions",
    "pod_update_actions",
    "queueing_events",
]


class ActionType(IntFlag):
    """fwk.ActionType: what happened to the object; an event kind registers a union."""

    ADD = 1
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    #: a pod update that changed none of the above (status writes, annotations...): kube's
    #: unexported updatePodOther, so such an update matches no plugin registering a specific one
    UPDATE_POD_OTHER = 1 << 11
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_OTHER
    )
    ALL = ADD | DELETE | UPDATE


#: a pod that appears, changes labels or goes: what counting plugins (spread, affinity) watch
POD_ADD_LABEL_DELETE: Final = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE


class EventResource(StrEnum):
    NODE = "Node"
    POD = "Pod"
    #: any resource: the 5-minute flush (UnschedulableTimeout) and plugins without hints
    WILDCARD = "*"


@dataclass(frozen=True, slots=True)
class EventKind:
    """fwk.ClusterEvent: a resource and the actions on it."""

    resource: EventResource
    actions: ActionType

    @property
    def is_wildcard(self) -> bool:
        return self.resource is EventResource.WILDCARD

    def matches(self, incoming: EventKind) -> bool:
        """ClusterEvent.Match: a registered kind matches an incoming one of its resource
        sharing an action bit; a wildcard registration matches everything."""
        if self.is_wildcard:
            return True
        return self.resource is incoming.resource and bool(self.actions & incoming.actions)


#: what a plugin without hints is registered for: every event requeues its pods
ALL_EVENTS: Final = EventKind(EventResource.WILDCARD, ActionType.ALL)
#: the 5-minute flush of the unschedulable pool
UNSCHEDULABLE_TIMEOUT: Final = EventKind(EventResource.WILDCARD, ActionType.ALL)


class QueueingHint(StrEnum):
    QUEUE = "Queue"
    QUEUE_SKIP = "QueueSkip"


QUEUE: Final = QueueingHint.QUEUE
QUEUE_SKIP: Final = QueueingHint.QUEUE_SKIP


@dataclass(frozen=True, slots=True)
class QueueingEvent:
    """One change as the hint functions see it: its kind, the object before (None for an
    Add) and after (None for a Delete), and the cluster as it is now (for hints that need
    more than the object, e.g. PodTopologySpread's default constraints); None when the
    caller has none."""

    kind: EventKind
    old: Any = None
    new: Any = None
    cluster: ClusterState | None = None


#: a plugin's QueueingHintFn: may this change make ``pod`` (which the plugin rejected) schedulable?
HintFn = Callable[[Pod, QueueingEvent], QueueingHint]


@dataclass(frozen=True, slots=True)
class EventRegistration:
    """fwk.ClusterEventWithHint; ``hint`` None means always Queue (kube's default hint)."""

    kind: EventKind
    hint: HintFn | None = None


# ---------------------------------------------------------------------- what changed
def _conditions(node: Node) -> dict[str, str]:
    return {c.type: c.status for c in node.status.conditions}


def node_update_actions(old: Node, new: Node) -> list[ActionType]:
    """NodeSchedulingPropertiesChange: one action per changed scheduling property, in kube's
    order. A cordon (spec.unschedulable false -> true) is no action by itself (only the
    uncordon is, as UpdateNodeTaint): it can only make pods less schedulable."""
    out = []
    if old.spec.unschedulable and not new.spec.unschedulable:
        out.append(ActionType.UPDATE_NODE_TAINT)
    if node_allocatable(old) != node_allocatable(new):
        out.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if old.metadata.labels != new.metadata.labels:
        out.append(ActionType.UPDATE_NODE_LABEL)
    if old.spec.taints != new.spec.taints:
        out.append(ActionType.UPDATE_NODE_TAINT)
    if _conditions(old) != _conditions(new):
        out.append(ActionType.UPDATE_NODE_CONDITION)
    if old.metadata.annotations != new.metadata.annotations:
        out.append(ActionType.UPDATE_NODE_ANNOTATION)
    return out


def scaled_down(old: Pod, new: Pod) -> bool:
    """Some resource the old pod requested is requested less (or not at all) now."""
    if old.spec is new.spec:
        return False
    before, after = pod_requests(old), pod_requests(new)
    for want, now in (
        (before.milli_cpu, after.milli_cpu),
        (before.memory, after.memory),
        (before.ephemeral_storage, after.ephemeral_storage),
    ):
        if now < want:
            return True
    return any(after.scalar.get(name, 0) < amount for name, amount in before.scalar.items())


def pod_update_actions(old: Pod, new: Pod) -> list[ActionType]:
    """PodSchedulingPropertiesChange: labels, a scale-down, scheduling gates all removed,
    a changed number of tolerations; UPDATE_POD_OTHER when none of them changed."""
    out = []
    if old.metadata.labels != new.metadata.labels:
        out.append(ActionType.UPDATE_POD_LABEL)
    if scaled_down(old, new):
        out.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if old.spec.scheduling_gates and not new.spec.scheduling_gates:
        out.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(old.spec.tolerations) != len(new.spec.tolerations):
        out.append(ActionType.UPDATE_POD_TOLERATION)
    return out or [ActionType.UPDATE_POD_OTHER]


def _node_event(action: ActionType, old: Any, new: Any, cluster: ClusterState | None) -> QueueingEvent:
    return QueueingEvent(EventKind(EventResource.NODE, action), old, new, cluster)


def _pod_event(action: ActionType, old: Any, new: Any, cluster: ClusterState | None) -> QueueingEvent:
    return QueueingEvent(EventKind(EventResource.POD, action), old, new, cluster)


def queueing_events(ev: ClusterEvent, cluster: ClusterState | None = None) -> list[QueueingEvent]:
    """The events kube-scheduler's informer handlers raise for one ClusterState change, for
    nodes and for pods that occupy a node (AssignedPod Add/Update/Delete). A pod is assigned
    through BOUND (bind, or an add/update with spec.nodeName) and leaves its node through
    UNBOUND (delete or unbind): those are the Add and Delete. Changes of pending pods are the
    queue's own business (:meth:`~kubespread.scheduler.queue.SchedulingQueue.update`)."""
    if ev.kind == Node.KIND:
        if ev.type is EventType.ADDED:
            return [_node_event(ActionType.ADD, None, ev.obj, cluster)]
        if ev.type is EventType.DELETED:
            return [_node_event(ActionType.DELETE, ev.obj, None, cluster)]
        if ev.type is EventType.UPDATED and ev.old is not None:
            return [_node_event(a, ev.old, ev.obj, cluster) for a in node_update_actions(ev.old, ev.obj)]
        return []
    if ev.kind != Pod.KIND:
        return []
    if ev.type is EventType.BOUND:
        return [_pod_event(ActionType.ADD, None, ev.obj, cluster)]
    if ev.type is EventType.UNBOUND:
        # unbind() reports the pod as it is now (no node): the bound version is ``old``
        gone = ev.old if ev.old is not None and ev.old.spec.node_name else ev.obj
        return [_pod_event(ActionType.DELETE, gone, None, cluster)]
    old: Pod | None = ev.old
    pod: Pod = ev.obj
    if (
        ev.type is EventType.UPDATED
        and old is not None
        and pod.spec.node_name
        and old.spec.node_name == pod.spec.node_name
    ):
        return [_pod_event(a, old, pod, cluster) for a in pod_update_actions(old, pod)]
    return []
