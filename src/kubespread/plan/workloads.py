"""The pods a plan moves, as the planners see them: which workload, which template, the
cluster without them."""

from __future__ import annotations

from typing import Any

from kubespread.api.core import Pod
from kubespread.cluster.state import OBJECT_KINDS, ClusterState
from kubespread.cluster.workloads import WorkloadRef, controller_of

__all__ = ["cluster_without", "template_key", "unbound", "workload_of"]


def template_key(pod: Pod) -> Any:
    """What makes two pods interchangeable copies: namespace, labels, and the spec but for
    the node."""
    data = pod.to_dict()
    spec = dict(data.get("spec", {}))
    spec.pop("nodeName", None)
    return (pod.namespace, repr(sorted(pod.metadata.labels.items())), repr(spec))


def workload_of(pod: Pod) -> str:
    """``namespace/Kind/name`` of the pod's controller (``namespace/Pod/name`` without one):
    the planners move pods per controller, whose pods are copies of one template."""
    ref = controller_of(pod) or WorkloadRef(pod.namespace, "Pod", pod.metadata.name)
    return ref.key


def cluster_without(cluster: ClusterState, drop: set[str]) -> ClusterState:
    """A copy of the cluster: nodes, namespaces, kept objects and bound pods but ``drop``."""
    copy = ClusterState()
    for ns in cluster.namespaces.values():
        copy.add_namespace(ns)
    for node in cluster.nodes.values():
        copy.add_node(node)
    for kind in OBJECT_KINDS:
        for obj in cluster.objects(kind.KIND).values():
            copy.add_object(obj)
    for key, pod in cluster.pods.items():
        if key not in drop and cluster.node_of(key):
            copy.add_pod(pod)
    return copy


def unbound(pod: Pod) -> Pod:
    """The pod as its controller creates it: no node, no status."""
    data = pod.to_dict()
    data.get("spec", {}).pop("nodeName", None)
    data.pop("status", None)
    return Pod.from_dict(data)
