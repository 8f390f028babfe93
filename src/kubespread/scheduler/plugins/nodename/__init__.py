"""NodeName (Filter): a pod naming spec.nodeName fits only that node."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Node, Pod
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import (
    READS_NODE,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
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

__all__ = ["ERR_REASON", "NodeName"]

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"
_REJECTED: Final = Status.unresolvable(ERR_REASON)


class NodeName(FilterPlugin):
    reads = READS_NODE  # the node alone decides
    name = NAME

    def events_to_register(self) -> list[EventRegistration]:
        """Only the named node's arrival helps (its updates never change this verdict)."""
        return [EventRegistration(EventKind(EventResource.NODE, ActionType.ADD), self.hint_after_node_add)]

    @staticmethod
    def hint_after_node_add(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterNodeAdd: Queue when the new node is the one the pod names."""
        node: Node = event.new
        wanted = pod.spec.node_name
        return QUEUE if not wanted or wanted == node.metadata.name else QUEUE_SKIP

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = pod.spec.node_name
        if not wanted or wanted == node.name:
            return SUCCESS
        return _REJECTED

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        wanted = pod.spec.node_name
        if not wanted:
            return FilterResult.passing(len(nodes))
        rejected = np.asarray(state.cluster.node_names[nodes] != wanted, dtype=bool)
        return FilterResult.from_mask(rejected, _REJECTED)
