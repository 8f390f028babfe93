"""Kubernetes objects as typed, slotted classes; selectors; quantities; validation."""

from kubespread.api.apps import Deployment, Job, PriorityClass, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import (
    Affinity,
    Container,
    Namespace,
    Node,
    NodeAffinity,
    Pod,
    PodAffinityTerm,
    PodSpec,
    Service,
    TopologySpreadConstraint,
)
from kubespread.api.errors import DecodeError, ErrorType, FieldError
from kubespread.api.kinds import KINDS, class_for
from kubespread.api.kruise import CloneSet, WorkloadSpread
from kubespread.api.meta import KubeObject, ObjectMeta, OwnerReference
from kubespread.api.quantity import Quantity, QuantityError
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Selector,
    compile_label_selector,
    node_selector_matches,
)
from kubespread.api.taints import Taint, Toleration

__all__ = [
    "KINDS",
    "Affinity",
    "CloneSet",
    "Container",
    "DecodeError",
    "Deployment",
    "ErrorType",
    "FieldError",
    "Job",
    "KubeObject",
    "KubeSchedulerConfiguration",
    "LabelSelector",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorTerm",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodAffinityTerm",
    "PodSpec",
    "PriorityClass",
    "Quantity",
    "QuantityError",
    "ReplicaSet",
    "ReplicationController",
    "Selector",
    "Service",
    "StatefulSet",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WorkloadSpread",
    "class_for",
    "compile_label_selector",
    "node_selector_matches",
]
