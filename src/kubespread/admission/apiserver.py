"""What kube-apiserver answers to a create (a server-side dry run), one manifest at a time.

The steps, in the server's order::

    decode (typed model)                          → 400 BadRequest
    defaulting                                    (not yet: a later issue)
    mutating admission: Priority                  → 403 Forbidden
    registry PrepareForCreate: matchLabelKeys merge
    validation (kubespread.api.validation)        → 422 Invalid
    validating admission                          (nothing the corpus needs yet)

Each mutating step is a function ``(AdmissionRequest) -> None`` that may change
``request.obj`` and raises :class:`Rejected` to refuse; :data:`MUTATING_STEPS` lists them in
order, so defaulting and further plugins slot in before validation without touching the rest.

The answer is the JSON of shared/conformance/admission: ``{"accepted": true, "object": ...}``
or ``{"accepted": false, "code", "reason", "message", "causes": [{field, reason, message}]}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod, PodAffinityTerm, TopologySpreadConstraint
from kubespread.api.errors import DecodeError, FieldError
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject, ObjectMeta
from kubespread.api.selectors import LabelSelectorRequirement
from kubespread.api.validation import validate

__all__ = [
    "BUILTIN_PRIORITY_CLASSES",
    "MUTATING_STEPS",
    "AdmissionRequest",
    "Rejected",
    "admit",
    "admit_object",
    "admit_text",
    "invalid_message",
    "merge_match_label_keys",
    "priority_admission",
    "qualified_kind",
]


def _builtin_class(name: str, value: int) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name), value=value, preemption_policy="PreemptLowerPriority"
    )


# The classes every cluster has; neither is the global default.
BUILTIN_PRIORITY_CLASSES: dict[str, PriorityClass] = {
    "system-cluster-critical": _builtin_class("system-cluster-critical", 2_000_000_000),
    "system-node-critical": _builtin_class("system-node-critical", 2_000_001_000),
}

# resource names and API groups, for messages ("pods", "Deployment.apps")
_RESOURCES = {"Pod": "pods", "Node": "nodes", "Namespace": "namespaces", "Service": "services"}


class Rejected(Exception):
    """A refusal: the HTTP code, status reason, message and causes of the answer."""

    def __init__(self, code: int, reason: str, message: str, causes: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.causes = causes or []

    def answer(self) -> dict[str, Any]:
        return {
            "accepted": False,
            "code": self.code,
            "reason": self.reason,
            "message": self.message,
            "causes": self.causes,
        }


@dataclass
class AdmissionRequest:
    """One create request as admission plugins see it."""

    obj: KubeObject
    priority_classes: Mapping[str, PriorityClass] = field(default_factory=lambda: BUILTIN_PRIORITY_CLASSES)

    @property
    def namespace(self) -> str:
        return self.obj.metadata.namespace or "default"

    @property
    def resource(self) -> str:
        """The group-qualified resource, as NewForbidden names it (``pods``, ``deployments.apps``)."""
        kind = self.obj.KIND
        name = _RESOURCES.get(kind, kind.lower() + "s")
        group = _group(self.obj.API_VERSION)
        return f"{name}.{group}" if group else name

    def forbidden(self, why: str) -> Rejected:
        """admission.NewForbidden: ``pods "name" is forbidden: why``."""
        name = self.obj.metadata.name
        subject = f"{self.resource} {_go_quote(name)}" if name else self.resource
        return Rejected(403, "Forbidden", f"{subject} is forbidden: {why}")


MutatingStep = Callable[[AdmissionRequest], None]


def _group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _go_quote(s: str) -> str:
    """Go's %q, close enough for names (they are validated ASCII in practice)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def qualified_kind(obj: KubeObject) -> str:
    """``Pod``, ``Deployment.apps``: how a 422 message names the kind."""
    group = _group(obj.API_VERSION)
    return f"{obj.KIND}.{group}" if group else obj.KIND


# --- mutating admission: Priority -------------------------------------------------------------------------


def priority_admission(request: AdmissionRequest) -> None:
    """The Priority plugin on a new Pod: resolve ``priorityClassName`` (no global default class
    exists, so a Pod without one gets 0), refuse an unknown class, refuse a ``spec.priority`` or
    ``spec.preemptionPolicy`` that differs from what the class gives, then set both.
    Workload templates are not looked at."""
    pod = request.obj
    if not isinstance(pod, Pod):
        return
    spec = pod.spec
    priority, preemption = 0, None
    if spec.priority_class_name:
        pc = request.priority_classes.get(spec.priority_class_name)
        if pc is None:
            raise request.forbidden(f"no PriorityClass with name {spec.priority_class_name} was found")
        priority, preemption = pc.value, pc.preemption_policy
    if spec.priority is not None and spec.priority != priority:
        raise request.forbidden(
            f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name"
        )
    spec.priority = priority
    if preemption is not None:
        if spec.preemption_policy is not None and spec.preemption_policy != preemption:
            raise request.forbidden(
                f"the string value of PreemptionPolicy ({spec.preemption_policy}) "
                "must not be provided in pod spec; "
                f"priority admission controller computed {preemption} from the given PriorityClass name"
            )
        spec.preemption_policy = preemption


# --- registry preparation: the matchLabelKeys merge --------------------------------------------------------


