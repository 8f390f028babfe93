"""What a failure run reuses of its base's reading: a forked run reads again only the
workloads it may have changed, and takes the others' pods and skews from the base's reading
(read once, in the parent, before forking).

Why: a forked child pays for every page of the parent's heap it touches (copy-on-write), and
reading every pod and counting every workload's skews touched half the pages a node run
copied (about 1,600 of 3,600 on the bundled snapshot), for workloads that a one-node failure
mostly leaves alone.

What a workload's reading depends on, and so what makes a run read it again (``Heard``
listens to the cluster during the run, tentative changes included, so it may hear too much,
which costs only time):

- its pods (running, pending, bound when, the budgets selecting the first): an event on one
  of them, or on a node one of them is bound to, or a change of that node's reachability;
  a workload with a pending pod is always read again (kube-scheduler's message for a pod
  changes when the cluster does, with no event on the pod);
- its skews (``audit_reads.skew_views``: bound, non-terminating pods of its namespace that a
  constraint's selector matches, per domain of the nodes' labels, nodes left out by
  nodeTaintsPolicy Honor): an event on one of its pods, on a pod of its namespace one of its
  selectors matches (before or after), on any node when a constraint honors taints;
- a node added, removed or relabelled, an object whose selector a reading uses (a budget, a
  Service, a controller) added, removed or given another selector, or the workloads'
  desired replicas changed: everything is read again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubespread.api.apps import ReplicaSet, StatefulSet
from kubespread.api.core import HONOR, Node, Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.selectors import Selector
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.plan.audit_reads import (
    PodReads,
    desired_replicas,
    read_pods,
    skew_row,
    skew_views,
    workload_key,
)
from kubespread.plan.results import SkewRow
from kubespread.sim.engine import Simulation

__all__ = ["BaseReading", "Heard", "read_base", "reading_after"]


@dataclass(frozen=True)
class BaseReading:
    """The base's reading, per workload (see the module notes): its pods' keys (sorted), the
    nodes' workloads, each node's reachability, ``pods`` as ``read_pods`` read them, the
    skew rows, the selectors they count and whether one honors taints."""

    desired: dict[str, int]
    keys: dict[str, tuple[str, ...]]
    on_node: dict[str, frozenset[str]]
    reachable: dict[str, bool]
    pods: PodReads
    skews: dict[str, tuple[SkewRow, ...]]
    selectors: dict[str, tuple[Selector, ...]]
    honors_taints: frozenset[str]


def read_base(sim: Simulation, owners: Mapping[str, str | None]) -> BaseReading:
    """The reading of ``sim`` before any failure; ``owners``: every pod's workload."""
    desired = desired_replicas(sim)
    keys: dict[str, list[str]] = {}
    on_node: dict[str, set[str]] = {}
    for key in sorted(sim.cluster.pods):
        wl = owners.get(key)
        if wl is None:
            continue
        keys.setdefault(wl, []).append(key)
        node = sim.cluster.pods[key].spec.node_name
        if node:
            on_node.setdefault(node, set()).add(wl)
    views = skew_views(sim, set(desired), owners)
    return BaseReading(
        desired=desired,
        keys={wl: tuple(k) for wl, k in keys.items()},
        on_node={node: frozenset(w) for node, w in on_node.items()},
        reachable={name: sim.node_reachable(name) for name in sim.cluster.nodes},
        pods=read_pods(sim, sorted(sim.cluster.pods), dict(owners), desired, {}),
        skews={wl: tuple(skew_row(v) for v in vs) for wl, vs in views.items()},
        selectors={wl: tuple(v.constraint.selector for v in vs) for wl, vs in views.items()},
        honors_taints=frozenset(
            wl for wl, vs in views.items() if any(v.constraint.node_taints_policy == HONOR for v in vs)
        ),
    )


#: the kinds whose selectors a reading uses: the budgets', and those kube-scheduler derives
#: default spread constraints from (``podtopologyspread.common.default_selector``)
_SELECTING: Final = frozenset(
    (PodDisruptionBudget.KIND, "Service", "ReplicationController", ReplicaSet.KIND, StatefulSet.KIND)
)


