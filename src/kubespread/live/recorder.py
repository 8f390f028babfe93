"""Events on a live cluster, as kube-scheduler and the controllers write them (events.k8s.io/v1).

Recording never waits on the API server: :meth:`EventRecorder.record` puts the event in a
bounded buffer and one background thread writes it, as client-go's event broadcaster does, so
a scheduling loop or a controller holding its cache lock is never held up by an Event.

- **Series.** A repeated event (same object, reason and note) within six minutes becomes a
  series on the first one (``series.count``), so a pod retried every few seconds does not
  flood the namespace. Repeats still waiting in the buffer are merged into one entry (one
  write, the count they add up to), so an outage does not fill the buffer with copies.
- **Retries.** When the API server cannot be reached, times out or answers 429/5xx, the
  oldest event is tried again after a backoff (0.5 s doubling to 10 s) and the others wait
  behind it, in order. The Event's name is chosen when it is recorded, so a create whose
  answer was lost and that comes back ``409 AlreadyExists`` was written: it is not written
  twice. Other refusals (403, 422, a namespace being deleted) drop that event, logged.
- **Bound.** At most :data:`MAX_PENDING_EVENTS` distinct events wait (client-go's
  broadcaster queues 1000 too); when the buffer is full a new event is dropped and counted,
  and the count is logged when delivery resumes.
- **Shutdown.** :meth:`EventRecorder.close` writes what is buffered within a deadline and
  logs how many events it had to leave.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from kubespread.api.meta import KubeObject
from kubespread.live.kube import ApiError, KubeApi

__all__ = ["MAX_PENDING_EVENTS", "EventRecorder", "micro_time", "now_stamp"]

log = logging.getLogger("kubespread.live")

SERIES_WINDOW_SECONDS: Final = 6 * 60
#: distinct events waiting to be written; more are dropped (client-go: maxQueuedEvents)
MAX_PENDING_EVENTS: Final = 1000
#: one Event write may take this long before it counts as failed and is retried
EVENT_TIMEOUT_SECONDS: Final = 10.0
INITIAL_RETRY_SECONDS: Final = 0.5
MAX_RETRY_SECONDS: Final = 10.0
#: how often an idle delivery thread looks at its stop event
IDLE_POLL_SECONDS: Final = 0.2

SeriesKey = tuple[str, str, str]  # (uid or key, reason, note)


def micro_time(when: datetime | None = None) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds."""
    return (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_stamp() -> str:
    """metav1.Time: RFC 3339, seconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Pending:
    """One event (and its repeats) not written yet."""

    key: SeriesKey
    name: str  # chosen once: a retried create of the same name is idempotent
    namespace: str
    body: dict[str, Any]
    count: int = 1  # occurrences not yet written
    last_observed: str = field(default_factory=micro_time)


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    last: float  # monotonic time of the last write


class EventRecorder:
    """Writes Events for one component (``reportingController``) and instance, in the
    background. ``stop``: once set, the delivery thread ends when nothing is left to write
    (it starts again if more is recorded)."""

    def __init__(
        self, api: KubeApi, controller: str, instance: str, *, stop: threading.Event | None = None
    ) -> None:
        self.api = api
        self.controller = controller
        self.instance = instance
        self.stop = stop
        #: events dropped because the buffer was full or the API server refused them
        self.dropped = 0
        #: events written (a series update counts once)
        self.written = 0
        self._series: dict[SeriesKey, _Series] = {}
        self._pending: OrderedDict[SeriesKey, _Pending] = OrderedDict()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._dropped_unlogged = 0
        self._failing_since: float | None = None  # the first failed try of this outage
        self._flushing = 0  # callers waiting in flush()
        self._last_prune = time.monotonic()

    # ------------------------------------------------------------------ recording
    def record(self, obj: KubeObject, type_: str, reason: str, action: str, note: str) -> None:
        """Buffer one event for ``obj``; returns at once."""
        meta = obj.metadata
        namespace = meta.namespace or "default"  # a cluster-scoped object's Events live in default
        key = (meta.uid or obj.key, reason, note)
        with self._cond:
            if self._closed:
                log.debug("recorder closed: %s event for %s not written", reason, obj.key)
                return
            pending = self._pending.get(key)
            if pending is not None:  # a repeat not written yet: one more in its count
                pending.count += 1
                pending.last_observed = micro_time()
                return
            if len(self._pending) >= MAX_PENDING_EVENTS:
                self.dropped += 1
                if not self._dropped_unlogged:
                    log.warning(
                        "%d Events wait to be written: dropping new ones until the API server takes them",
                        len(self._pending),
                    )
                self._dropped_unlogged += 1
                return
            regarding: dict[str, Any] = {
                "apiVersion": obj.API_VERSION,
                "kind": obj.KIND,
                "name": meta.name,
                "namespace": namespace,
            }
            if meta.uid:
                regarding["uid"] = meta.uid
            name = f"{meta.name}.{time.time_ns():x}"
            body = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "eventTime": micro_time(),
                "reportingController": self.controller,
                "reportingInstance": self.instance,
                "action": action,
                "reason": reason,
                "note": note[:1024],
                "type": type_,
                "regarding": regarding,
            }
            self._pending[key] = _Pending(key, name, namespace, body)
            self._cond.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._deliver, name="event-recorder", daemon=True)
                self._thread.start()

    @property
    def pending(self) -> int:
        """Events recorded and not written yet (the one being written included)."""
        with self._cond:
            return len(self._pending)

    def flush(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until every recorded event is written (or dropped);
        True when none is left."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._flushing += 1  # a retry waits no longer than the first backoff meanwhile
            self._cond.notify_all()
            try:
                while self._pending:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
                return True
            finally:
                self._flushing -= 1

    def close(self, timeout: float) -> int:
        """Write what is buffered within ``timeout`` seconds, then stop; returns (and logs) how
        many events were left unwritten."""
        self.flush(timeout)
        with self._cond:
            self._closed = True
            left = sum(p.count for p in self._pending.values())
            self._pending.clear()
            self._cond.notify_all()
        if left:
            log.warning("%d Events not written: the API server did not take them within %.0fs", left, timeout)
        return left

    # ------------------------------------------------------------------ delivery
    def _deliver(self) -> None:
        """The delivery thread: the oldest event first, retried until written or refused."""
        delay = INITIAL_RETRY_SECONDS
        while True:
            with self._cond:
                while not self._pending:
                    if self._closed or (self.stop is not None and self.stop.is_set()):
                        self._thread = None
                        return
                    self._cond.wait(IDLE_POLL_SECONDS)
                if self._closed:
                    self._thread = None
                    return
                entry = next(iter(self._pending.values()))
                series = self._series.get(entry.key)
                count, last_observed = entry.count, entry.last_observed
            outcome = self._write(entry, series, count, last_observed)
            with self._cond:
                if outcome == "retry":
                    self._backoff(delay)
                    delay = min(delay * 2, MAX_RETRY_SECONDS)
                    continue
                delay = INITIAL_RETRY_SECONDS
                if self._failing_since is not None:
                    log.info(
                        "the API server takes Events again after %.1fs; %d waiting",
                        time.monotonic() - self._failing_since,
                        len(self._pending),
                    )
                    self._failing_since = None
                if self._dropped_unlogged:
                    log.warning("%d Events were dropped while the buffer was full", self._dropped_unlogged)
                    self._dropped_unlogged = 0
                if outcome == "dropped":
                    self.dropped += count
                    self._pending.pop(entry.key, None)
                elif entry.count > count:  # repeated while being written: the rest goes next
                    entry.count -= count
                    self.written += 1
                else:
                    self._pending.pop(entry.key, None)
                    self.written += 1
                self._prune(time.monotonic())
                self._cond.notify_all()

    def _backoff(self, delay: float) -> None:
        """Under the lock: wait ``delay`` seconds before the next try; while someone flushes,
        no longer than the first backoff; not at all once closed."""
        start = time.monotonic()
        while not self._closed:
            end = start + (delay if not self._flushing else min(delay, INITIAL_RETRY_SECONDS))
            left = end - time.monotonic()
            if left <= 0:
                return
            self._cond.wait(left)

    def _write(self, entry: _Pending, series: _Series | None, count: int, last_observed: str) -> str:
        """One attempt: "written", "retry" (the API server is away or overloaded) or "dropped"."""
        now = time.monotonic()
        try:
            if series is not None and now - series.last < SERIES_WINDOW_SECONDS:
                try:
                    self.api.patch(
                        "Event",
                        f"{series.namespace}/{series.name}",
                        {"series": {"count": series.count + count, "lastObservedTime": last_observed}},
                        timeout=EVENT_TIMEOUT_SECONDS,
                    )
                    with self._cond:
                        series.count += count
                        series.last = now
                    return "written"
                except ApiError as e:
                    if e.status != 404:
                        raise
                    # the first Event is gone (expired): start a new one
            body = entry.body
            if count > 1:
                body = {**body, "series": {"count": count, "lastObservedTime": last_observed}}
            try:
                self.api.create(body, timeout=EVENT_TIMEOUT_SECONDS)
            except ApiError as e:
                if e.status != 409:
                    raise
                # AlreadyExists: an earlier try was written, its answer lost
            with self._cond:
                self._series[entry.key] = _Series(entry.name, entry.namespace, count, now)
            return "written"
        except ApiError as e:
            if e.unreachable or e.status == 429 or e.status >= 500:
                with self._cond:
                    first = self._failing_since is None
                    if first:
                        self._failing_since = now
                if first:
                    log.warning("could not record Events: %s; they wait and are retried", e)
                return "retry"
            log.warning(
                "could not record %s event for %s/%s: %s",
                entry.key[1],
                entry.namespace,
                entry.body["regarding"]["name"],
                e,
            )
            return "dropped"

    def _prune(self, now: float) -> None:
        """Forget series past their window (under the lock), once a minute."""
        if now - self._last_prune < 60.0:
            return
        self._last_prune = now
        for key in [k for k, s in self._series.items() if now - s.last >= SERIES_WINDOW_SECONDS]:
            del self._series[key]
