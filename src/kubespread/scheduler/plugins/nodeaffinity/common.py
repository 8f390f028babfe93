"""The pod's required node affinity as one matcher, shared with PodTopologySpread's
nodeAffinityPolicy (nodeaffinity.GetRequiredNodeAffinity)."""

from __future__ import annotations

from collections.abc import Mapping

from kubespread.api.core import Node, NodeAffinity, Pod, PreferredSchedulingTerm
from kubespread.api.selectors import NodeSelector, node_selector_matches, node_selector_term_matches

__all__ = ["RequiredNodeAffinity", "preferred_score", "required_node_affinity"]


class RequiredNodeAffinity:
    """spec.nodeSelector (every label equal) AND the required terms (ORed; a term that does
    not parse matches nothing, the others still count)."""

    __slots__ = ("node_selector", "required")

    def __init__(self, node_selector: Mapping[str, str], required: NodeSelector | None) -> None:
        self.node_selector = dict(node_selector)
        self.required = required

    @property
    def is_trivial(self) -> bool:
        """True when every node matches (nothing to check)."""
        return not self.node_selector and self.required is None

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        for k, v in self.node_selector.items():
            if labels.get(k) != v:
                return False
        return node_selector_matches(self.required, labels, node_name)

    def matches(self, node: Node) -> bool:
        return self.matches_labels(node.metadata.labels, node.metadata.name)


def _required_of(affinity: NodeAffinity | None) -> NodeSelector | None:
    return affinity.required_during_scheduling_ignored_during_execution if affinity is not None else None


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    aff = pod.spec.affinity
    return RequiredNodeAffinity(pod.spec.node_selector, _required_of(aff.node_affinity if aff else None))


def preferred_score(terms: list[PreferredSchedulingTerm], node: Node) -> int:
    """The sum of the weights of the preferred terms the node matches (weight 0 terms ignored)."""
    labels, name = node.metadata.labels, node.metadata.name
    return sum(t.weight for t in terms if t.weight and node_selector_term_matches(t.preference, labels, name))
