"""policy/v1 PodDisruptionBudget, validated as kube-apiserver v1.36 validates a create.

Two passes, as the registry runs them (``rest.BeforeCreate``): the strategy's
ValidatePodDisruptionBudget (the spec only), and, only when that found nothing, the generic
ObjectMeta validation with the loosest name rule (a path segment: not ``.`` or ``..``, no
``/`` or ``%``). A PDB's name is not a DNS name, and a bad spec hides a bad name.

The spec: ``minAvailable`` and ``maxUnavailable`` are exclusive (the error is at ``spec`` with
the internal spec struct as its value); each is a non-negative int or a percent of at most
100%; the selector is a valid label selector; ``unhealthyPodEvictionPolicy`` is
``IfHealthyBudget`` or ``AlwaysAllow``. policy/v1 has no defaults for the spec.
"""

from __future__ import annotations

from typing import Any, Final

from kubespread.api.errors import FieldError, Path
from kubespread.api.model import IntOrStr
from kubespread.api.policy import PodDisruptionBudget, PodDisruptionBudgetSpec
from kubespread.api.validation.meta import NEGATIVE_MSG, validate_object_meta
from kubespread.api.validation.names import is_valid_percent
from kubespread.api.validation.selectors import label_selector_json, validate_label_selector

__all__ = [
    "BOTH_SET_MSG",
    "UNHEALTHY_POD_EVICTION_POLICIES",
    "name_is_path_segment",
    "validate_pod_disruption_budget",
]

BOTH_SET_MSG: Final = "minAvailable and maxUnavailable cannot be both set"
OVER_100_MSG: Final = "must not be greater than 100%"
#: sets.NewString(...).List(): sorted
UNHEALTHY_POD_EVICTION_POLICIES: Final = ("AlwaysAllow", "IfHealthyBudget")


def name_is_path_segment(name: str, prefix: bool = False) -> list[str]:
    """path.ValidatePathSegmentName: what any stored object's name must be at least."""
    if not prefix:
        for bad in (".", ".."):
            if name == bad:
                return [f"may not be '{bad}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _spec_json(spec: PodDisruptionBudgetSpec) -> dict[str, Any]:
    """The internal policy.PodDisruptionBudgetSpec as json.Marshal prints it in an error value:
    it has no json tags, so the keys are the Go field names, in declaration order, nil as null."""
    return {
        "MinAvailable": spec.min_available,
        "Selector": label_selector_json(spec.selector),
        "MaxUnavailable": spec.max_unavailable,
        "UnhealthyPodEvictionPolicy": spec.unhealthy_pod_eviction_policy,
    }


def _int_or_percent(value: IntOrStr, path: Path) -> list[FieldError]:
    """ValidatePositiveIntOrPercent, then IsNotMoreThan100Percent (only for a valid percent)."""
    if isinstance(value, str):
        problems = is_valid_percent(value)
        errs = [FieldError.invalid(path, value, m) for m in problems]
        if not problems and int(value[:-1]) > 100:
            errs.append(FieldError.invalid(path, value, OVER_100_MSG))
        return errs
    if value < 0:
        return [FieldError.invalid(path, value, NEGATIVE_MSG)]
    return []


def _validate_spec(spec: PodDisruptionBudgetSpec, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.min_available is not None and spec.max_unavailable is not None:
        errs.append(FieldError.invalid(path, _spec_json(spec), BOTH_SET_MSG))
    if spec.min_available is not None:
        errs.extend(_int_or_percent(spec.min_available, path.child("minAvailable")))
    if spec.max_unavailable is not None:
        errs.extend(_int_or_percent(spec.max_unavailable, path.child("maxUnavailable")))
    errs.extend(validate_label_selector(spec.selector, path.child("selector")))
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(
            FieldError.not_supported(
                path.child("unhealthyPodEvictionPolicy"), policy, UNHEALTHY_POD_EVICTION_POLICIES
            )
        )
    return errs


def validate_pod_disruption_budget(pdb: PodDisruptionBudget) -> list[FieldError]:
    """The spec's errors; when there are none, the generic metadata check's."""
    errs = _validate_spec(pdb.spec, Path("spec"))
    if errs:
        return errs
    return validate_object_meta(pdb.metadata, namespaced=True, name_fn=name_is_path_segment)
