"""PreScore, Score and NormalizeScore: the soft (ScheduleAnyway) constraints.

A node's raw score sums, over the constraints whose key it carries, ``count * log(domains + 2)
+ (maxSkew - 1)``: ``count`` the matching pods of its domain (of the node itself for the
hostname key), ``domains`` how many domains the feasible nodes span. Fewer matching pods is
better, so NormalizeScore inverts: ``100 * (max + min - score) / max``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import MAX_NODE_SCORE, StateKey
from kubespread.scheduler.plugins.podtopologyspread.common import (
    HOSTNAME,
    InclusionMasks,
    SpreadConstraint,
    matching_counts,
    nodes_with_keys,
)

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "ScoredConstraint",
    "compute_pre_score_state",
    "normalize_scores",
    "score_nodes",
    "topology_normalizing_weight",
]


@dataclass(frozen=True, slots=True)
class ScoredConstraint:
    """One soft constraint, counted. ``codes`` is the node's own label code (-1: no label: the
    constraint adds nothing to its score); ``domains`` the code its pods were counted under
    (with System defaulting a node without the key counts under the "" value); ``counts``
    per domain, or per node id for the hostname key."""

    constraint: SpreadConstraint
    hostname: bool
    codes: np.ndarray
    domains: np.ndarray
    counts: np.ndarray
    weight: float


@dataclass(frozen=True, slots=True)
class PreScoreState:
    constraints: tuple[ScoredConstraint, ...]
    ignored: np.ndarray  # per node id: feasible but missing a topology key, scored 0
    #: no node is ignored (every node has every key): Score and NormalizeScore skip the mask
    none_ignored: bool = False


PRE_SCORE_STATE_KEY: Final = StateKey("PreScorePodTopologySpread", PreScoreState)


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): counts in a topology with many domains weigh more than in one with few."""
    return math.log(size + 2)


def compute_pre_score_state(
    cluster: ClusterState,
    pod: Pod,
    constraints: Sequence[SpreadConstraint],
    feasible: np.ndarray,
    require_all_topologies: bool,
    masks: InclusionMasks,
) -> PreScoreState:
    """initPreScoreState + PreScore. ``require_all_topologies`` is False only for System default
    constraints, so that nodes without a zone label still spread by hostname."""
    n = cluster.num_nodes
    ignored = np.zeros(n, dtype=bool)
    none_ignored = True
    if require_all_topologies:
        base, every = nodes_with_keys(cluster, constraints)
        if every:
            scored = feasible
        else:
            ignored[feasible] = ~base[feasible]
            scored = feasible[base[feasible]]
            none_ignored = False
    else:
        base = np.ones(n, dtype=bool)
        scored = feasible
    out = []
    for c in constraints:
        codes, values = cluster.node_label_column(c.topology_key)
        node_counts = matching_counts(cluster, pod, c.selector, empty_counts_all=c.empty_counts_all)
        if c.topology_key == HOSTNAME:
            weight = topology_normalizing_weight(len(scored))
            out.append(ScoredConstraint(c, True, codes, codes, np.asarray(node_counts), weight))
            continue
        domains = codes
        num_codes = len(values)
        if not require_all_topologies:
            # node.Labels[key] of a node without the key is "": one more domain, shared with
            # nodes whose value is "".
            empty = values.index("") if "" in values else num_codes
            num_codes += 1
            domains = np.where(codes < 0, empty, codes)
        present = np.zeros(num_codes, dtype=bool)
        present[domains[scored]] = True
        eligible = base
        policy = masks.eligible(cluster, pod, c)
        if policy is not None:
            eligible = eligible & policy
        counts = np.bincount(domains[eligible], weights=node_counts[eligible], minlength=num_codes)
        counts = np.where(present, counts, 0).astype(np.int64)
        weight = topology_normalizing_weight(int(present.sum()))
        out.append(ScoredConstraint(c, False, codes, domains, counts, weight))
    return PreScoreState(tuple(out), ignored, none_ignored)


def _go_round(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """math.Round for non-negative values: halves away from zero (np.round goes to even)."""
    whole = np.trunc(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


def score_nodes(s: PreScoreState, nodes: np.ndarray) -> np.ndarray:
    """Raw scores for a batch of node ids (ignored nodes 0), summed constraint by constraint
    in float64 as kube does, then rounded."""
    total = np.zeros(len(nodes), dtype=np.float64)
    for sc in s.constraints:
        code = sc.codes[nodes]
        has = code >= 0
        if sc.hostname:
            cnt = sc.counts[nodes]
        elif sc.counts.size:
            dom = sc.domains[nodes]
            cnt = sc.counts[np.where(dom >= 0, dom, 0)]
        else:  # no node carries the key: no domain to count (and ``has`` is False everywhere)
            cnt = np.zeros(len(nodes), dtype=np.int64)
        part = cnt.astype(np.float64) * sc.weight + float(sc.constraint.max_skew - 1)
        total = np.where(has, total + part, total)
    out = _go_round(total)
    if not s.none_ignored:
        out[s.ignored[nodes]] = 0
    return out


def normalize_scores(s: PreScoreState, nodes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Ignored nodes get 0; the others 100 * (max + min - score) // max over the others, or
    100 each when the highest is 0."""
    scores = np.asarray(scores, dtype=np.int64)
    ignored = None if s.none_ignored else s.ignored[nodes]
    valid = scores if ignored is None else scores[~ignored]
    out = np.zeros(len(scores), dtype=np.int64)
    if len(valid) == 0:
        return out
    top, bottom = int(valid.max()), int(valid.min())
    if top == 0:
        out[:] = MAX_NODE_SCORE
    else:
        out = MAX_NODE_SCORE * (top + bottom - scores) // top
    if ignored is not None:
        out[ignored] = 0
    return out
