"""OpenKruise's WorkloadSpread and CloneSet (apps.kruise.io/v1alpha1), validated as Kruise's
admission webhooks validate them on create (and a WorkloadSpread's update, whose targetRef may not
change), so that a scenario is refused where a cluster running Kruise would refuse it.

The rules, paths, values and messages are those of Kruise's
pkg/webhook/workloadspread/validating/workloadspread_validation.go and
pkg/webhook/cloneset/validating/validation.go, except:

- paths use the v1alpha1 JSON names: Kruise reports preferred terms under
  ``preferredSchedulingTerms``; here they are at ``preferredNodeSelectorTerms``;
- Kruise stops at its first maxReplicas error and returns, skipping the later subsets; here the
  later subsets' other fields are still checked (every problem in one run), while the
  maxReplicas checks do stop at the first;
- an unknown scheduleStrategy.type is NotSupported (Kruise: Invalid), an empty subset name says
  "must be non-empty" (Kruise: no detail), a percentage must be ``[0-9]+%`` (Kruise also takes
  ``+5%``), "is not permitted" reads so (Kruise: "is no permitted");
- a subset's patch must be an object, and the labels and annotations it sets must be valid (the
  patched pod as a whole needs the target workload: the webhook checks it, see
  :func:`with_claim_volumes`);
- the adaptive window is the proposal's 10 minutes, not Kruise's 5 (see
  :data:`UNSCHEDULABLE_RECOVERY_SECONDS`).

What needs the cluster (another WorkloadSpread on the same target, the pods a CloneSet's
podsToDelete names) and what Kruise checks after its own defaulting (a CloneSet's updateStrategy
and scaleStrategy) are not checked.
"""

from __future__ import annotations

from typing import Any

from kubespread.api.core import PodTemplateSpec
from kubespread.api.errors import FieldError, Path
from kubespread.api.kruise import CloneSet, TargetReference, WorkloadSpread, WorkloadSpreadSpec
from kubespread.api.selectors import compile_label_selector
from kubespread.api.validation.apps import MISMATCH, _labels_json, _nonnegative, _validate_selector
from kubespread.api.validation.meta import validate_annotations, validate_object_meta
from kubespread.api.validation.names import is_valid_percent, name_is_dns1123_subdomain, validate_labels
from kubespread.api.validation.pod import (
    validate_pod_template,
    validate_preferred_scheduling_terms,
    validate_tolerations,
)
from kubespread.api.validation.selectors import (
    label_selector_json,
    label_selector_parses,
    validate_label_selector,
    validate_node_selector_term,
)

__all__ = [
    "TARGET_REF_CHANGED",
    "UNSCHEDULABLE_RECOVERY_SECONDS",
    "validate_clone_set",
    "validate_workload_spread",
    "validate_workload_spread_update",
    "with_claim_volumes",
]

# How long a subset marked unschedulable stays so (the proposal's 10 minutes). An adaptive
# spread must be able to try every subset within it: rescheduleCriticalSeconds is at most
# (window - 5) / (subsets - 1). Kruise's webhook uses MaxScheduledFailedDuration = 300 s.
UNSCHEDULABLE_RECOVERY_SECONDS = 600
RECONCILE_MARGIN_SECONDS = 5  # "deducting 5 is out of the consideration of reconcile cost"
MAX_INT32 = 2**31 - 1

# kind -> the API groups a WorkloadSpread may target it in
TARGET_GROUPS: dict[str, tuple[str, ...]] = {
    "CloneSet": ("apps.kruise.io",),
    "Deployment": ("apps",),
    "ReplicaSet": ("apps",),
    "Job": ("batch",),
    "StatefulSet": ("apps", "apps.kruise.io"),
}
SCHEDULE_STRATEGY_TYPES = ("Fixed", "Adaptive")

MAX_REPLICAS_INVALID = "maxReplicas is not valid for subset"
MAX_REPLICAS_MIXED = "the maxReplicas type of all subsets must be the same"
MAX_REPLICAS_STATEFULSET = "the maxReplicas type must be Int for StatefulSet"
MAX_REPLICAS_OVER_100 = "the sum of all subset's maxReplicas exceeds 100% is not permitted"
MAX_REPLICAS_UNDER_100 = "maxReplicas sum of all subsets must equal 100% when type is specified as percent"
ADAPTIVE_LAST_SUBSET = (
    "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy"
)
TARGET_REF_CHANGED = "change TargetReference is not permitted for WorkloadSpread"


