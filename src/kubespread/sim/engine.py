"""The simulation engine: a cluster living on a virtual clock.

A :class:`Simulation` puts together the parts of a cluster, each in its own module:

- the in-memory API server (:mod:`.apiserver`): admission, names, uids, resourceVersions,
  graceful deletion, garbage collection;
- the nodes' kubelets (:mod:`.kubelet`): bound pods start, Terminating pods end after their
  grace period (never on an unreachable node);
- the scheduling loop (:mod:`kubespread.scheduler.loop`), with this module as its binder;
- the controllers (:mod:`kubespread.controllers`), for which the simulation is the
  :class:`~kubespread.controllers.host.ControllerHost`;
- the virtual clock (:mod:`.clock`).

One loop drives everything, in this order of urgency::

    controllers' work queue (sync(key), FIFO, deduplicated)
    → cluster changed? move unschedulable pods to backoff/active
    → schedule the next active pod (PrioritySort), bind it or record FailedScheduling
    → nothing to do now: fire the next timer (until quiet: settling timers only)

Determinism: every choice (generated names, the scheduler's tie-breaks) draws from seeded
generators, timers fire in (time, sequence) order, controllers run in a fixed order, and
the queue orders by (priority, queue time, sequence).
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubespread.admission.chain import AdmissionChain
from kubespread.admission.framework import AdmissionContext, AdmissionOptions, Operation, Rejection
from kubespread.api.core import Pod, PodCondition
from kubespread.api.features import FeatureGates
from kubespread.api.meta import NAME_ALPHABET, KubeObject
from kubespread.api.timestamps import EPOCH, timestamp, virtual_seconds
from kubespread.cluster.errors import DEFAULT_MAX_PODS, SimulationError
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.controllers.host import Controller, ControllerHost
from kubespread.controllers.pods import seeding_together
from kubespread.scheduler.loop import PreparedPreemption, SchedulingLoop
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.queue import MAX_UNSCHEDULABLE_SECONDS, SchedulingQueue
from kubespread.scheduler.scheduler import Decision
from kubespread.scheduler.views import Preemption, preemption_entry
from kubespread.sim.apiserver import DEFAULT_GRACE_SECONDS, ApiServer
from kubespread.sim.clock import Clock, Timer
from kubespread.sim.kubelet import Kubelets
from kubespread.sim.rows import JsonDoc

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "DEFAULT_MAX_PODS",
    "EPOCH",
    "NAME_ALPHABET",
    "Controller",
    "ControllerHost",
    "Event",
    "Simulation",
    "SimulationError",
    "timestamp",
    "virtual_seconds",
]

#: a step that needs more loop turns than this is taken for a livelock (controllers fighting)
MAX_TURNS: Final = 2_000_000


def _scheduler_status_write(ev: ClusterEvent) -> bool:
    """Whether a change is the scheduler's own status write on a pending pod (its
    PodScheduled condition, the same nomination): nothing any scheduling attempt reads."""
    if ev.kind != Pod.KIND or ev.type is not EventType.UPDATED or ev.old is None:
        return False
    new, old = ev.obj, ev.old
    return (
        new.spec is old.spec
        and new.metadata is old.metadata
        and not new.spec.node_name
        and new.status.phase == old.status.phase
        and new.status.nominated_node_name == old.status.nominated_node_name
    )


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

    def to_dict(self) -> JsonDoc:
        return {
            "time": self.time,
            "type": self.type,
            "reason": self.reason,
            "object": {"kind": self.kind, "namespace": self.namespace, "name": self.name},
            "message": self.message,
        }


class Simulation:
    """A cluster, its scheduler(s), admission chain and controllers on one virtual clock.

    ``profiles`` maps schedulerName → Profile (default: the v1.35 default profile as
    ``default-scheduler``); pods naming another scheduler stay pending, as they would with
    no such scheduler running. ``controllers`` default to :func:`kubespread.controllers.default_controllers`;
    ``chain`` to kube-apiserver's plugins plus the webhooks of the controllers that have one
    (:func:`kubespread.controllers.default_admission_chain`: WorkloadSpread's). ``start``: the
    virtual time to begin at (seconds after EPOCH); a snapshot's own time, so that its
    timestamps are in the past. ``max_pods``: pods that may exist at once (None: no limit);
    a create beyond raises PodLimitExceeded. The scheduler picks among equally scored nodes
    as kube-scheduler at parallelism 1 does; ``random_ties`` draws that pick from ``seed``
    instead (what the race of its default 16 threads makes of it). ``features``: the
    Kubernetes version's gates (default: the profiles' own, else v1.35's).
    """

    #: skip a pending pod's 5-minute retry when nothing changed since it failed (see
    #: :meth:`_flush_leftover`); off, every retry is made (the tests compare both)
    skip_idle_retries: bool = True

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
        max_pods: int | None = DEFAULT_MAX_PODS,
        random_ties: bool = False,
        features: FeatureGates | None = None,
    ) -> None:
        if features is None:  # the profiles' version, else v1.35
            features = next(iter(profiles.values())).features if profiles else FeatureGates()
        #: the Kubernetes version answered as: its scheduler profiles (when not given), its
        #: API server's registry and admission, and its controllers read these gates
        self.features = features
        if profiles is None:
            from kubespread.scheduler.config import default_profiles

            profiles = default_profiles(features=features)
        admission = dataclasses.replace(admission or AdmissionOptions(), features=features)
        self.cluster = cluster if cluster is not None else ClusterState()
        self.clock = Clock(start)
        self.seed = seed
        self.api = ApiServer(
            self.cluster, now=lambda: self.clock.now, seed=seed, options=admission, max_pods=max_pods
        )
        self.kubelets = Kubelets(self.cluster, self.clock, remove=self.api.remove_pod, record=self.record)
        self.api.killer = self.kubelets
        # untimed: no simulation output reads a cycle's timings (explain re-runs its own cycle)
        self.scheduling = SchedulingLoop(profiles, seed=seed, timed=False, random_ties=random_ties)
        self.events: list[Event] = []
        #: the last FailedScheduling message per pending pod
        self.pending_reasons: dict[str, str] = {}
        #: every preemption (with its time and where the preemptor then ran), in order; an
        #: entry is replaced, never changed, when its preemptor is bound
        self.preemptions: list[Preemption] = []
        #: per preemption, the index in ``events`` of its first event and of its pod's
        #: Scheduled event (-1 until bound): which steps show it
        self._preemption_marks: list[list[int]] = []
        self._waiting_preemptors: dict[str, int] = {}
        self.turns = 0
        self._work: deque[tuple[Controller, str]] = deque()
        self._queued_work: set[tuple[str, str]] = set()
        self._backoff_wakeups: dict[float, Timer] = {}
        #: cluster changes that can alter a scheduling attempt (not the scheduler's own status
        #: writes on pending pods); a pending pod remembers the count at its last failure
        self._changes = 0
        self._failed_at: dict[str, int] = {}
        #: pending pods whose 5-minute retry was skipped (nothing changed since they failed):
        #: key → the instant of the first skipped retry
        self._dormant: dict[str, float] = {}
        self.cluster.subscribe(self._on_event)
        self.scheduling.add_pending(self.cluster, self.now)
        if controllers is None:
            from kubespread.controllers import default_controllers

            controllers = default_controllers()
        self.controllers = list(controllers)
        if chain is None:
            from kubespread.controllers import default_admission_chain

            chain = default_admission_chain(self, self.controllers)
        self.api.chain = chain
        with seeding_together():  # each reads the same pods as it starts: read once
            for controller in self.controllers:
                controller.start(self)

    # ------------------------------------------------------------------ the parts, as attributes
    @property
    def profiles(self) -> dict[str, Profile]:
        return self.scheduling.profiles

    @property
    def queue(self) -> SchedulingQueue:
        return self.scheduling.queue

    @property
    def chain(self) -> AdmissionChain:
        return self.api.chain

    @property
    def admission_options(self) -> AdmissionOptions:
        return self.api.options

    @property
    def rng(self) -> random.Random:
        """The generator of generated names (the API server's)."""
        return self.api.rng

    @property
    def unreachable(self) -> set[str]:
        """Nodes whose kubelet is gone: their pods cannot finish terminating."""
        return self.kubelets.unreachable

    @property
    def decision_observers(self) -> list[Callable[[Decision], None]]:
        """Called with every scheduling decision, before it is applied (placement scores, explain)."""
        return self.scheduling.observers

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

    def record(self, obj: KubeObject, reason: str, message: str, *, type: str = "Normal") -> None:
        self.events.append(
            Event(self.now, type, reason, obj.KIND, obj.metadata.namespace, obj.metadata.name, message)
        )

    # ------------------------------------------------------------------ the API server's verbs
    def admission_context(
        self, operation: Operation = Operation.CREATE, *, subresource: str = "", old: KubeObject | None = None
    ) -> AdmissionContext:
        return self.api.admission_context(operation, subresource=subresource, old=old)

    def admit_change(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        return self.api.admit_change(obj, ctx)

    def generate_name(self, prefix: str, namespace: str = "", kind: str = "Pod") -> str:
        return self.api.generate_name(prefix, namespace, kind)

    def create(self, obj: KubeObject) -> KubeObject | Rejection:
        """Create through the API server (:meth:`.apiserver.ApiServer.create`)."""
        return self.api.create(obj)

    def update(self, obj: KubeObject, *, precondition: bool = False) -> None:
        """Store a changed copy (:meth:`.apiserver.ApiServer.update`); Conflict on a stale
        precondition."""
        self.api.update(obj, precondition=precondition)

    def delete(self, kind: str, key: str, *, grace_seconds: float | None = None) -> None:
        """Delete an object; pods gracefully, dependents (by ownerReferences) with it."""
        self.api.delete(kind, key, grace_seconds=grace_seconds)

    def delete_pod(
        self, key: str, *, grace_seconds: float | None = None, subresource: str = ""
    ) -> Rejection | None:
        """Graceful deletion (:meth:`.apiserver.ApiServer.delete_pod`)."""
        return self.api.delete_pod(key, grace_seconds=grace_seconds, subresource=subresource)

    def evict(
        self, key: str, *, reason: str, message: str, grace_seconds: float | None = None
    ) -> Rejection | None:
        """Evict a pod through the Eviction API (:meth:`.apiserver.ApiServer.evict_pod`: the
        PodDisruptionBudgets may refuse it, 429); once granted, an event naming why, then a
        graceful deletion."""
        return self.api.evict_pod(
            key,
            grace_seconds=grace_seconds,
            before_delete=lambda pod: self.record(pod, reason, message, type="Warning"),
        )

    def set_pod_status(
        self,
        key: str,
        phase: str,
        *,
        conditions: Iterable[PodCondition] | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        self.api.set_pod_status(key, phase, conditions=conditions, nominated_node_name=nominated_node_name)

    # ------------------------------------------------------------------ the kubelets' side
    def node_reachable(self, node: str) -> bool:
        return self.kubelets.reachable(node)

    def set_node_reachable(self, node: str, reachable: bool) -> None:
        self.kubelets.set_reachable(node, reachable)

    def finish_terminations(self, node_name: str) -> None:
        """The node's kubelet (back, or the node gone): its Terminating pods are removed."""
        self.kubelets.finish_terminations(node_name)

    # ------------------------------------------------------------------ scheduling: the binder
    def _on_event(self, ev: ClusterEvent) -> None:
        """Keep the queue in step with the cluster; forget the reasons of pods placed or gone."""
        self.scheduling.follow(ev, self.now)
        if ev.kind == Pod.KIND and ev.type in (EventType.DELETED, EventType.BOUND):
            self.pending_reasons.pop(ev.obj.key, None)
            self._failed_at.pop(ev.obj.key, None)
            self._dormant.pop(ev.obj.key, None)
        if not _scheduler_status_write(ev):
            self._changes += 1
            if self._dormant:
                self._wake_dormant()

    # ------------------------------------------------------------------ the 5-minute retry
    def _flush_leftover(self, key: str) -> None:
        """flushUnschedulablePodsLeftover for one pod. When nothing that could change its
        outcome happened since it failed, the retry would repeat that failure on the same
        cluster: it is skipped and the pod waits, dormant, for the next change (a long
        ``advance`` with pending pods costs nothing per 5 minutes). kube-scheduler would make
        each retry and record each FailedScheduling again, counted in one Event."""
        if not self.queue.leftover_due(key, self.now):
            return
        if self.skip_idle_retries and self._failed_at.get(key) == self._changes:
            self._dormant[key] = self.now
            return
        self.queue.flush_unschedulable_leftover(key, self.now)

    def _wake_dormant(self) -> None:
        """The cluster changed: each dormant pod is as if its skipped retries had been made and
        had failed (attempts, last failure), and its next retry is due where their 5-minute
        cadence puts it."""
        for key, first in self._dormant.items():
            skipped = int((self.now - first) // MAX_UNSCHEDULABLE_SECONDS) + 1
            last = first + (skipped - 1) * MAX_UNSCHEDULABLE_SECONDS
            self.queue.repeat_failures(key, skipped, last)
            self._failed_at.pop(key, None)
            self.clock.at(last + MAX_UNSCHEDULABLE_SECONDS, functools.partial(self._flush_leftover, key))
        self._dormant.clear()

    def _move_unschedulable(self) -> None:
        """One wake-up timer per distinct backoff expiry, however many pods share it."""
        moved = self.scheduling.move_if_changed(self.now) or []
        for expiry in sorted({info.backoff_expiry() for info in moved}):
            if expiry not in self._backoff_wakeups:
                self._backoff_wakeups[expiry] = self.clock.at(
                    expiry, functools.partial(self._wake_backoff, expiry), settle=True
                )

    def _wake_backoff(self, expiry: float) -> None:
        self._backoff_wakeups.pop(expiry, None)
        self.queue.flush_backoff_completed(self.now)

    def bind(self, pod: Pod, decision: Decision) -> None:
        """The binding is stored and the node's kubelet starts the pod."""
        node = decision.selected
        assert node is not None
        self.cluster.update_pod(self.kubelets.start(pod, node))
        waiting = self._waiting_preemptors.pop(pod.key, None) if self._waiting_preemptors else None
        if waiting is not None:
            self.preemptions[waiting] = self.preemptions[waiting].scheduled(node, self.now)
            self._preemption_marks[waiting][1] = len(self.events)
        self.record(pod, "Scheduled", f"Successfully assigned {pod.key} to {node}")

    def unschedulable(self, pod: Pod, decision: Decision) -> None:
        """FailedScheduling: the Event, the PodScheduled=False condition, and the pod waits.
        The loop's :meth:`~kubespread.scheduler.loop.SchedulingLoop.after_failure` says what
        else: when DefaultPreemption nominated a node, its victims are deleted there first
        and the pod gets status.nominatedNodeName (see :meth:`preempt`); when preemption found
        no candidate, an earlier nomination is cleared; when the pod may not preempt (its
        victims are still terminating), it is kept."""
        key = pod.key
        outcome = self.scheduling.after_failure(pod, decision, self.cluster)
        if outcome.preemption is not None:
            self.preempt(outcome.preemption)
        message = decision.fit_error or "no nodes available"
        self.pending_reasons[key] = message
        self.record(pod, "FailedScheduling", message, type="Warning")
        self.set_pod_status(
            key,
            pod.status.phase or "Pending",
            conditions=[
                PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message=message)
            ],
            nominated_node_name=outcome.nominated_node_name,
        )
        if self.scheduling.failed(key, self.now) is not None:
            self._failed_at[key] = self._changes
            self.after(MAX_UNSCHEDULABLE_SECONDS, functools.partial(self._flush_leftover, key))

    def preempt(self, prepared: PreparedPreemption) -> None:
        """prepareCandidate, applied at once (the rules are the loop's,
        :meth:`~kubespread.scheduler.loop.SchedulingLoop.prepare_candidate`, shared with the
        live scheduler): each victim gets the DisruptionTarget condition and is deleted
        gracefully (its terminationGracePeriodSeconds on the virtual clock), with a Preempted
        event; the lower-priority pods nominated to that node lose their nomination."""
        pod = prepared.preemptor
        self._waiting_preemptors[pod.key] = len(self.preemptions)
        self.preemptions.append(
            preemption_entry(pod, prepared.result, self.cluster, self.features).made_at(self.now)
        )
        self._preemption_marks.append([len(self.events), -1])
        for victim in prepared.victims:
            self.update(victim.with_disruption_target(prepared.reason, prepared.condition_message))
            self.delete_pod(victim.key)
            self.record(victim, "Preempted", prepared.event_message)
        for lower in prepared.cleared:
            self.set_pod_status(lower.key, lower.status.phase or "Pending", nominated_node_name="")

    def preemptions_since(self, first_event: int) -> list[Preemption]:
        """The preemptions made, or whose preemptor was scheduled, since
        ``events[first_event]``, as they stand now: what a step that began there shows."""
        return [
            entry
            for entry, (made, bound) in zip(self.preemptions, self._preemption_marks, strict=True)
            if made >= first_event or bound >= first_event
        ]

    # ------------------------------------------------------------------ the loop
    def step(self) -> bool:
        """Do one unit of work due now (a controller sync, moving unschedulable pods, or one
        scheduling decision); False when there is none. Timers are not fired: see
        :meth:`run_until_quiet` and :meth:`advance`."""
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
        if self.scheduling.changed:
            self._move_unschedulable()
            return True
        if self.queue.has_active():
            self.scheduling.schedule_next(self.cluster, self)
            return True
        return False

    def run_until_quiet(self) -> None:
        """Work until nothing is left to do now and no settling timer is pending."""
        while True:
            if self.step():
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
            if self.step():
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
