"""NodeLifecycleController: cordon/uncordon, drain, failure and the NoExecute taint manager,
recovery, node removal and arrival, user-applied NoExecute taints."""

from __future__ import annotations

import copy
from typing import Any

from builders import cluster_of, make_node, make_pod
from kubespread.api.core import Node, NodeCondition, Pod
from kubespread.api.keys import TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE
from kubespread.api.taints import Taint
from kubespread.api.timestamps import timestamp
from kubespread.controllers.nodelifecycle import NodeLifecycleController
from kubespread.sim.engine import Simulation

UNREACHABLE_60 = {
    "key": TAINT_UNREACHABLE,
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 60,
}


def sim_of(nodes: list[Any], pods: list[Any] = ()) -> tuple[Simulation, NodeLifecycleController]:  # type: ignore[assignment]
    ctrl = NodeLifecycleController()
    sim = Simulation(cluster_of(nodes, list(pods)), controllers=[ctrl])
    sim.run_until_quiet()
    return sim, ctrl


def create(sim: Simulation, builder: Any) -> None:
    """Create a pod through admission; a refusal fails the test rather than passing unseen."""
    assert isinstance(sim.create(builder.obj()), Pod)


def events(sim: Simulation, reason: str) -> list[tuple[float, str, str]]:
    return [(e.time, e.name, e.message) for e in sim.events if e.reason == reason]


def taints(sim: Simulation, node: str) -> list[tuple[str, str]]:
    return [(t.key, t.effect) for t in sim.cluster.nodes[node].spec.taints]


def terminating(sim: Simulation, key: str) -> bool:
    return sim.cluster.pods[key].is_terminating


def condition(sim: Simulation, key: str, type_: str) -> Any:
    return next((c for c in sim.cluster.pods[key].status.conditions if c.type == type_), None)


def with_taints(node: Node, *taints: Taint) -> Node:
    new = copy.copy(node)
    new.spec = copy.copy(node.spec)
    new.spec.taints = list(taints)
    return new


