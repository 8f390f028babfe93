"""``kubespread rebalance``: the fewest evictions that bring every spread constraint back
within maxSkew, in PodDisruptionBudget-safe waves, replayed before it is shown.

Topology spread is enforced only when a pod is scheduled; running pods drift past maxSkew
(a zone lost and back, a scale-down) and stay there. The planner:

1. settles the cluster as given and dumps it: the **replay starts from that dump**, which is
   what ``--apply-scenario`` writes beside the scenario, so ``kubespread simulate`` runs
   exactly the replay shown;
2. finds the workloads (the pods of one controller) whose running pods break a spread
   constraint: the skew ``views`` computes (DoNotSchedule; ScheduleAnyway too with
   ``constraints="all"``; a profile's soft default constraints never);
3. solves for the final state on the solver layer (``kubespread.solve``): those workloads'
   running pods may stay or be evicted (their controller recreates them and the scheduler
   places the replacement), every other pod stays; every modelled constraint holds in the
   final state with the skew within maxSkew over every eligible domain; the objective is
   the fewest evictions (``proven`` when CP-SAT proved it). Pods a budget cannot let go
   (a PDB allowing no disruption, or several PDBs: the Eviction API refuses those) stay;
4. cuts the evictions into **waves**: within a wave no budget gives more than its
   ``disruptionsAllowed``; the next wave starts once the replacements run;
5. **replays** the waves in the simulation (the Eviction API, the controllers, kube-scheduler
   v1.35's placement: the ``simulate`` engine) and reads where each replacement landed. When
   the scheduler did not land a replacement where the optimum needs it and a constraint is
   still broken, the planner plans again from the replayed state (more waves), up to
   ``MAX_ROUNDS``; what is still broken then is reported.

``strategy="descheduler"`` replays the descheduler's RemovePodsViolatingTopologySpread-
Constraint instead (``plan.descheduler``): one pass per wave until a pass evicts nothing,
the state repeats (a loop), or ``MAX_PASSES`` passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubespread.api.core import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, Pod
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.api.meta import KubeObject
from kubespread.api.selectors import Selector
from kubespread.cluster.state import ClusterState
from kubespread.cluster.workloads import WorkloadRef
from kubespread.controllers.disruption import pdb_budget, pdbs_for_pod
from kubespread.io.dump import cluster_objects
from kubespread.plan.descheduler import DeschedulerArgs, descheduler_pass
from kubespread.plan.results import ConstraintKey, ConstraintSkew
from kubespread.plan.workloads import cluster_without, template_key, unbound, workload_of
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.views import SpreadRow, spread_rows
from kubespread.sim.baseline import Baseline
from kubespread.sim.engine import Simulation
from kubespread.sim.rows import JsonDoc
from kubespread.sim.run import run_step, settled_from
from kubespread.sim.scenario import API_VERSION, Step
from kubespread.solve import SolveError, build_groups, conflict, solve, solve_by_parts

__all__ = [
    "ALL",
    "HARD",
    "MAX_PASSES",
    "MAX_ROUNDS",
    "Bounds",
    "Move",
    "RebalanceComparison",
    "RebalanceError",
    "RebalancePlan",
    "RebalanceRequest",
    "plan_rebalance",
    "rebalance",
    "violations",
]

HARD: Final = (DO_NOT_SCHEDULE,)
ALL: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
#: planning rounds (plan, replay, plan again from the replayed state)
MAX_ROUNDS: Final = 3
#: descheduler passes replayed at most
MAX_PASSES: Final = 6
#: virtual seconds after each wave: the evicted pods' grace period (30 s by default) ends
#: and the replacements run before the next wave asks the budgets again
WAVE_SETTLE_SECONDS: Final = 60
WAVE_SETTLE: Final = f"{WAVE_SETTLE_SECONDS}s"  # as the scenario writes it


class RebalanceError(Exception):
    """The input cannot be rebalanced as asked (one line)."""


@dataclass(frozen=True, slots=True)
class Move:
    """One eviction of a wave and what came of it in the replay."""

    pod: str
    workload: str
    from_node: str
    from_domains: dict[str, str]
    to_node: str | None
    to_domains: dict[str, str]
    replacement: str | None
    target: str | None
    fixes: tuple[str, ...]
    refused: str = ""
    #: the solver's target domains (of the keys the broken constraints name)
    target_domains: dict[str, str] = field(default_factory=dict)

    @property
    def as_planned(self) -> bool:
        """The replacement landed in the domains the plan needs it in (a node of the same
        zone is as good as the solver's, unless a hostname constraint is broken)."""
        return self.target is None or (self.to_node is not None and self.to_domains == self.target_domains)

    def to_dict(self) -> JsonDoc:
        doc: dict[str, Any] = {
            "pod": self.pod,
            "workload": self.workload,
            "from": self.from_node,
            "fromDomains": self.from_domains,
            "to": self.to_node,
            "toDomains": self.to_domains,
            "replacement": self.replacement,
            "target": self.target,
            "asPlanned": self.as_planned,
            "fixes": list(self.fixes),
        }
        if self.refused:
            doc["refused"] = self.refused
        return doc


def _evictions(waves: Sequence[Sequence[Move]]) -> int:
    return sum(1 for wave in waves for m in wave if not m.refused)


def _balanced(after: Mapping[ConstraintKey, ConstraintSkew], pending: Sequence[str]) -> bool:
    return all(row.within for row in after.values()) and not pending


@dataclass
class _Draft:
    """A plan while it is planned and replayed (the rounds fill it in); frozen into a
    :class:`RebalancePlan` when done."""

    strategy: str
    constraints: tuple[str, ...]
    waves: list[list[Move]] = field(default_factory=list)
    proven: bool = False
    minimum: int | None = None
    before: dict[ConstraintKey, ConstraintSkew] = field(default_factory=dict)
    after: dict[ConstraintKey, ConstraintSkew] = field(default_factory=dict)
    cannot: str = ""
    pending: list[str] = field(default_factory=list)
    rounds: int = 0
    loop: bool = False
    dump: list[KubeObject] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def evictions(self) -> int:
        return _evictions(self.waves)

    @property
    def balanced(self) -> bool:
        return _balanced(self.after, self.pending)

    def done(self, seconds: float) -> RebalancePlan:
        return RebalancePlan(
            strategy=self.strategy,
            constraints=self.constraints,
            waves=tuple(tuple(wave) for wave in self.waves),
            proven=self.proven,
            minimum=self.minimum,
            before=self.before,
            after=self.after,
            cannot=self.cannot,
            pending=tuple(self.pending),
            rounds=self.rounds,
            loop=self.loop,
            seconds=seconds,
            dump=tuple(self.dump),
            steps=tuple(self.steps),
        )


@dataclass(frozen=True, slots=True)
class RebalancePlan:
    """The plan, replayed: waves of moves, skew per constraint before and after."""

    strategy: str
    constraints: tuple[str, ...]
    waves: tuple[tuple[Move, ...], ...] = ()
    proven: bool = False
    minimum: int | None = None
    before: Mapping[ConstraintKey, ConstraintSkew] = field(default_factory=dict)
    after: Mapping[ConstraintKey, ConstraintSkew] = field(default_factory=dict)
    cannot: str = ""
    #: pods of the workloads the plan touched left pending after the replay
    pending: tuple[str, ...] = ()
    rounds: int = 0
    loop: bool = False
    seconds: float = 0.0
    #: the replay as a scenario (``--apply-scenario``): the dump it starts from and the steps
    dump: tuple[KubeObject, ...] = field(default=(), repr=False)
    steps: tuple[JsonDoc, ...] = ()

    @property
    def evictions(self) -> int:
        return _evictions(self.waves)

    @property
    def balanced(self) -> bool:
        """Every considered constraint within maxSkew, and no replica left pending."""
        return _balanced(self.after, self.pending)

    def to_dict(self) -> JsonDoc:
        doc: dict[str, Any] = {
            "strategy": self.strategy,
            "waves": [[m.to_dict() for m in wave] for wave in self.waves],
            "evictions": self.evictions,
            "proven": self.proven,
            "balanced": self.balanced,
            "before": {str(k): v.to_dict() for k, v in self.before.items()},
            "after": {str(k): v.to_dict() for k, v in self.after.items()},
            "rounds": self.rounds,
            "pendingAfter": list(self.pending),
            "seconds": round(self.seconds, 2),
        }
        if self.minimum is not None:
            doc["minimum"] = self.minimum
        if self.loop:
            doc["loop"] = True
        if self.cannot:
            doc["cannot"] = self.cannot
        return doc

    def scenario_doc(self, cluster_file: str, *, seed: int, name: str = "rebalance") -> JsonDoc:
        """The replay as a Scenario document, written as the ``--scenario`` file: the dump
        (``cluster_file``) and the waves."""
        return {
            "apiVersion": API_VERSION,
            "kind": "Scenario",
            "metadata": {"name": name},
            "seed": seed,
            "cluster": [cluster_file],
            "steps": list(self.steps),
        }


# ------------------------------------------------------------------ what is broken


def _row_key(row: SpreadRow) -> ConstraintKey:
    ref = row.controller or WorkloadRef(row.namespace, "Pod", row.pod.split("/", 1)[-1])
    return ConstraintKey(ref.namespace, ref.kind, ref.name, row.topology_key)


def _considered(row: SpreadRow, actions: tuple[str, ...]) -> bool:
    v = row.view
    if v is None or v.when_unsatisfiable not in actions:
        return False
    return not (v.defaulted and v.when_unsatisfiable != DO_NOT_SCHEDULE)


def violations(
    cluster: ClusterState, profiles: Mapping[str, Profile], actions: tuple[str, ...] = HARD
) -> list[SpreadRow]:
    """The rows (workload, constraint) whose skew is past maxSkew (``views.spread_rows``)."""
    return _broken(spread_rows(cluster, profiles), actions)


def _broken(rows: Sequence[SpreadRow], actions: tuple[str, ...]) -> list[SpreadRow]:
    return [r for r in rows if _considered(r, actions) and r.view is not None and not r.view.within]


def _skews(rows: Sequence[SpreadRow], actions: tuple[str, ...]) -> dict[ConstraintKey, ConstraintSkew]:
    out: dict[ConstraintKey, ConstraintSkew] = {}
    for r in rows:
        if not _considered(r, actions):
            continue
        v = r.view
        assert v is not None
        out[_row_key(r)] = ConstraintSkew(
            max_skew=v.constraint.max_skew,
            when_unsatisfiable=v.when_unsatisfiable,
            skew=v.skew,
            within=v.within,
            domains=dict(v.domains),
            global_minimum=v.min_match,
        )
    return out


# ------------------------------------------------------------------ planning one round


@dataclass(frozen=True, slots=True)
class _Round:
    evictions: list[tuple[str, str | None]]  # (pod, target node)
    minimum: int
    proven: bool


def _running(pod: Pod, cluster: ClusterState) -> bool:
    return bool(cluster.node_of(pod.key)) and not pod.is_terminating and not pod.is_finished


@dataclass(frozen=True, slots=True)
class Bounds:
    """``rebalance --namespace/--selector``: only the pods these select may be moved; the
    constraints of workloads with none of them are left out of the plan (pods outside stay
    where they are, counted as any running pod)."""

    namespace: str | None = None
    selector: Selector | None = None

    def admits(self, pod: Pod) -> bool:
        if self.namespace is not None and pod.namespace != self.namespace:
            return False
        return self.selector is None or self.selector.matches(pod.labels)

    def rows(self, rows: list[SpreadRow], cluster: ClusterState) -> list[SpreadRow]:
        """The rows of workloads with a pod these bounds admit."""
        inside = {workload_of(p) for p in cluster.pods.values() if self.admits(p)}
        return [r for r in rows if (r.controller.key if r.controller else _bare_key(r)) in inside]


def _bare_key(row: SpreadRow) -> str:
    """``workload_of``'s key of a row's pod without a controller."""
    return WorkloadRef(row.namespace, "Pod", row.pod.split("/", 1)[-1]).key


def _plan_round(
    sim: Simulation,
    broken: Sequence[SpreadRow],
    actions: tuple[str, ...],
    time_limit: float,
    max_moves: int | None,
    bounds: Bounds | None = None,
) -> _Round | str:
    """The fewest evictions from the state ``sim`` is in (``broken``: its violations), or
    why there is no plan."""
    cluster = sim.cluster
    if not broken:
        return _Round([], 0, True)
    movable_workloads = {r.controller.key for r in broken if r.controller}
    bare = sorted({r.pod for r in broken if r.controller is None})
    if not movable_workloads:
        return f"cannot be balanced: {', '.join(bare)} has no controller (an evicted pod would not come back)"
    movable: list[Pod] = []
    for pod in sorted(cluster.pods.values(), key=lambda p: p.key):
        if workload_of(pod) not in movable_workloads or not _running(pod, cluster):
            continue
        if bounds is not None and not bounds.admits(pod):
            continue  # outside --namespace/--selector: it stays
        covering = pdbs_for_pod(cluster, pod)
        if len(covering) > 1 or not all(pdb_budget(b).grants_one for b in covering):
            continue  # the Eviction API refuses it: it stays (counted as an existing pod)
        movable.append(pod)
    if not movable:
        held = "held by a PodDisruptionBudget" + (" or outside the bounds" if bounds is not None else "")
        return f"cannot be balanced: every pod of the broken workloads is {held}"
    schedulers = {p.spec.scheduler_name or DEFAULT_SCHEDULER_NAME for p in movable}
    if len(schedulers) > 1:
        names = ", ".join(sorted(schedulers))
        return f"cannot be balanced in one model: the pods name several schedulers ({names})"
    profile = sim.profiles.get(next(iter(schedulers)))
    if profile is None:
        return f"cannot be balanced: no scheduler profile {next(iter(schedulers))!r}"
    shapes: dict[Any, list[Pod]] = {}
    for pod in movable:
        shapes.setdefault(template_key(pod), []).append(pod)
    groups = list(shapes.values())
    keep = [_per_node(cluster, g) for g in groups]
    wanted = [(workload_of(g[0]), unbound(g[0]), len(g)) for g in groups]
    base = cluster_without(cluster, {p.key for p in movable})
    model = build_groups(base, wanted, profile, keep=keep, actions=actions, balance=True)
    try:
        if max_moves is None:
            answer = solve_by_parts(model, time_limit=time_limit)
        else:
            answer = solve(model, time_limit=time_limit, max_moves=max_moves)
    except SolveError:
        limit = f" within {max_moves} evictions" if max_moves is not None else ""
        found = conflict(model, time_limit=time_limit) if max_moves is None else None
        why = " + ".join(found) if found else "no arrangement of the running pods satisfies every constraint"
        return f"cannot be balanced{limit}: {why}"
    evictions: list[tuple[str, str | None]] = []
    for pods, now, final in zip(groups, keep, answer.by_group, strict=True):
        leaving: list[str] = []
        arriving: list[str] = []
        for node in sorted(set(now) | set(final)):
            have, want = now.get(node, 0), final.get(node, 0)
            if have > want:
                here = [p for p in pods if cluster.node_of(p.key) == node]
                # the youngest go first, as a ReplicaSet scaling down would pick them
                here.sort(key=lambda p: (p.metadata.creation_timestamp or "", p.key), reverse=True)
                leaving += [p.key for p in here[: have - want]]
            arriving += [node] * max(0, want - have)
        evictions += list(zip(leaving, arriving, strict=True))
    minimum = len(evictions)
    return _Round(evictions, minimum, answer.proven)


def _per_node(cluster: ClusterState, pods: Sequence[Pod]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods:
        node = cluster.node_of(p.key)
        out[node] = out.get(node, 0) + 1
    return out


def _waves(
    cluster: ClusterState, evictions: Sequence[tuple[str, str | None]]
) -> list[list[tuple[str, str | None]]]:
    """Evictions cut so that within a wave no PDB gives more than its disruptionsAllowed."""
    waves: list[list[tuple[str, str | None]]] = []
    used: list[dict[str, int]] = []
    for key, target in evictions:
        covering = pdbs_for_pod(cluster, cluster.pods[key])
        for i in range(len(waves)):
            if all(pdb_budget(b, used[i].get(b.key, 0)).grants_one for b in covering):
                break
        else:
            waves.append([])
            used.append({})
            i = len(waves) - 1
        waves[i].append((key, target))
        for b in covering:
            used[i][b.key] = used[i].get(b.key, 0) + 1
    return waves


# ------------------------------------------------------------------ replay


def _domains(cluster: ClusterState, node: str | None, keys: Sequence[str]) -> dict[str, str]:
    if not node or node not in cluster.nodes:
        return {}
    labels = cluster.nodes[node].metadata.labels
    return {k: labels[k] for k in keys if k in labels}


def _replay_wave(
    sim: Simulation,
    wave: Sequence[tuple[str, str | None]],
    fixes: Mapping[str, tuple[str, ...]],
    keys: Sequence[str],
    steps: list[dict[str, Any]],
) -> list[Move]:
    """Evict the wave through the Eviction API, let the cluster settle, and match each
    evicted pod to the replacement its controller created (per workload, in order)."""
    cluster = sim.cluster
    before = set(cluster.pods)
    origin = {
        k: (cluster.node_of(k), workload_of(cluster.pods[k]), cluster.pods[k].metadata.uid) for k, _ in wave
    }
    pods = [k for k, _ in wave]
    step_doc = {"evict": {"pods": pods}}
    refused = {
        r.object.removeprefix("Pod "): r.message
        for r in run_step(sim, Step(len(steps), "evict", {"pods": pods}))
    }
    run_step(sim, Step(len(steps) + 1, "advance", seconds=float(WAVE_SETTLE_SECONDS)))
    steps += [step_doc, {"advance": WAVE_SETTLE}]
    fresh: dict[str, list[str]] = {}
    for key in sorted(
        set(cluster.pods) - before, key=lambda k: (cluster.pods[k].metadata.creation_timestamp or "", k)
    ):
        fresh.setdefault(workload_of(cluster.pods[key]), []).append(key)
    # the solver's targets of a workload are interchangeable: each replacement takes a
    # target in the domains it landed in where one is left
    targets: dict[str, list[str | None]] = {}
    for key, target in wave:
        targets.setdefault(origin[key][1], []).append(target)
    moves = []
    for key, _ in wave:
        node, workload, uid = origin[key]
        replacement = None
        if key not in refused:
            queue = fresh.get(workload, [])
            if queue:
                replacement = queue.pop(0)
            elif key in cluster.pods and cluster.pods[key].metadata.uid != uid:
                replacement = key  # a StatefulSet recreates the pod under its own name
        to = cluster.node_of(replacement) if replacement and replacement in cluster.pods else None
        left = targets[workload]
        landed = _domains(cluster, to, keys)
        target = next((t for t in left if t is not None and _domains(cluster, t, keys) == landed), left[0])
        left.remove(target)
        moves.append(
            Move(
                pod=key,
                workload=workload,
                from_node=node,
                from_domains=_domains(cluster, node, keys),
                to_node=to or None,
                to_domains=_domains(cluster, to, keys),
                replacement=replacement,
                target=target,
                fixes=fixes.get(workload, ()),
                refused=refused.get(key, ""),
                target_domains=_domains(cluster, target, keys),
            )
        )
    return moves


def _fixes(rows: Sequence[SpreadRow]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for r in rows:
        if r.controller and r.view is not None:
            out.setdefault(r.controller.key, []).append(
                f"{r.topology_key} maxSkew {r.view.constraint.max_skew}"
            )
    return {k: tuple(v) for k, v in out.items()}


def rebalance(
    settled: Baseline | Simulation,
    *,
    constraints: tuple[str, ...] = HARD,
    max_moves: int | None = None,
    time_limit: float = 10.0,
    strategy: str = "kubespread",
    seed: int | None = None,
    bounds: Bounds | None = None,
) -> RebalancePlan:
    """Plan and replay (see the module notes) from the settled cluster (a Baseline, or the
    Simulation ``place`` left) with one strategy: ``kubespread`` (the solver's plan) or
    ``descheduler`` (:func:`kubespread.plan.descheduler.descheduler_pass`, one pass per
    wave). ``seed``: the replay's (default: the Baseline's, else 0). The replay runs on a
    dump of the settled cluster resettled (:func:`kubespread.sim.run.settled_from`), not on
    ``Baseline.fork``: the scenario the plan writes has that dump as its cluster, so
    ``simulate`` replays it alike. ``bounds``: only the pods they admit move, and only their
    workloads' constraints are planned and reported (the kubespread strategy)."""
    import time

    if isinstance(settled, Baseline):
        seed = settled.seed if seed is None else seed
    seed = 0 if seed is None else seed
    if strategy == "descheduler":
        bounds = None  # its pass is the descheduler's, whose own namespace filters are not modelled
    started = time.perf_counter()
    dump = cluster_objects(settled.cluster)
    profiles = dict(settled.profiles)
    sim = settled_from(dump, profiles=profiles, seed=seed, name="rebalance")
    plan = _Draft(strategy, constraints, dump=dump)
    rows = _rows(sim, bounds)
    broken = _broken(rows, constraints)
    plan.before = _skews(rows, constraints)
    touched = {_row_key(r) for r in broken}
    keys = list(dict.fromkeys(r.topology_key for r in broken))
    fixes = _fixes(broken)
    if strategy == "descheduler":
        _descheduler_rounds(plan, sim, constraints, fixes, keys)
        rows = _rows(sim, bounds)
    else:
        rows = _planner_rounds(plan, sim, rows, constraints, time_limit, max_moves, fixes, keys, bounds)
    plan.before = {k: v for k, v in plan.before.items() if k in touched or not v.within}
    after = _skews(rows, constraints)
    plan.after = {k: v for k, v in after.items() if k in plan.before or not v.within}
    touched_workloads = {m.workload for wave in plan.waves for m in wave}
    touched_workloads |= {r.controller.key for r in broken if r.controller}
    plan.pending = sorted(
        p.key
        for p in sim.cluster.pods.values()
        if not sim.cluster.node_of(p.key)
        and not p.is_terminating
        and not p.is_finished
        and workload_of(p) in touched_workloads
    )
    if not plan.cannot and not plan.balanced:
        still = [f"{k} skew {v.skew} > {v.max_skew}" for k, v in plan.after.items() if not v.within]
        if plan.pending:
            still.append(f"{len(plan.pending)} pod(s) pending ({', '.join(plan.pending)})")
        plan.cannot = f"still broken after the replay: {'; '.join(still)}"
    return plan.done(time.perf_counter() - started)


def _planner_rounds(
    plan: _Draft,
    sim: Simulation,
    rows: list[SpreadRow],
    constraints: tuple[str, ...],
    time_limit: float,
    max_moves: int | None,
    fixes: dict[str, tuple[str, ...]],
    keys: list[str],
    bounds: Bounds | None = None,
) -> list[SpreadRow]:
    """Plan, replay, and plan again while something is broken; the rows of the end state."""
    for round_no in range(1, MAX_ROUNDS + 1):
        broken = _broken(rows, constraints)
        left = None if max_moves is None else max_moves - plan.evictions
        found = _plan_round(sim, broken, constraints, time_limit, left, bounds)
        if isinstance(found, str):
            plan.cannot = found
            return rows
        if not found.evictions:
            if round_no == 1:
                plan.proven, plan.minimum = True, 0
            return rows
        plan.rounds = round_no
        if round_no == 1:
            plan.minimum, plan.proven = found.minimum, found.proven
        else:
            plan.proven = False  # the replay needed more than the optimum's evictions
        fixes = {**_fixes(broken), **fixes}
        for wave in _waves(sim.cluster, found.evictions):
            moves = _replay_wave(sim, wave, fixes, keys, plan.steps)
            plan.waves.append(moves)
            if any(m.refused for m in moves):
                plan.proven = False
        rows = _rows(sim, bounds)
        if not _broken(rows, constraints):
            break
    return rows


def _rows(sim: Simulation, bounds: Bounds | None) -> list[SpreadRow]:
    rows = spread_rows(sim.cluster, sim.profiles)
    return rows if bounds is None else bounds.rows(rows, sim.cluster)


def _descheduler_rounds(
    plan: _Draft,
    sim: Simulation,
    constraints: tuple[str, ...],
    fixes: dict[str, tuple[str, ...]],
    keys: list[str],
) -> None:
    args = DeschedulerArgs(constraints=constraints)

    def descheduler(cluster: ClusterState, profiles: Mapping[str, Profile]) -> list[str]:
        return descheduler_pass(cluster, profiles, args)

    seen: set[tuple[tuple[str, str], ...]] = set()
    for passes in range(1, MAX_PASSES + 1):
        evicted = descheduler(sim.cluster, sim.profiles)
        if not evicted:
            return
        state = _placement_state(sim.cluster)
        if state in seen:
            plan.loop = True
            return
        seen.add(state)
        plan.rounds = passes
        plan.waves.append(_replay_wave(sim, [(k, None) for k in evicted], fixes, keys, plan.steps))
    if descheduler(sim.cluster, sim.profiles):
        plan.loop = True  # still evicting after MAX_PASSES passes


def _placement_state(cluster: ClusterState) -> tuple[tuple[str, str], ...]:
    """Where each workload's pods run, by count per node (pod names change on every pass)."""
    counts: dict[tuple[str, str], int] = {}
    for p in cluster.pods.values():
        node = cluster.node_of(p.key)
        if node and not p.is_terminating:
            k = (workload_of(p), node)
            counts[k] = counts.get(k, 0) + 1
    return tuple(sorted((f"{w}@{n}", str(c)) for (w, n), c in counts.items()))


# ------------------------------------------------------------------ the command

#: the strategies of ``kubespread rebalance --strategy``
KUBESPREAD: Final = "kubespread"
DESCHEDULER: Final = "descheduler"
COMPARE: Final = "compare"
STRATEGIES: Final = (KUBESPREAD, DESCHEDULER, COMPARE)


@dataclass(frozen=True, slots=True)
class RebalanceRequest:
    """What ``kubespread rebalance`` plans from: the settled cluster, the constraints
    considered (:data:`HARD` or :data:`ALL`), the bounds, the strategy (one of
    :data:`STRATEGIES`) and the replay's seed (None: the Baseline's)."""

    baseline: Baseline
    constraints: tuple[str, ...] = HARD
    max_moves: int | None = None
    time_limit: float = 10.0
    strategy: str = KUBESPREAD
    seed: int | None = None
    bounds: Bounds | None = None


@dataclass(frozen=True, slots=True)
class RebalanceComparison:
    """``--strategy compare``: both plans, replayed from the same settled cluster."""

    kubespread: RebalancePlan
    descheduler: RebalancePlan

    @property
    def plans(self) -> tuple[RebalancePlan, RebalancePlan]:
        return (self.kubespread, self.descheduler)

    def to_dict(self) -> JsonDoc:
        return {KUBESPREAD: self.kubespread.to_dict(), DESCHEDULER: self.descheduler.to_dict()}


def plan_rebalance(request: RebalanceRequest) -> RebalancePlan | RebalanceComparison:
    """``kubespread rebalance``: the strategy's plan, replayed (see :func:`rebalance`), or
    with ``compare`` both. RebalanceError when it cannot be planned as asked."""
    if request.strategy not in STRATEGIES:
        raise RebalanceError(f"unknown strategy {request.strategy!r} (one of {', '.join(STRATEGIES)})")

    def one(strategy: str) -> RebalancePlan:
        return rebalance(
            request.baseline,
            constraints=request.constraints,
            max_moves=request.max_moves,
            time_limit=request.time_limit,
            strategy=strategy,
            seed=request.seed,
            bounds=request.bounds,
        )

    if request.strategy == COMPARE:
        return RebalanceComparison(one(KUBESPREAD), one(DESCHEDULER))
    return one(request.strategy)
