"""Spread as people see it, counted as kube-scheduler counts it: the one home of "skew".

``kubespread schedule`` and ``simulate`` print spread tables, ``explain`` prints hints, the
``distribution`` and ``spread`` rows of ``-o json`` and the HTML report's pictures show skew;
all of them come from here, so the same pods give the same numbers everywhere.

**One pod** (``constraint_views``): each spread constraint the scheduler applies to the pod
(its own, else the profile's default constraints), counted with the plugin's own PreFilter
computation (``filtering.compute_pre_filter_state``): the DoNotSchedule constraints together,
exactly as PreFilter counts them for the Filter (nodes must carry every constraint's key and
pass the constraint's nodeAffinityPolicy/nodeTaintsPolicy; bound, non-terminating pods the
labelSelector matches in the pod's namespace; the global minimum is 0 when fewer domains than
minDomains), then the ScheduleAnyway ones the same way among themselves. The Filter never
checks a ScheduleAnyway constraint (Score only prefers the domains with fewer matching pods):
its skew is what the Filter would compute were it DoNotSchedule.

**One workload** (``spread_rows``): for each workload (the pods of one controller: a
ReplicaSet, StatefulSet, Job, ...; a rollout's ReplicaSets are separate workloads, each with
its ``owner``, the Deployment) that has a running or pending pod, one row per constraint
of a *representative pod*: the first pending pod by name (the one the scheduler is deciding
on now), else the newest running one. Pods of one controller share their template, so their
constraints are the same; a WorkloadSpread's injected node affinity may make their eligible
domains differ, and then the representative's are shown. Each row has two views:

- the scheduler's (the headline): ``domains``, matching pods per eligible domain, the
  ``globalMinimum``, ``skew`` = max - global minimum, ``withinMaxSkew``, ``allowedDomains``
  (where one more matching pod keeps the skew within maxSkew), and what was left out;
- the raw one, named as such: ``rawDomains``, the workload's own running pods per *every*
  domain of the key (every node carrying it, whatever the policies: what ``kubectl get pods
  -o wide`` shows), and ``rawSkew`` = max - min over them. It differs from ``skew`` where the
  scheduler leaves domains out (nodeAffinityPolicy, nodeTaintsPolicy: Honor, e.g. a failed
  zone), takes the minimum as 0 (minDomains), or counts pods of other workloads (a
  labelSelector that matches another revision's pods).

Which rows a workload gets:

- one per spread constraint the scheduler applies to the representative (own constraints,
  else the profile's defaults, marked ``defaulted``; a default constraint whose key no node
  carries is left out: it cannot tell nodes apart). None when its scheduler profile is not
  simulated or has no PodTopologySpread;
- a raw-only row (no constraint: every scheduler field is None) for each other topology key
  the workload's pods' rules name: pod (anti-)affinity terms, and the node-affinity keys a
  WorkloadSpread subset injected;
- a raw-only ``kubernetes.io/hostname`` row when there is nothing else, so every workload's
  pods show somewhere.

A pod without a controller is a workload of its own, shown only with the spread constraints
the scheduler applies to it (no raw-only rows).

**One placement** (``tie_view``): how certain it is. kubespread answers as kube-scheduler at
parallelism 1 (the score heap's top); at its default parallelism 16 any node sharing the best
total may win, so a placement says how many tied, their zones when they span several (then
even the zone is a coin toss), and how many nodes sampling left unexamined.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.api.features import PREEMPTION_EMPTY_PDB_SELECTOR, FeatureGates
from kubespread.api.keys import ANNOTATION_WORKLOADSPREAD, DEFAULT_SCHEDULER_NAME, LABEL_HOSTNAME, zone_of
from kubespread.cluster.workloads import WorkloadRef, ownership
from kubespread.scheduler.plugins.defaultpreemption.post_filter import pdbs_of
from kubespread.scheduler.plugins.defaultpreemption.preemption import violated_budgets
from kubespread.scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    InclusionMasks,
    SpreadConstraint,
    build_default_constraints,
    own_constraints,
)
from kubespread.scheduler.plugins.podtopologyspread.filtering import compute_pre_filter_state
from kubespread.scheduler.plugins.tainttoleration import untolerated_nodes

if TYPE_CHECKING:
    from kubespread.api.core import TopologySpreadConstraint
    from kubespread.cluster.state import ClusterState
    from kubespread.scheduler.framework import PreemptionResult
    from kubespread.scheduler.profile import Profile
    from kubespread.scheduler.scheduler import Decision

__all__ = [
    "ConstraintView",
    "Preemption",
    "SpreadRow",
    "TieView",
    "Victim",
    "constraint_views",
    "preemption_entry",
    "profile_views",
    "rule_keys",
    "spread_rows",
    "tie_view",
    "workload_groups",
    "workload_views",
]

_PTS: Final = "PodTopologySpread"

#: the scheduler's fields of a row, all None for a raw-only row (no constraint)
_CONSTRAINT_FIELDS: Final = (
    "maxSkew",
    "whenUnsatisfiable",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "defaulted",
    "domains",
    "globalMinimum",
    "selfMatch",
    "skew",
    "withinMaxSkew",
    "allowedDomains",
    "nodesMissingKey",
    "taintedDomainsCounted",
)


# ------------------------------------------------------------------ one pod


@dataclass(frozen=True, slots=True)
class ConstraintView:
    """One constraint of a pod, counted over the cluster as it is now.

    ``domains``: matching pods per eligible domain (every domain with a node the Filter counts:
    carrying every constraint's key, admitted by the policies), by name; ``min_match``: the
    global minimum the Filter uses (0 when fewer than minDomains domains); ``allowed``: the
    domains where one more matching pod keeps the skew within maxSkew (``self_match`` is 1 when
    the pod matches its own selector); ``missing_key``: nodes without the topology key
    (bypassed); ``tainted_domains``: domains whose every counted node has a taint the pod does
    not tolerate, yet count (nodeTaintsPolicy Ignore), with those nodes."""

    constraint: SpreadConstraint
    when_unsatisfiable: str
    defaulted: bool
    domains: dict[str, int]
    min_match: int
    self_match: int
    allowed: tuple[str, ...]
    missing_key: tuple[str, ...]
    tainted_domains: dict[str, tuple[str, ...]]
    #: per node id, whether the node's pods count (it carries every key of the constraints
    #: counted together and the policies admit it): the solver's final-state counts need it
    eligible: np.ndarray | None = field(default=None, compare=False, repr=False)

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
            "selfMatch": self.self_match,
            "skew": self.skew,
            "withinMaxSkew": self.within,
            "allowedDomains": list(self.allowed),
            "nodesMissingKey": list(self.missing_key),
            "taintedDomainsCounted": {d: list(n) for d, n in self.tainted_domains.items()},
        }


def constraint_views(
    cluster: ClusterState,
    pod: Pod,
    default_constraints: Sequence[TopologySpreadConstraint] | None = None,
    *,
    system_defaulting: bool = False,
    features: FeatureGates | None = None,
) -> list[ConstraintView]:
    """The pod's constraints (DoNotSchedule first, then ScheduleAnyway, each in spec order), or
    the default ones when it has none (``default_constraints``: the profile's PodTopologySpread
    defaults; ``profile_views`` takes them from a profile). With ``system_defaulting`` (the
    profile's defaultingType is System) default ScheduleAnyway constraints are counted each on
    its own, as PreScore does then: a node without a zone label still spreads by hostname.
    ``features``: the version whose scheduler reads the pod's own constraints (default v1.35)."""
    if features is None:
        features = FeatureGates()
    masks = InclusionMasks()
    views: list[ConstraintView] = []
    node_names = cluster.node_names
    defaulted = not pod.spec.topology_spread_constraints
    untolerated: np.ndarray | None = None
    for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        if defaulted:
            constraints = build_default_constraints(default_constraints or [], pod, cluster, action)
        else:
            constraints = own_constraints(pod, action, features)
        if not constraints:
            continue
        if untolerated is None:
            untolerated = untolerated_nodes(cluster, pod.spec.tolerations)
        # all of one action at once, as PreFilter counts them: a node missing another
        # constraint's key counts for none of them
        if defaulted and system_defaulting and action == SCHEDULE_ANYWAY:
            counted = [compute_pre_filter_state(cluster, pod, [c], masks).constraints[0] for c in constraints]
        else:
            counted = list(compute_pre_filter_state(cluster, pod, constraints, masks).constraints)
        for cc in counted:
            c = cc.constraint
            codes = cc.codes
            values = cluster.node_label_column(c.topology_key)[1]
            present = sorted(np.flatnonzero(cc.present).tolist(), key=lambda i: values[i])
            domains = {values[i]: int(cc.domain_counts[i]) for i in present}
            allowed = tuple(d for d, n in domains.items() if n + cc.self_match - cc.min_match <= c.max_skew)
            tainted: dict[str, tuple[str, ...]] = {}
            if c.node_taints_policy != HONOR and present:
                # a domain is tainted when each of its eligible nodes is: counted per domain
                # code at once, the nodes listed only for the domains that are
                counted_ids = cc.eligible & (codes >= 0)
                size = len(cc.present)
                nodes_in = np.bincount(codes[counted_ids], minlength=size)
                untolerated_in = np.bincount(codes[counted_ids & untolerated], minlength=size)
                for i in present:
                    if untolerated_in[i] == nodes_in[i]:
                        members = cc.eligible & (codes == i)
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
                    eligible=cc.eligible,
                )
            )
    return views


