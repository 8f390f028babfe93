"""PreFilter and Filter: the hard (DoNotSchedule) constraints.

PreFilter counts, per constraint, the matching pods of every topology domain over all nodes
that carry every constraint's key and pass the constraint's inclusion policies; Filter then
rejects a node whose domain would exceed maxSkew over the global minimum with the pod on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import FilterResult, StateKey, Status
from kubespread.scheduler.node_memo import domain_tally
from kubespread.scheduler.plugins.podtopologyspread.common import (
    InclusionMasks,
    SpreadConstraint,
    has_all_keys,
    matching_counts,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "ConstraintCounts",
    "PreFilterState",
    "compute_pre_filter_state",
    "filter_nodes",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_MISSING_LABEL: Final = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
_SKEW: Final = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)


@dataclass(frozen=True, slots=True)
class ConstraintCounts:
    """One hard constraint, counted: ``codes`` maps node id to domain (-1: no label),
    ``domain_counts`` the matching pods per domain code (0 for domains with no eligible node,
    as kube's map lookup gives), ``min_match`` the global minimum after minDomains.
    ``eligible`` (per node id) is the nodes whose pods and domains count (every constraint's
    key, and the inclusion policies), ``present`` (per domain code) the domains they span:
    the Filter does not read them, ``kubespread.scheduler.views`` shows them."""

    constraint: SpreadConstraint
    codes: np.ndarray
    domain_counts: np.ndarray
    num_domains: int
    min_match: int
    self_match: int
    eligible: np.ndarray
    present: np.ndarray


@dataclass(frozen=True, slots=True)
class PreFilterState:
    constraints: tuple[ConstraintCounts, ...]


PRE_FILTER_STATE_KEY: Final = StateKey("PreFilterPodTopologySpread", PreFilterState)


def compute_pre_filter_state(
    cluster: ClusterState, pod: Pod, constraints: Sequence[SpreadConstraint], masks: InclusionMasks
) -> PreFilterState:
    """calPreFilterState over all nodes: per constraint, the matching pods per domain (kept
    between cycles by a DomainTally when the inclusion policies leave no node out, else one
    bincount)."""
    keys = frozenset(c.topology_key for c in constraints)
    base: np.ndarray | None = None
    labels = pod.metadata.labels
    out = []
    for c in constraints:
        codes, values = cluster.node_label_column(c.topology_key)
        node_counts = matching_counts(cluster, pod, c.selector, empty_counts_all=c.empty_counts_all)
        counts_nothing = (c.selector.empty and not c.empty_counts_all) or c.selector.nothing
        if not counts_nothing and not masks.restricts(pod, c):
            # every node with the keys counts, from a live pod_counts view: the kept tally
            tally = domain_tally(cluster, c.topology_key, keys, node_counts)
            eligible, domain_counts, present = tally.base, tally.current(), tally.present
        else:
            if base is None:
                base = has_all_keys(cluster, constraints)
            eligible = base
            policy = masks.eligible(cluster, pod, c)
            if policy is not None:
                eligible = eligible & policy
            dom = codes[eligible]
            counts = node_counts[eligible]
            domain_counts = np.bincount(dom, weights=counts, minlength=len(values)).astype(np.int64)
            present = np.bincount(dom, minlength=len(values)) > 0
        num_domains = int(present.sum())
        # With no domain at all kube's minimum stays MaxInt32, but 0 domains is always fewer
        # than minDomains (>= 1), so the minimum is 0 then too.
        min_match = int(domain_counts[present].min()) if num_domains else 0
        if num_domains < c.min_domains:
            min_match = 0
        self_match = int(c.selector.matches(labels))
        out.append(
            ConstraintCounts(c, codes, domain_counts, num_domains, min_match, self_match, eligible, present)
        )
    return PreFilterState(tuple(out))


def filter_nodes(s: PreFilterState, nodes: np.ndarray) -> FilterResult:
    """Filter for a batch of node ids. Constraints are checked in order and the first that
    fails decides, so a node missing the key of a later constraint still fails for the skew
    of an earlier one. A constraint's verdict depends on the node's domain alone: one table
    per constraint, by domain code, with the missing-label verdict last (where code -1
    reads), then one gather per constraint."""
    which: np.ndarray | None = None
    for cc in s.constraints:
        skewed = cc.domain_counts + cc.self_match - cc.min_match > cc.constraint.max_skew
        table = np.append(np.where(skewed, 1, -1), 0).astype(np.int32)
        verdict = table[cc.codes[nodes]]
        which = verdict if which is None else np.where(which >= 0, which, verdict)
    if which is None:
        which = np.full(len(nodes), -1, dtype=np.int32)
    return FilterResult(which, (_MISSING_LABEL, _SKEW))
