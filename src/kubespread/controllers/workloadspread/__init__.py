"""OpenKruise's WorkloadSpread in the simulator (shared/spec/workloadspread-proposal.md): the
webhook that places each new pod of a workload in a subset and injects the subset's rules, and
the controller that keeps the subsets' status, reschedules pods a subset cannot hold and ranks
pods for scale-down by deletion cost. :mod:`.options` lists where the proposal and OpenKruise
differ and how to choose."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubespread.api.kruise import WorkloadSpread
from kubespread.api.meta import KubeObject
from kubespread.api.timestamps import timestamp
from kubespread.cluster.state import ClusterState
from kubespread.controllers.workloadspread.controller import (
    NO_SUBSET,
    WorkloadSpreadController,
    deletion_costs,
)
from kubespread.controllers.workloadspread.options import FLAVOURS, WorkloadSpreadOptions
from kubespread.controllers.workloadspread.subsets import Matched, inject, matched_subset
from kubespread.controllers.workloadspread.webhook import (
    WorkloadSpreadClient,
    WorkloadSpreadWebhook,
    subset_statuses,
)

if TYPE_CHECKING:
    from kubespread.controllers.host import ControllerHost

__all__ = [
    "FLAVOURS",
    "NO_SUBSET",
    "Matched",
    "SimulationClient",
    "WorkloadSpreadClient",
    "WorkloadSpreadController",
    "WorkloadSpreadOptions",
    "WorkloadSpreadWebhook",
    "deletion_costs",
    "inject",
    "matched_subset",
    "subset_statuses",
]


class SimulationClient:
    """The webhook's view of a simulation: its cluster and clock; status updates are the API
    server's, refused with Conflict when the resourceVersion read is stale."""

    def __init__(self, sim: ControllerHost) -> None:
        self.sim = sim

    @property
    def cluster(self) -> ClusterState:
        return self.sim.cluster

    def now(self) -> float:
        return self.sim.now

    def stamp(self, seconds: float) -> str:
        return timestamp(seconds)

    def update_status(self, ws: WorkloadSpread) -> None:
        self.sim.update(ws, precondition=True)

    def get(self, kind: str, key: str) -> KubeObject | None:
        return self.sim.cluster.get(kind, key)