def profile_views(cluster: ClusterState, pod: Pod, profile: Profile | None) -> list[ConstraintView]:
    """``constraint_views`` under a scheduler profile: none when it does not run
    PodTopologySpread (or is None: the pod's scheduler is not simulated), else with the
    profile's default constraints (System or List defaulting)."""
    pts = profile.plugins.get(_PTS) if profile is not None else None
    if pts is None or profile is None:
        return []
    defaults = getattr(pts, "default_constraints", None) or ()
    system = bool(getattr(pts, "system_defaulted", False))
    return constraint_views(cluster, pod, defaults, system_defaulting=system, features=profile.features)


# ------------------------------------------------------------------ one workload


def rule_keys(pod: Pod) -> list[str]:
    """Topology keys the pod's own placement rules name, in order of appearance: its spread
    constraints, pod (anti-)affinity terms, and the node-affinity keys of the WorkloadSpread
    subset it was put in."""
    keys = [c.topology_key for c in pod.spec.topology_spread_constraints]
    aff = pod.spec.affinity
    for group in (aff.pod_affinity, aff.pod_anti_affinity) if aff is not None else ():
        if group is None:
            continue
        for name in (
            "required_during_scheduling_ignored_during_execution",
            "required_during_scheduling_required_during_execution",
        ):
            keys += [t.topology_key for t in getattr(group, name, [])]
        keys += [
            w.pod_affinity_term.topology_key
            for w in group.preferred_during_scheduling_ignored_during_execution
        ]
    if ANNOTATION_WORKLOADSPREAD in pod.metadata.annotations:  # the keys its subset was chosen by
        na = aff.node_affinity if aff is not None else None
        required = na.required_during_scheduling_ignored_during_execution if na is not None else None
        for term in required.node_selector_terms if required is not None else ():
            keys += [r.key for r in term.match_expressions]
    return list(dict.fromkeys(k for k in keys if k))


