"""A secondary scheduler on a live cluster: kubespread's engine deciding, the API binding.

It schedules the pending pods whose ``spec.schedulerName`` is one of its profiles, as a second
kube-scheduler would:

- the cluster comes from list+watch (:mod:`.informer`); the scheduling loop is the
  simulator's own (:class:`~kubespread.scheduler.loop.SchedulingLoop`: the same queue, with
  priority then arrival, backoff 1 s doubling to 10 s, unschedulable pods retried when the
  cluster changes or after 5 minutes; the same seeded tie-break generator), so the same pods
  in the same order on the same nodes land where ``kubespread schedule`` puts them;
  this module is its binder;
- a chosen pod is assumed onto its node in the cache, then bound through ``pods/binding``
  (with its uid, so a pod recreated under the same name is not bound by mistake). Success
  records ``Scheduled``; 409 means someone else bound it (or a lost answer to our own bind was
  applied): the pod is read again and left as the API says, never bound twice; an unreachable
  API server sends the pod to backoff, and the watches list again when it is back;
- a pod that fits nowhere gets kube-scheduler's FitError as a ``FailedScheduling`` Event and
  as the ``PodScheduled=False`` condition with reason ``Unschedulable``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.live.informer import ClusterCache, Reflector, start_reflectors
from kubespread.live.kube import STRATEGIC_MERGE_PATCH, ApiError, KubeApi
from kubespread.live.leader import LeaderElector
from kubespread.live.recorder import EventRecorder, now_stamp
from kubespread.scheduler.loop import SchedulingLoop
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.queue import SchedulingQueue
from kubespread.scheduler.scheduler import Decision

if TYPE_CHECKING:
    from kubespread.live.metrics import SchedulerMetrics

__all__ = ["SchedulerStats", "SecondaryScheduler", "instance_name"]

log = logging.getLogger("kubespread.scheduler")

#: what the scheduler watches: nodes and every pod (topology counts, resources), namespaces
#: (namespaceSelector) and PriorityClasses are read by the API server's admission already
WATCHED_KINDS: Final = ("Node", "Namespace", "Pod")
IDLE_WAIT_SECONDS: Final = 0.5


def instance_name() -> str:
    """hostname_pid-ish identity for Events and the Lease, as kube components use."""
    return f"{socket.gethostname()}_{os.getpid()}"


@dataclass
class SchedulerStats:
    """What happened, for logs, tests and the exit summary."""

    attempts: int = 0
    bound: int = 0
    unschedulable: int = 0
    bind_conflicts: int = 0
    bind_errors: int = 0


class SecondaryScheduler:
    """Schedules the pods of ``profiles`` (schedulerName -> Profile) until ``stop`` is set."""

    def __init__(
        self,
        api: KubeApi,
        profiles: Mapping[str, Profile],
        *,
        seed: int = 0,
        stop: threading.Event | None = None,
        identity: str | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.api = api
        self.loop = SchedulingLoop(profiles, seed=seed)
        self.stop = stop or threading.Event()
        self.identity = identity or instance_name()
        self.cache = ClusterCache()
        self.loop.cluster = self.cache.cluster  # what the queueing hints read
        self.recorder = EventRecorder(api, "kubespread-scheduler", self.identity)
        self.stats = SchedulerStats()
        self.reflectors: list[Reflector] = []
        self._conditions: dict[str, str] = {}  # pod uid -> the Unschedulable message it carries
        self._last_leftover_sweep = 0.0
        self._outcome: tuple[Pod, Decision] | None = None  # decided under the lock, applied after
        self.cache.cluster.subscribe(self._on_event)
        #: kube-scheduler's metrics and the health probes (live.metrics), when served
        self.metrics = metrics
        if metrics is not None:
            metrics.attach(self)

    @property
    def profiles(self) -> dict[str, Profile]:
        return self.loop.profiles

    @property
    def queue(self) -> SchedulingQueue:
        return self.loop.queue

    # ------------------------------------------------------------------ queue upkeep
    def _on_event(self, ev: ClusterEvent) -> None:
        # runs in a reflector thread, under the cache lock
        self.loop.follow(ev, time.monotonic())
        if ev.kind == Pod.KIND and ev.type in (EventType.DELETED, EventType.BOUND):
            self._conditions.pop(ev.obj.metadata.uid, None)

    # ------------------------------------------------------------------ running
    def start(self, timeout: float = 60.0) -> None:
        """List and watch; returns once every kind has been listed."""
        self.reflectors = start_reflectors(self.api, WATCHED_KINDS, self.cache, self.stop, timeout=timeout)
        log.info(
            "scheduler %s: watching %d nodes, %d pods; profiles %s",
            self.identity,
            len(self.cache.cluster.nodes),
            len(self.cache.cluster.pods),
            ", ".join(sorted(self.profiles)),
        )

    def run(self, leader: LeaderElector | None = None) -> None:
        """Schedule until ``stop`` (or, with a leader elector, until leadership is lost)."""
        if not self.reflectors:
            self.start()
        while not self.stop.is_set():
            if self.metrics is not None:
                self.metrics.health.beat()
            if leader is not None and not leader.leading.is_set():
                if leader.lost.is_set():
                    return
                leader.leading.wait(0.5)
                continue
            if not self.step():
                self.cache.changed.wait(IDLE_WAIT_SECONDS)
                self.cache.changed.clear()

    def step(self) -> bool:
        """Try the next pod; False when none is ready."""
        now = time.monotonic()
        with self.cache.lock:
            self.loop.move_if_changed(now)
            self.queue.flush_backoff_completed(now)
            if now - self._last_leftover_sweep > 10.0:
                self._last_leftover_sweep = now
                self.queue.flush_unschedulable_leftovers(now)
            if not self.loop.schedule_next(self.cache.cluster, self):
                return False
            assert self._outcome is not None
            (pod, decision), self._outcome = self._outcome, None
        # the API calls happen outside the lock, so the watches go on meanwhile
        if decision.selected is None:
            self._unschedulable(pod, decision.fit_error or "no nodes available")
        else:
            self._bind(pod, decision)
        return True

    # ------------------------------------------------------------------ the loop's binder
    def bind(self, pod: Pod, decision: Decision) -> None:
        """Under the cache lock: assume the pod on its node; the binding is POSTed after."""
        assert decision.selected is not None
        self.stats.attempts += 1
        self.cache.assume(pod.key, decision.selected)
        self._outcome = (pod, decision)

    def unschedulable(self, pod: Pod, decision: Decision) -> None:
        self.stats.attempts += 1
        self._outcome = (pod, decision)

    # ------------------------------------------------------------------ outcomes
    def _bind(self, pod: Pod, decision: Decision) -> None:
        node = decision.selected
        assert node is not None
        key = pod.key
        meta = pod.metadata
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta.name, "namespace": pod.namespace, "uid": meta.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        started = time.perf_counter_ns()
        try:
            self.api.request(
                "POST",
                f"/api/v1/namespaces/{pod.namespace}/pods/{meta.name}/binding",
                body=binding,
            )
        except ApiError as e:
            if self.metrics is not None:
                self.metrics.bound(decision, started, ok=False)
            self._bind_failed(pod, node, e)
            return
        if self.metrics is not None:
            self.metrics.bound(decision, started, ok=True)
        self.stats.bound += 1
        log.info("bound %s to %s", key, node)
        self.recorder.record(pod, "Normal", "Scheduled", "Binding", f"Successfully assigned {key} to {node}")

    def _bind_failed(self, pod: Pod, node: str, e: ApiError) -> None:
        key = pod.key
        now = time.monotonic()
        if e.status == 409:
            # bound meanwhile: by someone else, or by us with the answer lost in a restart
            self.stats.bind_conflicts += 1
            log.info("binding %s to %s: %s; reading it again", key, node, e.message)
            try:
                current = self.api.get("Pod", key)
            except ApiError as again:
                log.warning("reading %s after a conflict: %s", key, again)
                with self.cache.lock:
                    self._retry_later(pod, now)
                return
            with self.cache.lock:
                self.cache.forget(key)
                self.cache.apply("MODIFIED", current)
                if not (current.get("spec") or {}).get("nodeName"):
                    self._retry_later(pod, now)
            return
        with self.cache.lock:
            if e.status == 404:
                self.cache.forget(key)
                self.queue.delete(key)  # the pod is gone
                return
            self.stats.bind_errors += 1
            self._retry_later(pod, now)
        log.warning("binding %s to %s failed: %s; retrying after backoff", key, node, e)

    def _retry_later(self, pod: Pod, now: float) -> None:
        """The binding did not happen: the pod is pending again and backs off. (Assuming it
        took it out of the queue, as every bound pod leaves it.)"""
        self.cache.forget(pod.key)
        current = self.cache.cluster.pods.get(pod.key)
        if current is None or current.spec.node_name:
            return
        if pod.key not in self.queue:
            self.queue.add(current, now)
        self.queue.errored(pod.key, now)

    def _unschedulable(self, pod: Pod, message: str) -> None:
        key = pod.key
        self.stats.unschedulable += 1
        with self.cache.lock:
            if key in self.queue:
                self.queue.failed(key, time.monotonic())
        log.info("%s is unschedulable: %s", key, message)
        self.recorder.record(pod, "Warning", "FailedScheduling", "Scheduling", message)
        uid = pod.metadata.uid or key
        if self._conditions.get(uid) == message:
            return
        # UpdatePodCondition: the transition time moves only when the status does
        held = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
        since = held.last_transition_time if held is not None and held.status == "False" else None
        patch = {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                        "lastProbeTime": None,
                        "lastTransitionTime": since or now_stamp(),
                    }
                ]
            }
        }
        try:
            self.api.patch("Pod", key, patch, subresource="status", content_type=STRATEGIC_MERGE_PATCH)
            self._conditions[uid] = message
        except ApiError as e:
            log.warning("could not set PodScheduled=False on %s: %s", key, e)
