"""The engine: admission on create, the queue with backoff and retries, graceful deletion,
determinism."""

from __future__ import annotations

import copy

from builders import HOSTNAME, cluster_of, make_node, make_pod
from kubespread.admission.framework import Rejection
from kubespread.sim.clock import Clock
from kubespread.sim.engine import Simulation


def sim_of(nodes, pods=(), **kw) -> Simulation:
    return Simulation(cluster_of(nodes, list(pods)), controllers=[], **kw)


def test_clock_fires_in_time_then_fifo_order() -> None:
    clock, fired = Clock(), []
    clock.after(5, lambda: fired.append("b"))
    clock.after(1, lambda: fired.append("a"))
    clock.after(5, lambda: fired.append("c"))
    cancelled = clock.after(3, lambda: fired.append("x"))
    cancelled.cancel()
    while clock.peek() is not None:
        clock.step()
    assert fired == ["a", "b", "c"]
    assert clock.now == 5


def test_created_pod_is_admitted_scheduled_and_running() -> None:
    sim = sim_of([make_node("n1").capacity(cpu="2")])
    pod = make_pod("p").req(cpu="1").obj()
    assert sim.create(pod) is pod
    assert pod.spec.scheduler_name == "default-scheduler"  # defaulting ran
    sim.run_until_quiet()
    stored = sim.cluster.pods["default/p"]
    assert stored.spec.node_name == "n1"
    assert stored.status.phase == "Running"
    assert [e.reason for e in sim.events] == ["Scheduled"]
    assert sim.events[0].message == "Successfully assigned default/p to n1"


def test_refused_pod_is_not_created() -> None:
    sim = sim_of([make_node("n1")])
    bad = make_pod("p").spread(0, HOSTNAME).label("a", "b").obj()
    outcome = sim.create(bad)
    assert isinstance(outcome, Rejection)
    assert "maxSkew" in outcome.message
    assert "default/p" not in sim.cluster.pods


def test_unschedulable_pod_waits_then_retries_on_a_cluster_change() -> None:
    sim = sim_of([make_node("n1").capacity(cpu="1")], [make_pod("big").req(cpu="1").node("n1")])
    sim.create(make_pod("p").req(cpu="1").obj())
    sim.run_until_quiet()
    assert sim.queue.where("default/p") == "unschedulable"
    assert "Insufficient cpu" in sim.pending_reasons["default/p"]
    failures = [e for e in sim.events if e.reason == "FailedScheduling"]
    assert len(failures) == 1 and failures[0].message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    sim.advance(60)  # nothing changed: no retry before the 5-minute flush
    assert len([e for e in sim.events if e.reason == "FailedScheduling"]) == 1
    sim.delete("Pod", "default/big")
    sim.run_until_quiet()  # graceful deletion (30 s), then the retry after backoff
    assert sim.cluster.pods["default/p"].spec.node_name == "n1"
    assert "default/big" not in sim.cluster.pods
    assert sim.now >= 90


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    sim = sim_of([make_node("n1").capacity(cpu="1")], [make_pod("big").req(cpu="1").node("n1")])
    sim.create(make_pod("p").req(cpu="1").obj())
    sim.run_until_quiet()
    sim.skip_idle_retries = False
    sim.advance(301)
    assert len([e for e in sim.events if e.reason == "FailedScheduling"]) == 2


def test_a_retry_on_an_unchanged_cluster_is_skipped_until_something_changes() -> None:
    sim = sim_of([make_node("n1").capacity(cpu="1")], [make_pod("big").req(cpu="1").node("n1")])
    sim.create(make_pod("p").req(cpu="1").obj())
    sim.run_until_quiet()
    sim.advance(3600)
    assert len([e for e in sim.events if e.reason == "FailedScheduling"]) == 1
    info = sim.queue.info("default/p")
    attempts = info.attempts if info else 0
    sim.delete("Pod", "default/big", grace_seconds=0)
    sim.run_until_quiet()
    # the skipped retries count as made: 12 in the hour, on top of the first attempt
    assert info is not None and info.attempts >= attempts + 12
    sim.advance(10)
    assert sim.cluster.pods["default/p"].spec.node_name == "n1"


def test_higher_priority_pod_is_scheduled_first() -> None:
    sim = sim_of([make_node("n1").capacity(cpu="1")])
    low = make_pod("low").req(cpu="1").obj()
    high = make_pod("high").req(cpu="1").set("spec.priority", 0).obj()
    sim.create(low)
    sim.create(high)
    high_stored = sim.cluster.pods["default/high"]
    assert high_stored.spec.priority == 0  # both 0: first come first served
    sim.run_until_quiet()
    assert sim.cluster.pods["default/low"].spec.node_name == "n1"


def test_graceful_deletion_keeps_the_pod_terminating_for_its_grace_period() -> None:
    sim = sim_of([make_node("n1")], [make_pod("p").node("n1").set("spec.terminationGracePeriodSeconds", 10)])
    sim.delete("Pod", "default/p")
    assert sim.cluster.pods["default/p"].is_terminating
    assert [e.reason for e in sim.events] == ["Killing"]
    sim.advance(9)
    assert "default/p" in sim.cluster.pods
    sim.advance(1)
    assert "default/p" not in sim.cluster.pods


def test_pods_for_another_scheduler_stay_pending() -> None:
    sim = sim_of([make_node("n1")])
    sim.create(make_pod("p").set("spec.schedulerName", "other").obj())
    sim.run_until_quiet()
    assert sim.cluster.pods["default/p"].spec.node_name == ""
    assert sim.events == []


def test_same_seed_same_tie_breaks() -> None:
    def run(seed: int) -> list[str]:
        sim = sim_of([make_node(f"n{i}") for i in range(8)], seed=seed, random_ties=True)
        for i in range(6):
            sim.create(make_pod(f"p{i}").obj())
        sim.run_until_quiet()
        return [sim.cluster.pods[f"default/p{i}"].spec.node_name for i in range(6)]

    assert run(1) == run(1)
    assert any(run(1) != run(s) for s in (2, 3, 4))


def test_an_unrelated_cordon_does_not_retry_a_node_affinity_rejected_pod() -> None:
    """Queueing hints in the simulation: only a change NodeAffinity says may help (a node
    labelled to match) retries the pod; the cordon of another node makes no new attempt."""
    sim = sim_of([make_node("n1"), make_node("n2")])
    sim.create(make_pod("p").node_selector(disk="ssd").obj())
    sim.run_until_quiet()
    assert sim.queue.where("default/p") == "unschedulable"
    n2 = copy.deepcopy(sim.cluster.nodes["n2"])
    n2.spec.unschedulable = True
    sim.update(n2)
    sim.advance(60)
    assert [e.reason for e in sim.events] == ["FailedScheduling"]
    n1 = copy.deepcopy(sim.cluster.nodes["n1"])
    n1.metadata.labels["disk"] = "ssd"
    sim.update(n1)
    sim.run_until_quiet()
    assert sim.cluster.pods["default/p"].spec.node_name == "n1"
    assert [e.reason for e in sim.events] == ["FailedScheduling", "Scheduled"]
