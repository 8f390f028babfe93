"""OpenKruise apps.kruise.io/v1alpha1: WorkloadSpread and CloneSet
(see shared/spec/workloadspread-proposal.md)."""

from __future__ import annotations

import copy
from dataclasses import field
from typing import Any, ClassVar, Final

from kubespread.api.core import PodTemplateSpec, PreferredSchedulingTerm
from kubespread.api.meta import KubeObject
from kubespread.api.model import IntOrStr, Model, always, model
from kubespread.api.selectors import LabelSelector, NodeSelectorTerm
from kubespread.api.taints import Toleration

__all__ = [
    "KRUISE_V1BETA1",
    "SUBSET_FIELDS_V1BETA1",
    "CloneSet",
    "TargetFilter",
    "TargetReference",
    "WorkloadSpread",
    "WorkloadSpreadSubset",
    "WorkloadSpreadSubsetStatus",
    "workloadspread_from_v1beta1",
    "workloadspread_to_v1beta1",
]

KRUISE_API_VERSION = "apps.kruise.io/v1alpha1"
#: the version kruise#2466 added; WorkloadSpread is served in both
KRUISE_V1BETA1 = "apps.kruise.io/v1beta1"


@model
class TargetReference(Model):
    api_version: str = ""
    kind: str = ""
    name: str = ""


@model
class WorkloadSpreadSubset(Model):
    name: str = ""
    required_node_selector_term: NodeSelectorTerm | None = None
    preferred_node_selector_terms: list[PreferredSchedulingTerm] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    max_replicas: IntOrStr | None = None
    patch: Any = None


@model
class AdaptiveWorkloadSpreadStrategy(Model):
    disable_simulation_schedule: bool = False
    reschedule_critical_seconds: int | None = None


@model
class WorkloadSpreadScheduleStrategy(Model):
    type: str = ""
    adaptive: AdaptiveWorkloadSpreadStrategy | None = None


@model
class TargetFilter(Model):
    """Which of the target's pods the WorkloadSpread manages (``selector``: all when None),
    and where in the workload their number is (``replicasPathList``: dot paths such as
    ``spec.replicas`` or ``spec.roles.1.replicas``, summed; empty: the workload's replicas)."""

    selector: LabelSelector | None = None
    replicas_path_list: list[str] = field(default_factory=list)


@model
class WorkloadSpreadSpec(Model):
    target_ref: TargetReference | None = None
    target_filter: TargetFilter | None = None
    subsets: list[WorkloadSpreadSubset] = field(default_factory=list)
    schedule_strategy: WorkloadSpreadScheduleStrategy = field(default_factory=WorkloadSpreadScheduleStrategy)


@model
class SubsetCondition(Model):
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


@model
class WorkloadSpreadSubsetUnscheduledStatus(Model):
    unschedulable: bool = False
    unscheduled_time: str | None = None
    failed_count: int = 0


@model
class WorkloadSpreadSubsetStatus(Model):
    # name, replicas and missingReplicas have no omitempty in Kruise: 0 is written, and read
    # (missingReplicas 0: the subset is full)
    name: str = always(default="")
    replicas: int = always(default=0)
    missing_replicas: int = always(default=0)
    creating_pods: dict[str, str] = field(default_factory=dict)
    deleting_pods: dict[str, str] = field(default_factory=dict)
    conditions: list[SubsetCondition] = field(default_factory=list)
    subset_unscheduled_status: WorkloadSpreadSubsetUnscheduledStatus | None = None


@model
class WorkloadSpreadStatus(Model):
    observed_generation: int = 0
    subset_statuses: list[WorkloadSpreadSubsetStatus] = field(default_factory=list)


@model
class WorkloadSpread(KubeObject):
    """Read and written as ``apps.kruise.io/v1alpha1`` or ``v1beta1`` (kruise#2466): the model
    is v1alpha1's; a v1beta1 manifest is converted on the way in and the object written back
    in the version it was read in (``api_version``), as the CRD's conversion webhook does."""

    KIND: ClassVar[str] = "WorkloadSpread"
    API_VERSION: ClassVar[str] = KRUISE_API_VERSION

    spec: WorkloadSpreadSpec = field(default_factory=WorkloadSpreadSpec)
    status: WorkloadSpreadStatus = field(default_factory=WorkloadSpreadStatus)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkloadSpread:
        if isinstance(data, dict) and data.get("apiVersion") == KRUISE_V1BETA1:
            data = workloadspread_from_v1beta1(data)
        return cls._decode_value(data)

    def to_dict(self) -> dict[str, Any]:
        out = KubeObject.to_dict(self)
        if self.api_version == KRUISE_V1BETA1:
            return workloadspread_to_v1beta1(out)
        return out


#: v1alpha1 subset field → v1beta1's name for it (kruise#2466)
SUBSET_FIELDS_V1BETA1: Final = {
    "requiredNodeSelectorTerm": "requiredNodeSelector",
    "preferredNodeSelectorTerms": "preferredNodeSelector",
}


def _rename_subsets(data: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    spec = out.get("spec")
    subsets = spec.get("subsets") if isinstance(spec, dict) else None
    if isinstance(subsets, list):
        for subset in subsets:
            if isinstance(subset, dict):
                for old in [k for k in subset if k in names]:
                    subset[names[old]] = subset.pop(old)
    return out


def _conditions(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every subset condition of a WorkloadSpread's status (in place, for the conversions)."""
    status = data.get("status")
    statuses = status.get("subsetStatuses") if isinstance(status, dict) else None
    out = []
    for st in statuses if isinstance(statuses, list) else []:
        conds = st.get("conditions") if isinstance(st, dict) else None
        out += [c for c in conds if isinstance(c, dict)] if isinstance(conds, list) else []
    return out


def workloadspread_from_v1beta1(data: dict[str, Any]) -> dict[str, Any]:
    """A v1beta1 WorkloadSpread manifest in v1alpha1's field names (apiVersion kept): the
    subset selectors renamed back; a subset condition (metav1.Condition in v1beta1) loses the
    observedGeneration v1alpha1's condition does not have."""
    out = _rename_subsets(data, {new: old for old, new in SUBSET_FIELDS_V1BETA1.items()})
    for cond in _conditions(out):
        cond.pop("observedGeneration", None)
    return out


def workloadspread_to_v1beta1(data: dict[str, Any]) -> dict[str, Any]:
    """A v1alpha1-shaped WorkloadSpread manifest as v1beta1 writes it (apiVersion set)."""
    out = _rename_subsets(data, SUBSET_FIELDS_V1BETA1)
    out["apiVersion"] = KRUISE_V1BETA1
    return out


@model
class CloneSetScaleStrategy(Model):
    pods_to_delete: list[str] = field(default_factory=list)
    max_unavailable: IntOrStr | None = None


@model
class CloneSetSpec(Model):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    scale_strategy: CloneSetScaleStrategy | None = None
    update_strategy: Any = None
    min_ready_seconds: int = 0


@model
class CloneSet(KubeObject):
    KIND: ClassVar[str] = "CloneSet"
    API_VERSION: ClassVar[str] = KRUISE_API_VERSION

    spec: CloneSetSpec = field(default_factory=CloneSetSpec)
    status: Any = None
