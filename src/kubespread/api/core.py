"""core/v1: Pod, Node, Namespace, Service and the types they are made of."""

from __future__ import annotations

import copy
from dataclasses import field
from typing import Any, ClassVar, Final

from kubespread.api.meta import KubeObject, ObjectMeta
from kubespread.api.model import IntOrStr, Model, model
from kubespread.api.quantity import Quantity
from kubespread.api.selectors import LabelSelector, NodeSelector, NodeSelectorTerm
from kubespread.api.taints import Taint, Toleration

__all__ = [
    "DISRUPTION_TARGET",
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "SCHEDULE_ANYWAY",
    "Affinity",
    "Container",
    "ContainerPort",
    "Namespace",
    "Node",
    "NodeAffinity",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodSpec",
    "PodTemplateSpec",
    "PreferredSchedulingTerm",
    "ResourceRequirements",
    "Service",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "local_storage",
    "restart_count",
]

# --- resources and containers -----------------------------------------------------------------


@model
class ResourceRequirements(Model):
    requests: dict[str, Quantity] = field(default_factory=dict)
    limits: dict[str, Quantity] = field(default_factory=dict)
    claims: list[Any] = field(default_factory=list)


@model
class ContainerPort(Model):
    name: str = ""
    container_port: int = 0
    host_port: int = 0
    host_ip: str = field(default="", metadata={"kubespread_json_name": "hostIP"})
    protocol: str = ""


@model
class Container(Model):
    name: str = ""
    image: str = ""
    ports: list[ContainerPort] = field(default_factory=list)
    resources: ResourceRequirements = field(default_factory=ResourceRequirements)
    restart_policy: str | None = None
    env: list[Any] = field(default_factory=list)

    @property
    def is_sidecar(self) -> bool:
        """An init container with restartPolicy Always runs for the pod's lifetime (KEP-753)."""
        return self.restart_policy == "Always"


# --- affinity -----------------------------------------------------------------------------------


@model
class PreferredSchedulingTerm(Model):
    weight: int = 0
    preference: NodeSelectorTerm = field(default_factory=NodeSelectorTerm)


@model
class NodeAffinity(Model):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    # the design's evicting form: required at scheduling and, unlike the field above, while
    # the pod runs (kubespread.controllers.required_during_execution reports breaches)
    required_during_scheduling_required_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = field(
        default_factory=list
    )


@model
class PodAffinityTerm(Model):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = field(default_factory=list)
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = field(default_factory=list)
    mismatch_label_keys: list[str] = field(default_factory=list)


@model
class WeightedPodAffinityTerm(Model):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = field(default_factory=PodAffinityTerm)


@model
class PodAffinity(Model):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = field(default_factory=list)
    required_during_scheduling_required_during_execution: list[PodAffinityTerm] = field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = field(
        default_factory=list
    )


@model
class PodAntiAffinity(Model):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = field(default_factory=list)
    required_during_scheduling_required_during_execution: list[PodAffinityTerm] = field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = field(
        default_factory=list
    )


@model
class Affinity(Model):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


#: TopologySpreadConstraint.whenUnsatisfiable and the node inclusion policies' values
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"


@model
class TopologySpreadConstraint(Model):
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = field(default_factory=list)


# --- pods ----------------------------------------------------------------------------------------


@model
class PodSchedulingGate(Model):
    name: str = ""


@model
class PodSpec(Model):
    node_name: str = ""
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = field(default_factory=list)
    topology_spread_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: dict[str, Quantity] = field(default_factory=dict)
    resources: ResourceRequirements | None = None  # pod-level resources (KEP-2837, beta in v1.35)
    priority: int | None = None
    priority_class_name: str = ""
    scheduler_name: str = ""
    scheduling_gates: list[PodSchedulingGate] = field(default_factory=list)
    restart_policy: str = ""
    termination_grace_period_seconds: int | None = None
    preemption_policy: str | None = None
    host_network: bool = False

    def host_ports(self) -> list[ContainerPort]:
        """Ports the pod claims on its node: hostPorts of sidecars and containers (GetHostPorts;
        a plain init container has exited before the pod runs, so its ports are not held)."""
        running = (*(c for c in self.init_containers if c.is_sidecar), *self.containers)
        return [p for c in running for p in c.ports if p.host_port > 0]


def local_storage(volume: Any) -> bool:
    """Whether a pod's volume (an item of its unmodelled ``spec.volumes``) keeps data on the
    node, an emptyDir or a hostPath: the descheduler leaves such a pod where it is. It is all
    any command reads of a pod's volumes (so all a stored pod's volumes are checked for)."""
    return isinstance(volume, dict) and ("hostPath" in volume or "emptyDir" in volume)


