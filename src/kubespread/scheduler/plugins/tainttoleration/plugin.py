"""TaintToleration: Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from kubespread.api.core import Node, Pod
from kubespread.api.features import TAINT_MESSAGE_WITHOUT_VALUES, FeatureGates
from kubespread.api.taints import PREFER_NO_SCHEDULE, Taint, Toleration, find_untolerated, tolerates_all
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.framework import (
    READS_NODE,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    NodeScores,
    NodeSetCache,
    PreScorePlugin,
    ScorePlugin,
    StateKey,
    StateNotFoundError,
    Status,
    default_normalize_score,
)
from kubespread.scheduler.queueing import (
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    QueueingHint,
)

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration", "untolerated_nodes"]

NAME: Final = "TaintToleration"
ERR_REASON_UNTOLERATED: Final = "node(s) had untolerated taint(s)"
_PRE_SCORE_KEY: Final[StateKey[list[Toleration]]] = StateKey("PreScore" + NAME, list)
_REJECTED: Final = Status.unresolvable(ERR_REASON_UNTOLERATED)


def _prefer_no_schedule_tolerations(pod: Pod) -> list[Toleration]:
    """Only tolerations that can tolerate a PreferNoSchedule taint matter to the score."""
    return [t for t in pod.spec.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]


def _untolerated_preferred(taints: list[Taint], tolerations: list[Toleration]) -> int:
    """How many PreferNoSchedule taints the tolerations do not tolerate."""
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerates_all(tolerations, t))


@dataclass(frozen=True, slots=True)
class _TaintSets:
    """Nodes grouped by their taint list: ``ids[node id]`` indexes ``sets``, the distinct
    lists (clusters have few), so a pod's verdict is worked out once per list."""

    ids: npt.NDArray[np.intp]
    sets: tuple[list[Taint], ...]
    #: per (use, tolerations' content): an answer per node id, kept with this node set
    per_node: dict[tuple[object, ...], np.ndarray] = field(default_factory=dict)


def _taint_sets(cluster: ClusterState) -> _TaintSets:
    # Toleration matching reads only key, value and effect, so lists equal in those (and in
    # order: the score counts duplicates) share a set.
    index: dict[tuple[tuple[str, str, str], ...], int] = {}
    sets: list[list[Taint]] = []
    ids = np.empty(cluster.num_nodes, dtype=np.intp)
    for i, info in enumerate(cluster.node_infos()):
        taints = info.node.spec.taints
        key = tuple((t.key, t.value, t.effect) for t in taints)
        s = index.get(key)
        if s is None:
            s = index[key] = len(sets)
            sets.append(list(taints))
        ids[i] = s
    ids.flags.writeable = False
    return _TaintSets(ids, tuple(sets))


_TAINT_SETS: Final = NodeSetCache(_taint_sets)


def untolerated_nodes(cluster: ClusterState, tolerations: list[Toleration]) -> npt.NDArray[np.bool_]:
    """Per node id, whether the node has a NoSchedule/NoExecute taint the tolerations do not
    tolerate: the Filter's verdict, shared with PodTopologySpread's nodeTaintsPolicy
    (read-only: kept per node set and tolerations, which the pods of a workload share)."""
    ts = _TAINT_SETS.get(cluster)
    per_node = _per_node(ts, ("filter", *map(_toleration_key, tolerations)))
    if per_node is None:
        per_set = np.fromiter(
            (find_untolerated(taints, tolerations) is not None for taints in ts.sets),
            dtype=bool,
            count=len(ts.sets),
        )
        per_node = _keep(ts, ("filter", *map(_toleration_key, tolerations)), per_set[ts.ids])
    return per_node


def _toleration_key(t: Toleration) -> tuple[str, str, str, str]:
    """What matching a taint reads of a toleration."""
    return (t.key, t.operator, t.value, t.effect)


def _per_node(ts: _TaintSets, key: tuple[object, ...]) -> np.ndarray | None:
    return ts.per_node.get(key)


