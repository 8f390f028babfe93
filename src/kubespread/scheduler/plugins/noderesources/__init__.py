"""NodeResourcesFit and NodeResourcesBalancedAllocation: requests against what nodes have."""

from kubespread.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
)
from kubespread.scheduler.plugins.noderesources.fit import (
    REASON_CPU,
    REASON_EPHEMERAL_STORAGE,
    REASON_MEMORY,
    REASON_TOO_MANY_PODS,
    NodeResourcesFit,
    insufficient_resources,
)

__all__ = [
    "REASON_CPU",
    "REASON_EPHEMERAL_STORAGE",
    "REASON_MEMORY",
    "REASON_TOO_MANY_PODS",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "balanced_resource_scorer",
    "insufficient_resources",
]
