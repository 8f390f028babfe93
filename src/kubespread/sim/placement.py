"""Placing pods onto a cluster as given: the ``kubespread schedule`` job.

The input mixes what exists with what the user wants to create. What exists is loaded as it
is: nodes, namespaces and everything a kubectl dump holds (objects with a uid or a
creationTimestamp), and pods bound to a node, which stay where they are. Pods of the dump
still pending are placed when the cluster first settles. What is new (manifests with no
identity) is created through the API server in the order given (defaulting, admission,
validation) and the cluster settles after each, so a Deployment becomes its ReplicaSet and
pods, placed before the next object arrives.

Every new object is validated before anything runs: a bad manifest stops the run with every
problem located, and nothing is half-applied.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubespread.admission.apiserver import is_stored
from kubespread.admission.framework import AdmissionOptions, Rejection
from kubespread.api.core import Namespace, Node, Pod
from kubespread.api.keys import zone_of
from kubespread.api.meta import KubeObject
from kubespread.api.timestamps import virtual_seconds
from kubespread.controllers.host import Controller
from kubespread.io.loader import LoadedObject, Manifests
from kubespread.io.snapshot import SnapshotError, cluster_from_manifests
from kubespread.scheduler.explain import Explanation, explain
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision, schedule_one
from kubespread.scheduler.views import SpreadRow, spread_rows, tie_view, top_owner
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation, SimulationError
from kubespread.sim.run import Snapshot, StepResult, snapshot
from kubespread.sim.scenario import creation_problems, pod_limit_problems

__all__ = [
    "NoProfile",
    "PlacementError",
    "PlacementResult",
    "explain_key",
    "explain_pod",
    "is_existing",
    "place",
    "report_explanation",
    "snapshot_time",
]


#: pods placed between two progress reports within one step
PROGRESS_EVERY = 100


class PlacementError(Exception):
    """The input cannot be placed; ``problems`` are located messages, all of them."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def is_existing(obj: KubeObject) -> bool:
    """Whether an object is part of the cluster as it is, rather than something to create:
    nodes and namespaces, objects an API server has stored (uid or creationTimestamp: a
    kubectl dump) and pods already bound to a node."""
    if isinstance(obj, Node | Namespace) or is_stored(obj):
        return True
    return isinstance(obj, Pod) and bool(obj.spec.node_name)


@dataclass
class PlacementResult:
    """``initial``: the cluster as given, settled (its pending pods placed); one step per
    created object; ``placements``: every pod placed during the run, in order, with the
    node, its zone and the winning total score (None when it was the only feasible node)."""

    initial: StepResult
    steps: list[StepResult]
    placements: list[dict[str, Any]]
    final: Snapshot
    sim: Simulation

    @property
    def preemptions(self) -> list[dict[str, Any]]:
        """Every preemption of the run (Simulation.preemptions), where each preemptor ran."""
        return self.sim.preemptions

    @property
    def rejections(self) -> list[dict[str, str]]:
        return [r for s in (self.initial, *self.steps) for r in s.rejections]

    @property
    def failed_creates(self) -> list[dict[str, str]]:
        """What controllers could not create (a workload whose pods the API server refuses):
        its FailedCreate events, once per workload and message. The input's own refused
        objects are :attr:`rejections`."""
        refused = {r["object"] for r in self.rejections}
        seen: dict[tuple[str, str], dict[str, str]] = {}
        for e in self.sim.events:
            if e.reason != "FailedCreate":
                continue
            ref = f"{e.kind} {e.namespace}/{e.name}" if e.namespace else f"{e.kind} {e.name}"
            if ref not in refused:
                seen.setdefault((ref, e.message), {"object": ref, "message": e.message})
        return list(seen.values())

    def involved_pods(self) -> list[Pod]:
        """The pods whose workloads ``schedule`` shows: those placed or left pending in this
        run; every pod of the cluster when the input created nothing (a dump alone: how the
        cluster as it is spreads)."""
        pods = self.sim.cluster.pods
        if not self.steps:
            return list(pods.values())
        keys = [f"{p['namespace']}/{p['name']}" for p in (*self.placements, *self.final.pending)]
        return [pods[k] for k in dict.fromkeys(keys) if k in pods]

    def spread(self) -> list[SpreadRow]:
        """The spread of the involved workloads (``involved_pods``) per constraint, as
        ``kubespread.scheduler.views.spread_rows`` counts it: the same rows as ``distribution``."""
        return spread_rows(self.sim.cluster, self.sim.profiles, self.involved_pods())

    def to_dict(self) -> dict[str, Any]:
        """The ``-o json|yaml`` document: placements, pending pods with their FitError, the
        final distribution, refused objects, then every step's snapshot."""
        return {
            "placements": self.placements,
            "preemptions": self.preemptions,
            "pending": self.final.pending,
            "distribution": self.final.distribution,
            "rejections": self.rejections,
            "failedCreates": self.failed_creates,
            "initial": self.initial.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "final": self.final.to_dict(),
        }


