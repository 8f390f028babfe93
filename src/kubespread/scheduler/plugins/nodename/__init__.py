"""NodeName (Filter): a pod naming spec.nodeName fits only that node."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import SUCCESS, CycleState, FilterPlugin, FilterResult, NodeIds, Status

__all__ = ["ERR_REASON", "NodeName"]

NAME: Final = "NodeName"
ERR_REASON: Final = "node(s) didn't match the requested node name"
_REJECTED: Final = Status.unresolvable(ERR_REASON)


class NodeName(FilterPlugin):
    name = NAME

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
