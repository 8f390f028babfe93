"""OpenKruise apps.kruise.io/v1alpha1: WorkloadSpread and CloneSet
(see shared/spec/workloadspread-proposal.md)."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from kubespread.api.core import PodTemplateSpec, PreferredSchedulingTerm
from kubespread.api.meta import KubeObject
from kubespread.api.model import IntOrStr, Model, always, model
from kubespread.api.selectors import LabelSelector, NodeSelectorTerm
from kubespread.api.taints import Toleration

__all__ = [
    "CloneSet",
    "TargetReference",
    "WorkloadSpread",
    "WorkloadSpreadSubset",
    "WorkloadSpreadSubsetStatus",
]

KRUISE_API_VERSION = "apps.kruise.io/v1alpha1"


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
class WorkloadSpreadSpec(Model):
    target_ref: TargetReference | None = None
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
    KIND: ClassVar[str] = "WorkloadSpread"
    API_VERSION: ClassVar[str] = KRUISE_API_VERSION

    spec: WorkloadSpreadSpec = field(default_factory=WorkloadSpreadSpec)
    status: WorkloadSpreadStatus = field(default_factory=WorkloadSpreadStatus)


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
