"""Placing pods onto a cluster as given: the ``kubespread schedule`` job.

The input mixes what exists with what the user wants to create; :func:`place` settles it as
:func:`kubespread.sim.baseline.settle` does (what exists loaded as it is, the dump's pending
pods placed, each new object created through the API server in order, the cluster settled
after each) and keeps what ``schedule`` shows: a snapshot after each object and every
placement with its score.

Every new object is validated before anything runs: a bad manifest stops the run with every
problem located, and nothing is half-applied.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.framework import AdmissionOptions, Rejection
from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates
from kubespread.api.keys import zone_of
from kubespread.cluster.state import ClusterState
from kubespread.cluster.trial import trial
from kubespread.cluster.workloads import NO_OWNER, Ownership, WorkloadRef, ownership
from kubespread.io.loader import LoadedObject, Manifests
from kubespread.scheduler.explain import Explanation
from kubespread.scheduler.explain import explain as explain_decision
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision, schedule_one
from kubespread.scheduler.views import Preemption, SpreadRow, TieView, spread_rows, tie_view
from kubespread.sim.baseline import (
    Baseline,
    Controllers,
    SettleError,
    SettleHooks,
    is_existing,
    settle,
    snapshot_time,
)
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation
from kubespread.sim.rows import FailedCreate, JsonDoc, RefusedObject
from kubespread.sim.run import Snapshot, StepResult, snapshot

__all__ = [
    "AmbiguousPod",
    "ExplainRequest",
    "NoProfile",
    "Placement",
    "PlacementError",
    "PlacementResult",
    "PodNotFound",
    "PodRefused",
    "ScheduleRequest",
    "explain",
    "explain_key",
    "explain_pod",
    "is_existing",
    "place",
    "pod_key",
    "report_explanation",
    "schedule",
    "snapshot_time",
]


#: pods placed between two progress reports within one step
PROGRESS_EVERY = 100


#: the input cannot be placed; ``problems`` are located messages, all of them (placing is
#: settling: the same error)
PlacementError = SettleError


@dataclass(frozen=True, slots=True)
class Placement:
    """One pod bound during a run: its node and zone, the winning total score (None when it
    was the only feasible node), how many feasible nodes were found, the ties
    (``views.TieView``), the step that placed it (-1: settling the cluster as given) and its
    ownership (its controller and top owner, read once the run is over; ``NO_OWNER`` for a
    bare pod)."""

    namespace: str
    name: str
    node: str
    zone: str | None
    score: int | None
    feasible_nodes: int
    ties: TieView
    step: int
    owned: Ownership = NO_OWNER

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> JsonDoc:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "zone": self.zone,
            "score": self.score,
            "feasibleNodes": self.feasible_nodes,
            **self.ties.to_dict(),
            "step": self.step,
            "owner": _kind_name(self.owned.top),
            "workload": _kind_name(self.owned.controller),
        }


@dataclass
class PlacementResult:
    """``initial``: the cluster as given, settled (its pending pods placed); one step per
    created object; ``placements``: every pod placed during the run, in order, with the
    node, its zone and the winning total score (None when it was the only feasible node)."""

    initial: StepResult
    steps: list[StepResult]
    placements: list[Placement]
    final: Snapshot
    #: the settled cluster the run left (its Simulation is ``sim``)
    baseline: Baseline

    @property
    def sim(self) -> Simulation:
        return self.baseline.sim

    @property
    def preemptions(self) -> list[Preemption]:
        """Every preemption of the run (Simulation.preemptions), where each preemptor ran."""
        return self.sim.preemptions

    @property
    def rejections(self) -> list[RefusedObject]:
        """The objects the API server refused, the input's then each step's."""
        return [r for s in (self.initial, *self.steps) for r in s.rejections]

    @property
    def failed_creates(self) -> list[FailedCreate]:
        """What controllers could not create (a workload whose pods the API server refuses):
        its FailedCreate events, once per workload and message. The input's own refused
        objects are :attr:`rejections`."""
        refused = {r.object for r in self.rejections}
        seen: dict[tuple[str, str], FailedCreate] = {}
        for e in self.sim.events:
            if e.reason != "FailedCreate":
                continue
            ref = f"{e.kind} {e.namespace}/{e.name}" if e.namespace else f"{e.kind} {e.name}"
            if ref not in refused:
                seen.setdefault((ref, e.message), FailedCreate(ref, e.message))
        return list(seen.values())

    def involved_pods(self) -> list[Pod]:
        """The pods whose workloads ``schedule`` shows: those placed or left pending in this
        run; every pod of the cluster when the input created nothing (a dump alone: how the
        cluster as it is spreads)."""
        pods = self.sim.cluster.pods
        if not self.steps:
            return list(pods.values())
        keys = [*(p.key for p in self.placements), *(p.key for p in self.final.pending)]
        return [pods[k] for k in dict.fromkeys(keys) if k in pods]

    def spread(self) -> list[SpreadRow]:
        """The spread of the involved workloads (``involved_pods``) per constraint, as
        ``kubespread.scheduler.views.spread_rows`` counts it: the same rows as ``distribution``."""
        return spread_rows(self.sim.cluster, self.sim.profiles, self.involved_pods())

    def to_dict(self) -> JsonDoc:
        """The ``-o json|yaml`` document: placements, pending pods with their FitError, the
        final distribution, refused objects, then every step's snapshot."""
        if not self.final.distribution_taken:
            raise LookupError("this run's snapshots were taken without their distribution")
        return {
            "placements": [p.to_dict() for p in self.placements],
            "preemptions": [p.to_dict() for p in self.preemptions],
            "pending": [p.to_dict() for p in self.final.pending],
            "distribution": self.final.distribution,
            "rejections": [r.to_dict() for r in self.rejections],
            "failedCreates": [f.to_dict() for f in self.failed_creates],
            "initial": self.initial.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "final": self.final.to_dict(),
        }


