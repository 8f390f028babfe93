"""The scheduling queue: kube-scheduler's PriorityQueue (v1.35, queueing hints on), reduced to
what placement needs.

Three places a pending pod can be, as in kube (pkg/scheduler/backend/queue):

- **active**: ready to be tried, popped in the profile's QueueSort order (PrioritySort:
  higher priority first, then whoever entered the queue first);
- **backoff**: failed recently; it becomes active when its backoff expires. The backoff
  doubles with every failed attempt, from 1 s up to 10 s (podInitialBackoffSeconds,
  podMaxBackoffSeconds);
- **unschedulable**: failed, and waits for a cluster change that might help. The queue
  remembers which plugins rejected the pod (its *unschedulable plugins*, and *pending
  plugins* for a Pending status) and, on each change, asks only their queueing hints
  (:mod:`kubespread.scheduler.queueing`): the pod moves (to backoff, or to active when its
  backoff is over; straight to active when a pending plugin says Queue) only when one of
  them answers Queue. So a cordon of an unrelated node does not retry a pod NodeAffinity
  rejected. A pod rejected with no plugin recorded, or by a plugin without hints, moves on any
  change. A pod left there for 5 minutes is moved anyway (podMaxInUnschedulablePodsDuration,
  the UnschedulableTimeout event). The pool is kept in groups of pods every hint answers alike
  for (one pod template by content, :mod:`kubespread.scheduler.hintkeys`; the same rejecting
  plugins; one profile): a change asks each group once, not each of a ReplicaSet's pods, and
  moves the pods in the order asking each would.

A pod being scheduled is *in flight* from ``pop`` until ``failed``/``errored``/``delete``: the
changes that arrive meanwhile are kept, and when the attempt fails, one that a rejecting
plugin's hint says may help sends the pod to backoff instead of the unschedulable pool (the
change happened after the cycle read the cluster; kube's in-flight events).

Gated pods (a PreEnqueue plugin says no, e.g. schedulingGates) wait aside until an update
lets them in. The queue holds pod keys, times and the last seen pod; the caller owns the clock.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.hintkeys import PodTemplates
from kubespread.scheduler.queueing import (
    QUEUE_SKIP,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    HintFn,
    QueueingEvent,
    pod_update_actions,
    queueing_events,
)

__all__ = [
    "INITIAL_BACKOFF_SECONDS",
    "MAX_BACKOFF_SECONDS",
    "MAX_UNSCHEDULABLE_SECONDS",
    "QueuedPodInfo",
    "QueueingStrategy",
    "Registrations",
    "SchedulingQueue",
    "follow_cluster_event",
]

INITIAL_BACKOFF_SECONDS: Final = 1.0
MAX_BACKOFF_SECONDS: Final = 10.0
MAX_UNSCHEDULABLE_SECONDS: Final = 300.0

#: plugin name -> the events it registered with their hints (one profile's queueingHintMap)
Registrations = Mapping[str, Sequence[EventRegistration]]


class QueueingStrategy(IntEnum):
    """What a change means for one unschedulable pod, ordered by strength."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


@dataclass
class QueuedPodInfo:
    key: str
    priority: int
    timestamp: float  # when it entered the queue; the PrioritySort tie-break
    attempts: int = 0
    last_failure: float = 0.0
    unschedulable_since: float = 0.0
    #: the pod as last seen (what the hints are asked about)
    pod: Pod | None = None
    #: the plugins whose PreFilter/Filter rejected it in its last attempt
    unschedulable_plugins: frozenset[str] = field(default_factory=frozenset)
    #: the plugins that answered Pending (a Queue from them skips the backoff)
    pending_plugins: frozenset[str] = field(default_factory=frozenset)

    def backoff_expiry(self) -> float:
        if self.attempts == 0:
            return self.last_failure
        # capped before doubling: 2 ** attempts overflows a float after ~1000 retries
        doublings = min(self.attempts - 1, 32)
        seconds = min(INITIAL_BACKOFF_SECONDS * 2.0**doublings, MAX_BACKOFF_SECONDS)
        return self.last_failure + seconds


def _no_registrations(pod: Pod) -> Registrations | None:
    return None


#: per rejecting plugin (sorted by name) that registered for an event kind: whether it answered
#: Pending, and the hints of its registrations matching the kind, in order
_Plan = tuple[tuple[bool, tuple[HintFn | None, ...]], ...]

