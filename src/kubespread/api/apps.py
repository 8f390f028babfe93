"""Workloads: apps/v1 Deployment, ReplicaSet, StatefulSet; batch/v1 Job; core/v1
ReplicationController; scheduling.k8s.io/v1 PriorityClass."""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from kubespread.api.core import PodTemplateSpec
from kubespread.api.meta import KubeObject
from kubespread.api.model import IntOrStr, Model, model
from kubespread.api.selectors import LabelSelector

__all__ = [
    "Deployment",
    "DeploymentStrategy",
    "Job",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "RollingUpdateDeployment",
    "StatefulSet",
]


@model
class RollingUpdateDeployment(Model):
    max_unavailable: IntOrStr | None = None
    max_surge: IntOrStr | None = None


@model
class DeploymentStrategy(Model):
    type: str = ""
    rolling_update: RollingUpdateDeployment | None = None


@model
class DeploymentSpec(Model):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int = 0
    revision_history_limit: int | None = None
    paused: bool = False
    progress_deadline_seconds: int | None = None


@model
class Deployment(KubeObject):
    KIND: ClassVar[str] = "Deployment"
    API_VERSION: ClassVar[str] = "apps/v1"

    spec: DeploymentSpec = field(default_factory=DeploymentSpec)
    status: Any = None


@model
class ReplicaSetSpec(Model):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    min_ready_seconds: int = 0


@model
class ReplicaSet(KubeObject):
    KIND: ClassVar[str] = "ReplicaSet"
    API_VERSION: ClassVar[str] = "apps/v1"

    spec: ReplicaSetSpec = field(default_factory=ReplicaSetSpec)
    status: Any = None


@model
class StatefulSetSpec(Model):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    service_name: str = ""
    pod_management_policy: str = ""
    update_strategy: Any = None
    ordinals: Any = None


@model
class StatefulSet(KubeObject):
    KIND: ClassVar[str] = "StatefulSet"
    API_VERSION: ClassVar[str] = "apps/v1"

    spec: StatefulSetSpec = field(default_factory=StatefulSetSpec)
    status: Any = None


@model
class JobSpec(Model):
    parallelism: int | None = None
    completions: int | None = None
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    completion_mode: str | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)


@model
class Job(KubeObject):
    KIND: ClassVar[str] = "Job"
    API_VERSION: ClassVar[str] = "batch/v1"

    spec: JobSpec = field(default_factory=JobSpec)
    status: Any = None


@model
class ReplicationControllerSpec(Model):
    replicas: int | None = None
    selector: dict[str, str] = field(default_factory=dict)
    template: PodTemplateSpec | None = None
    min_ready_seconds: int = 0


@model
class ReplicationController(KubeObject):
    KIND: ClassVar[str] = "ReplicationController"
    API_VERSION: ClassVar[str] = "v1"

    spec: ReplicationControllerSpec = field(default_factory=ReplicationControllerSpec)
    status: Any = None


@model
class PriorityClass(KubeObject):
    KIND: ClassVar[str] = "PriorityClass"
    API_VERSION: ClassVar[str] = "scheduling.k8s.io/v1"
    NAMESPACED: ClassVar[bool] = False

    value: int = 0
    global_default: bool = False
    description: str = ""
    preemption_policy: str | None = None
