"""What ``plan.audit`` reads of a simulation after a failure run, besides the pods: each
workload's spread skews (the scheduler's views, without the raw counts ``spread_rows`` adds
for display) and every PodDisruptionBudget's health; and a pod's workload."""

from __future__ import annotations

from collections.abc import Mapping

from kubespread.api.core import Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster.workloads import ownership
from kubespread.controllers.disruption import pdb_budget
from kubespread.plan.results import BudgetHealth, SkewRow
from kubespread.scheduler.views import ConstraintView, workload_groups, workload_views
from kubespread.sim.engine import Simulation

__all__ = ["budgets", "skews", "workload_key"]


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