def _carried(members: Sequence[Pod]) -> dict[str, list[dict[str, Any]]]:
    """Per topology key, the distinct spread constraints the pods carry in their spec; a
    rollout's revisions may differ, so each distinct one is listed once."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pod in members:
        for c in pod.spec.topology_spread_constraints:
            row = {
                "maxSkew": c.max_skew,
                "whenUnsatisfiable": c.when_unsatisfiable,
                "minDomains": c.min_domains,
            }
            rows = out.setdefault(c.topology_key, [])
            if row not in rows:
                rows.append(row)
    return out


@dataclass(frozen=True, slots=True)
class SpreadRow:
    """One workload on one constraint (or, with ``view`` None, on a topology key its rules
    name without a spread constraint: raw view only). See the module notes."""

    namespace: str
    #: the pods' controller, whose pods the row counts; None for a pod without one
    controller: WorkloadRef | None
    #: the top of the controller chain (the Deployment of a ReplicaSet; else the controller)
    top: WorkloadRef | None
    #: the representative pod, whose constraint and view these are
    pod: str
    topology_key: str
    view: ConstraintView | None
    #: the workload's own running pods per every domain of the key, by name
    raw_domains: dict[str, int]
    #: the workload's running pods (bound, not terminating, not finished)
    running: int
    #: the distinct constraints the workload's pods carry on this key (maxSkew,
    #: whenUnsatisfiable, minDomains), as ``distribution`` rows always had
    carried: tuple[dict[str, Any], ...] = ()

    @property
    def skew(self) -> int | None:
        """The scheduler's skew (None without a constraint)."""
        return None if self.view is None else self.view.skew

    @property
    def within(self) -> bool | None:
        return None if self.view is None else self.view.within

    @property
    def raw_skew(self) -> int:
        """max - min of the workload's own running pods over every domain of the key."""
        counts = self.raw_domains.values()
        return (max(counts) - min(counts)) if counts else 0

    @property
    def left_out(self) -> tuple[str, ...]:
        """Domains of the key the scheduler does not count for this constraint."""
        if self.view is None:
            return ()
        return tuple(d for d in self.raw_domains if d not in self.view.domains)

    def to_dict(self) -> dict[str, Any]:
        """The ``distribution``/``spread`` row: the scheduler's fields (as ``explain``'s
        ``spreadConstraints``; None for a raw-only row), then ``rawDomains`` and ``rawSkew``."""
        c, t = self.controller, self.top
        head: dict[str, Any] = {
            "namespace": self.namespace,
            "workload": {"kind": c.kind, "namespace": c.namespace, "name": c.name} if c else None,
            "owner": {"kind": t.kind, "name": t.name} if t else None,
            "pod": self.pod,
            "topologyKey": self.topology_key,
            "pods": self.running,
            "constraints": list(self.carried),
        }
        if self.view is None:
            head.update(dict.fromkeys(_CONSTRAINT_FIELDS))
        else:
            view = self.view.to_dict()
            del view["topologyKey"]
            head.update(view)
        head["leftOutDomains"] = list(self.left_out)
        head["rawDomains"] = self.raw_domains
        head["rawSkew"] = self.raw_skew
        return head


