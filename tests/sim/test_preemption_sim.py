"""The simulation preempts as kube-scheduler does (examples/scenarios/preemption.yaml): the
victims get DisruptionTarget/PreemptionByScheduler and terminate gracefully, the preemptor is
nominated and runs on that node once they are gone, lower-priority pods do not take the
nominated room meanwhile, and no PodDisruptionBudget goes below zero nor is broken by a drain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster.events import ClusterEvent
from kubespread.io.snapshot import cluster_from_manifests
from kubespread.sim.engine import Simulation
from kubespread.sim.run import run_step
from kubespread.sim.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "preemption.yaml"
GRACE = 30.0


def start() -> tuple[Simulation, Any]:
    """The example's cluster with its batch Deployment and budget applied (2/2/2, full)."""
    scenario = load_scenario(EXAMPLE)
    sim = Simulation(cluster_from_manifests(scenario.cluster), profiles=scenario.profiles, seed=scenario.seed)
    sim.run_until_quiet()
    run_step(sim, scenario.steps[0])
    return sim, scenario


def pods(sim: Simulation, app: str) -> list[Pod]:
    return sorted(
        (p for p in sim.cluster.pods.values() if p.metadata.labels.get("app") == app), key=lambda p: p.key
    )


def budget(sim: Simulation) -> PodDisruptionBudget:
    pdb = sim.cluster.get("PodDisruptionBudget", "default/batch")
    assert isinstance(pdb, PodDisruptionBudget)
    return pdb


def critical_pod(name: str) -> Pod:
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "solo"}},
            "spec": {
                "priorityClassName": "critical",
                "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}],
            },
        }
    )


def low_pod(name: str) -> Pod:
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "late"}},
            "spec": {
                "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}]
            },
        }
    )


def priority_class() -> PriorityClass:
    return PriorityClass.from_dict(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "critical"},
            "value": 1000000,
        }
    )


def settle_now(sim: Simulation) -> None:
    """Everything due now, no timer fired: the victims stay Terminating."""
    while sim.step():
        pass


def test_the_example_preempts_one_batch_pod_per_zone_and_runs_the_preemptors_after_the_grace_period() -> None:
    sim, scenario = start()
    assert len(pods(sim, "batch")) == 6 and budget(sim).status.disruptions_allowed == 3
    marked: dict[str, tuple[float, Any]] = {}
    lowest = [budget(sim).status.disruptions_allowed]

    def watch(ev: ClusterEvent) -> None:
        obj = ev.obj
        if isinstance(obj, Pod) and obj.is_terminating and obj.key not in marked:
            conds = [c for c in obj.status.conditions if c.type == "DisruptionTarget"]
            marked[obj.key] = (sim.now, conds)
        if isinstance(obj, PodDisruptionBudget):
            lowest.append(obj.status.disruptions_allowed)

    sim.cluster.subscribe(watch)
    run_step(sim, scenario.steps[1])
    assert len(sim.preemptions) == 3
    nominated = {e.nominated_node for e in sim.preemptions}
    assert nominated == {"a1", "b1", "c1"}  # one per zone: the spread keeps the room apart
    for entry in sim.preemptions:
        (victim,) = entry.victims
        assert victim.priority == 0 and victim.node == entry.nominated_node and victim.pdb is None
        assert entry.pdb_violations == 0 and entry.reason
        key = f"{victim.namespace}/{victim.name}"
        deleted_at, conds = marked[key]
        assert [(c.status, c.reason, c.message) for c in conds] == [
            (
                "True",
                "PreemptionByScheduler",
                "default-scheduler: preempting to accommodate a higher priority pod",
            )
        ]
        assert key not in sim.cluster.pods  # terminated
        preemptor = sim.cluster.pods[entry.pod]
        assert preemptor.spec.node_name == entry.nominated_node == entry.scheduled_node
        assert preemptor.status.phase == "Running"
        assert entry.scheduled_at >= deleted_at + GRACE
        (event,) = [e for e in sim.events if e.reason == "Preempted" and e.name == victim.name]
        assert event.message == f"Preempted by pod {preemptor.metadata.uid} on node {entry.nominated_node}"
    assert min(lowest) >= 0
    assert sim.scheduling.nominated == {}  # every nomination ended with its pod bound
    # the batch replacements could not take the room: they wait, never preempting their peers
    pending = [p for p in pods(sim, "batch") if not p.spec.node_name]
    assert len(pending) == 3


