"""Queueing hints (kube v1.35): an unschedulable pod is moved only by the changes that a plugin
that rejected it says may help; the in-flight rule; the 5-minute flush; the ActionTypes of node
and pod updates. Each case runs the SchedulingLoop of the default profile on a ClusterState."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from builders import ZONE, NodeBuilder, PodBuilder, make_node, make_pod
from kubespread.api.core import Node, Pod
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.loop import SchedulingLoop
from kubespread.scheduler.queue import MAX_UNSCHEDULABLE_SECONDS, SchedulingQueue
from kubespread.scheduler.queueing import (
    QUEUE,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    node_update_actions,
    pod_update_actions,
)
from kubespread.scheduler.scheduler import Decision

LATER = 1000.0  # far past any backoff: a moved pod goes straight to active


class Binder:
    """Fails the test on a bind; on a FailedScheduling, runs ``during`` (a change made while
    the pod is still in flight) and then reports the failure to the loop."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.during: Callable[[], None] | None = None
        self.decision: Decision | None = None

    def bind(self, pod: Pod, decision: Decision) -> None:
        raise AssertionError(f"{pod.key} was bound to {decision.selected}")

    def unschedulable(self, pod: Pod, decision: Decision) -> None:
        self.decision = decision
        if self.during is not None:
            self.during()
        self.h.loop.failed(pod.key, self.h.now)


class Harness:
    def __init__(self, *nodes: NodeBuilder, bound: tuple[PodBuilder, ...] = ()) -> None:
        self.cluster = ClusterState()
        for n in nodes:
            self.cluster.add(n.obj())
        for p in bound:
            self.cluster.add(p.obj())
        self.loop = SchedulingLoop({DEFAULT_SCHEDULER_NAME: default_profile()})
        self.now = 100.0
        self.cluster.subscribe(lambda ev: self.loop.follow(ev, self.now))
        self.loop.add_pending(self.cluster, self.now)
        self.binder = Binder(self)

    def fail(self, pod: PodBuilder, during: Callable[[], None] | None = None) -> str:
        """Add a pending pod and make its attempt, which must find no node."""
        p = pod.obj()
        self.cluster.add(p)
        self.binder.during = during
        assert self.loop.schedule_next(self.cluster, self.binder)
        assert self.binder.decision is not None and self.binder.decision.selected is None
        self.now += LATER
        return p.key

    def where(self, key: str) -> str:
        return self.loop.queue.where(key)

    def rejectors(self, key: str) -> frozenset[str]:
        info = self.loop.queue.info(key)
        assert info is not None
        return info.unschedulable_plugins

    def node(self, name: str) -> Node:
        return self.cluster.nodes[name]

    def update_node(self, name: str, change: Callable[[Node], None]) -> None:
        node = copy.deepcopy(self.node(name))
        change(node)
        self.cluster.update(node)


def cordon(node: Node) -> None:
    node.spec.unschedulable = True


def labelled(key: str, value: str) -> Callable[[Node], None]:
    def change(node: Node) -> None:
        node.metadata.labels[key] = value

    return change


def web(name: str, node: str = "") -> PodBuilder:
    b = make_pod(name).label("app", "web")
    return b.node(node) if node else b


# --------------------------------------------------------------------------- NodeAffinity
def test_node_affinity_rejection_ignores_a_cordon_and_taints_and_unmatched_nodes() -> None:
    h = Harness(make_node("n1"), make_node("n2"))
    key = h.fail(make_pod("p").node_selector(disk="ssd"))
    assert h.rejectors(key) == {"NodeAffinity"}
    assert h.where(key) == "unschedulable"
    h.update_node("n2", cordon)
    h.update_node("n1", lambda n: n.spec.taints.clear())
    h.update_node("n1", labelled("disk", "hdd"))
    h.cluster.add(make_node("n3").label("disk", "hdd").obj())
    assert h.where(key) == "unschedulable"
    assert not h.loop.changed