def _representative(live: Sequence[Pod]) -> Pod:
    pending = [p for p in live if not p.spec.node_name]
    if pending:
        return min(pending, key=lambda p: p.metadata.name)
    return max(live, key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name))


def _raw_domains(cluster: ClusterState, key: str, running: Sequence[Pod]) -> dict[str, int]:
    domains = dict.fromkeys(sorted(cluster.node_label_values(key)), 0)
    for p in running:
        node = cluster.nodes.get(p.spec.node_name)
        value = node.metadata.labels.get(key) if node is not None else None
        if value is not None:
            domains[value] = domains.get(value, 0) + 1
    return domains


def workload_views(
    cluster: ClusterState, profiles: Mapping[str, Profile], members: Sequence[Pod]
) -> tuple[Pod, list[ConstraintView]] | None:
    """A workload's representative pod and the views of its spread constraints, as its
    ``spread_rows`` rows show them (None when none of its pods is live): for callers that
    want the scheduler's skews without the raw counts (``audit`` reads them per failure)."""
    live = [p for p in members if not p.is_terminating and not p.is_finished]
    if not live:
        return None
    rep = _representative(live)
    views = profile_views(cluster, rep, profiles.get(rep.spec.scheduler_name or DEFAULT_SCHEDULER_NAME))
    return rep, [v for v in views if not v.defaulted or cluster.node_label_values(v.constraint.topology_key)]


