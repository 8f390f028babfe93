"""The acceptance scenarios of examples/scenarios, run through the CLI as the README runs them,
with the distributions they exist to show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def simulate(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        app, ["simulate", str(SCENARIOS / name), "-o", "json", "--output-form", "full", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(snapshot: dict[str, Any], controller_prefix: str, key: str) -> list[dict[str, Any]]:
    """The distribution rows of each controller whose name starts with the prefix, on the key."""
    return [
        d
        for d in snapshot["distribution"]
        if d["workload"]["name"].startswith(controller_prefix) and d["topologyKey"] == key
    ]


def spread(snapshot: dict[str, Any], controller_prefix: str, key: str) -> dict[str, dict[str, int]]:
    """The controller's own running pods per domain (every domain of the key: ``rawDomains``)
    of each controller whose name starts with the prefix."""
    return {d["workload"]["name"]: d["rawDomains"] for d in rows(snapshot, controller_prefix, key)}


def pods_of(snapshot: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [p for p in snapshot["pods"] if p["name"].startswith(prefix)]


HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def test_kep_3243_with_match_label_keys_the_new_revision_ends_4_4_4() -> None:
    doc = simulate("kep-3243-rollout-match-label-keys.yaml")
    before = spread(doc["steps"][0], "web-", HOST)
    after = spread(doc["final"], "web-", HOST)
    assert list(before.values()) == [{"node1": 4, "node2": 4, "node3": 4}]
    assert len(after) == 1 and set(after) != set(before)  # only the new ReplicaSet has pods
    assert list(after.values()) == [{"node1": 4, "node2": 4, "node3": 4}]
    assert {p["labels"]["pod-template-hash"] for p in pods_of(doc["final"], "web-")} == {
        next(iter(after)).removeprefix("web-")
    }


def test_kep_3243_without_match_label_keys_the_new_revision_ends_unbalanced() -> None:
    doc = simulate("kep-3243-rollout-without-match-label-keys.yaml")
    (before,) = spread(doc["steps"][0], "web-", HOST).values()
    assert before == {"node1": 4, "node2": 4, "node3": 4}
    (after,) = spread(doc["final"], "web-", HOST).values()
    assert sum(after.values()) == 12
    assert max(after.values()) - min(after.values()) > 1  # over maxSkew 1: the KEP's imbalance
    assert doc["final"]["pending"] == []


def test_kep_895_anti_affinity_cannot_roll_but_a_spread_constraint_can() -> None:
    doc = simulate("kep-895-rolling-anti-affinity.yaml")
    stuck = doc["steps"][1]
    (pending,) = stuck["pending"]
    assert pending["name"].startswith("anti-")
    assert pending["message"] == (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    old_anti = [p for p in pods_of(stuck, "anti-") if p["node"]]
    assert len(old_anti) == 2 and {p["node"] for p in old_anti} == {"node1", "node2"}
    final = doc["final"]
    spread_pods = [p for p in pods_of(final, "spread-") if p["node"] and not p["terminating"]]
    assert len(spread_pods) == 2 and {p["node"] for p in spread_pods} == {"node1", "node2"}
    first_hash = pods_of(doc["steps"][0], "spread-")[0]["labels"]["pod-template-hash"]
    assert all(p["labels"]["pod-template-hash"] != first_hash for p in spread_pods)  # rolled
    assert [p["name"] for p in final["pending"]] == [pending["name"]]  # anti still stuck


def test_scaling_a_spread_deployment_down_leaves_it_unbalanced() -> None:
    doc = simulate("scale-down-imbalance.yaml")
    (before,) = spread(doc["steps"][0], "web-", ZONE).values()
    (after,) = spread(doc["final"], "web-", ZONE).values()
    assert before == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert sum(after.values()) == 3
    assert after["zone-c"] == 0
    assert max(after.values()) - min(after.values()) == 2  # over maxSkew 1


def test_zone_failure_with_do_not_schedule_and_min_domains() -> None:
    doc = simulate("zone-failure.yaml")
    failed = doc["steps"][3]  # advance 5m: the taint manager evicted zone-c's pods at 300 s
    assert failed["time"] == 300
    evicted = {e["object"]["name"].rsplit("-", 2)[0] for e in failed["evictions"]}
    assert evicted == {"strict", "honor", "min-domains"}
    assert len(failed["evictions"]) == 6
    assert sum(p["terminating"] for p in failed["pods"]) == 6  # stuck on the unreachable nodes
    pending = {p["name"].rsplit("-", 2)[0]: p["message"] for p in failed["pending"]}
    assert sorted(p["name"].rsplit("-", 2)[0] for p in failed["pending"]) == [
        "min-domains",
        "min-domains",
        "strict",
        "strict",
    ]
    assert "didn't match pod topology spread constraints" in pending["strict"]
    (honor,) = spread(failed, "honor-", ZONE).values()
    assert honor == {"zone-a": 3, "zone-b": 3, "zone-c": 0}
    for name in ("strict-", "min-domains-"):
        (d,) = spread(failed, name, ZONE).values()
        assert d == {"zone-a": 2, "zone-b": 2, "zone-c": 0}
    # as the scheduler counts them: Honor leaves the tainted zone-c out, so honor's 3/3 is
    # within maxSkew though its raw max - min is 3; minDomains 3 takes the minimum as 0 over
    # the two zones left; strict (Ignore) still counts zone-c's 0
    scheduler = {d["workload"]["name"].rsplit("-", 1)[0]: d for d in failed["distribution"]}
    assert {n: (d["domains"], d["globalMinimum"], d["skew"], d["rawSkew"]) for n, d in scheduler.items()} == {
        "honor": ({"zone-a": 3, "zone-b": 3}, 3, 0, 3),
        "min-domains": ({"zone-a": 2, "zone-b": 2}, 0, 2, 2),
        "strict": ({"zone-a": 2, "zone-b": 2, "zone-c": 0}, 0, 2, 2),
    }
    assert scheduler["honor"]["leftOutDomains"] == scheduler["min-domains"]["leftOutDomains"] == ["zone-c"]
    recovered = doc["final"]
    assert recovered["pending"] == []
    for name in ("strict-", "min-domains-"):
        (d,) = spread(recovered, name, ZONE).values()
        assert d == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert not any(p["terminating"] for p in recovered["pods"])


def test_relabelling_a_pod_evicts_the_pod_whose_anti_affinity_breaks() -> None:
    doc = simulate("required-during-execution.yaml")
    (cache,) = pods_of(doc["steps"][0], "cache-")
    assert cache["node"] == "node1"  # preferred node, beside the report pod
    step = doc["steps"][1]
    (eviction,) = step["evictions"]
    assert eviction["object"]["name"] == cache["name"]
    assert "PodAntiAffinity" in eviction["message"] and "default/report" in eviction["message"]
    (new_cache,) = [p for p in pods_of(doc["final"], "cache-") if not p["terminating"]]
    assert new_cache["name"] != cache["name"] and new_cache["node"] == "node2"
    (report,) = pods_of(doc["final"], "report")
    assert report["node"] == "node1" and report["labels"]["role"] == "batch"


def test_a_drain_waits_on_the_disruption_budget() -> None:
    doc = simulate("drain-with-pdb.yaml")
    applied, drained, advanced = doc["steps"]
    (pdb,) = applied["podDisruptionBudgets"]
    assert (pdb["expectedPods"], pdb["desiredHealthy"], pdb["currentHealthy"]) == (6, 5, 6)
    on_node1 = sorted(p["name"] for p in applied["pods"] if p["node"] == "node1")
    assert len(on_node1) == 2
    evicted = [(e["time"], e["object"]["name"]) for e in drained["evictions"]]
    assert [t for t, _ in evicted] == [0.0, 5.0] and sorted(n for _, n in evicted) == on_node1
    (refusal,) = [e for e in drained["events"] if e["reason"] == "DisruptionBudget"]
    assert refusal["message"].endswith(
        "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."
    )
    final = [p for p in advanced["pods"] if not p["terminating"]]
    assert len(final) == 6 and not [p for p in final if p["node"] == "node1"]
    assert advanced["podDisruptionBudgets"][0]["disruptionsAllowed"] == 1


@pytest.mark.parametrize(
    "name", sorted(p.name for p in SCENARIOS.glob("*.yaml") if "kind: Scenario" in p.read_text())
)
@pytest.mark.slow
def test_every_example_scenario_has_the_documented_json_shape(name: str) -> None:
    doc = simulate(name)
    assert {"steps", "final", "events", "initial"} <= set(doc)
    for snap in (*doc["steps"], doc["final"]):
        for pod in snap["pods"]:
            assert {"namespace", "name", "node", "phase", "labels", "owner"} <= set(pod)
            assert pod["owner"] is None or set(pod["owner"]) == {"kind", "name"}
    reasons = {e["reason"] for e in doc["events"]}
    assert "Scheduled" in reasons
