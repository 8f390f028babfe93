"""Where the proposal and OpenKruise's implementation part, and which one a run follows.

The proposal (shared/spec/workloadspread-proposal.md) is the default; ``flavour="openkruise"``
switches every point below to what OpenKruise's code does:

========================  ==================================  ===================================
point                     proposal (default)                  OpenKruise
========================  ==================================  ===================================
unschedulable recovery    10 minutes                          300 s (MaxScheduledFailedDuration)
deletion cost             100 within maxReplicas, 0 for an    100·(n-i) within, -100·(i+1) for the
                          unbounded subset, -100 surplus and  surplus of subset i of n; unbounded
                          pods of no subset                   subsets positive; no subset -100·(n+1)
Adaptive resource check   the webhook skips a subset whose    no check (the webhook never looks at
                          nodes cannot take the pod           nodes)
Succeeded/Failed pods     the webhook adds 1 to               nothing until the controller
                          missingReplicas                     recounts
========================  ==================================  ===================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["FLAVOURS", "WorkloadSpreadOptions"]

FLAVOURS: Final = ("proposal", "openkruise")


@dataclass(frozen=True, kw_only=True)
class WorkloadSpreadOptions:
    flavour: Literal["proposal", "openkruise"] = "proposal"
    #: how long a subset marked unschedulable stays so; None: the flavour's (600 s or 300 s)
    recovery_seconds: float | None = None
    #: creatingPods / deletingPods entries no pod confirms are dropped after these (Kruise's)
    create_timeout_seconds: float = 30.0
    delete_timeout_seconds: float = 15.0

    @property
    def recovery(self) -> float:
        if self.recovery_seconds is not None:
            return self.recovery_seconds
        return 300.0 if self.flavour == "openkruise" else 600.0

    @property
    def graded_costs(self) -> bool:
        return self.flavour == "openkruise"

    @property
    def resource_check(self) -> bool:
        return self.flavour == "proposal"

    @property
    def count_finished(self) -> bool:
        return self.flavour == "proposal"
