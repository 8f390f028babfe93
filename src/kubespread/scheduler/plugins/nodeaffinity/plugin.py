"""NodeAffinity: PreFilter (node-name PreFilterResult), Filter, PreScore, Score, NormalizeScore."""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Node, Pod, PreferredSchedulingTerm
from kubespread.api.features import FeatureGates
from kubespread.api.schedconfig import NodeAffinityArgs
from kubespread.api.selectors import NodeSelector
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.defaults import default_node_affinity_args
from kubespread.scheduler.framework import (
    READS_NODE,
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
    StateKey,
    StateNotFoundError,
    Status,
    default_normalize_score,
)
from kubespread.scheduler.plugins.nodeaffinity.common import (
    RequiredNodeAffinity,
    preferred_score,
    preferred_scores,
    required_node_affinity,
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

__all__ = ["ERR_REASON_CONFLICT", "ERR_REASON_ENFORCED", "ERR_REASON_POD", "NodeAffinity"]

NAME: Final = "NodeAffinity"
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
_PRE_FILTER_KEY: Final = StateKey("PreFilter" + NAME, RequiredNodeAffinity)
_PRE_SCORE_KEY: Final[StateKey[list[PreferredSchedulingTerm]]] = StateKey("PreScore" + NAME, list)
_ENFORCED_STATUS: Final = Status.unresolvable(ERR_REASON_ENFORCED)
_POD_STATUS: Final = Status.unresolvable(ERR_REASON_POD)


def _names_in(required: NodeSelector | None) -> frozenset[str] | None:
    """The nodes named by ``metadata.name In`` field requirements, when every term of the
    selector names some (terms are ORed, requirements within a term ANDed); None: any node."""
    if required is None or not required.node_selector_terms:
        return None
    names: set[str] = set()
    for term in required.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == "metadata.name" and r.operator == "In":
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def _node_names_from_fields(req: RequiredNodeAffinity) -> frozenset[str] | None:
    """The nodes both required forms allow by name (each form restricts on its own, and a
    node must satisfy both); None: any node."""
    names = _names_in(req.required)
    rde = _names_in(req.required_during_execution)
    if rde is None:
        return names
    return rde if names is None else names & rde


def _preferred_terms(pod: Pod) -> list[PreferredSchedulingTerm] | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    na = aff.node_affinity
    if not na.present("preferredDuringSchedulingIgnoredDuringExecution"):
        return None
    return na.preferred_during_scheduling_ignored_during_execution


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    reads = READS_NODE  # the node alone decides
    name = NAME

    def __init__(self, args: NodeAffinityArgs | None = None, *, features: FeatureGates | None = None) -> None:
        args = default_node_affinity_args(args)
        super().__init__(args, features=features)
        added = args.added_affinity
        self.added_required = added.required_during_scheduling_ignored_during_execution if added else None
        # addedAffinity is a NodeAffinity: its RequiredDuringExecution form binds as the other
        added_rde = added.required_during_scheduling_required_during_execution if added else None
        self.added_preferred = added.preferred_during_scheduling_ignored_during_execution if added else []
        self._added_matcher = (
            RequiredNodeAffinity({}, self.added_required, added_rde)
            if self.added_required is not None or added_rde is not None
            else None
        )

    # ---------------------------------------------------------------- queueing hints
    def events_to_register(self) -> list[EventRegistration]:
        """Only a node that appears or gets new labels can start matching (with hints, kube
        no longer registers UpdateNodeTaint here: a cordon or taint never helps this plugin)."""
        return [
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.hint_after_node_change,
            )
        ]

    def hint_after_node_change(self, pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterNodeChange: Queue when the node now matches the scheduler-enforced
        affinity and the pod's nodeSelector/required affinity, and did not match before."""
        node: Node = event.new
        if self._added_matcher is not None and not self._added_matcher.matches(node):
            return QUEUE_SKIP
        required = required_node_affinity(pod)
        if not required.matches(node):
            return QUEUE_SKIP
        old: Node | None = event.old
        if old is not None and required.matches(old):
            return QUEUE_SKIP  # it matched already: the label change is not what helps
        return QUEUE

    # ---------------------------------------------------------------- PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        req = required_node_affinity(pod)
        if (
            req.required is None
            and req.required_during_execution is None
            and self._added_matcher is None
            and not pod.spec.present("nodeSelector")
        ):
            return None, SKIP
        state.write(_PRE_FILTER_KEY, req)
        names = _node_names_from_fields(req)
        if names is None:
            return None, SUCCESS
        if not names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(names), SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if self._added_matcher is not None and not self._added_matcher.matches(node.node):
            return _ENFORCED_STATUS
        if not self._required(state, pod).matches(node.node):
            return _POD_STATUS
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        cluster = state.cluster
        which = np.where(self._required(state, pod).mask(cluster)[nodes], -1, 1).astype(np.int32)
        if self._added_matcher is not None:
            which[~self._added_matcher.mask(cluster)[nodes]] = 0
        return FilterResult(which, (_ENFORCED_STATUS, _POD_STATUS))

    @staticmethod
    def _required(state: CycleState, pod: Pod) -> RequiredNodeAffinity:
        try:
            return state.read(_PRE_FILTER_KEY)
        except StateNotFoundError:  # Filter without PreFilter (direct calls)
            return required_node_affinity(pod)

    # ---------------------------------------------------------------- PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        terms = _preferred_terms(pod)
        if terms is None and not self.added_preferred:
            return SKIP
        state.write(_PRE_SCORE_KEY, terms or [])
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        terms = self._preferred(state, pod)
        total = preferred_score(self.added_preferred, node.node) if self.added_preferred else 0
        return total + preferred_score(terms, node.node)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        cluster = state.cluster
        total = preferred_scores(cluster, self._preferred(state, pod))
        if self.added_preferred:
            total = total + preferred_scores(cluster, self.added_preferred)
        return total[nodes]

    @staticmethod
    def _preferred(state: CycleState, pod: Pod) -> list[PreferredSchedulingTerm]:
        try:
            return state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:  # Score without PreScore (direct calls)
            return _preferred_terms(pod) or []

    def normalize_scores(self, state: CycleState, pod: Pod, nodes: NodeIds, scores: NodeScores) -> NodeScores:
        return default_normalize_score(scores, reverse=False)
