"""What kube-apiserver answers to a create (a server-side dry run), one manifest at a time.

The steps, in the server's order::

    decode (typed model)                              → 400 BadRequest
    defaulting (.defaults)
    mutating admission (.chain: NamespaceLifecycle,   → 404 NotFound, 403 Forbidden
        TaintNodesByCondition, Priority, DefaultTolerationSeconds)
    registry PrepareForCreate (.match_label_keys)
    validation (kubespread.api.validation)            → 422 Invalid
    validating admission (.chain: Priority)           → 403 Forbidden

The answer is the JSON of shared/conformance/admission: ``{"accepted": true, "object": <the
object as it would be stored>}`` or ``{"accepted": false, "code", "reason", "message",
"causes": [{field, reason, message}]}``. Every refusal is a value; nothing is raised for a bad
manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubespread.admission.chain import DEFAULT_CHAIN, AdmissionChain
from kubespread.admission.defaults import apply_defaults
from kubespread.admission.framework import AdmissionContext, Rejection
from kubespread.admission.match_label_keys import prepare_for_create
from kubespread.admission.namespace_lifecycle import DEFAULT_NAMESPACE
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Node, Pod
from kubespread.api.documents import MAX_REQUEST_BYTES, DocumentError, decode_utf8, parse_documents
from kubespread.api.errors import DecodeError, FieldError
from kubespread.api.features import FeatureGates
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject, is_stored
from kubespread.api.schema import FieldIssue, IssueKind, check
from kubespread.api.validation import validate
from kubespread.api.validation.pod import StoredPodChecks, validate_stored_pod

__all__ = [
    "admit",
    "admit_object",
    "admit_text",
    "create",
    "creation_errors",
    "decode",
    "is_stored",
    "settle_errors",
]

PriorityClasses = Mapping[str, PriorityClass] | Iterable[PriorityClass]


def decode(manifest: Any) -> KubeObject | Rejection:
    """The typed object of a manifest, or the 400 the server answers when it cannot read it."""
    if not isinstance(manifest, dict):
        return Rejection.bad_request("the manifest is not an object (a YAML or JSON mapping)")
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(kind, str) or not kind:
        return Rejection.bad_request("Object 'Kind' is missing in the manifest")
    if not isinstance(api_version, str) or not api_version:
        return Rejection.bad_request("Object 'apiVersion' is missing in the manifest")
    cls = class_for(api_version, kind)
    if cls is None and class_for("", kind) is not None:
        return Rejection.bad_request(f'no matches for kind "{kind}" in version "{api_version}"')
    if cls is None or cls.KIND == "KubeSchedulerConfiguration":
        return Rejection.bad_request(
            f"kubespread does not admit objects of kind {kind} (apiVersion {api_version})"
        )
    version = api_version.rsplit("/", 1)[-1]
    cannot = f'{kind} in version "{version}" cannot be handled as a {kind}: '
    issues = check(cls.KIND, manifest)
    if issues and issues[0].kind is IssueKind.TYPE:
        return Rejection.bad_request(cannot + issues[0].api_message)  # the decoder's first error
    try:
        obj = cls.from_dict(manifest)
    except DecodeError as err:
        why = err.message if err.quantity else str(err)
        return Rejection.bad_request(cannot + why)
    if issues:  # fieldValidation=Strict, as kubectl sends it
        return Rejection.bad_request(cannot + "strict decoding error: " + _strict_errors(issues))
    return obj


def _strict_errors(issues: list[FieldIssue]) -> str:
    """The strict decoder's list: a YAML body's repeated keys as go-yaml reports them, then
    the unknown fields in the order the server meets them."""
    dups = [i for i in issues if i.kind is IssueKind.DUPLICATE]
    parts = [i.api_message for i in issues if i.kind is IssueKind.UNKNOWN]
    if dups:
        lines = "".join(f'\n  line {i.line}: key "{i.segments[-1]}" already set in map' for i in dups)
        parts.insert(0, "yaml: unmarshal errors:" + lines)
    return ", ".join(parts)


def _prepare(
    obj: KubeObject,
    mutate: Callable[[KubeObject], Rejection | None] | None = None,
    features: FeatureGates | None = None,
) -> Rejection | None:
    """What a create does to ``obj`` (in place) before validating it: the request's namespace,
    defaulting, mutating admission (``mutate``, when given) and the registry's PrepareForCreate.
    The one sequence of :func:`create` and :func:`creation_errors`."""
    if obj.NAMESPACED and not obj.metadata.namespace:
        obj.metadata.namespace = DEFAULT_NAMESPACE  # the request's namespace
    apply_defaults(obj)
    if mutate is not None:
        rejection = mutate(obj)
        if rejection is not None:
            return rejection
    prepare_for_create(obj, features)
    return None


def create(
    obj: KubeObject, ctx: AdmissionContext, chain: AdmissionChain = DEFAULT_CHAIN
) -> KubeObject | Rejection:
    """The create handler after decoding: defaulting, mutating admission, the registry's
    preparation and validation, validating admission. ``obj`` is changed in place; it is
    returned as it would be stored, or the refusal is."""
    rejection = _prepare(obj, lambda o: chain.mutate(o, ctx), ctx.options.features)
    if rejection is not None:
        return rejection
    errors = validate(obj, ctx.options.features)
    if errors:
        return Rejection.invalid(obj, errors)
    rejection = chain.validate(obj, ctx)
    if rejection is not None:
        return rejection
    return obj


def creation_errors(obj: KubeObject, features: FeatureGates | None = None) -> list[FieldError]:
    """The field errors (the 422) creating ``obj`` would report, judged on a copy so that
    ``validate`` and ``schedule`` agree with ``admit``: a new object is prepared as :func:`create`
    prepares it (so a matchLabelKeys key repeated in the selector is caught after the merge);
    a stored one (:func:`is_stored`) is only defaulted, since merging its already merged
    selector again would report a false "exists in both". Admission plugins, which need the
    cluster, are not run. A stored Node is judged as it is: its defaulting only makes its
    status quantities canonical, and its validation reads its metadata and taints (no copy of
    a dump's thousands of nodes)."""
    if isinstance(obj, Node) and is_stored(obj):
        return validate(obj, features)
    probe = obj.copy()
    if is_stored(probe):
        apply_defaults(probe)
    else:
        _prepare(probe, features=features)
    return validate(probe, features)


def settle_errors(
    obj: KubeObject, features: FeatureGates | None = None, stored: StoredPodChecks | None = None
) -> list[FieldError]:
    """The field errors that stop a run before it starts: :func:`creation_errors` for a new
    object and for a stored one of any kind but Pod; for a stored Pod (a dump's, by the
    thousand), what a run reads of it (``validate_stored_pod``), judged on the object itself:
    it was defaulted and validated whole when the API server stored it. ``kubespread
    validate`` still judges every object as creating it would. ``stored``: one
    StoredPodChecks for all the pods of a run (a dump's replicas judged once per owner)."""
    if isinstance(obj, Pod) and is_stored(obj):
        return validate_stored_pod(obj) if stored is None else stored(obj)
    return creation_errors(obj, features)


def _context(
    context: AdmissionContext | None,
    priority_classes: PriorityClasses | None,
    namespaces: Iterable[str] | None,
) -> AdmissionContext:
    if context is not None:
        if priority_classes is not None or namespaces is not None:
            raise TypeError("give either a context or priority_classes/namespaces, not both")
        return context
    return AdmissionContext.create(priority_classes=priority_classes, namespaces=namespaces)


def _answer(outcome: KubeObject | Rejection) -> dict[str, Any]:
    if isinstance(outcome, Rejection):
        return outcome.answer()
    return {"accepted": True, "object": outcome.to_dict()}


def admit_object(
    obj: KubeObject,
    *,
    priority_classes: PriorityClasses | None = None,
    namespaces: Iterable[str] | None = None,
    context: AdmissionContext | None = None,
    chain: AdmissionChain = DEFAULT_CHAIN,
) -> dict[str, Any]:
    """The answer to creating a decoded object (which is changed in place).

    ``priority_classes`` are added to the built-in ones; ``namespaces`` are those that exist
    (``None``: any). Or give a whole ``context``."""
    return _answer(create(obj, _context(context, priority_classes, namespaces), chain))


def admit(
    manifest: Any,
    *,
    priority_classes: PriorityClasses | None = None,
    namespaces: Iterable[str] | None = None,
    context: AdmissionContext | None = None,
    chain: AdmissionChain = DEFAULT_CHAIN,
) -> dict[str, Any]:
    """kube-apiserver's answer to creating ``manifest`` (a dry run): accepted with the object as
    it would be stored, or rejected with code, reason, message and causes."""
    ctx = _context(context, priority_classes, namespaces)
    obj = decode(manifest)
    if isinstance(obj, Rejection):
        return obj.answer()
    return _answer(create(obj, ctx, chain))


def admit_text(
    yaml_text: str | bytes,
    *,
    priority_classes: PriorityClasses | None = None,
    namespaces: Iterable[str] | None = None,
    context: AdmissionContext | None = None,
    chain: AdmissionChain = DEFAULT_CHAIN,
) -> dict[str, Any]:
    """:func:`admit` for one YAML (or JSON) document, as ``kubespread admit`` reads it on stdin
    (text, or the raw bytes: invalid UTF-8 is refused as the server refuses it)."""
    if len(yaml_text) > MAX_REQUEST_BYTES:
        return Rejection.too_large(MAX_REQUEST_BYTES).answer()
    try:
        text = decode_utf8(yaml_text) if isinstance(yaml_text, bytes) else yaml_text
    except DocumentError as err:
        return Rejection.bad_request(f"the object provided is unrecognized: yaml: {err}").answer()
    docs, error = parse_documents(text)
    if error is not None:
        return Rejection.bad_request(f"the object provided is unrecognized: yaml: {error}").answer()
    manifests = [d.data for d in docs if d.data is not None]
    if len(manifests) > 1:
        return Rejection.bad_request("admit reads one object; the input holds several documents").answer()
    manifest = manifests[0] if manifests else None
    return admit(
        manifest, priority_classes=priority_classes, namespaces=namespaces, context=context, chain=chain
    )