def test_node_affinity_rejection_is_retried_when_a_node_gets_the_label() -> None:
    h = Harness(make_node("n1"))
    key = h.fail(make_pod("p").node_selector(disk="ssd"))
    h.update_node("n1", labelled("disk", "ssd"))
    assert h.where(key) == "active"
    assert h.loop.changed


def test_node_affinity_rejection_is_retried_when_a_matching_node_is_added() -> None:
    h = Harness(make_node("n1"))
    key = h.fail(make_pod("p").node_selector(disk="ssd"))
    h.cluster.add(make_node("n2").label("disk", "ssd").obj())
    assert h.where(key) == "active"


# --------------------------------------------------------------------------- taints, cordons
def test_taint_rejection_waits_for_the_taint_to_go() -> None:
    h = Harness(make_node("n1").taint("dedicated", "db"))
    key = h.fail(make_pod("p"))
    assert h.rejectors(key) == {"TaintToleration"}
    h.update_node("n1", labelled("x", "y"))
    h.cluster.add(make_node("n2").taint("other").obj())
    assert h.where(key) == "unschedulable"
    h.update_node("n1", lambda n: n.spec.taints.clear())
    assert h.where(key) == "active"


def test_a_cordoned_node_rejection_is_retried_on_uncordon_only() -> None:
    h = Harness(make_node("n1").unschedulable(), make_node("n2").unschedulable())
    key = h.fail(make_pod("p"))
    assert h.rejectors(key) == {"NodeUnschedulable"}
    h.update_node("n1", labelled("x", "y"))
    assert h.where(key) == "unschedulable"
    h.update_node("n2", lambda n: setattr(n.spec, "unschedulable", False))
    assert h.where(key) == "active"


# --------------------------------------------------------------------------- resources, ports
def big_bound() -> PodBuilder:
    return make_pod("big").req(cpu="3").node("n1")


def test_resources_rejection_is_retried_when_a_bound_pod_goes() -> None:
    h = Harness(make_node("n1"), bound=(big_bound(), make_pod("tiny").node("n1")))
    key = h.fail(make_pod("p").req(cpu="2"))
    assert h.rejectors(key) == {"NodeResourcesFit"}
    h.cluster.add(make_node("small").capacity(cpu="1").obj())  # too small even empty
    h.update_node("n1", labelled("x", "y"))
    assert h.where(key) == "unschedulable"
    h.cluster.delete("Pod", "default/tiny")  # any bound pod's deletion: kube queues
    assert h.where(key) == "active"


def test_resources_rejection_is_retried_when_allocatable_grows() -> None:
    h = Harness(make_node("n1"), bound=(big_bound(),))
    key = h.fail(make_pod("p").req(cpu="2"))
    h.update_node(
        "n1", lambda n: n.status.allocatable.__setitem__("memory", copy.copy(n.status.allocatable["cpu"]))
    )
    assert h.where(key) == "unschedulable"  # memory shrank: nothing the pod needs grew
    h.update_node(
        "n1", lambda n: n.status.allocatable.__setitem__("cpu", copy.copy(n.status.allocatable["pods"]))
    )
    assert h.where(key) == "active"


def test_host_port_rejection_is_retried_when_the_holder_goes() -> None:
    h = Harness(
        make_node("n1"),
        bound=(make_pod("holder").host_port(80).node("n1"), make_pod("other").host_port(81).node("n1")),
    )
    key = h.fail(make_pod("p").host_port(80))
    assert h.rejectors(key) == {"NodePorts"}
    h.cluster.delete("Pod", "default/other")
    assert h.where(key) == "unschedulable"
    h.cluster.delete("Pod", "default/holder")
    assert h.where(key) == "active"


# --------------------------------------------------------------------------- spread, affinity
def spread_pod() -> PodBuilder:
    return web("p").spread(1, ZONE, selector={"matchLabels": {"app": "web"}})


