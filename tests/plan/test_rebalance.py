"""kubespread rebalance: the fewest evictions (checked against a brute force on small
instances), waves no PodDisruptionBudget refuses, a replay that restores every hard
constraint, a second run that plans nothing, and clear answers where nothing can be done."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.plan.rebalance import rebalance, violations
from kubespread.plan.workloads import workload_of
from kubespread.sim.engine import Simulation
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _deployment(replicas: int, spreads: list[dict[str, Any]], name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                    "topologySpreadConstraints": spreads,
                },
            },
        },
    }


def _spread(key: str, skew: int, name: str = "web") -> dict[str, Any]:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": name}},
        "nodeTaintsPolicy": "Honor",
    }


def _imbalanced(cordoned: list[str], objects: list[dict[str, Any]]) -> Simulation:
    """Nodes cordoned (Honor leaves them out of the count), the objects applied, the nodes
    uncordoned: the pods are now piled up on the others, past maxSkew."""
    steps: list[dict[str, Any]] = [{"node": {"name": n, "action": "cordon"}} for n in cordoned]
    steps += [{"apply": objects}]
    steps += [{"node": {"name": n, "action": "uncordon"}} for n in cordoned]
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "t"},
        "cluster": ["nodes-3-zones.yaml"],
        "steps": steps,
    }
    result = simulate(parse_scenario(doc, base=EXAMPLES))
    assert result.sim is not None
    return result.sim


def _zone_host(sim: Simulation, workload: str) -> dict[str, int]:
    cluster = sim.cluster
    out: dict[str, int] = {}
    for p in cluster.pods.values():
        node = cluster.node_of(p.key)
        if node and not p.is_terminating and workload_of(p) == workload:
            out[node] = out.get(node, 0) + 1
    return out


def _brute_force_minimum(now: dict[str, int], nodes: dict[str, str], spreads: list[tuple[str, int]]) -> int:
    """The fewest evictions over every final arrangement of the same number of pods whose
    skew per zone and per host (every node counted: no taints left) is within maxSkew."""
    names = sorted(nodes)
    total = sum(now.values())
    best = total + 1
    for vector in itertools.product(range(total + 1), repeat=len(names)):
        if sum(vector) != total:
            continue
        final = dict(zip(names, vector, strict=True))
        ok = True
        for key, skew in spreads:
            counts: dict[str, int] = {}
            for n, k in final.items():
                domain = nodes[n] if key == ZONE else n
                counts[domain] = counts.get(domain, 0) + k
            if max(counts.values()) - min(counts.values()) > skew:
                ok = False
                break
        if ok:
            best = min(best, sum(max(0, now.get(n, 0) - final[n]) for n in names))
    return best


NODES = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "b2": "zone-b", "c1": "zone-c", "c2": "zone-c"}


@pytest.mark.parametrize("seed", range(6))
def test_evictions_equal_the_brute_force_minimum_and_the_replay_balances(seed: int) -> None:
    rng = random.Random(seed)
    cordoned = rng.sample(sorted(NODES), rng.randint(2, 3))
    spreads = [(ZONE, rng.randint(1, 2))]
    if rng.random() < 0.5:
        spreads.append((HOST, rng.randint(1, 2)))
    replicas = rng.randint(4, 6)
    sim = _imbalanced(cordoned, [_deployment(replicas, [_spread(k, s) for k, s in spreads])])
    broken = violations(sim.cluster, sim.profiles)
    (workload,) = {workload_of(p) for p in sim.cluster.pods.values()}
    now = _zone_host(sim, workload)
    plan = rebalance(sim)
    if not broken:
        assert plan.evictions == 0 and plan.waves == ()
        return
    assert plan.proven and plan.balanced and not plan.cannot, plan.to_dict()
    assert plan.evictions == plan.minimum == _brute_force_minimum(now, NODES, spreads)


def _zone_failure() -> Simulation:
    result = simulate(load_scenario(EXAMPLES / "zone-failure.yaml"))
    assert result.sim is not None
    return result.sim


def test_zone_failure_then_recovery_moves_two_pods_to_the_empty_zone_and_a_second_run_plans_none() -> None:
    plan = rebalance(_zone_failure())
    assert (plan.evictions, plan.proven, plan.balanced, len(plan.waves)) == (2, True, True, 1)
    assert {m.from_domains[ZONE] for m in plan.waves[0]} == {"zone-a", "zone-b"}
    assert [m.to_domains[ZONE] for m in plan.waves[0]] == ["zone-c", "zone-c"]
    assert all(m.as_planned for m in plan.waves[0])  # the scheduler landed them in the planned zone
    (key,) = plan.before
    assert (plan.before[key].skew, plan.after[key].skew) == (3, 0)
    assert key.topology_key == ZONE and str(key) == f"{key.workload} {ZONE}"
    # the fixed point: the replayed state needs nothing
    again = _imbalanced_from_dump(plan)
    assert rebalance(again).evictions == 0


def _imbalanced_from_dump(plan: Any) -> Simulation:
    """The state the plan's scenario ends in (the dump it starts from, its steps)."""
    from kubespread.io.loader import LoadedObject
    from kubespread.sim.scenario import Scenario, Step

    steps = []
    for i, s in enumerate(plan.steps):
        ((action, value),) = s.items()
        if action == "evict":
            steps.append(Step(i, "evict", dict(value)))
        else:
            steps.append(Step(i, "advance", seconds=60.0))
    scenario = Scenario("again", 0, None, [LoadedObject(o, "<dump>") for o in plan.dump], steps)
    result = simulate(scenario)
    assert result.sim is not None
    return result.sim


