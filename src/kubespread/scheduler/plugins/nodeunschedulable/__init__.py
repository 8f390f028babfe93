"""NodeUnschedulable (Filter): spec.unschedulable nodes take only pods tolerating the
node.kubernetes.io/unschedulable:NoSchedule taint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from kubespread.api import keys
from kubespread.api.core import Node, Pod
from kubespread.api.taints import NO_SCHEDULE, Taint, tolerates_all
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import (
    READS_NODE,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    NodeSetCache,
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

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint(key=keys.TAINT_UNSCHEDULABLE, effect=NO_SCHEDULE)
_REJECTED: Final = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)


def _unschedulable_vector(cluster: ClusterState) -> np.ndarray:
    """spec.unschedulable by node id (read-only)."""
    out = np.fromiter(
        (bool(info.node.spec.unschedulable) for info in cluster.node_infos()),
        dtype=bool,
        count=cluster.num_nodes,
    )
    out.flags.writeable = False
    return out


class NodeUnschedulable(FilterPlugin):
    reads = READS_NODE  # the node alone decides
    name = NAME
    _unschedulable: Final = NodeSetCache(_unschedulable_vector)

    def events_to_register(self) -> list[EventRegistration]:
        """An uncordon (reported as UpdateNodeTaint) or a schedulable new node; the pod gaining
        a toleration of the unschedulable taint."""
        return [
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.hint_after_node_change,
            ),
            EventRegistration(
                EventKind(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.hint_after_pod_toleration_change,
            ),
        ]

    @staticmethod
    def hint_after_node_change(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """Queue for a new schedulable node, or a node going from unschedulable to schedulable."""
        old: Node | None = event.old
        new: Node = event.new
        if new.spec.unschedulable:
            return QUEUE_SKIP
        return QUEUE if old is None or old.spec.unschedulable else QUEUE_SKIP

    @staticmethod
    def hint_after_pod_toleration_change(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """Queue when the updated pod is this one and now tolerates the unschedulable taint."""
        new: Pod = event.new
        if new.key == pod.key and tolerates_all(new.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return QUEUE
        return QUEUE_SKIP

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable or tolerates_all(pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return SUCCESS
        return _REJECTED

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        if tolerates_all(pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return FilterResult.passing(len(nodes))
        return FilterResult.from_mask(self._unschedulable.get(state.cluster)[nodes], _REJECTED)
