"""PodTopologySpread: the plugin, its args, and which constraints apply to a pod."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from kubespread.api.core import Node, Pod, TopologySpreadConstraint
from kubespread.api.features import (
    FeatureGates,
)
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
    own_constraints,
)
from kubespread.scheduler.queueing import (
    POD_ADD_LABEL_DELETE,
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    QueueingHint,
)

__all__ = ["NAME", "PodTopologySpread"]

NAME: Final = "PodTopologySpread"
_NODE_LABEL_OR_TAINT: Final = ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    """Spreads pods over topology domains: DoNotSchedule constraints filter, ScheduleAnyway
    constraints score. A pod without constraints of its own gets the default ones (System or
    List defaulting), selecting the pods of its Services and controller."""

    name = NAME

    def __init__(
        self, args: PodTopologySpreadArgs | None = None, *, features: FeatureGates | None = None
    ) -> None:
        args = default_pod_topology_spread_args(args)
        super().__init__(args, features=features)
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: list[TopologySpreadConstraint] = (
            system_default_constraints() if self.system_defaulted else list(args.default_constraints)
        )
        self._masks = InclusionMasks()

    def _own(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        return own_constraints(pod, action, self.features)

    def constraints(self, state: CycleState, pod: Pod, action: str) -> list[SpreadConstraint]:
        """getConstraints: the pod's own constraints of this action, else the default ones."""
        if pod.spec.topology_spread_constraints:
            return self._own(pod, action)
        if not self.default_constraints:
            return []
        return build_default_constraints(self.default_constraints, pod, state.cluster, action)

    # ---------------------------------------------------------------- queueing hints
    def events_to_register(self) -> list[EventRegistration]:
        """Matching pods that appear, go or change labels move the counts; nodes that appear,
        go, or change labels or taints (nodeTaintsPolicy) move the domains."""
        return [
            EventRegistration(
                EventKind(EventResource.POD, POD_ADD_LABEL_DELETE),
                self.hint_after_pod_change,
            ),
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.DELETE | _NODE_LABEL_OR_TAINT),
                self.hint_after_node_change,
            ),
        ]

    def _hint_constraints(self, pod: Pod, event: QueueingEvent) -> list[SpreadConstraint] | None:
        """getConstraints for a hint: the DoNotSchedule ones; None when they depend on the
        cluster (default constraints) and the event carries none."""
        if not pod.spec.topology_spread_constraints and self.default_constraints and event.cluster is None:
            return None
        if event.cluster is None:
            return self._own(pod, DO_NOT_SCHEDULE)
        return self.constraints(CycleState(event.cluster), pod, DO_NOT_SCHEDULE)

    def hint_after_pod_change(self, pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterPodChange: only this pod, or bound pods of its namespace, count;
        Queue when a constraint's selector matches the added or deleted pod, or matches the
        updated pod before and not after (or the reverse)."""
        old: Pod | None = event.old
        new: Pod | None = event.new
        for p in (old, new):
            if p is not None and p.key != pod.key and not (p.spec.node_name and p.namespace == pod.namespace):
                return QUEUE_SKIP
        constraints = self._hint_constraints(pod, event)
        if constraints is None:
            return QUEUE
        if old is not None and new is not None:
            if old.metadata.labels == new.metadata.labels:
                return QUEUE_SKIP
            changed = any(
                c.selector.matches(old.metadata.labels) != c.selector.matches(new.metadata.labels)
                for c in constraints
            )
            return QUEUE if changed else QUEUE_SKIP
        labels = (new if new is not None else old).metadata.labels  # type: ignore[union-attr]
        return QUEUE if any(c.selector.matches(labels) for c in constraints) else QUEUE_SKIP

    def hint_after_node_change(self, pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterNodeChange: a node with every topology key that appears or goes;
        an update that gives or takes a key, changes a key's value, or changes the taints of
        a node with every key."""
        constraints = self._hint_constraints(pod, event)
        if constraints is None:
            return QUEUE
        old: Node | None = event.old
        new: Node | None = event.new

        def has_keys(node: Node | None) -> bool:
            return node is not None and all(c.topology_key in node.metadata.labels for c in constraints)

        if old is not None and new is not None:
            if has_keys(old) != has_keys(new):
                return QUEUE
            before, after = old.metadata.labels, new.metadata.labels
            if has_keys(new) and (
                any(before[c.topology_key] != after[c.topology_key] for c in constraints)
                or old.spec.taints != new.spec.taints
            ):
                return QUEUE
            return QUEUE_SKIP
        return QUEUE if has_keys(new if new is not None else old) else QUEUE_SKIP

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

    def judges_without(self, state: CycleState, pod: Pod, gone: Sequence[Pod]) -> bool:
        """When no pod of ``gone`` is counted (the pod's namespace, a constraint's selector),
        PreFilter's counts are what they would be without them."""
        s = self._pre_filter_state(state, pod)
        for c in s.constraints:
            sel = c.constraint.selector
            if sel.empty or sel.nothing:
                continue
            for p in gone:
                if p.namespace == pod.namespace and sel.matches(p.metadata.labels):
                    return False
        return True

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
