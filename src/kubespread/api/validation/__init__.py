"""Validation as kube-apiserver (v1.36) validates a new object.

:func:`validate` returns every problem of one object as :class:`~kubespread.api.errors.FieldError`
values, in the API server's order (maps are walked in manifest order), with its field paths,
reasons and messages. It never raises and never changes the object. :func:`validate_update`
adds what an update may not change (so far: a WorkloadSpread's targetRef).

It validates what the registry validates on create, on the object as given. Defaults that decide
an outcome are read through their effective value (see :mod:`.pod`, :mod:`.apps`); mutations
(admission plugins, the matchLabelKeys merge of a new Pod) belong to
:mod:`kubespread.admission`, which runs them before calling :func:`validate`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubespread.api.apps import Deployment, Job, PriorityClass, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Namespace, Node, Pod, Service
from kubespread.api.errors import ErrorType, FieldError
from kubespread.api.features import MATCH_LABEL_KEYS_SELECTOR_MERGE, FeatureGates
from kubespread.api.kruise import KRUISE_V1BETA1, SUBSET_FIELDS_V1BETA1, CloneSet, WorkloadSpread
from kubespread.api.meta import KubeObject
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.validation.apps import (
    validate_deployment,
    validate_job,
    validate_replica_set,
    validate_replication_controller,
    validate_stateful_set,
)
from kubespread.api.validation.kruise import (
    validate_clone_set,
    validate_workload_spread,
    validate_workload_spread_update,
)
from kubespread.api.validation.node import validate_node
from kubespread.api.validation.objects import (
    validate_namespace,
    validate_priority_class,
    validate_service,
)
from kubespread.api.validation.pod import validate_pod
from kubespread.api.validation.policy import validate_pod_disruption_budget

__all__ = ["UPDATE_VALIDATORS", "VALIDATORS", "validate", "validate_update"]

Validator = Callable[[Any], list[FieldError]]
UpdateValidator = Callable[[Any, Any], list[FieldError]]

VALIDATORS: dict[type[KubeObject], Validator] = {
    Pod: validate_pod,
    Node: validate_node,
    Namespace: validate_namespace,
    Service: validate_service,
    Deployment: validate_deployment,
    ReplicaSet: validate_replica_set,
    StatefulSet: validate_stateful_set,
    Job: validate_job,
    ReplicationController: validate_replication_controller,
    PriorityClass: validate_priority_class,
    PodDisruptionBudget: validate_pod_disruption_budget,
    WorkloadSpread: validate_workload_spread,
    CloneSet: validate_clone_set,
}

#: what an update may not change, per kind (besides what :data:`VALIDATORS` checks of the new object)
UPDATE_VALIDATORS: dict[type[KubeObject], UpdateValidator] = {
    WorkloadSpread: validate_workload_spread_update,
}


def validate(obj: KubeObject, features: FeatureGates | None = None) -> list[FieldError]:
    """Every problem kube-apiserver would report creating ``obj``; [] when it is valid, as the
    server of ``features``' version judges it (default: v1.35; before v1.34 a new Pod's spread
    constraints' matchLabelKeys are judged unmerged, by the legacy rule).

    Kinds kubespread does not validate (a KubeSchedulerConfiguration, say) give []. A bug in a
    validator is reported as an InternalError field error rather than raised.
    """
    validator = VALIDATORS.get(type(obj))
    if validator is None:
        return []
    try:
        if (
            isinstance(obj, Pod)
            and features is not None
            and not features.enabled(MATCH_LABEL_KEYS_SELECTOR_MERGE)
        ):
            return validate_pod(obj, legacy_match_label_keys=True)
        if isinstance(obj, WorkloadSpread) and obj.api_version == KRUISE_V1BETA1:
            return [_v1beta1_path(e) for e in validator(obj)]
        return validator(obj)
    except Exception as exc:  # errors are values at the edges: report, do not crash the caller
        return [FieldError(ErrorType.INTERNAL, "", detail=f"validating {obj.KIND}: {exc!r}")]


def _v1beta1_path(e: FieldError) -> FieldError:
    """A WorkloadSpread field error located in v1beta1's field names (kruise#2466)."""
    for alpha, beta in SUBSET_FIELDS_V1BETA1.items():
        e.field = re.sub(rf"(?<![A-Za-z]){alpha}(?![A-Za-z])", beta, e.field)
    return e


def validate_update(obj: KubeObject, old: KubeObject) -> list[FieldError]:
    """Every problem of updating ``old`` to ``obj``: :func:`validate` of the new object, then the
    update's own rules (Kruise's webhook reports both in one answer). ``old`` of another kind
    adds nothing; like :func:`validate`, it never raises."""
    errors = validate(obj)
    check = UPDATE_VALIDATORS.get(type(obj))
    if check is None or type(old) is not type(obj):
        return errors
    try:
        return [*errors, *check(obj, old)]
    except Exception as exc:  # as validate: an InternalError field error, not a crash
        return [*errors, FieldError(ErrorType.INTERNAL, "", detail=f"validating {obj.KIND} update: {exc!r}")]
