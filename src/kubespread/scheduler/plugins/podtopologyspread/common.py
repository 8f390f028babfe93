"""What Filter and Score share: the parsed constraint, the default constraints and their
owner-derived selector, and which nodes a constraint's node inclusion policies admit.

Everything here works on node-id vectors: a constraint's topology domains are the codes of
``ClusterState.node_label_column`` and its matching pods per node a ``pod_counts`` vector.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from kubespread.api import keys
from kubespread.api.apps import ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SCHEDULE_ANYWAY,
    Pod,
    Service,
    TopologySpreadConstraint,
)
from kubespread.api.features import (
    MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD,
    MATCH_LABEL_KEYS_SELECTOR_MERGE,
    SPREAD_EMPTY_SELECTOR_MATCHES_ALL,
    FeatureGates,
)
from kubespread.api.selectors import IN, Requirement, Selector, compile_label_selector
from kubespread.scheduler.content_keys import CACHE_LIMIT, spread_constraint_key
from kubespread.scheduler.plugins.nodeaffinity import required_node_affinity
from kubespread.scheduler.plugins.tainttoleration import untolerated_nodes

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "HOSTNAME",
    "IGNORE",
    "SCHEDULE_ANYWAY",
    "InclusionMasks",
    "SpreadConstraint",
    "build_default_constraints",
    "default_selector",
    "has_all_keys",
    "matching_counts",
    "nodes_with_keys",
    "own_constraints",
    "parse_constraints",
]


#: controllers whose selector DefaultSelector adds, by (group, version, kind) of the owner ref
HOSTNAME: Final = keys.LABEL_HOSTNAME
_RC: Final = ("", "v1", "ReplicationController")
_RS: Final = ("apps", "v1", "ReplicaSet")
_SS: Final = ("apps", "v1", "StatefulSet")


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A TopologySpreadConstraint with its selector compiled and nil fields defaulted
    (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    #: v1.38 (kubernetes#141340): an empty labelSelector ({}) counts every pod of the
    #: namespace; up to v1.37 countPodsMatchSelector counts none for it
    empty_counts_all: bool = False

    @property
    def honors_policies(self) -> bool:
        """True when some nodes may be left out of the domains (either policy is Honor)."""
        return self.node_affinity_policy == HONOR or self.node_taints_policy == HONOR


def parse_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    action: str,
    merge_labels: Mapping[str, str] | None = None,
) -> list[SpreadConstraint]:
    """The constraints with ``whenUnsatisfiable == action``, in order.

    From v1.34 kube-apiserver merges matchLabelKeys into the pod's labelSelector at creation
    (MatchLabelKeysInPodTopologySpreadSelectorMerge), so they are not merged here: merging the
    same ``key In [value]`` again, as kube-scheduler still does, would not change what the
    selector matches. Before v1.34 only the scheduler merged them: ``merge_labels`` (the pod's
    labels) asks for that merge, ``{key In [value]}`` for each key the pod carries.

    Parsed once per list object and action (a pod's versions share the list: updates copy the
    spec shallowly, and stored objects are replaced, never changed in place).
    """
    if merge_labels is not None and any(c.match_label_keys for c in constraints):
        return _parse_constraints(constraints, action, merge_labels)
    mark = _shape(constraints)
    hit = _PARSED.get((id(constraints), action))
    if hit is not None and hit[0] is constraints and hit[1] == mark:
        return list(hit[2])
    content = (action, *(spread_constraint_key(c) for c in constraints))
    cached = _PARSED_BY_CONTENT.get(content)
    if cached is None:
        cached = tuple(_parse_constraints(constraints, action))
        if len(_PARSED_BY_CONTENT) >= CACHE_LIMIT:
            _PARSED_BY_CONTENT.clear()
        _PARSED_BY_CONTENT[content] = cached
    parsed = list(cached)
    if len(_PARSED) >= 8192:
        _PARSED.clear()
    _PARSED[(id(constraints), action)] = (constraints, mark, tuple(parsed))
    return parsed


def own_constraints(pod: Pod, action: str, features: FeatureGates) -> list[SpreadConstraint]:
    """The pod's own constraints of this action as the scheduler of ``features``' version reads
    them: matchLabelKeys merged here where kube-apiserver did not merge them (before v1.34),
    an empty labelSelector counting every pod of the namespace from v1.38 (kubernetes#141340).
    The plugin and the spread views (scheduler/views.py) both read them here."""
    merges, empty_counts_all = _gates(features)
    parsed = parse_constraints(
        pod.spec.topology_spread_constraints, action, pod.metadata.labels if merges else None
    )
    if empty_counts_all:
        return [dataclasses.replace(c, empty_counts_all=True) if c.selector.empty else c for c in parsed]
    return parsed


def _gates(features: FeatureGates) -> tuple[bool, bool]:
    """(the scheduler merges matchLabelKeys, an empty selector counts every pod) for a
    version's gates; asked on every cycle, so answered once per gates object."""
    hit = _GATES.get(id(features))
    if hit is not None and hit[0] is features:
        return hit[1]
    merges = features.enabled(MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD) and not features.enabled(
        MATCH_LABEL_KEYS_SELECTOR_MERGE
    )
    answer = (merges, features.enabled(SPREAD_EMPTY_SELECTOR_MATCHES_ALL))
    if len(_GATES) >= 64:
        _GATES.clear()
    _GATES[id(features)] = (features, answer)
    return answer


#: id(gates) -> (the gates, _gates' answer)
_GATES: dict[int, tuple[FeatureGates, tuple[bool, bool]]] = {}


def _shape(constraints: Sequence[TopologySpreadConstraint]) -> tuple[int, ...]:
    """What an in-place change of a new pod's constraints would alter (the API server's
    matchLabelKeys merge appends to a selector's expressions): a stale parse is never reused."""
    return tuple(
        -1 if c.label_selector is None else len(c.label_selector.match_expressions) for c in constraints
    )


#: (constraint list id, action) -> (the list, its _shape, its parsed constraints)
_PARSED: dict[
    tuple[int, str],
    tuple[Sequence[TopologySpreadConstraint], tuple[int, ...], tuple[SpreadConstraint, ...]],
] = {}
#: (action, what spread_constraint_key names per constraint) -> the parsed constraints: the
#: pods of one workload are separate objects with equal constraints
_PARSED_BY_CONTENT: dict[Hashable, tuple[SpreadConstraint, ...]] = {}


def _parse_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    action: str,
    merge_labels: Mapping[str, str] | None = None,
) -> list[SpreadConstraint]:
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = compile_label_selector(c.label_selector)
        if merge_labels is not None and c.match_label_keys:
            own = {k: merge_labels[k] for k in c.match_label_keys if k in merge_labels}
            if own:
                selector = selector.with_requirements(_set_selector(own).requirements)
        out.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return out


