"""Per-node facts kube-scheduler keeps in its NodeInfo, kept up to date by ClusterState."""

from __future__ import annotations

from typing import Any

from kubespread.api.core import Node, Pod
from kubespread.api.resources import Resources, node_allocatable

__all__ = ["HostPort", "NodeInfo", "pod_host_ports"]

#: (hostIP, protocol, hostPort) with kube-scheduler's defaults filled in: "" → "0.0.0.0", "" → "TCP"
HostPort = tuple[str, str, int]

DEFAULT_HOST_IP = "0.0.0.0"
DEFAULT_PROTOCOL = "TCP"


def pod_host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """The host ports a pod holds on its node (GetHostPorts, then HostPortInfo's sanitizing)."""
    return tuple(
        (p.host_ip or DEFAULT_HOST_IP, p.protocol or DEFAULT_PROTOCOL, p.host_port)
        for p in pod.spec.host_ports()
    )


class NodeInfo:
    """One node and what the scheduler-visible pods on it use.

    ``pods`` are the pods kube-scheduler would have on its NodeInfo: every bound pod except
    Succeeded/Failed ones (the scheduler's informer filters those out), terminating pods
    included — they still hold their resources. ``all_pods`` adds the finished ones.
    ``requested`` and ``non_zero_requested`` (milli_cpu and memory only, as in kube-scheduler)
    and ``used_ports`` sum over ``pods``.

    ``used_ports`` counts holders per port, where kube-scheduler keeps a set: the same set of
    ports is in use, but removing one of two pods that share a port (possible only for pods
    bound without the NodePorts filter) keeps the port in use here.

    Read-only outside ClusterState; ``index`` is the node's position in the state's vectors
    and changes when another node is deleted (see ClusterState).
    """

    __slots__ = (
        "all_pods",
        "allocatable",
        "index",
        "node",
        "non_zero_requested",
        "pods",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node, index: int) -> None:
        self.node = node
        self.index = index
        self.allocatable: Resources = node_allocatable(node)
        self.requested = Resources()
        self.non_zero_requested = Resources()
        self.used_ports: dict[HostPort, int] = {}
        self.pods: dict[str, Pod] = {}
        self.all_pods: dict[str, Pod] = {}

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @property
    def pod_count(self) -> int:
        """len(NodeInfo.Pods): what the Fit filter compares with allocatable pods."""
        return len(self.pods)

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, index={self.index}, pods={len(self.pods)}, {self.requested})"

    def summary(self) -> dict[str, Any]:
        """A plain view for debugging and reports."""
        return {
            "name": self.name,
            "index": self.index,
            "pods": len(self.pods),
            "requested": repr(self.requested),
            "nonZeroRequested": repr(self.non_zero_requested),
            "allocatable": repr(self.allocatable),
            "usedPorts": sorted(self.used_ports),
        }
