"""InterPodAffinity: required pod affinity / anti-affinity (both ways) and their preferences.

kube-scheduler v1.35's plugin; the extension points live in filtering.py and scoring.py. Two
additions from the pod affinity design, neither changing a kube-compatible input's answer:
RequiredDuringExecution terms are required terms like the IgnoredDuringExecution ones, and
``daemonCoexistence`` (off by default) exempts daemon namespaces from required anti-affinity.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Pod
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

__all__ = ["NAME", "InterPodAffinity"]

NAME: Final = "InterPodAffinity"


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    name = NAME

    def __init__(self, args: InterPodAffinityArgs | None = None) -> None:
        args = default_inter_pod_affinity_args(args)
        super().__init__(args)
        self.hard_pod_affinity_weight: int = int(args.hard_pod_affinity_weight or 0)
        self.ignore_preferred_terms_of_existing_pods = bool(args.ignore_preferred_terms_of_existing_pods)
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

    # ---------------------------------------------------------------- PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return filtering.pre_filter(state, pod, self.daemon_namespaces)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        return filtering.filter_one(state, pod, node, self.daemon_namespaces)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        return filtering.filter_nodes(state, pod, nodes, self.daemon_namespaces)

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
