"""LeastAllocated: favour nodes with the most room left (least_allocated.go)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubespread.api.schedconfig import ResourceSpec
from kubespread.scheduler.framework import MAX_NODE_SCORE
from kubespread.scheduler.plugins.noderesources.resource_allocation import Strategy, weighted_mean_floor

__all__ = ["least_allocated_scorer"]


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Strategy:
    """Per resource (allocatable - requested)·100 // allocatable, 0 once over-requested; the
    weighted mean rounded down. Resources with 0 allocatable are left out, weight and all."""
    weights = np.asarray([r.weight for r in resources], dtype=np.int64)
    column = weights[:, None]
    weight_sum = int(weights.sum())

    def score(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        used = allocatable != 0
        if weight_sum > 0 and used.all():
            # every node has every resource (the usual case): the same integer arithmetic,
            # with nothing left out
            per = np.where(
                requested > allocatable, 0, (allocatable - requested) * MAX_NODE_SCORE // allocatable
            )
            out: np.ndarray = (per * column).sum(axis=0) // weight_sum
            return out
        safe = np.where(used, allocatable, 1)
        per = np.where(requested > allocatable, 0, (allocatable - requested) * MAX_NODE_SCORE // safe)
        return weighted_mean_floor(np.where(used, per, 0), used, weights)

    return score