def snapshot_time(objects: Iterable[KubeObject]) -> float:
    """The virtual time a snapshot was taken at, near enough: its latest creationTimestamp (0
    when none). Starting there keeps the dump's times in the past, so a ReplicaSet with
    minReadySeconds does not wait months for pods created "in the future"."""
    times = (virtual_seconds(obj.metadata.creation_timestamp) for obj in objects)
    return max((t for t in times if t is not None), default=0.0)


def _split(loaded: Sequence[LoadedObject]) -> tuple[list[LoadedObject], list[LoadedObject]]:
    existing: list[LoadedObject] = []
    new: list[LoadedObject] = []
    for lo in loaded:
        (existing if is_existing(lo.obj) else new).append(lo)
    return existing, new


def place(
    objects: Manifests | Sequence[LoadedObject],
    *,
    profiles: Mapping[str, Profile] | None = None,
    seed: int = 0,
    controllers: Sequence[Controller] | None = None,
    admission: AdmissionOptions | None = None,
    on_step: Callable[[int, int, str], None] | None = None,
    max_pods: int | None = DEFAULT_MAX_PODS,
) -> PlacementResult:
    """Settle the cluster as given, then create each new object in order (see the module
    notes). ``on_step(done, total, what)`` reports progress, also within a long step (every
    pod placed). Raises PlacementError (every problem, located) when the input does not make a
    cluster, a new object is invalid, or the run would hold more than ``max_pods`` pods."""
    loaded = objects.objects if isinstance(objects, Manifests) else list(objects)
    existing, new = _split(loaded)
    problems = creation_problems(loaded) + pod_limit_problems(loaded, max_pods)
    try:
        cluster = cluster_from_manifests(existing)
    except SnapshotError as e:
        problems += [str(p) for p in e.problems]
    if problems:
        raise PlacementError(problems)
    if admission is None:
        admission = AdmissionOptions(hard_anti_affinity_limit=True)
    sim = Simulation(
        cluster,
        profiles=profiles,
        seed=seed,
        controllers=controllers,
        admission=admission,
        start=snapshot_time(lo.obj for lo in existing),
        max_pods=max_pods,
    )
    placements: list[dict[str, Any]] = []
    step = [-1]

    def observe(decision: Decision) -> None:
        if decision.selected is None:
            return
        score = None if decision.selection_reason != "scored" else decision.total(decision.selected)
        meta = decision.pod.metadata
        placements.append(
            {
                "namespace": decision.pod.namespace,
                "name": meta.name,
                "node": decision.selected,
                "zone": zone_of(sim.cluster.nodes[decision.selected].metadata.labels),
                "score": score,
                "feasibleNodes": len(decision.feasible),
                **tie_view(decision, sim.cluster).to_dict(),
                "step": step[0],
            }
        )

    sim.decision_observers.append(observe)
    total = len(new)
    doing = "settling the cluster as given"
    if on_step is not None:
        on_step(0, total, doing)

        def progress(decision: Decision) -> None:  # a long step (a big Deployment) shows its pods
            if len(placements) % PROGRESS_EVERY == 0 and placements:
                on_step(max(step[0], 0), total, f"{doing}: {len(placements):,} pods placed")

        sim.decision_observers.append(progress)
    first = len(sim.events)
    try:
        sim.run_until_quiet()
    except SimulationError as e:
        raise PlacementError([f"{doing}: {e}"]) from None
    initial = StepResult(
        -1,
        "initial",
        "the cluster as given, settled",
        snapshot(sim),
        sim.events[first:],
        preemptions=sim.preemptions_since(first),
    )
    steps = []
    for i, lo in enumerate(new):
        step[0] = i
        doing = f"create {lo.ref}"
        if on_step is not None:
            on_step(i, total, doing)
        first = len(sim.events)
        try:
            rejections = _create(sim, lo)
            sim.run_until_quiet()
        except SimulationError as e:
            raise PlacementError([f"{lo.where()}: {lo.ref}: {e}"]) from None
        steps.append(
            StepResult(
                i,
                "create",
                f"create {lo.ref}",
                snapshot(sim),
                sim.events[first:],
                rejections,
                sim.preemptions_since(first),
            )
        )
    if on_step is not None:
        on_step(total, total, "done")
    for p in placements:  # the workload each placed pod belongs to, now that all exist
        pod = sim.cluster.pods.get(f"{p['namespace']}/{p['name']}")
        p["workload"] = _workload(sim, pod)
    return PlacementResult(initial, steps, placements, snapshot(sim), sim)


