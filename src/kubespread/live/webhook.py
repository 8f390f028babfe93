"""The admission webhook server: AdmissionReview v1 over HTTPS, answered by kubespread's plugins.

Two layers, so the admission logic is tested without sockets:

- :class:`AdmissionHandlers` (this module) turns a request path and body into an HTTP status
  and answer. It runs the matchLabelKeys merge and the WorkloadSpread subset injection on
  ``/mutate-pods``, HardAntiAffinity and the WorkloadSpread accounting of deletions, evictions
  and finished pods on ``/validate-pods``, and WorkloadSpread validation on
  ``/validate-workloadspreads`` (an UPDATE may not change spec.targetRef).
- ``kubespread.live.webhook_server``'s ``WebhookServer`` serves it over TLS only; its
  ``serve`` runs it until a signal.

The API server sends a review per request and waits at most ``timeoutSeconds``; a review this
server cannot read is answered 400 (the API server then applies the failurePolicy), while an
object that does not decode is refused in the review itself, as kube-apiserver would refuse it.
Object contents never reach the log at INFO or above: pods carry secrets in env and annotations.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

import jsonpatch

from kubespread.admission.framework import AdmissionContext, AdmissionOptions, Operation, Rejection, handles
from kubespread.admission.hard_anti_affinity import HardAntiAffinity
from kubespread.admission.match_label_keys import merge_match_label_keys
from kubespread.api.core import Pod
from kubespread.api.errors import DecodeError, FieldError
from kubespread.api.kinds import class_for
from kubespread.api.kruise import (
    KRUISE_API_VERSION,
    KRUISE_V1BETA1,
    WorkloadSpread,
    workloadspread_from_v1beta1,
    workloadspread_to_v1beta1,
)
from kubespread.api.meta import NAME_ALPHABET, KubeObject
from kubespread.api.selectors import LabelSelector
from kubespread.api.validation import validate, validate_update
from kubespread.controllers.workloadspread import matched_subset
from kubespread.controllers.workloadspread.webhook import WorkloadSpreadWebhook
from kubespread.live.paths import (
    CONVERT_WORKLOADSPREADS,
    HEALTHZ,
    MUTATE_PODS,
    MUTATE_PODS_MATCH_LABEL_KEYS,
    VALIDATE_PODS,
    VALIDATE_WORKLOADSPREADS,
)

if TYPE_CHECKING:
    from kubespread.live.metrics import WebhookMetrics

__all__ = [
    "ADMISSION_API_VERSION",
    "HEALTHZ",
    "MAX_BODY_BYTES",
    "MUTATE_PODS",
    "MUTATE_PODS_MATCH_LABEL_KEYS",
    "VALIDATE_PODS",
    "VALIDATE_WORKLOADSPREADS",
    "AdmissionHandlers",
    "WorkloadSpreadLanes",
    "merge_match_label_keys_once",
]

logger = logging.getLogger("kubespread.webhook")

ADMISSION_API_VERSION: Final = "admission.k8s.io/v1"
CONVERSION_API_VERSION: Final = "apiextensions.k8s.io/v1"
#: kube-apiserver's own request body limit; nothing legitimate is larger
MAX_BODY_BYTES: Final = 3 * 1024 * 1024

K = TypeVar("K", bound=KubeObject)


class BadReview(Exception):
    """A request body that is not a readable AdmissionReview: answered HTTP 400 with the message."""


class _Refused(Exception):
    """Ends a review early with this refusal (an object that does not decode)."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.message)
        self.rejection = rejection


# --- the matchLabelKeys merge, once ------------------------------------------------------------------------


def _selectors(pod: Pod) -> Iterator[LabelSelector]:
    """The selectors the merge may extend, as :func:`merge_match_label_keys` walks them."""
    affinity = pod.spec.affinity
    if affinity is not None:
        for pa in (affinity.pod_affinity, affinity.pod_anti_affinity):
            if pa is None:
                continue
            terms = [
                *pa.required_during_scheduling_ignored_during_execution,
                *pa.required_during_scheduling_required_during_execution,
                *(w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution),
            ]
            yield from (t.label_selector for t in terms if t.label_selector is not None)
    for constraint in pod.spec.topology_spread_constraints:
        if constraint.label_selector is not None:
            yield constraint.label_selector


