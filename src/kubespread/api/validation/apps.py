"""Workloads: Deployment, ReplicaSet, StatefulSet, Job, ReplicationController.

Their pod template is validated as a pod spec under ``spec.template.`` (without the Pod-only
defaulting of requests from limits, which templates do not get). As for pods, defaults that
decide an outcome are read through their effective value: a missing strategy is RollingUpdate
with maxSurge and maxUnavailable of 25%, a missing progressDeadlineSeconds is 600, an empty
template restartPolicy is Always.
"""

from __future__ import annotations

import re
from typing import Any

from kubespread.api.apps import (
    Deployment,
    DeploymentStrategy,
    Job,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from kubespread.api.core import PodTemplateSpec
from kubespread.api.errors import FieldError, Path
from kubespread.api.selectors import LabelSelector, compile_label_selector
from kubespread.api.validation.meta import NEGATIVE_MSG, validate_object_meta
from kubespread.api.validation.names import is_valid_percent, name_is_dns1123_label, name_is_dns1123_subdomain
from kubespread.api.validation.pod import validate_pod_template
from kubespread.api.validation.selectors import (
    label_selector_json,
    label_selector_parses,
    validate_label_selector,
)

__all__ = [
    "validate_deployment",
    "validate_job",
    "validate_replica_set",
    "validate_replication_controller",
    "validate_stateful_set",
]

DEFAULT_ROLLING = "25%"
_ATOI_RE = re.compile(r"[+-]?[0-9]+")  # what strconv.Atoi accepts
DEFAULT_PROGRESS_DEADLINE = 600
MISMATCH = "`selector` does not match template `labels`"


def _nonnegative(value: int | None, path: Path) -> list[FieldError]:
    if value is not None and value < 0:
        return [FieldError.invalid(path, value, NEGATIVE_MSG)]
    return []


def _labels_json(labels: dict[str, str], present: bool) -> Any:
    """A label map as Go's json.Marshal prints it: keys sorted; a nil map is null."""
    return dict(sorted(labels.items())) if labels or present else None


def _validate_selector(sel: LabelSelector | None, path: Path, kind: str) -> list[FieldError]:
    """Required; strictly valid; not empty."""
    if sel is None:
        return [FieldError.required(path)]
    errs = validate_label_selector(sel, path)
    if not sel.match_labels and not sel.match_expressions:
        errs.append(
            FieldError.invalid(path, label_selector_json(sel), f"empty selector is invalid for {kind}")
        )
    return errs


def _validate_template_for_selector(
    template: PodTemplateSpec,
    sel: LabelSelector | None,
    path: Path,
    *,
    restart_policies: tuple[str, ...],
    kind: str = "ReplicaSet",
) -> list[FieldError]:
    """The selector must select the template's labels (unless it is empty), then the template,
    then its restartPolicy (empty means Always). A StatefulSet's template is checked for its
    metadata only (see validate_pod_template)."""
    errs: list[FieldError] = []
    compiled = compile_label_selector(sel)
    if not compiled.empty and not compiled.matches(template.metadata.labels):
        errs.append(
            FieldError.invalid(
                path.child("metadata", "labels"),
                _labels_json(template.metadata.labels, template.metadata.present("labels")),
                MISMATCH,
            )
        )
    stateful = kind == "StatefulSet"
    errs.extend(validate_pod_template(template, path, spec=not stateful))
    policy = template.spec.restart_policy or "Always"
    if policy not in restart_policies:
        errs.append(FieldError.not_supported(path.child("spec", "restartPolicy"), policy, restart_policies))
    deadline = (template.spec.extra or {}).get("activeDeadlineSeconds")
    if deadline is not None and restart_policies == ("Always",):
        where, why = (
            path.child("spec", "activeDeadlineSeconds"),
            f"activeDeadlineSeconds in {kind} is not Supported",
        )
        errs.append(
            FieldError.forbidden(where, why) if stateful else FieldError.invalid(where, deadline, why)
        )
    return errs


def _selector_then_template(
    sel: LabelSelector | None, template: PodTemplateSpec, spec_path: Path, kind: str
) -> list[FieldError]:
    """The selector checks, then the template: only when the selector parses (a selector that
    does not is one more error, and the template is not looked at)."""
    errs = _validate_selector(sel, spec_path.child("selector"), kind)
    if not label_selector_parses(sel):
        errs.append(
            FieldError.invalid(
                spec_path.child("selector"), label_selector_json(sel), "invalid label selector"
            )
        )
    else:
        errs.extend(
            _validate_template_for_selector(
                template, sel, spec_path.child("template"), restart_policies=("Always",)
            )
        )
    return errs


def _int_or_percent(v: int | str) -> tuple[int, bool]:
    """(value, is_percent) as getIntOrPercentValue reads it; a malformed string reads as 0."""
    if isinstance(v, str):
        if not is_valid_percent(v):
            return int(v[:-1]), True
        return (int(v), False) if _ATOI_RE.fullmatch(v) else (0, False)
    return v, False


def _validate_positive_int_or_percent(v: int | str, path: Path) -> list[FieldError]:
    if isinstance(v, str):
        return [FieldError.invalid(path, v, m) for m in is_valid_percent(v)]
    return _nonnegative(v, path)


def _validate_strategy(strategy: DeploymentStrategy | None, path: Path) -> list[FieldError]:
    stype = (strategy.type if strategy else "") or "RollingUpdate"
    rolling = strategy.rolling_update if strategy else None
    if stype == "Recreate":
        if rolling is not None:
            return [
                FieldError.forbidden(
                    path.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"
                )
            ]
        return []
    if stype != "RollingUpdate":
        return [FieldError.not_supported(path.child("type"), stype, ("Recreate", "RollingUpdate"))]
    ru_path = path.child("rollingUpdate")
    max_unavailable = (
        DEFAULT_ROLLING if rolling is None or rolling.max_unavailable is None else rolling.max_unavailable
    )
    max_surge = DEFAULT_ROLLING if rolling is None or rolling.max_surge is None else rolling.max_surge
    errs = _validate_positive_int_or_percent(max_unavailable, ru_path.child("maxUnavailable"))
    errs.extend(_validate_positive_int_or_percent(max_surge, ru_path.child("maxSurge")))
    if _int_or_percent(max_unavailable)[0] == 0 and _int_or_percent(max_surge)[0] == 0:
        errs.append(
            FieldError.invalid(
                ru_path.child("maxUnavailable"), max_unavailable, "may not be 0 when `maxSurge` is 0"
            )
        )
    value, is_percent = _int_or_percent(max_unavailable)
    if is_percent and value > 100:
        errs.append(
            FieldError.invalid(
                ru_path.child("maxUnavailable"), max_unavailable, "must not be greater than 100%"
            )
        )
    return errs


def validate_deployment(d: Deployment) -> list[FieldError]:
    errs = validate_object_meta(d.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = d.spec, Path("spec")
    errs.extend(_nonnegative(spec.replicas, path.child("replicas")))
    errs.extend(_selector_then_template(spec.selector, spec.template, path, "deployment"))
    errs.extend(_validate_strategy(spec.strategy, path.child("strategy")))
    errs.extend(_nonnegative(spec.min_ready_seconds, path.child("minReadySeconds")))
    errs.extend(_nonnegative(spec.revision_history_limit, path.child("revisionHistoryLimit")))
    deadline = (
        DEFAULT_PROGRESS_DEADLINE
        if spec.progress_deadline_seconds is None
        else spec.progress_deadline_seconds
    )
    errs.extend(_nonnegative(deadline, path.child("progressDeadlineSeconds")))
    if deadline <= spec.min_ready_seconds:
        errs.append(
            FieldError.invalid(
                path.child("progressDeadlineSeconds"), deadline, "must be greater than minReadySeconds"
            )
        )
    return errs


def validate_replica_set(rs: ReplicaSet) -> list[FieldError]:
    errs = validate_object_meta(rs.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = rs.spec, Path("spec")
    errs.extend(_nonnegative(spec.replicas, path.child("replicas")))
    errs.extend(_nonnegative(spec.min_ready_seconds, path.child("minReadySeconds")))
    # kube-apiserver's ReplicaSet message says "deployment" too
    errs.extend(_selector_then_template(spec.selector, spec.template, path, "deployment"))
    return errs


def validate_stateful_set(sts: StatefulSet) -> list[FieldError]:
    errs = validate_object_meta(sts.metadata, namespaced=True, name_fn=name_is_dns1123_label)
    spec, path = sts.spec, Path("spec")
    policy = spec.pod_management_policy or "OrderedReady"
    if policy not in ("OrderedReady", "Parallel"):
        errs.append(
            FieldError.invalid(
                path.child("podManagementPolicy"),
                policy,
                "must be 'OrderedReady' or 'Parallel'",
            )
        )
    errs.extend(_nonnegative(spec.replicas, path.child("replicas")))
    errs.extend(_validate_selector(spec.selector, path.child("selector"), "statefulset"))
    if not label_selector_parses(spec.selector):
        errs.append(FieldError.invalid(path.child("selector"), label_selector_json(spec.selector), ""))
    else:
        errs.extend(
            _validate_template_for_selector(
                spec.template,
                spec.selector,
                path.child("template"),
                restart_policies=("Always",),
                kind="StatefulSet",
            )
        )
    return errs


def validate_job(job: Job) -> list[FieldError]:
    """Counts are non-negative; the template's restartPolicy is OnFailure or Never. The selector is
    generated by the server unless manualSelector is set; then it must select the template."""
    errs = validate_object_meta(job.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = job.spec, Path("spec")
    for key, value in (
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit),
    ):
        errs.extend(_nonnegative(value, path.child(key)))
    tpath = path.child("template")
    if spec.manual_selector:
        errs.extend(_validate_selector(spec.selector, path.child("selector"), "job"))
        compiled = compile_label_selector(spec.selector)
        if label_selector_parses(spec.selector) and not compiled.matches(spec.template.metadata.labels):
            errs.append(
                FieldError.invalid(
                    tpath.child("metadata", "labels"),
                    _labels_json(spec.template.metadata.labels, spec.template.metadata.present("labels")),
                    MISMATCH,
                )
            )
    errs.extend(validate_pod_template(spec.template, tpath))
    policy = spec.template.spec.restart_policy or "Always"
    if policy not in ("OnFailure", "Never"):
        errs.append(
            FieldError.not_supported(tpath.child("spec", "restartPolicy"), policy, ("OnFailure", "Never"))
        )
    return errs


def validate_replication_controller(rc: ReplicationController) -> list[FieldError]:
    """An empty selector defaults to the template's labels."""
    errs = validate_object_meta(rc.metadata, namespaced=True, name_fn=name_is_dns1123_subdomain)
    spec, path = rc.spec, Path("spec")
    errs.extend(_nonnegative(spec.replicas, path.child("replicas")))
    errs.extend(_nonnegative(spec.min_ready_seconds, path.child("minReadySeconds")))
    template = spec.template
    selector = spec.selector or (template.metadata.labels if template is not None else {})
    if not selector:
        errs.append(FieldError.required(path.child("selector")))
    if template is None:
        errs.append(FieldError.required(path.child("template")))
        return errs
    tpath = path.child("template")
    if selector and any(template.metadata.labels.get(k) != v for k, v in selector.items()):
        errs.append(
            FieldError.invalid(
                tpath.child("metadata", "labels"),
                _labels_json(template.metadata.labels, template.metadata.present("labels")),
                MISMATCH,
            )
        )
    errs.extend(validate_pod_template(template, tpath))
    policy = template.spec.restart_policy or "Always"
    if policy != "Always":
        errs.append(FieldError.not_supported(tpath.child("spec", "restartPolicy"), policy, ("Always",)))
    return errs