# --- WorkloadSpread ---------------------------------------------------------------------------------


def _target_ref_json(ref: TargetReference) -> dict[str, str]:
    return {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}


def _api_group(api_version: str) -> str | None:
    """schema.ParseGroupVersion's group; None when it does not parse (two slashes or more)."""
    if api_version in ("", "/"):
        return ""
    slashes = api_version.count("/")
    if slashes == 0:
        return ""
    return api_version.split("/", 1)[0] if slashes == 1 else None


def _validate_target_ref(ref: TargetReference | None, path: Path) -> list[FieldError]:
    if ref is None:
        return [FieldError.required(path, "no targetRef defined in WorkloadSpread")]
    if not (ref.api_version and ref.kind and ref.name):
        return [
            FieldError.invalid(
                path, _target_ref_json(ref), "empty TargetReference is not valid for WorkloadSpread."
            )
        ]
    groups = TARGET_GROUPS.get(ref.kind)
    if groups is None:
        return [
            FieldError.invalid(path, _target_ref_json(ref), "TargetReference's GroupKind is not permitted.")
        ]
    if _api_group(ref.api_version) not in groups:
        return [
            FieldError.invalid(path, _target_ref_json(ref), f"TargetReference is not valid for {ref.kind}.")
        ]
    return []


def _validate_string_map(m: Any, path: Path, validate: Any) -> list[FieldError]:
    """Labels or annotations of a patch: a map of strings, where null (a deletion) is allowed and
    patch directives ($patch, $retainKeys, ...) are not keys."""
    if not isinstance(m, dict):
        return [FieldError.invalid(path, m, "must be a map of string keys to string values")]
    errs = [
        FieldError.invalid(path.key(k), v, "must be a string (or null, which deletes it)")
        for k, v in m.items()
        if v is not None and not isinstance(v, str)
    ]
    errs.extend(validate({k: v for k, v in m.items() if isinstance(v, str) and not k.startswith("$")}, path))
    return errs


def _validate_patch(patch: Any, path: Path) -> list[FieldError]:
    """A subset's patch is a strategic merge patch of the pod: an object; the labels and
    annotations it sets must be valid ones."""
    if patch is None:
        return []
    if not isinstance(patch, dict):
        return [FieldError.invalid(path, patch, "must be an object (a strategic merge patch of the pod)")]
    meta = patch.get("metadata")
    if meta is None:
        return []
    meta_path = path.child("metadata")
    if not isinstance(meta, dict):
        return [FieldError.invalid(meta_path, meta, "must be an object")]
    errs: list[FieldError] = []
    if meta.get("labels") is not None:
        errs.extend(_validate_string_map(meta["labels"], meta_path.child("labels"), validate_labels))
    if meta.get("annotations") is not None:
        errs.extend(
            _validate_string_map(meta["annotations"], meta_path.child("annotations"), validate_annotations)
        )
    return errs


class _MaxReplicas:
    """The maxReplicas checks across subsets: one type for all, ints for a StatefulSet, each value
    valid, percentages summing to at most 100%. They stop at the first problem, as Kruise's do."""

    def __init__(self, target_ref: TargetReference | None) -> None:
        self.statefulset = target_ref is not None and target_ref.kind == "StatefulSet"
        self.percent: bool | None = None  # the type of the first subset that sets one
        self.total = 0  # of the percentages
        self.failed = False

    def check(self, value: int | str | None, path: Path) -> list[FieldError]:
        if value is None or self.failed:
            return []
        problem = self._problem(value)
        if problem:
            self.failed = True
            return [FieldError.invalid(path, value, problem)]
        return []

    def _problem(self, value: int | str) -> str:
        is_percent = isinstance(value, str)
        if self.percent is None:
            self.percent = is_percent
        elif is_percent != self.percent:
            return MAX_REPLICAS_MIXED
        if self.statefulset and is_percent:
            return MAX_REPLICAS_STATEFULSET
        if isinstance(value, str):
            malformed = is_valid_percent(value)
            if malformed:
                return f"{MAX_REPLICAS_INVALID}: {malformed[0]}"
            self.total += int(value[:-1])
            if self.total > 100:
                return MAX_REPLICAS_OVER_100
        elif value < 0:
            return MAX_REPLICAS_INVALID
        return ""


