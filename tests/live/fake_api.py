"""An in-memory API server with KubeApi's methods, to drive kubespread.live with no network.

Objects are JSON dicts stored by (kind, key) where key is ``namespace/name`` (namespaced kinds)
or ``name``. Every write bumps one global resourceVersion, stored in the object's
metadata.resourceVersion, and is appended to a change log (ADDED / MODIFIED / DELETED with a
deep copy) that :meth:`FakeApi.watch` replays: a watch yields the changes after the version it
was given, waits up to ``watch_seconds`` for more, then ends, as a server-side watch timeout
does (a Reflector then watches again).

What the tests steer:

- ``unreachable = True``: every call (and every open watch) raises ApiError(0) until reset;
- :meth:`fail_next`: the next N calls whose description contains ``only`` raise ApiError;
- :meth:`break_watch`: the open (or next) watch of a kind raises ApiError(0) or (410) once;
- :meth:`before_next`: run a function just before the next matching call is served (someone
  else writing meanwhile);
- :meth:`hold_next`: the next matching call waits until the test releases it (an API server
  frozen for that call), then is served or fails as the test says; ``after=True`` holds it
  once served, before it answers (the write is visible to watches meanwhile);
- :meth:`lose_answer_next`: the next matching calls are served, then raise ApiError(0) (the
  write was applied, its answer lost in a restart);
- ``missing_kinds``: kinds whose CRD is not installed (404 on every request);
- ``graceful = True``: deleting a pod bound to a node only marks it Terminating
  (deletionTimestamp), as an API server does until the node's kubelet is done; the test
  ends it with :meth:`remove`;
- :meth:`put`, :meth:`remove`, :meth:`bind`: writes that bypass faults (another client),
  logged so watches see them; :meth:`stored` is the live dict, edits to it are silent.

Every call is recorded in ``calls`` as a description: ``"get Pod default/a"``, ``"list Node"``,
``"watch Pod"``, ``"create Event default/a.17f"``, ``"replace WorkloadSpread default/s status"``,
``"patch Pod default/a status"``, ``"delete Pod default/a"``,
``"request POST /api/v1/namespaces/default/pods/a/binding"``.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from kubespread.live.kube import JSON, MERGE_PATCH, RESOURCES, ApiError, Resource

__all__ = ["FakeApi", "Held", "join_live_threads", "merge_patch"]

Obj = dict[str, Any]


def _now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def join_live_threads(timeout: float = 2.0) -> None:
    """Wait for the live layer's threads (reflectors, leader election) whose stop event is set,
    so none outlives the test that started it."""
    for t in threading.enumerate():
        if t is not threading.current_thread() and t.name.startswith(
            ("reflector-", "leader-election", "binder-", "event-recorder")
        ):
            t.join(timeout)


def merge_patch(target: Any, patch: Any, path: str = "") -> Any:
    """A JSON merge patch (dicts merged recursively, None deletes), except ``status.conditions``
    which is merged by ``type`` as a strategic merge patch does."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        here = f"{path}.{k}" if path else k
        if v is None:
            out.pop(k, None)
        elif here == "status.conditions" and isinstance(v, list):
            conditions = [dict(c) for c in out.get(k) or []]
            for c in v:
                for i, old in enumerate(conditions):
                    if old.get("type") == c.get("type"):
                        conditions[i] = merge_patch(old, c)
                        break
                else:
                    conditions.append({ck: cv for ck, cv in c.items() if cv is not None})
            out[k] = conditions
        else:
            out[k] = merge_patch(out.get(k), v, here)
    return out


