"""WorkloadSpread on a real API server: the webhook's client and the controller's host.

The webhook and the controller are the simulator's own (:mod:`kubespread.controllers.
workloadspread`); only what they read and write changes:

- :class:`LiveWorkloadSpreadClient` serves the webhook. Owners and nodes come from watches;
  the WorkloadSpread is the version the webhook itself last wrote or read from the API server,
  so the status update carries that resourceVersion (the proposal's "Pod creation" steps) and
  a 409 Conflict makes the webhook read it again from the API server and retry (and keep
  reading it there first for a while: another replica is writing it).
- :class:`LiveController` is the controller's
  :class:`~kubespread.controllers.host.ControllerHost` on the API: a work queue of
  WorkloadSpread keys fed by the watches, timers on the wall clock for the controller's
  deadlines, status written with the resourceVersion read (409: sync again), pods deleted to
  reschedule them, and deletion-cost annotations patched. It also keeps the label
  ``kubespread.io/workloadspread=true`` on exactly the namespaces that hold a WorkloadSpread:
  the pod webhooks are registered for those namespaces only. The verbs the WorkloadSpread
  controller does not use are carried out on the API as a kubectl user would; the kubelets'
  side is the real kubelets'.

Times: the controller counts seconds from the simulator's epoch, so ``now`` here is the wall
clock on that scale and the stamps it writes are real RFC 3339 times.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.core import Pod, PodCondition
from kubespread.api.features import FeatureGates
from kubespread.api.keys import LABEL_WORKLOADSPREAD_NAMESPACE
from kubespread.api.kruise import WorkloadSpread
from kubespread.api.meta import NAME_ALPHABET, KubeObject
from kubespread.api.timestamps import EPOCH, timestamp
from kubespread.cluster.errors import Conflict
from kubespread.cluster.events import ClusterEvent
from kubespread.cluster.state import ClusterState
from kubespread.controllers.host import Controller
from kubespread.controllers.workloadspread import WorkloadSpreadController, WorkloadSpreadOptions
from kubespread.controllers.workloadspread.subsets import workload_spreads_in
from kubespread.live.informer import ClusterCache, Reflector, decode, start_reflectors
from kubespread.live.kube import ApiError, KubeApi
from kubespread.live.recorder import EventRecorder
from kubespread.live.scheduler import instance_name
from kubespread.scheduler.profile import Profile

if TYPE_CHECKING:
    from kubespread.live.metrics import ControllerMetrics

__all__ = ["CONTROLLER_KINDS", "WEBHOOK_KINDS", "LiveController", "LiveWorkloadSpreadClient", "wall_seconds"]

log = logging.getLogger("kubespread.workloadspread")

#: what the webhook needs to know: owner chains (pod -> ReplicaSet -> Deployment, ...), the
#: WorkloadSpreads, and nodes for Adaptive's simulation schedule
WEBHOOK_KINDS: Final = (
    "Namespace",
    "Node",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "CloneSet",
    "WorkloadSpread",
)
#: the controller also counts pods
CONTROLLER_KINDS: Final = (*WEBHOOK_KINDS, "Pod")
#: the most a status write refused with 409 waits before the webhook reads again
CONFLICT_JITTER_SECONDS: Final = 0.02
#: after a conflict, a WorkloadSpread is read from the API server before each write this long
FRESH_READS_SECONDS: Final = 2.0
#: the controller label of the reconcile metrics: OpenKruise's name for its controller
WORKLOADSPREAD_CONTROLLER: Final = "workloadspread-controller"
#: a zero-delay "after this burst" timer of the simulator becomes this debounce
SETTLE_SECONDS: Final = 0.5


def wall_seconds() -> float:
    """The wall clock on the simulator's time scale (seconds since its epoch)."""
    return (datetime.now(UTC) - EPOCH).total_seconds()


def _write_status(api: KubeApi, ws: WorkloadSpread, cache: ClusterCache) -> KubeObject | None:
    """PUT status with the resourceVersion ``ws`` was read at; Conflict when it moved. The
    object as stored."""
    try:
        stored = api.replace(ws.to_dict(), subresource="status")
    except ApiError as e:
        if e.status == 409:
            raise Conflict(e.message) from None
        raise
    return cache.apply("MODIFIED", stored)


