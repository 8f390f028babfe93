"""NodePorts (PreFilter, Filter): a node must have the pod's host ports free."""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.cluster.nodeinfo import DEFAULT_HOST_IP, HostPort, NodeInfo, pod_host_ports
from kubespread.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    Status,
)

__all__ = ["ERR_REASON", "NodePorts", "port_conflicts"]

NAME: Final = "NodePorts"
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
_PRE_FILTER_KEY: Final = "PreFilter" + NAME


def port_conflicts(wanted: HostPort, used: dict[HostPort, int]) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 clashes with the same protocol/port on any IP; a
    specific IP clashes with itself and with 0.0.0.0."""
    ip, protocol, port = wanted
    if port <= 0:
        return False
    if ip == DEFAULT_HOST_IP:
        return any(p == port and proto == protocol for (_, proto, p) in used)
    return (ip, protocol, port) in used or (DEFAULT_HOST_IP, protocol, port) in used


class NodePorts(PreFilterPlugin, FilterPlugin):
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        ports = pod_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, ports)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        ports = state.get(_PRE_FILTER_KEY)
        if ports is None:
            ports = pod_host_ports(pod)
        used = node.used_ports
        if used and any(port_conflicts(p, used) for p in ports):
            return Status.unschedulable(ERR_REASON)
        return SUCCESS