def _validate_subsets(spec: WorkloadSpreadSpec, path: Path) -> list[FieldError]:
    subsets = spec.subsets
    if not subsets:
        return [FieldError.required(path, "subsets number must >= 1 in WorkloadSpread")]
    errs: list[FieldError] = []
    names: set[str] = set()
    max_replicas = _MaxReplicas(spec.target_ref)
    for i, subset in enumerate(subsets):
        sp = path.index(i)
        if not subset.name:
            errs.append(FieldError.invalid(sp.child("name"), subset.name, "must be non-empty"))
        elif subset.name in names:
            errs.append(
                FieldError.invalid(sp.child("name"), subset.name, f"duplicated subset name {subset.name}")
            )
        names.add(subset.name)
        if subset.required_node_selector_term is not None:
            errs.extend(
                validate_node_selector_term(
                    subset.required_node_selector_term,
                    sp.child("requiredNodeSelectorTerm"),
                    allow_invalid_values=False,
                )
            )
        errs.extend(
            validate_preferred_scheduling_terms(
                subset.preferred_node_selector_terms, sp.child("preferredNodeSelectorTerms")
            )
        )
        errs.extend(validate_tolerations(subset.tolerations, sp.child("tolerations")))
        errs.extend(_validate_patch(subset.patch, sp.child("patch")))
        errs.extend(max_replicas.check(subset.max_replicas, sp.child("maxReplicas")))
    if (
        not max_replicas.failed
        and max_replicas.percent
        and max_replicas.total < 100
        and subsets[-1].max_replicas is not None
    ):
        # percentages must share out every replica unless the last subset takes the rest
        errs.append(
            FieldError.invalid(
                path.index(0).child("maxReplicas"), subsets[0].max_replicas, MAX_REPLICAS_UNDER_100
            )
        )
    return errs


def _validate_schedule_strategy(spec: WorkloadSpreadSpec, path: Path) -> list[FieldError]:
    """The type; an adaptive strategy needs type Adaptive, a last subset without maxReplicas (it
    takes the pods no other subset could), and time to try every subset within the
    unschedulable window. As Kruise does, errors about ``adaptive`` show rescheduleCriticalSeconds
    as the value."""
    strategy = spec.schedule_strategy
    errs: list[FieldError] = []
    if strategy.type and strategy.type not in SCHEDULE_STRATEGY_TYPES:
        errs.append(FieldError.not_supported(path.child("type"), strategy.type, SCHEDULE_STRATEGY_TYPES))
    adaptive = strategy.adaptive
    if adaptive is None:
        return errs
    seconds = adaptive.reschedule_critical_seconds
    if strategy.type != "Adaptive":
        errs.append(
            FieldError.invalid(
                path.child("type"),
                seconds,
                "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy",
            )
        )
    n = len(spec.subsets)
    if n > 1 and spec.subsets[-1].max_replicas is not None:
        errs.append(
            FieldError.invalid(
                path.child("adaptive"),
                seconds,
                ADAPTIVE_LAST_SUBSET,
            )
        )
    allowed = MAX_INT32
    if n > 1:
        allowed = (UNSCHEDULABLE_RECOVERY_SECONDS - RECONCILE_MARGIN_SECONDS) // (n - 1)
    if seconds is not None and not 0 <= seconds <= allowed:
        errs.append(
            FieldError.invalid(
                path.child("adaptive", "rescheduleCriticalSeconds"),
                seconds,
                f"rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > {allowed} is not permitted",
            )
        )
    return errs


def _validate_target_filter(spec: WorkloadSpreadSpec, path: Path) -> list[FieldError]:
    """A targetFilter's selector must parse (metav1.LabelSelectorAsSelector); the error is
    reported at ``targetFilter`` with the whole filter as the value, as Kruise does."""
    tf = spec.target_filter
    if tf is None:
        return []
    problems = validate_label_selector(tf.selector, Path("selector"))
    if not problems:
        return []
    return [FieldError.invalid(path, tf.to_dict(), problems[0].detail or str(problems[0]))]


