"""NodePorts (PreFilter, Filter): a node must have the pod's host ports free."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.nodeinfo import DEFAULT_HOST_IP, HostPort, NodeInfo, pod_host_ports
from kubespread.scheduler.framework import (
    READS_NODE_PODS,
    SKIP,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    PreFilterPlugin,
    PreFilterResult,
    StateKey,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.queueing import (
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    QueueingHint,
)

__all__ = ["ERR_REASON", "NodePorts", "port_conflicts"]

NAME: Final = "NodePorts"
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
_PRE_FILTER_KEY: Final[StateKey[tuple[HostPort, ...]]] = StateKey("PreFilter" + NAME, tuple)
_REJECTED: Final = Status.unschedulable(ERR_REASON)


def port_conflicts(wanted: HostPort, used: dict[HostPort, int]) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 clashes with the same protocol/port on any IP; a
    specific IP clashes with itself and with 0.0.0.0."""
    ip, protocol, port = wanted
    if port <= 0:
        return False
    if ip == DEFAULT_HOST_IP:
        return any(p == port and proto == protocol for (_, proto, p) in used)
    return (ip, protocol, port) in used or (DEFAULT_HOST_IP, protocol, port) in used


def _any_conflict(ports: tuple[HostPort, ...], used: dict[HostPort, int]) -> bool:
    return bool(used) and any(port_conflicts(p, used) for p in ports)


class NodePorts(PreFilterPlugin, FilterPlugin):
    reads = READS_NODE_PODS  # what the pods on the node use
    name = NAME

    def events_to_register(self) -> list[EventRegistration]:
        """A bound pod's deletion may free a port; a new node has all its ports free (no hint:
        always Queue). Ports are immutable, so pod updates never help."""
        return [
            EventRegistration(EventKind(EventResource.POD, ActionType.DELETE), self.hint_after_pod_deleted),
            EventRegistration(EventKind(EventResource.NODE, ActionType.ADD)),
        ]

    @staticmethod
    def hint_after_pod_deleted(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterPodDeleted: Queue when the deleted pod was bound and held a host
        port the pod wants."""
        gone: Pod = event.old
        if not gone.spec.node_name:
            return QUEUE_SKIP
        held = dict.fromkeys(pod_host_ports(gone), 1)
        return QUEUE if _any_conflict(pod_host_ports(pod), held) else QUEUE_SKIP

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        ports = pod_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, ports)
        return None, SUCCESS

    def _ports(self, state: CycleState, pod: Pod) -> tuple[HostPort, ...]:
        try:
            return state.read(_PRE_FILTER_KEY)
        except StateNotFoundError:  # Filter without PreFilter (direct calls)
            return pod_host_ports(pod)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        return _REJECTED if _any_conflict(self._ports(state, pod), node.used_ports) else SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        ports = self._ports(state, pod)
        info_at = state.cluster.node_info_at
        rejected = np.fromiter(
            (_any_conflict(ports, info_at(int(i)).used_ports) for i in nodes), dtype=bool, count=len(nodes)
        )
        return FilterResult.from_mask(rejected, _REJECTED)
