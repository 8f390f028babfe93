"""The admission webhook under hostile input (issue 36): mutated real AdmissionReviews sent over
HTTPS to a ``WebhookServer`` on loopback, and each answer classified.

A case is seeded (the same seed gives the same bytes on the wire). What is sent: a real review
(pod CREATE, DELETE, eviction, status UPDATE, WorkloadSpread CREATE/UPDATE, a ConversionReview)
with wrong kinds and versions, a missing or mistyped uid, wrong-typed fields, deep nesting;
truncated and invalid JSON; bodies past the 3 MiB limit; lying or missing Content-Length,
chunked encoding, other methods and paths; headers sent byte by byte (slow loris), complete or
stalled half way.

Outcomes: ``review`` (200 with a well-formed AdmissionReview/ConversionReview for the uid sent),
``4xx`` (kube's answer to a request it cannot read), ``closed`` (the server cut a stalled
request after its ``request_timeout``: only right for a request that never completes),
``crash`` (a 5xx, a malformed 200, an exception logged by the server, or a connection dropped
on a complete request) and ``hang`` (no answer within the client's time limit).
"""

from __future__ import annotations

import contextlib
import copy
import http.client
import json
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubespread.live.webhook import MAX_BODY_BYTES
from kubespread.live.webhook_server import WebhookServer
from live.test_webhook import handlers_for, review, rs_pod, workload_spread, world, zone_subset

from .mutate import EXAMPLES

__all__ = ["WebhookCase", "WebhookOutcome", "case_for", "run_case", "serving"]

#: the server's per-read timeout in a fuzz run: a stalled request is cut after this long
REQUEST_TIMEOUT = 2.0
CONVERT = "/convert-workloadspreads"
WIRE_KINDS = ("json", "truncated", "invalid", "oversize", "headers", "slowloris", "stall")
#: how often each kind is drawn (a stalled request costs REQUEST_TIMEOUT seconds, a large body ~20 ms)
WEIGHTS = (70, 8, 8, 1, 8, 4, 1)


@dataclass(frozen=True)
class WebhookCase:
    """What goes on the wire for one seed."""

    seed: int
    kind: str  # one of WIRE_KINDS
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    uid: Any  # the uid sent, when the body is a review with one
    steps: tuple[str, ...]
    #: the request never completes: the server may only cut it (or answer 4xx)
    incomplete: bool = False


@dataclass(frozen=True)
class WebhookOutcome:
    kind: str  # review | 4xx | closed | crash | hang
    status: int | None
    seconds: float
    detail: str = ""

    @property
    def bad(self) -> bool:
        return self.kind in ("crash", "hang")


# --------------------------------------------------------------------------- real reviews
def _example_pods() -> list[dict[str, Any]]:
    pods = []
    for p in sorted((EXAMPLES / "pods").glob("*.yaml")):
        for doc in yaml.safe_load_all(p.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Pod":
                doc.setdefault("metadata", {}).setdefault("namespace", "default")
                pods.append(doc)
    return pods


def _real_reviews() -> list[tuple[str, dict[str, Any]]]:
    """(path, review) pairs as the API server sends them, for the world of ``handlers_for``."""
    out: list[tuple[str, dict[str, Any]]] = []
    pods = [rs_pod(), rs_pod("web-1-a"), *_example_pods()]
    for pod in pods:
        out.append(("/mutate-pods", json.loads(review(pod))))
        out.append(("/mutate-pods/match-label-keys", json.loads(review(pod))))
        out.append(("/validate-pods", json.loads(review(pod))))
    named = rs_pod("web-1-a")
    out.append(("/validate-pods", json.loads(review(None, operation="DELETE", old=named, name="web-1-a"))))
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1-a"}}
    out.append(("/validate-pods", json.loads(review(eviction, operation="CREATE", sub="eviction"))))
    done = copy.deepcopy(named)
    done["status"] = {"phase": "Succeeded"}
    out.append(("/validate-pods", json.loads(review(done, operation="UPDATE", old=named, sub="status"))))
    ws = workload_spread(zone_subset("a", "zone-a", 2), zone_subset("b", "zone-b"))
    wsr = {"resource": "workloadspreads", "group": "apps.kruise.io"}
    out.append(("/validate-workloadspreads", json.loads(review(ws, **wsr))))  # type: ignore[arg-type]
    out.append(("/validate-workloadspreads", json.loads(review(ws, operation="UPDATE", old=ws, **wsr))))  # type: ignore[arg-type]
    conversion = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": [ws]},
    }
    out.append((CONVERT, conversion))
    return out


