"""The simulation engine: a cluster living on a virtual clock.

One loop drives everything, in this order of urgency::

    controllers' work queue (sync(key), FIFO, deduplicated)
    → cluster changed? move unschedulable pods to backoff/active
    → schedule the next active pod (PrioritySort), bind it or record FailedScheduling
    → nothing to do now: fire the next timer (until quiet: settling timers only)

Objects enter through :meth:`Simulation.create`, which runs the admission chain (a refused
pod is never created), and leave through :meth:`Simulation.delete`, which is graceful for
pods (Terminating for their grace period, a settling timer) and cascades to dependents by
ownerReferences, as the garbage collector would. Controllers change the cluster only through
these methods and learn of changes from ClusterState's events.

Determinism: every choice (generated names, the scheduler's tie-breaks) draws from seeded
generators, timers fire in (time, sequence) order, controllers run in a fixed order, and
the queue orders by (priority, queue time, sequence).
"""

from __future__ import annotations

import copy
import random
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Protocol

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.chain import AdmissionChain
from kubespread.admission.framework import AdmissionContext, AdmissionOptions, Operation, Rejection
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod, PodCondition, PodStatus
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.api.meta import KubeObject
from kubespread.cluster.errors import ClusterError, Conflict
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.queue import MAX_UNSCHEDULABLE_SECONDS, SchedulingQueue, follow_cluster_event
from kubespread.scheduler.scheduler import Decision, schedule_one, tie_break_rng
from kubespread.sim.clock import Clock, Timer

__all__ = [
    "EPOCH",
    "NAME_ALPHABET",
    "Controller",
    "Event",
    "Simulation",
    "SimulationError",
    "pod_owner",
    "timestamp",
    "virtual_seconds",
]

#: virtual time 0, as creationTimestamps and event times show it
EPOCH: Final = datetime(2026, 1, 1, tzinfo=UTC)
#: a step that needs more loop turns than this is taken for a livelock (controllers fighting)
MAX_TURNS: Final = 2_000_000
DEFAULT_GRACE_SECONDS: Final = 30
#: utilrand's alphabet (generated names, SafeEncodeString): no vowels, no look-alikes
NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"


