"""The scheduler's rules that other layers ask about, in one public place.

Controllers and webhooks must judge pods the way the scheduler does (the WorkloadSpread
webhook asks whether a subset still has a node with room; the RequiredDuringExecution
controller asks whether a running pod's affinity still holds), yet never reach into a
plugin's modules: plugin internals may move with kube-scheduler's. What they may use is
re-exported or wrapped here, each backed by the plugin code that decides scheduling, so
"violated" there means what "infeasible" means in the Filter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubespread.api.core import Node, Pod
from kubespread.api.resources import Resources
from kubespread.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.scheduler.plugins.interpodaffinity.common import (
    AffinityTerm,
    combined_count_key,
    domain_sums,
    namespace_labels,
    pod_terms,
)
from kubespread.scheduler.plugins.nodeaffinity.common import RequiredNodeAffinity, required_node_affinity
from kubespread.scheduler.plugins.noderesources.fit import insufficient_resources
from kubespread.scheduler.profile import Profile

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "AffinityTerm",
    "RequiredNodeAffinity",
    "daemon_namespaces",
    "fits_resources",
    "namespace_labels",
    "node_filter",
    "required_affinity_domains",
    "required_node_affinity",
    "required_pod_terms",
]


def fits_resources(request: Resources, node: NodeInfo) -> bool:
    """NodeResourcesFit's Filter: the node has room for ``request`` (a pod's
    :func:`~kubespread.api.resources.pod_requests`) and one more pod."""
    return not insufficient_resources(request, node)


def node_filter(pod: Pod) -> Callable[[Node], bool]:
    """The node-local rules of NodeUnschedulable, NodeAffinity (nodeSelector and required
    affinity) and TaintToleration (NoSchedule/NoExecute) for ``pod``, parsed once."""
    required = required_node_affinity(pod)
    tolerations = pod.spec.tolerations

    def admits(node: Node) -> bool:
        if node.spec.unschedulable or not required.matches(node):
            return False
        return not find_untolerated(node.spec.taints, tolerations, (NO_SCHEDULE, NO_EXECUTE))

    return admits


def daemon_namespaces(profiles: Mapping[str, Profile]) -> frozenset[str]:
    """The namespaces whose pods the profiles' InterPodAffinity lets coexist with every
    anti-affinity (daemonCoexistence), over all profiles."""
    found: set[str] = set()
    for profile in profiles.values():
        plugin = profile.plugins.get("InterPodAffinity")
        found |= getattr(plugin, "daemon_namespaces", frozenset())
    return frozenset(found)


def required_pod_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    """InterPodAffinity's parse of the pod's required terms: (affinity, anti-affinity), both
    forms (IgnoredDuringExecution and RequiredDuringExecution) in one list each, as its
    Filter sees them."""
    terms = pod_terms(pod)
    return terms.required_affinity, terms.required_anti_affinity


def required_affinity_domains(
    cluster: ClusterState, terms: Sequence[AffinityTerm]
) -> dict[str, dict[str, int]]:
    """Per term's topology key, the existing pods matching *all* the terms per domain (only
    domains holding one): what InterPodAffinity's Filter counts for required affinity (a pod
    counts only when it matches every term; terminating pods count)."""
    ns, sel = combined_count_key([t.count_key(cluster) for t in terms])
    if sel.nothing or (ns is not None and not ns):
        per_node = np.zeros(cluster.num_nodes, dtype=np.int64)
    else:
        per_node = cluster.pod_counts(ns, sel, include_terminating=True)
    out: dict[str, dict[str, int]] = {}
    for t in terms:
        _, sums = domain_sums(cluster, t.topology_key, per_node)
        values = cluster.node_label_column(t.topology_key)[1]
        out[t.topology_key] = {values[i]: int(n) for i, n in enumerate(sums.tolist()) if n > 0}
    return out
