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
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from kubespread.api.core import Affinity, Pod, PodAffinityTerm
from kubespread.api.selectors import NOTHING, Requirement, Selector, compile_label_selector
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.scheduler.content_keys import CACHE_LIMIT, affinity_term_key
from kubespread.scheduler.node_memo import domain_tally, kept_per_cluster

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "ROLES",
    "AffinityTerm",
    "ExistingTerms",
    "PodTerms",
    "TermCarriers",
    "combined_count_key",
    "domain_sums",
    "existing_terms",
    "namespace_labels",
    "one_node_each",
    "pod_terms",
]

_EMPTY: Final[Mapping[str, str]] = {}


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

    def matches(
        self, pod_namespace: str, pod_labels: Mapping[str, str], namespace_labels: Mapping[str, str] | None
    ) -> bool:
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
    requirements: list[Requirement] = []
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
        return not (
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


_NO_TERMS: Final = PodTerms()


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's parsed terms (matchLabelKeys are already merged by the API server, so the
    scheduler does not look at them).

    The required terms are those of both forms, IgnoredDuringExecution then the design's
    RequiredDuringExecution: at scheduling time they are the same rule (the forms differ only
    in what happens once the pod runs), so every check and the existing-pod index see one list.
    """
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS
    ns = pod.namespace
    # A pod's versions share its affinity object (updates copy the spec shallowly, and stored
    # objects are replaced, never changed in place): parse it once per (object, namespace).
    # (The mark guards against a parse of a new pod before the API server's matchLabelKeys
    # merge appended to its selectors in place.)
    mark = (ns, *_shape(aff))
    hit = _TERMS.get(id(aff))
    if hit is not None and hit[0] is aff and hit[1] == mark:
        return hit[2]
    # another pod of the same workload: an equal affinity object parsed before
    content = _content_key(ns, aff)
    terms = _TERMS_BY_CONTENT.get(content)
    if terms is None:
        terms = _parse_terms(ns, aff)
        if len(_TERMS_BY_CONTENT) >= CACHE_LIMIT:
            _TERMS_BY_CONTENT.clear()
        _TERMS_BY_CONTENT[content] = terms
    if len(_TERMS) >= 8192:
        _TERMS.clear()
    _TERMS[id(aff)] = (aff, mark, terms)
    return terms


def _content_key(ns: str, aff: Affinity) -> Hashable:
    """What _parse_terms reads of the affinity, for the content-keyed cache."""
    out: list[Hashable] = [ns]
    for group in (aff.pod_affinity, aff.pod_anti_affinity):
        if group is None:
            out.append(None)
            continue
        out.append(
            (
                tuple(
                    affinity_term_key(t) for t in group.required_during_scheduling_ignored_during_execution
                ),
                tuple(
                    affinity_term_key(t) for t in group.required_during_scheduling_required_during_execution
                ),
                tuple(
                    (w.weight, affinity_term_key(w.pod_affinity_term))
                    for w in group.preferred_during_scheduling_ignored_during_execution
                ),
            )
        )
    return tuple(out)


def _shape(aff: Affinity) -> Iterator[int]:
    """Per term of the pod (anti-)affinity, how many expressions its selectors hold."""
    for group in (aff.pod_affinity, aff.pod_anti_affinity):
        if group is None:
            yield -1
            continue
        terms = [
            *group.required_during_scheduling_ignored_during_execution,
            *group.required_during_scheduling_required_during_execution,
            *(w.pod_affinity_term for w in group.preferred_during_scheduling_ignored_during_execution),
        ]
        for t in terms:
            yield -1 if t.label_selector is None else len(t.label_selector.match_expressions)
            yield -1 if t.namespace_selector is None else len(t.namespace_selector.match_expressions)


#: affinity object id -> (the object, (namespace, its _shape), its parsed terms); see pod_terms
_TERMS: dict[int, tuple[Affinity, tuple[Any, ...], PodTerms]] = {}
#: what _content_key names -> its parsed terms (the pods of one workload share them)
_TERMS_BY_CONTENT: dict[Hashable, PodTerms] = {}


def _parse_terms(ns: str, aff: Affinity) -> PodTerms:
    pa, anti = aff.pod_affinity, aff.pod_anti_affinity

    def required(ignored: list[PodAffinityTerm], enforced: list[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        return tuple(AffinityTerm.parse(ns, t) for terms in (ignored, enforced) for t in terms)

    return PodTerms(
        required_affinity=required(
            pa.required_during_scheduling_ignored_during_execution,
            pa.required_during_scheduling_required_during_execution,
        )
        if pa
        else (),
        required_anti_affinity=required(
            anti.required_during_scheduling_ignored_during_execution,
            anti.required_during_scheduling_required_during_execution,
        )
        if anti
        else (),
        preferred_affinity=tuple(
            AffinityTerm.parse(ns, w.pod_affinity_term, w.weight)
            for w in pa.preferred_during_scheduling_ignored_during_execution
        )
        if pa
        else (),
        preferred_anti_affinity=tuple(
            AffinityTerm.parse(ns, w.pod_affinity_term, w.weight)
            for w in anti.preferred_during_scheduling_ignored_during_execution
        )
        if anti
        else (),
    )


def namespace_labels(cluster: ClusterState, namespace: str) -> Mapping[str, str]:
    """GetNamespaceLabelsSnapshot: the Namespace object's labels, none when it is missing."""
    ns = cluster.namespaces.get(namespace)
    return ns.labels if ns is not None else _EMPTY