def _keep(ts: _TaintSets, key: tuple[object, ...], per_node: np.ndarray) -> np.ndarray:
    """Keep a per-node answer with the node set's taint sets (they go when the nodes change)."""
    per_node.flags.writeable = False
    if len(ts.per_node) >= 256:
        ts.per_node.clear()
    ts.per_node[key] = per_node
    return per_node


def _named_rejection(taint: Taint) -> Status:
    """The rejection up to v1.34.1, naming the first untolerated taint (its value may be "")."""
    return Status.unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin):
    reads = READS_NODE  # the node alone decides
    name = NAME

    def __init__(self, args: Any = None, *, features: FeatureGates | None = None) -> None:
        super().__init__(args, features=features)
        #: kubernetes#134740 (v1.35): the rejection no longer names the taint
        self.generic_message = self.features.enabled(TAINT_MESSAGE_WITHOUT_VALUES)

    def events_to_register(self) -> list[EventRegistration]:
        """A node that appears or changes taints; the pod's own tolerations changing."""
        return [
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.hint_after_node_change,
            ),
            EventRegistration(
                EventKind(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.hint_after_pod_toleration_change,
            ),
        ]

    @staticmethod
    def hint_after_node_change(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """Queue when the node had a NoSchedule/NoExecute taint the pod does not tolerate (a
        new node counts as having had one) and has none now."""
        old: Node | None = event.old
        new: Node = event.new
        tolerations = pod.spec.tolerations
        was_untolerated = old is None or find_untolerated(old.spec.taints, tolerations) is not None
        if was_untolerated and find_untolerated(new.spec.taints, tolerations) is None:
            return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def hint_after_pod_toleration_change(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """Queue when the updated pod is this one."""
        new: Pod = event.new
        return QUEUE if new.key == pod.key else QUEUE_SKIP

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        taint = find_untolerated(node.node.spec.taints, pod.spec.tolerations)
        if taint is None:
            return SUCCESS
        return _REJECTED if self.generic_message else _named_rejection(taint)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        if self.generic_message:
            rejected = untolerated_nodes(state.cluster, pod.spec.tolerations)[nodes]
            if not rejected.any():
                return FilterResult.passing(len(nodes))
            return FilterResult.from_mask(rejected, _REJECTED)
        # per distinct taint list: the first untolerated taint, and so the status
        ts = _TAINT_SETS.get(state.cluster)
        statuses: dict[Status, int] = {}
        per_set = np.full(len(ts.sets), -1, dtype=np.int32)
        for i, taints in enumerate(ts.sets):
            taint = find_untolerated(taints, pod.spec.tolerations)
            if taint is not None:
                st = _named_rejection(taint)
                per_set[i] = statuses.setdefault(st, len(statuses))
        if not statuses:
            return FilterResult.passing(len(nodes))
        return FilterResult(per_set[ts.ids[nodes]], tuple(statuses))

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        state.write(_PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod))
        return SUCCESS

    def _score_tolerations(self, state: CycleState, pod: Pod) -> list[Toleration]:
        try:
            return state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:  # Score without PreScore (direct calls)
            return _prefer_no_schedule_tolerations(pod)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        """How many PreferNoSchedule taints the pod does not tolerate (fewer is better)."""
        return _untolerated_preferred(node.node.spec.taints, self._score_tolerations(state, pod))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        ts = _TAINT_SETS.get(state.cluster)
        tolerations = self._score_tolerations(state, pod)
        key = ("score", *map(_toleration_key, tolerations))
        per_node = _per_node(ts, key)
        if per_node is None:
            per_set = np.fromiter(
                (_untolerated_preferred(taints, tolerations) for taints in ts.sets),
                dtype=np.int64,
                count=len(ts.sets),
            )
            per_node = _keep(ts, key, per_set[ts.ids])
        return per_node[nodes]

    def normalize_scores(self, state: CycleState, pod: Pod, nodes: NodeIds, scores: NodeScores) -> NodeScores:
        return default_normalize_score(scores, reverse=True)