REAL = _real_reviews()


# --------------------------------------------------------------------------- mutations
ODD_VALUES: tuple[Any, ...] = (
    None,
    0,
    -1,
    2**63,
    1e308,
    True,
    "",
    "x" * 10_000,
    [],
    {},
    [1, "a"],
    "\u0000\udcff",
)


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, doc
    if len(path) > 40:  # below a nesting already inserted: not worth walking
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _nodes(v, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return doc


def _nested(rng: random.Random) -> Any:
    value: Any = "leaf"
    for _ in range(rng.choice((50, 500, 990, 3000))):
        value = {"a": value} if rng.random() < 0.5 else [value]
    return value


def _odd(rng: random.Random) -> Any:
    """One of ODD_VALUES, a copy: the list or dict itself, set in two places of a review (or
    of two seeds' reviews), once had one inserted into itself (a circular reference, which
    ended the 100,000-input run's webhook share) and made a case depend on the seeds before."""
    return copy.deepcopy(rng.choice(ODD_VALUES))


def _mutate_doc(doc: dict[str, Any], rng: random.Random) -> tuple[Any, list[str]]:
    steps: list[str] = []
    out: Any = doc
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(
            ("apiVersion", "kind", "uid", "operation", "resource", "drop", "retype", "nest", "objkind")
        )
        request = out.get("request") if isinstance(out, dict) else None
        if op == "apiVersion" and isinstance(out, dict):
            out["apiVersion"] = rng.choice(("admission.k8s.io/v1beta1", "v1", "", 1, None))
        elif op == "kind" and isinstance(out, dict):
            out["kind"] = rng.choice(("AdmissionRequest", "ConversionReview", "Pod", "", None, 7))
        elif op == "uid" and isinstance(request, dict):
            if rng.random() < 0.5:
                request.pop("uid", None)
            else:
                request["uid"] = _odd(rng)
        elif op == "operation" and isinstance(request, dict):
            request["operation"] = rng.choice(("CONNECT", "create", "", None, 3, "DELETE", "UPDATE"))
        elif op == "resource" and isinstance(request, dict):
            request["resource"] = rng.choice(({"resource": "deployments"}, "pods", None, [], {"resource": 5}))
        elif op == "objkind" and isinstance(request, dict) and isinstance(request.get("object"), dict):
            request["object"]["kind"] = rng.choice(("Deployment", "WorkloadSpread", "Pod", "", None))
            request["object"]["apiVersion"] = rng.choice(("v2", "apps/v1", "apps.kruise.io/v1beta1", None))
        else:
            nodes = list(_nodes(out))
            path, _ = rng.choice(nodes)
            if op == "drop" and path:
                parent = out
                for p in path[:-1]:
                    parent = parent[p]
                del parent[path[-1]]
            elif op == "nest":
                out = _set(out, path, _nested(rng))
            else:
                out = _set(out, path, _odd(rng))
        steps.append(f"{op}")
    return out, steps


def _uid_in(body: bytes, uid: Any) -> Any:
    """The uid a body still carries after bytes were changed: a change inside the uid string
    (seed 21209: one 'x' of 10,000 became '>') leaves JSON the server rightly answers with the
    uid as sent, not the one before the change."""
    try:
        request = json.loads(body).get("request")
    except (ValueError, AttributeError, RecursionError):
        return uid
    return request.get("uid") if isinstance(request, dict) else None


def _headers(body: bytes) -> list[tuple[str, str]]:
    return [("Host", "127.0.0.1"), ("Content-Type", "application/json"), ("Content-Length", str(len(body)))]


def case_for(seed: int) -> WebhookCase:
    """The request sent for ``seed``."""
    rng = random.Random(seed)
    kind = rng.choices(WIRE_KINDS, WEIGHTS)[0]
    path, real = rng.choice(REAL)
    doc = copy.deepcopy(real)
    steps: list[str] = [f"{path} {doc['request'].get('operation', 'convert')}"]
    mutated: Any = doc
    if kind == "json" or rng.random() < 0.3:
        mutated, more = _mutate_doc(doc, rng)
        steps += more
    try:
        body = json.dumps(mutated).encode("utf-8", "surrogatepass")
    except RecursionError:
        body, steps = b"[" * 100_000, [*steps, "recursion"]
    request = mutated.get("request") if isinstance(mutated, dict) else None
    uid = request.get("uid") if isinstance(request, dict) else None
    method, incomplete = "POST", False
    headers = _headers(body)
    if kind == "truncated":
        body = body[: rng.randrange(len(body))]
        headers = _headers(body)
    elif kind == "invalid":
        raw = bytearray(body)
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        body = bytes(raw) if rng.random() < 0.8 else rng.choice((b"", b"null", b"\xff\xfe", b"[]", b'"x"'))
        headers = _headers(body)
        uid = _uid_in(body, uid)
    elif kind == "oversize":
        body = body + b" " * (MAX_BODY_BYTES + rng.randint(1, 4096) - len(body))
        headers = _headers(body)
        steps.append(f"{len(body)} bytes")
    elif kind == "headers":
        choice = rng.choice(
            ("short-length", "long-length", "bad-length", "negative", "chunked", "none", "method", "path")
        )
        steps.append(choice)
        if choice == "short-length":
            headers[2] = ("Content-Length", str(rng.randrange(max(len(body), 1))))
        elif choice == "long-length":
            headers[2] = ("Content-Length", str(len(body) + rng.randint(1, 1000)))
            incomplete = True
        elif choice == "bad-length":
            headers[2] = ("Content-Length", rng.choice(("abc", "1e3", "", "0x10", "9" * 40)))
        elif choice == "negative":
            headers[2] = ("Content-Length", "-5")
        elif choice == "chunked":
            headers[2] = ("Transfer-Encoding", "chunked")
            body = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        elif choice == "none":
            headers.pop(2)
        elif choice == "method":
            method = rng.choice(("GET", "PUT", "DELETE", "PATCH", "HEAD"))
        else:
            path = rng.choice(("/", "/mutate-pods/../healthz", "/validate-pods?x=%ff", "/%00", "/a" * 2000))
    elif kind == "stall":
        incomplete = True
    return WebhookCase(seed, kind, method, path, tuple(headers), body, uid, tuple(steps), incomplete)


# --------------------------------------------------------------------------- the server
class _Errors(logging.Handler):
    """Counts the server's ERROR records: an exception in a handler or a review."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = record.getMessage()


@dataclass
class Serving:
    server: WebhookServer
    context: ssl.SSLContext
    errors: _Errors


@contextlib.contextmanager
def serving(cert: Path, key: Path, request_timeout: float = REQUEST_TIMEOUT) -> Iterator[Serving]:
    """A ``WebhookServer`` on a loopback port (a WorkloadSpread world, the matchLabelKeys merge
    on), served from a thread until the block ends."""
    srv = WebhookServer(
        handlers_for(world(), merge=True),
        cert=cert,
        key=key,
        host="127.0.0.1",
        port=0,
        request_timeout=request_timeout,
    )
    errors = _Errors()
    log = logging.getLogger("kubespread.webhook")
    log.addHandler(errors)
    thread = threading.Thread(target=srv.serve_forever, name="fuzz-webhook", daemon=True)
    thread.start()
    try:
        yield Serving(srv, ssl.create_default_context(cafile=str(cert)), errors)
    finally:
        log.removeHandler(errors)
        srv.shutdown()
        thread.join(timeout=10)


# --------------------------------------------------------------------------- one case
def _well_formed(case: WebhookCase, body: bytes) -> str:
    """Why a 200 answer is not the review it should be ('' when it is)."""
    try:
        answer = json.loads(body)
    except ValueError:
        return "200 with a body that is not JSON"
    conversion = case.path.split("?")[0] == CONVERT
    want = (
        ("apiextensions.k8s.io/v1", "ConversionReview")
        if conversion
        else ("admission.k8s.io/v1", "AdmissionReview")
    )
    if not isinstance(answer, dict) or (answer.get("apiVersion"), answer.get("kind")) != want:
        return f"200 that is not a {want[1]}"
    response = answer.get("response")
    if not isinstance(response, dict) or response.get("uid") != case.uid:
        return "200 without the uid sent"
    if conversion:
        return "" if isinstance(response.get("result"), dict) else "ConversionReview without a result"
    if not isinstance(response.get("allowed"), bool):
        return "200 without allowed"
    status = response.get("status")
    if response["allowed"] is False and not (
        isinstance(status, dict) and isinstance(status.get("code"), int)
    ):
        return "a refusal without a status code"
    if isinstance(status, dict) and status.get("reason") == "InternalError":
        return f"an internal error: {status.get('message')}"
    return ""


def _send(conn: ssl.SSLSocket, case: WebhookCase) -> None:
    head = f"{case.method} {case.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in case.headers)
    wire = head.encode("latin-1") + b"\r\n"
    if case.kind in ("slowloris", "stall"):
        upto = len(wire) // 2 if case.kind == "stall" else len(wire)
        for i in range(upto):
            conn.sendall(wire[i : i + 1])
        if case.kind == "stall":
            return
        wire = b""
    with contextlib.suppress(OSError):  # the server answers a too large body before reading it
        conn.sendall(wire + case.body)


def run_case(srv: Serving, case: WebhookCase, time_limit: float = REQUEST_TIMEOUT + 5) -> WebhookOutcome:
    """Send ``case`` on a fresh TLS connection and classify the answer."""
    errors_before = srv.errors.count
    start = time.perf_counter()
    status: int | None = None
    try:
        raw = socket.create_connection(("127.0.0.1", srv.server.port), timeout=time_limit)
        with raw, srv.context.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
            _send(conn, case)
            response = http.client.HTTPResponse(conn, method=case.method)  # type: ignore[arg-type]
            response.begin()
            status = response.status
            body = response.read()
    except TimeoutError:
        return WebhookOutcome("hang", None, time.perf_counter() - start, f"no answer in {time_limit:g} s")
    except (http.client.RemoteDisconnected, ConnectionError, ssl.SSLError, http.client.IncompleteRead) as e:
        seconds = time.perf_counter() - start
        if case.incomplete:
            return WebhookOutcome("closed", None, seconds)
        return WebhookOutcome("crash", None, seconds, f"connection dropped: {type(e).__name__} {e}")
    seconds = time.perf_counter() - start
    time.sleep(0)  # let the server thread log before the count is read
    if srv.errors.count != errors_before:
        return WebhookOutcome("crash", status, seconds, f"server logged an error: {srv.errors.last}")
    if status == 200:
        why = _well_formed(case, body)
        return (
            WebhookOutcome("crash", status, seconds, why) if why else WebhookOutcome("review", 200, seconds)
        )
    if status is not None and 400 <= status < 500:
        return WebhookOutcome("4xx", status, seconds)
    return WebhookOutcome("crash", status, seconds, f"HTTP {status}: {body[:300]!r}")