def test_spread_rejection_moves_for_matching_bound_pods_of_its_namespace_only() -> None:
    h = Harness(make_node("n1"))  # no zone label: PodTopologySpread rejects it
    key = h.fail(spread_pod())
    assert h.rejectors(key) == {"PodTopologySpread"}
    h.cluster.add(make_pod("db").label("app", "db").node("n1").obj())
    h.cluster.add(make_pod("w", namespace="other").label("app", "web").node("n1").obj())
    h.cluster.add(web("pending-web").obj())  # not bound: not counted
    h.cluster.delete("Pod", "default/db")
    assert h.where(key) == "unschedulable"
    h.cluster.add(web("w1", node="n1").obj())
    assert h.where(key) == "active"


def test_spread_rejection_moves_when_a_matching_pod_is_deleted() -> None:
    h = Harness(make_node("n1"), bound=(web("w1", node="n1"), make_pod("db").label("app", "db").node("n1")))
    key = h.fail(spread_pod())
    h.cluster.delete("Pod", "default/db")
    assert h.where(key) == "unschedulable"
    h.cluster.delete("Pod", "default/w1")
    assert h.where(key) == "active"


def test_spread_rejection_moves_when_a_node_gets_the_topology_key() -> None:
    h = Harness(make_node("n1"))
    key = h.fail(spread_pod())
    h.update_node("n1", labelled("unrelated", "x"))
    assert h.where(key) == "unschedulable"
    h.update_node("n1", labelled(ZONE, "a"))
    assert h.where(key) == "active"


def test_anti_affinity_rejection_moves_only_when_a_matching_pod_goes() -> None:
    h = Harness(
        make_node("n1"),
        bound=(
            make_pod("db").label("app", "db").node("n1"),
            make_pod("cache").label("app", "cache").node("n1"),
        ),
    )
    key = h.fail(
        make_pod("p").pod_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "db"}}, anti=True)
    )
    assert h.rejectors(key) == {"InterPodAffinity"}
    h.cluster.delete("Pod", "default/cache")
    assert h.where(key) == "unschedulable"
    h.cluster.delete("Pod", "default/db")
    assert h.where(key) == "active"


def test_affinity_rejection_moves_when_a_matching_pod_is_bound() -> None:
    h = Harness(make_node("n1").zone("a"))
    key = h.fail(make_pod("p").pod_affinity(ZONE, {"matchLabels": {"app": "cache"}}))
    assert h.rejectors(key) == {"InterPodAffinity"}
    h.cluster.add(make_pod("other").label("app", "other").node("n1").obj())
    assert h.where(key) == "unschedulable"
    h.cluster.add(make_pod("cache").label("app", "cache").node("n1").obj())
    assert h.where(key) == "active"


# --------------------------------------------------------------------------- the queue's rules
def test_a_helpful_change_during_the_attempt_sends_the_pod_to_backoff() -> None:
    """kube's in-flight events: the cycle read the cluster before the change, so the pod does
    not wait in the unschedulable pool for another one."""
    h = Harness(make_node("n1"))
    key = h.fail(
        make_pod("p").node_selector(disk="ssd"), during=lambda: h.update_node("n1", labelled("disk", "ssd"))
    )
    assert h.where(key) == "backoff"
    moved = h.loop.move_if_changed(h.now)  # handed to the host, to wake it when its backoff ends
    assert moved is not None and [i.key for i in moved] == [key]
    h.loop.queue.flush_backoff_completed(h.now)
    assert h.where(key) == "active"


def test_an_unrelated_change_during_the_attempt_leaves_the_pod_unschedulable() -> None:
    h = Harness(make_node("n1"), make_node("n2"))
    key = h.fail(make_pod("p").node_selector(disk="ssd"), during=lambda: h.update_node("n2", cordon))
    assert h.where(key) == "unschedulable"


def test_the_five_minute_flush_moves_a_pod_no_change_helped() -> None:
    h = Harness(make_node("n1"))
    key = h.fail(make_pod("p").node_selector(disk="ssd"))
    info = h.loop.queue.info(key)
    assert info is not None
    h.update_node("n1", cordon)
    h.loop.queue.flush_unschedulable_leftover(key, info.unschedulable_since + MAX_UNSCHEDULABLE_SECONDS - 1)
    assert h.where(key) == "unschedulable"
    h.loop.queue.flush_unschedulable_leftover(key, info.unschedulable_since + MAX_UNSCHEDULABLE_SECONDS)
    assert h.where(key) in ("active", "backoff")


