"""The descheduler's RemovePodsViolatingTopologySpreadConstraint, modelled as a baseline.

What the rebalance planner is compared with: one run of the plugin over a cluster, returning
the pods it evicts. Modelled on kubernetes-sigs/descheduler
``pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint.go``
at tag v0.36.0 (commit 8005cdf78391e2c071cfa653c462dfefc2de8856; identical on master
7d2b28bf2b6a12810317936d909af0270ff38fa3), with the DefaultEvictor it filters through
(``pkg/framework/plugins/defaultevictor``), ``node.PodFitsAnyOtherNode``/``NodeFit``
(``pkg/descheduler/node/node.go``) and the run loop's node list (``pkg/descheduler``).

The run, as the source does it:

1. **Nodes.** The descheduler's nodes are the Ready ones (a node whose Ready condition is not
   True is left out; unschedulable nodes stay). With fewer than two, the cycle is skipped.
2. **Pods.** Only pods the plugin may evict are listed at all (bound to one of those nodes,
   not Succeeded/Failed, in no excluded namespace, passing the DefaultEvictor's Filter), and
   *only they are counted*: a DaemonSet pod, a bare pod or a pod with an emptyDir matching a
   selector is invisible to the domain sizes.
3. **Constraints.** Per namespace (sorted here; Go iterates a map), every listed pod's own
   ``topologySpreadConstraints`` whose whenUnsatisfiable is in ``args.constraints``, parsed
   and deduplicated by deep equality of: maxSkew, topologyKey, the selector (labelSelector
   with the pod's values of ``matchLabelKeys`` merged in), the two inclusion policies
   (nil: nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore), and, under Honor, *the pod's
   own* required node affinity / tolerations. whenUnsatisfiable and **minDomains are not
   part of it and minDomains is never read** (descheduler issue #855). The scheduler
   profile's default constraints are never applied: a pod without its own constraints is
   never balanced.
4. **Domains.** Pre-filled with 0 for every value of the key on a node the constraint's
   inclusion policies admit; then every listed, non-terminating pod of the namespace the
   selector matches adds to its node's value, *whatever the policies say of that node* (a
   domain the policies leave out still appears when a counted pod runs there).
5. **Balanced?** max - min over the domains ≤ maxSkew (the true minimum, zeros included;
   no minDomains) → skip.
6. **balanceDomains.** idealAvg = counted pods / domains. Domains sorted by size ascending;
   each domain's pods sorted for eviction from the back (``sortDomains``): non-evictable
   first, then pods with a nodeSelector or any nodeAffinity, then the others; within each,
   priority ascending (nil first) — so the *highest-priority* pod without node affinity is
   evicted first (the code says so despite its comment; TestSortDomains pins it). Two
   pointers i (smallest) and j (largest): j steps down once per turn when domain j is at or
   below idealAvg; if size(j) - size(i) ≤ maxSkew, i steps up; else
   ``move = min(ceil(size(j) - avg), ceil(avg - size(i)), ceil((skew - maxSkew) / 2))``
   pods go from the back of j, after a stable sort that puts the pods fitting some node of a
   below-average domain last. Each is evicted unless ``topologyBalanceNodeFit`` (default
   true) and it fits no such node; either way it is counted as moved to domain i.
7. **NodeFit** (``PodFitsAnyOtherNode``): a node other than the pod's own, among the nodes the
   constraint's inclusion policies admit in the domains below idealAvg *before the loop
   starts* (never recomputed as pods move), where the pod passes: not unschedulable,
   nodeSelector and required node affinity, NoSchedule/NoExecute taints, the pod's own
   required anti-affinity against pods on that node (any term whose key the node has),
   and requests within allocatable minus what the node's pods request, with a pod slot.
8. Each constraint counts the cluster as it was: evictions chosen for one constraint do
   not change the counts of the next, so two constraints may evict for the same surplus
   (issues #1219, #1280). A pod is evicted at most once per run.

Where this differs from the scheduler's counting (``kubespread.scheduler.views``, the home
of skew as kube-scheduler counts it): only evictable pods count; domains are not limited to
nodes carrying every constraint's key nor to nodes the policies admit (step 4); the minimum
is the smallest domain, never 0 by minDomains; there is no self-match; each constraint is
balanced on its own. So this module counts for itself rather than through ``views``.

Not modelled, and why:

- Go's iteration orders are random (namespaces, domains of equal size, the eviction set) and
  ``sort.Slice`` is unstable; here namespaces go by name, equal-size domains by value, pods
  by (node name, pod name) through stable sorts (so among equal pods the later names go
  first, as the upstream tests see it), and evictions come out in the order chosen.
- Evictor limits (maxNoOfPodsToEvictPerNode/PerNamespace/Total: unlimited by default), the
  DefaultEvictor's ``nodeFit`` PreEvictionFilter and ``namespaceLabelSelector`` (off by
  default), its ``priorityThreshold``, ``minReplicas``, ``minPodAge``, the opt-in
  protections (PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims) and the plugin's
  ``namespaces.include`` and ``labelSelector`` args: all off by default.
- PodDisruptionBudgets: the descheduler learns of them only when the Eviction API refuses
  an eviction; the caller applies that.
- The DefaultEvictor's default protections *are* modelled: mirror pods, static pods
  (``kubernetes.io/config.source`` other than ``api``), terminating pods, system-critical
  priority (≥ 2000000000), pods without ownerReferences, DaemonSet pods, pods with an
  emptyDir or hostPath volume; the ``descheduler.alpha.kubernetes.io/evict`` annotation
  overrides them all.
- Namespaces: the plugin excludes none by default (kube-system pods are protected only
  through the rules above, usually system-critical priority); ``namespaces_excluded`` is
  the plugin's ``namespaces.exclude``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from kubespread.api.core import DO_NOT_SCHEDULE, HONOR, IGNORE, Node, Pod, local_storage
from kubespread.api.resources import pod_requests
from kubespread.api.selectors import IN, Requirement, Selector, compile_label_selector
from kubespread.api.taints import NO_EXECUTE, NO_SCHEDULE, Toleration, find_untolerated
from kubespread.scheduler.predicates import (
    RequiredNodeAffinity,
    fits_resources,
    node_filter,
    required_node_affinity,
)

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState
    from kubespread.scheduler.profile import Profile

__all__ = ["DeschedulerArgs", "descheduler_pass", "evictable"]


#: DefaultEvictor: a pod with this annotation is evictable whatever else holds
_EVICT_ANNOTATION: Final = "descheduler.alpha.kubernetes.io/evict"
_MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
_SOURCE_ANNOTATION: Final = "kubernetes.io/config.source"
#: utils.SystemCriticalPriority
_SYSTEM_CRITICAL: Final = 2_000_000_000


@dataclass(frozen=True, slots=True)
class DeschedulerArgs:
    """The plugin's arguments (RemovePodsViolatingTopologySpreadConstraintArgs) as modelled.

    ``constraints``: the whenUnsatisfiable values balanced (default DoNotSchedule only; add
    ScheduleAnyway for ``--constraints all``). ``topology_balance_node_fit``: skip a chosen
    pod that fits no node of a below-average domain (default true). ``namespaces_excluded``:
    ``namespaces.exclude``; empty by default, as the plugin's defaults leave it (nil)."""

    constraints: tuple[str, ...] = (DO_NOT_SCHEDULE,)
    topology_balance_node_fit: bool = True
    namespaces_excluded: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Constraint:
    """The plugin's internal topologySpreadConstraint: equality is its DeepEqual dedup."""

    max_skew: int
    topology_key: str
    selector: Selector
    node_affinity_policy: str
    node_taints_policy: str
    #: the owning pod's required node affinity, as content (None unless Honor)
    affinity_key: str | None
    #: the owning pod's tolerations, as content (None unless Honor)
    tolerations_key: str | None
    affinity: RequiredNodeAffinity | None = field(default=None, compare=False, hash=False)
    tolerations: tuple[Toleration, ...] = field(default=(), compare=False, hash=False)

    def admits(self, node: Node) -> bool:
        """matchNodeInclusionPolicies: the node's domain is pre-filled and its node may take
        an evicted pod."""
        if self.affinity is not None and not self.affinity.matches(node):
            return False
        if self.node_taints_policy == HONOR:
            return (
                find_untolerated(node.spec.taints, list(self.tolerations), (NO_SCHEDULE, NO_EXECUTE)) is None
            )
        return True


