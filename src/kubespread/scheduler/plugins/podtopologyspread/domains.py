"""A pod's spread constraints as the scheduler counts them, for people to read.

``kubespread schedule`` shows each constraint's pods per domain and skew against maxSkew,
and ``explain`` turns the same counts into hints (which domains a DoNotSchedule constraint
leaves open, which nodes are bypassed, whether minDomains forced the minimum to 0). Both
use the Filter's own PreFilter computation, so what they say is what the Filter decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubespread.api.core import Pod
from kubespread.scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    InclusionMasks,
    SpreadConstraint,
    build_default_constraints,
    parse_constraints,
)
from kubespread.scheduler.plugins.podtopologyspread.filtering import compute_pre_filter_state
from kubespread.scheduler.plugins.tainttoleration import untolerated_nodes

if TYPE_CHECKING:
    from kubespread.api.core import TopologySpreadConstraint
    from kubespread.cluster.state import ClusterState

__all__ = ["ConstraintView", "constraint_views"]


@dataclass(frozen=True, slots=True)
class ConstraintView:
    """One constraint of a pod, counted over the cluster as it is now.

    ``domains``: matching pods per eligible domain (every domain with a node the policies
    admit); ``min_match``: the global minimum the Filter uses (0 when fewer than minDomains
    domains); ``allowed``: the domains where one more matching pod keeps the skew within
    maxSkew (``self_match`` is 1 when the pod matches its own selector);
    ``missing_key``: nodes without the topology key (bypassed); ``tainted_domains``: domains
    whose every counted node has a taint the pod does not tolerate, yet count (nodeTaintsPolicy
    Ignore), with those nodes."""

    constraint: SpreadConstraint
    when_unsatisfiable: str
    defaulted: bool
    domains: dict[str, int]
    min_match: int
    self_match: int
    allowed: tuple[str, ...]
    missing_key: tuple[str, ...]
    tainted_domains: dict[str, tuple[str, ...]]

    @property
    def skew(self) -> int:
        """max - global minimum over the eligible domains, as the pods stand now."""
        return (max(self.domains.values()) - self.min_match) if self.domains else 0

    @property
    def within(self) -> bool:
        return self.skew <= self.constraint.max_skew

    def to_dict(self) -> dict[str, Any]:
        c = self.constraint
        return {
            "topologyKey": c.topology_key,
            "maxSkew": c.max_skew,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "minDomains": c.min_domains,
            "nodeAffinityPolicy": c.node_affinity_policy,
            "nodeTaintsPolicy": c.node_taints_policy,
            "defaulted": self.defaulted,
            "domains": self.domains,
            "globalMinimum": self.min_match,
            "skew": self.skew,
            "withinMaxSkew": self.within,
            "allowedDomains": list(self.allowed),
            "nodesMissingKey": list(self.missing_key),
            "taintedDomainsCounted": {d: list(n) for d, n in self.tainted_domains.items()},
        }


def constraint_views(
    cluster: ClusterState, pod: Pod, default_constraints: list[TopologySpreadConstraint] | None = None
) -> list[ConstraintView]:
    """The pod's constraints (DoNotSchedule first, then ScheduleAnyway), or the default ones
    when it has none (``default_constraints``: the profile's PodTopologySpread defaults)."""
    masks = InclusionMasks()
    views = []
    node_names = cluster.node_names
    for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        defaulted = not pod.spec.topology_spread_constraints
        if defaulted:
            constraints = build_default_constraints(default_constraints or [], pod, cluster, action)
        else:
            constraints = parse_constraints(pod.spec.topology_spread_constraints, action)
        if not constraints:
            continue
        untolerated = untolerated_nodes(cluster, pod.spec.tolerations)
        for c in constraints:
            # one at a time: the Filter's nodes-with-every-key rule would hide each one's own view
            (cc,) = compute_pre_filter_state(cluster, pod, [c], masks).constraints
            codes, values = cluster.node_label_column(c.topology_key)
            eligible = codes >= 0
            policy = masks.eligible(cluster, pod, c)
            if policy is not None:
                eligible = eligible & policy
            present = np.zeros(len(values), dtype=bool)
            present[codes[eligible]] = True
            domains = {values[i]: int(cc.domain_counts[i]) for i in np.flatnonzero(present)}
            allowed = tuple(d for d, n in domains.items() if n + cc.self_match - cc.min_match <= c.max_skew)
            tainted: dict[str, tuple[str, ...]] = {}
            if c.node_taints_policy != HONOR:
                for i in np.flatnonzero(present):
                    members = eligible & (codes == i)
                    if untolerated[members].all():
                        tainted[values[i]] = tuple(str(n) for n in node_names[members])
            views.append(
                ConstraintView(
                    constraint=c,
                    when_unsatisfiable=action,
                    defaulted=defaulted,
                    domains=domains,
                    min_match=cc.min_match,
                    self_match=cc.self_match,
                    allowed=allowed,
                    missing_key=tuple(str(n) for n in node_names[codes < 0]),
                    tainted_domains=tainted,
                )
            )
    return views
