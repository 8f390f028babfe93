"""The pod's node affinity as matchers over one node or over every node at once, shared
with PodTopologySpread's nodeAffinityPolicy (nodeaffinity.GetRequiredNodeAffinity).

Over every node, a requirement is decided once per distinct value of its label key (its
outcome depends on nothing else) and spread to the nodes through the label column's codes;
the resulting masks are cached per node generation, keyed by the terms' content, so the
pods of one workload share them across cycles.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from kubespread.api.core import Node, Pod, PreferredSchedulingTerm
from kubespread.api.selectors import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    node_field_matches,
    node_requirement_matches,
    node_selector_matches,
    node_selector_term_matches,
)
from kubespread.scheduler.framework import NodeSetCache

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "RequiredNodeAffinity",
    "node_selector_mask",
    "preferred_score",
    "preferred_scores",
    "required_node_affinity",
    "term_mask",
]

# ------------------------------------------------------------------ masks over every node

_MAX_ENTRIES: Final = 512
_MASKS: Final[NodeSetCache[dict[object, np.ndarray]]] = NodeSetCache(lambda _cluster: {})


def _cached(cluster: ClusterState, key: object, build: Callable[[ClusterState], np.ndarray]) -> np.ndarray:
    entries = _MASKS.get(cluster)
    mask = entries.get(key)
    if mask is None:
        if len(entries) >= _MAX_ENTRIES:
            entries.clear()
        mask = build(cluster)
        mask.flags.writeable = False
        entries[key] = mask
    return mask


def _req_key(r: NodeSelectorRequirement) -> tuple[str, str, tuple[str, ...]]:
    return (r.key, r.operator, tuple(r.values))


def _term_key(term: NodeSelectorTerm) -> tuple[object, ...]:
    return (tuple(map(_req_key, term.match_expressions)), tuple(map(_req_key, term.match_fields)))


def _expression_mask(cluster: ClusterState, r: NodeSelectorRequirement) -> np.ndarray:
    codes, values = cluster.node_label_column(r.key)
    # one verdict per distinct value, then the verdict for a node without the key at the
    # end, where code -1 finds it
    table = np.fromiter(
        (node_requirement_matches(r, {r.key: v}) for v in values), dtype=bool, count=len(values)
    )
    return np.append(table, node_requirement_matches(r, {}))[codes]


def _field_mask(cluster: ClusterState, r: NodeSelectorRequirement) -> np.ndarray:
    names = cluster.node_names
    if not r.values:
        return np.full(len(names), node_field_matches(r, ""), dtype=bool)
    # the verdict depends only on whether the node is the one named: decide both cases once
    value = r.values[0]
    out = np.full(len(names), node_field_matches(r, value + "\0"), dtype=bool)  # any other name
    out[names == value] = node_field_matches(r, value)
    return out


def _build_term_mask(term: NodeSelectorTerm, cluster: ClusterState) -> np.ndarray:
    mask = np.ones(cluster.num_nodes, dtype=bool)
    if not term.match_expressions and not term.match_fields:
        return ~mask
    for r in term.match_expressions:
        mask &= _expression_mask(cluster, r)
    for r in term.match_fields:
        mask &= _field_mask(cluster, r)
    return mask


def term_mask(cluster: ClusterState, term: NodeSelectorTerm) -> np.ndarray:
    """Per node id, node_selector_term_matches (read-only, cached)."""
    return _cached(cluster, ("term", _term_key(term)), lambda c: _build_term_mask(term, c))


def node_selector_mask(cluster: ClusterState, sel: NodeSelector | None) -> np.ndarray:
    """Per node id, node_selector_matches: the terms ORed; nil matches all, no terms none."""
    if sel is None:
        return np.ones(cluster.num_nodes, dtype=bool)
    mask = np.zeros(cluster.num_nodes, dtype=bool)
    for term in sel.node_selector_terms:
        mask |= term_mask(cluster, term)
    return mask


def preferred_scores(cluster: ClusterState, terms: Sequence[PreferredSchedulingTerm]) -> np.ndarray:
    """Per node id, preferred_score: the summed weights of the terms each node matches
    (read-only: kept per node set and terms, which the pods of a workload share)."""
    generation = cluster.node_generation
    got = _PREFERRED.get(cluster)
    if got is None or got[0] != generation:
        got = _PREFERRED[cluster] = (generation, {})
    key = tuple((t.weight, _term_key(t.preference)) for t in terms)
    out = got[1].get(key)
    if out is None:
        out = np.zeros(cluster.num_nodes, dtype=np.int64)
        for t in terms:
            if t.weight:
                out[term_mask(cluster, t.preference)] += t.weight
        out.flags.writeable = False
        if len(got[1]) >= 256:
            got[1].clear()
        got[1][key] = out
    return out


#: per cluster: (node generation, {preferred terms' content: preferred_scores})
_PREFERRED: weakref.WeakKeyDictionary[ClusterState, tuple[int, dict[Hashable, np.ndarray]]] = (
    weakref.WeakKeyDictionary()
)


# ------------------------------------------------------------------ the pod's affinity


class RequiredNodeAffinity:
    """spec.nodeSelector (every label equal) AND the required terms (ORed; a term that does
    not parse matches nothing, the others still count) AND, when given, the design's
    RequiredDuringExecution node selector (its terms ORed too): a node must satisfy both
    required forms at scheduling time, which differ only in what happens afterwards."""

    __slots__ = ("node_selector", "required", "required_during_execution")

    def __init__(
        self,
        node_selector: Mapping[str, str],
        required: NodeSelector | None,
        required_during_execution: NodeSelector | None = None,
    ) -> None:
        self.node_selector = dict(node_selector)
        self.required = required
        self.required_during_execution = required_during_execution

    @property
    def is_trivial(self) -> bool:
        """True when every node matches (nothing to check)."""
        return not self.node_selector and self.required is None and self.required_during_execution is None

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        for k, v in self.node_selector.items():
            if labels.get(k) != v:
                return False
        if not node_selector_matches(self.required, labels, node_name):
            return False
        rde = self.required_during_execution
        return rde is None or node_selector_matches(rde, labels, node_name)

    def matches(self, node: Node) -> bool:
        return self.matches_labels(node.metadata.labels, node.metadata.name)

    def mask(self, cluster: ClusterState) -> np.ndarray:
        """Per node id, :meth:`matches` (read-only, cached)."""
        key = (
            "required",
            tuple(sorted(self.node_selector.items())),
            _selector_key(self.required),
            _selector_key(self.required_during_execution),
        )
        return _cached(cluster, key, self._build_mask)

    def _build_mask(self, cluster: ClusterState) -> np.ndarray:
        mask = node_selector_mask(cluster, self.required).copy()
        if self.required_during_execution is not None:
            mask &= node_selector_mask(cluster, self.required_during_execution)
        for k, v in self.node_selector.items():
            codes, values = cluster.node_label_column(k)
            try:
                mask &= codes == values.index(v)
            except ValueError:  # no node carries this value
                mask[:] = False
        return mask


def _selector_key(sel: NodeSelector | None) -> tuple[object, ...] | None:
    return None if sel is None else tuple(map(_term_key, sel.node_selector_terms))


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """The pod's nodeSelector and both required node affinity forms, as one matcher."""
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    if na is None:
        return RequiredNodeAffinity(pod.spec.node_selector, None)
    return RequiredNodeAffinity(
        pod.spec.node_selector,
        na.required_during_scheduling_ignored_during_execution,
        na.required_during_scheduling_required_during_execution,
    )


def preferred_score(terms: list[PreferredSchedulingTerm], node: Node) -> int:
    """The sum of the weights of the preferred terms the node matches (weight 0 terms ignored)."""
    labels, name = node.metadata.labels, node.metadata.name
    return sum(t.weight for t in terms if t.weight and node_selector_term_matches(t.preference, labels, name))