def _workload_rows(
    cluster: ClusterState,
    profiles: Mapping[str, Profile],
    group: tuple[str, str, str],
    members: Sequence[Pod],
) -> list[SpreadRow]:
    namespace, kind, name = group
    found = workload_views(cluster, profiles, members)
    if found is None:
        return []
    rep, views = found
    live = [p for p in members if not p.is_terminating and not p.is_finished]
    running = [p for p in live if p.spec.node_name]
    bare = not kind
    counted = {v.constraint.topology_key for v in views}
    extra: list[str] = []
    if not bare:
        extra = [k for k in dict.fromkeys(k for p in live for k in rule_keys(p)) if k not in counted]
        if not views and not extra:
            extra = [LABEL_HOSTNAME]
    controller = None if bare else WorkloadRef(namespace, kind, name)
    top = None if bare else ownership(cluster, rep).top
    carried = _carried(live)
    raw: dict[str, dict[str, int]] = {}

    def row(key: str, view: ConstraintView | None) -> SpreadRow:
        if key not in raw:
            raw[key] = _raw_domains(cluster, key, running)
        return SpreadRow(
            namespace,
            controller,
            top,
            rep.metadata.name,
            key,
            view,
            raw[key],
            len(running),
            tuple(carried.get(key, ())),
        )

    return [row(v.constraint.topology_key, v) for v in views] + [row(k, None) for k in extra]


def workload_groups(
    cluster: ClusterState, pods: Iterable[Pod] | None = None
) -> dict[tuple[str, str, str], list[Pod]]:
    """``(namespace, controller kind, controller name)`` → all its pods in the cluster (by
    key), for the workloads ``pods`` belong to (every pod's when None); a pod without a
    controller is its own group, ``(namespace, "", name)``."""
    if pods is None:
        every_pod = cluster.pods  # by key: sorting the keys sorts the pods, no key built per pod
    else:  # a workload's pods share its namespace: only those namespaces' pods are read
        pods = list(pods)
        every_pod = {}
        for ns in {p.namespace for p in pods}:
            every_pod.update(cluster.pods_in_namespace(ns))
    every = [every_pod[k] for k in sorted(every_pod)]
    by_controller: dict[tuple[str, str, str], list[Pod]] = {}
    for p in every:
        ref = p.metadata.controller_ref()
        if ref is not None:
            by_controller.setdefault((p.namespace, ref.kind, ref.name), []).append(p)
    groups: dict[tuple[str, str, str], list[Pod]] = {}
    for p in every if pods is None else pods:
        ns = p.namespace
        ref = p.metadata.controller_ref()
        if ref is None:
            groups[(ns, "", p.metadata.name)] = [p]
        else:
            group = (ns, ref.kind, ref.name)
            groups[group] = by_controller.get(group, [p])
    return groups


def spread_rows(
    cluster: ClusterState, profiles: Mapping[str, Profile], pods: Iterable[Pod] | None = None
) -> list[SpreadRow]:
    """The rows per (workload, constraint) of the workloads ``pods`` belong to (every pod's
    workload when None), each workload with all its pods in the cluster; ordered by namespace,
    controller kind and name (pods without a controller first), then DoNotSchedule
    constraints, ScheduleAnyway ones and raw-only keys. ``profiles``: schedulerName → Profile
    (a Simulation's ``profiles``), for the default constraints. See the module notes."""
    groups = workload_groups(cluster, pods)
    rows: list[SpreadRow] = []
    for group in sorted(groups):
        rows += _workload_rows(cluster, profiles, group, groups[group])
    return rows


@dataclass(frozen=True, slots=True)
class Victim:
    """A pod a preemption deletes: its priority, node, and the PodDisruptionBudget its
    eviction breaks (as the budgets' status stood before the victims went), if any."""

    name: str
    namespace: str
    priority: int
    node: str | None
    pdb: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "priority": self.priority,
            "node": self.node,
            "pdb": self.pdb,
        }


