"""The scheduling queue: kube-scheduler's PriorityQueue, reduced to what placement needs.

Three places a pending pod can be, as in kube (pkg/scheduler/backend/queue):

- **active**: ready to be tried, popped in the profile's QueueSort order (PrioritySort:
  higher priority first, then whoever entered the queue first);
- **backoff**: failed recently; it becomes active when its backoff expires. The backoff
  doubles with every failed attempt, from 1 s up to 10 s (podInitialBackoffSeconds,
  podMaxBackoffSeconds);
- **unschedulable**: failed, and waits for a cluster change that might help. A change moves
  every such pod to backoff (or straight to active when its backoff has already expired);
  kube's queueing hints would filter by event, we move them all (a superset, never a lost
  retry). A pod left there for 5 minutes is moved anyway (podMaxInUnschedulablePodsDuration).

Gated pods (a PreEnqueue plugin says no, e.g. schedulingGates) wait aside until an update
lets them in. The queue holds pod keys and times only; the caller owns the clock and the pods.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType

__all__ = [
    "INITIAL_BACKOFF_SECONDS",
    "MAX_BACKOFF_SECONDS",
    "MAX_UNSCHEDULABLE_SECONDS",
    "QueuedPodInfo",
    "SchedulingQueue",
    "follow_cluster_event",
]

INITIAL_BACKOFF_SECONDS: Final = 1.0
MAX_BACKOFF_SECONDS: Final = 10.0
MAX_UNSCHEDULABLE_SECONDS: Final = 300.0


@dataclass
class QueuedPodInfo:
    key: str
    priority: int
    timestamp: float  # when it entered the queue; the PrioritySort tie-break
    attempts: int = 0
    last_failure: float = 0.0
    unschedulable_since: float = 0.0

    def backoff_expiry(self) -> float:
        if self.attempts == 0:
            return self.last_failure
        # capped before doubling: 2 ** attempts overflows a float after ~1000 retries
        doublings = min(self.attempts - 1, 32)
        seconds = min(INITIAL_BACKOFF_SECONDS * 2.0**doublings, MAX_BACKOFF_SECONDS)
        return self.last_failure + seconds


class SchedulingQueue:
    """Pending pods by key. ``gate(pod)`` answers whether a pod may enter (PreEnqueue)."""

    def __init__(self, gate: Callable[[Pod], bool] = lambda pod: True) -> None:
        self._gate = gate
        self._infos: dict[str, QueuedPodInfo] = {}
        self._active: list[tuple[int, float, int, str]] = []
        self._in_active: set[str] = set()
        self._backoff: set[str] = set()
        self._unschedulable: set[str] = set()
        self._gated: set[str] = set()
        self._seq = itertools.count()

    # ------------------------------------------------------------------ entering
    def add(self, pod: Pod, now: float) -> None:
        """A new pending pod (or one that came back unbound)."""
        key = pod.key
        self.delete(key)
        info = QueuedPodInfo(key, pod.spec.priority or 0, now)
        self._infos[key] = info
        if self._gate(pod):
            self._push_active(info)
        else:
            self._gated.add(key)

    def update(self, pod: Pod, now: float) -> None:
        """The pending pod changed (labels, gates, spec): it gets a fresh chance, as kube moves
        an updated unschedulable pod out of the unschedulable pool."""
        key = pod.key
        info = self._infos.get(key)
        if info is None:
            self.add(pod, now)
            return
        info.priority = pod.spec.priority or 0
        if key in self._gated:
            if self._gate(pod):
                self._gated.discard(key)
                self._push_active(info)
            return
        if not self._gate(pod):
            self._remove_from_pools(key)
            self._gated.add(key)
        elif key in self._unschedulable:
            self._unschedulable.discard(key)
            self._to_backoff_or_active(info, now)

    def delete(self, key: str) -> None:
        """The pod is gone or bound: forget it."""
        if self._infos.pop(key, None) is not None:
            self._remove_from_pools(key)
            self._gated.discard(key)

    def _remove_from_pools(self, key: str) -> None:
        self._in_active.discard(key)  # its heap entry is skipped when popped
        self._backoff.discard(key)
        self._unschedulable.discard(key)

    def _push_active(self, info: QueuedPodInfo) -> None:
        self._in_active.add(info.key)
        heapq.heappush(self._active, (-info.priority, info.timestamp, next(self._seq), info.key))

    def _to_backoff_or_active(self, info: QueuedPodInfo, now: float) -> None:
        if info.backoff_expiry() > now:
            self._backoff.add(info.key)
        else:
            self._push_active(info)

    # ------------------------------------------------------------------ leaving
    def pop(self) -> QueuedPodInfo | None:
        """The next pod to try, by priority then queue time; None when none is active."""
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            if key in self._in_active:
                self._in_active.discard(key)
                return self._infos[key]
        return None

    def has_active(self) -> bool:
        return bool(self._in_active)

    def failed(self, key: str, now: float) -> QueuedPodInfo | None:
        """The attempt found no node: the pod waits in the unschedulable pool."""
        info = self._infos.get(key)
        if info is None:
            return None
        info.attempts += 1
        info.last_failure = now
        info.unschedulable_since = now
        self._unschedulable.add(key)
        return info

    def errored(self, key: str, now: float) -> None:
        """The attempt failed for another reason than the cluster (an API error while binding):
        the pod backs off and is tried again, change or not (kube's backoffQ)."""
        info = self._infos.get(key)
        if info is None:
            return
        info.attempts += 1
        info.last_failure = now
        self._remove_from_pools(key)
        self._backoff.add(key)

    # ------------------------------------------------------------------ moving
    def move_all_to_active_or_backoff(self, now: float) -> list[QueuedPodInfo]:
        """A cluster change: every unschedulable pod gets another try after its backoff.
        Returns the pods now in backoff, so the caller can wake them at their expiry."""
        waiting = []
        for key in sorted(self._unschedulable, key=lambda k: self._infos[k].timestamp):
            info = self._infos[key]
            self._to_backoff_or_active(info, now)
            if key in self._backoff:
                waiting.append(info)
        self._unschedulable.clear()
        return waiting

    def flush_backoff_completed(self, now: float) -> None:
        """Move every pod whose backoff has ended to active (flushBackoffQCompleted; the
        caller's timer, one per distinct expiry)."""
        done = [k for k in self._backoff if self._infos[k].backoff_expiry() <= now]
        for key in sorted(done, key=lambda k: (self._infos[k].timestamp, k)):
            self._backoff.discard(key)
            self._push_active(self._infos[key])

    def flush_unschedulable_leftover(self, key: str, now: float) -> None:
        """The 5-minute rule for one pod (the caller's timer): still unschedulable since then,
        it is moved to active or backoff."""
        info = self._infos.get(key)
        if (
            info is not None
            and key in self._unschedulable
            and now - info.unschedulable_since >= MAX_UNSCHEDULABLE_SECONDS
        ):
            self._unschedulable.discard(key)
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
        """active | backoff | unschedulable | gated | '' (not queued), for reports and tests."""
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


def follow_cluster_event(
    queue: SchedulingQueue, ev: ClusterEvent, now: float, wanted: Callable[[Pod], bool]
) -> bool:
    """Keep ``queue`` in step with one change of the cluster; True when the change may help
    pending pods (kube's informer event handlers). ``wanted(pod)``: a pending pod this
    scheduler schedules. A pending pod's own status updates (its conditions) change nothing,
    so writing FailedScheduling conditions does not wake every pod again."""
    if ev.kind != Pod.KIND:
        return True
    pod: Pod = ev.obj
    key = pod.key
    if ev.type is EventType.ADDED:
        if not pod.spec.node_name and wanted(pod):
            queue.add(pod, now)
        return False
    if ev.type is EventType.UPDATED:
        old: Pod | None = ev.old
        same = old is not None and old.spec is pod.spec and old.metadata.labels == pod.metadata.labels
        if pod.spec.node_name:
            return not same or pod.is_terminating != (old is not None and old.is_terminating)
        if pod.is_terminating or pod.is_finished:
            queue.delete(key)
        elif key not in queue:
            if wanted(pod):
                queue.add(pod, now)
        elif not same:
            queue.update(pod, now)
        return False
    if ev.type is EventType.DELETED or ev.type is EventType.BOUND:
        queue.delete(key)
        return True
    return ev.type is EventType.UNBOUND