class Heard:
    """The changes the cluster announces from now until ``stop()``: every version of each pod
    changed (before and after), the nodes changed, and whether the run ``reshaped`` the
    cluster: a node added, removed or relabelled, or an object of ``_SELECTING`` added,
    removed or given another selector."""

    def __init__(self, cluster: ClusterState) -> None:
        self.pods: dict[str, list[Pod]] = {}
        self.nodes: set[str] = set()
        self.reshaped = False
        self.stop: Callable[[], None] = cluster.subscribe(
            self._hear, derived=True, kinds=(Pod.KIND, Node.KIND, *_SELECTING)
        )

    def _hear(self, ev: ClusterEvent) -> None:
        if ev.kind == Pod.KIND:
            versions = self.pods.setdefault(ev.obj.key, [])
            versions.append(ev.obj)
            if ev.old is not None:
                versions.append(ev.old)
            return
        if ev.type is not EventType.UPDATED or ev.old is None:
            self.reshaped = True
        elif ev.kind == Node.KIND:
            self.reshaped |= ev.old.metadata.labels != ev.obj.metadata.labels
        else:
            self.reshaped |= _selector(ev.old) != _selector(ev.obj)
        if ev.kind == Node.KIND:
            self.nodes.add(ev.obj.metadata.name)


def _selector(obj: Any) -> Any:
    return getattr(getattr(obj, "spec", None), "selector", None)


def reading_after(
    base: BaseReading,
    heard: Heard,
    sim: Simulation,
    desired: Mapping[str, int],
    owners: dict[str, str | None],
    bound_at: Mapping[str, float],
) -> tuple[PodReads, dict[str, list[SkewRow]]] | None:
    """The run's reading of every workload of ``desired`` (``read_pods``' and the skews), the
    workloads it may have changed read again, the others the base's; None when everything
    must be read again. ``owners`` learns the new pods' workloads."""
    if heard.reshaped or dict(desired) != base.desired:
        return None
    changed: dict[str, list[str]] = {}  # workload -> the pods heard of
    for key, versions in heard.pods.items():
        pod = sim.cluster.pods.get(key)
        wl = owners[key] if key in owners else owners.setdefault(key, workload_key(sim, pod or versions[0]))
        if wl is not None:
            changed.setdefault(wl, []).append(key)
    nodes = heard.nodes | {n for n, r in base.reachable.items() if sim.node_reachable(n) != r}
    touched = set(changed)
    for node in nodes:
        touched |= base.on_node.get(node, frozenset())
    again = (touched | set(base.pods.pending)) & set(desired)

    def keys_of(workloads: set[str]) -> list[str]:
        return sorted({k for wl in workloads for k in (*base.keys.get(wl, ()), *changed.get(wl, ()))})

    pods = read_pods(sim, keys_of(again), owners, desired, bound_at)
    for wl in desired:
        if wl not in again and wl in base.pods.running:
            pods.running[wl] = base.pods.running[wl]
            pods.recovered_at[wl] = base.pods.recovered_at[wl]
            pods.budgets_of[wl] = base.pods.budgets_of[wl]
    recount = _recount(base, heard, set(changed) & set(desired), set(desired))
    live = [pod for k in keys_of(recount) if (pod := sim.cluster.pods.get(k)) is not None]
    skews = {wl: list(rows) for wl, rows in base.skews.items() if wl not in recount}
    for wl, views in skew_views(sim, recount, owners, live).items():
        skews[wl] = [skew_row(v) for v in views]
    return pods, skews


def _recount(base: BaseReading, heard: Heard, changed: set[str], desired: set[str]) -> set[str]:
    """The workloads whose skews the run may have changed (see the module notes)."""
    out = set(changed)
    if heard.nodes:
        out |= base.honors_taints & desired
    namespaces = {p.namespace for versions in heard.pods.values() for p in versions}
    for wl, selectors in base.selectors.items():
        if wl in out or wl not in desired or wl.split("/", 1)[0] not in namespaces:
            continue
        if any(
            p.namespace == wl.split("/", 1)[0] and s.matches(p.metadata.labels)
            for versions in heard.pods.values()
            for p in versions
            for s in selectors
        ):
            out.add(wl)
    return out