# ---------------------------------------------------------------------- existing pods' terms

#: the four kinds of term an existing pod can carry, as PodTerms' field names
ROLES: Final = (
    "required_affinity",
    "required_anti_affinity",
    "preferred_affinity",
    "preferred_anti_affinity",
)


class TermCarriers:
    """How many bound pods carry one distinct term, per node: kube walks every such pod each
    cycle (NodeInfo.PodsWithAffinity); pods of one workload share their terms, so matching
    each distinct term once and weighting its domains by these counts gives the same sums.
    """

    __slots__ = ("_generation", "_vector", "by_node", "total")

    def __init__(self) -> None:
        self.by_node: dict[str, int] = {}
        self.total = 0
        self._vector: np.ndarray | None = None
        self._generation = -1

    def _add(self, cluster: ClusterState | None, node_name: str, delta: int) -> None:
        c = self.by_node.get(node_name, 0) + delta
        if c:
            self.by_node[node_name] = c
        else:
            del self.by_node[node_name]
        self.total += delta
        vec = self._vector
        if vec is not None:
            if cluster is not None and self._generation == cluster.node_generation:
                vec[cluster.node_index(node_name)] += delta
            else:
                self._vector = None

    def per_node(self, cluster: ClusterState) -> np.ndarray:
        """Carrier counts by node id (read-only; valid until the node set or the carriers change)."""
        vec = self._vector
        if vec is None or self._generation != cluster.node_generation:
            vec = np.zeros(cluster.num_nodes, dtype=np.int64)
            for name, c in self.by_node.items():
                vec[cluster.node_index(name)] = c
            self._vector, self._generation = vec, cluster.node_generation
        return vec


