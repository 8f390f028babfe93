"""MostAllocated: favour the fullest nodes, for bin packing (most_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubespread.api.schedconfig import ResourceSpec
from kubespread.scheduler.framework import MAX_NODE_SCORE
from kubespread.scheduler.plugins.noderesources.resource_allocation import Strategy, weighted_mean_floor

__all__ = ["most_allocated_scorer"]


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Strategy:
    """Per resource requested·100 // allocatable, requested capped at allocatable (default
    requests can push it over); the weighted mean rounded down."""
    weights = np.asarray([r.weight for r in resources], dtype=np.int64)

    def score(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        used = allocatable != 0
        safe = np.where(used, allocatable, 1)
        per = np.minimum(requested, allocatable) * MAX_NODE_SCORE // safe
        return weighted_mean_floor(np.where(used, per, 0), used, weights)

    return score