def test_a_pod_rejected_by_no_recorded_plugin_moves_on_any_change() -> None:
    q = SchedulingQueue(registrations=lambda pod: {})
    q.add(make_pod("p").obj(), 0.0)
    assert q.pop() is not None
    q.failed("default/p", 0.0)
    event = QueueingEvent(EventKind(EventResource.NODE, ActionType.UPDATE_NODE_ANNOTATION))
    assert [i.key for i in q.on_event(event, LATER)] == ["default/p"]


def test_a_rejector_without_a_matching_registration_is_not_moved_and_a_pending_one_skips_backoff() -> None:
    regs = {
        "Quiet": [],
        "Waiter": [EventRegistration(EventKind(EventResource.NODE, ActionType.ADD), lambda pod, ev: QUEUE)],
    }
    q = SchedulingQueue(registrations=lambda pod: regs)
    q.add(make_pod("p").obj(), 0.0)
    assert q.pop() is not None
    q.record_rejection("default/p", ["Quiet"], ["Waiter"])
    q.failed("default/p", 0.0)
    q.on_event(QueueingEvent(EventKind(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)), 0.1)
    assert q.where("default/p") == "unschedulable"
    q.on_event(QueueingEvent(EventKind(EventResource.NODE, ActionType.ADD), None, make_node("n").obj()), 0.1)
    assert q.where("default/p") == "active"  # backoff (1 s) not over, but a pending plugin said Queue


# --------------------------------------------------------------------------- ActionTypes
@pytest.mark.parametrize(
    ("change", "actions"),
    [
        (cordon, []),
        (labelled("disk", "ssd"), [ActionType.UPDATE_NODE_LABEL]),
        (
            lambda n: n.status.allocatable.__setitem__("pods", n.status.allocatable["cpu"]),
            [ActionType.UPDATE_NODE_ALLOCATABLE],
        ),
        (lambda n: n.metadata.annotations.__setitem__("a", "b"), [ActionType.UPDATE_NODE_ANNOTATION]),
    ],
)
def test_node_update_actions(change: Callable[[Node], None], actions: list[ActionType]) -> None:
    old = make_node("n1").obj()
    new = copy.deepcopy(old)
    change(new)
    assert node_update_actions(old, new) == actions


def test_an_uncordon_is_a_taint_update() -> None:
    old = make_node("n1").unschedulable().obj()
    assert node_update_actions(old, make_node("n1").obj()) == [ActionType.UPDATE_NODE_TAINT]


def test_pod_update_actions() -> None:
    old = make_pod("p").obj()
    assert pod_update_actions(old, copy.deepcopy(old)) == [ActionType.UPDATE_POD_OTHER]
    assert pod_update_actions(old, make_pod("p").label("a", "b").obj()) == [ActionType.UPDATE_POD_LABEL]
    assert pod_update_actions(old, make_pod("p").toleration("k").obj()) == [ActionType.UPDATE_POD_TOLERATION]
    gated = make_pod("p").set("spec.schedulingGates", [{"name": "g"}]).obj()
    assert pod_update_actions(gated, old) == [ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]
    assert pod_update_actions(make_pod("p").req(cpu="2").obj(), make_pod("p").req(cpu="1").obj()) == [
        ActionType.UPDATE_POD_SCALE_DOWN
    ]


def test_a_pre_filter_result_rejection_counts_the_narrowing_plugin() -> None:
    """A PreFilterResult that leaves every node out names its plugin only in the message: the
    plugin is still recorded, and its hint waits for the named node."""
    h = Harness(make_node("n1"))
    by_name = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}]
    }
    key = h.fail(
        make_pod("p").affinity("nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", by_name)
    )
    assert h.rejectors(key) == {"NodeAffinity"}
    h.cluster.add(make_node("n2").obj())
    assert h.where(key) == "unschedulable"
    h.cluster.add(make_node("n9").obj())
    assert h.where(key) == "active"