# ---------------------------------------------------------------------------------------- cordon
def test_cordon_keeps_new_pods_off_and_uncordon_lets_them_back() -> None:
    sim, ctrl = sim_of([make_node("n1")], [make_pod("old").node("n1")])
    ctrl.cordon("n1")
    node = sim.cluster.nodes["n1"]
    assert node.spec.unschedulable
    assert taints(sim, "n1") == [(TAINT_UNSCHEDULABLE, "NoSchedule")]
    assert node.spec.taints[0].time_added == timestamp(sim.now)
    assert events(sim, "NodeNotSchedulable") == [(0.0, "n1", "Node n1 status is now: NodeNotSchedulable")]
    create(sim, make_pod("new"))
    sim.run_until_quiet()
    assert sim.cluster.pods["default/new"].spec.node_name == ""
    assert sim.pending_reasons["default/new"] == (
        "0/1 nodes are available: 1 node(s) were unschedulable. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert not terminating(sim, "default/old")  # cordon moves nothing

    ctrl.uncordon("n1")
    assert not sim.cluster.nodes["n1"].spec.unschedulable
    assert taints(sim, "n1") == []
    sim.run_until_quiet()
    assert sim.cluster.pods["default/new"].spec.node_name == "n1"


def test_unschedulable_set_by_a_user_gets_and_loses_the_taint() -> None:
    sim, _ = sim_of([make_node("n1")])
    cordoned = copy.copy(sim.cluster.nodes["n1"])
    cordoned.spec = copy.copy(cordoned.spec)
    cordoned.spec.unschedulable = True
    sim.update(cordoned)
    sim.run_until_quiet()
    assert taints(sim, "n1") == [(TAINT_UNSCHEDULABLE, "NoSchedule")]
    uncordoned = copy.copy(sim.cluster.nodes["n1"])
    uncordoned.spec = copy.copy(uncordoned.spec)
    uncordoned.spec.unschedulable = False
    sim.update(uncordoned)
    sim.run_until_quiet()
    assert taints(sim, "n1") == []


def test_start_brings_existing_taints_in_line_with_node_state() -> None:
    a = make_node("a").taint(TAINT_NOT_READY).taint("dedicated", "x").obj()
    a.status.conditions = [NodeCondition(type="Ready", status="True")]
    b = make_node("b").unschedulable().obj()
    c = make_node("c").obj()
    c.status.conditions = [NodeCondition(type="Ready", status="False")]
    sim, _ = sim_of([a, b, c])
    assert taints(sim, "a") == [("dedicated", "NoSchedule")]
    assert taints(sim, "b") == [(TAINT_UNSCHEDULABLE, "NoSchedule")]
    assert taints(sim, "c") == [(TAINT_NOT_READY, "NoSchedule"), (TAINT_NOT_READY, "NoExecute")]
    assert events(sim, "NodeNotSchedulable") == []  # the state at start is no transition


# ---------------------------------------------------------------------------------------- drain
def owned(builder: Any, kind: str) -> Any:
    ref = {"apiVersion": "apps/v1", "kind": kind, "name": "owner", "uid": f"uid-{kind}", "controller": True}
    return builder.set("metadata.ownerReferences", [ref])


def test_drain_evicts_all_but_daemonset_mirror_and_finished_pods() -> None:
    pods = [
        make_pod("web").node("n1").set("spec.terminationGracePeriodSeconds", 10),
        owned(make_pod("rs-pod").node("n1"), "ReplicaSet"),
        owned(make_pod("ds-pod").node("n1"), "DaemonSet"),
        make_pod("mirror").node("n1").set("metadata.annotations", {"kubernetes.io/config.mirror": "x"}),
        make_pod("done").node("n1").phase("Succeeded"),
        make_pod("elsewhere").node("n2"),
    ]
    sim, ctrl = sim_of([make_node("n1"), make_node("n2")], pods)
    assert ctrl.drain("n1") == ["default/rs-pod", "default/web"]
    assert sim.cluster.nodes["n1"].spec.unschedulable
    assert events(sim, "EvictionByEvictionAPI") == [
        (0.0, "rs-pod", "evicting pod default/rs-pod"),
        (0.0, "web", "evicting pod default/web"),
    ]
    assert [e.type for e in sim.events if e.reason == "EvictionByEvictionAPI"] == ["Warning", "Warning"]
    assert terminating(sim, "default/web") and terminating(sim, "default/rs-pod")
    assert condition(sim, "default/web", "DisruptionTarget").reason == "EvictionByEvictionAPI"
    sim.advance(9)
    assert "default/web" in sim.cluster.pods
    sim.advance(1)
    assert "default/web" not in sim.cluster.pods  # its own 10 s grace period
    assert "default/rs-pod" in sim.cluster.pods  # the default 30 s
    sim.advance(20)
    assert sorted(sim.cluster.pods) == [
        "default/done",
        "default/ds-pod",
        "default/elsewhere",
        "default/mirror",
    ]
    assert not any(terminating(sim, k) for k in sim.cluster.pods)


# ---------------------------------------------------------------------------------------- fail
def test_fail_evicts_a_pod_with_the_default_tolerations_at_exactly_300s() -> None:
    sim, ctrl = sim_of([make_node("n1"), make_node("n2")])
    create(sim, make_pod("p").node_selector(**{"kubernetes.io/hostname": "n1"}))
    sim.run_until_quiet()
    pod = sim.cluster.pods["default/p"]
    assert pod.spec.node_name == "n1"
    assert [(t.key, t.toleration_seconds) for t in pod.spec.tolerations] == [
        (TAINT_NOT_READY, 300),
        (TAINT_UNREACHABLE, 300),
    ]  # DefaultTolerationSeconds admission
    t0 = sim.now
    ctrl.fail("n1")
    node = sim.cluster.nodes["n1"]
    ready = next(c for c in node.status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("Unknown", "NodeStatusUnknown")
    assert taints(sim, "n1") == [(TAINT_UNREACHABLE, "NoSchedule"), (TAINT_UNREACHABLE, "NoExecute")]
    assert all(t.time_added == timestamp(t0) for t in node.spec.taints)
    assert "n1" in sim.unreachable
    assert condition(sim, "default/p", "Ready").status == "False"
    assert events(sim, "NodeNotReady") == [
        (t0, "n1", "Node n1 status is now: NodeNotReady"),
        (t0, "p", "Node is not ready"),
    ]
    assert ctrl.pending_evictions() == {"default/p": t0 + 300}

    sim.advance(299)
    assert not terminating(sim, "default/p")
    assert events(sim, "TaintManagerEviction") == []
    sim.advance(1)
    assert events(sim, "TaintManagerEviction") == [(t0 + 300, "p", "Marking for deletion Pod default/p")]
    assert [e.type for e in sim.events if e.reason == "TaintManagerEviction"] == ["Normal"]
    assert terminating(sim, "default/p")
    assert condition(sim, "default/p", "DisruptionTarget").reason == "DeletionByTaintManager"
    sim.advance(3600)  # nothing on the node confirms the kill
    assert terminating(sim, "default/p")
    ctrl.recover("n1")
    assert "default/p" not in sim.cluster.pods


def test_fail_evicts_untolerating_pods_at_once_and_honours_toleration_seconds() -> None:
    bare = [make_pod(n).node("n1") for n in ("c", "a", "b")]  # not admitted: no tolerations at all
    sim, ctrl = sim_of([make_node("n1")], bare)
    create(sim, make_pod("p60").node("n1").set("spec.tolerations", [UNREACHABLE_60]))
    create(sim, make_pod("forever").node("n1").set("spec.tolerations", [{"operator": "Exists"}]))
    first = {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}
    broad = {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
    create(sim, make_pod("first").node("n1").set("spec.tolerations", [first, broad]))
    t0 = sim.now
    ctrl.fail("n1")
    assert [m for _, _, m in events(sim, "TaintManagerEviction")] == [
        "Marking for deletion Pod default/a",
        "Marking for deletion Pod default/b",
        "Marking for deletion Pod default/c",
    ]
    assert all(terminating(sim, f"default/{n}") for n in "abc")
    # each taint takes the first toleration matching it, as the taint manager does
    assert ctrl.pending_evictions() == {"default/first": t0 + 600, "default/p60": t0 + 60}
    sim.advance(59)
    assert not terminating(sim, "default/p60")
    sim.advance(1)
    assert terminating(sim, "default/p60")
    sim.advance(10_000)
    assert terminating(sim, "default/first")
    assert not terminating(sim, "default/forever")
    assert "default/forever" not in ctrl.pending_evictions()


def test_pods_deleted_on_an_unreachable_node_stay_terminating_until_recover() -> None:
    # a DaemonSet pod tolerates unreachable forever (the DaemonSet controller's toleration)
    ds = owned(make_pod("ds").node("n1"), "DaemonSet").toleration(TAINT_UNREACHABLE, operator="Exists")
    sim, ctrl = sim_of(
        [make_node("n1")], [make_pod("a").node("n1").set("spec.tolerations", [UNREACHABLE_60]), ds]
    )
    ctrl.fail("n1")
    assert ctrl.drain("n1") == ["default/a"]  # before its 60 s are up
    assert ctrl.pending_evictions() == {"default/a": 60.0}
    sim.advance(1000)
    assert terminating(sim, "default/a")
    assert events(sim, "TaintManagerEviction") == []  # the pod was already going: no second deletion
    assert sim.cluster.nodes["n1"].spec.unschedulable
    ctrl.recover("n1")
    assert "default/a" not in sim.cluster.pods
    assert not terminating(sim, "default/ds")
    assert sim.cluster.nodes["n1"].spec.unschedulable  # recovery does not uncordon


def test_recover_before_300s_cancels_the_evictions() -> None:
    sim, ctrl = sim_of([make_node("n1")])
    create(sim, make_pod("p"))
    sim.run_until_quiet()
    t0 = sim.now
    ctrl.fail("n1")
    sim.advance(120)
    ctrl.recover("n1")
    node = sim.cluster.nodes["n1"]
    assert taints(sim, "n1") == []
    assert [(c.type, c.status) for c in node.status.conditions] == [("Ready", "True")]
    assert "n1" not in sim.unreachable
    assert ctrl.pending_evictions() == {}
    assert events(sim, "TaintManagerEviction") == [(t0 + 120, "p", "Cancelling deletion of Pod default/p")]
    assert events(sim, "NodeReady") == [(t0 + 120, "n1", "Node n1 status is now: NodeReady")]
    sim.advance(600)
    assert not terminating(sim, "default/p")
    assert condition(sim, "default/p", "Ready").status == "True"


# ---------------------------------------------------------------------------------------- delete/add
def test_delete_removes_the_node_and_its_pods() -> None:
    sim, ctrl = sim_of(
        [make_node("n1"), make_node("n2")], [make_pod("a").node("n1"), make_pod("b").node("n2")]
    )
    create(sim, make_pod("p").node("n1"))  # default tolerations: eviction pending after fail
    ctrl.fail("n1")
    assert terminating(sim, "default/a")
    ctrl.delete("n1")
    assert "n1" not in sim.cluster.nodes
    assert sorted(sim.cluster.pods) == ["default/b"]
    assert "n1" not in sim.unreachable
    sim.run_until_quiet()
    assert ctrl.pending_evictions() == {}
    assert events(sim, "TaintManagerEviction")[-1][2] == "Cancelling deletion of Pod default/p"
    assert events(sim, "RemovingNode") == [(0.0, "n1", "Node n1 event: Removing Node n1 from Controller")]


def test_added_node_is_made_schedulable() -> None:
    full = make_node("n1").capacity(cpu="1")
    sim, ctrl = sim_of([full], [make_pod("big").req(cpu="1").node("n1")])
    create(sim, make_pod("p").req(cpu="1"))
    sim.run_until_quiet()
    assert sim.cluster.pods["default/p"].spec.node_name == ""

    without = Simulation(cluster_of([]), controllers=[])
    without.create(make_node("n2").obj())
    assert taints(without, "n2") == [(TAINT_NOT_READY, "NoSchedule")]  # admission's, which we lift

    added = ctrl.add(make_node("n2").obj())
    assert isinstance(added, Node)
    assert added.spec.taints == []
    assert events(sim, "RegisteredNode") == [
        (sim.now, "n2", "Node n2 event: Registered Node n2 in Controller")
    ]
    sim.run_until_quiet()
    assert sim.cluster.pods["default/p"].spec.node_name == "n2"


def test_added_node_that_is_not_ready_stays_tainted() -> None:
    sim, ctrl = sim_of([make_node("n1")])
    node = make_node("n2").obj()
    node.status.conditions = [NodeCondition(type="Ready", status="False")]
    ctrl.add(node)
    assert taints(sim, "n2") == [(TAINT_NOT_READY, "NoSchedule"), (TAINT_NOT_READY, "NoExecute")]
    create(sim, make_pod("p"))
    sim.run_until_quiet()
    assert sim.cluster.pods["default/p"].spec.node_name == "n1"


# ---------------------------------------------------------------------------------------- user taints
def test_a_users_noexecute_taint_evicts_and_its_removal_cancels() -> None:
    tolerating = {"key": "dedicated", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 100}
    pods = [make_pod("a").node("n1"), make_pod("b").node("n1").set("spec.tolerations", [tolerating])]
    sim, ctrl = sim_of([make_node("n1")], pods)
    sim.update(with_taints(sim.cluster.nodes["n1"], Taint(key="dedicated", value="x", effect="NoExecute")))
    sim.run_until_quiet()  # "a" evicted at once, gone after its 30 s (the kubelet is alive)
    assert "default/a" not in sim.cluster.pods
    due = ctrl.pending_evictions()["default/b"]
    sim.update(with_taints(sim.cluster.nodes["n1"]))
    sim.run_until_quiet()
    assert ctrl.pending_evictions() == {}
    assert events(sim, "TaintManagerEviction")[-1][2] == "Cancelling deletion of Pod default/b"
    sim.advance(due + 100 - sim.now)
    assert not terminating(sim, "default/b")


def test_a_pod_arriving_on_a_tainted_node_gets_its_full_toleration() -> None:
    sim, ctrl = sim_of([make_node("n1")])
    sim.update(with_taints(sim.cluster.nodes["n1"], Taint(key="maint", effect="NoExecute")))
    sim.run_until_quiet()
    sim.advance(100)
    tol = {"key": "maint", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 50}
    create(sim, make_pod("p").node("n1").set("spec.tolerations", [tol]))
    sim.run_until_quiet()
    assert ctrl.pending_evictions() == {"default/p": 150.0}  # from when it was seen, as kube counts


def test_tolerating_forever_after_an_update_cancels_the_pending_eviction() -> None:
    sim, ctrl = sim_of([make_node("n1")])
    create(sim, make_pod("p").node("n1"))
    ctrl.fail("n1")
    assert "default/p" in ctrl.pending_evictions()
    pod = copy.copy(sim.cluster.pods["default/p"])
    pod.spec = copy.copy(pod.spec)
    pod.spec.tolerations = make_pod("x").toleration(operator="Exists").obj().spec.tolerations
    sim.update(pod)
    sim.run_until_quiet()
    assert ctrl.pending_evictions() == {}
    sim.advance(1000)
    assert not terminating(sim, "default/p")


def test_a_pending_eviction_is_not_brought_forward_by_a_later_taint() -> None:
    # processPodOnNode keeps an eviction scheduled earlier rather than rescheduling it
    tol = {"key": "maint", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    sim, ctrl = sim_of([make_node("n1")])
    create(sim, make_pod("p").node("n1").set("spec.tolerations", [tol]))
    ctrl.fail("n1")
    assert ctrl.pending_evictions() == {"default/p": 300.0}  # the default unreachable toleration
    sim.advance(100)
    node = sim.cluster.nodes["n1"]
    sim.update(with_taints(node, *node.spec.taints, Taint(key="maint", effect="NoExecute")))
    sim.run_until_quiet()
    assert ctrl.pending_evictions() == {"default/p": 300.0}
    sim.advance(199)
    assert not terminating(sim, "default/p")
    sim.advance(1)
    assert terminating(sim, "default/p")
