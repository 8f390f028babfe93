"""NodeUnschedulable (Filter): spec.unschedulable nodes take only pods tolerating the
node.kubernetes.io/unschedulable:NoSchedule taint."""

from __future__ import annotations

from typing import Final

from kubespread.api import keys
from kubespread.api.core import Pod
from kubespread.api.taints import NO_SCHEDULE, Taint, tolerates_all
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import SUCCESS, CycleState, FilterPlugin, Status

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

NAME: Final = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint(key=keys.TAINT_UNSCHEDULABLE, effect=NO_SCHEDULE)


class NodeUnschedulable(FilterPlugin):
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable or tolerates_all(pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