def _content(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _parse(pod: Pod, c: Any) -> _Constraint:
    """newTopologySpreadConstraint: selector with matchLabelKeys merged; nil policies as
    Honor (affinity) and Ignore (taints); the pod's affinity/tolerations kept under Honor."""
    selector = compile_label_selector(c.label_selector)
    labels = pod.metadata.labels
    merged = tuple(Requirement(k, IN, frozenset((labels[k],))) for k in c.match_label_keys if k in labels)
    if merged:
        selector = selector.with_requirements(merged)
    affinity_policy = c.node_affinity_policy or HONOR
    taints_policy = c.node_taints_policy or IGNORE
    affinity = affinity_key = None
    if affinity_policy == HONOR:
        affinity = required_node_affinity(pod)
        forms = (affinity.required, affinity.required_during_execution)
        affinity_key = _content(
            [affinity.node_selector, *(f.to_dict() if f is not None else None for f in forms)]
        )
    tolerations: tuple[Toleration, ...] = ()
    tolerations_key = None
    if taints_policy == HONOR:
        tolerations = tuple(pod.spec.tolerations)
        tolerations_key = _content([t.to_dict() for t in tolerations])
    return _Constraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=selector,
        node_affinity_policy=affinity_policy,
        node_taints_policy=taints_policy,
        affinity_key=affinity_key,
        tolerations_key=tolerations_key,
        affinity=affinity,
        tolerations=tolerations,
    )


