"""Parsed pod (anti-)affinity terms and the index of existing pods that carry them.

A pod's terms are parsed once (framework.NewPodInfo's AffinityTerm): the label selector and
namespace selector compiled, the namespace list resolved. Two ways of matching follow kube:

* an *existing* pod's term is matched against the incoming pod with the incoming pod's
  namespace labels (:meth:`AffinityTerm.matches`);
* the *incoming* pod's terms have their namespaceSelector merged into the namespace list
  first (mergeAffinityTermNamespacesIfNotEmpty), so they become a (namespaces, selector)
  pair that ClusterState.pod_counts can count (:meth:`AffinityTerm.count_key`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kubespread.api.core import Pod, PodAffinityTerm
from kubespread.api.selectors import NOTHING, Selector, compile_label_selector
from kubespread.cluster.events import ClusterEvent, EventType

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "AffinityTerm",
    "ExistingPod",
    "PodTerms",
    "combined_count_key",
    "existing_pods_with_affinity",
    "namespace_labels",
    "pod_namespace",
    "pod_terms",
]

_EMPTY: Final[Mapping[str, str]] = {}


def pod_namespace(pod: Pod) -> str:
    return pod.metadata.namespace or "default"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One parsed PodAffinityTerm (with its weight when preferred; 0 when required)."""

    namespaces: frozenset[str]
    namespace_selector: Selector
    selector: Selector
    topology_key: str
    weight: int = 0

    @classmethod
    def parse(cls, pod_ns: str, term: PodAffinityTerm, weight: int = 0) -> AffinityTerm:
        """Empty namespaces and a nil namespaceSelector mean the pod's own namespace; a nil
        namespaceSelector selects no namespace, ``{}`` every namespace."""
        if not term.namespaces and term.namespace_selector is None:
            namespaces = frozenset((pod_ns,))
        else:
            namespaces = frozenset(term.namespaces)
        return cls(
            namespaces=namespaces,
            namespace_selector=compile_label_selector(term.namespace_selector),
            selector=compile_label_selector(term.label_selector),
            topology_key=term.topology_key,
            weight=weight,
        )

    def matches(self, pod_namespace: str, pod_labels: Mapping[str, str],
                namespace_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: the pod's namespace is listed or its labels are selected
        (missing Namespace object: no labels), and the label selector matches the pod."""
        if pod_namespace in self.namespaces or self.namespace_selector.matches(namespace_labels or _EMPTY):
            return self.selector.matches(pod_labels)
        return False

    def count_key(self, cluster: ClusterState) -> tuple[frozenset[str] | None, Selector]:
        """(namespaces, selector) for pod_counts, namespaceSelector merged into namespaces
        (None: every namespace, which is what an empty namespaceSelector keeps meaning)."""
        if self.namespace_selector.empty:
            return None, self.selector
        if self.namespace_selector.nothing:
            return self.namespaces, self.selector
        return self.namespaces | cluster.namespaces_matching(self.namespace_selector), self.selector


def combined_count_key(
    keys: list[tuple[frozenset[str] | None, Selector]],
) -> tuple[frozenset[str] | None, Selector]:
    """One (namespaces, selector) matching exactly the pods that match every key: kube counts
    a pod for required affinity only when it matches all the incoming pod's terms."""
    namespaces: frozenset[str] | None = None
    requirements = []
    for ns, sel in keys:
        if sel.nothing:
            return frozenset(), NOTHING
        if ns is not None:
            namespaces = ns if namespaces is None else namespaces & ns
        requirements.extend(sel.requirements)
    return namespaces, Selector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class PodTerms:
    """Every pod (anti-)affinity term of one pod, parsed."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[AffinityTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.required_affinity or self.required_anti_affinity
                    or self.preferred_affinity or self.preferred_anti_affinity)


_NO_TERMS: Final = PodTerms()


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's parsed terms (matchLabelKeys are already merged by the API server, so the
    scheduler does not look at them)."""
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS
    ns = pod_namespace(pod)
    pa, anti = aff.pod_affinity, aff.pod_anti_affinity

    def required(terms: list[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        return tuple(AffinityTerm.parse(ns, t) for t in terms)

    return PodTerms(
        required_affinity=required(pa.required_during_scheduling_ignored_during_execution) if pa else (),
        required_anti_affinity=required(anti.required_during_scheduling_ignored_during_execution)
        if anti else (),
        preferred_affinity=tuple(
            AffinityTerm.parse(ns, w.pod_affinity_term, w.weight)
            for w in pa.preferred_during_scheduling_ignored_during_execution
        ) if pa else (),
        preferred_anti_affinity=tuple(
            AffinityTerm.parse(ns, w.pod_affinity_term, w.weight)
            for w in anti.preferred_during_scheduling_ignored_during_execution
        ) if anti else (),
    )


def namespace_labels(cluster: ClusterState, namespace: str) -> Mapping[str, str]:
    """GetNamespaceLabelsSnapshot: the Namespace object's labels, none when it is missing."""
    ns = cluster.namespaces.get(namespace)
    return ns.labels if ns is not None else _EMPTY


# ---------------------------------------------------------------------- existing pods index


@dataclass(frozen=True, slots=True)
class ExistingPod:
    """A scheduler-visible bound pod with pod (anti-)affinity terms, and its node's name."""

    key: str
    node_name: str
    terms: PodTerms


class _AffinityIndex:
    """Bound, scheduler-visible pods that carry terms (NodeInfo.PodsWithAffinity across
    nodes), kept current from ClusterState events so a cycle never scans every pod.

    Holds no reference to the ClusterState (it is the key of a WeakKeyDictionary)."""

    __slots__ = ("__weakref__", "pods")

    def __init__(self, cluster: ClusterState) -> None:
        self.pods: dict[str, ExistingPod] = {}
        for key, pod in cluster.pods.items():
            self._put(key, pod)

    def _put(self, key: str, pod: Pod) -> None:
        node = pod.spec.node_name
        terms = pod_terms(pod) if node and not pod.is_finished else _NO_TERMS
        if terms.empty:
            self.pods.pop(key, None)
        else:
            self.pods[key] = ExistingPod(key, node, terms)

    def on_event(self, event: ClusterEvent) -> None:
        if event.kind != Pod.KIND:
            return
        pod = event.obj
        if event.type in (EventType.UNBOUND, EventType.DELETED):
            self.pods.pop(pod.key, None)
        else:  # ADDED, UPDATED, BOUND: the object as it is now (bound pods carry spec.nodeName)
            self._put(pod.key, pod)


_INDEXES: weakref.WeakKeyDictionary[ClusterState, _AffinityIndex] = weakref.WeakKeyDictionary()


def existing_pods_with_affinity(cluster: ClusterState) -> Mapping[str, ExistingPod]:
    """Pod key → the bound pod's parsed terms, for every pod carrying any pod (anti-)affinity
    term; built by one scan on first use, then maintained by a state listener."""
    index = _INDEXES.get(cluster)
    if index is None:
        index = _AffinityIndex(cluster)
        idx_ref = weakref.ref(index)

        def listener(event: ClusterEvent) -> None:
            live = idx_ref()
            if live is not None:
                live.on_event(event)

        cluster.subscribe(listener)
        _INDEXES[cluster] = index
    return index.pods
