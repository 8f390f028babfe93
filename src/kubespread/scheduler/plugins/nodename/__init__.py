"""NodeName (Filter): a pod naming spec.nodeName fits only that node."""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import SUCCESS, CycleState, FilterPlugin, Status

__all__ = ["ERR_REASON", "NodeName"]

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = pod.spec.node_name
        if not wanted or wanted == node.name:
            return SUCCESS
        return Status.unresolvable(ERR_REASON)
