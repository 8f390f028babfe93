"""PreScore, Score and NormalizeScore of InterPodAffinity (kube's scoring.go).

PreScore builds kube's topologyScore: topology key → value → summed weight. The incoming
pod's preferred terms add ±weight per matching existing pod in the pod's domain (counted
with pod_counts and a bincount per key); each existing pod with terms adds its required
affinity terms (hardPodAffinityWeight) and its preferred terms when they match the
incoming pod. Score sums, over the keys the node has, the entry for the node's value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.scheduler.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    CycleState,
    StateKey,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.plugins.interpodaffinity.common import (
    AffinityTerm,
    domain_sums,
    existing_terms,
    namespace_labels,
)
from kubespread.scheduler.plugins.interpodaffinity.filtering import cached_pod_terms

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = ["PRE_SCORE_KEY", "PreScoreState", "normalize_scores", "pre_score", "score_nodes"]


@dataclass(slots=True)
class PreScoreState:
    """topologyScore as per-key vectors aligned with node_label_column(key)'s values."""

    topology_score: dict[str, np.ndarray]


PRE_SCORE_KEY: Final = StateKey("PreScoreInterPodAffinity", PreScoreState)


class _TopologyScore:
    """Accumulates kube's scoreMap; ``touched`` mirrors whether any entry was ever created
    (kube skips scoring when none was, even if entries would sum to zero)."""

    __slots__ = ("cluster", "scores", "touched")

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.scores: dict[str, np.ndarray] = {}
        self.touched = False

    def add_domains(self, key: str, per_node: np.ndarray, amount: int) -> None:
        """``amount`` times ``per_node`` (a vector kept current in place: a pod_counts view or
        a term's carriers) summed over each domain of ``key``; an entry is created
        (``touched``) when a counted node carries the key, as kube's map does."""
        _, sums = domain_sums(self.cluster, key, per_node, kept=True)
        if not sums.any():
            return
        vec = self.scores.get(key)
        if vec is None:
            vec = self.scores[key] = np.zeros(len(sums), dtype=np.int64)
        vec += sums * amount
        self.touched = True

    def add_counts(self, term: AffinityTerm, multiplier: int) -> None:
        """The incoming pod's term: weight * (matching pods in each domain)."""
        ns, sel = term.count_key(self.cluster)
        if sel.nothing or (ns is not None and not ns):
            return
        counts = self.cluster.pod_counts(ns, sel, include_terminating=True)
        self.add_domains(term.topology_key, counts, term.weight * multiplier)


def pre_score(state: CycleState, pod: Pod, hard_weight: int, ignore_existing_preferred: bool) -> Status:
    """Skip when kube would: preferred terms of existing pods ignored and the pod has none,
    or no term matched anything on a node carrying its topology key."""
    cluster = state.cluster
    terms = cached_pod_terms(state, pod)
    has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
    if ignore_existing_preferred and not has_constraints:
        return SKIP
    topo = _TopologyScore(cluster)
    for t in terms.preferred_affinity:
        topo.add_counts(t, 1)
    for t in terms.preferred_anti_affinity:
        topo.add_counts(t, -1)

    # existing pods' terms that match the incoming pod, each distinct term once, weighted by
    # how many pods carry it in each domain
    pod_ns, labels = pod.namespace, pod.metadata.labels
    ns_labels = namespace_labels(cluster, pod_ns)
    index = existing_terms(cluster)
    for role, fixed, sign in (
        ("required_affinity", hard_weight, 0),
        ("preferred_affinity", 0, 1),
        ("preferred_anti_affinity", 0, -1),
    ):
        if role == "required_affinity" and hard_weight <= 0:
            continue
        for term, carriers in index.matching(role, pod_ns, labels, ns_labels):
            topo.add_domains(term.topology_key, carriers.per_node(cluster), fixed + sign * term.weight)

    if not topo.touched:
        return SKIP
    state.write(PRE_SCORE_KEY, PreScoreState(topo.scores))
    return SUCCESS


def score_nodes(state: CycleState, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    """Per node: the sum over topologyScore's keys the node carries of its value's entry."""
    out = np.zeros(len(nodes), dtype=np.int64)
    try:
        s = state.read(PRE_SCORE_KEY)
    except StateNotFoundError:  # Score without PreScore (direct calls)
        return out
    cluster = state.cluster
    for key, vec in s.topology_score.items():
        codes = cluster.node_label_column(key)[0][nodes]
        has = codes >= 0
        out[has] += vec[codes[has]]
    return out


def normalize_scores(state: CycleState, scores: np.ndarray) -> np.ndarray:
    """100 * (score - min) / (max - min) over the scored nodes, truncated; all 0 when equal."""
    try:
        s = state.read(PRE_SCORE_KEY)
    except StateNotFoundError:  # NormalizeScore without PreScore (direct calls)
        return scores
    if not s.topology_score or len(scores) == 0:
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    frac = (scores - lo).astype(np.float64) / np.float64(diff)
    return (np.float64(MAX_NODE_SCORE) * frac).astype(np.int64)
