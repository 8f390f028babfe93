"""The engine's parts on their own: the in-memory API server, the kubelets, and the one
scheduling loop (binder protocol) that the simulation and the live scheduler share."""

from __future__ import annotations

import pytest

from builders import ZONE, make_node, make_pod
from kubespread.admission.framework import Rejection
from kubespread.api.core import Pod
from kubespread.cluster.errors import Conflict
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.loop import SchedulingLoop
from kubespread.scheduler.scheduler import Decision
from kubespread.sim.apiserver import ApiServer
from kubespread.sim.clock import Clock
from kubespread.sim.engine import Simulation
from kubespread.sim.kubelet import Kubelets


def _api_with_kubelets() -> tuple[ApiServer, Kubelets, Clock, list[tuple[str, str]]]:
    cluster = ClusterState()
    cluster.add(make_node("n1").label(ZONE, "a").obj())
    clock = Clock()
    api = ApiServer(cluster, now=lambda: clock.now, seed=1)
    recorded: list[tuple[str, str]] = []
    kubelets = Kubelets(
        cluster, clock, remove=api.remove_pod, record=lambda p, r, m: recorded.append((p.key, r))
    )
    api.killer = kubelets
    return api, kubelets, clock, recorded


def test_api_server_stamps_every_write_with_a_new_resource_version_and_refuses_stale_ones() -> None:
    api, _, _, _ = _api_with_kubelets()
    created = api.create(make_pod("p").obj())
    assert isinstance(created, Pod)
    first = created.metadata.resource_version
    assert created.metadata.uid and created.metadata.creation_timestamp
    stale = api.cluster.pods["default/p"]
    fresh = Pod.from_dict(stale.to_dict())
    fresh.metadata.labels["v"] = "2"
    api.update(fresh, precondition=True)
    assert int(api.cluster.pods["default/p"].metadata.resource_version) > int(first)
    with pytest.raises(Conflict):
        api.update(Pod.from_dict(stale.to_dict()), precondition=True)


def test_api_server_refuses_a_duplicate_and_generates_unique_names() -> None:
    api, _, _, _ = _api_with_kubelets()
    assert isinstance(api.create(make_pod("p").obj()), Pod)
    again = api.create(make_pod("p").obj())
    assert isinstance(again, Rejection) and again.code == 409
    names = {api.generate_name("web-") for _ in range(50)}
    assert len(names) == 50 and all(n.startswith("web-") and len(n) == 9 for n in names)


def test_graceful_delete_waits_for_the_kubelet_and_an_unreachable_node_keeps_the_pod() -> None:
    api, kubelets, clock, recorded = _api_with_kubelets()
    api.create(make_pod("a").node("n1").obj())
    api.create(make_pod("b").node("n1").obj())
    api.delete_pod("default/a", grace_seconds=5)
    assert api.cluster.pods["default/a"].is_terminating
    assert ("default/a", "Killing") in recorded
    clock.step()
    assert clock.now == 5 and "default/a" not in api.cluster.pods
    kubelets.set_reachable("n1", False)
    api.delete_pod("default/b", grace_seconds=5)
    assert clock.peek() is None  # nothing on the node can confirm the kill
    assert api.cluster.pods["default/b"].is_terminating
    kubelets.set_reachable("n1", True)
    kubelets.finish_terminations("n1")
    assert "default/b" not in api.cluster.pods


class _Recorder:
    """A binder that only remembers what the loop handed it."""

    def __init__(self) -> None:
        self.bound: list[tuple[str, str]] = []
        self.failed: list[str] = []

    def bind(self, pod: Pod, decision: Decision) -> None:
        assert decision.selected is not None
        self.bound.append((pod.key, decision.selected))

    def unschedulable(self, pod: Pod, decision: Decision) -> None:
        self.failed.append(pod.key)


def test_the_loop_hands_decisions_to_its_binder_and_skips_pods_of_other_schedulers() -> None:
    cluster = ClusterState()
    cluster.add(make_node("n1").obj())
    cluster.add(make_pod("small").req(cpu="100m").obj())
    cluster.add(make_pod("huge").req(cpu="1000").obj())
    other = make_pod("other").obj()
    other.spec.scheduler_name = "someone-else"
    cluster.add(other)
    loop = SchedulingLoop({"default-scheduler": default_profile()}, seed=0)
    loop.add_pending(cluster, 0.0)
    binder = _Recorder()
    while loop.schedule_next(cluster, binder):
        pass
    assert binder.bound == [("default/small", "n1")]
    assert binder.failed == ["default/huge"]
    assert "default/other" not in loop.queue


def test_simulation_places_like_the_loop_it_is_built_on() -> None:
    """The simulation is the loop's binder: same seed, same pods, same nodes."""
    nodes = [make_node(f"n{i}").label(ZONE, "abc"[i % 3]).obj() for i in range(6)]
    pods = [make_pod(f"p{i}").label("app", "w").spread(1, ZONE).obj() for i in range(9)]
    cluster = ClusterState()
    for n in nodes:
        cluster.add(n)
    for p in pods:
        cluster.add(Pod.from_dict(p.to_dict()))
    loop = SchedulingLoop({"default-scheduler": default_profile()}, seed=7)
    loop.add_pending(cluster, 0.0)
    binder = _Recorder()
    while True:
        popped = loop.schedule_next(cluster, binder)
        if not popped:
            break
        key, node = binder.bound[-1]
        bound = Pod.from_dict(cluster.pods[key].to_dict())
        bound.spec.node_name = node
        cluster.update_pod(bound)
    sim_cluster = ClusterState()
    for n in nodes:
        sim_cluster.add(n)
    for p in pods:
        sim_cluster.add(Pod.from_dict(p.to_dict()))
    sim = Simulation(sim_cluster, seed=7, controllers=[])
    sim.run_until_quiet()
    assert {k: p.spec.node_name for k, p in sim.cluster.pods.items()} == dict(binder.bound)