def test_the_preemptor_is_nominated_while_its_victim_terminates() -> None:
    sim, _ = start()
    sim.create(priority_class())
    sim.create(critical_pod("solo"))
    settle_now(sim)
    solo = sim.cluster.pods["default/solo"]
    assert not solo.spec.node_name
    (entry,) = sim.preemptions
    assert solo.status.nominated_node_name == entry.nominated_node
    assert sim.scheduling.nominated_node("default/solo") == entry.nominated_node
    victim = sim.cluster.pods[f"default/{entry.victims[0].name}"]
    assert victim.is_terminating
    # tried again while the victim terminates: not eligible to preempt again, still nominated
    sim.advance(10)
    assert len(sim.preemptions) == 1
    assert sim.cluster.pods["default/solo"].status.nominated_node_name == entry.nominated_node
    sim.advance(GRACE)
    solo = sim.cluster.pods["default/solo"]
    assert solo.spec.node_name == entry.nominated_node
    assert entry.scheduled_at is None  # the value read before the bind is kept as it was
    assert sim.preemptions[0].scheduled_at is not None and sim.preemptions[0].scheduled_at >= GRACE


def test_a_lower_priority_pod_does_not_take_the_nominated_room() -> None:
    sim, _ = start()
    sim.create(priority_class())
    sim.create(critical_pod("solo"))
    settle_now(sim)
    (entry,) = sim.preemptions
    node = entry.nominated_node
    victim = f"default/{entry.victims[0].name}"
    # the victim gone at once: the preemptor is backing off, the batch replacement and a new
    # low-priority pod are tried first, and the node has room for one of them
    sim.delete_pod(victim, grace_seconds=0)
    sim.create(low_pod("late"))
    settle_now(sim)
    assert victim not in sim.cluster.pods
    assert not sim.cluster.pods["default/late"].spec.node_name
    on_node = [p.key for p in sim.cluster.pods.values() if p.spec.node_name == node]
    assert len(on_node) == 1  # the other batch pod; the room is kept for the preemptor
    sim.run_until_quiet()
    assert sim.cluster.pods["default/solo"].spec.node_name == node
    assert not sim.cluster.pods["default/late"].spec.node_name


def test_without_the_nomination_the_low_priority_pod_would_take_the_room() -> None:
    """The control: the same, the nomination dropped, and the low-priority pod fits there."""
    sim, _ = start()
    sim.create(priority_class())
    sim.create(critical_pod("solo"))
    settle_now(sim)
    (entry,) = sim.preemptions
    sim.scheduling.forget_nomination("default/solo")
    sim.delete_pod(f"default/{entry.victims[0].name}", grace_seconds=0)
    sim.create(low_pod("late"))
    settle_now(sim)
    assert sim.cluster.pods["default/late"].spec.node_name == entry.nominated_node


def test_a_drain_after_the_preemption_never_breaks_the_budget() -> None:
    sim, scenario = start()
    run_step(sim, scenario.steps[1])
    pdb = budget(sim)
    assert (
        pdb.status.disruptions_allowed == 0 and pdb.status.current_healthy == pdb.status.desired_healthy == 3
    )

    def check(_: ClusterEvent) -> None:
        status = budget(sim).status
        healthy = sum(1 for p in pods(sim, "batch") if p.spec.node_name and not p.is_terminating)
        assert status.disruptions_allowed >= 0
        assert healthy >= status.desired_healthy, f"budget broken at t={sim.now}"

    sim.cluster.subscribe(check)
    lc = sim.controller("nodelifecycle")
    lc.drain("c1")  # type: ignore[attr-defined]
    sim.run_until_quiet()
    sim.advance(60)
    refused = [e for e in sim.events if e.reason == "DisruptionBudget"]
    assert refused  # the batch pod on c1 waits: evicting it would break the budget
    batch_on_c1 = [p for p in pods(sim, "batch") if p.spec.node_name == "c1"]
    assert len(batch_on_c1) == 1
