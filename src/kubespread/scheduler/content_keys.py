"""Content keys for the scheduler's parse caches.

The plugins parse a pod's constraints and terms once per API object (keyed by identity),
but the pods of one workload are separate objects with equal contents: each new pod of a
ReplicaSet would parse the same selectors again (about a tenth of a cycle). These keys name
what a parse reads, so an equal content finds the earlier parse. A key holds values in their
given order: equal contents in another order only miss the cache, never share a wrong parse.
"""

from __future__ import annotations

from collections.abc import Hashable

from kubespread.api.core import PodAffinityTerm, TopologySpreadConstraint
from kubespread.api.selectors import LabelSelector

__all__ = ["CACHE_LIMIT", "affinity_term_key", "label_selector_key", "spread_constraint_key"]

#: entries a content-keyed cache holds before it starts over
CACHE_LIMIT = 4096


def label_selector_key(sel: LabelSelector | None) -> Hashable:
    """What compile_label_selector reads: None, or matchLabels and matchExpressions in order."""
    if sel is None:
        return None
    return (
        tuple(sel.match_labels.items()),
        tuple((e.key, e.operator, tuple(e.values)) for e in sel.match_expressions),
    )


def affinity_term_key(term: PodAffinityTerm) -> Hashable:
    """What a PodAffinityTerm's parse reads (matchLabelKeys are merged by the API server)."""
    return (
        label_selector_key(term.label_selector),
        tuple(term.namespaces),
        label_selector_key(term.namespace_selector),
        term.topology_key,
    )


def spread_constraint_key(c: TopologySpreadConstraint) -> Hashable:
    """What a TopologySpreadConstraint's parse reads."""
    return (
        c.max_skew,
        c.topology_key,
        c.when_unsatisfiable,
        label_selector_key(c.label_selector),
        c.min_domains,
        c.node_affinity_policy,
        c.node_taints_policy,
        tuple(c.match_label_keys),
    )