def validate_workload_spread(ws: WorkloadSpread) -> list[FieldError]:
    """Metadata, then spec.targetRef, spec.subsets, spec.scheduleStrategy and spec.targetFilter."""
    errs = validate_object_meta(ws.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = ws.spec, Path("spec")
    errs.extend(_validate_target_ref(spec.target_ref, path.child("targetRef")))
    errs.extend(_validate_subsets(spec, path.child("subsets")))
    errs.extend(_validate_schedule_strategy(spec, path.child("scheduleStrategy")))
    errs.extend(_validate_target_filter(spec, path.child("targetFilter")))
    return errs


def validate_workload_spread_update(ws: WorkloadSpread, old: WorkloadSpread) -> list[FieldError]:
    """What an update may not do besides what :func:`validate_workload_spread` checks: change
    spec.targetRef's group, kind or name (its version may change). An apiVersion that does not
    parse counts as the core group, as Kruise's ignored ParseGroupVersion error leaves it; a
    targetRef set or removed is left to the create rules, as Kruise does."""
    ref, old_ref = ws.spec.target_ref, old.spec.target_ref
    if ref is None or old_ref is None:
        return []
    if (_api_group(ref.api_version) or "", ref.kind, ref.name) == (
        _api_group(old_ref.api_version) or "",
        old_ref.kind,
        old_ref.name,
    ):
        return []
    return [FieldError.invalid(Path("spec").child("targetRef"), _target_ref_json(ref), TARGET_REF_CHANGED)]


# --- CloneSet -------------------------------------------------------------------------------------


def with_claim_volumes(template: PodTemplateSpec, claims: Any) -> PodTemplateSpec:
    """The template with a volume per volumeClaimTemplate (named after the claim, on the claim of
    that name) appended to its own: what Kruise validates a CloneSet's template as, and a
    WorkloadSpread subset's patch applied to a CloneSet's or StatefulSet's template
    (withVolumeClaimTemplates), since their containers may mount volumes only a claim provides.
    ``claims`` is the workload's ``spec.volumeClaimTemplates`` as read (anything else adds none)."""
    names = [
        c["metadata"].get("name")
        for c in (claims if isinstance(claims, list) else [])
        if isinstance(c, dict) and isinstance(c.get("metadata"), dict)
    ]
    volumes = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in names if isinstance(n, str)]
    if not volumes:
        return template
    out = template.copy()
    extra = dict(out.spec.extra or {})
    own = extra.get("volumes")
    extra["volumes"] = [*(own if isinstance(own, list) else []), *volumes]
    out.spec.extra = extra
    return out


def validate_clone_set(cs: CloneSet) -> list[FieldError]:
    """Like a Deployment: replicas, a required non-empty selector that selects the template's
    labels, the template as a pod template (with its volumeClaimTemplates as volumes),
    restartPolicy Always and no activeDeadlineSeconds.
    (updateStrategy and scaleStrategy, which Kruise defaults first, are not checked.)"""
    errs = validate_object_meta(cs.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = cs.spec, Path("spec")
    tpath = path.child("template")
    errs.extend(_nonnegative(spec.replicas, path.child("replicas")))
    errs.extend(_validate_selector(spec.selector, path.child("selector"), "cloneset"))
    if not label_selector_parses(spec.selector):
        errs.append(FieldError.invalid(path.child("selector"), label_selector_json(spec.selector), ""))
    else:
        compiled = compile_label_selector(spec.selector)
        labels = spec.template.metadata.labels
        if not compiled.empty and not compiled.matches(labels):
            errs.append(
                FieldError.invalid(
                    tpath.child("metadata", "labels"),
                    _labels_json(labels, spec.template.metadata.present("labels")),
                    MISMATCH,
                )
            )
        claims = (spec.extra or {}).get("volumeClaimTemplates")
        errs.extend(validate_pod_template(with_claim_volumes(spec.template, claims), tpath))
    policy = spec.template.spec.restart_policy
    if policy and policy != "Always":
        errs.append(FieldError.not_supported(tpath.child("spec", "restartPolicy"), policy, ("Always",)))
    if (spec.template.spec.extra or {}).get("activeDeadlineSeconds") is not None:
        errs.append(
            FieldError.forbidden(
                tpath.child("spec", "activeDeadlineSeconds"),
                "activeDeadlineSeconds in cloneset is not Supported",
            )
        )
    return errs