class LiveWorkloadSpreadClient:
    """The WorkloadSpreadClient of the webhook on a live cluster."""

    def __init__(self, api: KubeApi, cache: ClusterCache | None = None) -> None:
        self.api = api
        self.cache = cache or ClusterCache()
        self.reflectors: list[Reflector] = []
        self._lock = threading.Lock()
        #: WorkloadSpread key -> the version this webhook last wrote or read
        self._latest: dict[str, WorkloadSpread] = {}
        #: WorkloadSpread key -> until when (monotonic) it is read from the API server first
        self._fresh_until: dict[str, float] = {}

    def start(self, stop: threading.Event, timeout: float = 60.0) -> None:
        self.reflectors = start_reflectors(self.api, WEBHOOK_KINDS, self.cache, stop, timeout=timeout)

    @property
    def cluster(self) -> ClusterState:
        return self.cache.cluster

    def now(self) -> float:
        return wall_seconds()

    def stamp(self, seconds: float) -> str:
        return timestamp(seconds)

    def get(self, kind: str, key: str) -> KubeObject | None:
        """A WorkloadSpread as this webhook last wrote or read it from the API server (its
        resourceVersion guards the update: a stale one costs a 409 and a fresh read), or fresh
        from the API server after a conflict, for a while (another replica is writing it);
        anything else from the watches, or from the API server when the watch has not shown it
        yet (a ReplicaSet created a moment before its pods)."""
        if kind == WorkloadSpread.KIND:
            known = self._known(key)
            if known is not None:
                return known
        else:
            with self.cache.lock:
                obj = self.cache.cluster.get(kind, key)
            if obj is not None:
                return obj
        try:
            data = self.api.get(kind, key)
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        if kind == Pod.KIND:
            return decode(data)  # pods are not watched here: a cached one would go stale
        obj = self.cache.apply("MODIFIED", data)
        if isinstance(obj, WorkloadSpread):
            with self._lock:
                self._latest[key] = obj
        return obj

    def _known(self, key: str) -> WorkloadSpread | None:
        """The last version written or read, unless a conflict was recent, or the watch shows
        another version or none (deleted). Why both: a replica whose reads cost no round trip
        would win every race against one that reads first, and starve it."""
        with self._lock:
            latest = self._latest.get(key)
            if latest is None:
                return None
            if time.monotonic() < self._fresh_until.get(key, 0.0):
                return None
        with self.cache.lock:
            watched = self.cache.cluster.get(WorkloadSpread.KIND, key)
        if watched is None:
            with self._lock:
                self._latest.pop(key, None)
            return None
        if watched.metadata.resource_version != latest.metadata.resource_version:
            # the watch shows another version: someone else (another replica, the controller)
            # is writing it, and a stale read would only lose the race again
            return None
        return latest

    def update_status(self, ws: WorkloadSpread) -> None:
        key = ws.key
        try:
            stored = _write_status(self.api, ws, self.cache)
        except (Conflict, ApiError) as e:
            with self._lock:
                self._latest.pop(key, None)
                if isinstance(e, Conflict):
                    self._fresh_until[key] = time.monotonic() + FRESH_READS_SECONDS
            if isinstance(e, ApiError) and e.status != 404:
                raise
            # another replica wrote (or the WorkloadSpread is gone: the next read says so):
            # give it a moment before the webhook reads again, so two replicas do not keep
            # refusing each other in lockstep
            time.sleep(random.uniform(0.0, CONFLICT_JITTER_SECONDS))
            raise Conflict(str(e)) from None
        if isinstance(stored, WorkloadSpread):
            with self._lock:
                self._latest[key] = stored


