"""The one error ClusterState raises."""

from __future__ import annotations

__all__ = ["ClusterError"]


class ClusterError(Exception):
    """An operation that does not apply to the current state: a duplicate add, an unknown key,
    a bind to an unknown node or of a pod already bound. Raised before anything changes, so
    the state is as it was."""