class Held:
    """A call held before it is served: :attr:`arrived` is set when it comes; it waits until
    :meth:`release` (then it is served, or raises ``error``)."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self._released = threading.Event()
        self._error: ApiError | None = None

    def release(self, error: ApiError | None = None) -> None:
        self._error = error
        self._released.set()

    def wait(self) -> None:
        self.arrived.set()
        if not self._released.wait(30.0):
            raise ApiError(0, "Unreachable", "a held call was never released")
        if self._error is not None:
            raise self._error


def _key_of(res: Resource, meta: Mapping[str, Any]) -> str:
    name = str(meta.get("name") or "")
    if res.namespaced:
        return f"{meta.get('namespace') or 'default'}/{name}"
    return name


def _split_key(res: Resource, key: str) -> tuple[str | None, str]:
    ns, _, name = key.rpartition("/")
    return (ns or "default") if res.namespaced else None, name


class FakeApi:
    """See the module notes. ``watch_seconds``: how long an idle watch stays open."""

    def __init__(
        self,
        *,
        watch_seconds: float = 0.1,
        context: str = "fake",
        missing_kinds: frozenset[str] = frozenset(),
    ) -> None:
        self.context = context
        self.host = "https://fake.invalid:6443"
        self.watch_seconds = watch_seconds
        self.missing_kinds = set(missing_kinds)
        self.version = 0
        self.objects: dict[tuple[str, str], Obj] = {}
        #: (resourceVersion, type, kind, object copy)
        self.changes: list[tuple[int, str, str, Obj]] = []
        self.calls: list[str] = []
        self._cond = threading.Condition(threading.RLock())
        self._unreachable = False
        self._fail: list[tuple[str, int]] = []  # (only, status) per call still to fail
        self._watch_faults: list[tuple[str | None, int]] = []
        self._hooks: list[tuple[str, Callable[[], None]]] = []
        self._lose: list[str] = []  # (only) per call whose answer is still to be lost
        self._held_answers: list[tuple[str, Held]] = []
        self._compacted = 0
        self._names = 0
        self.graceful = False

    # ------------------------------------------------------------------ steering
    @property
    def unreachable(self) -> bool:
        return self._unreachable

    @unreachable.setter
    def unreachable(self, value: bool) -> None:
        with self._cond:
            self._unreachable = value
            self._cond.notify_all()

    def fail_next(self, n: int = 1, *, status: int = 0, only: str = "") -> None:
        """The next ``n`` calls whose description contains ``only`` raise ApiError(status)."""
        with self._cond:
            self._fail += [(only, status)] * n

    def break_watch(self, kind: str | None = None, status: int = 0) -> None:
        """The open watch of ``kind`` (any kind when None), or the next one, raises once."""
        with self._cond:
            self._watch_faults.append((kind, status))
            self._cond.notify_all()

    def before_next(self, only: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` once, just before the next call whose description contains ``only``."""
        with self._cond:
            self._hooks.append((only, fn))

    def hold_next(self, only: str, *, after: bool = False) -> Held:
        """The next call whose description contains ``only`` waits for ``release()``: before
        it is served, or (``after``) once served, before it answers."""
        held = Held()
        if after:
            with self._cond:
                self._held_answers.append((only, held))
        else:
            self.before_next(only, held.wait)
        return held

    def lose_answer_next(self, n: int = 1, *, only: str = "") -> None:
        """The next ``n`` matching calls are served, then raise ApiError(0): applied, the
        answer lost."""
        with self._cond:
            self._lose += [only] * n

    def _answer(self, desc: str, result: Any) -> Any:
        """``result``, once a hold of its answer is released, unless a lost answer is due."""
        held = None
        with self._cond:
            for i, (only, h) in enumerate(self._held_answers):
                if only in desc:
                    held = h
                    del self._held_answers[i]
                    break
        if held is not None:
            held.wait()
        with self._cond:
            for i, only in enumerate(self._lose):
                if only in desc:
                    del self._lose[i]
                    raise ApiError(0, "Unreachable", f"{self.host}: connection reset (the answer was lost)")
        return result

    def compact(self) -> None:
        """Forget the change log: a watch from an older version gets 410 Gone."""
        with self._cond:
            self._compacted = self.version
            self.changes.clear()

    # ------------------------------------------------------------------ reading the store
    def stored(self, kind: str, key: str) -> Obj:
        """The stored dict itself (edit it to change the store without a resourceVersion)."""
        return self.objects[(kind, key)]

    def has(self, kind: str, key: str) -> bool:
        return (kind, key) in self.objects

    def objects_of(self, kind: str) -> list[Obj]:
        with self._cond:
            return [copy.deepcopy(o) for (k, _), o in sorted(self.objects.items()) if k == kind]

    def events(self, reason: str | None = None) -> list[Obj]:
        """Stored Events in creation order, optionally of one reason."""
        with self._cond:
            evs = [copy.deepcopy(o) for (k, _), o in self.objects.items() if k == "Event"]
        return [e for e in evs if reason is None or e.get("reason") == reason]

    def calls_matching(self, text: str) -> list[str]:
        with self._cond:
            return [c for c in self.calls if text in c]

    # ------------------------------------------------------------------ internals
    def _enter(self, desc: str) -> None:
        """Record a call, run a hook due for it, raise a fault due for it."""
        hook = None
        with self._cond:
            self.calls.append(desc)
            for i, (only, fn) in enumerate(self._hooks):
                if only in desc:
                    hook = fn
                    del self._hooks[i]
                    break
        if hook is not None:
            hook()
        with self._cond:
            if self._unreachable:
                raise ApiError(0, "Unreachable", f"{self.host}: connection refused")
            for i, (only, status) in enumerate(self._fail):
                if only in desc:
                    del self._fail[i]
                    if status == 0:
                        raise ApiError(0, "Unreachable", f"{self.host}: connection refused")
                    raise ApiError(status, "Injected", f"injected failure of {desc}")

    def _resource(self, kind: str) -> Resource:
        res = RESOURCES.get(kind)
        if res is None:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({kind})")
        if kind in self.missing_kinds:
            raise ApiError(
                404, "NotFound", f"the server could not find the requested resource ({res.plural})"
            )
        return res

    def _write(self, type_: str, kind: str, key: str, obj: Obj | None) -> Obj:
        """Store (or delete, obj None) with a new resourceVersion and log the change."""
        with self._cond:
            self.version += 1
            if obj is None:
                gone = self.objects.pop((kind, key))
                gone["metadata"]["resourceVersion"] = str(self.version)
                stored = gone
            else:
                obj["metadata"]["resourceVersion"] = str(self.version)
                self.objects[(kind, key)] = obj
                stored = obj
            self.changes.append((self.version, type_, kind, copy.deepcopy(stored)))
            self._cond.notify_all()
            return copy.deepcopy(stored)

    def _not_found(self, res: Resource, key: str) -> ApiError:
        return ApiError(404, "NotFound", f'{res.plural} "{key.rpartition("/")[2]}" not found')

    def _conflict(self, res: Resource, key: str) -> ApiError:
        return ApiError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {res.plural} "{key.rpartition("/")[2]}": the object has '
            "been modified; please apply your changes to the latest version and try again",
        )

    def _fill(self, res: Resource, obj: Mapping[str, Any]) -> tuple[str, Obj]:
        new = copy.deepcopy(dict(obj))
        new.setdefault("apiVersion", res.api_version)
        new.setdefault("kind", res.kind)
        meta = new.setdefault("metadata", {})
        if res.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise ApiError(422, "Invalid", "metadata.name: Required value")
            with self._cond:
                self._names += 1
                meta["name"] = f"{meta['generateName']}{self._names:05x}"
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", _now_stamp())
        if "spec" in new:
            meta.setdefault("generation", 1)
        return _key_of(res, meta), new

    # ------------------------------------------------------------------ another client's writes
    def put(self, obj: Mapping[str, Any]) -> Obj:
        """Create or overwrite, bypassing faults and preconditions (another client's write)."""
        res = self._resource(str(obj.get("kind")))
        key, new = self._fill(res, obj)
        with self._cond:
            old = self.objects.get((res.kind, key))
            if old is not None:
                new["metadata"]["uid"] = old["metadata"]["uid"]
                new["metadata"]["creationTimestamp"] = old["metadata"]["creationTimestamp"]
            return self._write("ADDED" if old is None else "MODIFIED", res.kind, key, new)

    def remove(self, kind: str, key: str) -> None:
        """Delete, bypassing faults (another client's delete)."""
        self._write("DELETED", kind, key, None)

    def bind(self, key: str, node: str) -> Obj:
        """Bind a pod as another scheduler would, bypassing faults."""
        ns, _, name = key.rpartition("/")
        return self._bind(ns or "default", name, {"target": {"name": node}})

    # ------------------------------------------------------------------ KubeApi's surface
    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float = 30.0,
    ) -> Any:
        desc = f"request {method} {path}"
        self._enter(desc)
        return self._answer(desc, self._request(method, path, body))

    def _request(self, method: str, path: str, body: Any) -> Any:
        if path == "/version":
            return {"major": "1", "minor": "35"}
        res, ns, name, sub = self._parse(path)
        key = f"{ns or 'default'}/{name}" if res.namespaced else name
        if method == "POST" and res.kind == "Pod" and sub == "binding":
            return self._bind(ns or "default", name, body or {})
        if method == "POST" and res.kind == "Pod" and sub == "eviction":
            return self._evict(ns or "default", name, body or {})
        if method == "GET" and name:
            return self._get(res, key)
        if method == "GET":
            items, version = self._list(res, ns)
            return {"items": items, "metadata": {"resourceVersion": version}}
        if method == "POST":
            body = dict(body or {})
            if ns:
                body.setdefault("metadata", {}).setdefault("namespace", ns)
            return self._create(res, body)
        if method == "PUT":
            return self._replace(res, body or {}, sub)
        if method == "PATCH":
            return self._patch(res, key, body, sub)
        if method == "DELETE":
            self._delete(res, key, body)
            return None
        raise ApiError(405, "MethodNotAllowed", f"{method} {path}")

    def _parse(self, path: str) -> tuple[Resource, str | None, str, str]:
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"]:
            api_version, rest = parts[1], parts[2:]
        elif parts[:1] == ["apis"]:
            api_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            raise ApiError(404, "NotFound", path)
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        plural, name, sub = rest[0], (rest[1] if len(rest) > 1 else ""), (rest[2] if len(rest) > 2 else "")
        for res in RESOURCES.values():
            if res.plural == plural and res.api_version == api_version:
                self._resource(res.kind)
                return res, ns, name, sub
        raise ApiError(404, "NotFound", path)

    def get(self, kind: str, key: str, *, timeout: float = 30.0) -> Obj:
        self._enter(f"get {kind} {key}")
        return self._get(self._resource(kind), key)

    def _get(self, res: Resource, key: str) -> Obj:
        with self._cond:
            obj = self.objects.get((res.kind, key))
            if obj is None:
                raise self._not_found(res, key)
            return copy.deepcopy(obj)

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[Obj], str]:
        self._enter(f"list {kind}")
        return self._list(self._resource(kind), namespace)

    def _list(self, res: Resource, namespace: str | None) -> tuple[list[Obj], str]:
        with self._cond:
            items = [
                copy.deepcopy(o)
                for (k, key), o in sorted(self.objects.items())
                if k == res.kind and (namespace is None or key.startswith(f"{namespace}/"))
            ]
            return items, str(self.version)

    def watch(
        self, kind: str, resource_version: str, *, timeout_seconds: int = 60, namespace: str | None = None
    ) -> Iterator[tuple[str, Obj]]:
        self._enter(f"watch {kind}")
        self._resource(kind)
        return self._watch(
            kind, int(resource_version or 0), min(timeout_seconds, self.watch_seconds), namespace
        )

    def _watch(
        self, kind: str, since: int, seconds: float, namespace: str | None
    ) -> Iterator[tuple[str, Obj]]:
        deadline = time.monotonic() + seconds
        while True:
            with self._cond:
                for i, (k, status) in enumerate(self._watch_faults):
                    if k is None or k == kind:
                        del self._watch_faults[i]
                        if status == 410:
                            raise ApiError(410, "Expired", "too old resource version")
                        raise ApiError(0, "Unreachable", f"{self.host}: watch of {kind} broke")
                if self._unreachable:
                    raise ApiError(0, "Unreachable", f"{self.host}: watch of {kind} broke")
                if since < self._compacted:
                    raise ApiError(410, "Expired", f"too old resource version: {since} ({self._compacted})")
                batch = [
                    (rv, t, copy.deepcopy(o))
                    for rv, t, k, o in self.changes
                    if rv > since
                    and k == kind
                    and (namespace is None or o["metadata"].get("namespace") == namespace)
                ]
                if not batch:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    self._cond.wait(left)
                    continue
            for rv, type_, obj in batch:
                since = rv
                yield type_, obj

    def create(
        self, obj: Mapping[str, Any], *, subresource: str = "", name: str = "", timeout: float = 30.0
    ) -> Obj:
        res = self._resource(str(obj.get("kind")))
        meta = obj.get("metadata") or {}
        desc = f"create {res.kind} {_key_of(res, meta)}{' ' + subresource if subresource else ''}"
        self._enter(desc)
        if subresource:
            raise ApiError(405, "MethodNotAllowed", f"the fake API does not serve {res.plural}/{subresource}")
        return self._answer(desc, self._create(res, obj))

    def _create(self, res: Resource, obj: Mapping[str, Any]) -> Obj:
        key, new = self._fill(res, obj)
        with self._cond:
            if (res.kind, key) in self.objects:
                raise ApiError(
                    409, "AlreadyExists", f'{res.plural} "{new["metadata"]["name"]}" already exists'
                )
            return self._write("ADDED", res.kind, key, new)

    def replace(self, obj: Mapping[str, Any], *, subresource: str = "") -> Obj:
        res = self._resource(str(obj.get("kind")))
        key = _key_of(res, obj.get("metadata") or {})
        self._enter(f"replace {res.kind} {key}{' ' + subresource if subresource else ''}")
        return self._replace(res, obj, subresource)

    def _replace(self, res: Resource, obj: Mapping[str, Any], subresource: str) -> Obj:
        meta = obj.get("metadata") or {}
        key = _key_of(res, meta)
        with self._cond:
            old = self.objects.get((res.kind, key))
            if old is None:
                raise self._not_found(res, key)
            wanted = meta.get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise self._conflict(res, key)
            if subresource == "status":
                new = copy.deepcopy(old)
                new["status"] = copy.deepcopy(obj.get("status") or {})
            elif subresource:
                raise ApiError(405, "MethodNotAllowed", f"the fake API does not serve {subresource}")
            else:
                new = copy.deepcopy(dict(obj))
                new.setdefault("apiVersion", res.api_version)
                new.setdefault("kind", res.kind)
                for field in ("uid", "creationTimestamp", "namespace", "generation"):
                    if field in old["metadata"]:
                        new["metadata"][field] = old["metadata"][field]
                if "status" in old:  # the status subresource keeps it
                    new["status"] = copy.deepcopy(old["status"])
                if new.get("spec") != old.get("spec") and "generation" in old["metadata"]:
                    new["metadata"]["generation"] = old["metadata"]["generation"] + 1
            return self._write("MODIFIED", res.kind, key, new)

    def patch(
        self,
        kind: str,
        key: str,
        patch: Any,
        *,
        subresource: str = "",
        content_type: str = MERGE_PATCH,
        timeout: float = 30.0,
    ) -> Obj:
        self._enter(f"patch {kind} {key}{' ' + subresource if subresource else ''}")
        return self._patch(self._resource(kind), key, patch, subresource)

    def _patch(self, res: Resource, key: str, patch: Any, subresource: str) -> Obj:
        with self._cond:
            old = self.objects.get((res.kind, key))
            if old is None:
                raise self._not_found(res, key)
            if not isinstance(patch, dict):
                raise ApiError(400, "BadRequest", "the fake API takes merge patches only")
            wanted = (patch.get("metadata") or {}).get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise self._conflict(res, key)
            if subresource == "status":
                patch = {"status": patch.get("status") or {}}
            elif subresource:
                raise ApiError(405, "MethodNotAllowed", f"the fake API does not serve {subresource}")
            new = merge_patch(old, patch)
            for field in ("name", "namespace", "uid", "creationTimestamp", "generation"):
                if field in old["metadata"]:
                    new["metadata"][field] = old["metadata"][field]
            if new.get("spec") != old.get("spec") and "generation" in old["metadata"]:
                new["metadata"]["generation"] = old["metadata"]["generation"] + 1
            return self._write("MODIFIED", res.kind, key, new)

    def delete(
        self, kind: str, key: str, *, body: Mapping[str, Any] | None = None, timeout: float = 30.0
    ) -> None:
        self._enter(f"delete {kind} {key}")
        self._delete(self._resource(kind), key, body)

    def _delete(self, res: Resource, key: str, body: Mapping[str, Any] | None = None) -> None:
        with self._cond:
            if (res.kind, key) not in self.objects:
                raise self._not_found(res, key)
            uid = ((body or {}).get("preconditions") or {}).get("uid")
            old = self.objects[(res.kind, key)]
            if uid and uid != old["metadata"].get("uid"):
                raise ApiError(409, "Conflict", f"Precondition failed: UID in precondition: {uid}")
            now = (body or {}).get("gracePeriodSeconds") == 0
            if self.graceful and not now and res.kind == "Pod" and (old.get("spec") or {}).get("nodeName"):
                if not old["metadata"].get("deletionTimestamp"):
                    new = copy.deepcopy(old)
                    new["metadata"]["deletionTimestamp"] = _now_stamp()
                    new["metadata"]["deletionGracePeriodSeconds"] = 30
                    self._write("MODIFIED", res.kind, key, new)
                return
            self._write("DELETED", res.kind, key, None)

    def _bind(self, namespace: str, name: str, binding: Mapping[str, Any]) -> Obj:
        key = f"{namespace}/{name}"
        node = str((binding.get("target") or {}).get("name") or "")
        with self._cond:
            pod = self.objects.get(("Pod", key))
            if pod is None:
                raise ApiError(404, "NotFound", f'pods "{name}" not found')
            uid = (binding.get("metadata") or {}).get("uid")
            if uid and uid != pod["metadata"]["uid"]:
                raise ApiError(
                    409,
                    "Conflict",
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {pod['metadata']['uid']}",
                )
            bound = (pod.get("spec") or {}).get("nodeName")
            if bound:
                raise ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already '
                    f'assigned to node "{bound}"',
                )
            new = merge_patch(
                pod,
                {
                    "spec": {"nodeName": node},
                    "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
                },
            )
            return self._write("MODIFIED", "Pod", key, new)

    def _evict(self, namespace: str, name: str, eviction: Mapping[str, Any]) -> Obj:
        """policy/v1 Eviction as the API server grants it: the uid precondition (409), a
        terminating pod deleted again without asking, several budgets 500, a budget without
        disruptions left 429 (else its disruptionsAllowed taken and the pod listed in
        disruptedPods), then the delete (graceful as ``graceful`` says)."""
        key = f"{namespace}/{name}"
        with self._cond:
            pod = self.objects.get(("Pod", key))
            if pod is None:
                raise ApiError(404, "NotFound", f'pods "{name}" not found')
            uid = ((eviction.get("deleteOptions") or {}).get("preconditions") or {}).get("uid")
            if uid and uid != pod["metadata"]["uid"]:
                raise ApiError(409, "Conflict", f"Precondition failed: UID in precondition: {uid}")
            if not pod["metadata"].get("deletionTimestamp"):
                labels = pod["metadata"].get("labels") or {}
                budgets = [
                    b
                    for (kind, k), b in self.objects.items()
                    if kind == "PodDisruptionBudget"
                    and k.startswith(f"{namespace}/")
                    and all(
                        labels.get(lk) == lv
                        for lk, lv in (
                            ((b.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
                        ).items()
                    )
                ]
                if len(budgets) > 1:
                    raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget")
                if budgets:
                    budget = budgets[0]
                    status = budget.get("status") or {}
                    if int(status.get("disruptionsAllowed") or 0) <= 0:
                        raise ApiError(
                            429,
                            "TooManyRequests",
                            "Cannot evict pod as it would violate the pod's disruption budget.",
                        )
                    new = copy.deepcopy(budget)
                    new.setdefault("status", {})["disruptionsAllowed"] = int(status["disruptionsAllowed"]) - 1
                    new["status"].setdefault("disruptedPods", {})[name] = _now_stamp()
                    bkey = f"{namespace}/{budget['metadata']['name']}"
                    self._write("MODIFIED", "PodDisruptionBudget", bkey, new)
            self._delete(self._resource("Pod"), key)
            return {"kind": "Status", "apiVersion": "v1", "status": "Success"}

    def server_minor_version(self) -> int | None:
        self._enter("get /version")
        return 35

    def server_version(self) -> str | None:
        self._enter("get /version")
        return "1.35"
