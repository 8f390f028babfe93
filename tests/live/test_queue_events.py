"""scheduler.queue on a live cluster's events: follow_cluster_event keeps the queue in step with
the ClusterState (pending pods in, bound and deleted pods out, status-only writes ignored),
``errored`` backs a pod off, and the 5-minute rule flushes the unschedulable leftovers."""

from __future__ import annotations

import copy

from builders import ZONE, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.queue import (
    INITIAL_BACKOFF_SECONDS,
    MAX_UNSCHEDULABLE_SECONDS,
    SchedulingQueue,
    follow_cluster_event,
)

OURS = "kubespread"


class Followed:
    """A ClusterState whose events feed a queue, as the live scheduler's cache does."""

    def __init__(self) -> None:
        self.cluster = ClusterState()
        self.queue = SchedulingQueue()
        self.now = 10.0
        self.answers: list[tuple[EventType, str, bool]] = []
        self.cluster.subscribe(self._on_event)
        self.cluster.add(make_node("n1").label(ZONE, "a").obj())

    def _on_event(self, ev: ClusterEvent) -> None:
        # True: the change raised a queueing event (kube's informer handlers would call
        # MoveAllToActiveOrBackoffQueue for it)
        moved = follow_cluster_event(self.queue, ev, self.now, self.wanted, self.cluster)
        self.answers.append((ev.type, ev.obj.key, moved is not None))

    @staticmethod
    def wanted(pod: Pod) -> bool:
        return pod.spec.scheduler_name == OURS and not pod.is_terminating and not pod.is_finished

    def take(self) -> list[tuple[EventType, str, bool]]:
        out, self.answers = self.answers, []
        return out


def ours(name: str) -> Pod:
    return make_pod(name).set("spec.schedulerName", OURS).label("app", "web").obj()


def with_status(pod: Pod, reason: str) -> Pod:
    """The same pod with a new status (as a PodScheduled=False write comes back), spec shared."""
    new = copy.copy(pod)
    new.status = copy.deepcopy(pod.status)
    new.status.phase = "Pending"
    new.metadata = copy.copy(pod.metadata)
    new.metadata.resource_version = reason
    return new


def test_a_wanted_pending_pod_is_queued_others_are_not() -> None:
    f = Followed()
    f.take()
    f.cluster.add(ours("mine"))
    f.cluster.add(make_pod("theirs").set("spec.schedulerName", "default-scheduler").obj())
    f.cluster.add(make_pod("bound").set("spec.schedulerName", OURS).node("n1").obj())
    f.cluster.add(make_pod("gone").set("spec.schedulerName", OURS).terminating().obj())
    assert "default/mine" in f.queue
    assert f.queue.where("default/mine") == "active"
    assert len(f.queue) == 1
    answers = f.take()
    # a new pending pod changes nothing for the others; a new bound pod takes room: it may help
    # (or not), so the queue is told
    assert (EventType.ADDED, "default/mine", False) in answers
    assert (EventType.ADDED, "default/theirs", False) in answers
    assert (EventType.BOUND, "default/bound", True) in answers


def test_binding_takes_the_pod_out_and_reports_a_change() -> None:
    f = Followed()
    f.cluster.add(ours("p"))
    f.take()
    f.cluster.bind("default/p", "n1")
    assert "default/p" not in f.queue
    assert f.take() == [(EventType.BOUND, "default/p", True)]


def test_a_bound_update_through_the_watch_takes_the_pod_out() -> None:
    f = Followed()
    pod = ours("p")
    f.cluster.add(pod)
    bound = copy.copy(pod)
    bound.spec = copy.copy(pod.spec)
    bound.spec.node_name = "n1"
    f.cluster.update(bound)
    assert "default/p" not in f.queue


def test_deletion_takes_the_pod_out_and_reports_no_change() -> None:
    """A pending pod (not nominated) that goes frees nothing: kube raises no queueing event
    for it (deletePodFromSchedulingQueue only deletes it from the queue)."""
    f = Followed()
    f.cluster.add(ours("p"))
    f.take()
    f.cluster.delete("Pod", "default/p")
    assert "default/p" not in f.queue
    assert f.take() == [(EventType.DELETED, "default/p", False)]


