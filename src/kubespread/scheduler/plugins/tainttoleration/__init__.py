"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from kubespread.scheduler.plugins.tainttoleration.plugin import (
    ERR_REASON_UNTOLERATED,
    TaintToleration,
    untolerated_nodes,
)

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration", "untolerated_nodes"]