#: (pod template id, unschedulable plugins, pending plugins, id of the profile's registrations);
#: None for the pods every change moves (no rejecting plugin recorded, no known hints)
_GroupKey = tuple[int, frozenset[str], frozenset[str], int] | None


@dataclass(eq=False, slots=True)
class _Group:
    """Unschedulable pods that every queueing hint answers alike on any event: one content
    (:class:`~kubespread.scheduler.hintkeys.PodTemplates`), the same rejecting plugins, the
    same profile. ``registrations`` keeps the profile's map alive, so its id stays its own."""

    registrations: Registrations | None
    members: dict[str, None] = field(default_factory=dict)


class SchedulingQueue:
    """Pending pods by key. ``gate(pod)`` answers whether a pod may enter (PreEnqueue);
    ``registrations(pod)`` the queueing hints of the pod's profile (None: unknown, so any
    change moves the pod)."""

    def __init__(
        self,
        gate: Callable[[Pod], bool] = lambda pod: True,
        registrations: Callable[[Pod], Registrations | None] = _no_registrations,
    ) -> None:
        self._gate = gate
        self._registrations = registrations
        self._infos: dict[str, QueuedPodInfo] = {}
        self._active: list[tuple[int, float, int, str]] = []
        self._in_active: set[str] = set()
        self._backoff: set[str] = set()
        #: unschedulable pod key -> its (queue time, key), the order they are moved in;
        #: ``_unschedulable_order`` holds the same pairs sorted, so an event sorts nothing
        self._unschedulable: dict[str, tuple[float, str]] = {}
        self._unschedulable_order: list[tuple[float, str]] = []
        #: the unschedulable pods in groups a hint answers once for (:meth:`on_event`)
        self._groups: dict[_GroupKey, _Group] = {}
        self._group_of: dict[str, _GroupKey] = {}
        self._templates = PodTemplates()
        self._gated: set[str] = set()
        #: pod key -> (the pod object, its profile's registrations), asked once per object
        self._registrations_of: dict[str, tuple[Pod, Registrations | None]] = {}
        #: (unschedulable plugins, pending plugins, id(registrations), event kind) -> the hints
        #: to ask; the registrations are kept in ``_plan_registrations`` so their id stays theirs
        self._plans: dict[tuple[frozenset[str], frozenset[str], int, EventKind], _Plan] = {}
        self._plan_registrations: dict[int, Registrations] = {}
        self._seq = itertools.count()
        #: in-flight pods -> where their events start in ``_flight_events``
        self._in_flight: dict[str, int] = {}
        #: the changes seen while some pod was in flight (and whose pod it was, for a pod's
        #: own update)
        self._flight_events: list[tuple[QueueingEvent, str]] = []

    # ------------------------------------------------------------------ entering
    def add(self, pod: Pod, now: float) -> None:
        """A new pending pod (or one that came back unbound)."""
        key = pod.key
        self.delete(key)
        info = QueuedPodInfo(key, pod.spec.priority or 0, now, pod=pod)
        self._infos[key] = info
        if self._gate(pod):
            self._push_active(info)
        else:
            self._gated.add(key)

    def update(self, pod: Pod, now: float) -> None:
        """The pending pod changed. Gated: it enters when its gates allow. Unschedulable: the
        change is a pod event (label, toleration, gates... kube's PodSchedulingPropertiesChange)
        that the rejecting plugins' hints judge, as kube's Update does. In flight: the change
        is kept for when the attempt ends."""
        key = pod.key
        info = self._infos.get(key)
        if info is None:
            self.add(pod, now)
            return
        old = info.pod
        info.pod = pod
        info.priority = pod.spec.priority or 0
        if key in self._gated:
            if self._gate(pod):
                self._gated.discard(key)
                self._push_active(info)
            return
        if not self._gate(pod):
            self._remove_from_pools(key)
            self._end_flight(key)
            self._gated.add(key)
            return
        events = [
            QueueingEvent(EventKind(EventResource.POD, a), old, pod)
            for a in (pod_update_actions(old, pod) if old is not None else [ActionType.UPDATE])
        ]
        if key in self._in_flight:
            self._flight_events.extend((e, key) for e in events)
        elif key in self._unschedulable:
            strategy = max((self.worth_requeuing(info, e) for e in events), default=QueueingStrategy.SKIP)
            if strategy is not QueueingStrategy.SKIP:
                self._requeue(info, strategy, now)
            else:
                self._file(info)  # its content changed: maybe another group

    def delete(self, key: str) -> None:
        """The pod is gone or bound: forget it."""
        if self._infos.pop(key, None) is not None:
            self._remove_from_pools(key)
            self._gated.discard(key)
            self._registrations_of.pop(key, None)
        self._end_flight(key)

    def _remove_from_pools(self, key: str) -> None:
        self._in_active.discard(key)  # its heap entry is skipped when popped
        self._backoff.discard(key)
        self._leave_unschedulable(key)

    def _enter_unschedulable(self, info: QueuedPodInfo) -> None:
        if info.key not in self._unschedulable:
            entry = self._unschedulable[info.key] = (info.timestamp, info.key)
            bisect.insort(self._unschedulable_order, entry)
            self._file(info)

    def _leave_unschedulable(self, key: str) -> None:
        entry = self._unschedulable.pop(key, None)
        if entry is not None:
            order = self._unschedulable_order
            del order[bisect.bisect_left(order, entry)]
            self._unfile(key)

    def _file(self, info: QueuedPodInfo) -> None:
        """Put an unschedulable pod in the group of the pods its hints answer alike for."""
        self._unfile(info.key)
        registrations = None
        if (info.unschedulable_plugins or info.pending_plugins) and info.pod is not None:
            registrations = self._registrations_for(info.key, info.pod)
        gkey: _GroupKey = None
        if registrations is not None and info.pod is not None:
            template = self._templates.id_of(info.pod)
            gkey = (template, info.unschedulable_plugins, info.pending_plugins, id(registrations))
        group = self._groups.get(gkey)
        if group is None:
            group = self._groups[gkey] = _Group(registrations)
        group.members[info.key] = None
        self._group_of[info.key] = gkey

    def _unfile(self, key: str) -> None:
        if key not in self._group_of:
            return
        gkey = self._group_of.pop(key)
        group = self._groups[gkey]
        del group.members[key]
        if not group.members:
            del self._groups[gkey]

    def _push_active(self, info: QueuedPodInfo) -> None:
        self._in_active.add(info.key)
        heapq.heappush(self._active, (-info.priority, info.timestamp, next(self._seq), info.key))

    def _to_backoff_or_active(self, info: QueuedPodInfo, now: float) -> None:
        if info.backoff_expiry() > now:
            self._backoff.add(info.key)
        else:
            self._push_active(info)

    def _requeue(self, info: QueuedPodInfo, strategy: QueueingStrategy, now: float) -> None:
        """requeuePodWithQueueingStrategy, for a pod leaving the unschedulable pool."""
        self._leave_unschedulable(info.key)
        if strategy is QueueingStrategy.IMMEDIATELY:
            self._push_active(info)
        else:
            self._to_backoff_or_active(info, now)

    # ------------------------------------------------------------------ in flight
    def _end_flight(self, key: str) -> list[tuple[QueueingEvent, str]]:
        """The pod's attempt is over: the events seen since it was popped."""
        start = self._in_flight.pop(key, None)
        seen = self._flight_events[start:] if start is not None else []
        if not self._in_flight:
            self._flight_events.clear()
        return seen

    # ------------------------------------------------------------------ leaving
    def pop(self) -> QueuedPodInfo | None:
        """The next pod to try, by priority then queue time; None when none is active. The pod
        is in flight until its attempt's outcome is reported."""
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            if key in self._in_active:
                self._in_active.discard(key)
                self._in_flight[key] = len(self._flight_events)
                return self._infos[key]
        return None

    def has_active(self) -> bool:
        return bool(self._in_active)

    def record_rejection(
        self, key: str, unschedulable_plugins: Iterable[str], pending_plugins: Iterable[str] = ()
    ) -> None:
        """Which plugins rejected the pod in the attempt now ending (before ``failed``)."""
        info = self._infos.get(key)
        if info is not None:
            info.unschedulable_plugins = frozenset(unschedulable_plugins)
            info.pending_plugins = frozenset(pending_plugins)
            if key in self._unschedulable:
                self._file(info)

    def failed(self, key: str, now: float) -> QueuedPodInfo | None:
        """The attempt found no node (AddUnschedulableIfNotPresent): the pod waits in the
        unschedulable pool, unless a change seen while it was in flight may help, by its
        rejecting plugins' hints: then it goes to backoff (or active) at once."""
        seen = self._end_flight(key)
        info = self._infos.get(key)
        if info is None:
            return None
        info.attempts += 1
        info.last_failure = now
        info.unschedulable_since = now
        self._remove_from_pools(key)
        strategy = QueueingStrategy.SKIP
        for event, owner in seen:
            if event.kind.resource is EventResource.POD and owner and owner != key:
                continue  # another pending pod's own update
            strategy = max(strategy, self.worth_requeuing(info, event))
            if strategy is QueueingStrategy.IMMEDIATELY:
                break
        if strategy is QueueingStrategy.SKIP:
            self._enter_unschedulable(info)
        else:
            self._requeue(info, strategy, now)
        return info

    def park(self, key: str) -> None:
        """A popped pod a PreEnqueue check turns back (kube's DefaultPreemption while the pod's
        own preemption is under way): it waits in the unschedulable pool for a change its
        rejecting plugins' hints accept, its attempts not counted."""
        self._end_flight(key)
        info = self._infos.get(key)
        if info is None:
            return
        self._remove_from_pools(key)
        self._enter_unschedulable(info)

    def errored(self, key: str, now: float) -> None:
        """The attempt failed for another reason than the cluster (an API error while binding):
        the pod backs off and is tried again, change or not (kube's backoffQ)."""
        self._end_flight(key)
        info = self._infos.get(key)
        if info is None:
            return
        info.attempts += 1
        info.last_failure = now
        self._remove_from_pools(key)
        self._backoff.add(key)

    # ------------------------------------------------------------------ hints
    def worth_requeuing(self, info: QueuedPodInfo, event: QueueingEvent) -> QueueingStrategy:
        """isPodWorthRequeuing: ask the hints of the plugins that rejected the pod. No
        rejecting plugin recorded, a wildcard event, or no known hints: after backoff. A
        Queue from a pending plugin: immediately; from an unschedulable plugin: after
        backoff; none: skip."""
        if (
            not (info.unschedulable_plugins or info.pending_plugins)
            or event.kind.is_wildcard
            or info.pod is None
        ):
            return QueueingStrategy.AFTER_BACKOFF
        pod = info.pod
        registrations = self._registrations_for(info.key, pod)
        if registrations is None:
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.SKIP
        for pending, hints in self._plan(info, registrations, event.kind):
            for hint in hints:
                if hint is not None and hint(pod, event) is QUEUE_SKIP:
                    continue
                if pending:
                    return QueueingStrategy.IMMEDIATELY
                strategy = QueueingStrategy.AFTER_BACKOFF
                break
        return strategy

    def _registrations_for(self, key: str, pod: Pod) -> Registrations | None:
        """The pod's profile's registrations, asked once per pod object."""
        known = self._registrations_of.get(key)
        if known is not None and known[0] is pod:
            return known[1]
        registrations = self._registrations(pod)
        self._registrations_of[key] = (pod, registrations)
        return registrations

    def _plan(self, info: QueuedPodInfo, registrations: Registrations, kind: EventKind) -> _Plan:
        """Which hints :meth:`worth_requeuing` asks for a pod rejected as ``info`` was, on an
        event of ``kind``: the same for every pod rejected by the same plugins of one profile."""
        key = (info.unschedulable_plugins, info.pending_plugins, id(registrations), kind)
        plan = self._plans.get(key)
        if plan is not None and self._plan_registrations.get(id(registrations)) is registrations:
            return plan
        if len(self._plans) >= 4096:
            self._plans.clear()
            self._plan_registrations.clear()
        steps = []
        for plugin in sorted(info.unschedulable_plugins | info.pending_plugins):
            hints = tuple(reg.hint for reg in registrations.get(plugin, ()) if reg.kind.matches(kind))
            if hints:
                steps.append((plugin in info.pending_plugins, hints))
        plan = self._plans[key] = tuple(steps)
        self._plan_registrations[id(registrations)] = registrations
        return plan

    # ------------------------------------------------------------------ moving
    def on_event(
        self, event: QueueingEvent, now: float, pre_check: Callable[[Pod], bool] | None = None
    ) -> list[QueuedPodInfo]:
        """MoveAllToActiveOrBackoffQueue for one change: every unschedulable pod (that passes
        ``pre_check``) some rejecting plugin's hint says may now fit moves to backoff, or to
        active when its backoff is over. The change is kept for the pods in flight. Returns
        the moved pods."""
        if event.kind.is_wildcard:
            moved = self._each(event, now, pre_check)
        else:
            moved = self._by_group(event, now, pre_check)
        if self._in_flight:
            self._flight_events.append((event, ""))
        return moved

    def _each(
        self, event: QueueingEvent, now: float, pre_check: Callable[[Pod], bool] | None
    ) -> list[QueuedPodInfo]:
        """:meth:`on_event` asking every pod in the pool's order (a wildcard event: every
        pod moves after its backoff)."""
        moved = []
        for _, key in list(self._unschedulable_order):  # (a copy: moving a pod takes it out)
            info = self._infos[key]
            if pre_check is not None and (info.pod is None or not pre_check(info.pod)):
                continue
            strategy = self.worth_requeuing(info, event)
            if strategy is not QueueingStrategy.SKIP:
                self._requeue(info, strategy, now)
                moved.append(info)
        return moved

    def _by_group(
        self, event: QueueingEvent, now: float, pre_check: Callable[[Pod], bool] | None
    ) -> list[QueuedPodInfo]:
        """:meth:`on_event` asking the hints once per group (pods of one template, rejected by
        the same plugins of one profile) for the pods that pass ``pre_check``, then moving
        every pod of the groups answered Queue in the pool's order, as asking each pod in that
        order would. A pod the event is about (its own key: hints compare it) is asked alone."""
        own: set[str] = set()
        if event.kind.resource is EventResource.POD:
            own = {p.key for p in (event.old, event.new) if p is not None and p.key in self._group_of}
        chosen: list[tuple[tuple[float, str], QueueingStrategy]] = []
        unschedulable = self._unschedulable
        infos = self._infos
        worth = self.worth_requeuing
        for group in self._groups.values():
            members: Iterable[str] = group.members
            if pre_check is not None:
                members = [k for k in members if (pod := infos[k].pod) is not None and pre_check(pod)]
            answer: QueueingStrategy | None = None
            if own:
                for key in members:
                    if key in own:
                        strategy = worth(infos[key], event)
                    else:
                        if answer is None:
                            answer = worth(infos[key], event)
                        strategy = answer
                    if strategy is not QueueingStrategy.SKIP:
                        chosen.append((unschedulable[key], strategy))
                continue
            for key in members:
                answer = worth(infos[key], event)
                break
            if answer is not None and answer is not QueueingStrategy.SKIP:
                chosen.extend((unschedulable[key], answer) for key in members)
        if not chosen:
            return []
        chosen.sort()
        moved = []
        for (_, key), strategy in chosen:
            info = infos[key]
            self._requeue(info, strategy, now)
            moved.append(info)
        return moved

    def move_all_to_active_or_backoff(self, now: float) -> list[QueuedPodInfo]:
        """A change every pod should see (a wildcard event): every unschedulable pod gets
        another try after its backoff. Returns the pods now in backoff, so the caller can
        wake them at their expiry."""
        moved = self.on_event(QueueingEvent(UNSCHEDULABLE_TIMEOUT), now)
        return [info for info in moved if info.key in self._backoff]

    def flush_backoff_completed(self, now: float) -> None:
        """Move every pod whose backoff has ended to active (flushBackoffQCompleted; the
        caller's timer, one per distinct expiry)."""
        done = [k for k in self._backoff if self._infos[k].backoff_expiry() <= now]
        for key in sorted(done, key=lambda k: (self._infos[k].timestamp, k)):
            self._backoff.discard(key)
            self._push_active(self._infos[key])

    def flush_unschedulable_leftover(self, key: str, now: float) -> None:
        """The 5-minute rule for one pod (the caller's timer): still unschedulable since then,
        it is moved to active or backoff, whatever its rejecting plugins (UnschedulableTimeout
        is a wildcard event)."""
        info = self._infos.get(key)
        if (
            info is not None
            and key in self._unschedulable
            and now - info.unschedulable_since >= MAX_UNSCHEDULABLE_SECONDS
        ):
            self._leave_unschedulable(key)
            self._to_backoff_or_active(info, now)

    def leftover_due(self, key: str, now: float) -> bool:
        """Whether the 5-minute rule would move this pod now."""
        info = self._infos.get(key)
        return (
            info is not None
            and key in self._unschedulable
            and now - info.unschedulable_since >= MAX_UNSCHEDULABLE_SECONDS
        )

    def repeat_failures(self, key: str, times: int, last: float) -> None:
        """Count ``times`` more failed attempts, the last at ``last``, without making them: the
        retries a host skipped because the cluster had not changed (each would have failed as
        the one before)."""
        info = self._infos.get(key)
        if info is None or times <= 0:
            return
        info.attempts += times
        info.last_failure = info.unschedulable_since = last

    def flush_unschedulable_leftovers(self, now: float) -> None:
        """The 5-minute rule for every pod, for a caller that polls instead of setting timers."""
        for key in sorted(self._unschedulable):
            self.flush_unschedulable_leftover(key, now)

    # ------------------------------------------------------------------ reading
    def __contains__(self, key: object) -> bool:
        return key in self._infos

    def __len__(self) -> int:
        return len(self._infos)

    def info(self, key: str) -> QueuedPodInfo | None:
        return self._infos.get(key)

    def where(self, key: str) -> str:
        """active | backoff | unschedulable | gated | '' (not queued, or in flight), for
        reports and tests."""
        if key in self._in_active:
            return "active"
        for name, pool in (
            ("backoff", self._backoff),
            ("unschedulable", self._unschedulable),
            ("gated", self._gated),
        ):
            if key in pool:
                return name
        return ""