def restart_count(status: Any) -> int:
    """What a run reads of a container status (an item of a pod's unmodelled
    ``status.containerStatuses``): its restartCount when an integer, else 0. The ReplicaSet's
    scale-down ranks pods by the highest; no command reads anything else of it."""
    count = status.get("restartCount") if isinstance(status, dict) else None
    return count if isinstance(count, int) else 0


#: the pod condition that says why a pod is about to be deleted (eviction, taint, preemption)
DISRUPTION_TARGET: Final = "DisruptionTarget"


@model
class PodCondition(Model):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    #: RFC 3339; kept when a condition is rewritten with the same status (UpdatePodCondition)
    last_transition_time: str | None = None


@model
class PodStatus(Model):
    phase: str = ""
    conditions: list[PodCondition] = field(default_factory=list)
    nominated_node_name: str = ""
    #: RFC 3339; when the kubelet started the pod (preemption spares the longer-running first)
    start_time: str | None = None


@model
class Pod(KubeObject):
    KIND: ClassVar[str] = "Pod"
    API_VERSION: ClassVar[str] = "v1"

    spec: PodSpec = field(default_factory=PodSpec)
    status: PodStatus = field(default_factory=PodStatus)

    @property
    def node_name(self) -> str:
        return self.spec.node_name

    @property
    def is_terminating(self) -> bool:
        return self.metadata.deletion_timestamp is not None

    @property
    def is_finished(self) -> bool:
        """Succeeded and Failed pods hold no resources and are not counted by the scheduler."""
        return self.status.phase in ("Succeeded", "Failed")

    def with_disruption_target(self, reason: str, message: str) -> Pod:
        """A copy whose DisruptionTarget condition (replacing any earlier one) says why it is
        about to go: what an eviction, the taint manager or the scheduler's preemption writes
        before deleting it."""
        marked = copy.copy(self)
        marked.status = copy.copy(self.status)
        marked.status.conditions = [c for c in self.status.conditions if c.type != DISRUPTION_TARGET] + [
            PodCondition(type=DISRUPTION_TARGET, status="True", reason=reason, message=message)
        ]
        return marked


@model
class PodTemplateSpec(Model):
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec = field(default_factory=PodSpec)


# --- nodes -----------------------------------------------------------------------------------------


@model
class NodeSpec(Model):
    unschedulable: bool = False
    taints: list[Taint] = field(default_factory=list)
    provider_id: str = field(default="", metadata={"kubespread_json_name": "providerID"})
    pod_cidr: str = field(default="", metadata={"kubespread_json_name": "podCIDR"})


@model
class ContainerImage(Model):
    names: list[str] = field(default_factory=list)
    size_bytes: int = 0


@model
class NodeCondition(Model):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


@model
class NodeStatus(Model):
    capacity: dict[str, Quantity] = field(default_factory=dict)
    allocatable: dict[str, Quantity] = field(default_factory=dict)
    images: list[ContainerImage] = field(default_factory=list)
    conditions: list[NodeCondition] = field(default_factory=list)


@model
class Node(KubeObject):
    KIND: ClassVar[str] = "Node"
    API_VERSION: ClassVar[str] = "v1"
    NAMESPACED: ClassVar[bool] = False

    spec: NodeSpec = field(default_factory=NodeSpec)
    status: NodeStatus = field(default_factory=NodeStatus)

    @property
    def allocatable(self) -> dict[str, Quantity]:
        """Allocatable, falling back to capacity as the kubelet does when it is absent."""
        return self.status.allocatable or self.status.capacity


@model
class Namespace(KubeObject):
    KIND: ClassVar[str] = "Namespace"
    API_VERSION: ClassVar[str] = "v1"
    NAMESPACED: ClassVar[bool] = False

    spec: Any = None
    status: Any = None


@model
class ServicePort(Model):
    name: str = ""
    port: int = 0
    target_port: IntOrStr | None = None
    protocol: str = ""
    node_port: int = 0


@model
class ServiceSpec(Model):
    selector: dict[str, str] = field(default_factory=dict)
    type: str = ""
    ports: list[ServicePort] = field(default_factory=list)
    cluster_ip: str = field(default="", metadata={"kubespread_json_name": "clusterIP"})


@model
class Service(KubeObject):
    KIND: ClassVar[str] = "Service"
    API_VERSION: ClassVar[str] = "v1"

    spec: ServiceSpec = field(default_factory=ServiceSpec)
    status: Any = None