def place(
    objects: Manifests | Sequence[LoadedObject],
    *,
    profiles: Mapping[str, Profile] | None = None,
    seed: int = 0,
    controllers: Controllers | None = None,
    admission: AdmissionOptions | None = None,
    on_step: Callable[[int, int, str], None] | None = None,
    max_pods: int | None = DEFAULT_MAX_PODS,
    distributions: bool = True,
) -> PlacementResult:
    """Settle the cluster as given, then create each new object in order
    (:func:`kubespread.sim.baseline.settle`), keeping a snapshot after each and every
    placement. ``on_step(done, total, what)`` reports progress, also within a long step
    (every pod placed). Raises PlacementError (every problem, located) when the input does
    not make a cluster, a new object is invalid, or the run would hold more than
    ``max_pods`` pods. ``distributions`` False: the snapshots are taken without the spread
    of every workload (a caller that reads only :meth:`PlacementResult.spread`)."""
    placements: list[Placement] = []
    steps: list[StepResult] = []
    step = [-1]
    total = [0]
    doing = ["settling the cluster as given"]

    def started(sim: Simulation, new: int) -> None:
        total[0] = new

        def observe(decision: Decision) -> None:
            if decision.selected is None:
                return
            score = None if decision.selection_reason != "scored" else decision.total(decision.selected)
            meta = decision.pod.metadata
            placements.append(
                Placement(
                    namespace=decision.pod.namespace,
                    name=meta.name,
                    node=decision.selected,
                    zone=zone_of(sim.cluster.nodes[decision.selected].metadata.labels),
                    score=score,
                    feasible_nodes=len(decision.feasible),
                    ties=tie_view(decision, sim.cluster),
                    step=step[0],
                )
            )

        sim.decision_observers.append(observe)
        if on_step is not None:
            on_step(0, new, doing[0])

            def progress(decision: Decision) -> None:  # a long step (a big Deployment) shows its pods
                if len(placements) % PROGRESS_EVERY == 0 and placements:
                    on_step(max(step[0], 0), new, f"{doing[0]}: {len(placements):,} pods placed")

            sim.decision_observers.append(progress)
        sims.append(sim)

    def creating(i: int, lo: LoadedObject) -> None:
        step[0] = i
        doing[0] = f"create {lo.ref}"
        if on_step is not None:
            on_step(i, total[0], doing[0])

    def settled(i: int, lo: LoadedObject | None, first: int, rejections: list[RefusedObject]) -> None:
        sim = sims[0]
        if lo is None:
            kind, description = "initial", "the cluster as given, settled"
        else:
            kind, description = "create", f"create {lo.ref}"
        steps.append(
            StepResult(
                i,
                kind,
                description,
                snapshot(sim, distribution=distributions),
                sim.events[first:],
                rejections,
                sim.preemptions_since(first),
            )
        )

    sims: list[Simulation] = []
    baseline = settle(
        objects,
        profiles=profiles,
        seed=seed,
        controllers=controllers,
        admission=admission,
        max_pods=max_pods,
        hooks=SettleHooks(started, creating, settled),
    )
    sim = baseline.sim
    if on_step is not None:
        on_step(total[0], total[0], "done")
    # the workloads each placed pod belongs to, now that all exist
    placed = [replace(p, owned=_owned(sim, sim.cluster.pods.get(p.key))) for p in placements]
    # nothing ran since the last step's snapshot (settle returns right after its hook): the
    # final state is that snapshot's, so it is shared, not taken again (a dump of 100,000
    # pods pays a snapshot's spread rows once less)
    return PlacementResult(steps[0], steps[1:], placed, steps[-1].snapshot, baseline)


