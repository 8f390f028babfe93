"""The errors of writes to the cluster: ClusterState's own, and the API server's 409."""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_PODS", "ClusterError", "Conflict", "PodLimitExceeded", "SimulationError"]

#: pods a simulation may hold at once unless told otherwise (``--max-pods``): above the 150,000
#: of Kubernetes' scalability thresholds, far below what exhausts memory
DEFAULT_MAX_PODS = 200_000


class ClusterError(Exception):
    """An operation that does not apply to the current state: a duplicate add, an unknown key,
    a bind to an unknown node or of a pod already bound. Raised before anything changes, so
    the state is as it was."""


class Conflict(Exception):
    """409 Conflict: an update carried a resourceVersion that is no longer the stored one (someone
    wrote in between). The writer reads the object again and retries (retry.RetryOnConflict)."""


class SimulationError(Exception):
    """The cluster's host cannot go on: a livelock, a request naming what does not exist (a
    scenario's node verb on an unknown node), a controller used before it was started."""


class PodLimitExceeded(SimulationError):
    """A run would hold more pods than its limit (``--max-pods``): a runaway workload
    (``replicas: 1000000000``) stops with this error instead of running for hours."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"more than {limit:,} pods would exist at once: the run stops at --max-pods "
            f"({limit:,}); raise it to simulate a bigger cluster"
        )
        self.limit = limit
