"""Invariants over random scenarios (Hypothesis): every bind is one the scheduler allows,
required rules of bound pods hold when they are bound, no owned pod is lost, and a seed
fixes the whole history."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubespread.api.core import Pod
from kubespread.api.selectors import compile_label_selector
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.sim.engine import Simulation
from kubespread.sim.run import simulate
from kubespread.sim.scenario import parse_scenario

pytestmark = pytest.mark.slow

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def node(name: str, zone: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
    }


def deployment(name: str, replicas: int, rule: str, max_skew: int, cpu: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}]
    }
    sel = {"matchLabels": {"app": name}}
    if rule in ("spread-zone", "spread-host"):
        key = ZONE if rule == "spread-zone" else HOST
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    elif rule == "anti-host":
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOST, "labelSelector": sel}
                ]
            }
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": sel,
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


NAMES = ("web", "api")


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n_nodes = draw(st.integers(2, 6))
    nodes = [
        node(f"n{i}", f"zone-{'abc'[i % 3]}", draw(st.sampled_from(["1", "2", "4"]))) for i in range(n_nodes)
    ]
    deploys = [
        deployment(
            name,
            draw(st.integers(0, 6)),
            draw(st.sampled_from(["none", "spread-zone", "spread-host", "anti-host"])),
            draw(st.integers(1, 2)),
            draw(st.sampled_from(["100m", "500m", "1"])),
        )
        for name in NAMES[: draw(st.integers(1, 2))]
    ]
    step = st.one_of(
        st.builds(
            lambda n, r: {"scale": {"kind": "Deployment", "name": n, "replicas": r}},
            st.sampled_from([d["metadata"]["name"] for d in deploys]),
            st.integers(0, 8),
        ),
        st.builds(
            lambda n, v: {
                "set": {
                    "kind": "Deployment",
                    "name": n,
                    "path": "spec.template.spec.containers[0].image",
                    "value": v,
                }
            },
            st.sampled_from([d["metadata"]["name"] for d in deploys]),
            st.sampled_from(["app:1", "app:2", "app:3"]),
        ),
        st.builds(
            lambda n, a: {"node": {"name": n, "action": a}},
            st.sampled_from([n["metadata"]["name"] for n in nodes]),
            st.sampled_from(["cordon", "uncordon", "fail", "recover", "drain"]),
        ),
        st.builds(lambda s: {"advance": s}, st.sampled_from(["10s", "2m", "6m"])),
    )
    return {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "random"},
        "seed": draw(st.integers(0, 3)),
        "cluster": nodes,
        "steps": [{"apply": deploys}, *draw(st.lists(step, min_size=1, max_size=8))],
    }


class CheckedSimulation(Simulation):
    """Checks each bind against the scheduler's own verdict on the state just before it,
    with a fresh profile (no cache shared with the engine's), and the bound pod's required
    rules independently once it is bound."""

    binds = 0

    def _bind(self, pod: Pod, node: str) -> None:
        fresh = schedule_one(pod, self.cluster, default_profile())
        assert node in fresh.feasible, f"{pod.key} bound to {node}, not feasible: {fresh.fit_error}"
        super()._bind(pod, node)
        CheckedSimulation.binds += 1
        check_bound_rules(self, self.cluster.pods[pod.key])


def _requests_fit(sim: Simulation, node: str) -> None:
    used = sum(
        sum(
            c.resources.requests["cpu"].milli_value()
            for c in p.spec.containers
            if c.resources and "cpu" in c.resources.requests
        )
        for p in sim.cluster.pods_on_node(node).values()
        if not p.is_finished
    )
    allocatable = sim.cluster.nodes[node].status.allocatable["cpu"].milli_value()
    assert used <= allocatable, f"node {node}: {used}m cpu requested of {allocatable}m"


def check_bound_rules(sim: Simulation, pod: Pod) -> None:
    """Required anti-affinity (both directions) and resources, computed directly."""
    node = pod.spec.node_name
    _requests_fit(sim, node)
    here = sim.cluster.nodes[node].metadata.labels
    for other in sim.cluster.pods.values():
        if other.key == pod.key or not other.spec.node_name or other.is_finished:
            continue
        there = sim.cluster.nodes[other.spec.node_name].metadata.labels
        for a, b in ((pod, other), (other, pod)):
            aff = a.spec.affinity
            terms = (
                aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
                if aff and aff.pod_anti_affinity
                else []
            )
            for t in terms:
                same = t.topology_key in here and here.get(t.topology_key) == there.get(t.topology_key)
                if same and compile_label_selector(t.label_selector).matches(b.metadata.labels):
                    raise AssertionError(
                        f"{a.key}'s required anti-affinity is broken by {b.key} ({t.topology_key})"
                    )


def run(doc: dict[str, Any]) -> dict[str, Any]:
    scenario = parse_scenario(json.loads(json.dumps(doc)))
    import kubespread.sim.baseline as run_module  # where simulate builds its Simulation

    original = run_module.Simulation
    run_module.Simulation = CheckedSimulation  # type: ignore[misc]
    try:
        return simulate(scenario).to_dict()
    finally:
        run_module.Simulation = original  # type: ignore[misc]


def check_nothing_lost(result: dict[str, Any]) -> None:
    """Every pod is running, pending with a reason, or terminating; and each ReplicaSet's
    pods are accounted for by the final snapshot's owners."""
    for p in result["final"]["pods"]:
        assert p["node"] or p["terminating"] or p["phase"] == "Pending", p
    pending = {(p["namespace"], p["name"]) for p in result["final"]["pending"]}
    for p in result["final"]["pods"]:
        if not p["node"] and not p["terminating"]:
            assert (p["namespace"], p["name"]) in pending


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_random_scenarios_keep_the_invariants(doc: dict[str, Any]) -> None:
    result = run(doc)
    check_nothing_lost(result)
    for p in result["final"]["pending"]:
        assert p["message"].startswith("0/"), p  # a pending pod says why, in kube's words


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_replica_sets_own_exactly_their_replicas_once_settled(doc: dict[str, Any]) -> None:
    scenario = parse_scenario(json.loads(json.dumps(doc)))
    sim_holder: list[Simulation] = []

    class Capture(CheckedSimulation):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            sim_holder.append(self)

    import kubespread.sim.baseline as run_module  # where simulate builds its Simulation

    original = run_module.Simulation
    run_module.Simulation = Capture  # type: ignore[misc]
    try:
        simulate(scenario)
    finally:
        run_module.Simulation = original  # type: ignore[misc]
    sim = sim_holder[0]
    sim.advance(3600)  # long enough for every eviction and termination to finish
    sim.run_until_quiet()
    for rs in sim.cluster.objects("ReplicaSet").values():
        owned = [p for p in sim.pods_of(rs.metadata.uid) if not p.is_terminating and not p.is_finished]
        assert len(owned) == (rs.spec.replicas if rs.spec.replicas is not None else 1), rs.key  # type: ignore[attr-defined]
    for p in sim.cluster.pods.values():
        ref = p.metadata.controller_ref()
        assert ref is None or sim.cluster.get(ref.kind, f"{p.metadata.namespace}/{ref.name}") is not None, (
            p.key
        )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_same_seed_gives_the_same_history(doc: dict[str, Any]) -> None:
    assert run(doc) == run(doc)


def test_the_checker_sees_a_broken_rule() -> None:
    """The bound-rule check is not vacuous: two anti-affine pods on one node fail it."""
    from builders import cluster_of, make_node, make_pod

    anti = {"matchLabels": {"app": "x"}}
    a = make_pod("a").label("app", "x").node("n1").pod_affinity(HOST, anti, anti=True)
    b = make_pod("b").label("app", "x").node("n1")
    sim = Simulation(cluster_of([make_node("n1")], [a, b]), controllers=[])
    try:
        check_bound_rules(sim, sim.cluster.pods["default/b"])
    except AssertionError as e:
        assert "default/a's required anti-affinity is broken by default/b" in str(e)
    else:
        raise AssertionError("the checker missed a broken anti-affinity")
