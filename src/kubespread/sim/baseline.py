"""The settled cluster every command starts from: :func:`settle` and :class:`Baseline`.

Commands start from manifests that mix what exists with what to create. Settling them is
one job, done here once for ``schedule``, ``simulate``'s ``cluster:``, ``capacity``,
``rebalance``, ``audit`` and ``explain``, so that they cannot disagree on the cluster they
start from:

- what exists (nodes, namespaces, everything a kubectl dump holds, pods bound to a node:
  :func:`is_existing`) is loaded as it is, and the cluster settles: every controller
  reconciles it and the dump's pending pods are placed;
- what is new (a manifest with no identity) is created through the API server in the order
  given (defaulting, admission, validation) and the cluster settles after each object, so a
  Deployment becomes its ReplicaSet and pods, placed before the next object arrives.

A :class:`Baseline` keeps the settled :class:`~kubespread.sim.engine.Simulation` with what
made it (the objects, profiles, seed). Planners answer questions on it without settling or
copying on their own: :meth:`Baseline.trial` for tentative changes that undo themselves,
:meth:`Baseline.fork` for an independent copy to run on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Final

from kubespread.admission.apiserver import is_stored
from kubespread.admission.framework import AdmissionOptions, Rejection
from kubespread.api.core import Namespace, Node, Pod
from kubespread.api.features import FeatureGates
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused
from kubespread.api.timestamps import virtual_seconds
from kubespread.cluster.state import ClusterState
from kubespread.cluster.trial import trial
from kubespread.controllers.host import Controller
from kubespread.io.dump import cluster_objects
from kubespread.io.loader import LoadedObject, Manifests
from kubespread.io.snapshot import SnapshotError, cluster_from_manifests
from kubespread.scheduler.profile import Profile
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation, SimulationError
from kubespread.sim.rows import RefusedObject
from kubespread.sim.scenario import creation_problems, pod_limit_problems

__all__ = [
    "Baseline",
    "SettleError",
    "SettleHooks",
    "is_existing",
    "settle",
    "snapshot_time",
]

#: where a problem of the first settling is said to be (``place``'s words)
AS_GIVEN: Final = "settling the cluster as given"


class SettleError(Exception):
    """The input cannot be settled; ``problems`` are located messages, all of them."""

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


def snapshot_time(objects: Iterable[KubeObject]) -> float:
    """The virtual time a snapshot was taken at, near enough: its latest creationTimestamp (0
    when none). Starting there keeps the dump's times in the past, so a ReplicaSet with
    minReadySeconds does not wait months for pods created "in the future"."""
    times = (virtual_seconds(obj.metadata.creation_timestamp) for obj in objects)
    return max((t for t in times if t is not None), default=0.0)


@dataclass(frozen=True, slots=True)
class SettleHooks:
    """What a caller watches while the cluster settles (``place`` keeps a snapshot per
    object; ``settle`` itself keeps no history).

    ``started(sim, new)``: the simulation, before anything runs, and how many new objects
    will be created; ``creating(i, lo)``: before the i-th new object is created;
    ``settled(i, lo, first, rejections)``: after the cluster settled, ``i`` -1 and ``lo``
    None for the cluster as given, ``first`` the index in ``sim.events`` where that phase
    began, ``rejections`` what the API server refused in it."""

    started: Callable[[Simulation, int], None] | None = None
    creating: Callable[[int, LoadedObject], None] | None = None
    settled: Callable[[int, LoadedObject | None, int, list[RefusedObject]], None] | None = None


#: the controllers a simulation runs: a factory (each settling gets its own, so a Baseline
#: can fork) or instances (used once: such a Baseline cannot fork)
Controllers = Callable[[], Sequence[Controller]] | Sequence[Controller]


@dataclass(frozen=True, slots=True)
class _Settings:
    """How a Baseline was settled, all of it, so that :meth:`Baseline.fork` settles alike."""

    profiles: Mapping[str, Profile] | None
    seed: int
    controllers: Controllers | None
    admission: AdmissionOptions | None
    max_pods: int | None
    start: float | None
    random_ties: bool
    origin: str
    features: FeatureGates | None = None


@dataclass(frozen=True)
class Baseline:
    """A settled cluster: the Simulation :func:`settle` left, with the objects, profiles and
    seed it was settled from. ``rejections``: the new objects the API server refused."""

    sim: Simulation
    objects: tuple[LoadedObject, ...] = field(repr=False)
    settings: _Settings = field(repr=False)
    rejections: tuple[RefusedObject, ...] = ()

    @property
    def cluster(self) -> ClusterState:
        return self.sim.cluster

    @property
    def profiles(self) -> dict[str, Profile]:
        """The profiles the simulation schedules with, by schedulerName."""
        return self.sim.profiles

    @property
    def seed(self) -> int:
        return self.sim.seed

    def dump(self) -> list[KubeObject]:
        """Every object of the settled cluster, as a kubectl dump lists them."""
        return cluster_objects(self.sim.cluster)

    @contextmanager
    def trial(self) -> Iterator[ClusterState]:
        """A scope for tentative changes to the cluster (add, bind, replace, delete) that
        undoes itself on leaving (:func:`kubespread.cluster.trial.trial`): only derived
        listeners (the scheduler's indexes) hear of them, never the simulation's queue,
        controllers or recorders, so the Baseline is exactly as it was after. It is for
        asking the scheduler questions; do not run the simulation inside (its queue would not
        have heard of the changes)."""
        with trial(self.sim.cluster) as cluster:
            yield cluster

    def fork(self, extra: Sequence[LoadedObject] = ()) -> Baseline:
        """An independent copy, settled again from copies of the same objects with the same
        settings. Re-settling rather than loading a dump of this cluster: simulations are
        deterministic (same input and seed, same history), so the copy is this Baseline in
        every part (its clock, event history, pending reasons, name generator and queue
        too), and a run on it goes as it would on this one; a dump would keep the objects
        but start the rest afresh. Costs one settling. ValueError when the controllers were
        given as instances (they cannot serve two simulations): give a factory.

        ``extra``: objects settled with them, after the others (``provision`` adds nodes: as
        existing objects they are there before anything new is created, as when ``schedule``
        is given them in the cluster files)."""
        s = self.settings
        if s.controllers is not None and not callable(s.controllers):
            raise ValueError("controllers given as instances cannot serve a fork: settle with a factory")
        return settle(
            [replace(lo, obj=lo.obj.copy()) for lo in (*self.objects, *extra)],
            profiles=s.profiles,
            seed=s.seed,
            controllers=s.controllers,
            admission=s.admission,
            max_pods=s.max_pods,
            start=s.start,
            random_ties=s.random_ties,
            origin=s.origin,
            features=s.features,
        )


@gc_paused()  # every object built here stays alive: the collector would find nothing
def settle(
    objects: Manifests | Sequence[LoadedObject],
    *,
    profiles: Mapping[str, Profile] | None = None,
    seed: int = 0,
    controllers: Controllers | None = None,
    admission: AdmissionOptions | None = None,
    max_pods: int | None = DEFAULT_MAX_PODS,
    start: float | None = None,
    random_ties: bool = False,
    origin: str = AS_GIVEN,
    hooks: SettleHooks | None = None,
    features: FeatureGates | None = None,
) -> Baseline:
    """Settle ``objects`` (see the module notes) and return the Baseline.

    ``profiles``: schedulerName → Profile (v1.35's default profile when None);
    ``controllers``: every default controller when None; ``admission``: the API server's
    options (default: the design's hard anti-affinity limit on); ``max_pods``: pods that may
    exist at once; ``start``: the virtual time to begin at (None: the objects' snapshot
    time, :func:`snapshot_time`); ``random_ties``: as :class:`Simulation`'s. ``origin``
    names the first settling in a problem's message (a scenario says ``file: cluster``).
    ``features``: the Kubernetes version's gates (``--kube-version``): the default profiles',
    the API server's and the controllers' (default: the profiles' own, else v1.35's).

    Raises SettleError (every problem, located) when the input does not make a cluster, a
    new object is invalid, or the run would hold more than ``max_pods`` pods; nothing runs
    before every new object has been checked."""
    loaded = tuple(objects.objects if isinstance(objects, Manifests) else objects)
    existing: list[LoadedObject] = []
    new: list[LoadedObject] = []
    for lo in loaded:
        (existing if is_existing(lo.obj) else new).append(lo)
    if features is None and profiles:
        features = next(iter(profiles.values())).features
    problems = creation_problems(list(loaded), features) + pod_limit_problems(list(loaded), max_pods)
    cluster = None
    try:
        cluster = cluster_from_manifests(existing)
    except SnapshotError as e:
        problems += [str(p) for p in e.problems]
    if problems or cluster is None:
        raise SettleError(problems)
    settings = _Settings(
        profiles, seed, controllers, admission, max_pods, start, random_ties, origin, features
    )
    sim = Simulation(
        cluster,
        profiles=profiles,
        seed=seed,
        controllers=controllers() if callable(controllers) else controllers,
        admission=AdmissionOptions(hard_anti_affinity_limit=True) if admission is None else admission,
        start=snapshot_time(lo.obj for lo in existing) if start is None else start,
        max_pods=max_pods,
        random_ties=random_ties,
        features=features,
    )
    hooks = hooks or SettleHooks()
    if hooks.started is not None:
        hooks.started(sim, len(new))
    first = len(sim.events)
    try:
        sim.run_until_quiet()
    except SimulationError as e:
        raise SettleError([f"{origin}: {e}"]) from None
    if hooks.settled is not None:
        hooks.settled(-1, None, first, [])
    refused: list[RefusedObject] = []
    for i, lo in enumerate(new):
        if hooks.creating is not None:
            hooks.creating(i, lo)
        first = len(sim.events)
        try:
            rejections = _create(sim, lo)
            sim.run_until_quiet()
        except SimulationError as e:
            raise SettleError([f"{lo.where()}: {lo.ref}: {e}"]) from None
        refused += rejections
        if hooks.settled is not None:
            hooks.settled(i, lo, first, rejections)
    return Baseline(sim, loaded, settings, tuple(refused))


def _create(sim: Simulation, lo: LoadedObject) -> list[RefusedObject]:
    """Create a copy of ``lo``'s object through the API server; a refusal is recorded as a
    FailedCreate event and returned located."""
    outcome = sim.create(lo.obj.copy())
    if not isinstance(outcome, Rejection):
        return []
    sim.record(lo.obj, "FailedCreate", outcome.message, type="Warning")
    return [RefusedObject(lo.ref, outcome.message, source=lo.where())]
