"""NodeResourcesBalancedAllocation: favour nodes whose resources would be used evenly
(balanced_allocation.go)."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.api.features import BALANCED_ALLOCATION_SCORES_IMPROVEMENT, FeatureGates
from kubespread.api.schedconfig import NodeResourcesBalancedAllocationArgs
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.defaults import default_node_resources_balanced_allocation_args
from kubespread.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    NodeIds,
    NodeScores,
    PreScorePlugin,
    ScorePlugin,
    StateKey,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.node_memo import NodeMemo
from kubespread.scheduler.plugins.noderesources.resource_allocation import ResourceAllocationScorer

__all__ = ["NodeResourcesBalancedAllocation", "balance_improvement_scorer", "balanced_resource_scorer"]

NAME: Final = "NodeResourcesBalancedAllocation"
_PRE_SCORE_KEY: Final[StateKey[list[int]]] = StateKey("PreScore" + NAME, list)


def balanced_resource_scorer(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    """(1 - std of the requested/allocatable fractions) · 100, truncated.

    Fractions are float64 and capped at 1; resources with 0 allocatable are left out. Two
    fractions give std = |f1 - f2| / 2, more the population std, fewer 0. Sums run in resource
    order, adding 0.0 for left-out entries (exact), so the floats match kube's bit for bit.
    """
    used = allocatable != 0
    if requested.shape[0] == 2 and used.all():
        # the default (cpu, memory) on nodes that have both: std = |f1 - f2| / 2, the same
        # float operations as the general path below takes for two fractions
        both = np.minimum(requested.astype(np.float64) / allocatable, 1.0)
        std2 = np.abs((both[0] - both[1]) / 2)
        scores: np.ndarray = np.trunc((1 - std2) * float(MAX_NODE_SCORE)).astype(np.int64)
        return scores
    fractions = np.where(used, requested.astype(np.float64) / np.where(used, allocatable, 1), 0.0)
    fractions = np.minimum(fractions, 1.0)
    n = used.sum(axis=0)
    total = np.zeros(requested.shape[1], dtype=np.float64)
    first = np.zeros_like(total)
    second = np.zeros_like(total)
    seen = np.zeros(requested.shape[1], dtype=np.int64)
    for f, u in zip(fractions, used, strict=True):
        total = total + np.where(u, f, 0.0)
        first = np.where(u & (seen == 0), f, first)
        second = np.where(u & (seen == 1), f, second)
        seen = seen + u
    std = np.zeros_like(total)
    two = n == 2
    std = np.where(two, np.abs((first - second) / 2), std)
    many = n > 2
    if many.any():
        mean = total / np.maximum(n, 1)
        acc = np.zeros_like(total)
        for f, u in zip(fractions, used, strict=True):
            d = f - mean
            acc = acc + np.where(u, d * d, 0.0)
        std = np.where(many, np.sqrt(acc / np.maximum(n, 1)), std)
    return np.trunc((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def balance_improvement_scorer(requested: np.ndarray, allocatable: np.ndarray, pod: np.ndarray) -> np.ndarray:
    """v1.36's score (kubernetes#135573): how much the pod improves the node's balance,
    ``50 + (50 + with pod - without pod) / 2`` (Go's int64 division; the operand is in
    [0, 100], both balances being in [50, 100]). ``pod``: the pod's request per resource,
    a column; the node's balance without the pod is over ``requested - pod``."""
    with_pod = balanced_resource_scorer(requested, allocatable)
    without_pod = balanced_resource_scorer(np.where(allocatable != 0, requested - pod, 0), allocatable)
    half = MAX_NODE_SCORE // 2
    scores: np.ndarray = (half + (half + with_pod - without_pod) // 2).astype(np.int64)
    return scores


class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin):
    """Scores with the real requests (useRequested), not the 100m/200Mi defaults, and skips
    pods that request none of its resources (kubernetes#129138: best-effort pods would
    otherwise all pile onto one node)."""

    name = NAME

    def __init__(
        self, args: NodeResourcesBalancedAllocationArgs | None = None, *, features: FeatureGates | None = None
    ) -> None:
        args = default_node_resources_balanced_allocation_args(args)
        super().__init__(args, features=features)
        self.scorer = ResourceAllocationScorer(args.resources, balanced_resource_scorer, use_requested=True)
        #: v1.36+: score the improvement the pod brings, not the balance with it alone
        self.improvement = self.features.enabled(BALANCED_ALLOCATION_SCORES_IMPROVEMENT)
        self._scores: NodeMemo[tuple[int, ...]] = NodeMemo(self._scores_of)

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        requests = self.scorer.pod_request_list(pod)
        if not any(requests):
            return SKIP
        state.write(_PRE_SCORE_KEY, requests)
        return SUCCESS

    def _requests(self, state: CycleState, pod: Pod) -> list[int]:
        try:
            return state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:  # Score without PreScore (direct calls)
            return self.scorer.pod_request_list(pod)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        requests = self._requests(state, pod)
        if not any(requests):
            return np.zeros(len(nodes), dtype=np.int64)
        return self._scores.values(state.cluster, tuple(requests), np.asarray(nodes, dtype=np.int64))

    def _scores_of(self, cluster: ClusterState, ids: np.ndarray, key: tuple[int, ...]) -> np.ndarray:
        """The raw scores at ``ids`` for a pod requesting ``key`` (each node's from its own
        allocatable and requests: kept between cycles by ``_scores``)."""
        requests = list(key)
        if not self.improvement:
            return self.scorer.score_nodes(cluster, ids, requests)
        if len(ids) == 0:
            return np.zeros(0, dtype=np.int64)
        alloc, req = self.scorer.allocatable_requested(cluster, ids, requests)
        return balance_improvement_scorer(req, alloc, np.asarray(requests, dtype=np.int64)[:, None])

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return int(self.score_nodes(state, pod, np.asarray([node.index], dtype=np.intp))[0])
