"""What ``plan.audit`` reads of a simulation: each workload's desired and running replicas,
whether a pod runs or waits, and after a failure run each workload's spread skews (the
scheduler's views, without the raw counts ``spread_rows`` adds for display) and every
PodDisruptionBudget's health; a pod's workload; the node label keys close to one mistyped;
which failures fail the same nodes (one run answers for all of them)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

from kubespread.api.apps import Deployment, ReplicaSet, StatefulSet
from kubespread.api.core import Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster.workloads import ownership
from kubespread.controllers.disruption import pdb_budget
from kubespread.plan.results import BudgetHealth, SkewRow
from kubespread.scheduler.views import ConstraintView, workload_groups, workload_views
from kubespread.sim.engine import Simulation

__all__ = [
    "WORKLOAD_KINDS",
    "budgets",
    "desired_replicas",
    "did_you_mean",
    "distinct_runs",
    "is_pending",
    "is_running",
    "running_replicas",
    "skews",
    "workload_key",
]

#: the workloads the audit counts replicas of (those no controller owns)
WORKLOAD_KINDS: Final = (Deployment.KIND, StatefulSet.KIND, ReplicaSet.KIND)


def workload_key(sim: Simulation, pod: Pod) -> str | None:
    top = ownership(sim.cluster, pod).top
    return top.key if top else None


def skews(sim: Simulation, keys: set[str], owners: Mapping[str, str | None]) -> dict[str, list[SkewRow]]:
    """Per workload, each spread constraint's skew as ``views.spread_rows`` counts it (its
    rows' views, without the raw counts the audit does not show); ``owners``: pod key →
    workload key."""
    out: dict[str, list[SkewRow]] = {}
    groups = workload_groups(sim.cluster)
    for group in sorted(groups):
        if not group[1]:  # a pod without a controller: no workload
            continue
        # the group's pods share one controller, so one workload: known before any view is
        # counted (a DaemonSet's or a Job's pods are counted for nothing)
        first = groups[group][0]
        key = owners[first.key] if first.key in owners else workload_key(sim, first)
        if key is None or key not in keys:
            continue
        found = workload_views(sim.cluster, sim.profiles, groups[group])
        if found is None:
            continue
        for view in found[1]:
            out.setdefault(key, []).append(_skew_row(view))
    return out


def _skew_row(view: ConstraintView) -> SkewRow:
    c = view.constraint
    return SkewRow(
        topology_key=c.topology_key,
        when_unsatisfiable=view.when_unsatisfiable,
        max_skew=c.max_skew,
        min_domains=c.min_domains,
        node_taints_policy=c.node_taints_policy,
        skew=view.skew,
        within_max_skew=view.within,
        domains=view.domains,
    )


def budgets(sim: Simulation) -> dict[str, BudgetHealth]:
    """Every PodDisruptionBudget by ``namespace/name`` with its health as the disruption
    controller last wrote it."""
    out = {}
    for key, pdb in sorted(sim.cluster.objects(PodDisruptionBudget.KIND).items()):
        assert isinstance(pdb, PodDisruptionBudget)
        budget = pdb_budget(pdb)
        out[key] = BudgetHealth(key, budget.current_healthy, budget.desired_healthy, budget.broken)
    return out


def desired_replicas(sim: Simulation) -> dict[str, int]:
    """``namespace/Kind/name`` → spec.replicas of every Deployment, StatefulSet and
    ReplicaSet that no controller owns."""
    out: dict[str, int] = {}
    for kind in WORKLOAD_KINDS:
        for obj in sim.cluster.objects(kind).values():
            if obj.metadata.controller_ref() is not None:
                continue
            replicas = getattr(obj.spec, "replicas", None)  # type: ignore[attr-defined]
            out[f"{obj.namespace}/{kind}/{obj.metadata.name}"] = 1 if replicas is None else int(replicas)
    return dict(sorted(out.items()))


def is_running(sim: Simulation, pod: Pod) -> bool:
    """Bound to a node that is reachable, neither terminating nor finished."""
    node = sim.cluster.node_of(pod.key)
    return bool(node) and not pod.is_terminating and not pod.is_finished and sim.node_reachable(node)


def running_replicas(sim: Simulation, owners: Mapping[str, str | None] | None = None) -> dict[str, int]:
    """``namespace/Kind/name`` → the workload's replicas running now (see ``is_running``);
    ``owners``: pod key → workload key, known already (the others are looked up)."""
    out: dict[str, int] = {}
    known = owners or {}
    for key, pod in sim.cluster.pods.items():
        wl = known[key] if key in known else workload_key(sim, pod)
        if wl is not None and is_running(sim, pod):
            out[wl] = out.get(wl, 0) + 1
    return out


def is_pending(pod: Pod) -> bool:
    """Not bound, neither terminating nor finished."""
    return not pod.spec.node_name and not pod.is_terminating and not pod.is_finished


def did_you_mean(key: str, nodes: Mapping[str, Any]) -> str:
    """``; did you mean topology.kubernetes.io/zone?`` for ``zone``: the node label keys whose
    name (the part after the prefix) is the key given, or that end with it."""
    short = key.rsplit("/", 1)[-1].lower()
    keys = sorted({k for node in nodes.values() for k in node.metadata.labels})
    close = [k for k in keys if k.rsplit("/", 1)[-1].lower() == short] or [
        k for k in keys if k.lower().endswith(short) and k != key
    ]
    return f"; did you mean {' or '.join(close[:3])}?" if close else ""


def distinct_runs(node_sets: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """``(runs, which)``: the indexes of the first failure of each distinct set of nodes, in
    order, and per failure the position in ``runs`` of the run that answers for it. Two
    domains with the same nodes (a zone of one node and that node's hostname, a rack per
    node) are the same steps on the same base, so the same run: only the record's domain
    differs."""
    first: dict[Hashable, int] = {}
    runs: list[int] = []
    which: list[int] = []
    for i, nodes in enumerate(node_sets):
        if nodes not in first:
            first[nodes] = len(runs)
            runs.append(i)
        which.append(first[nodes])
    return runs, which