@dataclass(frozen=True, slots=True)
class Preemption:
    """What ``schedule``, ``explain`` and ``simulate`` show of one preemption: the preemptor
    (``pod``, its key), its nominated node, the victims, how many break a budget, and why that
    node won (pickOneNodeForPreemption's deciding criterion).

    A preemption a run made has its virtual ``time`` and, once the preemptor is bound,
    ``scheduled_node``/``scheduled_at`` (set by :meth:`made_at` and :meth:`scheduled`, each a
    new value: a step's copy keeps what it saw). One only explained (``explain``'s "if
    scheduled now") has no time, and its JSON has none of those three members."""

    pod: str
    nominated_node: str | None
    victims: tuple[Victim, ...]
    pdb_violations: int
    reason: str
    time: float | None = None
    scheduled_node: str | None = None
    scheduled_at: float | None = None

    def made_at(self, now: float) -> Preemption:
        """This preemption as a run made it at ``now``, its preemptor not yet bound."""
        return replace(self, time=now, scheduled_node=None, scheduled_at=None)

    def scheduled(self, node: str, at: float) -> Preemption:
        """This preemption once its preemptor was bound to ``node`` at ``at``."""
        return replace(self, scheduled_node=node, scheduled_at=at)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pod": self.pod,
            "nominatedNode": self.nominated_node,
            "victims": [v.to_dict() for v in self.victims],
            "pdbViolations": self.pdb_violations,
            "reason": self.reason,
        }
        if self.time is not None:
            out.update(time=self.time, scheduledNode=self.scheduled_node, scheduledAt=self.scheduled_at)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Preemption:
        """Read back :meth:`to_dict` (``simulate``'s table renders its written document)."""
        return cls(
            pod=data["pod"],
            nominated_node=data["nominatedNode"],
            victims=tuple(Victim(**v) for v in data["victims"]),
            pdb_violations=data["pdbViolations"],
            reason=data["reason"],
            time=data.get("time"),
            scheduled_node=data.get("scheduledNode"),
            scheduled_at=data.get("scheduledAt"),
        )


def preemption_entry(
    pod: Pod, result: PreemptionResult, cluster: ClusterState, features: FeatureGates | None = None
) -> Preemption:
    """The preemption DefaultPreemption decided for ``pod``, its victims' budgets read from
    ``cluster`` as it is now (read it before the victims go), as ``features``' version counts
    them."""
    empty_selects_all = (features or FeatureGates()).enabled(PREEMPTION_EMPTY_PDB_SELECTOR)
    budgets = violated_budgets(result.victims, pdbs_of(cluster), empty_selects_all=empty_selects_all)
    return Preemption(
        pod=pod.key,
        nominated_node=result.nominated_node,
        victims=tuple(
            Victim(
                v.metadata.name,
                v.namespace,
                v.spec.priority or 0,
                v.spec.node_name,
                broken[0] if broken else None,
            )
            for v, broken in zip(result.victims, budgets, strict=True)
        ),
        pdb_violations=result.pdb_violations,
        reason=result.reason,
    )


# ------------------------------------------------------------------ one placement


@dataclass(frozen=True, slots=True)
class TieView:
    """How many nodes shared the best total with the chosen one, and where (see the module
    notes); ``zones`` only when they span more than one ("" for nodes without a zone)."""

    nodes: int
    zones: tuple[str, ...] = ()
    unexamined: int = 0

    @property
    def across_zones(self) -> bool:
        return len(self.zones) > 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tiedNodes": self.nodes}
        if self.zones:
            out["tiedZones"] = list(self.zones)
        out["unexaminedNodes"] = self.unexamined
        return out


def tie_view(decision: Decision, cluster: ClusterState) -> TieView:
    """The placement's ties (1 node: none) and the nodes its sampling never examined."""
    sampling = decision.sampling
    unexamined = sampling.unexamined if sampling is not None else 0
    tied = decision.nodes[decision.tied_ids].tolist() if len(decision.tied_ids) else []
    nodes = cluster.nodes
    zones = sorted({zone_of(nodes[n].metadata.labels) or "" for n in tied if n in nodes})
    return TieView(max(len(tied), 1), tuple(zones) if len(zones) > 1 else (), unexamined)
