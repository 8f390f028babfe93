"""The ``kubespread simulate`` use case: a loaded scenario and its options in
(:class:`SimulateRequest`), one run or ``--runs N`` of it out (:class:`SimulateOutcome`).

The cli loads the scenario file, parses the options, shows progress through
:class:`SimulateHooks`, and renders the outcome (tables, ``-o json|yaml``, ``--dump``,
``--report``); everything between is here: the controllers wired with the options, the
pending pods' hints, and the documents (:mod:`kubespread.sim.delta`'s forms)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubespread.admission.framework import AdmissionOptions
from kubespread.controllers import default_controllers
from kubespread.controllers.host import Controller
from kubespread.controllers.workloadspread import WorkloadSpreadOptions
from kubespread.scheduler.scheduler import Decision
from kubespread.sim.delta import delta_dict, full_dict
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation
from kubespread.sim.hints import PendingHints
from kubespread.sim.placement import report_explanation
from kubespread.sim.rows import JsonDoc
from kubespread.sim.run import SimulationResult, StepResult, simulate
from kubespread.sim.runs import RunsResult, simulate_runs
from kubespread.sim.scenario import Scenario, Step

__all__ = ["SimulateHooks", "SimulateOutcome", "SimulateRequest", "run_scenario"]

#: ``--affinity-grace-period``'s default, seconds
DEFAULT_AFFINITY_GRACE = 60.0


@dataclass(frozen=True, slots=True)
class SimulateRequest:
    """What ``kubespread simulate`` is asked, once the scenario is loaded.

    ``runs``: None for one deterministic run (the scenario's seed), else that many runs with
    the scheduler's ties drawn at random, the first with ``seed`` (default: the scenario's).
    ``keep_first``: with ``runs``, keep the first run's result (to dump it or report on it);
    ``explain_first``: with ``runs``, also explain the first run's pending pods at each step
    (the report's hints). One run always keeps both."""

    scenario: Scenario
    runs: int | None = None
    seed: int | None = None
    admission: AdmissionOptions | None = None
    affinity_grace_seconds: float = DEFAULT_AFFINITY_GRACE
    workloadspread: WorkloadSpreadOptions = field(default_factory=WorkloadSpreadOptions)
    max_pods: int | None = DEFAULT_MAX_PODS
    keep_first: bool = False
    explain_first: bool = False

    def controllers(self) -> list[Controller]:
        """A run's own controllers (a controller keeps state), wired with the options."""
        return default_controllers(
            affinity_grace_seconds=self.affinity_grace_seconds, workloadspread=self.workloadspread
        )


@dataclass(frozen=True, slots=True)
class SimulateHooks:
    """Progress: ``on_run(i, seed)`` before run i (with ``runs`` only), ``on_step(step)``
    before each step, ``on_decision(decision)`` after every scheduling decision."""

    on_run: Callable[[int, int], None] | None = None
    on_step: Callable[[Step], None] | None = None
    on_decision: Callable[[Decision], None] | None = None


@dataclass(frozen=True)
class SimulateOutcome:
    """One run's result (or, with ``runs``, the first run's when kept) with the hints of its
    pending pods, and with ``runs`` the summary over the runs."""

    result: SimulationResult | None
    hints: PendingHints | None
    runs: RunsResult | None = None

    def _first(self) -> tuple[SimulationResult, PendingHints]:
        if self.result is None or self.hints is None:
            raise ValueError("the first run was not kept (SimulateRequest.keep_first, explain_first)")
        return self.result, self.hints

    def full_doc(self) -> JsonDoc:
        """The run's full form (every pod at every step), hints on its pending pods: the
        table's and the report's input, and ``-o json|yaml --output-form full``."""
        result, hints = self._first()
        return full_dict(result, hints.decorate)

    def delta_doc(self) -> JsonDoc:
        """The run's delta form (``-o json|yaml``'s default), hints on its pending pods."""
        result, hints = self._first()
        return delta_dict(result, hints.decorate)

    def report_explanation(self) -> tuple[int | None, JsonDoc] | None:
        """The explanation a report shows, as a dict, with the index of the step it was made
        at: the first pending pod explained at the step where it was pending; else (index
        None) the run's end's (:func:`~kubespread.sim.placement.report_explanation`)."""
        result, hints = self._first()
        if hints.first is not None:
            return hints.first
        if result.sim is None:
            return None
        explained = report_explanation(result.sim)
        return None if explained is None else (None, explained.to_dict())


def run_scenario(request: SimulateRequest, hooks: SimulateHooks | None = None) -> SimulateOutcome:
    """The ``simulate`` use case; ScenarioError (located) when a step cannot be carried out
    (with ``runs``, its problems name the run and its seed)."""
    hooks = hooks or SimulateHooks()
    if request.runs is None:
        hints = PendingHints()
        result = simulate(
            request.scenario,
            controllers=request.controllers(),
            admission=request.admission,
            on_step=hooks.on_step,
            on_decision=hooks.on_decision,
            max_pods=request.max_pods,
            after_step=hints,
        )
        return SimulateOutcome(result, hints)
    first_hints = PendingHints() if request.explain_first else None
    kept: list[SimulationResult] = []
    current = [0]

    def on_run(i: int, seed: int) -> None:
        current[0] = i
        if hooks.on_run is not None:
            hooks.on_run(i, seed)

    def after_step(sim: Simulation, step: StepResult) -> None:
        if first_hints is not None and current[0] == 0:
            first_hints(sim, step)

    def on_result(i: int, result: SimulationResult) -> None:
        if i == 0 and (request.keep_first or request.explain_first):
            kept.append(result)

    summary = simulate_runs(
        request.scenario,
        request.runs,
        seed=request.seed,
        controllers=request.controllers,
        admission=request.admission,
        max_pods=request.max_pods,
        on_run=on_run,
        on_step=hooks.on_step,
        on_decision=hooks.on_decision,
        after_step=after_step if first_hints is not None else None,
        on_result=on_result,
    )
    return SimulateOutcome(kept[0] if kept else None, first_hints, summary)
