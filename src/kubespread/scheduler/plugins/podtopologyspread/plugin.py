"""PodTopologySpread: the plugin, its args, and which constraints apply to a pod."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod, TopologySpreadConstraint
from kubespread.api.schedconfig import PodTopologySpreadArgs
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.defaults import (
    SYSTEM_DEFAULTING,
    default_pod_topology_spread_args,
    system_default_constraints,
)
from kubespread.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    NodeScores,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.plugins.podtopologyspread import filtering, scoring
from kubespread.scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    InclusionMasks,
    SpreadConstraint,
    build_default_constraints,
    parse_constraints,
)

__all__ = ["NAME", "PodTopologySpread"]

NAME: Final = "PodTopologySpread"


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    """Spreads pods over topology domains: DoNotSchedule constraints filter, ScheduleAnyway
    constraints score. A pod without constraints of its own gets the default ones (System or
    List defaulting), selecting the pods of its Services and controller."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs | None = None) -> None:
        args = default_pod_topology_spread_args(args)
        super().__init__(args)
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: list[TopologySpreadConstraint] = (
            system_default_constraints() if self.system_defaulted else list(args.default_constraints)
        )
        self._masks = InclusionMasks()

    def constraints(self, state: CycleState, pod: Pod, action: str) -> list[SpreadConstraint]:
        """getConstraints: the pod's own constraints of this action, else the default ones."""
        if pod.spec.topology_spread_constraints:
            return parse_constraints(pod.spec.topology_spread_constraints, action)
        if not self.default_constraints:
            return []
        return build_default_constraints(self.default_constraints, pod, state.cluster, action)

    # ---------------------------------------------------------------- PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        constraints = self.constraints(state, pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIP
        s = filtering.compute_pre_filter_state(state.cluster, pod, constraints, self._masks)
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def _pre_filter_state(self, state: CycleState, pod: Pod) -> filtering.PreFilterState:
        try:
            return state.read(filtering.PRE_FILTER_STATE_KEY)
        except StateNotFoundError:  # Filter called without PreFilter (tests, preemption): compute it now
            pass
        constraints = self.constraints(state, pod, DO_NOT_SCHEDULE)
        s = filtering.compute_pre_filter_state(state.cluster, pod, constraints, self._masks)
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return s

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        return filtering.filter_nodes(self._pre_filter_state(state, pod), np.asarray(nodes, dtype=np.int64))

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        result = self.filter_nodes(state, pod, np.array([node.index]))
        i = int(result.which[0])
        return SUCCESS if i < 0 else result.statuses[i]

    # ---------------------------------------------------------------- PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        if state.cluster.num_nodes == 0:
            return SKIP
        constraints = self.constraints(state, pod, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIP
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        s = scoring.compute_pre_score_state(
            state.cluster, pod, constraints, np.asarray(nodes, dtype=np.int64), require_all, self._masks
        )
        state.write(scoring.PRE_SCORE_STATE_KEY, s)
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        return scoring.score_nodes(s, np.asarray(nodes, dtype=np.int64))

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return int(self.score_nodes(state, pod, np.array([node.index]))[0])

    def normalize_scores(self, state: CycleState, pod: Pod, nodes: NodeIds, scores: NodeScores) -> NodeScores:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        return scoring.normalize_scores(s, np.asarray(nodes, dtype=np.int64), scores)
