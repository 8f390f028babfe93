"""The disruption controller's PDB status, the Eviction API's budget check, and a drain that
waits on a budget (examples/scenarios/drain-with-pdb.yaml) without ever breaking it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from builders import cluster_of, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.api.kinds import class_for
from kubespread.api.policy import PodDisruptionBudget
from kubespread.cluster.events import ClusterEvent
from kubespread.controllers.disruption import DELETION_TIMEOUT_SECONDS, EVICTION_REFUSED_MESSAGE
from kubespread.controllers.pods import is_ready
from kubespread.io.snapshot import cluster_from_manifests
from kubespread.sim.engine import Simulation
from kubespread.sim.run import run_step
from kubespread.sim.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "drain-with-pdb.yaml"
APP = {"matchLabels": {"app": "web"}}


def obj(manifest: dict[str, Any]) -> Any:
    cls = class_for(manifest["apiVersion"], manifest["kind"])
    assert cls is not None
    return cls.from_dict(manifest)


def deployment(replicas: int, name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": APP,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }


def budget(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": APP, **spec},
    }


def sim_with(*manifests: dict[str, Any], nodes: int = 3) -> Simulation:
    sim = Simulation(cluster_of([make_node(f"n{i}") for i in range(1, nodes + 1)], []))
    for m in manifests:
        assert not hasattr(sim.create(obj(m)), "code"), m
    sim.run_until_quiet()
    return sim


def status(sim: Simulation, name: str = "web") -> dict[str, Any]:
    pdb = sim.cluster.get("PodDisruptionBudget", f"default/{name}")
    assert isinstance(pdb, PodDisruptionBudget)
    return pdb.status.to_dict()


def numbers(sim: Simulation, name: str = "web") -> tuple[int, int, int, int]:
    s = sim.cluster.get("PodDisruptionBudget", f"default/{name}").status  # type: ignore[union-attr]
    return s.expected_pods, s.desired_healthy, s.current_healthy, s.disruptions_allowed


def web_pods(sim: Simulation) -> list[Pod]:
    return sorted(
        (p for p in sim.cluster.pods.values() if p.metadata.labels.get("app") == "web"), key=lambda p: p.key
    )


# ------------------------------------------------------------------ status
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"maxUnavailable": 1}, (5, 4, 5, 1)),
        ({"maxUnavailable": "30%"}, (5, 3, 5, 2)),  # 30% of 5 rounded up is 2
        ({"minAvailable": 2}, (5, 2, 5, 3)),  # an int: expected is the pods counted
        ({"minAvailable": "50%"}, (5, 3, 5, 2)),  # 2.5 rounded up
        ({"minAvailable": "100%"}, (5, 5, 5, 0)),
        ({"maxUnavailable": 0}, (5, 5, 5, 0)),
    ],
)
def test_status_as_the_disruption_controller_computes_it(
    spec: dict[str, Any], expected: tuple[int, int, int, int]
) -> None:
    sim = sim_with(deployment(5), budget(**spec))
    assert numbers(sim) == expected
    st = status(sim)
    assert st["observedGeneration"] == 1
    cond = st["conditions"][0]
    allowed = expected[3] > 0
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "DisruptionAllowed",
        "True" if allowed else "False",
        "SufficientPods" if allowed else "InsufficientPods",
    )


def test_scale_and_readiness_are_followed() -> None:
    sim = sim_with(deployment(4), budget(maxUnavailable="50%"))
    assert numbers(sim) == (4, 2, 4, 2)
    d = sim.cluster.get("Deployment", "default/web")
    scaled = d.copy()  # type: ignore[union-attr]
    scaled.spec.replicas = 6
    sim.update(scaled)
    sim.run_until_quiet()
    assert numbers(sim) == (6, 3, 6, 3)
    # a pod turning unready (its node failed) no longer counts as healthy
    pod = web_pods(sim)[0]
    unready = copy.copy(pod)
    unready.status = copy.copy(pod.status)
    unready.status.conditions = [c for c in pod.status.conditions if c.type != "Ready"]
    sim.update(unready)
    sim.run_until_quiet()
    assert numbers(sim) == (6, 3, 5, 2)


def test_unmanaged_pods_and_controllers_without_scale() -> None:
    ready = [{"type": "Ready", "status": "True"}]
    bare = (
        make_pod("bare")
        .node("n1")
        .label("app", "web")
        .set("status", {"phase": "Running", "conditions": ready})
    )
    sim = Simulation(cluster_of([make_node("n1")], [bare]))
    sim.create(obj(budget(minAvailable=1)))
    sim.run_until_quiet()
    assert numbers(sim) == (1, 1, 1, 0)  # an int minAvailable counts the pods themselves
    sim.create(obj(budget("pct", minAvailable="50%")))
    sim.run_until_quiet()
    assert numbers(sim, "pct") == (0, 0, 1, 0)  # no controller: nothing expected, nothing allowed
    assert any(e.reason == "UnmanagedPods" and e.name == "pct" for e in sim.events)
    job_pod = make_pod("job-1").node("n1").label("app", "job")
    job_pod.set(
        "metadata.ownerReferences",
        [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}],
    )
    sim2 = Simulation(cluster_of([make_node("n1")], [job_pod]))
    sim2.create(
        obj(
            {
                **budget("jobs", maxUnavailable=1),
                "spec": {"selector": {"matchLabels": {"app": "job"}}, "maxUnavailable": 1},
            }
        )
    )
    sim2.run_until_quiet()
    st = status(sim2, "jobs")
    assert st.get("disruptionsAllowed", 0) == 0
    assert st["conditions"][0]["reason"] == "SyncFailed"
    assert st["conditions"][0]["message"] == "jobs.batch does not implement the scale subresource"


# ------------------------------------------------------------------ the Eviction API
def test_eviction_is_refused_when_no_disruption_is_allowed_and_booked_when_granted() -> None:
    sim = sim_with(deployment(3), budget(maxUnavailable=1))
    first, second = web_pods(sim)[:2]
    assert sim.evict(first.key, reason="Evicted", message="x") is None
    st = status(sim)
    assert st.get("disruptionsAllowed", 0) == 0
    assert list(st["disruptedPods"]) == [first.metadata.name]
    assert sim.cluster.pods[first.key].is_terminating
    cond = next(c for c in sim.cluster.pods[first.key].status.conditions if c.type == "DisruptionTarget")
    assert (cond.reason, cond.message) == ("EvictionByEvictionAPI", "Eviction API: evicting")
    refused = sim.evict(second.key, reason="Evicted", message="x")
    assert refused is not None
    assert (refused.code, refused.reason, refused.message) == (
        429,
        "TooManyRequests",
        EVICTION_REFUSED_MESSAGE,
    )
    # the API server only decremented disruptionsAllowed; currentHealthy is the controller's last count
    assert refused.causes == (
        {
            "field": "",
            "reason": "DisruptionBudget",
            "message": "The disruption budget web needs 2 healthy pods and has 3 currently",
        },
    )
    assert not sim.cluster.pods[second.key].is_terminating
    # the replacement becomes Ready: one disruption is allowed again
    sim.run_until_quiet()
    assert numbers(sim)[3] == 1
    assert sim.evict(second.key, reason="Evicted", message="x") is None


def test_more_than_one_budget_is_a_500_and_unready_pods_may_go() -> None:
    sim = sim_with(deployment(3), budget(maxUnavailable=1), budget("other", minAvailable=1))
    refused = sim.evict(web_pods(sim)[0].key, reason="Evicted", message="x")
    assert refused is not None and refused.code == 500
    assert refused.message == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )
    sim = sim_with(deployment(3), budget(maxUnavailable=0))
    pod = web_pods(sim)[0]
    unready = copy.copy(pod)
    unready.status = copy.copy(pod.status)
    unready.status.conditions = [c for c in pod.status.conditions if c.type != "Ready"]
    sim.update(unready)
    sim.run_until_quiet()
    assert numbers(sim) == (3, 3, 2, 0)
    # IfHealthyBudget: an unready pod goes only while the budget is met (2 < 3 here)
    assert sim.evict(pod.key, reason="Evicted", message="x") is not None
    pdb = sim.cluster.get("PodDisruptionBudget", "default/web").copy()  # type: ignore[union-attr]
    pdb.spec.unhealthy_pod_eviction_policy = "AlwaysAllow"
    sim.update(pdb)
    sim.run_until_quiet()
    assert sim.evict(pod.key, reason="Evicted", message="x") is None  # AlwaysAllow: it may go


def test_disrupted_pod_entries_expire_after_two_minutes() -> None:
    sim = sim_with(deployment(3), budget(maxUnavailable=1))
    pod = web_pods(sim)[0]
    pdb = sim.cluster.get("PodDisruptionBudget", "default/web").copy()  # type: ignore[union-attr]
    pdb.status.disrupted_pods = {pod.metadata.name: "2026-01-01T00:00:00Z"}  # granted, never deleted
    sim.update(pdb)
    sim.enqueue(sim.controller("disruption"), pdb.key)
    sim.run_until_quiet()
    assert numbers(sim) == (3, 2, 2, 0)  # the pod counts as gone while the entry lasts
    sim.advance(DELETION_TIMEOUT_SECONDS + 1)
    assert status(sim).get("disruptedPods") in (None, {})
    assert numbers(sim) == (3, 2, 3, 1)
    assert any(e.reason == "NotDeleted" and e.name == pod.metadata.name for e in sim.events)


# ------------------------------------------------------------------ a drain waiting on a budget
def test_drain_with_pdb_never_breaks_the_budget_and_completes() -> None:
    scenario = load_scenario(EXAMPLE)
    sim = Simulation(cluster_from_manifests(scenario.cluster), profiles=scenario.profiles, seed=scenario.seed)
    sim.run_until_quiet()
    checking = {"on": False}
    lowest: list[int] = []

    def check(_: ClusterEvent) -> None:
        if not checking["on"]:
            return
        pdb = sim.cluster.get("PodDisruptionBudget", "default/web")
        assert isinstance(pdb, PodDisruptionBudget)
        ready = sum(1 for p in web_pods(sim) if is_ready(p) and not p.is_terminating)
        lowest.append(ready)
        assert ready >= pdb.status.desired_healthy, f"budget broken at t={sim.now}: {ready} ready"

    sim.cluster.subscribe(check)
    apply, drain, advance = scenario.steps
    run_step(sim, apply)
    assert numbers(sim) == (6, 5, 6, 1)
    on_node1 = [p.key for p in web_pods(sim) if p.spec.node_name == "node1"]
    assert len(on_node1) == 2
    checking["on"] = True  # from the first settle on
    run_step(sim, drain)
    run_step(sim, advance)
    lc = sim.controller("nodelifecycle")
    assert lc.draining() == []  # type: ignore[attr-defined]
    assert not [p for p in web_pods(sim) if p.spec.node_name == "node1"]
    assert len([p for p in web_pods(sim) if is_ready(p)]) == 6
    assert min(lowest) == 5  # one pod down at a time, never more
    refusals = [e for e in sim.events if e.reason == "DisruptionBudget"]
    assert len(refusals) == 1 and "(will retry after 5s)" in refusals[0].message
    evictions = [(e.time, e.name) for e in sim.events if e.reason == "EvictionByEvictionAPI"]
    assert [t for t, _ in evictions] == [0.0, 5.0]
    assert sorted(f"default/{n}" for _, n in evictions) == sorted(on_node1)


@pytest.mark.parametrize(
    "spec",
    [{"maxUnavailable": 1}, {"maxUnavailable": "34%"}, {"minAvailable": 4}, {"minAvailable": "60%"}],
)
def test_draining_two_of_three_nodes_keeps_every_budget(spec: dict[str, Any]) -> None:
    sim = sim_with(deployment(6), budget(**spec))
    desired = numbers(sim)[1]
    seen: list[int] = []

    def check(_: ClusterEvent) -> None:
        ready = sum(1 for p in web_pods(sim) if is_ready(p) and not p.is_terminating)
        seen.append(ready)
        assert ready >= desired, f"budget {spec} broken at t={sim.now}: {ready} < {desired}"

    sim.cluster.subscribe(check)
    lc = sim.controller("nodelifecycle")
    for node in ("n1", "n2"):
        lc.drain(node)  # type: ignore[attr-defined]
        sim.run_until_quiet()
        sim.advance(120)
        assert lc.draining() == []  # type: ignore[attr-defined]
    live = [p for p in web_pods(sim) if not p.is_terminating]
    assert len(live) == 6 and {p.spec.node_name for p in live} == {"n3"}
    assert min(seen) == desired  # the budget was used, never overdrawn


def test_required_during_execution_evictions_wait_on_the_budget_too() -> None:
    scenario = load_scenario(EXAMPLE.parent / "required-during-execution.yaml")
    sim = Simulation(cluster_from_manifests(scenario.cluster), seed=scenario.seed)
    apply, label = scenario.steps
    run_step(sim, apply)
    guard = {
        **budget(minAvailable=1),
        "spec": {"selector": {"matchLabels": {"app": "cache"}}, "minAvailable": 1},
    }
    sim.create(obj(guard))
    sim.run_until_quiet()
    (cache,) = [p for p in sim.cluster.pods.values() if p.metadata.labels.get("app") == "cache"]
    run_step(sim, label)
    sim.advance(30)
    assert not sim.cluster.pods[cache.key].is_terminating  # refused: the budget needs it
    assert not any(e.reason == "Evicted" for e in sim.events)
    pdb = sim.cluster.get("PodDisruptionBudget", "default/web").copy()  # type: ignore[union-attr]
    pdb.spec.min_available = 0
    pdb.metadata.generation += 1
    sim.update(pdb)
    sim.run_until_quiet()
    sim.advance(10)  # the next retry finds one disruption allowed
    assert cache.key not in sim.cluster.pods or sim.cluster.pods[cache.key].is_terminating
    assert any(e.reason == "Evicted" and e.name == cache.metadata.name for e in sim.events)


def test_an_empty_selector_counts_every_pod_but_guards_no_eviction() -> None:
    """policy/v1: the controller counts every pod of the namespace for ``selector: {}``, while
    the Eviction API takes a nil or empty selector to match nothing (eviction.go)."""
    empty = budget(maxUnavailable=0)
    empty["spec"]["selector"] = {}
    sim = sim_with(deployment(3), empty)
    assert numbers(sim) == (3, 3, 3, 0)
    assert sim.evict(web_pods(sim)[0].key, reason="Evicted", message="x") is None
