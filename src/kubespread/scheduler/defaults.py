"""Plugin args defaulting as kube-scheduler's config/v1 defaults.go does it.

Kept apart from config.py (which decodes and validates whole configurations) so that plugins
can default args they are built with directly, without importing the configuration layer.
"""

from __future__ import annotations

from typing import Final

from kubespread.api import keys
from kubespread.api.core import TopologySpreadConstraint
from kubespread.api.schedconfig import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
)

__all__ = [
    "DEFAULT_DAEMON_NAMESPACES",
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "LEAST_ALLOCATED",
    "LIST_DEFAULTING",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "SYSTEM_DEFAULTING",
    "default_default_preemption_args",
    "default_inter_pod_affinity_args",
    "default_node_affinity_args",
    "default_node_resources_balanced_allocation_args",
    "default_node_resources_fit_args",
    "default_pod_topology_spread_args",
    "system_default_constraints",
]

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"
LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
DEFAULT_HARD_POD_AFFINITY_WEIGHT: Final = 1
#: where the design's daemons live unless InterPodAffinityArgs.daemonNamespaces says otherwise
DEFAULT_DAEMON_NAMESPACES: Final = ("kube-system",)


def system_default_constraints() -> list[TopologySpreadConstraint]:
    """The constraints PodTopologySpread applies under System defaulting (both soft)."""
    soft = "ScheduleAnyway"
    return [
        TopologySpreadConstraint(max_skew=3, topology_key=keys.LABEL_HOSTNAME, when_unsatisfiable=soft),
        TopologySpreadConstraint(max_skew=5, topology_key=keys.LABEL_ZONE, when_unsatisfiable=soft),
    ]


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


def default_pod_topology_spread_args(args: PodTopologySpreadArgs | None = None) -> PodTopologySpreadArgs:
    """An empty defaultingType means System (whose constraints are built in, not listed)."""
    out = args.copy() if args is not None else PodTopologySpreadArgs()
    if not out.defaulting_type:
        out.defaulting_type = SYSTEM_DEFAULTING
    return out


def default_inter_pod_affinity_args(args: InterPodAffinityArgs | None = None) -> InterPodAffinityArgs:
    """hardPodAffinityWeight 1; with daemonCoexistence, no daemonNamespaces means kube-system
    (the design's default). Without it the list stays as given: it is not used, and a
    kube-compatible configuration should read back unchanged."""
    out = args.copy() if args is not None else InterPodAffinityArgs()
    if out.hard_pod_affinity_weight is None:
        out.hard_pod_affinity_weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    if out.daemon_coexistence and not out.daemon_namespaces:
        out.daemon_namespaces = list(DEFAULT_DAEMON_NAMESPACES)
    return out


def default_node_affinity_args(args: NodeAffinityArgs | None = None) -> NodeAffinityArgs:
    return args.copy() if args is not None else NodeAffinityArgs()


def default_node_resources_fit_args(args: NodeResourcesFitArgs | None = None) -> NodeResourcesFitArgs:
    """LeastAllocated over cpu and memory, weight 1 each; a resource weight of 0 becomes 1."""
    out = args.copy() if args is not None else NodeResourcesFitArgs()
    strategy = out.scoring_strategy.copy() if out.scoring_strategy is not None else ScoringStrategy()
    if not strategy.type:
        strategy.type = LEAST_ALLOCATED
    if not strategy.resources:
        strategy.resources = _default_resources()
    else:
        strategy.resources = [ResourceSpec(name=r.name, weight=r.weight or 1) for r in strategy.resources]
    out.scoring_strategy = strategy
    return out


def default_node_resources_balanced_allocation_args(
    args: NodeResourcesBalancedAllocationArgs | None = None,
) -> NodeResourcesBalancedAllocationArgs:
    out = args.copy() if args is not None else NodeResourcesBalancedAllocationArgs()
    if not out.resources:
        out.resources = _default_resources()
    else:
        out.resources = [ResourceSpec(name=r.name, weight=r.weight or 1) for r in out.resources]
    return out


def default_default_preemption_args(args: DefaultPreemptionArgs | None = None) -> DefaultPreemptionArgs:
    """minCandidateNodesPercentage 10, minCandidateNodesAbsolute 100."""
    out = args.copy() if args is not None else DefaultPreemptionArgs()
    if out.min_candidate_nodes_percentage is None:
        out.min_candidate_nodes_percentage = 10
    if out.min_candidate_nodes_absolute is None:
        out.min_candidate_nodes_absolute = 100
    return out
