"""The Kubernetes API as kubespread talks to it: JSON in, JSON out, through the official client.

The official client (``kubernetes``) reads the kubeconfig (contexts, certificates, tokens, exec
plugins) and owns the TLS connection pool; requests go through it as plain JSON, because
kubespread decodes objects with its own model and never needs the generated classes. Errors
are :class:`ApiError` with the HTTP status (0 when the server could not be reached), so
callers decide on 409 Conflict or a restart of the API server without parsing exceptions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "RESOURCES",
    "ApiError",
    "KubeApi",
    "LiveError",
    "Resource",
    "resource_for",
]

log = logging.getLogger("kubespread.live")

JSON: Final = "application/json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
#: connections kept open to the API server (urllib3's pool size)
CONNECTIONS: Final = 32


class LiveError(Exception):
    """A problem the user must fix (no kubeconfig, unknown context): printed, never a traceback."""


class ApiError(Exception):
    """An answer other than 2xx. ``status`` 0: the API server could not be reached."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message

    @property
    def unreachable(self) -> bool:
        return self.status == 0

    @property
    def denied(self) -> bool:
        """401 or 403: waiting will not help (bad credentials, or RBAC lacks the verb)."""
        return self.status in (401, 403)

    def advice(self, where: str = "") -> str:
        """The message for a user: what failed (after ``where``), and for a denial what to check."""
        prefix = f"{where}: " if where else ""
        if self.status == 401:
            return f"{prefix}401 Unauthorized: check the kubeconfig's credentials"
        if self.status == 403:
            return f"{prefix}403 Forbidden: {self.message} (check the RBAC of the account it runs as)"
        return f"{prefix}{self}"


