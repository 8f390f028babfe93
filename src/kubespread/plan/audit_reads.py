"""What ``plan.audit`` reads of a simulation: each workload's desired and running replicas,
whether a pod runs or waits, and after a failure run each workload's pods (``read_pods``:
running, pending by message, when each was bound, the budgets selecting it), spread skews
(the scheduler's views, without the raw counts ``spread_rows`` adds for display) and every
PodDisruptionBudget's health; a pod's workload; the node label keys close to one mistyped;
which failures fail the same nodes (one run answers for all of them)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubespread.api.apps import Deployment, ReplicaSet, StatefulSet
from kubespread.api.core import Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster.workloads import ownership
from kubespread.controllers.disruption import pdb_budget, pdbs_for_pod
from kubespread.plan.results import BudgetHealth, SkewRow
from kubespread.scheduler.views import ConstraintView, workload_groups, workload_views
from kubespread.sim.engine import Simulation

__all__ = [
    "WORKLOAD_KINDS",
    "PodReads",
    "budgets",
    "desired_replicas",
    "did_you_mean",
    "distinct_runs",
    "is_pending",
    "is_running",
    "read_pods",
    "running_replicas",
    "skew_views",
    "skews",
    "workload_key",
]

#: the workloads the audit counts replicas of (those no controller owns)
WORKLOAD_KINDS: Final = (Deployment.KIND, StatefulSet.KIND, ReplicaSet.KIND)


def workload_key(sim: Simulation, pod: Pod) -> str | None:
    top = ownership(sim.cluster, pod).top
    return top.key if top else None


def skews(
    sim: Simulation, keys: set[str], owners: Mapping[str, str | None], pods: Iterable[Pod] | None = None
) -> dict[str, list[SkewRow]]:
    """Per workload, each spread constraint's skew as ``views.spread_rows`` counts it (its
    rows' views, without the raw counts the audit does not show); ``owners``: pod key →
    workload key; ``pods``: the workloads of these pods alone (None: every pod's)."""
    return {key: [skew_row(v) for v in views] for key, views in skew_views(sim, keys, owners, pods).items()}


def skew_views(
    sim: Simulation, keys: set[str], owners: Mapping[str, str | None], pods: Iterable[Pod] | None = None
) -> dict[str, list[ConstraintView]]:
    """The views ``skews`` reads, per workload of ``keys`` (a Deployment's ReplicaSets' in
    the order of their names)."""
    out: dict[str, list[ConstraintView]] = {}
    groups = workload_groups(sim.cluster, pods)
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
        out.setdefault(key, []).extend(found[1])
    return out


def skew_row(view: ConstraintView) -> SkewRow:
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


@dataclass
class PodReads:
    """What ``read_pods`` read of some workloads' pods: per workload its running replicas, the
    time after the run's start when the last of them was bound, its pending pods by
    kube-scheduler's message (each list by key), and the budgets selecting its first pod."""

    running: dict[str, int] = field(default_factory=dict)
    recovered_at: dict[str, float] = field(default_factory=dict)
    pending: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    budgets_of: dict[str, set[str]] = field(default_factory=dict)


def read_pods(
    sim: Simulation,
    keys: Iterable[str],
    owners: dict[str, str | None],
    desired: Mapping[str, int],
    bound_at: Mapping[str, float],
) -> PodReads:
    """The pods ``keys`` (sorted; those gone are skipped) of the workloads in ``desired``,
    each workload counted from 0; ``owners`` (pod key → workload key) learns the new pods'
    workloads; ``bound_at``: when the run bound a pod (a pod it did not bind counts 0)."""
    out = PodReads()
    pods = sim.cluster.pods
    for key in keys:
        pod = pods.get(key)
        if pod is None:
            continue
        wl = owners[key] if key in owners else owners.setdefault(key, workload_key(sim, pod))
        if wl is None or wl not in desired:
            continue
        if wl not in out.budgets_of:
            out.budgets_of[wl] = {f"{b.namespace}/{b.metadata.name}" for b in pdbs_for_pod(sim.cluster, pod)}
            out.running[wl], out.recovered_at[wl] = 0, 0.0
        if is_running(sim, pod):
            out.running[wl] += 1
            out.recovered_at[wl] = max(out.recovered_at[wl], bound_at.get(key, 0.0))
        elif is_pending(pod):
            message = sim.pending_reasons.get(key, "")
            out.pending.setdefault(wl, {}).setdefault(message, []).append(key)
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
