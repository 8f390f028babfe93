"""Why no arrangement places every new pod: a minimal set of the model's constraints that
together forbid it (CP-SAT assumptions, shrunk one at a time)."""

from __future__ import annotations

from ortools.sat.python import cp_model

from kubespread.solve.encode import Encoding
from kubespread.solve.model import PlacementModel, guards

__all__ = ["conflict"]


def conflict(model: PlacementModel, *, time_limit: float = 10.0) -> list[str] | None:
    """A minimal set of constraints that together forbid placing every new pod, None when an
    arrangement places them all (or the solver cannot tell in time). One CP-SAT assumption
    guards each constraint (resources; each group's spread constraints, anti-affinity terms
    and affinity); the solver's ``SufficientAssumptionsForInfeasibility`` is then shrunk by
    dropping one at a time while what is left stays infeasible. [] when some group has no
    feasible node at all."""
    numbered = guards(model)
    names = [name for name, _ in numbered]
    if model.count == 0:
        return None
    if any(g.count and not g.nodes for g in model.groups):
        return []

    def infeasible(active: list[int]) -> tuple[bool, list[int]]:
        status, core = _with_assumptions(model, active, time_limit)
        return status == cp_model.INFEASIBLE, core

    bad, core = infeasible(list(range(len(names))))
    if not bad:
        return None
    kept = sorted(core)
    for i in list(kept):
        trial = [j for j in kept if j != i]
        if infeasible(trial)[0]:
            kept = trial
    return [names[i] for i in kept]


def _with_assumptions(model: PlacementModel, active: list[int], time_limit: float) -> tuple[int, list[int]]:
    """Solve "every new pod placed" with the constraints numbered as in :func:`conflict`,
    those in ``active`` assumed; (status, indices of a sufficient infeasible subset)."""
    b = Encoding(model, exact=True, assume=True)
    keys = [key for _, key in guards(model)]
    lits = [b.lits[k] for k in keys]
    b.m.add_assumptions([lits[i] for i in active])
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 1
    status = solver.solve(b.m)
    core: list[int] = []
    if status == cp_model.INFEASIBLE:
        index = {lit.index: i for i, lit in enumerate(lits)}
        core = [index[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in index]
    return int(status), core