def _merge_keys(
    term: PodAffinityTerm | TopologySpreadConstraint, labels: Mapping[str, str], mismatch: list[str]
) -> None:
    sel = term.label_selector
    if sel is None or (not term.match_label_keys and not mismatch):
        return  # a nil selector matches nothing; there is nothing to narrow
    for key in term.match_label_keys:
        if key in labels:
            sel.match_expressions.append(
                LabelSelectorRequirement(key=key, operator="In", values=[labels[key]])
            )
    for key in mismatch:
        if key in labels:
            sel.match_expressions.append(
                LabelSelectorRequirement(key=key, operator="NotIn", values=[labels[key]])
            )


def merge_match_label_keys(request: AdmissionRequest) -> None:
    """PrepareForCreate of a Pod: for each matchLabelKeys key the pod carries, append
    ``{key In [value]}`` to the term's own labelSelector (mismatchLabelKeys: ``NotIn``), after the
    user's expressions; keys the pod lacks are skipped and the key lists are kept. Pod affinity
    terms and topology spread constraints; workload templates are not merged."""
    pod = request.obj
    if not isinstance(pod, Pod):
        return
    labels = pod.metadata.labels
    affinity = pod.spec.affinity
    if affinity is not None:
        for pa in (affinity.pod_affinity, affinity.pod_anti_affinity):
            if pa is None:
                continue
            for term in pa.required_during_scheduling_ignored_during_execution:
                _merge_keys(term, labels, term.mismatch_label_keys)
            for wterm in pa.preferred_during_scheduling_ignored_during_execution:
                _merge_keys(wterm.pod_affinity_term, labels, wterm.pod_affinity_term.mismatch_label_keys)
    for c in pod.spec.topology_spread_constraints:
        _merge_keys(c, labels, [])


# Mutating admission plugins (kube-apiserver's order), then the registry's preparation.
# Defaulting, DefaultTolerationSeconds and TaintNodesByCondition are to come (a later issue).
MUTATING_STEPS: tuple[MutatingStep, ...] = (priority_admission, merge_match_label_keys)


# --- the answer --------------------------------------------------------------------------------------------


def invalid_message(obj: KubeObject, errors: list[FieldError]) -> str:
    """NewInvalid's message: the distinct errors, one bare or several in brackets."""
    distinct = list(dict.fromkeys(str(e) for e in errors))
    head = f"{qualified_kind(obj)} {_go_quote(obj.metadata.name)} is invalid"
    if not distinct:
        return head
    if len(distinct) == 1:
        return f"{head}: {distinct[0]}"
    return f"{head}: [{', '.join(distinct)}]"


def _decode(manifest: Any) -> KubeObject:
    if not isinstance(manifest, dict):
        raise Rejected(400, "BadRequest", "the manifest is not an object (a YAML or JSON mapping)")
    api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
    if not isinstance(kind, str) or not kind:
        raise Rejected(400, "BadRequest", "Object 'Kind' is missing in the manifest")
    if not isinstance(api_version, str) or not api_version:
        raise Rejected(400, "BadRequest", "Object 'apiVersion' is missing in the manifest")
    cls = class_for(api_version, kind)
    if cls is None and class_for("", kind) is not None:
        raise Rejected(400, "BadRequest", f'no matches for kind "{kind}" in version "{api_version}"')
    if cls is None or cls.KIND == "KubeSchedulerConfiguration":
        raise Rejected(
            400, "BadRequest", f"kubespread does not admit objects of kind {kind} (apiVersion {api_version})"
        )
    try:
        return cls.from_dict(manifest)
    except DecodeError as err:
        version = api_version.rsplit("/", 1)[-1]
        why = err.message if err.quantity else str(err)
        raise Rejected(
            400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: {why}'
        ) from None


def admit_object(
    obj: KubeObject, *, priority_classes: Mapping[str, PriorityClass] | None = None
) -> dict[str, Any]:
    """Admission and validation of a decoded object (which the mutating steps may change)."""
    request = AdmissionRequest(
        obj, BUILTIN_PRIORITY_CLASSES if priority_classes is None else priority_classes
    )
    try:
        for step in MUTATING_STEPS:
            step(request)
    except Rejected as rej:
        return rej.answer()
    errors = validate(request.obj)
    if errors:
        return Rejected(
            422, "Invalid", invalid_message(request.obj, errors), [e.cause() for e in errors]
        ).answer()
    return {"accepted": True, "object": request.obj.to_dict()}


def admit(
    manifest: dict[str, Any], *, priority_classes: Mapping[str, PriorityClass] | None = None
) -> dict[str, Any]:
    """kube-apiserver's answer to creating ``manifest`` (a dry run): accepted with the object as
    it would be stored, or rejected with code, reason, message and causes."""
    try:
        obj = _decode(manifest)
    except Rejected as rej:
        return rej.answer()
    return admit_object(obj, priority_classes=priority_classes)


def admit_text(
    yaml_text: str, *, priority_classes: Mapping[str, PriorityClass] | None = None
) -> dict[str, Any]:
    """:func:`admit` for one YAML (or JSON) document, as ``kubespread admit`` reads it on stdin."""
    try:
        manifest = yaml.safe_load(yaml_text)
    except yaml.YAMLError as err:
        return Rejected(400, "BadRequest", f"error converting YAML to JSON: {err}").answer()
    return admit(manifest, priority_classes=priority_classes)