def merge_match_label_keys_once(pod: Pod) -> None:
    """The KEP-3243 merge, skipping in each selector the expressions it already carries.

    Why: an API server that merges too (the feature gate on), a reinvoked webhook or a client
    that merged itself must not end up with the requirement twice.
    """
    selectors = list(_selectors(pod))
    before = [[e.to_dict() for e in s.match_expressions] for s in selectors]
    merge_match_label_keys(pod)
    for selector, had in zip(selectors, before, strict=True):
        added = selector.match_expressions[len(had) :]
        if added:
            selector.match_expressions[len(had) :] = [e for e in added if e.to_dict() not in had]


# --- reading a review --------------------------------------------------------------------------------------


def _operation(value: Any) -> Operation:
    if not value:
        raise BadReview("request.operation: required")
    try:
        return Operation(value)
    except ValueError:
        supported = ", ".join(o.value for o in Operation)
        raise BadReview(f"request.operation: unsupported value, supported values: {supported}") from None


def _string(request: dict[str, Any], key: str) -> str:
    value = request.get(key) or ""
    if not isinstance(value, str):
        raise BadReview(f"request.{key}: must be a string")
    return value


@dataclass
class _Review:
    """The request part of an AdmissionReview, checked as far as every path needs it."""

    uid: str
    operation: Operation
    resource: str | None
    subresource: str
    namespace: str
    name: str
    dry_run: bool
    request: dict[str, Any]
    #: ``namespace/name`` for the log line (names only, never contents)
    label: str = field(init=False)

    def __post_init__(self) -> None:
        self.label = f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, body: bytes) -> _Review:
        if len(body) > MAX_BODY_BYTES:
            raise BadReview(f"body: larger than the limit of {MAX_BODY_BYTES} bytes")
        try:
            review = json.loads(body)
        except (ValueError, UnicodeDecodeError) as e:
            raise BadReview(f"body: not JSON ({type(e).__name__})") from None
        except RecursionError:
            # json.loads recurses per level: a hostile body of nested brackets would otherwise
            # escape as an exception and the connection close without an answer
            raise BadReview("body: nested too deeply") from None
        if not isinstance(review, dict):
            raise BadReview("body: must be a JSON object")
        if review.get("apiVersion") != ADMISSION_API_VERSION:
            raise BadReview(f"apiVersion: must be {ADMISSION_API_VERSION}")
        if review.get("kind") != "AdmissionReview":
            raise BadReview("kind: must be AdmissionReview")
        request = review.get("request")
        if request is None:
            raise BadReview("request: required")
        if not isinstance(request, dict):
            raise BadReview("request: must be an object")
        uid = request.get("uid")
        if not uid:
            raise BadReview("request.uid: required")
        if not isinstance(uid, str):
            raise BadReview("request.uid: must be a string")
        resource = request.get("resource")
        if resource is not None and not isinstance(resource, dict):
            raise BadReview("request.resource: must be an object")
        return cls(
            uid=uid,
            operation=_operation(request.get("operation")),
            resource=resource.get("resource") if resource else None,
            subresource=_string(request, "subResource"),
            namespace=_string(request, "namespace"),
            name=_string(request, "name"),
            dry_run=request.get("dryRun") is True,
            request=request,
        )

    def is_resource(self, plural: str) -> bool:
        """Whether the review is about ``plural``; a review without ``resource`` is taken to be
        about the one its path serves (the API server always sends it)."""
        return self.resource is None or self.resource == plural

    def raw(self, key: str) -> dict[str, Any]:
        """``request.object`` or ``request.oldObject``, required."""
        value = self.request.get(key)
        if value is None:
            raise BadReview(f"request.{key}: required")
        if not isinstance(value, dict):
            raise BadReview(f"request.{key}: must be an object")
        return value


def convert_workload_spread(obj: Any, desired: str) -> dict[str, Any]:
    """One object of a ConversionReview in ``desired`` (apps.kruise.io/v1alpha1 or v1beta1);
    BadReview for anything else."""
    if not isinstance(obj, dict) or obj.get("kind") != WorkloadSpread.KIND:
        raise BadReview("only WorkloadSpread objects are converted here")
    versions = (KRUISE_API_VERSION, KRUISE_V1BETA1)
    if desired not in versions or obj.get("apiVersion") not in versions:
        raise BadReview(f"cannot convert {obj.get('apiVersion')!r} to {desired!r}")
    if desired == KRUISE_V1BETA1:
        return workloadspread_to_v1beta1(obj)
    return workloadspread_from_v1beta1(obj) | {"apiVersion": KRUISE_API_VERSION}