# ------------------------------------------------------------------ which pods and nodes


def _is_ready(node: Node) -> bool:
    """node.IsReady: left out only when a Ready condition says other than True."""
    return all(c.status == "True" for c in node.status.conditions if c.type == "Ready")


def _has_local_storage(pod: Pod) -> bool:
    volumes = (pod.spec.extra or {}).get("volumes") or []
    return any(local_storage(v) for v in volumes)


def evictable(pod: Pod) -> bool:
    """The DefaultEvictor's Filter with its default arguments (see the module notes)."""
    annotations = pod.metadata.annotations
    if _EVICT_ANNOTATION in annotations:
        return True
    source = annotations.get(_SOURCE_ANNOTATION)
    owners = pod.metadata.owner_references
    return not (
        _MIRROR_ANNOTATION in annotations
        or (source is not None and source != "api")
        or pod.is_terminating
        or (pod.spec.priority is not None and pod.spec.priority >= _SYSTEM_CRITICAL)
        or not owners
        or _has_local_storage(pod)
        or any(o.kind == "DaemonSet" for o in owners)
    )


def _listed_pods(cluster: ClusterState, nodes: Sequence[Node], args: DeschedulerArgs) -> dict[str, list[Pod]]:
    """ListPodsOnNodes through the plugin's pod filter, grouped by namespace: node by node
    (by name), each node's pods by name."""
    by_ns: dict[str, list[Pod]] = {}
    for node in nodes:
        on_node = cluster.pods_on_node(node.metadata.name).values()
        for pod in sorted(on_node, key=lambda p: p.metadata.name):
            if pod.is_finished or pod.namespace in args.namespaces_excluded or not evictable(pod):
                continue
            by_ns.setdefault(pod.namespace, []).append(pod)
    return by_ns