class DeniedError(ApiError):
    """A 401/403 that ends a command at start: its text is the advice alone."""

    def __init__(self, cause: ApiError, host: str) -> None:
        super().__init__(cause.status, cause.reason, cause.advice(host))
        self.args = (self.message,)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Resource:
    """Where a kind lives in the REST API."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str = "") -> str:
        base = f"/api/{self.api_version}" if "/" not in self.api_version else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base


#: every kind kubespread reads or writes on a live cluster
RESOURCES: Final[Mapping[str, Resource]] = {
    r.kind: r
    for r in (
        Resource("Node", "v1", "nodes", namespaced=False),
        Resource("Namespace", "v1", "namespaces", namespaced=False),
        Resource("Pod", "v1", "pods"),
        Resource("Service", "v1", "services"),
        Resource("ServiceAccount", "v1", "serviceaccounts"),
        Resource("Secret", "v1", "secrets"),
        Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False),
        Resource("Deployment", "apps/v1", "deployments"),
        Resource("ReplicaSet", "apps/v1", "replicasets"),
        Resource("StatefulSet", "apps/v1", "statefulsets"),
        Resource("Job", "batch/v1", "jobs"),
        Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
        Resource("CloneSet", "apps.kruise.io/v1alpha1", "clonesets"),
        Resource("WorkloadSpread", "apps.kruise.io/v1alpha1", "workloadspreads"),
        Resource("Lease", "coordination.k8s.io/v1", "leases"),
        Resource("Event", "events.k8s.io/v1", "events"),
        Resource("CustomResourceDefinition", "apiextensions.k8s.io/v1", "customresourcedefinitions", False),
        Resource(
            "MutatingWebhookConfiguration",
            "admissionregistration.k8s.io/v1",
            "mutatingwebhookconfigurations",
            False,
        ),
        Resource(
            "ValidatingWebhookConfiguration",
            "admissionregistration.k8s.io/v1",
            "validatingwebhookconfigurations",
            False,
        ),
    )
}


def resource_for(kind: str) -> Resource:
    try:
        return RESOURCES[kind]
    except KeyError:
        raise LiveError(f"kubespread does not know where {kind} lives in the API") from None


def _key_parts(key: str) -> tuple[str | None, str]:
    ns, _, name = key.rpartition("/")
    return (ns or None), name


class KubeApi:
    """One API server, as a kubeconfig context names it."""

    def __init__(self, api_client: Any, *, context: str = "") -> None:
        self._client = api_client
        self.context = context
        self.host: str = api_client.configuration.host
        # the scheduler's binder threads, watches, event and lease writers each hold a
        # connection at once: keep that many (the client's default, 5 per core, would discard)
        pool = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
        kw = getattr(pool, "connection_pool_kw", None)
        if isinstance(kw, dict):
            kw["maxsize"] = max(int(kw.get("maxsize") or 0), CONNECTIONS)

    @classmethod
    def connect(cls, kubeconfig: Path | str | None = None, context: str | None = None) -> KubeApi:
        """The client for ``context`` of ``kubeconfig`` ($KUBECONFIG, ~/.kube/config when None;
        in a pod with neither, the service account)."""
        try:
            from kubernetes import config
            from kubernetes.config.config_exception import ConfigException
        except ImportError:
            raise LiveError("live clusters need the optional extra: pip install 'kubespread[live]'") from None
        try:
            if kubeconfig is None and not _default_kubeconfig_exists():
                try:
                    config.load_incluster_config()
                    from kubernetes.client import ApiClient

                    return cls(ApiClient(), context="in-cluster")
                except ConfigException:
                    pass
            path = str(kubeconfig) if kubeconfig is not None else None
            if path is not None and not Path(path).is_file():
                raise LiveError(f"{path}: no such kubeconfig file")
            client = config.new_client_from_config(config_file=path, context=context)
        except ConfigException as e:
            where = kubeconfig or "the default kubeconfig"
            raise LiveError(f"{where}: {e}") from None
        name = context or _current_context(path)
        return cls(client, context=name)

    def set_pool_size(self, size: int) -> None:
        """Keep up to ``size`` connections to the API server open (the client's default is 5 per
        CPU): a server answering many requests at once otherwise opens, and throws away, a new
        TLS connection for each request beyond them."""
        manager = self._client.rest_client.pool_manager
        manager.connection_pool_kw["maxsize"] = size
        manager.clear()

    # ------------------------------------------------------------------ requests
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
        """One request; the decoded JSON answer (None when empty)."""
        resp = self._send(method, path, query=query, body=body, content_type=content_type, timeout=timeout)
        data = resp.data
        return json.loads(data) if data else None

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float | tuple[float, float] = 30.0,
        stream: bool = False,
    ) -> Any:
        import urllib3

        params = [(k, v if not isinstance(v, bool) else str(v).lower()) for k, v in (query or {}).items()]
        _, url, headers, _, _ = self._client.param_serialize(
            method=method,
            resource_path=path,
            query_params=params,
            header_params={"Accept": JSON, "Content-Type": content_type},
            auth_settings=["BearerToken"],
        )
        data = json.dumps(body).encode() if body is not None else None
        if isinstance(timeout, tuple):
            t = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            t = urllib3.Timeout(connect=min(timeout, 10.0), read=timeout)
        try:
            resp = self._client.rest_client.pool_manager.request(
                method,
                url,
                body=data,
                headers=headers,
                timeout=t,
                retries=False,
                preload_content=not stream,
            )
        except urllib3.exceptions.HTTPError as e:
            raise ApiError(0, "Unreachable", f"{self.host}: {e}") from None
        if not 200 <= resp.status < 300:
            raw = resp.data if not stream else resp.read()
            raise _api_error(resp.status, raw)
        return resp

    def get(self, kind: str, key: str, *, timeout: float = 30.0) -> dict[str, Any]:
        ns, name = _key_parts(key)
        return self.request("GET", resource_for(kind).path(ns, name), timeout=timeout)

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[dict[str, Any]], str]:
        """Every object of ``kind`` (pages of 500) with kind/apiVersion filled in, and the
        list's resourceVersion to watch from."""
        res = resource_for(kind)
        items: list[dict[str, Any]] = []
        query: dict[str, Any] = {"limit": 500}
        while True:
            page = self.request("GET", res.path(namespace), query=query, timeout=60.0)
            for item in page.get("items") or []:
                item.setdefault("apiVersion", res.api_version)
                item.setdefault("kind", res.kind)
                items.append(item)
            meta = page.get("metadata") or {}
            cont = meta.get("continue")
            if not cont:
                return items, str(meta.get("resourceVersion") or "")
            query = {"limit": 500, "continue": cont}

    def watch(
        self, kind: str, resource_version: str, *, timeout_seconds: int = 60, namespace: str | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """The changes after ``resource_version`` as (type, object), until the server ends the
        watch. An ERROR event (410 Gone: the version is too old) is raised as ApiError."""
        res = resource_for(kind)
        resp = self._send(
            "GET",
            res.path(namespace),
            query={
                "watch": True,
                "resourceVersion": resource_version,
                "allowWatchBookmarks": True,
                "timeoutSeconds": timeout_seconds,
            },
            timeout=(10.0, timeout_seconds + 15.0),
            stream=True,
        )
        import urllib3

        buf = b""
        try:
            for chunk in resp.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    try:
                        event = json.loads(line)
                    except ValueError:
                        raise ApiError(0, "Unreachable", f"{self.host}: a watch event cut short") from None
                    type_, obj = event.get("type", ""), event.get("object") or {}
                    if type_ == "ERROR":
                        raise ApiError(
                            int(obj.get("code") or 500), str(obj.get("reason") or ""), str(obj.get("message"))
                        )
                    obj.setdefault("apiVersion", res.api_version)
                    obj.setdefault("kind", res.kind)
                    yield type_, obj
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ApiError(0, "Unreachable", f"{self.host}: watch of {res.plural} broke: {e}") from None
        finally:
            resp.release_conn()

    def create(
        self,
        obj: Mapping[str, Any],
        *,
        subresource: str = "",
        name: str = "",
        kind: str = "",
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """POST ``obj``; with ``subresource``, to that subresource of ``kind``/``name`` (an
        Eviction to ``pods/<name>/eviction``)."""
        res = resource_for(kind or str(obj.get("kind")))
        ns = (obj.get("metadata") or {}).get("namespace") or ("default" if res.namespaced else None)
        return self.request("POST", res.path(ns, name or None, subresource), body=obj, timeout=timeout)

    def replace(self, obj: Mapping[str, Any], *, subresource: str = "") -> dict[str, Any]:
        """PUT: with metadata.resourceVersion set, refused with 409 if the object changed."""
        res = resource_for(str(obj.get("kind")))
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or ("default" if res.namespaced else None)
        return self.request("PUT", res.path(ns, meta.get("name"), subresource), body=obj)

    def patch(
        self,
        kind: str,
        key: str,
        patch: Any,
        *,
        subresource: str = "",
        content_type: str = MERGE_PATCH,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        ns, name = _key_parts(key)
        return self.request(
            "PATCH",
            resource_for(kind).path(ns, name, subresource),
            body=patch,
            content_type=content_type,
            timeout=timeout,
        )

    def delete(
        self, kind: str, key: str, *, body: Mapping[str, Any] | None = None, timeout: float = 30.0
    ) -> None:
        ns, name = _key_parts(key)
        self.request("DELETE", resource_for(kind).path(ns, name), body=body, timeout=timeout)

    def server_version(self) -> str | None:
        """The API server's ``major.minor`` from /version (``1.36``), None if it does not say;
        ApiError when the server cannot be reached."""
        try:
            info = self.request("GET", "/version", timeout=10.0)
        except ApiError as e:
            if e.unreachable:
                raise
            return None
        info = info or {}
        major = "".join(ch for ch in str(info.get("major", "")) if ch.isdigit())
        minor = "".join(ch for ch in str(info.get("minor", "")) if ch.isdigit())
        return f"{major}.{minor}" if major and minor else None

    def server_minor_version(self) -> int | None:
        """The API server's minor version (36 for v1.36), None if it does not say. Credentials
        it refuses raise :class:`DeniedError` (every other call would be refused too: guessing
        a version and going on would only hide that)."""
        try:
            info = self.request("GET", "/version", timeout=10.0)
        except ApiError as e:
            if e.denied:
                raise DeniedError(e, self.host) from None
            return None
        digits = "".join(ch for ch in str((info or {}).get("minor", "")) if ch.isdigit())
        return int(digits) if digits else None


def _api_error(status: int, raw: bytes) -> ApiError:
    try:
        body = json.loads(raw)
    except ValueError:
        return ApiError(status, "", raw.decode(errors="replace").strip()[:500])
    if not isinstance(body, dict):
        return ApiError(status, "", str(body)[:500])
    return ApiError(status, str(body.get("reason") or ""), str(body.get("message") or ""))


def _default_kubeconfig_exists() -> bool:
    import os

    env = os.environ.get("KUBECONFIG")
    if env:
        return any(Path(p).expanduser().is_file() for p in env.split(os.pathsep) if p)
    return Path("~/.kube/config").expanduser().is_file()


def _current_context(path: str | None) -> str:
    try:
        from kubernetes import config

        _, active = config.list_kube_config_contexts(config_file=path)
        return str(active.get("name", ""))
    except Exception:  # the name is only for messages
        return ""
