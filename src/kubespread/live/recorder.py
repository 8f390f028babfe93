"""Events on a live cluster, as kube-scheduler and the controllers write them (events.k8s.io/v1).

A repeated event (same object, reason and note) within six minutes becomes a series on the
first one (``series.count``), as client-go's event broadcaster does, so a pod retried every
few seconds does not flood the namespace with Events. Writing an Event never fails the work
it reports: errors are logged.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime
from typing import Any, Final

from kubespread.api.meta import KubeObject
from kubespread.live.kube import ApiError, KubeApi

__all__ = ["EventRecorder", "micro_time", "now_stamp"]

log = logging.getLogger("kubespread.live")

SERIES_WINDOW_SECONDS: Final = 6 * 60


def micro_time(when: datetime | None = None) -> str:
    """metav1.MicroTime: RFC 3339 with microseconds."""
    return (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_stamp() -> str:
    """metav1.Time: RFC 3339, seconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    """Writes Events for one component (``reportingController``) and instance."""

    def __init__(self, api: KubeApi, controller: str, instance: str) -> None:
        self.api = api
        self.controller = controller
        self.instance = instance
        self._series: dict[tuple[str, str, str], tuple[str, str, int, float]] = {}
        self._lock = threading.Lock()

    def record(self, obj: KubeObject, type_: str, reason: str, action: str, note: str) -> None:
        meta = obj.metadata
        namespace = meta.namespace or "default"  # a cluster-scoped object's Events live in default
        regarding: dict[str, Any] = {
            "apiVersion": obj.API_VERSION,
            "kind": obj.KIND,
            "name": meta.name,
            "namespace": namespace,
        }
        if meta.uid:
            regarding["uid"] = meta.uid
        key = (meta.uid or obj.key, reason, note)
        now = time.monotonic()
        with self._lock:
            previous = self._series.get(key)
        try:
            if previous is not None and now - previous[3] < SERIES_WINDOW_SECONDS:
                name, ns, count, _ = previous
                self.api.patch(
                    "Event",
                    f"{ns}/{name}",
                    {"series": {"count": count + 1, "lastObservedTime": micro_time()}},
                )
                with self._lock:
                    self._series[key] = (name, ns, count + 1, now)
                return
            name = f"{meta.name}.{time.time_ns():x}"
            self.api.create(
                {
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
            )
            with self._lock:
                self._series[key] = (name, namespace, 1, now)
        except ApiError as e:
            log.warning("could not record %s event for %s: %s", reason, obj.key, e)
