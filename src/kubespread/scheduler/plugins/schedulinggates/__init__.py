"""SchedulingGates (PreEnqueue): a gated pod never enters the active queue."""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.scheduler.framework import SUCCESS, PreEnqueuePlugin, Status
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

__all__ = ["SchedulingGates"]

NAME: Final = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin):
    name = NAME

    def events_to_register(self) -> list[EventRegistration]:
        """Only the pod's own gates all going lets it in (the queue re-runs PreEnqueue on
        every update of a gated pod)."""
        return [
            EventRegistration(
                EventKind(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.hint_after_gates_eliminated,
            )
        ]

    @staticmethod
    def hint_after_gates_eliminated(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """Queue when the updated pod is this one."""
        new: Pod = event.new
        return QUEUE if new.key == pod.key else QUEUE_SKIP

    def pre_enqueue(self, pod: Pod) -> Status:
        gates = [g.name for g in pod.spec.scheduling_gates]
        if not gates:
            return SUCCESS
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")