def convert_review(body: bytes) -> tuple[int, dict[str, Any] | str]:
    """A ConversionReview (apiextensions.k8s.io/v1) answered: every object converted, or a
    Failure result naming why (the API server then fails the request)."""
    try:
        review = json.loads(body)
        request = review["request"]
        uid, desired, objects = request["uid"], request["desiredAPIVersion"], request["objects"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return 400, "not a ConversionReview"
    if not isinstance(uid, str) or not uid or not isinstance(desired, str) or not isinstance(objects, list):
        return 400, "not a ConversionReview"
    response: dict[str, Any] = {"uid": uid}
    try:
        response["convertedObjects"] = [convert_workload_spread(o, desired) for o in objects]
        response["result"] = {"status": "Success"}
    except BadReview as e:
        response["result"] = {"status": "Failure", "message": str(e)}
    except (TypeError, AttributeError, ValueError, KeyError, RecursionError) as e:
        # a WorkloadSpread of the wrong shape: the API server stored it, so say so, never crash
        response["result"] = {
            "status": "Failure",
            "message": f"cannot convert a malformed WorkloadSpread ({type(e).__name__})",
        }
    return 200, {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview", "response": response}


def _decode(cls: type[K], raw: dict[str, Any]) -> K:
    """The object as kubespread models it, or a 400 refusal (as kube-apiserver refuses a body
    that does not decode)."""
    kind = raw.get("kind")
    if kind and class_for(str(raw.get("apiVersion") or ""), str(kind)) is not cls:
        raise _Refused(Rejection.bad_request(f"kind: expected {cls.API_VERSION} {cls.KIND}"))
    try:
        return cls.from_dict(raw)
    except DecodeError as e:
        message = f"{e.field}: {e.message}" if e.field else e.message
        raise _Refused(Rejection.bad_request(message)) from None


def _decode_twice(raw: dict[str, Any]) -> tuple[dict[str, Any], Pod]:
    """The pod as it came (a dict, to diff against) and a pod to change, sharing nothing: the
    model keeps unknown fields by reference. A JSON round trip copies several times faster than
    ``copy.deepcopy``, which a burst of reviews pays on every one."""
    return _decode(Pod, raw).to_dict(), _decode(Pod, json.loads(json.dumps(raw)))


def _refusal(obj: KubeObject, outcome: Rejection | list[FieldError] | None) -> Rejection | None:
    if isinstance(outcome, Rejection):
        return outcome
    return Rejection.invalid(obj, outcome) if outcome else None


@dataclass
class _Outcome:
    rejection: Rejection | None = None
    patch: list[dict[str, Any]] = field(default_factory=list)


# --- one WorkloadSpread at a time -------------------------------------------------------------------------


@dataclass(eq=False)
class _Booking:
    ws: WorkloadSpread
    pod: Pod
    result: str | Rejection | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass(eq=False)
class _Lane:
    """The reviews of one WorkloadSpread: its lock, the bookings waiting for it, its users."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: list[_Booking] = field(default_factory=list)
    users: int = 0


class WorkloadSpreadLanes:
    """Serializes the status writes of each WorkloadSpread, and only of the same one.

    Why: the status update is optimistic (resourceVersion, re-read on 409), so two reviews of
    one WorkloadSpread in parallel only make each other retry; reviews of different ones, and
    of pods no WorkloadSpread selects, have nothing to wait for. Bookings are group-committed:
    the review that gets a lane's lock books every pod queued behind it with one read and one
    status update (:meth:`WorkloadSpreadWebhook.acquire_many`), so a burst of n creations costs
    about log(n) round trips to the API server, not n. Lanes are dropped when unused.
    """

    def __init__(self, webhook: WorkloadSpreadWebhook) -> None:
        self.webhook = webhook
        self._mutex = threading.Lock()
        self._lanes: dict[str, _Lane] = {}
        #: how many status writes booked how many pods (for the log and benchmarks)
        self.batches = 0
        self.booked = 0

    @contextlib.contextmanager
    def _lane(self, key: str) -> Iterator[_Lane]:
        with self._mutex:
            lane = self._lanes.get(key)
            if lane is None:
                lane = self._lanes[key] = _Lane()
            lane.users += 1
        try:
            yield lane
        finally:
            with self._mutex:
                lane.users -= 1
                if lane.users == 0:
                    del self._lanes[key]

    @contextlib.contextmanager
    def serialized(self, key: str) -> Iterator[None]:
        """Hold WorkloadSpread ``key``'s lane (a give-back on deletion)."""
        with self._lane(key) as lane, lane.lock:
            yield

    def book(self, ws: WorkloadSpread, pod: Pod) -> str | Rejection | None:
        """The subset ``pod`` is booked in (None: no subset left), as
        :meth:`WorkloadSpreadWebhook.acquire_many` answers it."""
        booking = _Booking(ws, pod)
        with self._lane(ws.key) as lane:
            with self._mutex:
                lane.waiting.append(booking)
            with lane.lock:
                if not booking.done:
                    with self._mutex:
                        batch, lane.waiting = lane.waiting, []
                    self._commit(ws.key, batch)
        if booking.error is not None:
            raise booking.error
        return booking.result

    def _commit(self, key: str, batch: list[_Booking]) -> None:
        started = time.perf_counter()
        try:
            results = self.webhook.acquire_many(key, [(b.ws, b.pod) for b in batch])
        except BaseException as e:  # every review of the batch fails alike, none hangs
            for b in batch:
                b.error, b.done = e, True
            raise
        self.batches += 1
        self.booked += len(batch)
        logger.info(
            "booked %d pod(s) of WorkloadSpread %s with one status write in %.1f ms",
            len(batch),
            key,
            (time.perf_counter() - started) * 1000,
        )
        for b, result in zip(batch, results, strict=True):
            b.result, b.done = result, True


# --- the handlers ------------------------------------------------------------------------------------------


class AdmissionHandlers:
    """Answers admission reviews; the pure layer under ``webhook_server.WebhookServer``.

    Reviews run in parallel, one per server thread. What the WorkloadSpread webhook writes,
    its status, is serialized per WorkloadSpread (:class:`WorkloadSpreadLanes`); its reads of
    the live cache hold the cache's lock only while they read (``cluster_lock`` of the
    webhook). Requests with ``dryRun`` never book WorkloadSpread status: that is a write, and
    the webhooks are registered with ``sideEffects: NoneOnDryRun``.
    """

    def __init__(
        self,
        workload_spread: WorkloadSpreadWebhook | None,
        *,
        options: AdmissionOptions,
        merge_match_label_keys: bool,
        metrics: WebhookMetrics | None = None,
    ) -> None:
        self.workload_spread = workload_spread
        #: reviews counted and timed (live.metrics), when served
        self.metrics = metrics
        self.options = options
        self.merge_match_label_keys = merge_match_label_keys
        self.lanes = WorkloadSpreadLanes(workload_spread) if workload_spread is not None else None
        self._hard_anti_affinity = HardAntiAffinity()
        self._routes: dict[str, Callable[[_Review], _Outcome]] = {
            MUTATE_PODS: self._mutate_pods,
            MUTATE_PODS_MATCH_LABEL_KEYS: self._merge_only,
            VALIDATE_PODS: self._validate_pods,
            VALIDATE_WORKLOADSPREADS: self._validate_workload_spreads,
        }

    def handle(self, path: str, body: bytes, *, method: str = "POST") -> tuple[int, dict[str, Any] | str]:
        """The HTTP status and the answer: an AdmissionReview dict, or a plain message."""
        path = urlsplit(path).path  # the API server appends ?timeout=10s
        if path == HEALTHZ:
            return (200, "ok") if method in ("GET", "HEAD") else (405, "method not allowed")
        if path == CONVERT_WORKLOADSPREADS:
            return (405, "method not allowed") if method != "POST" else convert_review(body)
        route = self._routes.get(path)
        if route is None:
            return 404, "not found"
        if method != "POST":
            return 405, "method not allowed"
        started = time.perf_counter()
        status, answer, operation = self._review(path, route, body, started)
        if self.metrics is not None:
            response = answer.get("response", {}) if isinstance(answer, dict) else {}
            allowed = bool(response.get("allowed"))
            code = status if status != 200 else 200 if allowed else int(response["status"]["code"])
            self.metrics.review(path, operation, allowed, code, time.perf_counter() - started)
        return status, answer

    def _review(
        self, path: str, route: Callable[[_Review], _Outcome], body: bytes, started: float
    ) -> tuple[int, dict[str, Any] | str, str]:
        """Read the review and answer it: the HTTP status, the answer, the review's operation
        (empty when the review could not be read)."""
        try:
            review = _Review.parse(body)
        except BadReview as e:
            logger.info("review path=%s status=400 (unreadable review)", path)
            logger.debug("unreadable review on %s: %s", path, e)
            return 400, str(e), ""
        operation = review.operation.value
        try:
            outcome = route(review)
        except BadReview as e:
            logger.info("review path=%s uid=%s status=400 (unreadable review)", path, review.uid)
            logger.debug("unreadable review %s: %s", review.uid, e)
            return 400, str(e), operation
        except _Refused as e:
            outcome = _Outcome(e.rejection)
        except Exception as e:
            # the exception's text may quote the object: its type only, the trace at DEBUG
            logger.error("review path=%s uid=%s failed: %s", path, review.uid, type(e).__name__)
            logger.debug("review %s failed", review.uid, exc_info=True)
            outcome = _Outcome(Rejection(500, "InternalError", "kubespread webhook: internal error"))
        rejection = outcome.rejection
        logger.info(
            "review path=%s uid=%s operation=%s resource=%s allowed=%s code=%d elapsed_ms=%.1f",
            path,
            review.uid,
            operation + (f"/{review.subresource}" if review.subresource else ""),
            review.label or "-",
            rejection is None,
            200 if rejection is None else rejection.code,
            (time.perf_counter() - started) * 1000,
        )
        if outcome.patch:
            logger.debug("review %s patch: %s", review.uid, json.dumps(outcome.patch))
        return 200, self._answer(review.uid, outcome), operation

    @staticmethod
    def _answer(uid: str, outcome: _Outcome) -> dict[str, Any]:
        response: dict[str, Any] = {"uid": uid, "allowed": outcome.rejection is None}
        if outcome.rejection is not None:
            r = outcome.rejection
            status: dict[str, Any] = {"code": r.code, "reason": r.reason, "message": r.message}
            if r.causes:
                status["details"] = {"causes": list(r.causes)}
            response["status"] = status
        if outcome.patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(outcome.patch).encode()).decode()
        return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}

    def _context(self, review: _Review, old: KubeObject | None = None) -> AdmissionContext:
        return AdmissionContext.create(
            operation=review.operation, subresource=review.subresource, old=old, options=self.options
        )

    # ------------------------------------------------------------------ /mutate-pods
    def _mutate_pods(self, review: _Review) -> _Outcome:
        if not review.is_resource("pods") or review.subresource or review.operation is not Operation.CREATE:
            return _Outcome()
        raw = review.raw("object")
        meta = raw.get("metadata")
        if review.namespace and isinstance(meta, dict) and not meta.get("namespace"):
            # decide in the request's namespace without patching it in
            raw = {**raw, "metadata": {**meta, "namespace": review.namespace}}
        before, pod = _decode_twice(raw)
        review.label = f"{review.namespace or pod.metadata.namespace}/{pod.metadata.name or '-'}"
        if self.merge_match_label_keys:
            merge_match_label_keys_once(pod)
        webhook = self.workload_spread
        found = webhook.workload_spread_for(pod) if webhook is not None and not review.dry_run else None
        if isinstance(found, Rejection):  # its owner does not exist (yet): the creator retries
            return _Outcome(found)
        if webhook is not None and found is not None:
            if not pod.metadata.name and pod.metadata.generate_name:
                # the subset books the pod by name; the API server keeps a name a webhook sets
                pod.metadata.name = self._generate_name(pod)
                review.label = f"{pod.namespace}/{pod.metadata.name}"
            assert self.lanes is not None
            rejection = webhook.inject_subset(pod, found, self.lanes.book(found, pod))
            if rejection is not None:
                return _Outcome(rejection)
        return _Outcome(patch=jsonpatch.make_patch(before, pod.to_dict()).patch)

    def _merge_only(self, review: _Review) -> _Outcome:
        """The matchLabelKeys merge alone: the webhook registered for every namespace, which
        must never book or refuse anything."""
        if not self.merge_match_label_keys:
            return _Outcome()
        if not review.is_resource("pods") or review.subresource or review.operation is not Operation.CREATE:
            return _Outcome()
        raw = review.raw("object")
        before, pod = _decode_twice(raw)
        review.label = f"{review.namespace or pod.metadata.namespace}/{pod.metadata.name or '-'}"
        merge_match_label_keys_once(pod)
        return _Outcome(patch=jsonpatch.make_patch(before, pod.to_dict()).patch)

    @staticmethod
    def _generate_name(pod: Pod) -> str:
        """A name as the API server generates one (5 characters of its alphabet). Not checked
        against the pods there: a GET per creation would double the webhook's API calls under a
        burst, and a clash (1 in 14 million per existing pod of the prefix) is refused by the
        API server with 409 AlreadyExists, which the workload's controller retries; the place
        booked under the name is dropped by the controller's creation timeout."""
        return pod.metadata.generate_name + "".join(secrets.choice(NAME_ALPHABET) for _ in range(5))

    # ------------------------------------------------------------------ /validate-pods
    def _validate_pods(self, review: _Review) -> _Outcome:
        if not review.is_resource("pods"):
            return _Outcome()
        op, sub = review.operation, review.subresource
        if not sub and op in (Operation.CREATE, Operation.UPDATE):
            raw = review.raw("object")
            raw_old = review.raw("oldObject") if op is Operation.UPDATE else None
            pod = _decode(Pod, raw)
            review.label = f"{pod.metadata.namespace or review.namespace}/{pod.metadata.name or review.name}"
            old = _decode(Pod, raw_old) if raw_old is not None else None
            ctx = self._context(review, old)
            plugin = self._hard_anti_affinity
            return _Outcome(plugin.validate(pod, ctx) if handles(plugin, ctx) else None)
        if not sub and op is Operation.DELETE:
            pod = _decode(Pod, review.raw("oldObject"))
            return self._workload_spread_give_back(review, pod, pod)
        if sub == "eviction" and op is Operation.CREATE:
            return self._eviction(review)
        if sub == "status" and op is Operation.UPDATE:
            raw, raw_old = review.raw("object"), review.raw("oldObject")
            pod, old = _decode(Pod, raw), _decode(Pod, raw_old)
            return self._workload_spread_give_back(review, pod, old)
        return _Outcome()

    def _eviction(self, review: _Review) -> _Outcome:
        """The review carries an Eviction; the pod it evicts is read from the cluster."""
        name: str | None = review.name
        if not name:
            meta = review.raw("object").get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            if not name or not isinstance(name, str):
                raise BadReview("request.name: required")
            review.label = f"{review.namespace}/{name}"
        webhook = self.workload_spread
        if webhook is None or review.dry_run:
            return _Outcome()
        pod = webhook.client.get(Pod.KIND, f"{review.namespace or 'default'}/{name}")
        if not isinstance(pod, Pod):
            return _Outcome()  # already gone: nothing to give back
        return self._workload_spread_give_back(review, pod, pod)

    def _workload_spread_give_back(self, review: _Review, pod: Pod, old: Pod) -> _Outcome:
        review.label = f"{pod.metadata.namespace or review.namespace}/{pod.metadata.name or review.name}"
        webhook = self.workload_spread
        if webhook is None or review.dry_run:
            return _Outcome()
        matched = matched_subset(old)
        if matched is None:
            return _Outcome()  # no subset booked it: nothing to give back
        assert self.lanes is not None
        with self.lanes.serialized(f"{old.namespace}/{matched.name}"):
            refusal = _refusal(pod, webhook.validate(pod, self._context(review, old)))
        if refusal is not None and refusal.code == 409:
            # the WorkloadSpread kept changing: let the pod go all the same; the controller
            # recounts the subset when the pod is gone (refusing would block a deletion)
            logger.warning("review uid=%s: %s; allowed, the controller recounts", review.uid, refusal.reason)
            return _Outcome()
        return _Outcome(refusal)

    # ------------------------------------------------------------------ /validate-workloadspreads
    def _validate_workload_spreads(self, review: _Review) -> _Outcome:
        if (
            not review.is_resource("workloadspreads")
            or review.subresource
            or review.operation not in (Operation.CREATE, Operation.UPDATE)
        ):
            return _Outcome()
        ws = _decode(WorkloadSpread, review.raw("object"))
        review.label = f"{ws.metadata.namespace or review.namespace}/{ws.metadata.name or review.name}"
        old = None
        if review.operation is Operation.UPDATE:  # the targetRef it had may not change
            old = _decode(WorkloadSpread, review.raw("oldObject"))
        errors = validate(ws) if old is None else validate_update(ws, old)
        if errors:
            return _Outcome(Rejection.invalid(ws, errors))
        if self.workload_spread is None:
            return _Outcome()
        return _Outcome(_refusal(ws, self.workload_spread.validate(ws, self._context(review, old))))
