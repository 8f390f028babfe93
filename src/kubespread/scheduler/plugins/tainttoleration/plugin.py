"""TaintToleration: Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.api.taints import PREFER_NO_SCHEDULE, Toleration, find_untolerated, tolerates_all
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import (
    SUCCESS,
    CycleState,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
    default_normalize_score,
)

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration"]

NAME: Final = "TaintToleration"
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
_PRE_SCORE_KEY: Final = "PreScore" + NAME


def _prefer_no_schedule_tolerations(pod: Pod) -> list[Toleration]:
    """Only tolerations that can tolerate a PreferNoSchedule taint matter to the score."""
    return [t for t in pod.spec.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin):
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if find_untolerated(node.node.spec.taints, pod.spec.tolerations) is None:
            return SUCCESS
        return Status.unresolvable(ERR_REASON_UNTOLERATED)

    def pre_score(self, state: CycleState, pod: Pod, nodes: np.ndarray) -> Status:
        state.write(_PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod))
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        """How many PreferNoSchedule taints the pod does not tolerate (fewer is better)."""
        tolerations = state.get(_PRE_SCORE_KEY)
        if tolerations is None:
            tolerations = _prefer_no_schedule_tolerations(pod)
        return sum(
            1 for t in node.node.spec.taints
            if t.effect == PREFER_NO_SCHEDULE and not tolerates_all(tolerations, t)
        )

    def normalize_scores(
        self, state: CycleState, pod: Pod, nodes: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        return default_normalize_score(scores, reverse=True)
