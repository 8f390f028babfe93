"""``simulate_runs``: a scenario replayed with the scheduler's ties drawn at random, run i with
seed S+i; per step each workload's pods per domain and the pending pods as min/median/max,
and whether every run ended the step alike."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from builders import ZONE, make_node
from kubespread.sim.run import SimulationResult, simulate
from kubespread.sim.runs import IDENTICAL, Counts, StepSpread, run_seeds, simulate_runs
from kubespread.sim.scenario import Scenario, ScenarioError, parse_scenario

#: 3 zones x 2 identical nodes: a pod with no constraint ties over all six
NODES = [make_node(f"{z}{i}").zone(f"zone-{z}").dict() for z in "abc" for i in (1, 2)]
ZONE_SPREAD = {
    "maxSkew": 1,
    "topologyKey": ZONE,
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}},
}


def deployment(replicas: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
            },
        },
    }


def scenario(*steps: dict[str, Any], nodes: list[dict[str, Any]] = NODES, seed: int = 1) -> Scenario:
    return parse_scenario(
        {
            "apiVersion": "kubespread.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "runs"},
            "seed": seed,
            "cluster": nodes,
            "steps": list(steps),
        }
    )


def zones(step: StepSpread) -> dict[str, Counts]:
    (row,) = [s for s in step.distribution if s.topology_key == ZONE]
    return row.domains


def test_a_single_pod_tied_across_zones_lands_in_different_zones() -> None:
    result = simulate_runs(scenario({"apply": deployment(1)}), 10)
    assert result.seeds == list(range(1, 11))  # the scenario's seed, then +1 per run
    initial, applied = result.steps
    assert initial.index == -1 and initial.verdict == IDENTICAL
    counts = zones(applied)
    assert list(counts) == ["zone-a", "zone-b", "zone-c"]
    assert any(c.max > c.min for c in counts.values())
    assert all((c.min, c.max) == (0, 1) for c in counts.values() if not c.certain)
    assert not applied.identical and not applied.counts_identical
    assert applied.verdict.startswith("differs between runs: ")
    assert applied.pending == Counts(0, 0.0, 0)
    row = applied.distribution[0].to_dict()
    assert row["workload"]["kind"] == "ReplicaSet" and row["owner"] == {"kind": "Deployment", "name": "web"}


def test_a_do_not_schedule_zone_spread_is_one_per_zone_in_every_run() -> None:
    result = simulate_runs(scenario({"apply": deployment(3, topologySpreadConstraints=[ZONE_SPREAD])}), 10)
    applied = result.steps[1]
    assert {z: (c.min, c.median, c.max) for z, c in zones(applied).items()} == {
        "zone-a": (1, 1.0, 1),
        "zone-b": (1, 1.0, 1),
        "zone-c": (1, 1.0, 1),
    }
    assert applied.counts_identical and applied.pending.certain
    # which of a zone's two nodes is still a tie: the verdict says only the counts agree
    assert not applied.identical
    assert applied.verdict.endswith("; the counts per domain are the same in every run")


def test_pending_pods_are_counted_over_the_runs() -> None:
    full = [make_node(f"{z}1").zone(f"zone-{z}").capacity(pods="1").dict() for z in "abc"]
    result = simulate_runs(scenario({"apply": deployment(5)}, nodes=full), 4)
    applied = result.steps[1]
    assert applied.pending == Counts(2, 2.0, 2)
    assert applied.verdict == IDENTICAL and applied.identical
    assert {z: c.max for z, c in zones(applied).items()} == {"zone-a": 1, "zone-b": 1, "zone-c": 1}


def test_the_same_seed_gives_the_same_summary_and_run_i_is_seed_s_plus_i() -> None:
    s = scenario({"apply": deployment(4)}, {"scale": {"kind": "Deployment", "name": "web", "replicas": 2}})
    kept: list[SimulationResult] = []
    first = simulate_runs(s, 4, seed=20, on_result=lambda i, r: kept.append(r))
    assert first.to_dict() == simulate_runs(s, 4, seed=20).to_dict()
    assert first.seed == 20 and first.seeds == run_seeds(20, 4) == [20, 21, 22, 23]

    def nodes(result: SimulationResult) -> list[tuple[str, str | None]]:
        return [(p.name, p.node) for p in result.final.pods]

    alone = simulate(replace(s, seed=22), random_ties=True)  # run 2, on its own
    assert nodes(kept[2]) == nodes(alone)
    assert simulate_runs(s, 4, seed=21).to_dict() != first.to_dict()


def test_a_step_no_run_changed_is_marked_unchanged() -> None:
    result = simulate_runs(scenario({"apply": deployment(2)}, {"advance": "10s"}), 3)
    assert [s.changed for s in result.steps] == [True, True, False]


def test_counts_median_and_the_dict_form() -> None:
    assert Counts.of([0, 1]) == Counts(0, 0.5, 1)
    assert Counts.of([2, 0, 1]).to_dict() == {"min": 0, "median": 1, "max": 2}
    assert Counts.of([0, 1, 1, 0]).to_dict()["median"] == 0.5
    assert Counts.of([3, 3]).certain and not Counts.of([2, 3]).certain


def test_at_least_one_run_and_a_failing_run_says_which() -> None:
    s = scenario({"apply": deployment(1)})
    with pytest.raises(ValueError, match="at least 1"):
        simulate_runs(s, 0)
    broken = scenario({"scale": {"kind": "Deployment", "name": "nope", "replicas": 1}})
    with pytest.raises(ScenarioError) as caught:
        simulate_runs(broken, 2, seed=5)
    assert caught.value.problems[0].startswith("run 1 of 2 (seed 5): ")
    assert "Deployment default/nope not found" in caught.value.problems[0]
