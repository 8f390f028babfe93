"""Cluster state: the objects that exist and the incremental indexes the scheduler reads."""

from kubespread.cluster.counts import PodCountGroup
from kubespread.cluster.errors import ClusterError
from kubespread.cluster.events import ClusterEvent, EventType, Listener
from kubespread.cluster.nodeinfo import HostPort, NodeInfo, pod_host_ports
from kubespread.cluster.state import NODE_VECTORS, OBJECT_KINDS, ClusterState

__all__ = [
    "NODE_VECTORS",
    "OBJECT_KINDS",
    "ClusterError",
    "ClusterEvent",
    "ClusterState",
    "EventType",
    "HostPort",
    "Listener",
    "NodeInfo",
    "PodCountGroup",
    "pod_host_ports",
]
