"""RequestedToCapacityRatio: a user-drawn score per utilization (requested_to_capacity_ratio.go,
helper/shape_score.go)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from kubespread.api.schedconfig import ResourceSpec, UtilizationShapePoint
from kubespread.scheduler.framework import MAX_NODE_SCORE
from kubespread.scheduler.plugins.noderesources.resource_allocation import Strategy

__all__ = [
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "broken_linear",
    "requested_to_capacity_ratio_scorer",
]

#: shape scores are given on 0..10 and scaled to 0..MAX_NODE_SCORE
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
MAX_UTILIZATION: Final = 100


def _div_trunc(a: int, b: int) -> int:
    """Go's int64 division: rounds toward zero (a falling segment gives a negative numerator)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over (utilization, score) points sorted by utilization:
    the first score left of the first point, the last right of the last, integer
    interpolation between."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = points[i - 1]
                return s0 + _div_trunc((s - s0) * (p - u0), u - u0)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Strategy:
    """Per resource: utilization = requested·100 // allocatable (100 once over), mapped through
    the shape (scores x10). Only resources scoring above 0 count, weight and all; the
    weighted mean is rounded half away from zero (math.Round)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = broken_linear([(p.utilization, p.score * scale) for p in shape])
    table = np.asarray([f(u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64)
    weights = np.asarray([r.weight for r in resources], dtype=np.int64)

    def score(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
        used = allocatable != 0
        safe = np.where(used, allocatable, 1)
        util = np.where(
            requested >= allocatable, MAX_UTILIZATION, np.maximum(requested, 0) * MAX_UTILIZATION // safe
        )
        per = table[util]
        counted = used & (per > 0)
        w = np.where(counted, weights[:, None], 0)
        total = (per * w).sum(axis=0)
        weight_sum = w.sum(axis=0)
        # round(total / weight_sum) half away from zero, exactly: both are non-negative integers
        den = np.maximum(weight_sum, 1)
        return np.where(weight_sum > 0, (2 * total + den) // (2 * den), 0).astype(np.int64)

    return score