def _create(sim: Simulation, lo: LoadedObject) -> list[dict[str, str]]:
    outcome = sim.create(lo.obj.copy())
    if not isinstance(outcome, Rejection):
        return []
    sim.record(lo.obj, "FailedCreate", outcome.message, type="Warning")
    return [{"object": lo.ref, "source": lo.where(), "message": outcome.message}]


def _workload(sim: Simulation, pod: Pod | None) -> dict[str, str] | None:
    if pod is None:
        return None
    kind, name = top_owner(sim.cluster, pod)
    return {"kind": kind, "name": name} if kind else None


class NoProfile(Exception):
    """The pod names a scheduler the simulation does not run."""


def explain_pod(sim: Simulation, pod: Pod, *, timed: bool = False) -> Explanation:
    """Decide ``pod`` (unbound) on the simulation's cluster as it is now (the nominated pods'
    room kept), as the simulation's scheduler would next (its node order and start index,
    on a copy: explaining moves nothing), and read the decision; its preemptions are those
    the run made for it, then the one this decision would make. ``timed``: keep where the cycle's time went
    (``Explanation.timings``); off by default, as most explanations are read for their why."""
    name = pod.spec.scheduler_name or "default-scheduler"
    profile = sim.profiles.get(name)
    if profile is None:
        raise NoProfile(
            f"no scheduler profile named {name!r} (the pod's spec.schedulerName); give the "
            "KubeSchedulerConfiguration that scheduler runs with --scheduler-config"
        )
    nominated = sim.scheduling.nominated or None
    order = sim.scheduling.order.fork()
    decision = schedule_one(pod, sim.cluster, profile, nominated=nominated, order=order, timed=timed)
    e = explain(decision, sim.cluster, profile)
    made = [entry for entry in sim.preemptions if entry["pod"] == pod.key]
    e.preemptions = made + e.preemptions
    return e


def explain_key(sim: Simulation, key: str, *, timed: bool = False) -> Explanation:
    """A pod of the cluster by ``namespace/name`` (KeyError if absent): a pending one as the
    scheduler would retry it now; a bound one as if scheduled now without itself (taken off its
    node for the decision and put back, so the cluster is as it was). ``timed``: as
    ``explain_pod``'s."""
    cluster = sim.cluster
    pod = cluster.pods.get(key)
    if pod is None:
        raise KeyError(key)
    if not pod.spec.node_name:
        return explain_pod(sim, pod, timed=timed)
    unbound = copy.copy(pod)
    unbound.spec = copy.copy(pod.spec)
    unbound.spec.node_name = ""
    cluster.update_pod(unbound)
    try:
        return explain_pod(sim, unbound, timed=timed)
    finally:
        cluster.update_pod(pod)


def report_explanation(sim: Simulation) -> Explanation | None:
    """The pod a report explains: the first pending pod, else the last one scheduled that is
    still bound; None when there is neither (or its scheduler is not simulated). Timed, so
    the report can show where the cycle's time went."""
    pending = sorted(
        p.key for p in sim.cluster.unbound_pods.values() if not p.is_terminating and not p.is_finished
    )
    keys = (
        pending[:1]
        or [
            key
            for e in reversed(sim.events)
            if e.reason == "Scheduled" and (key := f"{e.namespace or 'default'}/{e.name}") in sim.cluster.pods
        ][:1]
    )
    try:
        return explain_key(sim, keys[0], timed=True) if keys else None
    except NoProfile:
        return None
