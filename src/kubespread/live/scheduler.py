"""A secondary scheduler on a live cluster: kubespread's engine deciding, the API binding.

It schedules the pending pods whose ``spec.schedulerName`` is one of its profiles, as a second
kube-scheduler would:

- the cluster comes from list+watch (:mod:`.informer`); the scheduling loop is the
  simulator's own (:class:`~kubespread.scheduler.loop.SchedulingLoop`: the same queue, with
  priority then arrival, backoff 1 s doubling to 10 s, unschedulable pods retried when the
  cluster changes or after 5 minutes; the same seeded tie-break generator), so the same pods
  in the same order on the same nodes land where ``kubespread schedule`` puts them;
  this module is its binder;
- the binding cycle runs beside the loop, as kube-scheduler's does: a chosen pod is assumed
  onto its node in the cache (under the cache lock, so the next decision counts it), and a
  binder thread POSTs ``pods/binding`` (with the pod's uid, so a pod recreated under the same
  name is not bound by mistake) while the loop goes on with the next pod. Success records
  ``Scheduled``. 409 means someone else bound it (or a lost answer to our own bind was
  applied): the pod is read again and left as the API says, never bound twice. Any other
  failure (unreachable, a timeout, 5xx) forgets the assumption and sends the pod to backoff
  (handleBindingCycleError); should that bind have been applied after all, the watch (or
  the next bind's 409) shows the pod on that node and ``Scheduled`` is recorded then;
- a pod that fits nowhere gets kube-scheduler's FitError as a ``FailedScheduling`` Event and
  as the ``PodScheduled=False`` condition with reason ``Unschedulable``, written by a binder
  thread too; a pod's writes run one at a time in order, so the condition never lands after
  the same pod's later binding;
- a pod that fits nowhere but may preempt gets kube-scheduler v1.35's prepareCandidate, with
  the same decision and the same rules as the simulation
  (:meth:`~kubespread.scheduler.loop.SchedulingLoop.after_failure`, which also keeps the
  nominator): each victim not yet terminating gets the DisruptionTarget condition (reason
  PreemptionByScheduler) by a status patch, then a graceful delete (with its uid as a
  precondition), and a ``Preempted`` Event; the lower-priority pods nominated to that node
  have their ``status.nominatedNodeName`` cleared; the preemptor gets
  ``status.nominatedNodeName`` with its PodScheduled=False condition (after the victims'
  writes, in the same per-pod order) and waits in the queue, kept in the nominator (the
  filters hold the room for it), until the victims are gone. A victim write that fails (not
  a 404: a victim already gone is fine) drops the nomination and sends the preemptor to
  backoff, as kube's failed prepareCandidate does;
- Events go through :class:`~kubespread.live.recorder.EventRecorder`'s buffer: never lost
  while the API server is away, written when it is back;
- on stop, :meth:`SecondaryScheduler.shutdown` lets binds in flight finish and buffered
  Events be written, each within a deadline.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.live.informer import ClusterCache, Reflector, start_reflectors
from kubespread.live.kube import STRATEGIC_MERGE_PATCH, ApiError, KubeApi
from kubespread.live.leader import LeaderElector
from kubespread.live.recorder import EventRecorder, now_stamp
from kubespread.scheduler.loop import PreparedPreemption, SchedulingLoop
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.queue import SchedulingQueue
from kubespread.scheduler.scheduler import Decision

if TYPE_CHECKING:
    from kubespread.live.metrics import SchedulerMetrics

__all__ = ["SHUTDOWN_BIND_SECONDS", "ApiWorkers", "SchedulerStats", "SecondaryScheduler", "instance_name"]

log = logging.getLogger("kubespread.scheduler")

#: what the scheduler watches: nodes and every pod (topology counts, resources), namespaces
#: (namespaceSelector), PodDisruptionBudgets (preemption prefers candidates that break fewer,
#: reading their status.disruptionsAllowed as the disruption controller keeps it);
#: PriorityClasses are read by the API server's admission already
WATCHED_KINDS: Final = ("Node", "Namespace", "PodDisruptionBudget", "Pod")
IDLE_WAIT_SECONDS: Final = 0.5
#: binder threads: binds (and conditions) of this many pods can be in flight at once
BINDERS: Final = 8
#: a bind (or condition write) the API server has not answered in this time has failed, and
#: its thread is free for the next pod
BIND_TIMEOUT_SECONDS: Final = 10.0
#: on stop, binds in flight get this long to finish, then buffered Events this long
SHUTDOWN_BIND_SECONDS: Final = 10.0
SHUTDOWN_EVENT_SECONDS: Final = 5.0


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
    preemptions: int = 0
    victims: int = 0
    #: seconds from each preemption (its decision) to its preemptor's bind being confirmed
    preemption_to_bind: list[float] = field(default_factory=list)


class ApiWorkers:
    """A few daemon threads making API writes off the scheduling loop (kube binds each pod in
    a goroutine of its own). The jobs of one key (a pod) run one at a time, in the order they
    were given; different pods' jobs run side by side. Threads start as work comes, up to
    ``threads``; they end at :meth:`close`, or once ``stop`` is set and no job is left (a job
    given later starts one again)."""

    def __init__(self, threads: int, name: str, *, stop: threading.Event | None = None) -> None:
        self.threads = threads
        self.name = name
        self.stop = stop
        self._names = itertools.count()
        self._cond = threading.Condition()
        self._jobs: deque[tuple[str, Callable[[], None]]] = deque()
        self._running: set[str] = set()
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, key: str, job: Callable[[], None]) -> bool:
        """Queue ``job`` for ``key``; False (not queued) once closed."""
        with self._cond:
            if self._closed:
                return False
            self._jobs.append((key, job))
            if len(self._jobs) > self._idle and len(self._workers) < self.threads:
                t = threading.Thread(target=self._work, name=f"{self.name}-{next(self._names)}", daemon=True)
                self._workers.append(t)
                t.start()
            self._cond.notify_all()
            return True

    @property
    def busy(self) -> int:
        """Jobs queued or running."""
        with self._cond:
            return len(self._jobs) + len(self._running)

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until no job is queued or running."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._jobs or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def close(self, timeout: float) -> int:
        """Let the jobs finish within ``timeout`` seconds, then stop: returns how many were
        left (queued ones are dropped; running ones end when their call returns)."""
        self.drain(timeout)
        with self._cond:
            self._closed = True
            left = len(self._jobs) + len(self._running)
            self._jobs.clear()
            self._cond.notify_all()
            return left

    def _take(self) -> tuple[str, Callable[[], None]] | None:
        for i, (key, job) in enumerate(self._jobs):
            if key not in self._running:
                del self._jobs[i]
                self._running.add(key)
                return key, job
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                taken = self._take()
                while taken is None:
                    if self._closed or (self.stop is not None and self.stop.is_set()):
                        self._workers.remove(threading.current_thread())
                        return
                    self._idle += 1
                    self._cond.wait(IDLE_WAIT_SECONDS)  # looks at ``stop`` now and then
                    self._idle -= 1
                    taken = self._take()
            key, job = taken
            try:
                job()
            except Exception:  # a bug in one job must not take a binder thread with it
                log.exception("%s: %s failed", self.name, key)
            finally:
                with self._cond:
                    self._running.discard(key)
                    self._cond.notify_all()


class SecondaryScheduler:
    """Schedules the pods of ``profiles`` (schedulerName -> Profile) until ``stop`` is set.

    Threads: the caller's runs :meth:`run` (the loop); one reflector per watched kind keeps
    the cache; :attr:`binding` (``binders`` threads) makes the binds and condition writes;
    the recorder's thread writes Events. The cache lock guards the cache, the queue, the loop,
    :attr:`stats` and this object's per-pod bookkeeping; no API call is made under it.
    """

    def __init__(
        self,
        api: KubeApi,
        profiles: Mapping[str, Profile],
        *,
        seed: int = 0,
        stop: threading.Event | None = None,
        identity: str | None = None,
        binders: int = BINDERS,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self.api = api
        self.loop = SchedulingLoop(profiles, seed=seed)
        self.stop = stop or threading.Event()
        self.identity = identity or instance_name()
        self.cache = ClusterCache()
        self.loop.cluster = self.cache.cluster  # what the queueing hints read
        self.recorder = EventRecorder(api, "kubespread-scheduler", self.identity, stop=self.stop)
        self.binding = ApiWorkers(binders, "binder", stop=self.stop)
        self.stats = SchedulerStats()
        self.reflectors: list[Reflector] = []
        self._conditions: dict[str, str] = {}  # pod uid -> the Unschedulable message it carries
        #: pod uid -> nodes a bind of ours named whose answer was lost (it may have been applied)
        self._unanswered: dict[str, set[str]] = {}
        #: pod uid -> binds failed in a row: its backoff doubles with each, as the queue's does
        self._bind_failures: dict[str, int] = {}
        #: preemptor uid -> when its preemption was decided (monotonic), until it is bound
        self._preempted_at: dict[str, float] = {}
        #: preemptor key -> the (key, uid) of each victim it named, until every one is seen
        #: deleting or gone (kube's Evaluator.preempting under async preemption)
        self._preempting: dict[str, tuple[tuple[str, str | None], ...]] = {}
        self.loop.hold = self._running_preemption
        self._last_leftover_sweep = 0.0
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
        # runs under the cache lock: in a reflector thread, the loop or a binder
        self.loop.follow(ev, time.monotonic())
        if ev.kind != Pod.KIND:
            return
        pod: Pod = ev.obj
        uid = pod.metadata.uid
        if (
            ev.type is EventType.ADDED  # listed: an echo of our own writes never re-adds it
            and pod.status.nominated_node_name
            and not pod.spec.node_name
            and self.loop.wanted(pod)
            and not self.loop.nominated_node(pod.key)
        ):
            self.loop.keep_nomination(pod)  # nominated before this scheduler (re)started
        if ev.type in (EventType.DELETED, EventType.BOUND):
            self._conditions.pop(uid, None)
        if ev.type is EventType.DELETED:
            self._unanswered.pop(uid, None)
            self._bind_failures.pop(uid, None)
            self._preempted_at.pop(uid, None)
            self._preempting.pop(pod.key, None)
        elif (
            ev.type is EventType.BOUND
            and uid in self._unanswered
            and pod.key not in self.cache.assumed  # bound as the API says, not our assumption
            and ev.node_name in self._unanswered.pop(uid)
        ):
            # one of our binds whose answer was lost went through
            self._scheduled(pod, ev.node_name, "its answer was lost")

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
        """Decide for the next pod and hand its API writes to the binder threads; False when
        no pod is ready."""
        now = time.monotonic()
        with self.cache.lock:
            self.loop.move_if_changed(now)
            self.queue.flush_backoff_completed(now)
            if now - self._last_leftover_sweep > 10.0:
                self._last_leftover_sweep = now
                self.queue.flush_unschedulable_leftovers(now)
            return self.loop.schedule_next(self.cache.cluster, self)

    def shutdown(
        self, bind_timeout: float = SHUTDOWN_BIND_SECONDS, event_timeout: float = SHUTDOWN_EVENT_SECONDS
    ) -> None:
        """Stop: binds in flight get ``bind_timeout`` seconds to finish (a pod whose bind is
        still unanswered then stays pending for the next scheduler), then buffered Events
        ``event_timeout`` seconds to be written."""
        self.stop.set()
        left = self.binding.close(bind_timeout)
        if left:
            log.warning(
                "stopping with %d binds or condition writes unfinished after %.0fs: those pods stay pending",
                left,
                bind_timeout,
            )
        self.recorder.close(event_timeout)

    # ------------------------------------------------------------------ the loop's binder
    def bind(self, pod: Pod, decision: Decision) -> None:
        """Under the cache lock: assume the pod on its node; a binder thread POSTs the binding."""
        assert decision.selected is not None
        self.stats.attempts += 1
        self.cache.assume(pod.key, decision.selected)
        log.debug("assumed %s on %s", pod.key, decision.selected)
        if not self.binding.submit(pod.key, functools.partial(self._bind, pod, decision)):
            self.cache.forget(pod.key)  # stopping: left for the next scheduler

    def unschedulable(self, pod: Pod, decision: Decision) -> None:
        """Under the cache lock: the pod waits for a change; the FailedScheduling Event is
        buffered; a binder thread makes the preemption's writes, if any, then the condition
        (and the nomination) in that order."""
        key = pod.key
        message = decision.fit_error or "no nodes available"
        self.stats.attempts += 1
        self.stats.unschedulable += 1
        outcome = self.loop.after_failure(pod, decision, self.cache.cluster)
        if key in self.queue:
            self.queue.failed(key, time.monotonic())
        log.info("%s is unschedulable: %s", key, message)
        self.recorder.record(pod, "Warning", "FailedScheduling", "Scheduling", message)
        prepared = outcome.preemption
        if prepared is not None:
            self.stats.preemptions += 1
            self.stats.victims += len(prepared.victims)
            self._preempted_at.setdefault(pod.metadata.uid or key, time.monotonic())
            if prepared.victims:
                self._preempting[key] = tuple((v.key, v.metadata.uid) for v in prepared.victims)
            if self.metrics is not None:
                self.metrics.preempting(prepared)
            log.info(
                "preempting %d pods on %s for %s: %s",
                len(prepared.victims),
                prepared.node,
                key,
                ", ".join(v.key for v in prepared.victims) or "(all terminating already)",
            )
            self.binding.submit(key, functools.partial(self._preempt, prepared))
            for lower in prepared.cleared:
                self.binding.submit(lower.key, functools.partial(self._clear_nomination, lower))
        nominated = outcome.nominated_node_name
        held = self._conditions.get(pod.metadata.uid or key)
        if held != message or (nominated is not None and nominated != pod.status.nominated_node_name):
            self.binding.submit(key, functools.partial(self._set_condition, pod, message, nominated))

    def _running_preemption(self, pod: Pod) -> bool:
        """DefaultPreemption's PreEnqueue under async preemption (IsPodRunningPreemption): a
        preemptor is not tried again until each victim it named is seen deleting or gone, so a
        retry between the victims' writes and their events (a DisruptionTarget update moves it)
        does not preempt a second time. Called under the cache lock."""
        victims = self._preempting.get(pod.key)
        if victims is None:
            return False
        pods = self.cache.cluster.pods
        for key, uid in victims:
            current = pods.get(key)
            if current is not None and current.metadata.uid == uid and not current.is_terminating:
                return True
        del self._preempting[pod.key]
        return False

    # ------------------------------------------------------------------ binder threads
    def _bind(self, pod: Pod, decision: Decision) -> None:
        """The binding cycle of one pod (a binder thread)."""
        node = decision.selected
        assert node is not None
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
                timeout=BIND_TIMEOUT_SECONDS,
            )
        except ApiError as e:
            if self.metrics is not None:
                self.metrics.bound(decision, started, ok=False)
            self._bind_failed(pod, node, e)
            return
        except Exception as e:  # not the API's answer (a bug, a garbled reply): never leave it assumed
            log.exception("binding %s to %s", pod.key, node)
            self._bind_failed(pod, node, ApiError(0, "Error", f"binding {pod.key}: {e}"))
            return
        if self.metrics is not None:
            self.metrics.bound(decision, started, ok=True)
        with self.cache.lock:
            self._unanswered.pop(pod.metadata.uid, None)
            self._scheduled(pod, node)

    def _scheduled(self, pod: Pod, node: str, how: str = "") -> None:
        """Under the cache lock: the pod is bound to ``node`` by us."""
        self.stats.bound += 1
        self._bind_failures.pop(pod.metadata.uid, None)
        preempted_at = self._preempted_at.pop(pod.metadata.uid or pod.key, None)
        if preempted_at is not None:
            waited = time.monotonic() - preempted_at
            self.stats.preemption_to_bind.append(waited)
            how = ", ".join(filter(None, (how, f"{waited:.3f}s after its preemption")))
        log.info("bound %s to %s%s", pod.key, node, f" ({how})" if how else "")
        note = f"Successfully assigned {pod.key} to {node}"
        self.recorder.record(pod, "Normal", "Scheduled", "Binding", note)

    def _bind_failed(self, pod: Pod, node: str, e: ApiError) -> None:
        key = pod.key
        now = time.monotonic()
        if e.status == 409:
            # bound meanwhile: by someone else, or by us with the answer lost in a restart
            with self.cache.lock:
                self.stats.bind_conflicts += 1
            log.info("binding %s to %s: %s; reading it again", key, node, e.message)
            try:
                current = self.api.get("Pod", key, timeout=BIND_TIMEOUT_SECONDS)
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
                else:
                    self._bound_by_lost_answer(pod)
            return
        with self.cache.lock:
            if e.status == 404:
                self.cache.forget(key)
                self.queue.delete(key)  # the pod is gone
                return
            self.stats.bind_errors += 1
            if e.unreachable or e.status >= 500:
                # no answer, or one that does not say the bind was not applied: it may be
                self._unanswered.setdefault(pod.metadata.uid, set()).add(node)
                self._bound_by_lost_answer(pod)
            self._retry_later(pod, now)
        log.warning("binding %s to %s failed: %s; retrying after backoff", key, node, e)

    def _bound_by_lost_answer(self, pod: Pod) -> None:
        """Under the cache lock: when the cache (not an assumption) shows ``pod`` bound to a
        node one of our unanswered binds named, that bind went through: record it. (Seen
        here when the watch or a re-read showed it before a BOUND event could.)"""
        current = self.cache.cluster.pods.get(pod.key)
        uid = pod.metadata.uid
        if (
            current is not None
            and current.metadata.uid == uid
            and pod.key not in self.cache.assumed
            and current.spec.node_name in self._unanswered.get(uid, ())
        ):
            del self._unanswered[uid]
            self._scheduled(current, current.spec.node_name, "its answer was lost")

    def _retry_later(self, pod: Pod, now: float) -> None:
        """Under the cache lock: the binding did not happen: forget the assumption; the pod is
        pending again and backs off. (Assuming it took it out of the queue, as every bound pod
        leaves it.)"""
        self.cache.forget(pod.key)
        current = self.cache.cluster.pods.get(pod.key)
        if current is None or current.spec.node_name:
            return
        uid = pod.metadata.uid
        failures = self._bind_failures[uid] = self._bind_failures.get(uid, 0) + 1
        if pod.key not in self.queue:
            self.queue.add(current, now)
            self.queue.repeat_failures(pod.key, failures - 1, now)  # the entry is new: its count is not
        self.queue.errored(pod.key, now)
        self.cache.changed.set()

    def _set_condition(self, pod: Pod, message: str, nominated: str | None = None) -> None:
        """PodScheduled=False with the FitError (a binder thread), and status.nominatedNodeName
        when the failure's outcome set or cleared it (None: left as it is), unless the pod is
        gone or was assumed or bound since, or carries both already. A nomination the
        nominator dropped meanwhile (a failed preemption, a higher preemptor) is written as
        cleared."""
        key = pod.key
        uid = pod.metadata.uid or key
        with self.cache.lock:
            current = self.cache.cluster.pods.get(key)
            if current is None or (current.metadata.uid or key) != uid or current.spec.node_name:
                return
            if nominated and self.loop.nominated_node(key) != nominated:
                nominated = ""
            if nominated is not None and nominated == (current.status.nominated_node_name or ""):
                nominated = None
            if self._conditions.get(uid) == message and nominated is None:
                return
        # UpdatePodCondition: the transition time moves only when the status does
        held = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
        since = held.last_transition_time if held is not None and held.status == "False" else None
        condition: dict[str, Any] = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": since or now_stamp(),
        }
        status: dict[str, Any] = {"conditions": [condition]}
        if nominated is not None:
            status["nominatedNodeName"] = nominated or None
        try:
            self.api.patch(
                "Pod",
                key,
                {"status": status},
                subresource="status",
                content_type=STRATEGIC_MERGE_PATCH,
                timeout=BIND_TIMEOUT_SECONDS,
            )
        except ApiError as e:
            log.warning("could not set PodScheduled=False on %s: %s", key, e)
            return
        with self.cache.lock:
            if key in self.cache.cluster.pods:
                self._conditions[uid] = message

    # ------------------------------------------------------------------ preemption's writes
    def _preempt(self, prepared: PreparedPreemption) -> None:
        """prepareCandidate's API writes (a binder thread, under the preemptor's key): each
        victim is marked and deleted, with its Preempted Event. A write refused for another
        reason than the victim being gone stops the preemption: the nomination is dropped and
        the preemptor backs off (it is tried again, and may preempt again)."""
        preemptor = prepared.preemptor
        for victim in prepared.victims:
            try:
                self._preempt_victim(prepared, victim)
            except ApiError as e:
                log.warning("preempting %s for %s failed: %s", victim.key, preemptor.key, e)
                with self.cache.lock:
                    self.loop.forget_nomination(preemptor.key)
                    self._preempted_at.pop(preemptor.metadata.uid or preemptor.key, None)
                    self._preempting.pop(preemptor.key, None)
                    if preemptor.key in self.queue:
                        self.queue.errored(preemptor.key, time.monotonic())
                        self.cache.changed.set()
                return

    def _preempt_victim(self, prepared: PreparedPreemption, victim: Pod) -> None:
        """One victim: the DisruptionTarget condition (status patch, unless it carries it
        already), a graceful delete that names its uid (a pod recreated under the name is not
        touched), the Preempted Event. A victim gone (404, or its uid no longer there: 409) is
        skipped."""
        key = victim.key
        marked = any(
            c.type == "DisruptionTarget" and c.status == "True" and c.reason == prepared.reason
            for c in victim.status.conditions
        )
        try:
            if not marked:
                condition = {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": prepared.reason,
                    "message": prepared.condition_message,
                    "lastTransitionTime": now_stamp(),
                }
                self.api.patch(
                    "Pod",
                    key,
                    {"status": {"conditions": [condition]}},
                    subresource="status",
                    content_type=STRATEGIC_MERGE_PATCH,
                    timeout=BIND_TIMEOUT_SECONDS,
                )
            self.api.delete(
                "Pod", key, body={"preconditions": {"uid": victim.metadata.uid}}, timeout=BIND_TIMEOUT_SECONDS
            )
        except ApiError as e:
            if e.status in (404, 409):
                log.info("victim %s is gone already (%s)", key, e.message)
                return
            raise
        log.info("preempted %s on %s for %s", key, prepared.node, prepared.preemptor.key)
        self.recorder.record(victim, "Normal", "Preempted", "Preempting", prepared.event_message)

    def _clear_nomination(self, pod: Pod) -> None:
        """A lower-priority pod nominated where a preemptor now is: its nominatedNodeName is
        cleared (it may no longer fit there), unless the nominator gave it one again."""
        key = pod.key
        with self.cache.lock:
            current = self.cache.cluster.pods.get(key)
            if (
                current is None
                or current.metadata.uid != pod.metadata.uid
                or current.spec.node_name
                or self.loop.nominated_node(key)
                or not current.status.nominated_node_name
            ):
                return
        try:
            self.api.patch(
                "Pod",
                key,
                {"status": {"nominatedNodeName": None}},
                subresource="status",
                content_type=STRATEGIC_MERGE_PATCH,
                timeout=BIND_TIMEOUT_SECONDS,
            )
        except ApiError as e:
            log.warning("could not clear the nominatedNodeName of %s: %s", key, e)