def _set_selector(label_set: Mapping[str, str]) -> Selector:
    return Selector(tuple(Requirement(k, IN, frozenset((v,))) for k, v in label_set.items()))


def _group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" and "v1" have no group; more than one "/" is an error."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def default_selector(pod: Pod, cluster: ClusterState) -> Selector:
    """helper.DefaultSelector: the union of the selectors of the pod's Services (same namespace,
    selector matching the pod) and of its controller (ReplicationController, ReplicaSet or
    StatefulSet, looked up by name in the pod's namespace)."""
    ns = pod.namespace
    labels = pod.metadata.labels
    label_set: dict[str, str] = {}
    for svc in cluster.objects("Service").values():
        if not isinstance(svc, Service) or svc.namespace != ns:
            continue
        sel = svc.spec.selector
        if sel and all(labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    selector = _set_selector(label_set)
    owner = pod.metadata.controller_ref()
    if owner is None:
        return selector
    gv = _group_version(owner.api_version)
    if gv is None:
        return selector
    gvk = (*gv, owner.kind)
    key = f"{ns}/{owner.name}"
    if gvk == _RC:
        rc = cluster.objects("ReplicationController").get(key)
        if isinstance(rc, ReplicationController):
            label_set.update(rc.spec.selector)
            selector = _set_selector(label_set)
    elif gvk in (_RS, _SS):
        owner_obj = cluster.objects(gvk[2]).get(key)
        if isinstance(owner_obj, ReplicaSet | StatefulSet):
            other = compile_label_selector(owner_obj.spec.selector)
            if not other.nothing:
                selector = selector.with_requirements(other.requirements)
    return selector


def build_default_constraints(
    defaults: Sequence[TopologySpreadConstraint], pod: Pod, cluster: ClusterState, action: str
) -> list[SpreadConstraint]:
    """The default constraints of this action, all with the owner-derived selector; none when
    that selector is empty (a pod without Service or controller is not spread by default).

    Their own labelSelector and matchLabelKeys play no part: v1.35 replaces the selector of
    every default constraint with the derived one."""
    parsed = parse_constraints(defaults, action)
    if not parsed:
        return []
    selector = default_selector(pod, cluster)
    if selector.empty:
        return []
    return [
        SpreadConstraint(
            c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy, c.node_taints_policy
        )
        for c in parsed
    ]


def has_all_keys(cluster: ClusterState, constraints: Sequence[SpreadConstraint]) -> np.ndarray:
    """Per node id: the node carries every constraint's topology key."""
    mask = np.ones(cluster.num_nodes, dtype=bool)
    for key in {c.topology_key for c in constraints}:
        mask &= cluster.node_label_column(key)[0] >= 0
    return mask


#: per cluster: (node generation, {keys: (has_all_keys mask, whether every node has them)})
_KEYED: weakref.WeakKeyDictionary[ClusterState, tuple[int, dict[frozenset[str], tuple[np.ndarray, bool]]]] = (
    weakref.WeakKeyDictionary()
)


def nodes_with_keys(
    cluster: ClusterState, constraints: Sequence[SpreadConstraint]
) -> tuple[np.ndarray, bool]:
    """:func:`has_all_keys` (read-only) and whether it holds for every node, kept per node set."""
    generation = cluster.node_generation
    got = _KEYED.get(cluster)
    if got is None or got[0] != generation:
        got = _KEYED[cluster] = (generation, {})
    keys = frozenset(c.topology_key for c in constraints)
    hit = got[1].get(keys)
    if hit is None:
        mask = has_all_keys(cluster, constraints)
        mask.flags.writeable = False
        hit = got[1][keys] = (mask, bool(mask.all()))
    return hit


def matching_counts(
    cluster: ClusterState, pod: Pod, selector: Selector, *, empty_counts_all: bool = False
) -> np.ndarray:
    """countPodsMatchSelector per node id: bound, non-terminating pods of the pod's namespace
    that the selector matches. An empty selector counts nothing (kube returns 0 for it) unless
    ``empty_counts_all`` (v1.38), and a nil one (NOTHING) matches nothing."""
    if (selector.empty and not empty_counts_all) or selector.nothing:
        return np.zeros(cluster.num_nodes, dtype=np.int64)
    return cluster.pod_counts(frozenset((pod.namespace,)), selector, include_terminating=False)


class InclusionMasks:
    """Per node id, whether the pod's required node affinity matches (nodeAffinityPolicy Honor)
    and whether the node has no untolerated NoSchedule/NoExecute taint (nodeTaintsPolicy Honor).

    Both are the corresponding Filter's verdicts: NodeAffinity's cached mask and
    TaintToleration's (decided once per distinct taint list).
    """

    def affinity(self, cluster: ClusterState, pod: Pod) -> np.ndarray:
        req = required_node_affinity(pod)
        if req.is_trivial:
            return np.ones(cluster.num_nodes, dtype=bool)
        return req.mask(cluster)

    def taints(self, cluster: ClusterState, pod: Pod) -> np.ndarray:
        """Nodes without a NoSchedule/NoExecute taint the pod leaves untolerated."""
        return ~untolerated_nodes(cluster, pod.spec.tolerations)

    def restricts(self, pod: Pod, c: SpreadConstraint) -> bool:
        """Whether the policies may leave out a node that carries the keys (:meth:`eligible`
        is not None nor all true): Honor with a required node affinity, or Honor for taints."""
        if c.node_taints_policy == HONOR:
            return True
        return c.node_affinity_policy == HONOR and not required_node_affinity(pod).is_trivial

    def eligible(self, cluster: ClusterState, pod: Pod, c: SpreadConstraint) -> np.ndarray | None:
        """The nodes whose pods and domains count for ``c``; None when every node does."""
        mask: np.ndarray | None = None
        if c.node_affinity_policy == HONOR:
            mask = self.affinity(cluster, pod)
        if c.node_taints_policy == HONOR:
            t = self.taints(cluster, pod)
            mask = t if mask is None else mask & t
        return mask
