"""PrioritySort: the activeQ order."""

from kubespread.scheduler.plugins.queuesort.priority_sort import PrioritySort

__all__ = ["PrioritySort"]