def test_a_bound_pods_deletion_reports_a_change() -> None:
    f = Followed()
    f.cluster.add(make_pod("b").set("spec.schedulerName", OURS).node("n1").obj())
    f.take()
    f.cluster.delete("Pod", "default/b")
    assert (EventType.UNBOUND, "default/b", True) in f.take()


def test_node_changes_are_reported() -> None:
    f = Followed()
    f.take()
    f.cluster.add(make_node("n2").label(ZONE, "b").obj())
    assert f.take() == [(EventType.ADDED, "n2", True)]


def test_a_status_only_update_leaves_an_unschedulable_pod_where_it_is() -> None:
    """Writing PodScheduled=False comes back through the watch with the same spec (the cache
    keeps the spec object): it must not wake the pod, or every FailedScheduling write would
    retry it."""
    f = Followed()
    pod = ours("p")
    f.cluster.add(pod)
    assert f.queue.pop() is not None
    f.queue.failed("default/p", f.now)
    f.take()
    f.cluster.update(with_status(pod, "2"))
    assert f.queue.where("default/p") == "unschedulable"
    assert f.take() == [(EventType.UPDATED, "default/p", False)]


def test_a_spec_or_label_update_gives_an_unschedulable_pod_another_chance() -> None:
    f = Followed()
    pod = ours("p")
    f.cluster.add(pod)
    assert f.queue.pop() is not None
    f.queue.failed("default/p", f.now)
    relabelled = ours("p")
    relabelled.metadata.labels["tier"] = "front"
    f.now += 100  # well past its backoff
    f.cluster.update(relabelled)
    assert f.queue.where("default/p") == "active"


def test_a_pending_pod_that_starts_terminating_leaves_the_queue() -> None:
    f = Followed()
    f.cluster.add(ours("p"))
    dying = make_pod("p").set("spec.schedulerName", OURS).label("app", "web").terminating().obj()
    f.cluster.update(dying)
    assert "default/p" not in f.queue


def test_errored_puts_the_pod_in_backoff_until_it_expires() -> None:
    q = SchedulingQueue()
    q.add(ours("p"), 0.0)
    assert q.pop() is not None
    q.errored("default/p", 5.0)
    assert q.where("default/p") == "backoff"
    q.flush_backoff_completed(5.0 + INITIAL_BACKOFF_SECONDS / 2)
    assert q.where("default/p") == "backoff"
    q.flush_backoff_completed(5.0 + INITIAL_BACKOFF_SECONDS)
    assert q.where("default/p") == "active"
    info = q.pop()
    assert info is not None and info.attempts == 1


def test_errored_ignores_a_pod_not_queued() -> None:
    q = SchedulingQueue()
    q.errored("default/nobody", 1.0)
    assert len(q) == 0


def test_unschedulable_leftovers_are_flushed_after_five_minutes() -> None:
    q = SchedulingQueue()
    q.add(ours("p"), 0.0)
    assert q.pop() is not None
    q.failed("default/p", 20.0)
    q.flush_unschedulable_leftovers(20.0 + MAX_UNSCHEDULABLE_SECONDS - 1)
    assert q.where("default/p") == "unschedulable"
    q.flush_unschedulable_leftovers(20.0 + MAX_UNSCHEDULABLE_SECONDS)
    assert q.where("default/p") == "active"
    assert MAX_UNSCHEDULABLE_SECONDS == 300.0


def test_a_cluster_change_moves_unschedulable_pods_to_backoff_first() -> None:
    q = SchedulingQueue()
    q.add(ours("p"), 0.0)
    assert q.pop() is not None
    q.failed("default/p", 20.0)
    waiting = q.move_all_to_active_or_backoff(20.5)
    assert [w.key for w in waiting] == ["default/p"]
    assert q.where("default/p") == "backoff"
