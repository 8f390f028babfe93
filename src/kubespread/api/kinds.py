"""The registry of kinds kubespread models: (apiVersion group, kind) → class."""

from __future__ import annotations

from kubespread.api.apps import Deployment, Job, PriorityClass, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Namespace, Node, Pod, Service
from kubespread.api.kruise import CloneSet, WorkloadSpread
from kubespread.api.meta import KubeObject
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.schedconfig import KubeSchedulerConfiguration

__all__ = ["KINDS", "class_for"]

KINDS: dict[str, type[KubeObject]] = {
    cls.KIND: cls
    for cls in (
        Pod,
        Node,
        Namespace,
        Service,
        Deployment,
        ReplicaSet,
        StatefulSet,
        Job,
        ReplicationController,
        PriorityClass,
        PodDisruptionBudget,
        WorkloadSpread,
        CloneSet,
        KubeSchedulerConfiguration,
    )
}


def _group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def class_for(api_version: str, kind: str) -> type[KubeObject] | None:
    """The class for a manifest's apiVersion and kind, or None when kubespread does not model it.

    The group must match (a Kruise ``Deployment`` is not an apps/v1 one); the version is not
    checked beyond that, since the fields we read are stable across versions.
    """
    cls = KINDS.get(kind)
    if cls is None:
        return None
    if api_version and _group(api_version) != _group(cls.API_VERSION):
        return None
    return cls
