"""Keeping a ClusterState in step with an API server: list, then watch, re-list on any break.

One :class:`Reflector` thread per kind lists the objects, then watches from the list's
resourceVersion. When the watch breaks (the API server restarts, the connection drops, the
version is too old: 410 Gone) it waits with a growing backoff and lists again; objects gone
meanwhile are deleted from the cache, so nothing is missed across a restart. The
:class:`ClusterCache` decodes objects with kubespread's model and applies them to one
ClusterState under one lock: the scheduler, the webhook and the controller read it under the
same lock.

Assumed pods: the scheduler puts a pod on its node in the cache before the binding is
confirmed (kube-scheduler's assume). Until the watch shows the pod bound, an update of the
pod that still has no node keeps the assumed node, so no pod is scheduled twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from kubespread.api.core import Node, Pod
from kubespread.api.errors import DecodeError
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject
from kubespread.cluster.errors import ClusterError
from kubespread.cluster.state import ClusterState
from kubespread.live.kube import ApiError, DeniedError, KubeApi

__all__ = ["ClusterCache", "Reflector", "decode"]

log = logging.getLogger("kubespread.live")

INITIAL_RETRY_SECONDS: Final = 0.2
MAX_RETRY_SECONDS: Final = 5.0
WATCH_SECONDS: Final = 60


def decode(data: dict[str, Any]) -> KubeObject | None:
    """The object in kubespread's model; None (logged) for kinds it does not model or objects
    it cannot read, which a live cluster may hold and which must not stop the cache."""
    cls = class_for(str(data.get("apiVersion", "")), str(data.get("kind", "")))
    if cls is None:
        return None
    try:
        return cls.from_dict(data)
    except DecodeError as e:
        meta = data.get("metadata") or {}
        log.warning(
            "skipping %s %s/%s: %s: %s",
            data.get("kind"),
            meta.get("namespace", ""),
            meta.get("name", ""),
            e.field,
            e.message,
        )
        return None


class ClusterCache:
    """The cluster as the watches show it. Every read and change happens under ``lock``."""

    def __init__(self) -> None:
        self.cluster = ClusterState()
        self.lock = threading.RLock()
        #: pod key -> node it was assumed onto, until the watch shows it bound
        self.assumed: dict[str, str] = {}
        #: pods bound to a node the cache does not have (yet): added when it comes
        self.orphans: dict[str, Pod] = {}
        #: set on every change: the scheduler's wake-up
        self.changed = threading.Event()

    def apply(self, type_: str, data: dict[str, Any]) -> KubeObject | None:
        """Apply one watch event (or listed item as MODIFIED); the object as decoded, None when
        kubespread does not read it."""
        obj = decode(data)
        if obj is None:
            return None
        with self.lock:
            try:
                self._apply(type_, obj)
            except ClusterError as e:  # e.g. a delete for an object never seen
                log.warning("cache: %s %s %s: %s", type_, obj.KIND, obj.key, e)
        self.changed.set()
        return obj

    def _apply(self, type_: str, obj: KubeObject) -> None:
        key = obj.key
        if type_ == "DELETED":
            self.remove(obj.KIND, key)
            return
        if isinstance(obj, Pod):
            node = self.assumed.get(key)
            if obj.spec.node_name:
                self.assumed.pop(key, None)
            elif node is not None:
                obj.spec.node_name = node  # not yet confirmed: keep it where it was assumed
            old = self.cluster.pods.get(key)
            if old is not None and old.spec == obj.spec:
                obj.spec = old.spec  # the same spec decoded again: the queue sees "unchanged"
            if obj.spec.node_name and obj.spec.node_name not in self.cluster.nodes:
                # its node is not (or no longer) here: held aside until the node appears
                if old is not None:
                    self.cluster.delete_pod(key)
                self.orphans[key] = obj
                return
            self.orphans.pop(key, None)
        self.upsert(obj)
        if isinstance(obj, Node):
            for pod_key, pod in list(self.orphans.items()):
                if pod.spec.node_name == obj.metadata.name:
                    del self.orphans[pod_key]
                    self.upsert(pod)

    def upsert(self, obj: KubeObject) -> None:
        with self.lock:
            if self.cluster.get(obj.KIND, obj.key) is None:
                self.cluster.add(obj)
            else:
                self.cluster.update(obj)

    def remove(self, kind: str, key: str) -> None:
        """Forget an object. A Node goes even with pods still bound to it (the API deletes the
        node first, its pods later): they wait aside, as pods of an unknown node do."""
        with self.lock:
            if kind == Pod.KIND:
                self.assumed.pop(key, None)
                self.orphans.pop(key, None)
            if self.cluster.get(kind, key) is None:
                return
            if kind == Node.KIND:
                for pod_key, pod in list(self.cluster.pods_on_node(key).items()):
                    self.cluster.delete_pod(pod_key)
                    self.assumed.pop(pod_key, None)
                    self.orphans[pod_key] = pod
            self.cluster.delete(kind, key)

    def keys(self, kind: str) -> set[str]:
        with self.lock:
            c = self.cluster
            special = {"Pod": c.pods, "Node": c.nodes, "Namespace": c.namespaces}
            return set(special[kind] if kind in special else c.objects(kind))

    def assume(self, pod_key: str, node: str) -> None:
        with self.lock:
            self.assumed[pod_key] = node
            self.cluster.bind(pod_key, node)

    def forget(self, pod_key: str) -> None:
        """The binding failed: the pod is pending again, unless the watch saw it bound."""
        with self.lock:
            if self.assumed.pop(pod_key, None) is not None:
                pod = self.cluster.pods.get(pod_key)
                if pod is not None and pod.spec.node_name:
                    self.cluster.unbind(pod_key)


class Reflector(threading.Thread):
    """List then watch one kind into a ClusterCache, forever (until ``stop``)."""

    def __init__(self, api: KubeApi, kind: str, cache: ClusterCache, stop: threading.Event) -> None:
        super().__init__(name=f"reflector-{kind}", daemon=True)
        self.api = api
        self.kind = kind
        self.cache = cache
        self.stop = stop
        self.synced = threading.Event()
        #: a 401/403 on the first list: the reflector gave up (start_reflectors says why)
        self.denied: ApiError | None = None
        #: how many times the list was taken again after a break (for tests and logs)
        self.relists = 0
        self._on_relist: list[Callable[[], None]] = []

    def run(self) -> None:
        delay = INITIAL_RETRY_SECONDS
        first = True
        while not self.stop.is_set():
            try:
                items, version = self.api.list(self.kind)
                self._replace(items)
                if not first:
                    self.relists += 1
                    log.info("%s: listed again (%d objects) after the watch broke", self.kind, len(items))
                first = False
                self.synced.set()
                delay = INITIAL_RETRY_SECONDS
                version = self._watch(version)
            except ClusterError as e:  # a bug, not the API: keep following, from a new list
                log.error("%s: the cache refused a change (%s); listing again", self.kind, e)
                self.stop.wait(delay)
                delay = min(delay * 2, MAX_RETRY_SECONDS)
            except ApiError as e:
                if self.stop.is_set():
                    return
                if e.status == 410:
                    log.info("%s: watch expired (410 Gone); listing again", self.kind)
                    continue
                if e.denied and first:  # never listed: credentials or RBAC, retrying won't help
                    self.denied = e
                    return
                if e.status == 404 and self.kind in ("WorkloadSpread", "CloneSet"):
                    self.synced.set()  # the CRD is not installed: nothing to watch, look again later
                    delay = MAX_RETRY_SECONDS
                else:
                    log.warning("%s: %s; retrying in %.1fs", self.kind, e, delay)
                self.stop.wait(delay)
                delay = min(delay * 2, MAX_RETRY_SECONDS)

    def _replace(self, items: Iterable[dict[str, Any]]) -> None:
        """What a list says is the whole truth: add or update every item, delete the rest."""
        seen: set[str] = set()
        for item in items:
            obj = self.cache.apply("MODIFIED", item)
            if obj is not None:
                seen.add(obj.key)
        with self.cache.lock:
            gone = self.cache.keys(self.kind) - seen
            if self.kind == Pod.KIND:
                gone |= set(self.cache.orphans) - seen
            for key in gone:
                self.cache.remove(self.kind, key)
        self.cache.changed.set()

    def _watch(self, version: str) -> str:
        while not self.stop.is_set():
            for type_, obj in self.api.watch(self.kind, version, timeout_seconds=WATCH_SECONDS):
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if type_ == "BOOKMARK":
                    continue
                self.cache.apply(type_, obj)
                if self.stop.is_set():
                    break
        return version


def start_reflectors(
    api: KubeApi, kinds: Iterable[str], cache: ClusterCache, stop: threading.Event, *, timeout: float = 60.0
) -> list[Reflector]:
    """Start one reflector per kind and wait until each has listed once. A 401 or 403 on a
    first list raises at once (with what to check) instead of waiting out ``timeout``."""
    reflectors = [Reflector(api, kind, cache, stop) for kind in kinds]
    for r in reflectors:
        r.start()
    deadline = time.monotonic() + timeout
    for r in reflectors:
        while not r.synced.wait(0.2):
            if r.denied is not None:
                raise DeniedError(r.denied, api.host)
            if stop.is_set():
                return reflectors
            if time.monotonic() > deadline:
                raise ApiError(0, "Unreachable", f"{api.host}: could not list {r.kind} within {timeout:.0f}s")
    return reflectors