class _WallTimer:
    """A wall-clock timer's handle (the host's ``after``)."""

    __slots__ = ("callback", "cancelled", "time")

    def __init__(self, callback: Callable[[], None], time: float) -> None:
        self.callback = callback
        self.time = time  # when it is due, in wall seconds since the simulator's epoch
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class LiveController:
    """Hosts the simulator's WorkloadSpreadController on the API (the ``sim`` it drives)."""

    def __init__(
        self,
        api: KubeApi,
        *,
        stop: threading.Event | None = None,
        options: WorkloadSpreadOptions | None = None,
        metrics: ControllerMetrics | None = None,
    ) -> None:
        self.api = api
        #: controller-runtime's reconcile metrics and the health probes (live.metrics), when served
        self.metrics = metrics
        self.stop = stop or threading.Event()
        self.cache = ClusterCache()
        self.controller = WorkloadSpreadController(options)
        self.recorder = EventRecorder(api, "kubespread-workloadspread", instance_name(), stop=self.stop)
        self.reflectors: list[Reflector] = []
        self._work: deque[tuple[Controller, str]] = deque()
        self._queued: set[str] = set()
        self._timers: list[tuple[float, int, _WallTimer]] = []
        self._seq = itertools.count()
        self._wake = threading.Condition()
        #: namespaces whose WorkloadSpread label may be wrong, checked before the next sync
        self._namespaces: set[str] = set()
        #: syncs done and status writes refused with 409 (for tests and the log)
        self.syncs = 0
        self.conflicts = 0
        #: namespaces labelled and unlabelled (for tests and the log)
        self.labelled = 0
        self.unlabelled = 0
        if metrics is not None:
            metrics.attach(self, WORKLOADSPREAD_CONTROLLER)

    # ------------------------------------------------------------------ what the controller calls
    @property
    def cluster(self) -> ClusterState:
        return self.cache.cluster

    @property
    def now(self) -> float:
        return wall_seconds()

    @property
    def profiles(self) -> Mapping[str, Profile]:
        """No scheduler runs here: the WorkloadSpread controller reads no profile."""
        return {}

    @property
    def features(self) -> FeatureGates:
        """The WorkloadSpread controller reads no gate: v1.35's."""
        return FeatureGates()

    def enqueue(self, controller: Controller, key: str) -> None:
        with self._wake:
            if key not in self._queued:
                self._queued.add(key)
                self._work.append((controller, key))
            self._wake.notify()

    def after(self, delay: float, callback: Callable[[], None], *, settle: bool = False) -> _WallTimer:
        wait = max(delay, SETTLE_SECONDS if settle and delay <= 0 else 0.0)
        timer = _WallTimer(callback, wall_seconds() + wait)
        with self._wake:
            heapq.heappush(self._timers, (time.monotonic() + wait, next(self._seq), timer))
            self._wake.notify()
        return timer

    def update(self, obj: KubeObject, *, precondition: bool = False) -> None:
        if isinstance(obj, WorkloadSpread):
            try:
                _write_status(self.api, obj, self.cache)
            except Conflict:
                self.conflicts += 1
                raise
            return
        if isinstance(obj, Pod):
            meta = obj.metadata
            patch: dict[str, Any] = {"metadata": {"labels": meta.labels, "annotations": meta.annotations}}
            if precondition:
                patch["metadata"]["resourceVersion"] = meta.resource_version
            try:
                stored = self.api.patch("Pod", obj.key, patch)
            except ApiError as e:
                if e.status == 409:
                    raise Conflict(e.message) from None
                if e.status != 404:
                    log.warning("patching pod %s: %s", obj.key, e)
                return
            self.cache.apply("MODIFIED", stored)
            return
        raise TypeError(f"the WorkloadSpread controller does not update {obj.KIND} objects")

    def delete_pod(
        self, key: str, *, grace_seconds: float | None = None, subresource: str = ""
    ) -> Rejection | None:
        body = {"gracePeriodSeconds": int(grace_seconds)} if grace_seconds is not None else None
        try:
            if subresource == "eviction":
                return self._evict(key, body)
            self.api.delete("Pod", key, body=body)
            log.info("deleted pod %s to reschedule it", key)
        except ApiError as e:
            if e.status != 404:
                log.warning("deleting pod %s: %s", key, e)
                return Rejection(e.status, e.reason, e.message)
        return None

    def _evict(self, key: str, delete_options: dict[str, Any] | None) -> Rejection | None:
        namespace, _, name = key.partition("/")
        eviction: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if delete_options:
            eviction["deleteOptions"] = delete_options
        self.api.create(eviction, subresource="eviction", name=name, kind="Pod")
        return None

    def evict(
        self, key: str, *, reason: str, message: str, grace_seconds: float | None = None
    ) -> Rejection | None:
        pod = self.cache.cluster.pods.get(key)
        if pod is not None:
            self.record(pod, reason, message, type="Warning")
        return self.delete_pod(key, grace_seconds=grace_seconds, subresource="eviction")

    def delete(self, kind: str, key: str, *, grace_seconds: float | None = None) -> None:
        if kind == Pod.KIND:
            self.delete_pod(key, grace_seconds=grace_seconds)
            return
        try:
            self.api.delete(kind, key)
        except ApiError as e:
            if e.status != 404:
                raise

    def create(self, obj: KubeObject) -> KubeObject | Rejection:
        try:
            stored = self.api.create(obj.to_dict())
        except ApiError as e:
            if e.unreachable:
                raise
            return Rejection(e.status, e.reason, e.message)
        return self.cache.apply("ADDED", stored) or obj

    def generate_name(self, prefix: str, namespace: str = "", kind: str = "Pod") -> str:
        """A name the API server would generate (it checks uniqueness on create)."""
        return prefix + "".join(secrets.choice(NAME_ALPHABET) for _ in range(5))

    def set_pod_status(
        self, key: str, phase: str, *, conditions: Iterable[PodCondition] | None = None
    ) -> None:
        status: dict[str, Any] = {"phase": phase}
        if conditions is not None:
            status["conditions"] = [c.to_dict() for c in conditions]
        stored = self.api.patch("Pod", key, {"status": status}, subresource="status")
        self.cache.apply("MODIFIED", stored)

    # the kubelets' side: real kubelets report reachability and finish terminations themselves
    def node_reachable(self, node: str) -> bool:
        return True

    def set_node_reachable(self, node: str, reachable: bool) -> None:
        raise NotImplementedError("a live cluster's kubelets are real: fail a node on the node itself")

    def finish_terminations(self, node: str) -> None:
        return None

    def record(self, obj: KubeObject, reason: str, message: str, *, type: str = "Normal") -> None:
        self.recorder.record(obj, type, reason, reason, message)

    # ------------------------------------------------------------------ running
    def start(self, timeout: float = 60.0) -> None:
        self.reflectors = start_reflectors(self.api, CONTROLLER_KINDS, self.cache, self.stop, timeout=timeout)
        with self.cache.lock:
            self.cache.cluster.subscribe(self._on_event)
            self._check_namespaces(self.cache.cluster.namespaces)
            self.controller.start(self)
        log.info(
            "controller: watching %d WorkloadSpreads, %d pods",
            len(self.cache.cluster.objects(WorkloadSpread.KIND)),
            len(self.cache.cluster.pods),
        )

    def run(self) -> None:
        while not self.stop.is_set():
            if self.metrics is not None:
                self.metrics.health.beat()
            self.run_once(timeout=0.5)

    # ------------------------------------------------------------------ the namespace label
    def _on_event(self, event: ClusterEvent) -> None:
        """A WorkloadSpread came or went, or a namespace changed: check its label."""
        if event.kind == WorkloadSpread.KIND:
            self._check_namespaces([event.obj.namespace])
        elif event.kind == "Namespace":
            self._check_namespaces([event.obj.metadata.name])

    def _check_namespaces(self, names: Iterable[str]) -> None:
        with self._wake:
            self._namespaces.update(names)
            self._wake.notify()

    def _label_namespaces(self, names: Iterable[str]) -> None:
        """Label the namespaces holding a WorkloadSpread (not being deleted), unlabel the rest.
        A failed patch is tried again a second later; a namespace gone needs nothing."""
        for name in sorted(names):
            with self.cache.lock:
                ns = self.cache.cluster.namespaces.get(name)
                if ns is None:
                    continue
                wanted = any(
                    not ws.metadata.deletion_timestamp for ws in workload_spreads_in(self.cache.cluster, name)
                )
                has = ns.metadata.labels.get(LABEL_WORKLOADSPREAD_NAMESPACE) == "true"
            if wanted == has or (wanted and ns.metadata.deletion_timestamp):
                continue
            patch = {"metadata": {"labels": {LABEL_WORKLOADSPREAD_NAMESPACE: "true" if wanted else None}}}
            try:
                stored = self.api.patch("Namespace", name, patch)
            except ApiError as e:
                if e.status != 404:
                    log.warning("labelling namespace %s: %s; retrying", name, e)
                    self.after(1.0, functools.partial(self._check_namespaces, [name]))
                continue
            self.cache.apply("MODIFIED", stored)
            if wanted:
                self.labelled += 1
            else:
                self.unlabelled += 1
            log.info(
                "namespace %s %s %s=true",
                name,
                "labelled" if wanted else "unlabelled",
                LABEL_WORKLOADSPREAD_NAMESPACE,
            )

    def run_once(self, timeout: float = 0.0) -> bool:
        """Fire due timers, label namespaces, then one sync; wait up to ``timeout`` when idle.
        True if work ran."""
        due: list[_WallTimer] = []
        with self._wake:
            namespaces, self._namespaces = self._namespaces, set()
        if namespaces:
            self._label_namespaces(namespaces)
        with self._wake:
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                timer = heapq.heappop(self._timers)[2]
                if not timer.cancelled:
                    due.append(timer)
            item = None
            if not due and self._work:
                item = self._work.popleft()
                self._queued.discard(item[1])
            if not due and item is None:
                if namespaces:
                    return True
                wait = timeout
                if self._timers:
                    wait = min(wait, max(0.0, self._timers[0][0] - now))
                self._wake.wait(wait)
                return False
        with self.cache.lock:
            for timer in due:
                timer.callback()
            if item is not None:
                self._sync(*item)
        return True

    def _sync(self, controller: Controller, key: str) -> None:
        """One reconcile: success, error (retried by a timer) or requeue (a conflict: queued again)."""
        self.syncs += 1
        conflicts = self.conflicts
        started = time.perf_counter()
        result = "success"
        try:
            controller.sync(key)
        except ApiError as e:
            result = "error"
            log.warning("sync %s: %s; retrying", key, e)
            self.after(1.0, functools.partial(self.enqueue, controller, key))
        if result == "success" and self.conflicts > conflicts:
            result = "requeue"
        if self.metrics is not None:
            self.metrics.reconciled(WORKLOADSPREAD_CONTROLLER, result, time.perf_counter() - started)
