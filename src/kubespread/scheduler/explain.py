"""Why a pod goes where it goes, or nowhere: a Decision as a table a person reads, plus hints.

DESIGN: "The CLI's explain is just a view of [the decision]". Every node gets a row: the
filter verdict (stage, plugin, kube-scheduler's reasons) or each score plugin's normalized
and weighted score and the total, sorted best first with the winner marked; a node the
scheduler's sampling never reached says so (``examined``), and ``sampling_summary`` says where
the visit started and where Filter stopped. Under it, hints
in plain language for the failures seen, drawn from the Kubernetes documentation and KEPs
(../shared/spec): conflicting spread constraints, bypassed nodes without the topology key,
minDomains, nodeTaintsPolicy, required (anti-)affinity and its symmetry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubespread.api.core import Node, Pod
from kubespread.api.keys import LABEL_HOSTNAME as HOSTNAME
from kubespread.api.keys import zone_of
from kubespread.api.quantity import Format, Quantity
from kubespread.api.resources import Resources, pod_requests
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.decision import TIE_HEAP, TIE_SMALLEST_NAME, Decision, sampling_dict
from kubespread.scheduler.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from kubespread.scheduler.plugins.noderesources.fit import (
    REASON_CPU,
    REASON_EPHEMERAL_STORAGE,
    REASON_MEMORY,
    REASON_TOO_MANY_PODS,
)
from kubespread.scheduler.plugins.podtopologyspread.common import DO_NOT_SCHEDULE
from kubespread.scheduler.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from kubespread.scheduler.predicates import required_pod_terms
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.selection import ADAPTIVE, MIN_FEASIBLE_NODES_TO_FIND
from kubespread.scheduler.timings import CycleTimings
from kubespread.scheduler.views import ConstraintView, Preemption, preemption_entry, profile_views, tie_view

__all__ = ["Explanation", "explain", "sampling_summary"]

_PTS = "PodTopologySpread"
_DOCS = "Kubernetes docs, Pod Topology Spread Constraints"


@dataclass
class Explanation:
    decision: Decision
    #: score plugins that ran, in profile order (the table's columns)
    plugins: list[str]
    #: one per node, best first (see ``explain``)
    nodes: list[dict[str, Any]]
    spread: list[ConstraintView]
    hints: list[str]
    #: the preemptions to show for the pod (scheduler.views.preemption_entry): those a run
    #: made for it, then the one this decision would make
    preemptions: list[Preemption] = field(default_factory=list)
    #: the node a bound pod runs on (it is explained as if scheduled now, without itself)
    running_on: str | None = None
    #: where the decision's cycle spent its time (the Decision's), None when it was not timed
    timings: CycleTimings | None = None
    #: the cluster the decision was made on (tie zones are read from it)
    cluster: ClusterState | None = field(default=None, repr=False)

    def runs_on(self, node: str) -> None:
        """For a bound pod explained as if scheduled now: where it runs; the tie hint says so
        when that is another of the tied best nodes (picked when it was placed), so it does not
        read as if the pod should have gone elsewhere."""
        self.running_on = node
        if self.cluster is None:
            return
        old = _tie_hint(self.decision, self.cluster)
        new = _tie_hint(self.decision, self.cluster, running_on=node)
        if old and old != new:
            self.hints[self.hints.index(old[0])] = new[0]

    def to_dict(self) -> dict[str, Any]:
        """The explanation as data; ``timings`` (CycleTimings.to_dict) only when timed."""
        d = self.decision
        out = {
            "pod": d.pod_key,
            "scheduled": d.scheduled,
            "selectedNode": d.selected,
            "selectionReason": d.selection_reason or None,
            "fitError": d.fit_error or None,
            "fitErrorWithoutPostFilter": d.fit_error_without_post_filter or None,
            "plugins": self.plugins,
            "nodes": self.nodes,
            "spreadConstraints": [v.to_dict() for v in self.spread],
            "hints": self.hints,
            "preemptions": [p.to_dict() for p in self.preemptions],
            "runningOn": self.running_on,
        }
        if d.sampling is not None:
            out["sampling"] = sampling_dict(d)
            out["samplingSummary"] = sampling_summary(d)
        if d.scheduled and self.cluster is not None:
            out.update(tie_view(d, self.cluster).to_dict())
        if self.timings is not None:
            out["timings"] = self.timings.to_dict()
        return out


def _zone(node: Node | None) -> str | None:
    if node is None:
        return None
    return zone_of(node.metadata.labels)


def _rows(decision: Decision, cluster: ClusterState, profile: Profile) -> list[dict[str, Any]]:
    """Scored nodes by total (highest first, then name), the only feasible node, then the
    rejected ones: those that passed more filters first (a later rejecting plugin); then the
    nodes sampling never examined, in the order the visit would have reached them."""
    rejections = decision.rejections
    order = {pl.name: i for i, pl in enumerate(profile.filter)}
    feasible = set(decision.feasible)
    sm = decision.sampling
    unexamined: dict[str, int] = {}
    if sm is not None:
        unexamined = {n: i for i, n in enumerate(decision.nodes[sm.unexamined_ids].tolist())}
    rows = []
    for name in decision.nodes.tolist():
        row: dict[str, Any] = {
            "name": name,
            "zone": _zone(cluster.nodes.get(name)),
            "feasible": name in feasible,
            "examined": name not in unexamined,
            "winner": name == decision.selected,
            "scores": {},
            "total": None,
        }
        rej = rejections.get(name)
        if rej is not None:
            row.update(rejectedAt=rej.stage, plugin=rej.status.plugin, reasons=list(rej.status.reasons))
        elif name in decision.scored_index:
            row["scores"] = decision.node_scores(name)
            row["total"] = decision.total(name)
        rows.append(row)

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        if r["feasible"]:
            return (0, -(r["total"] or 0), r["name"])
        if not r["examined"]:
            return (2, unexamined[r["name"]], r["name"])
        return (1, -order.get(r["plugin"], -1), r["name"])

    return sorted(rows, key=key)


def explain(decision: Decision, cluster: ClusterState, profile: Profile) -> Explanation:
    """Read ``decision`` (made on ``cluster`` as it is now, under ``profile``)."""
    views = profile_views(cluster, decision.pod, profile)
    plugins = [p for p in decision.scores]
    result = decision.preemption
    preemptions = []
    if result is not None and result.nominated_node:
        preemptions.append(preemption_entry(decision.pod, result, cluster, profile.features))
    return Explanation(
        decision,
        plugins,
        _rows(decision, cluster, profile),
        views,
        hints(decision, cluster, views),
        preemptions,
        timings=decision.timings,
        cluster=cluster,
    )


def sampling_summary(decision: Decision) -> str:
    """One sentence on how kube-scheduler's cycle chose its nodes: where the visit started,
    how many it examined, and why it stopped there."""
    sm = decision.sampling
    assert sm is not None
    names = decision.nodes
    if sm.nominated_first:
        return (
            f"the nominated node {decision.selected} (status.nominatedNodeName) was tried first and "
            "fits: no other node was examined"
        )
    total = len(sm.visit)
    if not total:
        return "no node to visit"
    pct = "adaptive" if sm.percentage == ADAPTIVE else f"{sm.percentage}%"
    first = names[sm.visit[0]]
    text = f"nodes visited in the scheduler's node tree order from {first} (start index {sm.start})"
    if sm.stopped_at >= 0:
        text += (
            f"; Filter stopped at {names[sm.stopped_at]} once {sm.to_find} feasible nodes were found "
            f"(percentageOfNodesToScore {pct}): {sm.examined} of {total} examined, "
            f"{sm.unexamined} not, only the {sm.to_find} found were scored"
        )
    elif sm.to_find < total:
        text += (
            f"; all {total} examined: fewer than {sm.to_find + 1} feasible nodes "
            f"(percentageOfNodesToScore {pct} asks for {sm.to_find})"
        )
    else:
        small = total < MIN_FEASIBLE_NODES_TO_FIND
        below = f"under {MIN_FEASIBLE_NODES_TO_FIND} nodes" if small else f"percentageOfNodesToScore {pct}"
        text += f"; all {total} examined ({below}: every node is searched)"
    if sm.narrowed:
        text += "; a PreFilterResult narrowed the visit (kube-scheduler visits those nodes in random order)"
    return text


# ------------------------------------------------------------------ hints


def _few(names: list[str] | tuple[str, ...], n: int = 3) -> str:
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")


def _domains(domains: dict[str, int]) -> str:
    """Every domain when few, else how many domains hold how many pods (hostname keys)."""
    if len(domains) > 6:
        hist = Counter(domains.values())
        return f"over {len(domains)} domains " + ", ".join(
            f"{hist[n]} with {n}" for n in sorted(hist, reverse=True)
        )
    return " ".join(f"{d}={n}" for d, n in domains.items()) or "(none)"


def _reason_counts(decision: Decision) -> Counter[tuple[str, str]]:
    """(plugin, reason) -> number of nodes it rejected."""
    counts: Counter[tuple[str, str]] = Counter()
    for ids, rej in decision.rejected:
        for reason in rej.status.reasons:
            counts[(rej.status.plugin, reason)] += len(ids)
    return counts


def _spread_hints(
    decision: Decision, views: list[ConstraintView], seen: Counter[tuple[str, str]]
) -> list[str]:
    out = []
    hard = [v for v in views if v.when_unsatisfiable == DO_NOT_SCHEDULE]
    if seen[(_PTS, ERR_REASON_CONSTRAINTS_NOT_MATCH)]:
        for v in hard:
            c = v.constraint
            own = "this pod counts itself" if v.self_match else "this pod does not match its own selector"
            allowed = _few(list(v.allowed), 4) if v.allowed else "none"
            out.append(
                f"Spread on {c.topology_key} (maxSkew {c.max_skew}): matching pods per domain "
                f"{_domains(v.domains)}, global minimum {v.min_match}; {own}, so only domains with at "
                f"most {v.min_match + c.max_skew - v.self_match} matching pods keep the skew within maxSkew: "
                f"{allowed}."
            )
        open_ = [v for v in hard if v.allowed]
        if len(hard) > 1 and len(open_) == len(hard) and not decision.feasible:
            out.append(
                "These spread constraints conflict: each one alone leaves somewhere to go, but no node "
                "satisfies all of them at once. Raise maxSkew, or set whenUnsatisfiable: ScheduleAnyway "
                f"on one of them ({_DOCS}: conflicting topology spread constraints)."
            )
        elif not decision.scheduled:
            out.append(
                "To let the pod in, raise maxSkew, or use whenUnsatisfiable: ScheduleAnyway so the "
                "scheduler only prefers the domains with fewer matching pods "
                f"({_DOCS}: maxSkew, whenUnsatisfiable)."
            )
    if seen[(_PTS, ERR_REASON_NODE_LABEL_NOT_MATCH)]:
        for v in views:
            if v.missing_key:
                out.append(
                    f"{len(v.missing_key)} node(s) have no {v.constraint.topology_key} label "
                    f"({_few(v.missing_key)}): the scheduler bypasses them, so their pods do not count "
                    "toward maxSkew and this pod cannot go there. Label them, or check topologyKey for "
                    f"a typo ({_DOCS}: implicit conventions)."
                )
    for v in views:
        c = v.constraint
        if c.min_domains > 1 and len(v.domains) < c.min_domains and v.when_unsatisfiable == DO_NOT_SCHEDULE:
            out.append(
                f"minDomains {c.min_domains} on {c.topology_key}, but only {len(v.domains)} eligible "
                "domain(s): the global minimum is taken as 0, so no domain may hold more than "
                f"maxSkew ({c.max_skew}) matching pods until more domains exist (KEP-3022, minDomains)."
            )
        if not v.self_match and seen[(_PTS, ERR_REASON_CONSTRAINTS_NOT_MATCH)]:
            out.append(
                f"The labelSelector of the {c.topology_key} constraint does not match the pod's own "
                "labels: placing it will not change the skew it is checked against "
                f"({_DOCS}: implicit conventions)."
            )
    if seen[(_PTS, ERR_REASON_CONSTRAINTS_NOT_MATCH)]:
        for v in hard:
            at_min = {d: nodes for d, nodes in v.tainted_domains.items() if v.domains[d] == v.min_match}
            if at_min:
                nodes = [n for ns in at_min.values() for n in ns]
                out.append(
                    f"{v.constraint.topology_key} domain(s) {_few(list(at_min))} hold the global minimum "
                    f"of {v.min_match}, yet every node there has a taint this pod does not tolerate "
                    f"({_few(nodes)}): with nodeTaintsPolicy: Ignore (the default) such domains still "
                    "count. Set nodeTaintsPolicy: Honor to leave them out (KEP-3094)."
                )
    return out


def _other_hints(decision: Decision, cluster: ClusterState, seen: Counter[tuple[str, str]]) -> list[str]:
    out = []
    pod: Pod = decision.pod
    if seen[("InterPodAffinity", ERR_REASON_AFFINITY_RULES_NOT_MATCH)]:
        out.append(
            "Required pod affinity: the pod may only go to a topology domain that already runs a pod "
            "matching the term's labelSelector in the term's namespaces; no open node is in such a "
            "domain. Only when no matching pod exists anywhere may a pod matching its own term go "
            "anywhere (the first pod of a group; pod affinity design)."
        )
    if n := seen[("InterPodAffinity", ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)]:
        out.append(_anti_affinity_hint(pod, n))
    if n := seen[("InterPodAffinity", ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)]:
        out.append(
            f"Pods already running have required anti-affinity against this pod's labels: their "
            f"domains are closed to it ({n} node(s); anti-affinity is symmetric, pod affinity design)."
        )
    by_plugin: Counter[str] = Counter()  # nodes, each once however many reasons it got
    for ids, rej in decision.rejected:
        by_plugin[rej.status.plugin] += len(ids)
    if n := by_plugin["TaintToleration"]:
        out.append(
            f"{n} node(s) have taints the pod does not tolerate; add a toleration if it is meant "
            "to run there."
        )
    if n := by_plugin["NodeAffinity"]:
        out.append(
            f"{n} node(s) do not match the pod's nodeSelector or required node affinity"
            + (
                "; with nodeAffinityPolicy: Honor (the default) spread constraints count only the "
                "domains of the nodes that match."
                if pod.spec.topology_spread_constraints
                else "."
            )
        )
    if n := by_plugin["NodeResourcesFit"]:
        out.append(_resources_hint(decision, cluster, n))
    if n := by_plugin["NodeUnschedulable"]:
        out.append(f"{n} node(s) are cordoned (spec.unschedulable).")
    if decision.pre_filter_status is not None:
        out.append(
            f"{decision.pre_filter_status.plugin} rejected the pod before any node was looked at "
            "(PreFilter): every node gets that reason."
        )
    return out


def _anti_affinity_hint(pod: Pod, n: int) -> str:
    """What the pod's own required anti-affinity does, by its topologyKeys: a finer key is
    suggested only for the terms that are not per node already."""
    keys = sorted({t.topology_key for t in required_pod_terms(pod)[1]})
    coarse = [k for k in keys if k != HOSTNAME]
    text = (
        f"Required pod anti-affinity on {', '.join(keys) or 'its topologyKey'} closes {n} node(s): "
        "every domain already running a pod its labelSelector matches is out, so at most one such "
        "pod fits per domain"
    )
    if not coarse:
        return (
            text + f" ({HOSTNAME}: one per node). Add nodes where the pod may run, run fewer such pods, "
            "or use preferredDuringSchedulingIgnoredDuringExecution to let them share a node."
        )
    return (
        text + ". Use preferredDuringSchedulingIgnoredDuringExecution, or a finer topologyKey than "
        f"{', '.join(coarse)} such as {HOSTNAME}."
    )


#: NodeResourcesFit's reasons -> (the resource's name, its amount in a Resources, its unit)
_RESOURCE_REASONS: dict[str, tuple[str, Callable[[Resources], int], Callable[[int], str]]] = {
    REASON_CPU: ("cpu", lambda r: r.milli_cpu, lambda v: Quantity.from_milli(v).canonical()),
    REASON_MEMORY: (
        "memory",
        lambda r: r.memory,
        lambda v: Quantity.from_int(v, Format.BINARY_SI).canonical(),
    ),
    REASON_EPHEMERAL_STORAGE: (
        "ephemeral-storage",
        lambda r: r.ephemeral_storage,
        lambda v: Quantity.from_int(v, Format.BINARY_SI).canonical(),
    ),
}


def _resource(reason: str) -> tuple[str, Callable[[Resources], int], Callable[[int], str]] | None:
    """(name, amount, format) of the resource an ``Insufficient X`` reason names."""
    if reason in _RESOURCE_REASONS:
        return _RESOURCE_REASONS[reason]
    prefix = "Insufficient "
    if not reason.startswith(prefix):
        return None
    name = reason[len(prefix) :]
    return name, lambda r: r.scalar.get(name, 0), str


def _resources_hint(decision: Decision, cluster: ClusterState, n: int) -> str:
    """The pod's requests against the most free allocatable (allocatable - requested, as
    NodeResourcesFit compares them) among the nodes rejected for each resource."""
    request = pod_requests(decision.pod)
    by_reason: dict[str, list[int]] = {}
    for ids, rej in decision.rejected:
        if rej.status.plugin == "NodeResourcesFit":
            for reason in rej.status.reasons:
                by_reason.setdefault(reason, []).extend(int(i) for i in ids)
    wanted, most_free, full = [], [], []
    for reason, node_ids in sorted(by_reason.items()):
        if reason == REASON_TOO_MANY_PODS:
            full.append(f"{len(node_ids)} of them are at their pod limit (allocatable pods)")
            continue
        found = _resource(reason)
        if found is None:
            continue
        name, amount, fmt = found
        free = [
            (amount(cluster.node_info_at(i).allocatable) - amount(cluster.node_info_at(i).requested), i)
            for i in node_ids
        ]
        best, at = max(free, key=lambda f: (f[0], -f[1]))
        wanted.append(f"{name} {fmt(amount(request))}")
        most_free.append(f"{name} {fmt(max(best, 0))} (on {decision.nodes[at]})")
    text = f"{n} node(s) lack free allocatable resources for the pod's requests"
    if wanted:
        text += f": it requests {', '.join(wanted)}; the most free on those nodes is {', '.join(most_free)}"
    if full:
        text += f"; {'; '.join(full)}"
    return text + ". Lower the requests, or add capacity where the other rules allow the pod."


def _tie_hint(decision: Decision, cluster: ClusterState, running_on: str | None = None) -> list[str]:
    """A tie of the best totals, and which rule broke it (kube-scheduler: a random pick);
    ``running_on``: the node a bound pod runs on."""
    if not decision.tie_break or decision.selected is None:
        return []
    top = decision.total(decision.selected)
    tied = decision.tied
    others = [name for name in tied if name != decision.selected]
    view = tie_view(decision, cluster)
    zones = sorted(z or "no zone" for z in view.zones)
    where = f" in {len(zones)} zones ({_few(zones, 4)})" if view.across_zones else ""
    if decision.tie_break == TIE_HEAP:
        text = (
            f"Tie: {len(tied)} nodes{where} share the top total {top}. kube-scheduler takes the top of "
            f"its score heap over the nodes in the order Filter found them: {decision.selected} at "
            "parallelism 1 (kubespread's answer); at its default parallelism 16 Filter's threads race "
            f"and any of them may win. Equally good: {_few(others, 5)}."
        )
    else:
        rule = (
            "the smallest node name (the conformance corpus's convention)"
            if decision.tie_break == TIE_SMALLEST_NAME
            else "a random choice seeded by --seed, the same on every run"
        )
        text = (
            f"Tie: {len(tied)} nodes{where} share the top total {top}. kube-scheduler's pick among "
            f"them depends on its Filter threads; kubespread picked {decision.selected} by {rule}. "
            f"Equally good: {_few(others, 5)}."
        )
    if running_on in others:
        text += f" The pod runs on {running_on}: one of them, picked when it was placed."
    return [text]


def hints(decision: Decision, cluster: ClusterState, views: list[ConstraintView]) -> list[str]:
    """Plain-language reasons and remedies for what rejected nodes (empty when none did), and
    how a tie among the best nodes was broken."""
    seen = _reason_counts(decision)
    return (
        _tie_hint(decision, cluster)
        + _spread_hints(decision, views, seen)
        + _other_hints(decision, cluster, seen)
    )