def _namespace_constraints(pods: Iterable[Pod], allowed: frozenset[str]) -> list[_Constraint]:
    out: dict[_Constraint, None] = {}
    for pod in pods:
        for c in pod.spec.topology_spread_constraints:
            if c.when_unsatisfiable in allowed:
                out.setdefault(_parse(pod, c), None)
    return list(out)


class _Candidates:
    """A namespace's listed pods by label, so a selector with an ``In`` requirement looks only
    at the pods carrying one of its values; listing order is kept."""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.pods = pods
        self.by_label: dict[tuple[str, str], list[int]] = {}
        for i, pod in enumerate(pods):
            for kv in pod.metadata.labels.items():
                self.by_label.setdefault(kv, []).append(i)

    def of(self, selector: Selector) -> Iterable[Pod]:
        narrowest: list[int] | None = None
        for r in selector.requirements:
            if r.op != IN:
                continue
            found = sorted(i for v in r.values for i in self.by_label.get((r.key, v), ()))
            if narrowest is None or len(found) < len(narrowest):
                narrowest = found
        if narrowest is None:
            return self.pods
        return (self.pods[i] for i in narrowest)


def _domains(
    c: _Constraint, nodes: Sequence[Node], candidates: _Candidates
) -> tuple[dict[str, list[Pod]], int]:
    """Matching pods per topology value, and how many were counted (sumPods)."""
    key = c.topology_key
    domains: dict[str, list[Pod]] = {}
    node_value: dict[str, str] = {}
    for node in nodes:
        value = node.metadata.labels.get(key)
        if value is None:
            continue
        node_value[node.metadata.name] = value
        if c.admits(node):
            domains.setdefault(value, [])
    counted = 0
    for pod in candidates.of(c.selector):
        if pod.is_terminating or not c.selector.matches(pod.metadata.labels):
            continue
        value = node_value.get(pod.spec.node_name)
        if value is None:
            continue
        domains.setdefault(value, []).append(pod)
        counted += 1
    return domains, counted


def _balanced(domains: Mapping[str, list[Pod]], max_skew: int) -> bool:
    sizes = [len(p) for p in domains.values()]
    return not sizes or max(sizes) - min(sizes) <= max_skew


# ------------------------------------------------------------------ NodeFit


def _anti_affinity_blocks(cluster: ClusterState, pod: Pod, node: Node) -> bool:
    """podMatchesInterPodAntiAffinity: one of the pod's own required anti-affinity terms
    matches a pod already on this node (same name excepted) and the node has the term's key."""
    aff = pod.spec.affinity
    anti = aff.pod_anti_affinity if aff is not None else None
    if anti is None:
        return False
    on_node = [p for p in cluster.pods_on_node(node.metadata.name).values() if not p.is_finished]
    for term in anti.required_during_scheduling_ignored_during_execution:
        namespaces = set(term.namespaces) or {pod.namespace}
        selector = compile_label_selector(term.label_selector)
        for other in on_node:
            if other.metadata.name == pod.metadata.name or other.namespace not in namespaces:
                continue
            if selector.matches(other.metadata.labels) and term.topology_key in node.metadata.labels:
                return True
    return False


def _fits_any_other_node(cluster: ClusterState, pod: Pod, nodes: Sequence[Node]) -> bool:
    """node.PodFitsAnyOtherNode: NodeFit passes on some node other than the pod's own."""
    admits = node_filter(pod)  # unschedulable, nodeSelector/required affinity, taints
    request = pod_requests(pod)
    for node in nodes:
        name = node.metadata.name
        if name == pod.spec.node_name or not admits(node):
            continue
        if _anti_affinity_blocks(cluster, pod, node):
            continue
        if fits_resources(request, cluster.node_info(name)):
            return True
    return False


# ------------------------------------------------------------------ balanceDomains


