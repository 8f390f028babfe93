"""PreFilter and Filter of InterPodAffinity (kube's filtering.go), on per-node vectors.

PreFilter computes three things, each as kube's topology-pair counts turned into node masks:

* required affinity of the incoming pod: per node, whether every term's topology domain
  holds a pod matching *all* terms (one combined pod_counts vector, bincount per key);
* required anti-affinity of the incoming pod: per term, whether the node's domain holds a
  pod matching that term;
* existing pods' required anti-affinity against the incoming pod (the symmetry): the
  topology pairs (key, value of the existing pod's node) that are closed to it.

Filter then applies them in kube's order: affinity, anti-affinity, existing anti-affinity.

Required terms of the design's RequiredDuringExecution form are in the same lists as the
IgnoredDuringExecution ones (see common.pod_terms). With daemon co-existence (a kubespread
option, off by default) both anti-affinity checks leave out every pair of pods of which one
is in a daemon namespace; required affinity is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.api.selectors import Selector
from kubespread.scheduler.framework import (
    SKIP,
    SUCCESS,
    CycleState,
    FilterResult,
    PreFilterResult,
    StateKey,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.plugins.interpodaffinity.common import (
    AffinityTerm,
    PodTerms,
    combined_count_key,
    domain_sums,
    existing_terms,
    namespace_labels,
    one_node_each,
    pod_terms,
)

if TYPE_CHECKING:
    from kubespread.cluster.nodeinfo import NodeInfo
    from kubespread.cluster.state import ClusterState

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PreFilterState",
    "cached_pod_terms",
    "filter_nodes",
    "pre_filter",
]

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"


_AFFINITY_STATUS: Final = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY_STATUS: Final = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING_STATUS: Final = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)


@dataclass(slots=True)
class PreFilterState:
    """Per node id: which of the three checks reject it (valid for this cycle's node set)."""

    affinity_fails: np.ndarray
    anti_affinity_fails: np.ndarray
    existing_anti_fails: np.ndarray


PRE_FILTER_KEY: Final = StateKey("PreFilterInterPodAffinity", PreFilterState)
POD_TERMS_KEY: Final = StateKey("InterPodAffinityPodTerms", PodTerms)


def cached_pod_terms(state: CycleState, pod: Pod) -> PodTerms:
    """The incoming pod's parsed terms, parsed once per cycle."""
    try:
        return state.read(POD_TERMS_KEY)
    except StateNotFoundError:
        terms = pod_terms(pod)
        state.write(POD_TERMS_KEY, terms)
        return terms


def _domain_counts(cluster: ClusterState, key: str, per_node: np.ndarray) -> np.ndarray:
    """Per node id, the sum of ``per_node`` over the node's topology domain for ``key``;
    -1 for nodes lacking the key (so '> 0' and '== -1' tell the cases apart)."""
    codes, values = cluster.node_label_column(key)
    if values and one_node_each(codes, values):
        return per_node  # each node its own domain, every node labelled
    # a read-only vector is a pod_counts view, kept current in place; others are temporaries
    codes, sums = domain_sums(cluster, key, per_node, kept=not per_node.flags.writeable)
    if not len(sums):
        return np.full(len(codes), -1, dtype=np.int64)
    return np.where(codes >= 0, sums[codes], -1)


def _affinity_fails(cluster: ClusterState, pod: Pod, terms: PodTerms) -> np.ndarray:
    """satisfyPodAffinity's negation for every node: a node fails when it lacks a term's
    topology key, or some term's domain holds no pod matching all terms — unless no such
    pod exists anywhere (in a domain) and the pod matches its own terms (the first pod)."""
    n = cluster.num_nodes
    required = terms.required_affinity
    if not required:
        return np.zeros(n, dtype=bool)
    keys = [t.count_key(cluster) for t in required]
    ns, sel = combined_count_key(keys)
    if sel.nothing or (ns is not None and not ns):
        matching = np.zeros(n, dtype=np.int64)
    else:
        matching = cluster.pod_counts(ns, sel, include_terminating=True)
    lacks_key = np.zeros(n, dtype=bool)
    pods_missing = np.zeros(n, dtype=bool)
    any_counted = False
    for t in required:
        dom = _domain_counts(cluster, t.topology_key, matching)
        lacks_key |= dom < 0
        pods_missing |= dom == 0
        any_counted = any_counted or bool((dom > 0).any())
    if not any_counted:
        pod_ns, labels = pod.namespace, pod.metadata.labels
        self_match = all((k_ns is None or pod_ns in k_ns) and k_sel.matches(labels) for k_ns, k_sel in keys)
        if self_match:
            pods_missing[:] = False
    return lacks_key | pods_missing


def _anti_affinity_counts(
    cluster: ClusterState, ns: frozenset[str] | None, sel: Selector, daemons: frozenset[str]
) -> np.ndarray | None:
    """Per node, the pods an incoming pod's required anti-affinity term counts: those in
    ``ns`` (None: every namespace) matching ``sel``, less any in a daemon namespace; None
    when no pod can count."""
    if daemons:
        if ns is None:
            counts = cluster.pod_counts(None, sel, include_terminating=True)
            return counts - cluster.pod_counts(daemons, sel, include_terminating=True)
        ns = ns - daemons
    if sel.nothing or (ns is not None and not ns):
        return None
    return cluster.pod_counts(ns, sel, include_terminating=True)


def _anti_affinity_fails(
    cluster: ClusterState, pod: Pod, terms: PodTerms, daemons: frozenset[str] = frozenset()
) -> np.ndarray:
    """satisfyPodAntiAffinity's negation: the node's domain for some term holds a pod
    matching that term (nodes lacking the key are never blocked by it). With daemon
    co-existence, pods in ``daemons`` count for no term, and a daemon's terms count nothing."""
    fails = np.zeros(cluster.num_nodes, dtype=bool)
    if daemons and pod.namespace in daemons:
        return fails
    for t in terms.required_anti_affinity:
        ns, sel = t.count_key(cluster)
        if sel.nothing:
            continue
        counts = _anti_affinity_counts(cluster, ns, sel, daemons)
        if counts is not None:
            fails |= _domain_counts(cluster, t.topology_key, counts) > 0
    return fails


def _existing_anti_fails(
    cluster: ClusterState, pod: Pod, daemons: frozenset[str] = frozenset()
) -> np.ndarray:
    """satisfyExistingPodsAntiAffinity's negation: the node shares a (key, value) label with
    the node of an existing pod whose required anti-affinity term matches the incoming pod.

    Each distinct term is matched once; its carriers' nodes give the closed domains. With
    daemon co-existence, carriers in ``daemons`` are taken out (from the index's few pods of
    those namespaces) and a pod in ``daemons`` is blocked by no one."""
    fails = np.zeros(cluster.num_nodes, dtype=bool)
    index = existing_terms(cluster)
    carried = index.by_role["required_anti_affinity"]
    if not carried:
        return fails
    pod_ns, labels = pod.namespace, pod.metadata.labels
    exempt: dict[AffinityTerm, dict[str, int]] = {}
    if daemons:
        if pod_ns in daemons:
            return fails
        exempt = index.carried_in(daemons, "required_anti_affinity")
    ns_labels = namespace_labels(cluster, pod_ns)
    for term, carriers in index.matching("required_anti_affinity", pod_ns, labels, ns_labels):
        per_node = carriers.per_node(cluster)
        skip = exempt.get(term)
        if skip:
            per_node = per_node.copy()
            for node_name, n in skip.items():
                per_node[cluster.node_index(node_name)] -= n
        codes, values = cluster.node_label_column(term.topology_key)
        if values and one_node_each(codes, values):
            fails |= per_node > 0
            continue
        codes, sums = domain_sums(cluster, term.topology_key, per_node, kept=not skip)
        if len(sums):
            fails |= (codes >= 0) & (sums > 0)[codes]
    return fails


def pre_filter(
    state: CycleState, pod: Pod, daemons: frozenset[str] = frozenset()
) -> tuple[PreFilterResult | None, Status]:
    """Skip when the pod has no required terms and no existing pod's anti-affinity matches it.
    ``daemons``: the daemon namespaces when daemon co-existence is on (empty: kube's rules)."""
    cluster = state.cluster
    terms = cached_pod_terms(state, pod)
    own = terms.required_affinity or terms.required_anti_affinity
    if not own and not existing_terms(cluster).by_role["required_anti_affinity"]:
        return None, SKIP  # nothing to check either way (no bound pod has anti-affinity)
    existing = _existing_anti_fails(cluster, pod, daemons)
    if not terms.required_affinity and not terms.required_anti_affinity and not existing.any():
        return None, SKIP
    state.write(
        PRE_FILTER_KEY,
        PreFilterState(
            affinity_fails=_affinity_fails(cluster, pod, terms),
            anti_affinity_fails=_anti_affinity_fails(cluster, pod, terms, daemons),
            existing_anti_fails=existing,
        ),
    )
    return None, SUCCESS


def _state(state: CycleState, pod: Pod, daemons: frozenset[str]) -> PreFilterState:
    try:
        return state.read(PRE_FILTER_KEY)
    except StateNotFoundError:  # Filter without PreFilter (direct calls): compute it now
        pass
    pre_filter(state, pod, daemons)
    try:
        return state.read(PRE_FILTER_KEY)
    except StateNotFoundError:  # PreFilter would have skipped: nothing rejects
        n = state.cluster.num_nodes
        got = PreFilterState(*(np.zeros(n, dtype=bool) for _ in range(3)))
        state.write(PRE_FILTER_KEY, got)
        return got


def filter_nodes(
    state: CycleState, pod: Pod, nodes: np.ndarray, daemons: frozenset[str] = frozenset()
) -> FilterResult:
    """The first failing check per node, in kube's order; -1 where all pass."""
    s = _state(state, pod, daemons)
    which = np.full(len(nodes), -1, dtype=np.int32)
    which[s.existing_anti_fails[nodes]] = 2
    which[s.anti_affinity_fails[nodes]] = 1
    which[s.affinity_fails[nodes]] = 0
    return FilterResult(which, (_AFFINITY_STATUS, _ANTI_AFFINITY_STATUS, _EXISTING_STATUS))


def filter_one(state: CycleState, pod: Pod, node: NodeInfo, daemons: frozenset[str] = frozenset()) -> Status:
    s = _state(state, pod, daemons)
    i = node.index
    if s.affinity_fails[i]:
        return _AFFINITY_STATUS
    if s.anti_affinity_fails[i]:
        return _ANTI_AFFINITY_STATUS
    if s.existing_anti_fails[i]:
        return _EXISTING_STATUS
    return SUCCESS