def timestamp(seconds: float) -> str:
    """RFC 3339 (second precision, as the API server writes it) for a virtual time."""
    return (EPOCH + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def virtual_seconds(stamp: str | None) -> float | None:
    """The inverse of :func:`timestamp`: an RFC 3339 time as virtual seconds; None if absent or
    not a time with a zone."""
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return (when - EPOCH).total_seconds()


def pod_owner(pod: KubeObject) -> dict[str, str] | None:
    ref = pod.metadata.controller_ref()
    return {"kind": ref.kind, "name": ref.name} if ref is not None else None


class SimulationError(Exception):
    """The simulation cannot go on (a livelock, an inconsistent request from a controller)."""


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event as the simulation records it."""

    time: float
    type: str  # Normal | Warning
    reason: str
    kind: str
    namespace: str
    name: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "type": self.type,
            "reason": self.reason,
            "object": {"kind": self.kind, "namespace": self.namespace, "name": self.name},
            "message": self.message,
        }


class Controller(Protocol):
    """A controller: ``start`` subscribes to the cluster (``sim.cluster.subscribe``) and queues
    its first keys; ``sync(key)`` reconciles one key (called through ``sim.enqueue``)."""

    name: str

    def start(self, sim: Simulation) -> None: ...

    def sync(self, key: str) -> None: ...


class Simulation:
    """A cluster, its scheduler(s), admission chain and controllers on one virtual clock.

    ``profiles`` maps schedulerName → Profile (default: the v1.35 default profile as
    ``default-scheduler``); pods naming another scheduler stay pending, as they would with
    no such scheduler running. ``controllers`` default to :func:`kubespread.controllers.default_controllers`;
    ``chain`` to kube-apiserver's plugins plus the webhooks of the controllers that have one
    (:func:`kubespread.controllers.default_admission_chain`: WorkloadSpread's). ``start``: the
    virtual time to begin at (seconds after EPOCH); a snapshot's own time, so that its
    timestamps are in the past.
    """

    def __init__(
        self,
        cluster: ClusterState | None = None,
        *,
        profiles: Mapping[str, Profile] | None = None,
        seed: int = 0,
        admission: AdmissionOptions | None = None,
        chain: AdmissionChain | None = None,
        controllers: Sequence[Controller] | None = None,
        start: float = 0.0,
    ) -> None:
        if profiles is None:
            from kubespread.scheduler.config import default_profile

            profiles = {DEFAULT_SCHEDULER_NAME: default_profile()}
        self.cluster = cluster if cluster is not None else ClusterState()
        self.clock = Clock(start)
        self.profiles = dict(profiles)
        self.seed = seed
        self.rng = random.Random(f"kubespread-names-{seed}")
        self._tie_rng = tie_break_rng(seed)
        self._uid_rng = random.Random(f"kubespread-uids-{seed}")
        self.admission_options = admission or AdmissionOptions()
        self._resource_version = 0
        self.events: list[Event] = []
        #: the last FailedScheduling message per pending pod
        self.pending_reasons: dict[str, str] = {}
        #: nodes whose kubelet is gone: their pods cannot finish terminating
        self.unreachable: set[str] = set()
        #: called with every scheduling decision, before it is applied (placement scores, explain)
        self.decision_observers: list[Callable[[Decision], None]] = []
        self.turns = 0
        self._work: deque[tuple[Controller, str]] = deque()
        self._queued_work: set[tuple[str, str]] = set()
        self._changed = False
        self._terminations: dict[str, Timer] = {}
        self._backoff_wakeups: dict[float, Timer] = {}
        self.queue = SchedulingQueue(gate=self._may_enqueue)
        self.cluster.subscribe(self._on_event)
        for pod in sorted(self.cluster.unbound_pods.values(), key=lambda p: p.key):
            self._maybe_queue(pod)
        if controllers is None:
            from kubespread.controllers import default_controllers

            controllers = default_controllers()
        self.controllers = list(controllers)
        if chain is None:
            from kubespread.controllers import default_admission_chain

            chain = default_admission_chain(self)
        self.chain = chain
        for controller in self.controllers:
            controller.start(self)

    # ------------------------------------------------------------------ time
    @property
    def now(self) -> float:
        return self.clock.now

    def after(self, delay: float, callback: Callable[[], None], *, settle: bool = False) -> Timer:
        """Call ``callback`` ``delay`` virtual seconds from now (see :mod:`.clock` on settle)."""
        return self.clock.after(delay, callback, settle=settle)

    # ------------------------------------------------------------------ controllers
    def enqueue(self, controller: Controller, key: str) -> None:
        """Ask for ``controller.sync(key)`` soon; a key already waiting is not added twice."""
        mark = (controller.name, key)
        if mark not in self._queued_work:
            self._queued_work.add(mark)
            self._work.append((controller, key))

    def controller(self, name: str) -> Controller:
        for c in self.controllers:
            if c.name == name:
                return c
        raise KeyError(name)

    # ------------------------------------------------------------------ objects
    def _stamp(self, obj: KubeObject) -> None:
        meta = obj.metadata
        if not meta.uid:  # random, as the API server's: scale-down breaks ties by uid (KEP-2185)
            meta.uid = str(uuid.UUID(int=self._uid_rng.getrandbits(128), version=4))
        if not meta.creation_timestamp:
            meta.creation_timestamp = timestamp(self.now)
        meta.generation = meta.generation or 1
        self._next_resource_version(obj)

    def _next_resource_version(self, obj: KubeObject) -> None:
        """The API server's resourceVersion: a new one at every write."""
        self._resource_version += 1
        obj.metadata.resource_version = str(self._resource_version)

    def admission_context(
        self, operation: Operation = Operation.CREATE, *, subresource: str = "", old: KubeObject | None = None
    ) -> AdmissionContext:
        namespaces = self.cluster.namespaces
        classes = self.cluster.objects(PriorityClass.KIND).values()
        return AdmissionContext.create(
            operation=operation,
            subresource=subresource,
            old=old,
            priority_classes=[c for c in classes if isinstance(c, PriorityClass)],
            namespaces=list(namespaces) if namespaces else None,
            options=self.admission_options,
        )

    def admit_change(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        """Admission of an update, a delete, an eviction or a status update: the validating
        plugins that handle it (webhooks watching pods and WorkloadSpreads) may refuse it; the
        built-in ones here look at creates only."""
        return self.chain.validate(obj, ctx)

    def generate_name(self, prefix: str, namespace: str = "", kind: str = "Pod") -> str:
        """``prefix`` + 5 random characters (the API server's generateName), unique."""
        while True:
            name = prefix + "".join(self.rng.choice(NAME_ALPHABET) for _ in range(5))
            key = f"{namespace or 'default'}/{name}" if namespace or kind == "Pod" else name
            if self.cluster.get(kind, key) is None:
                return name

    def create(self, obj: KubeObject) -> KubeObject | Rejection:
        """Create through the API server: defaulting, admission, validation. The object
        (changed in place) is added to the cluster, or the refusal is returned and nothing is."""
        if not obj.metadata.name and obj.metadata.generate_name:
            obj.metadata.name = self.generate_name(
                obj.metadata.generate_name, obj.metadata.namespace, obj.KIND
            )
        outcome = admit_create(obj, self.admission_context(), self.chain)
        if isinstance(outcome, Rejection):
            return outcome
        if self.cluster.get(obj.KIND, obj.key) is not None:
            name = obj.metadata.name
            return Rejection(409, "AlreadyExists", f'{obj.KIND.lower()}s "{name}" already exists')
        self._stamp(obj)
        if isinstance(obj, Pod) and obj.spec.node_name and not obj.status.phase:
            obj.status.phase = "Running"  # bound at creation: its kubelet starts it
        try:
            self.cluster.add(obj)
        except ClusterError as e:
            return Rejection(422, "Invalid", str(e))
        return obj

    def update(self, obj: KubeObject, *, precondition: bool = False) -> None:
        """Store a changed object (a copy the caller made; stored objects are not edited in place).
        ``precondition``: the write of a client that read ``obj`` at its resourceVersion and must
        not overwrite a newer one; raises :class:`~kubespread.cluster.errors.Conflict` if it is
        no longer current. The object gets a new resourceVersion."""
        if precondition:
            stored = self.cluster.get(obj.KIND, obj.key)
            if stored is None:
                raise Conflict(f"{obj.KIND} {obj.key} no longer exists")
            if stored.metadata.resource_version != obj.metadata.resource_version:
                raise Conflict(
                    f'Operation cannot be fulfilled on {obj.KIND.lower()}s "{obj.metadata.name}": '
                    "the object has been modified; please apply your changes to the latest version "
                    "and try again"
                )
        obj.metadata = copy.copy(obj.metadata)  # a shallow copy may share it with the stored object
        self._next_resource_version(obj)
        self.cluster.update(obj)

    def delete(self, kind: str, key: str, *, grace_seconds: float | None = None) -> None:
        """Delete an object; pods gracefully, dependents (by ownerReferences) with it."""
        if kind == Pod.KIND:
            self.delete_pod(key, grace_seconds=grace_seconds)
            return
        obj = self.cluster.get(kind, key)
        if obj is None:
            raise SimulationError(f"{kind} {key} not found")
        uid = obj.metadata.uid
        self.cluster.delete(kind, key)
        if uid:
            self._delete_dependents(uid)

    def _delete_dependents(self, uid: str) -> None:
        for pod in sorted(self.cluster.pods.values(), key=lambda p: p.key):
            if any(r.uid == uid for r in pod.metadata.owner_references):
                self.delete_pod(pod.key)
        from kubespread.cluster.state import OBJECT_KINDS

        for cls in OBJECT_KINDS:
            for obj in sorted(self.cluster.objects(cls.KIND).values(), key=lambda o: o.key):
                if any(r.uid == uid for r in obj.metadata.owner_references):
                    self.delete(cls.KIND, obj.key)

    def delete_pod(
        self, key: str, *, grace_seconds: float | None = None, subresource: str = ""
    ) -> Rejection | None:
        """Graceful deletion: the pod is Terminating (deletionTimestamp set; controllers no
        longer count it, the scheduler still does for resources and affinity) for its grace
        period, then removed. A pending pod, or grace 0, goes at once. On an unreachable node
        nothing can confirm the kill, so the pod stays Terminating until the node comes back
        or is deleted. The request passes admission first (``subresource="eviction"`` for an
        eviction, which the API server admits as a create of pods/eviction); a refusal is
        returned and nothing changes."""
        pod = self.cluster.pods.get(key)
        if pod is None:
            return None
        if pod.is_terminating:
            if grace_seconds == 0:
                self._remove_pod(key)
            return None
        if subresource:
            ctx = self.admission_context(Operation.CREATE, subresource=subresource, old=pod)
        else:
            ctx = self.admission_context(Operation.DELETE, old=pod)
        refused = self.admit_change(pod, ctx)
        if refused is not None:
            return refused
        if grace_seconds is None:
            spec_grace = pod.spec.termination_grace_period_seconds
            grace_seconds = DEFAULT_GRACE_SECONDS if spec_grace is None else spec_grace
        if not pod.spec.node_name or grace_seconds <= 0 or pod.is_finished:
            self._remove_pod(key)
            return None
        terminating = copy.copy(pod)
        terminating.metadata = copy.copy(pod.metadata)
        terminating.metadata.deletion_timestamp = timestamp(self.now + grace_seconds)
        terminating.metadata.deletion_grace_period_seconds = int(grace_seconds)
        self.cluster.update_pod(terminating)
        container = pod.spec.containers[0].name if pod.spec.containers else "main"
        self.record(pod, "Killing", f"Stopping container {container}")
        if pod.spec.node_name not in self.unreachable:
            self._terminations[key] = self.after(grace_seconds, lambda: self._remove_pod(key), settle=True)
        return None

    def _remove_pod(self, key: str) -> None:
        timer = self._terminations.pop(key, None)
        if timer is not None:
            timer.cancel()
        if key in self.cluster.pods:
            self.cluster.delete_pod(key)

    def finish_terminations(self, node_name: str) -> None:
        """The node's kubelet (back, or the node gone): its Terminating pods are removed."""
        for key in sorted(self.cluster.pods_on_node(node_name)):
            if self.cluster.pods[key].is_terminating:
                self._remove_pod(key)

    def evict(
        self, key: str, *, reason: str, message: str, grace_seconds: float | None = None
    ) -> Rejection | None:
        """Evict a pod: an event naming why, then a graceful deletion (admitted as an eviction)."""
        pod = self.cluster.pods.get(key)
        if pod is None or pod.is_terminating:
            return None
        self.record(pod, reason, message, type="Warning")
        return self.delete_pod(key, grace_seconds=grace_seconds, subresource="eviction")

    def set_pod_status(
        self, key: str, phase: str, *, conditions: Iterable[PodCondition] | None = None
    ) -> None:
        """A status update (kubelet's, or the scheduler's condition): phase, and conditions when
        given. A change of phase passes admission as an update of pods/status."""
        pod = self.cluster.pods[key]
        updated = copy.copy(pod)
        updated.status = PodStatus(
            phase=phase,
            conditions=list(conditions) if conditions is not None else list(pod.status.conditions),
            nominated_node_name=pod.status.nominated_node_name,
        )
        if phase != pod.status.phase:
            self.admit_change(
                updated, self.admission_context(Operation.UPDATE, subresource="status", old=pod)
            )
        self.cluster.update_pod(updated)

    def record(self, obj: KubeObject, reason: str, message: str, *, type: str = "Normal") -> None:
        self.events.append(
            Event(self.now, type, reason, obj.KIND, obj.metadata.namespace, obj.metadata.name, message)
        )

    # ------------------------------------------------------------------ scheduling
    def _may_enqueue(self, pod: Pod) -> bool:
        profile = self.profiles.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)
        if profile is None:
            return False
        return all(p.pre_enqueue(pod).is_success for p in profile.pre_enqueue)

    def _ours(self, pod: Pod) -> bool:
        return (pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) in self.profiles

    def _maybe_queue(self, pod: Pod) -> None:
        if not pod.spec.node_name and self._wanted(pod):
            self.queue.add(pod, self.now)

    def _on_event(self, ev: ClusterEvent) -> None:
        """Keep the queue in step with the cluster; note changes that may help pending pods."""
        if follow_cluster_event(self.queue, ev, self.now, self._wanted):
            self._changed = True
        if ev.kind == Pod.KIND and ev.type in (EventType.DELETED, EventType.BOUND):
            self.pending_reasons.pop(ev.obj.key, None)

    def _wanted(self, pod: Pod) -> bool:
        return self._ours(pod) and not pod.is_terminating and not pod.is_finished

    def _move_unschedulable(self) -> None:
        """One wake-up timer per distinct backoff expiry, however many pods share it."""
        for expiry in sorted(
            {info.backoff_expiry() for info in self.queue.move_all_to_active_or_backoff(self.now)}
        ):
            if expiry not in self._backoff_wakeups:
                self._backoff_wakeups[expiry] = self.clock.at(
                    expiry, lambda e=expiry: self._wake_backoff(e), settle=True
                )

    def _wake_backoff(self, expiry: float) -> None:
        self._backoff_wakeups.pop(expiry, None)
        self.queue.flush_backoff_completed(self.now)

    def _schedule_next(self) -> None:
        info = self.queue.pop()
        if info is None:
            return
        pod = self.cluster.pods.get(info.key)
        if pod is None or pod.spec.node_name or pod.is_terminating:
            self.queue.delete(info.key)
            return
        profile = self.profiles[pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME]
        decision = schedule_one(pod, self.cluster, profile, rng=self._tie_rng)
        for observe in self.decision_observers:
            observe(decision)
        if decision.selected is not None:
            self._bind(pod, decision.selected)
        else:
            self._unschedulable(pod, decision.fit_error or "no nodes available")

    def _bind(self, pod: Pod, node: str) -> None:
        bound = copy.copy(pod)
        bound.spec = copy.copy(pod.spec)
        bound.spec.node_name = node
        bound.status = PodStatus(
            phase="Running",
            conditions=[
                PodCondition(type="PodScheduled", status="True"),
                PodCondition(type="Ready", status="True"),
            ],
        )
        self.queue.delete(pod.key)
        self.cluster.update_pod(bound)
        self.record(pod, "Scheduled", f"Successfully assigned {pod.key} to {node}")

    def _unschedulable(self, pod: Pod, message: str) -> None:
        key = pod.key
        self.pending_reasons[key] = message
        self.record(pod, "FailedScheduling", message, type="Warning")
        self.set_pod_status(
            key,
            pod.status.phase or "Pending",
            conditions=[
                PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message=message)
            ],
        )
        if self.queue.failed(key, self.now) is not None:
            self.after(
                MAX_UNSCHEDULABLE_SECONDS, lambda: self.queue.flush_unschedulable_leftover(key, self.now)
            )

    # ------------------------------------------------------------------ the loop
    def _turn(self) -> bool:
        """Do one unit of work due now; False when there is none."""
        self.turns += 1
        if self.turns > MAX_TURNS:
            raise SimulationError(
                f"the cluster did not settle after {MAX_TURNS} turns (controllers fighting?)"
            )
        if self._work:
            controller, key = self._work.popleft()
            self._queued_work.discard((controller.name, key))
            controller.sync(key)
            return True
        if self._changed:
            self._changed = False
            self._move_unschedulable()
            return True
        if self.queue.has_active():
            self._schedule_next()
            return True
        return False

    def run_until_quiet(self) -> None:
        """Work until nothing is left to do now and no settling timer is pending."""
        while True:
            if self._turn():
                continue
            if not self.clock.settling():
                return
            self.clock.step()

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass, firing every timer due on the way."""
        if seconds < 0:
            raise SimulationError(f"cannot advance by a negative duration ({seconds}s)")
        target = self.now + seconds
        while True:
            if self._turn():
                continue
            due = self.clock.peek()
            if due is None or due > target:
                break
            self.clock.step()
        self.clock.advance_to(target)

    # ------------------------------------------------------------------ reading
    def pods_of(self, owner_uid: str) -> list[Pod]:
        """Pods controlled by the object with this uid, by name."""
        return sorted(
            (
                p
                for p in self.cluster.pods.values()
                if (r := p.metadata.controller_ref()) and r.uid == owner_uid
            ),
            key=lambda p: p.key,
        )
