"""Objects validated for their metadata (and little more): Namespace, Service, PriorityClass.
(OpenKruise's WorkloadSpread and CloneSet are validated in :mod:`.kruise`.)"""

from __future__ import annotations

from kubespread.api.apps import PriorityClass
from kubespread.api.core import Namespace, Service
from kubespread.api.errors import FieldError, Path
from kubespread.api.validation.meta import validate_object_meta
from kubespread.api.validation.names import (
    name_is_dns1035_label,
    name_is_dns1123_label,
    name_is_dns1123_subdomain,
)

__all__ = ["validate_namespace", "validate_priority_class", "validate_service"]

# scheduling.HighestUserDefinablePriority; the system classes sit above it
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def validate_namespace(ns: Namespace) -> list[FieldError]:
    return validate_object_meta(ns.metadata, namespaced=False, name_fn=name_is_dns1123_label)


def validate_service(svc: Service) -> list[FieldError]:
    return validate_object_meta(svc.metadata, namespaced=True, name_fn=name_is_dns1035_label)


def _system_class_problem(pc: PriorityClass) -> str:
    """Why a ``system-`` class is not one of the built-in ones ("" when it is)."""
    name = pc.metadata.name
    value = SYSTEM_PRIORITY_CLASSES.get(name)
    if value is None:
        return f"{name} is not a known system priority class"
    if pc.value != value:
        return f"value of {name} PriorityClass must be {value}"
    if pc.global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_priority_class(pc: PriorityClass) -> list[FieldError]:
    """Names starting with ``system-`` are reserved for the built-in classes; a user-defined
    value is at most one billion. Negative values are valid (kube sets no lower bound but the
    int32 the decoder enforces), so a class may rank below the default 0."""
    errs = validate_object_meta(pc.metadata, namespaced=False, name_fn=name_is_dns1123_subdomain)
    name = pc.metadata.name
    if name.startswith("system-"):
        problem = _system_class_problem(pc)
        if problem:
            errs.append(
                FieldError.forbidden(
                    Path("metadata").child("name"),
                    "priority class names with 'system-' prefix are reserved for system use only. "
                    f"error: {problem}",
                )
            )
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            FieldError.forbidden(
                Path("value"),
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    # ValidatePreemptionPolicy: an empty string is a missing value, anything else unknown unsupported
    if pc.preemption_policy == "":
        errs.append(FieldError.required(Path("preemptionPolicy")))
    elif pc.preemption_policy is not None and pc.preemption_policy not in ("PreemptLowerPriority", "Never"):
        errs.append(
            FieldError.not_supported(
                Path("preemptionPolicy"), pc.preemption_policy, ("PreemptLowerPriority", "Never")
            )
        )
    return errs
