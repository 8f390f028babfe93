"""kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration and the plugin args kubespread knows.

Only the shape lives here; defaulting and validation belong to scheduler/config.py, as
kube-scheduler keeps them apart from the types.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from kubespread.api.core import NodeAffinity, TopologySpreadConstraint
from kubespread.api.meta import KubeObject
from kubespread.api.model import Model, model

__all__ = [
    "DefaultPreemptionArgs",
    "InterPodAffinityArgs",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "Plugin",
    "PluginConfig",
    "PluginSet",
    "Plugins",
    "PodTopologySpreadArgs",
]

SCHEDULER_CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"


@model
class Plugin(Model):
    name: str = ""
    weight: int | None = None


@model
class PluginSet(Model):
    enabled: list[Plugin] = field(default_factory=list)
    disabled: list[Plugin] = field(default_factory=list)


@model
class Plugins(Model):
    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)


@model
class PluginConfig(Model):
    name: str = ""
    args: Any = None  # decoded per plugin by scheduler/config.py (see the *Args types below)


@model
class KubeSchedulerProfile(Model):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = field(default_factory=list)


@model
class KubeSchedulerConfiguration(KubeObject):
    KIND: ClassVar[str] = "KubeSchedulerConfiguration"
    API_VERSION: ClassVar[str] = SCHEDULER_CONFIG_API_VERSION
    NAMESPACED: ClassVar[bool] = False

    parallelism: int | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[KubeSchedulerProfile] = field(default_factory=list)
    extenders: list[Any] = field(default_factory=list)
    leader_election: Any = None
    client_connection: Any = None
    delay_cache_until_active: bool = False


# --- plugin args ----------------------------------------------------------------------------


@model
class PodTopologySpreadArgs(Model):
    default_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    defaulting_type: str = ""


@model
class InterPodAffinityArgs(Model):
    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool = False
    # kubespread extensions (the design's "co-existing with daemons", off in kube's default):
    # required anti-affinity ignores every pair of pods of which one runs in a daemon namespace
    daemon_coexistence: bool = False
    daemon_namespaces: list[str] = field(default_factory=list)  # empty: ["kube-system"]


@model
class DefaultPreemptionArgs(Model):
    #: the dry run looks for this share of the potential nodes as candidates (default 10)...
    min_candidate_nodes_percentage: int | None = None
    #: ...but at least this many (default 100), never more than there are
    min_candidate_nodes_absolute: int | None = None


@model
class NodeAffinityArgs(Model):
    added_affinity: NodeAffinity | None = None


@model
class ResourceSpec(Model):
    name: str = ""
    weight: int = 0


@model
class UtilizationShapePoint(Model):
    utilization: int = 0
    score: int = 0


@model
class RequestedToCapacityRatioParam(Model):
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@model
class ScoringStrategy(Model):
    type: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@model
class NodeResourcesFitArgs(Model):
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = None


@model
class NodeResourcesBalancedAllocationArgs(Model):
    resources: list[ResourceSpec] = field(default_factory=list)