def _not_above(priority: int) -> Callable[[Pod], bool]:
    return lambda pod: (pod.spec.priority or 0) <= priority


def follow_cluster_event(
    queue: SchedulingQueue,
    ev: ClusterEvent,
    now: float,
    wanted: Callable[[Pod], bool],
    cluster: ClusterState | None = None,
) -> list[QueuedPodInfo] | None:
    """Keep ``queue`` in step with one change of the cluster (kube's informer event handlers):
    pending pods in, updated, out; nodes and bound pods raise the queueing events that may
    move unschedulable pods (:func:`~kubespread.scheduler.queueing.queueing_events`).
    ``wanted(pod)``: a pending pod this scheduler schedules. Returns the unschedulable pods
    moved, or None when the change raised no queueing event. A pending pod's own status
    updates (its conditions) change nothing, so writing FailedScheduling conditions does not
    wake it again."""
    events = queueing_events(ev, cluster)
    if ev.kind == Pod.KIND:
        _follow_pending(queue, ev, now, wanted, events, cluster)
    if not events:
        return None
    moved: list[QueuedPodInfo] = []
    for event in events:
        pre_check = None
        if event.kind.resource is EventResource.POD and event.kind.actions is ActionType.DELETE:
            gone: Pod = event.old
            if not gone.spec.node_name:  # a nominated pod: only pods it could have blocked
                pre_check = _not_above(gone.spec.priority or 0)
        moved += queue.on_event(event, now, pre_check)
    return moved


