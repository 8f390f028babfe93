"""SchedulingGates (PreEnqueue): a gated pod never enters the active queue."""

from __future__ import annotations

from typing import Final

from kubespread.api.core import Pod
from kubespread.scheduler.framework import SUCCESS, PreEnqueuePlugin, Status

__all__ = ["SchedulingGates"]

NAME: Final = "SchedulingGates"


class SchedulingGates(PreEnqueuePlugin):
    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        gates = [g.name for g in pod.spec.scheduling_gates]
        if not gates:
            return SUCCESS
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")
