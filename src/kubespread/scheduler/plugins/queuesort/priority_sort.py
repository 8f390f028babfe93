"""PrioritySort (QueueSort): higher spec.priority first, then whoever queued first."""

from __future__ import annotations

from kubespread.scheduler.framework import QueuedPod, QueueSortPlugin

__all__ = ["PrioritySort", "pod_priority"]


def pod_priority(q: QueuedPod) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset (admission fills it normally)."""
    p = q.pod.spec.priority
    return p if p is not None else 0


class PrioritySort(QueueSortPlugin):
    name = "PrioritySort"

    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        pa, pb = pod_priority(a), pod_priority(b)
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)
