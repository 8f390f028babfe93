"""From a cluster to a placement model, and the new pods themselves (clones of a template).

What decides where a group *may* go comes from the scheduler itself: the template, stripped
of its DoNotSchedule spread and its required pod affinity, is run through ``schedule_one`` on
the cluster as it is (node-local filters, room for one pod, anti-affinity against existing
pods in both directions). What depends on how many new pods go where is read here as plain
data (free resources per node, each DoNotSchedule constraint's existing matching pods per
eligible domain as the plugin's own PreFilter counts them, the required pod-affinity terms'
existing pods per domain, which groups each rule selects) and modelled by
``kubespread.solve.encode``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

import numpy as np

from kubespread.api.core import DO_NOT_SCHEDULE, Pod
from kubespread.api.keys import LABEL_HOSTNAME
from kubespread.api.resources import pod_requests
from kubespread.cluster.nodeinfo import NodeInfo, pod_host_ports
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.predicates import (
    AffinityTerm,
    namespace_labels,
    required_affinity_domains,
    required_pod_terms,
)
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.views import profile_views
from kubespread.solve.model import (
    AffinityRule,
    AntiTerm,
    Group,
    NodeSlot,
    PlacementModel,
    Spread,
    slot_capacity,
)

__all__ = ["build_groups", "build_model", "clones", "iter_clones"]

_PODS: Final = "pods"


def clones(template: Pod, count: int, taken: Iterable[str] = ()) -> list[Pod]:
    """``count`` copies of the template, named ``<name>-<i>`` (avoiding keys in ``taken``),
    unbound: the replicas a controller would create."""
    return list(iter_clones(template, count, taken))


def iter_clones(template: Pod, count: int, taken: Iterable[str] = ()) -> Iterator[Pod]:
    """:func:`clones` one at a time (greedy stops at the first pending one: a large --max
    does not build pods it never tries)."""
    data = template.to_dict()
    meta = data.setdefault("metadata", {})
    base = meta.get("name") or meta.get("generateName", "pod").rstrip("-") or "pod"
    meta.pop("generateName", None)
    meta.pop("uid", None)
    data.get("spec", {}).pop("nodeName", None)
    data.pop("status", None)
    ns = template.namespace
    used = set(taken)
    made = 0
    i = 0
    while made < count:
        i += 1
        name = f"{base}-{i}"
        if f"{ns}/{name}" in used:
            continue
        meta["name"] = name
        made += 1
        yield Pod.from_dict(data)


#: what stands in for a template's spread constraints when judging the cluster as it is: a
#: ScheduleAnyway one never filters, and keeps the profile's default constraints away too
_NO_FILTERING_SPREAD: Final = {
    "maxSkew": 1,
    "topologyKey": LABEL_HOSTNAME,
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {},
}

_REQUIRED_FORMS: Final = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "requiredDuringSchedulingRequiredDuringExecution",
)


def _stripped(template: Pod) -> Pod:
    """The template as a clone but with no DoNotSchedule spread (its own or the profile's
    defaults) and no required pod affinity: its feasible nodes are those every other filter
    admits on the cluster as it is; spread and affinity are modelled in the final state."""
    data = template.to_dict()
    spec = data.setdefault("spec", {})
    spec["topologySpreadConstraints"] = [dict(_NO_FILTERING_SPREAD)]
    spec.pop("nodeName", None)
    pod_affinity = (spec.get("affinity") or {}).get("podAffinity")
    if pod_affinity:
        for form in _REQUIRED_FORMS:
            pod_affinity.pop(form, None)
    return Pod.from_dict(data)


#: the filters that judge room on a node (resources, pod count, host ports)
_ROOM_PLUGINS: Final = ("NodeResourcesFit", "NodePorts")


def _weightless(template: Pod) -> Pod:
    """:func:`_stripped` asking for no resources and no host ports: the nodes it admits are
    those the template fails only for want of room."""
    data = _stripped(template).to_dict()
    spec = data.setdefault("spec", {})
    for field_name in ("containers", "initContainers"):
        for c in spec.get(field_name) or []:
            c.pop("resources", None)
            for port in c.get("ports") or []:
                port.pop("hostPort", None)
                port.pop("hostIP", None)
    spec.pop("overhead", None)
    spec.pop("resources", None)
    return Pod.from_dict(data)


def _request(template: Pod) -> dict[str, int]:
    """The template's requests by resource name (only those above 0), one pod slot."""
    r = pod_requests(template)
    out = {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral-storage": r.ephemeral_storage, **r.scalar}
    return {_PODS: 1, **{k: v for k, v in out.items() if v > 0}}


def _free(info: NodeInfo) -> dict[str, int]:
    alloc, used = info.allocatable, info.requested
    out = {
        _PODS: alloc.allowed_pod_number - info.pod_count,
        "cpu": alloc.milli_cpu - used.milli_cpu,
        "memory": alloc.memory - used.memory,
        "ephemeral-storage": alloc.ephemeral_storage - used.ephemeral_storage,
    }
    for name in set(alloc.scalar) | set(used.scalar):
        out[name] = alloc.scalar.get(name, 0) - used.scalar.get(name, 0)
    return out


def build_model(cluster: ClusterState, template: Pod, profile: Profile, count: int) -> PlacementModel:
    """The model for ``count`` copies of one template on ``cluster``."""
    return build_groups(cluster, [(template.key, template, count)], profile)


def build_groups(
    cluster: ClusterState,
    wanted: Sequence[tuple[str, Pod, int]],
    profile: Profile,
    *,
    keep: Sequence[Mapping[str, int]] | None = None,
    actions: tuple[str, ...] = (DO_NOT_SCHEDULE,),
    balance: bool = False,
) -> PlacementModel:
    """The model for groups ``(name, template, count)`` on ``cluster`` (which holds none of
    them): every group's rules against the cluster and against each other. ``keep``: per
    group, its pods running now per node (taken out of ``cluster``), which may stay;
    ``actions``: the whenUnsatisfiable values modelled as hard (ScheduleAnyway too when
    rebalancing with every constraint); ``balance``: see :class:`PlacementModel`."""
    templates = [t for _, t, _ in wanted]
    ns_labels = {t.namespace: namespace_labels(cluster, t.namespace) for t in templates}
    node_names = [str(n) for n in cluster.node_names.tolist()]
    free = {n: _free(cluster.node_info(n)) for n in node_names}
    groups: list[Group] = []
    for gi, (name, template, count) in enumerate(wanted):
        kept = dict(keep[gi]) if keep is not None else {}
        affinity_terms, anti_terms = required_pod_terms(template)
        decision = schedule_one(_stripped(template), cluster, profile)
        feasible = set(decision.feasible)
        if any(r.status.plugin in _ROOM_PLUGINS for r in decision.rejections.values()):
            # nodes only full: in the model with no room, so that relaxing resources (what
            # binds, a conflict) may use them
            full = set(schedule_one(_weightless(template), cluster, profile).feasible) - feasible
        else:
            full = set()
        spreads = _spreads(cluster, template, profile, templates, node_names, actions)
        anti = []
        for t in anti_terms:
            members = tuple(
                j
                for j, h in enumerate(templates)
                if t.matches(h.namespace, h.metadata.labels, ns_labels[h.namespace])
            )
            if members:
                anti.append(AntiTerm(t.topology_key, members))
        affinity = (
            _affinity(cluster, template, affinity_terms, templates, ns_labels) if affinity_terms else None
        )
        needed_keys = [s.topology_key for s in spreads] + (list(affinity.keys) if affinity else [])
        request = _request(template)
        ports = frozenset(pod_host_ports(template))
        nodes: list[NodeSlot] = []
        for node in node_names:
            labels = dict(cluster.nodes[node].metadata.labels)
            # the Filter rejects a node missing a DoNotSchedule key or an affinity term's key
            admitted = node in feasible or node in full
            if admitted and all(k in labels for k in needed_keys):
                cap, binding = slot_capacity(free[node], request, bool(ports), count)
                if node in full:
                    cap = 0
            else:
                admitted, cap, binding = False, 0, ("filtered",)
            if kept.get(node, 0) > cap:
                cap = kept[node]
            if cap > 0 or admitted:
                nodes.append(NodeSlot(node, labels, cap, binding))
        groups.append(Group(name, template, count, nodes, spreads, anti, affinity, request, ports, kept))
    used = {n.name for g in groups for n in g.nodes}
    room = {n: free[n] for n in node_names if n in used} if len(groups) > 1 else {}
    return PlacementModel(groups, room, balance=balance)


def _spreads(
    cluster: ClusterState,
    template: Pod,
    profile: Profile,
    templates: Sequence[Pod],
    node_names: list[str],
    actions: tuple[str, ...] = (DO_NOT_SCHEDULE,),
) -> list[Spread]:
    out = []
    for v in profile_views(cluster, template, profile):
        if v.when_unsatisfiable not in actions:
            continue
        if v.defaulted and v.when_unsatisfiable != DO_NOT_SCHEDULE:
            continue  # a profile's soft default (System: zone 5, hostname 3) stays soft
        c = v.constraint
        members = tuple(
            j
            for j, h in enumerate(templates)
            if h.namespace == template.namespace and c.selector.matches(h.metadata.labels)
        )
        mask = v.eligible if v.eligible is not None else np.ones(len(node_names), dtype=bool)
        counted = frozenset(n for n, ok in zip(node_names, mask.tolist(), strict=True) if ok)
        out.append(
            Spread(c.topology_key, c.max_skew, c.min_domains, dict(v.domains), v.self_match, counted, members)
        )
    return out


def _affinity(
    cluster: ClusterState,
    template: Pod,
    terms: Sequence[AffinityTerm],
    templates: Sequence[Pod],
    ns_labels: Mapping[str, Mapping[str, str]],
) -> AffinityRule:
    """The group's required affinity: existing pods matching all terms per domain (the
    Filter's own count), and the groups whose pods match all terms."""
    existing = required_affinity_domains(cluster, terms)
    members = tuple(
        j
        for j, h in enumerate(templates)
        if all(t.matches(h.namespace, h.metadata.labels, ns_labels[h.namespace]) for t in terms)
    )
    me = templates.index(template)
    any_existing = any(existing.values())
    return AffinityRule(tuple(t.topology_key for t in terms), existing, members, any_existing, me in members)
