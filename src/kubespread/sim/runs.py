"""A scenario replayed with the scheduler's ties drawn at random: what is certain, what is not.

kube-scheduler picks among equally scored nodes by a race of its 16 Filter threads, so a
pod whose best nodes tie lands on one of them, not always the same; one deterministic run
(``simulate``) shows one of the possible outcomes as if it were the only one.
:func:`simulate_runs` replays a scenario N times with ``random_ties``, run i (from 0) with
seed S+i (S: the scenario's own seed unless given), so that run i is reproduced alone by
the seed S+i. The seed also draws the names and uids the API server generates (random on
a real one too; a scale-down breaks ties between equal pods by uid), so those vary as well.

Each step (the initial settling first) is summarised over the runs: per workload and
topology key of the snapshot's ``distribution`` rows (``scheduler.views.spread_rows``: one
workload per controller, the keys its constraints and rules name), the workload's own
running pods per domain, the rows' ``rawDomains`` (every domain of the key, so runs compare
domain by domain even where the scheduler leaves one out), as min/median/max; the pending
pods likewise; and whether every run ended the step alike, compared on each workload's pods
per node, pending pods and node states (finer than the counts shown: two runs may put a
zone's pod on different nodes of the zone).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from kubespread.admission.framework import AdmissionOptions
from kubespread.controllers.host import Controller
from kubespread.scheduler.scheduler import Decision
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation
from kubespread.sim.rows import JsonDoc
from kubespread.sim.run import SimulationResult, StepResult, simulate
from kubespread.sim.scenario import Scenario, ScenarioError, Step

__all__ = [
    "IDENTICAL",
    "Counts",
    "OutcomeSpread",
    "RunsResult",
    "StepSpread",
    "run_seeds",
    "simulate_runs",
]

#: the verdict of a step every run ended alike
IDENTICAL: Final = "identical in every run"

#: (namespace, controller kind, controller name, topologyKey); kind "" and the pod's name
#: for a pod without a controller
_RowKey = tuple[str, str, str, str]
#: each workload's live pods per node ("" for pending), as sorted (namespace, kind, name,
#: node) → count: what "alike" compares
_Placement = tuple[tuple[tuple[str, str, str, str], int], ...]


def run_seeds(seed: int, runs: int) -> list[int]:
    """The seed of each run: S, S+1, ..., S+runs-1 (run i is replayed alone by seed S+i)."""
    return [seed + i for i in range(runs)]


@dataclass(frozen=True, slots=True)
class Counts:
    """One count over the runs (a workload's pods in a domain, the pending pods): min == max
    means every run gave the same. ``median`` is a .5 when the runs are even and split."""

    min: int
    median: float
    max: int

    @classmethod
    def of(cls, values: Sequence[int]) -> Counts:
        return cls(min(values), float(statistics.median(values)), max(values))

    @property
    def certain(self) -> bool:
        return self.min == self.max

    def to_dict(self) -> dict[str, int | float]:
        median = int(self.median) if self.median.is_integer() else self.median
        return {"min": self.min, "median": median, "max": self.max}


@dataclass(frozen=True, slots=True)
class OutcomeSpread:
    """One workload on one topology key: its running pods per domain over the runs (a domain
    a run has no count for, its row missing then, counts 0 there)."""

    namespace: str
    #: (kind, name) of the pods' controller; None for a pod without one (``pod`` names it)
    workload: tuple[str, str] | None
    #: (kind, name) of the controller's owner (the Deployment of a ReplicaSet)
    owner: tuple[str, str] | None
    pod: str | None
    topology_key: str
    domains: dict[str, Counts]

    @property
    def certain(self) -> bool:
        return all(c.certain for c in self.domains.values())

    def to_dict(self) -> JsonDoc:
        """As a ``distribution`` row names its workload, then ``domains``: name → counts."""
        w, o = self.workload, self.owner
        return {
            "namespace": self.namespace,
            "workload": {"kind": w[0], "namespace": self.namespace, "name": w[1]} if w else None,
            "owner": {"kind": o[0], "name": o[1]} if o else None,
            "pod": self.pod,
            "topologyKey": self.topology_key,
            "domains": {d: c.to_dict() for d, c in self.domains.items()},
        }


@dataclass(frozen=True, slots=True)
class StepSpread:
    """One step (index -1: the initial settling) over the runs."""

    index: int
    action: str
    description: str
    #: the earliest and latest virtual time the runs ended the step at
    time: tuple[float, float]
    distribution: list[OutcomeSpread]
    pending: Counts
    #: distinct outcomes among the runs (each workload's pods per node, pending pods, the
    #: nodes' states)
    outcomes: int
    runs: int
    #: whether some run's outcome (or node states) differs from its own at the step before
    #: (the initial: True)
    changed: bool

    @property
    def identical(self) -> bool:
        return self.outcomes == 1

    @property
    def counts_identical(self) -> bool:
        """Whether every count shown (pods per domain, pending) is the same in every run."""
        return self.pending.certain and all(s.certain for s in self.distribution)

    @property
    def verdict(self) -> str:
        """``identical in every run``, else ``differs between runs`` with how many outcomes,
        noting when every count shown agrees (the runs differ below it: nodes in a domain)."""
        if self.identical:
            return IDENTICAL
        text = f"differs between runs: {self.outcomes} distinct outcomes in {self.runs} runs"
        if self.counts_identical:
            text += "; the counts per domain are the same in every run"
        return text

    def to_dict(self) -> JsonDoc:
        return {
            "index": self.index,
            "action": self.action,
            "description": self.description,
            "time": {"min": self.time[0], "max": self.time[1]},
            "identical": self.identical,
            "countsIdentical": self.counts_identical,
            "outcomes": self.outcomes,
            "changed": self.changed,
            "verdict": self.verdict,
            "pending": self.pending.to_dict(),
            "distribution": [s.to_dict() for s in self.distribution],
        }


@dataclass(frozen=True, slots=True)
class RunsResult:
    """A scenario's runs: their seeds and each step's spread of outcomes (the initial first)."""

    scenario: str
    seed: int
    seeds: list[int]
    steps: list[StepSpread]

    @property
    def runs(self) -> int:
        return len(self.seeds)

    def to_dict(self) -> JsonDoc:
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "runs": self.runs,
            "seeds": self.seeds,
            "randomTies": True,
            "steps": [s.to_dict() for s in self.steps],
        }


# ------------------------------------------------------------------ one run's outcome


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one run shows at one step: the counts per (workload, key) and domain, the pending
    pods, and the placement that says whether two runs are alike."""

    time: float
    counts: dict[_RowKey, dict[str, int]]
    #: per row key, (owner, pod) as the row names them
    names: dict[_RowKey, tuple[tuple[str, str] | None, str | None]]
    pending: int
    placement: _Placement
    #: the nodes not plainly up (failed, cordoned, tainted), as the snapshot lists them
    nodes: tuple[tuple[str, bool, bool, tuple[str, ...]], ...]


def _outcome(step: StepResult) -> _Outcome:
    snap = step.snapshot
    counts: dict[_RowKey, dict[str, int]] = {}
    names: dict[_RowKey, tuple[tuple[str, str] | None, str | None]] = {}
    for row in snap.distribution:
        w = row["workload"]
        key = (row["namespace"], w["kind"] if w else "", w["name"] if w else row["pod"], row["topologyKey"])
        if key in counts:  # another constraint on the same key: the same raw counts
            continue
        counts[key] = dict(row["rawDomains"])
        o = row["owner"]
        names[key] = ((o["kind"], o["name"]) if o else None, None if w else row["pod"])
    placed: Counter[tuple[str, str, str, str]] = Counter()
    for p in snap.pods:
        if p.terminating or p.phase in ("Succeeded", "Failed"):
            continue
        c = p.workload  # the controller, as a distribution row's
        kind, name = (c.kind, c.name) if c else ("", p.name)
        placed[(p.namespace, kind, name, p.node or "")] += 1
    nodes = tuple((n.name, n.failed, n.cordoned, n.taints) for n in snap.nodes)
    return _Outcome(snap.time, counts, names, len(snap.pending), tuple(sorted(placed.items())), nodes)


def _outcomes(result: SimulationResult) -> list[_Outcome]:
    return [_outcome(s) for s in (result.initial, *result.steps)]


def _step_spread(
    step: tuple[int, str, str], at: Sequence[_Outcome], before: Sequence[_Outcome] | None
) -> StepSpread:
    """The step's (index, action, description) outcomes ``at`` (one per run) summed up;
    ``before``: the same runs' at the step before (None for the initial settling)."""
    keys: dict[_RowKey, tuple[tuple[str, str] | None, str | None]] = {}
    for o in at:  # in the rows' order, a workload only some runs have after the others
        for key, named in o.names.items():
            keys.setdefault(key, named)
    spreads = []
    for key, (owner, pod) in keys.items():
        domains: dict[str, None] = {}
        for o in at:
            domains.update(dict.fromkeys(o.counts.get(key, {})))
        namespace, kind, name, topology_key = key
        spreads.append(
            OutcomeSpread(
                namespace=namespace,
                workload=(kind, name) if kind else None,
                owner=owner,
                pod=pod,
                topology_key=topology_key,
                domains={d: Counts.of([o.counts.get(key, {}).get(d, 0) for o in at]) for d in domains},
            )
        )
    changed = before is None or any(
        (a.counts, a.pending, a.placement, a.nodes) != (b.counts, b.pending, b.placement, b.nodes)
        for a, b in zip(at, before, strict=True)
    )
    times = [o.time for o in at]
    index, action, description = step
    return StepSpread(
        index=index,
        action=action,
        description=description,
        time=(min(times), max(times)),
        distribution=spreads,
        pending=Counts.of([o.pending for o in at]),
        outcomes=len({(o.placement, o.pending, o.nodes) for o in at}),
        runs=len(at),
        changed=changed,
    )


# ------------------------------------------------------------------ the runs


def _reseeded(scenario: Scenario, seed: int) -> Scenario:
    """The scenario with ``seed`` and its own copy of the cluster's objects (a run stores
    them; the next one starts from the objects as loaded)."""
    return replace(scenario, seed=seed, cluster=[replace(lo, obj=lo.obj.copy()) for lo in scenario.cluster])


def simulate_runs(
    scenario: Scenario,
    runs: int,
    *,
    seed: int | None = None,
    controllers: Callable[[], Sequence[Controller]] | None = None,
    admission: AdmissionOptions | None = None,
    max_pods: int | None = DEFAULT_MAX_PODS,
    on_run: Callable[[int, int], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
    on_decision: Callable[[Decision], None] | None = None,
    after_step: Callable[[Simulation, StepResult], None] | None = None,
    on_result: Callable[[int, SimulationResult], None] | None = None,
) -> RunsResult:
    """Run ``scenario`` ``runs`` times, one after the other, with the scheduler's ties drawn at
    random, run i with seed ``seed`` + i (``seed``: the scenario's own by default); see the
    module notes. ``controllers`` builds each run's own (a controller keeps state; None: the
    defaults). ``on_run(i, seed)`` is called before run i, ``on_result(i, result)`` after it
    (keep the result to dump or report that run); ``on_step``, ``on_decision`` and
    ``after_step`` are passed to every run's :func:`~kubespread.sim.run.simulate`. A run that
    fails raises ScenarioError, its problems prefixed with the run and its seed."""
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    base = scenario.seed if seed is None else seed
    seeds = run_seeds(base, runs)
    per_run: list[list[_Outcome]] = []
    #: each step's index, action and description (every run's are the same)
    described: list[tuple[int, str, str]] = []
    for i, s in enumerate(seeds):
        if on_run is not None:
            on_run(i, s)
        try:
            result = simulate(
                _reseeded(scenario, s),
                controllers=controllers() if controllers is not None else None,
                admission=admission,
                on_step=on_step,
                on_decision=on_decision,
                max_pods=max_pods,
                after_step=after_step,
                random_ties=True,
            )
        except ScenarioError as e:
            raise ScenarioError([f"run {i + 1} of {runs} (seed {s}): {p}" for p in e.problems]) from None
        per_run.append(_outcomes(result))
        if not described:
            described = [(r.index, r.action, r.description) for r in (result.initial, *result.steps)]
        if on_result is not None:
            on_result(i, result)
    steps = [
        _step_spread(step, [o[j] for o in per_run], [o[j - 1] for o in per_run] if j else None)
        for j, step in enumerate(described)
    ]
    return RunsResult(scenario.name, base, seeds, steps)