def test_waves_respect_the_disruption_budget() -> None:
    """4 pods piled in zone a over 3 zones (maxSkew 1): 2 must move; a PDB with
    maxUnavailable 1 lets one go per wave, so two waves, and no eviction is refused."""
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    sim = _imbalanced(["b1", "b2", "c1", "c2"], [_deployment(3, [_spread(ZONE, 1)]), pdb])
    plan = rebalance(sim)
    assert plan.evictions == 2 and len(plan.waves) == 2 and plan.balanced
    assert all(not m.refused for wave in plan.waves for m in wave)
    assert all(len(wave) == 1 for wave in plan.waves)


def test_a_budget_that_allows_nothing_is_a_clear_answer() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}}},
    }
    plan = rebalance(_imbalanced(["b1", "b2", "c1", "c2"], [_deployment(3, [_spread(ZONE, 1)]), pdb]))
    assert plan.evictions == 0 and not plan.balanced
    assert plan.cannot.startswith("cannot be balanced: every pod of the broken workloads is held")


def test_a_budget_selecting_no_pods_changes_nothing() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "other", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "nothing"}}},
    }
    plan = rebalance(_imbalanced(["b1", "b2", "c1", "c2"], [_deployment(3, [_spread(ZONE, 1)]), pdb]))
    assert plan.evictions == 2 and plan.balanced and len(plan.waves) == 1


def test_max_moves_below_the_minimum_cannot_balance() -> None:
    plan = rebalance(_zone_failure(), max_moves=1)
    assert plan.evictions == 0
    assert plan.cannot.startswith("cannot be balanced within 1 evictions: no arrangement")


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["rebalance", *args], env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def test_cli_json_and_a_scenario_simulate_replays(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    r = CliRunner().invoke(
        app,
        [
            "simulate",
            str(EXAMPLES / "zone-failure.yaml"),
            "--no-progress",
            "--dump",
            str(state),
            "-o",
            "json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    scenario = tmp_path / "plan.yaml"
    code, stdout, stderr = _cli("-f", str(state), "-o", "json", "--apply-scenario", str(scenario))
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["evictions"], doc["proven"], doc["balanced"]) == (2, True, True)
    assert all({"pod", "from", "to"} <= set(m) for m in doc["waves"][0]) and len(doc["waves"][0]) == 2
    assert all(v["within"] for v in doc["after"].values()) and not all(
        v["within"] for v in doc["before"].values()
    )
    replayed = simulate(load_scenario(scenario))
    hard = [r for r in replayed.final.distribution if r.get("whenUnsatisfiable") == "DoNotSchedule"]
    assert len(hard) == 3 and all(r["withinMaxSkew"] for r in hard)
    step = yaml.safe_load(scenario.read_text())["steps"][0]
    assert sorted(step["evict"]["pods"]) == sorted(m["pod"] for m in doc["waves"][0])
    code, stdout, _ = _cli("-f", str(state))
    assert code == 0 and "2 evictions in 1 wave, proven minimal" in stdout


def test_cli_bad_input_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    code, _, stderr = _cli("-f", str(tmp_path / "missing.yaml"))
    assert code == 1 and "Traceback" not in stderr
    code, _, stderr = _cli("-f", str(EXAMPLES / "nodes-3-zones.yaml"), "--time-limit", "0")
    assert code == 2 and "--time-limit" in stderr


def test_schedule_anyway_constraints_only_with_constraints_all() -> None:
    """A ScheduleAnyway zone spread left at 3/3/0 (zone c cordoned during the rollout): the
    hard plan leaves it; with every constraint the plan moves two pods, and the scheduler's
    scoring (fewer matching pods, better) lands them in zone c."""
    soft = _spread(ZONE, 1)
    soft["whenUnsatisfiable"] = "ScheduleAnyway"
    sim = _imbalanced(["c1", "c2"], [_deployment(6, [soft])])
    hard = rebalance(sim)
    assert (hard.evictions, hard.before) == (0, {})
    every = rebalance(sim, constraints=("DoNotSchedule", "ScheduleAnyway"))
    assert (every.evictions, every.proven, every.balanced) == (2, True, True)
    assert [m.to_domains[ZONE] for m in every.waves[0]] == ["zone-c", "zone-c"]


def test_bounds_plan_only_the_pods_they_select() -> None:
    """`rebalance --apply -l/-n`: only the selected pods are candidates and only their
    workloads' constraints are planned; a workload outside the bounds is left as it is
    (it once was planned too, its moves then skipped at eviction time)."""
    from kubespread.api.selectors import parse_selector
    from kubespread.plan.rebalance import Bounds

    def app(name: str) -> str:  # web of default/ReplicaSet/web-5f868669cc or default/web-5f8...-x2
        return name.split("/")[-1].split("-")[0]

    objects = [_deployment(3, [_spread(ZONE, 1, n)], n) for n in ("web", "api")]
    sim = _imbalanced(["b1", "b2", "c1", "c2"], objects)
    assert {app(r.pod) for r in violations(sim.cluster, sim.profiles)} == {"web", "api"}
    unbounded = rebalance(sim)
    assert {app(m.workload) for w in unbounded.waves for m in w} == {"web", "api"}

    plan = rebalance(sim, bounds=Bounds(selector=parse_selector("app=web")))
    assert {app(m.pod) for w in plan.waves for m in w} == {"web"} and plan.evictions == 2, plan.to_dict()
    assert {app(k.name) for k in plan.before} == {"web"} and plan.balanced
    nothing = rebalance(sim, bounds=Bounds(namespace="elsewhere"))
    assert (nothing.evictions, nothing.before, nothing.cannot) == (0, {}, "")