@dataclass(frozen=True, slots=True)
class ScheduleRequest:
    """What ``kubespread schedule`` is asked, once its files are loaded: the manifests (the
    cluster and what to create, in order), the scheduler profiles (None: the default
    profile), the seed, and the most pods the run may hold (None: no bound)."""

    manifests: Manifests | Sequence[LoadedObject]
    profiles: Mapping[str, Profile] | None = None
    seed: int = 0
    max_pods: int | None = DEFAULT_MAX_PODS
    #: the Kubernetes version to answer as (None: the profiles', else 1.35)
    features: FeatureGates | None = None
    #: False: the snapshots keep no spread of every workload (``place``'s ``distributions``)
    distributions: bool = True


def schedule(
    request: ScheduleRequest, *, on_step: Callable[[int, int, str], None] | None = None
) -> PlacementResult:
    """The ``schedule`` use case (``explain`` and ``diff`` start from it too): :func:`place`
    with the request's settings. ``on_step`` reports progress; PlacementError (every
    problem, located) when the input cannot be placed."""
    profiles = request.profiles
    if profiles is None and request.features is not None:
        from kubespread.scheduler.config import default_profiles

        profiles = default_profiles(features=request.features)
    return place(
        request.manifests,
        profiles=profiles,
        seed=request.seed,
        on_step=on_step,
        max_pods=request.max_pods,
        distributions=request.distributions,
    )


def _owned(sim: Simulation, pod: Pod | None) -> Ownership:
    return NO_OWNER if pod is None else ownership(sim.cluster, pod)


def _kind_name(ref: WorkloadRef | None) -> dict[str, str] | None:
    """A placement's ``{kind, name}`` of a workload (its namespace is the pod's)."""
    return None if ref is None else {"kind": ref.kind, "name": ref.name}


class NoProfile(Exception):
    """The pod names a scheduler the simulation does not run."""


class PodNotFound(KeyError):
    """``explain``'s pod is neither in the input nor among the pods its workloads created;
    ``pending`` names the pods left pending (what the user may have meant)."""

    def __init__(self, key: str, pending: Sequence[str]) -> None:
        super().__init__(key)
        self.key = key
        self.pending = list(pending)

    def __str__(self) -> str:
        return f"pod {self.key} not found in the input or among the pods its workloads create"


class AmbiguousPod(Exception):
    """``explain``'s bare pod name is a pod of more than one namespace: kubectl would take the
    current namespace's; kubespread asks for one (``-n`` or ``namespace/name``)."""

    def __init__(self, name: str, namespaces: Sequence[str]) -> None:
        super().__init__(name)
        self.name = name
        self.namespaces = list(namespaces)

    def __str__(self) -> str:
        return (
            f"pod {self.name} is in namespaces {', '.join(self.namespaces)}: give -n NAMESPACE or "
            "NAMESPACE/NAME"
        )


#: kubectl's TYPE/ prefixes of a pod named as ``pod/NAME``
_POD_PREFIXES: Final = ("pod/", "pods/", "po/")