class ExistingTerms:
    """Every distinct term carried by bound, scheduler-visible pods, by role, with its
    carriers per node; kept current from ClusterState events so a cycle never walks the pods.

    Holds only a weak reference to the ClusterState (which keys the module's registry)."""

    __slots__ = (
        "__weakref__",
        "_by_namespace",
        "_cluster",
        "_matched",
        "_records",
        "_terms_version",
        "by_role",
    )

    def __init__(self, cluster: ClusterState) -> None:
        self._cluster = weakref.ref(cluster)
        self.by_role: dict[str, dict[AffinityTerm, TermCarriers]] = {role: {} for role in ROLES}
        # changes when a distinct term appears or goes (not when its carriers move)
        self._terms_version = 0
        # (role, namespace, labels, namespace labels) -> (version, the terms matching such a pod)
        self._matched: dict[Hashable, tuple[int, list[tuple[AffinityTerm, TermCarriers]]]] = {}
        # pod key -> (node, namespace, its terms); namespace -> keys of its pods with terms
        self._records: dict[str, tuple[str, str, list[tuple[str, AffinityTerm]]]] = {}
        self._by_namespace: dict[str, set[str]] = {}
        for key, pod in cluster.pods.items():
            self._put(key, pod)

    def _apply(self, node_name: str, terms: list[tuple[str, AffinityTerm]], delta: int) -> None:
        cluster = self._cluster()
        for role, term in terms:
            group = self.by_role[role]
            carriers = group.get(term)
            if carriers is None:
                carriers = group[term] = TermCarriers()
                self._terms_version += 1
            carriers._add(cluster, node_name, delta)
            if not carriers.total:
                del group[term]
                self._terms_version += 1

    def _drop(self, key: str) -> None:
        old = self._records.pop(key, None)
        if old is not None:
            node, namespace, flat = old
            self._apply(node, flat, -1)
            members = self._by_namespace[namespace]
            members.discard(key)
            if not members:
                del self._by_namespace[namespace]

    def _put(self, key: str, pod: Pod) -> None:
        self._drop(key)
        node = pod.spec.node_name
        if not node or pod.is_finished:
            return
        terms = pod_terms(pod)
        if terms.empty:
            return
        flat = [(role, t) for role in ROLES for t in getattr(terms, role)]
        namespace = pod.namespace
        self._records[key] = (node, namespace, flat)
        self._by_namespace.setdefault(namespace, set()).add(key)
        self._apply(node, flat, +1)

    def matching(
        self, role: str, pod_namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]
    ) -> list[tuple[AffinityTerm, TermCarriers]]:
        """The terms of ``role`` (with their carriers) that match a pod with this namespace,
        labels and namespace labels, in :attr:`by_role`'s order. Matching is a function of
        those alone, so it is worked out once per distinct pod and kept until a term comes
        or goes: the pods of one workload ask the same question every cycle."""
        if not self.by_role[role]:
            return []
        key = (role, pod_namespace, tuple(labels.items()), tuple(ns_labels.items()))
        hit = self._matched.get(key)
        if hit is not None and hit[0] == self._terms_version:
            return hit[1]
        found = [(t, c) for t, c in self.by_role[role].items() if t.matches(pod_namespace, labels, ns_labels)]
        if len(self._matched) >= CACHE_LIMIT:
            self._matched.clear()
        self._matched[key] = (self._terms_version, found)
        return found

    def carried_in(self, namespaces: frozenset[str], role: str) -> dict[AffinityTerm, dict[str, int]]:
        """Per term of ``role``, how many of its carriers in ``namespaces`` sit on each node:
        the part of :attr:`by_role` to take out when those pods are exempt (daemons). Costs
        what those namespaces' pods with terms cost, not a walk over every pod."""
        out: dict[AffinityTerm, dict[str, int]] = {}
        for namespace in namespaces:
            for key in self._by_namespace.get(namespace, ()):
                node, _, flat = self._records[key]
                for r, term in flat:
                    if r == role:
                        per_node = out.setdefault(term, {})
                        per_node[node] = per_node.get(node, 0) + 1
        return out

    def on_event(self, event: ClusterEvent) -> None:
        if event.kind != Pod.KIND or event.echo:  # its pair (the UPDATED, the DELETED) puts or drops it
            return
        pod = event.obj
        if event.type in (EventType.UNBOUND, EventType.DELETED):
            self._drop(pod.key)
            return
        old = event.old
        if (
            event.type is EventType.UPDATED
            and old is not None
            and old.spec.affinity is pod.spec.affinity
            and old.spec.node_name == pod.spec.node_name
            and old.is_finished == pod.is_finished
        ):
            return  # what _put reads is unchanged (a status or label update): so is the record
        # ADDED, UPDATED, BOUND: the object as it is now (bound pods carry spec.nodeName)
        self._put(pod.key, pod)


_INDEXES: weakref.WeakKeyDictionary[ClusterState, ExistingTerms] = weakref.WeakKeyDictionary()


def existing_terms(cluster: ClusterState) -> ExistingTerms:
    """The terms of the cluster's bound pods; built by one scan on first use, then
    maintained by a state listener."""
    return kept_per_cluster(_INDEXES, cluster, lambda: ExistingTerms(cluster), kinds=(Pod.KIND,))


def domain_sums(
    cluster: ClusterState, key: str, per_node: np.ndarray, *, kept: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(codes, sums): the node label column for ``key`` and ``per_node`` summed over each of
    its values (topology domains); nodes without the key (code -1) add to none. ``kept``:
    ``per_node`` is a vector kept current in place (a pod_counts view, a term's carriers),
    whose sums a DomainTally keeps between cycles."""
    codes, values = cluster.node_label_column(key)
    if not values:
        return codes, np.zeros(0, dtype=np.int64)
    if one_node_each(codes, values):  # kubernetes.io/hostname: each domain is one node
        sums = np.empty(len(values), dtype=np.int64)
        sums[codes] = per_node
        return codes, sums
    if kept:
        return codes, domain_tally(cluster, key, frozenset((key,)), per_node).current()
    has = codes >= 0
    sums = np.bincount(codes[has], weights=per_node[has], minlength=len(values)).astype(np.int64)
    return codes, sums


#: the last label column one_node_each judged, and its answer (columns are immutable)
_LAST_COLUMN: list[tuple[np.ndarray, bool]] = []


def one_node_each(codes: np.ndarray, values: tuple[str, ...]) -> bool:
    """Whether every node carries the label with a value no other node has (the hostname
    label): then a domain's sum is its node's own count, with no bincount to make."""
    if len(values) != len(codes):
        return False
    if _LAST_COLUMN and _LAST_COLUMN[0][0] is codes:
        return _LAST_COLUMN[0][1]
    answer = bool(len(codes) == 0 or codes.min() >= 0)
    _LAST_COLUMN[:] = [(codes, answer)]
    return answer
