"""InterPodAffinity: required pod affinity / anti-affinity (both ways) and their preferences.

kube-scheduler v1.35's plugin; the extension points live in filtering.py and scoring.py. Two
additions from the pod affinity design, neither changing a kube-compatible input's answer:
RequiredDuringExecution terms are required terms like the IgnoredDuringExecution ones, and
``daemonCoexistence`` (off by default) exempts daemon namespaces from required anti-affinity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from kubespread.api.core import Node, Pod
from kubespread.api.features import (
    INTER_POD_AFFINITY_HINT_FIXES,
    INTER_POD_ANTI_AFFINITY_HINT_ANY_TERM,
    FeatureGates,
)
from kubespread.api.schedconfig import InterPodAffinityArgs
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.defaults import default_inter_pod_affinity_args
from kubespread.scheduler.framework import (
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    NodeScores,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from kubespread.scheduler.plugins.interpodaffinity import filtering, scoring
from kubespread.scheduler.plugins.interpodaffinity.common import AffinityTerm, namespace_labels, pod_terms
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

__all__ = ["NAME", "InterPodAffinity"]

NAME: Final = "InterPodAffinity"


def _same_pod(a: Pod, b: Pod) -> bool:
    return a.key == b.key and a.metadata.uid == b.metadata.uid


def _unplaced(pod: Pod | None, nominated_counts: bool) -> bool:
    """Not bound (nor, where ``nominated_counts``, nominated): it cannot change what fits."""
    if pod is None or pod.spec.node_name:
        return False
    return not (nominated_counts and pod.status.nominated_node_name)


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    name = NAME

    def __init__(
        self, args: InterPodAffinityArgs | None = None, *, features: FeatureGates | None = None
    ) -> None:
        args = default_inter_pod_affinity_args(args)
        super().__init__(args, features=features)
        self.hard_pod_affinity_weight: int = int(args.hard_pod_affinity_weight or 0)
        self.ignore_preferred_terms_of_existing_pods = bool(args.ignore_preferred_terms_of_existing_pods)
        #: v1.36's hint fixes (kubernetes#135325, #135394)
        self.hint_fixes = self.features.enabled(INTER_POD_AFFINITY_HINT_FIXES)
        #: v1.37 (kubernetes#139161): anti-affinity matches a pod on any one term, as Filter
        #: judges it; before, the hint asked for every term
        self.anti_any_term = self.features.enabled(INTER_POD_ANTI_AFFINITY_HINT_ANY_TERM)
        # the design's daemon co-existence (kubespread extension): the namespaces whose pods
        # required anti-affinity ignores, both ways; empty when the option is off
        self.daemon_namespaces: frozenset[str] = (
            frozenset(args.daemon_namespaces) if args.daemon_coexistence else frozenset()
        )

    def __repr__(self) -> str:
        daemons = f", daemonNamespaces={sorted(self.daemon_namespaces)}" if self.daemon_namespaces else ""
        return (
            f"InterPodAffinity(hardPodAffinityWeight={self.hard_pod_affinity_weight}, "
            f"ignorePreferredTermsOfExistingPods={self.ignore_preferred_terms_of_existing_pods}{daemons})"
        )

    # ---------------------------------------------------------------- queueing hints
    def events_to_register(self) -> list[EventRegistration]:
        """Bound pods that appear, go or change labels; nodes that appear or change labels
        (topology keys)."""
        return [
            EventRegistration(
                EventKind(EventResource.POD, POD_ADD_LABEL_DELETE),
                self.hint_after_pod_change,
            ),
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.hint_after_node_change,
            ),
        ]

    @staticmethod
    def _matches(terms: tuple[AffinityTerm, ...], other: Pod, event: QueueingEvent, *, every: bool) -> bool:
        """Whether ``other`` matches every (or any) term; no terms: False."""
        if not terms:
            return False
        ns_labels = namespace_labels(event.cluster, other.namespace) if event.cluster is not None else None
        hits = (t.matches(other.namespace, other.metadata.labels, ns_labels) for t in terms)
        return all(hits) if every else any(hits)

    def hint_after_pod_change(self, pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterPodChange (bound pods only): Queue when an added or updated pod
        now matches all the pod's required affinity terms, or an updated or deleted pod no
        longer matches its required anti-affinity.

        From v1.36: the pod's own label change queues it (another pod's anti-affinity may no
        longer match it), a pending pod nominated to a node counts as placed, and a deleted
        pod whose required anti-affinity matched this pod queues it. Up to v1.36 "matches
        anti-affinity" means every term (podMatchesAllAffinityTerms); from v1.37 any one."""
        old: Pod | None = event.old
        new: Pod | None = event.new
        fixes = self.hint_fixes
        anti_every = not self.anti_any_term
        if fixes and old is not None and new is not None and _same_pod(new, pod):
            return QUEUE
        if _unplaced(new, fixes) or _unplaced(old, fixes):
            return QUEUE_SKIP
        terms = pod_terms(pod)
        affinity, anti = terms.required_affinity, terms.required_anti_affinity
        if old is not None and new is not None:
            match = self._matches
            if not match(affinity, old, event, every=True) and match(affinity, new, event, every=True):
                return QUEUE
            if match(anti, old, event, every=anti_every) and not match(anti, new, event, every=anti_every):
                return QUEUE
            return QUEUE_SKIP
        if new is not None:
            return QUEUE if self._matches(affinity, new, event, every=True) else QUEUE_SKIP
        assert old is not None
        if self._matches(anti, old, event, every=anti_every):
            return QUEUE
        if fixes and self._matches(pod_terms(old).required_anti_affinity, pod, event, every=anti_every):
            return QUEUE
        return QUEUE_SKIP

    @staticmethod
    def hint_after_node_change(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterNodeChange: Queue when a node gains (or changes the value of) an
        affinity term's topology key; for anti-affinity, when a node is added, or loses or
        changes an anti-affinity term's key."""
        old: Node | None = event.old
        new: Node = event.new
        terms = pod_terms(pod)
        labels = new.metadata.labels
        before = old.metadata.labels if old is not None else {}
        for term in terms.required_affinity:
            key = term.topology_key
            if key in labels and (old is None or key not in before or before[key] != labels[key]):
                return QUEUE
        for term in terms.required_anti_affinity:
            if old is None:
                return QUEUE
            key = term.topology_key
            if key in before and (key not in labels or before[key] != labels[key]):
                return QUEUE
        return QUEUE_SKIP

    # ---------------------------------------------------------------- PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return filtering.pre_filter(state, pod, self.daemon_namespaces)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        return filtering.filter_one(state, pod, node, self.daemon_namespaces)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        return filtering.filter_nodes(state, pod, nodes, self.daemon_namespaces)

    def judges_without(self, state: CycleState, pod: Pod, gone: Sequence[Pod]) -> bool:
        """When none of ``gone`` carries a required anti-affinity term or matches a selector
        of the pod's required terms (whatever the namespaces: a conservative test), PreFilter's
        masks are what they would be without them."""
        terms = filtering.cached_pod_terms(state, pod)
        selectors = [t.selector for t in (*terms.required_affinity, *terms.required_anti_affinity)]
        for p in gone:
            if pod_terms(p).required_anti_affinity:
                return False
            labels = p.metadata.labels
            if any(sel.matches(labels) for sel in selectors):
                return False
        return True

    # ---------------------------------------------------------------- PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        return scoring.pre_score(
            state, pod, self.hard_pod_affinity_weight, self.ignore_preferred_terms_of_existing_pods
        )

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return int(scoring.score_nodes(state, pod, np.array([node.index]))[0])

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        return scoring.score_nodes(state, pod, nodes)

    def normalize_scores(self, state: CycleState, pod: Pod, nodes: NodeIds, scores: NodeScores) -> NodeScores:
        return scoring.normalize_scores(state, scores)
