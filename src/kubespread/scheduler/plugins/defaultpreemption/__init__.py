"""DefaultPreemption: evict lower-priority pods so that an unschedulable pod fits. The plugin
evicts nothing (the simulation applies its result); it says why preemption cannot help, when
it can tell."""

from kubespread.scheduler.plugins.defaultpreemption.post_filter import (
    MSG_NEVER,
    MSG_NO_VICTIMS,
    MSG_NOT_HELPFUL,
    MSG_TERMINATING_ON_NOMINATED,
    DefaultPreemption,
    pod_priority,
)

__all__ = [
    "MSG_NEVER",
    "MSG_NOT_HELPFUL",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING_ON_NOMINATED",
    "DefaultPreemption",
    "pod_priority",
]