def pod_key(cluster: ClusterState, pod: str, namespace: str | None = None) -> str:
    """The ``namespace/name`` key ``explain POD`` means, as kubectl reads a pod's name:
    ``pod/NAME`` is NAME; ``namespace/name`` is that pod; a bare name is in ``namespace``
    (``-n``) when given, else the one pod of that name in any namespace (AmbiguousPod when
    several namespaces have one), else ``default``'s."""
    for prefix in _POD_PREFIXES:
        if pod.lower().startswith(prefix):
            pod = pod[len(prefix) :]
            break
    if "/" in pod:
        return pod
    if namespace is not None:
        return f"{namespace}/{pod}"
    found = sorted(key for key, p in cluster.pods.items() if p.metadata.name == pod)
    if len(found) > 1:
        raise AmbiguousPod(pod, [key.split("/", 1)[0] for key in found])
    return found[0] if found else f"default/{pod}"


class PodRefused(Exception):
    """``explain``'s pod manifest is one the API server would refuse; the message is located
    (file, document, field)."""


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
    e = explain_decision(decision, sim.cluster, profile)
    made = [entry for entry in sim.preemptions if entry.pod == pod.key]
    e.preemptions = made + e.preemptions
    return e


def explain_key(sim: Simulation, key: str, *, timed: bool = False) -> Explanation:
    """A pod of the cluster by ``namespace/name`` (KeyError if absent): a pending one as the
    scheduler would retry it now; a bound one as if scheduled now without itself (taken off its
    node for the decision inside a self-undoing trial, so the cluster is as it was and only
    the scheduler's derived indexes heard of it). ``timed``: as ``explain_pod``'s."""
    cluster = sim.cluster
    pod = cluster.pods.get(key)
    if pod is None:
        raise KeyError(key)
    if not pod.spec.node_name:
        return explain_pod(sim, pod, timed=timed)
    unbound = copy.copy(pod)
    unbound.spec = copy.copy(pod.spec)
    unbound.spec.node_name = ""
    with trial(cluster):  # the queue, controllers and recorders never hear of it
        cluster.update_pod(unbound)
        return explain_pod(sim, unbound, timed=timed)


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


@dataclass(frozen=True, slots=True)
class ExplainRequest:
    """What ``kubespread explain`` is asked, once the cluster is placed: the placement to
    explain in, and the pod: ``namespace/name`` (or a name, in ``default``) of a pod there, or
    a loaded Pod manifest to try as if created now. ``timed``: keep where the cycle's time went."""

    placement: PlacementResult
    pod: str | LoadedObject
    timed: bool = False
    #: the namespace a bare pod name is in (``-n``); None: wherever the one pod of that name is
    namespace: str | None = None


def explain(request: ExplainRequest) -> Explanation:
    """The ``explain`` use case: a pod of the placement (:func:`explain_key`; a bound one says
    where it runs) or a manifest admitted as if created now (defaults, matchLabelKeys merge,
    webhooks; :func:`explain_pod`). The pod's name is read as kubectl reads it (:func:`pod_key`).
    Raises PodNotFound, AmbiguousPod, PodRefused or NoProfile."""
    sim = request.placement.sim
    if isinstance(request.pod, LoadedObject):
        return explain_pod(sim, _admitted(sim, request.pod), timed=request.timed)
    key = pod_key(sim.cluster, request.pod, request.namespace)
    try:
        e = explain_key(sim, key, timed=request.timed)
    except KeyError:
        raise PodNotFound(key, [p.key for p in request.placement.final.pending]) from None
    if node := sim.cluster.pods[key].spec.node_name:
        e.runs_on(node)
    return e


def _admitted(sim: Simulation, lo: LoadedObject) -> Pod:
    """The manifest's pod as the API server would store it on create, unbound."""
    pod = lo.obj.copy()
    if not isinstance(pod, Pod):
        raise TypeError(f"{lo.ref} is not a Pod")
    if not pod.metadata.name and pod.metadata.generate_name:
        pod.metadata.name = sim.generate_name(pod.metadata.generate_name, pod.metadata.namespace)
    outcome = admit_create(pod, sim.admission_context(), sim.chain)
    if isinstance(outcome, Rejection):
        field = next((c.get("field") for c in outcome.causes if c.get("field")), None)
        raise PodRefused(f"{lo.where(field)}: {lo.ref}: the API server would refuse it: {outcome.message}")
    pod.spec.node_name = ""
    return pod
