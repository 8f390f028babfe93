"""The errors of writes to the cluster: ClusterState's own, and the API server's 409."""

from __future__ import annotations

__all__ = ["ClusterError", "Conflict", "SimulationError"]


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
