"""The scheduling loop: queue, profiles, the next decision, and whoever binds it.

The simulation and the live secondary scheduler run this one loop; they differ only in the
clock they pass (virtual seconds, or the wall's monotonic clock) and in their
:class:`Binder` (the simulation stores the binding and starts the pod; the live scheduler
assumes the pod in its cache, then POSTs ``pods/binding``). The loop never changes the
cluster itself: :func:`~kubespread.scheduler.scheduler.schedule_one` returns a decision and
the binder applies it.

- Pods enter the :class:`~kubespread.scheduler.queue.SchedulingQueue` when they are pending,
  not terminating or finished, name one of ``profiles`` in ``spec.schedulerName`` and pass
  every PreEnqueue plugin of that profile (scheduling gates).
- :meth:`SchedulingLoop.follow` keeps the queue in step with the cluster's events; a change
  moves the unschedulable pods whose rejecting plugins' queueing hints say it may help (to
  backoff or active, as kube's informer handlers do), and :meth:`SchedulingLoop.move_if_changed`
  hands the moved pods to the host (which wakes them when their backoff ends).
- :meth:`SchedulingLoop.schedule_next` pops the next pod (PrioritySort), decides as
  kube-scheduler does (the loop is the scheduler instance: it keeps the node tree and the
  start index, :class:`~kubespread.scheduler.selection.NodeOrder`, in step with node events),
  records the plugins that rejected an unschedulable pod (the queue asks only their hints)
  and hands the outcome to the binder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from kubespread.api.core import Pod
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Code, PreemptionResult
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.queue import QueuedPodInfo, Registrations, SchedulingQueue, follow_cluster_event
from kubespread.scheduler.queueing import ALL_EVENTS, EventRegistration
from kubespread.scheduler.scheduler import Decision, schedule_one, tie_break_rng
from kubespread.scheduler.selection import NodeOrder

__all__ = [
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Binder",
    "FailureOutcome",
    "PreparedPreemption",
    "SchedulingLoop",
    "profile_registrations",
    "rejecting_plugins",
]

#: the DisruptionTarget reason of a pod the scheduler preempts (v1.PodReasonPreemptionByScheduler)
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


@dataclass(frozen=True)
class PreparedPreemption:
    """What prepareCandidate does for one preemption, decided once for every binder (the
    simulation applies it to its API server at once; the live scheduler sends it to the API
    server from a binder thread): the victims not yet terminating get the DisruptionTarget
    condition (``reason``, ``condition_message``) and a graceful delete (a plain delete, not an
    eviction: PodDisruptionBudgets are not asked), each with a ``Preempted`` event
    (``event_message``); the lower-priority pods nominated to the node lose their nomination
    (``cleared``; the nominator has already dropped them)."""

    preemptor: Pod
    node: str
    result: PreemptionResult
    victims: tuple[Pod, ...]
    cleared: tuple[Pod, ...]
    condition_message: str
    event_message: str
    reason: str = REASON_PREEMPTION_BY_SCHEDULER


@dataclass(frozen=True)
class FailureOutcome:
    """What follows a pod found unschedulable, beyond its FailedScheduling event and
    PodScheduled=False condition: the preemption to carry out (None when none was made) and
    the pod's status.nominatedNodeName to write (None: leave it; "": clear it; a node: the one
    it waits for)."""

    preemption: PreparedPreemption | None = None
    nominated_node_name: str | None = None


def rejecting_plugins(decision: Decision) -> tuple[frozenset[str], frozenset[str]]:
    """(unschedulable plugins, pending plugins) of an unschedulable decision: the plugins
    whose PreFilter or Filter rejected some node (kube's Diagnosis), those answering Pending
    apart. A PreFilterResult that left nodes out counts the plugins that narrowed it."""
    unschedulable: set[str] = set()
    pending: set[str] = set()
    for _, rejection in decision.rejected:
        status = rejection.status
        if not status.is_rejected:
            continue
        names = {status.plugin} if status.plugin else set(decision.narrowing_plugins)
        (pending if status.code is Code.PENDING else unschedulable).update(names)
    return frozenset(unschedulable), frozenset(pending)


def profile_registrations(profile: Profile) -> dict[str, list[EventRegistration]]:
    """The profile's queueingHintMap: each plugin's ``events_to_register()``; a plugin that
    registers none (None) is registered for every event, with an always-Queue hint."""
    out: dict[str, list[EventRegistration]] = {}
    for name, plugin in profile.plugins.items():
        regs = plugin.events_to_register()
        out[name] = [EventRegistration(ALL_EVENTS)] if regs is None else list(regs)
    return out


class Binder(Protocol):
    """Applies a decision: ``bind`` when a node was selected, ``unschedulable`` otherwise."""

    def bind(self, pod: Pod, decision: Decision) -> None: ...

    def unschedulable(self, pod: Pod, decision: Decision) -> None: ...


class SchedulingLoop:
    """Schedules the pods of ``profiles`` (schedulerName -> Profile) on one cluster.

    Ties among the best nodes go to the top of kube-scheduler's score heap (parallelism 1);
    with ``random_ties`` they are drawn by the generator ``seed`` seeds
    (:func:`~kubespread.scheduler.scheduler.tie_break_rng`), as the race of kube's 16 Filter
    threads would, reproducibly: the same seed and pods in the same order give the same
    placements in a simulation and on a live cluster. ``observers`` see every decision
    before it is applied.
    """

    def __init__(
        self, profiles: Mapping[str, Profile], *, seed: int = 0, timed: bool = True, random_ties: bool = False
    ) -> None:
        self.profiles = dict(profiles)
        #: keep each cycle's timings in its Decision (off: no clock reads at all)
        self.timed = timed
        self._registrations: dict[str, Registrations] = {}
        self.queue = SchedulingQueue(gate=self.gate, registrations=self.registrations)
        self.rng = tie_break_rng(seed) if random_ties else None
        #: the scheduler instance's node tree and nextStartNodeIndex (one for all profiles,
        #: as kube-scheduler has one cache and one start index)
        self.order = NodeOrder()
        self.observers: list[Callable[[Decision], None]] = []
        self.changed = False
        #: the pods a change moved out of the unschedulable pool since ``move_if_changed``
        self._moved: list[QueuedPodInfo] = []
        #: the cluster the loop schedules on (hints read it; set by add_pending/schedule_next)
        self.cluster: ClusterState | None = None
        #: node name -> the pods nominated there (kube's nominator): preemptors waiting for
        #: their victims to go; the filters count those of >= priority as already there
        self.nominated: dict[str, list[Pod]] = {}
        self._nominated_node: dict[str, str] = {}
        #: a popped pod this says to hold back waits for a change instead of a cycle (the live
        #: scheduler's async preemption: kube's DefaultPreemption PreEnqueue)
        self.hold: Callable[[Pod], bool] | None = None

    # ------------------------------------------------------------------ which pods
    def profile_of(self, pod: Pod) -> Profile | None:
        return self.profiles.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)

    def wanted(self, pod: Pod) -> bool:
        """A pod this loop schedules (pending or not): one of its profiles, alive."""
        return self.profile_of(pod) is not None and not pod.is_terminating and not pod.is_finished

    def gate(self, pod: Pod) -> bool:
        """PreEnqueue: every plugin of the pod's profile lets it into the active queue."""
        profile = self.profile_of(pod)
        return profile is not None and all(p.pre_enqueue(pod).is_success for p in profile.pre_enqueue)

    def registrations(self, pod: Pod) -> Registrations | None:
        """The queueing hints of the pod's profile (built once per profile)."""
        profile = self.profile_of(pod)
        if profile is None:
            return None
        got = self._registrations.get(profile.scheduler_name)
        if got is None:
            got = self._registrations[profile.scheduler_name] = profile_registrations(profile)
        return got

    # ------------------------------------------------------------------ queue upkeep
    def add_pending(self, cluster: ClusterState, now: float) -> None:
        """Queue the pods already pending in ``cluster`` (at start), by key; a loop that has
        seen no node yet lists the cluster's nodes into its tree, in their order."""
        self.cluster = cluster
        if not len(self.order.tree):
            self.order = NodeOrder.of(cluster)
        for pod in sorted(cluster.unbound_pods.values(), key=lambda p: p.key):
            if self.wanted(pod):
                self.queue.add(pod, now)

    def follow(self, ev: ClusterEvent, now: float) -> bool:
        """Keep the queue in step with one change; True (and ``changed`` set) when the change
        moved unschedulable pods (their rejecting plugins' hints said it may help). A nominated
        pod bound, terminating or gone loses its nomination."""
        if self._nominated_node and ev.kind == Pod.KIND and ev.obj.key in self._nominated_node:
            pod: Pod = ev.obj
            if ev.type in (EventType.DELETED, EventType.BOUND) or pod.spec.node_name or pod.is_terminating:
                self.forget_nomination(pod.key)
        self.order.follow(ev)
        moved = follow_cluster_event(self.queue, ev, now, self.wanted, self.cluster)
        if not moved:
            return False
        self._moved += moved
        self.changed = True
        return True

    def move_if_changed(self, now: float) -> list[QueuedPodInfo] | None:
        """The pods changes moved out of the unschedulable pool since the last call, those
        still in backoff (the host wakes them at their expiry); None when none moved."""
        if not self.changed:
            return None
        self.changed = False
        moved, self._moved = self._moved, []
        return [info for info in moved if self.queue.where(info.key) == "backoff"]

    def failed(self, key: str, now: float) -> QueuedPodInfo | None:
        """The pod was found unschedulable: it waits for a helpful change (or the leftover
        flush); returns its queue entry when it is still queued. When a change seen during
        the attempt may help, it goes to backoff at once, and is reported as moved (so the
        host wakes it when its backoff ends)."""
        info = self.queue.failed(key, now)
        if info is not None and self.queue.where(key) != "unschedulable":
            self._moved.append(info)
            self.changed = True
        return info

    # ------------------------------------------------------------------ nominations
    def nominated_node(self, key: str) -> str:
        return self._nominated_node.get(key, "")

    def nominate(self, pod: Pod, node: str) -> list[Pod]:
        """AddNominatedPod: the pod waits for room on ``node``. Returns the pods of lower
        priority nominated there, whose nomination is dropped (prepareCandidate clears it:
        they may no longer fit)."""
        self.forget_nomination(pod.key)
        priority = pod.spec.priority or 0
        here = self.nominated.get(node, [])
        lower = [p for p in here if (p.spec.priority or 0) < priority]
        for p in lower:
            self.forget_nomination(p.key)
        self.nominated.setdefault(node, []).append(pod)
        self._nominated_node[pod.key] = node
        return lower

    def keep_nomination(self, pod: Pod) -> None:
        """A pending pod already carrying status.nominatedNodeName that the nominator does
        not know (a scheduler that restarted, another instance's preemption): it is held there
        as kube's informer handler does (addNominatedPod), without touching the others."""
        node = pod.status.nominated_node_name
        if not node or self._nominated_node.get(pod.key) == node:
            return
        self.forget_nomination(pod.key)
        self.nominated.setdefault(node, []).append(pod)
        self._nominated_node[pod.key] = node

    def forget_nomination(self, key: str) -> None:
        """DeleteNominatedPodIfExists."""
        node = self._nominated_node.pop(key, None)
        if node is None:
            return
        rest = [p for p in self.nominated.get(node, []) if p.key != key]
        if rest:
            self.nominated[node] = rest
        else:
            self.nominated.pop(node, None)

    def after_failure(self, pod: Pod, decision: Decision, cluster: ClusterState) -> FailureOutcome:
        """handleSchedulingFailure's nominating, one rule for every binder: when
        DefaultPreemption nominated a node, the preemption is prepared (:meth:`prepare_candidate`)
        and the pod is nominated there; when preemption found no candidate, an earlier
        nomination is cleared; when the pod may not preempt (its victims are still
        terminating), it is kept."""
        result = decision.preemption
        if result is not None and result.nominated_node:
            prepared = self.prepare_candidate(pod, result, cluster)
            return FailureOutcome(prepared, prepared.node)
        if result is not None and result.eligible and pod.status.nominated_node_name:
            self.forget_nomination(pod.key)
            return FailureOutcome(None, "")
        return FailureOutcome()

    def prepare_candidate(
        self, pod: Pod, result: PreemptionResult, cluster: ClusterState
    ) -> PreparedPreemption:
        """prepareCandidate's decisions (see :class:`PreparedPreemption`), and the nominator
        updated: the pod is nominated to the node (the filters keep the room for it), the
        lower-priority pods nominated there are not. Victims already terminating are left
        alone (their deletion is under way)."""
        node = result.nominated_node
        assert node is not None
        victims = []
        for victim in result.victims:
            current = cluster.pods.get(victim.key)
            if current is not None and not current.is_terminating:
                victims.append(current)
        cleared = tuple(lower for lower in self.nominate(pod, node) if lower.key in cluster.pods)
        scheduler = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        return PreparedPreemption(
            preemptor=pod,
            node=node,
            result=result,
            victims=tuple(victims),
            cleared=tuple(cluster.pods[p.key] for p in cleared),
            condition_message=f"{scheduler}: preempting to accommodate a higher priority pod",
            event_message=f"Preempted by pod {pod.metadata.uid} on node {node}",
        )

    # ------------------------------------------------------------------ deciding
    def next_pod(self, cluster: ClusterState) -> tuple[Pod, Profile] | None:
        """Pop the next pod that still needs scheduling; stale entries (bound, terminating,
        gone, no profile) leave the queue on the way."""
        while True:
            info = self.queue.pop()
            if info is None:
                return None
            pod = cluster.pods.get(info.key)
            profile = self.profile_of(pod) if pod is not None else None
            if pod is None or pod.spec.node_name or pod.is_terminating or profile is None:
                self.queue.delete(info.key)
                continue
            if self.hold is not None and self.hold(pod):
                self.queue.park(info.key)
                continue
            return pod, profile

    def schedule_next(self, cluster: ClusterState, binder: Binder) -> bool:
        """Decide for the next pod and hand the outcome to ``binder``; False when no pod was
        ready."""
        popped = self.next_pod(cluster)
        if popped is None:
            return False
        pod, profile = popped
        self.cluster = cluster
        decision = schedule_one(
            pod,
            cluster,
            profile,
            rng=self.rng,
            nominated=self.nominated or None,
            order=self.order,
            timed=self.timed,
        )
        for observe in self.observers:
            observe(decision)
        if decision.selected is not None:
            self.queue.delete(pod.key)
            self.forget_nomination(pod.key)
            binder.bind(pod, decision)
        else:
            self.queue.record_rejection(pod.key, *rejecting_plugins(decision))
            binder.unschedulable(pod, decision)
        return True