def _has_selector_or_affinity(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(pod.spec.node_selector) or (aff is not None and aff.node_affinity is not None)


def _eviction_rank(pod: Pod) -> tuple[bool, bool, int, int]:
    """sortDomains' order, first kept: non-evictable, then nodeSelector/affinity, then the
    rest; priority ascending within each, nil first. The back of the list goes first."""
    prio = pod.spec.priority
    return (
        evictable(pod),
        not _has_selector_or_affinity(pod),
        0 if prio is None else 1,
        prio or 0,
    )


def _balance_domains(
    c: _Constraint,
    domains: dict[str, list[Pod]],
    counted: int,
    nodes: Sequence[Node],
    fits: Callable[[Pod, Sequence[Node]], bool],
    node_fit: bool,
    chosen: dict[str, None],
) -> None:
    """balanceDomains for one constraint; adds the pods it evicts to ``chosen``."""
    ideal = counted / len(domains)
    ordered = sorted(domains.items(), key=lambda kv: (len(kv[1]), kv[0]))
    values = [v for v, _ in ordered]
    sizes = [sorted(pods, key=_eviction_rank) for _, pods in ordered]

    eligible = [n for n in nodes if c.topology_key in n.metadata.labels and c.admits(n)]
    below = {v for v, pods in zip(values, sizes, strict=True) if len(pods) < ideal}
    targets = [n for n in eligible if n.metadata.labels[c.topology_key] in below]
    fit_cache: dict[str, bool] = {}

    def fits_below(pod: Pod) -> bool:
        got = fit_cache.get(pod.key)
        if got is None:
            got = fit_cache[pod.key] = fits(pod, targets)
        return got

    i, j = 0, len(sizes) - 1
    while i < j:
        if len(sizes[j]) <= ideal:
            j -= 1
        skew = len(sizes[j]) - len(sizes[i])
        if skew <= c.max_skew:
            i += 1
            continue
        above_avg = math.ceil(len(sizes[j]) - ideal)
        below_avg = math.ceil(ideal - len(sizes[i]))
        half_skew = math.ceil((skew - c.max_skew) / 2)
        move = min(above_avg, below_avg, half_skew)
        if move <= 0:
            i += 1
            continue
        # pods that fit a below-average domain to the back, where eviction takes from
        sizes[j].sort(key=fits_below)
        taken = sizes[j][len(sizes[j]) - move :]
        for pod in taken:
            if node_fit and not fits_below(pod):
                continue  # counted as moved all the same, as the source does
            chosen.setdefault(pod.key, None)
        del sizes[j][len(sizes[j]) - move :]
        sizes[i].extend(taken)


def descheduler_pass(
    cluster: ClusterState,
    profiles: Mapping[str, Profile],
    args: DeschedulerArgs = DeschedulerArgs(),
) -> list[str]:
    """The pods (``namespace/name``) one run of RemovePodsViolatingTopologySpreadConstraint
    evicts on ``cluster``, in eviction order (no PDB check here: the caller evicts them through
    the Eviction API, which refuses what a PodDisruptionBudget forbids).

    ``profiles`` is taken for a uniform planner interface and not read: the descheduler knows
    no scheduler profile (no default constraints). See the module notes for the semantics."""
    del profiles
    nodes = sorted((n for n in cluster.nodes.values() if _is_ready(n)), key=lambda n: n.metadata.name)
    if len(nodes) <= 1:
        return []
    allowed = frozenset(args.constraints)
    chosen: dict[str, None] = {}

    def fits(pod: Pod, targets: Sequence[Node]) -> bool:
        return _fits_any_other_node(cluster, pod, targets)

    by_ns = _listed_pods(cluster, nodes, args)
    for namespace in sorted(by_ns):
        pods = by_ns[namespace]
        candidates = _Candidates(pods)
        for c in _namespace_constraints(pods, allowed):
            domains, counted = _domains(c, nodes, candidates)
            if _balanced(domains, c.max_skew):
                continue
            _balance_domains(c, domains, counted, nodes, fits, args.topology_balance_node_fit, chosen)
    return list(chosen)