def _follow_pending(
    queue: SchedulingQueue,
    ev: ClusterEvent,
    now: float,
    wanted: Callable[[Pod], bool],
    events: list[QueueingEvent],
    cluster: ClusterState | None,
) -> None:
    """The pending pod's own entry; a nominated pod that goes, or loses its nomination, frees
    the room kept for it: an AssignedPod Delete for the pods of no higher priority."""
    pod: Pod = ev.obj
    key = pod.key
    if ev.type is EventType.ADDED:
        if not pod.spec.node_name and wanted(pod):
            queue.add(pod, now)
        return
    if ev.type is EventType.UPDATED:
        old: Pod | None = ev.old
        if pod.spec.node_name:
            return
        if (
            old is not None
            and old.status.nominated_node_name
            and (old.status.nominated_node_name != pod.status.nominated_node_name)
        ):
            events.append(QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), old, None, cluster))
        if pod.is_terminating or pod.is_finished:
            queue.delete(key)
        elif key not in queue:
            if wanted(pod):
                queue.add(pod, now)
        elif old is None or old.spec is not pod.spec or old.metadata.labels != pod.metadata.labels:
            queue.update(pod, now)
        return
    if ev.type is EventType.DELETED or ev.type is EventType.BOUND:
        queue.delete(key)
        if ev.type is EventType.DELETED and not pod.spec.node_name and pod.status.nominated_node_name:
            events.append(QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), pod, None, cluster))
