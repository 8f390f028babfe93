"""The WorkloadSpread scenarios of examples/scenarios, run through the CLI as the README runs
them: where the pods are after each step (counted from the pods' nodes) and what the
WorkloadSpread's status says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE = "topology.kubernetes.io/zone"


def simulate(name: str, *extra: str) -> dict[str, Any]:
    args = ["simulate", str(SCENARIOS / name), "-o", "json", "--output-form", "full", "--no-progress", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def running_per_domain(snapshot: dict[str, Any], key: str, domain_of: dict[str, str]) -> dict[str, int]:
    """Running, not terminating pods per domain, from the pods' nodes."""
    counts: dict[str, int] = {}
    for p in snapshot["pods"]:
        if p["node"] and p["phase"] == "Running" and not p["terminating"]:
            domain = domain_of[p["node"]]
            counts[domain] = counts.get(domain, 0) + 1
    return counts


def subsets(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (ws,) = snapshot["workloadSpreads"]
    return {s["name"]: s for s in ws["subsets"]}


THREE_ZONES = {n: f"zone-{n[0]}" for n in ("a1", "a2", "b1", "b2", "c1", "c2")}


@pytest.mark.slow
def test_proposal_subsets_5_then_8_then_4() -> None:
    doc = simulate("workloadspread-subsets.yaml")
    deployed, scaled_up, scaled_down = doc["steps"][1], doc["steps"][2], doc["steps"][3]
    assert running_per_domain(deployed, ZONE, THREE_ZONES) == {"zone-a": 3, "zone-b": 2}
    assert running_per_domain(scaled_up, ZONE, THREE_ZONES) == {"zone-a": 3, "zone-b": 5}
    assert running_per_domain(scaled_down, ZONE, THREE_ZONES) == {"zone-a": 3, "zone-b": 1}
    # zone-a's three pods are the same before and after the scale-down: zone-b's went first
    zone_a = {p["name"] for p in scaled_up["pods"] if p["node"] and p["node"].startswith("a")}
    assert zone_a == {p["name"] for p in scaled_down["pods"] if p["node"] and p["node"].startswith("a")}
    status = subsets(scaled_up)
    assert (status["subset-a"]["replicas"], status["subset-a"]["missingReplicas"]) == (3, 0)
    assert (status["subset-b"]["replicas"], status["subset-b"]["missingReplicas"]) == (5, -1)
    # the subset's patch labelled its pods
    assert {p["labels"].get("subset") for p in scaled_down["pods"] if p["node"]} == {"a", "b"}


@pytest.mark.slow
def test_proposal_subsets_table_shows_each_subset() -> None:
    result = CliRunner().invoke(
        app,
        ["simulate", str(SCENARIOS / "workloadspread-subsets.yaml"), "--no-progress"],
        env={"COLUMNS": "80", "TTY_COMPATIBLE": "1"},  # an 80-column terminal (a pipe never wraps)
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "workloadspread/web-spread → deploy/web (8 replicas)" in lines
    step3 = lines[lines.index("workloadspread/web-spread → deploy/web (8 replicas)") :]
    assert step3[2].split() == ["subset-a", "3", "3", "0", "schedulable"]
    assert step3[3].split() == ["subset-b", "-", "5", "-1", "schedulable"]
    assert max(len(line) for line in lines) <= 80


@pytest.mark.slow
def test_elastic_ecs_holds_30_and_the_rest_go_to_virtual_kubelet() -> None:
    doc = simulate("workloadspread-elastic.yaml")
    nodes = {"ecs-1": "ecs", "ecs-2": "ecs", "ecs-3": "ecs", "virtual-kubelet": "vk"}
    deployed, scaled = doc["steps"][1], doc["steps"][2]
    assert running_per_domain(deployed, "type", nodes) == {"ecs": 30, "vk": 10}
    assert running_per_domain(scaled, "type", nodes) == {"ecs": 30, "vk": 2}
    assert deployed["pending"] == []
    # only the vk subset's pods carry its toleration: the others could not pass the taint
    vk = [p for p in deployed["pods"] if p["node"] == "virtual-kubelet"]
    assert vk and all(p["workloadSpread"] == {"name": "elastic", "subset": "vk"} for p in vk)


@pytest.mark.slow
def test_percentages_follow_the_workload_replicas_rounded_up() -> None:
    doc = simulate("workloadspread-percentages.yaml")
    got = [running_per_domain(doc["steps"][i], ZONE, THREE_ZONES) for i in (1, 2, 3)]
    assert got == [
        {"zone-a": 2, "zone-b": 3, "zone-c": 5},
        {"zone-a": 2, "zone-b": 3, "zone-c": 2},
        {"zone-a": 3, "zone-b": 4, "zone-c": 6},
    ]
    limits = [{n: s["limit"] for n, s in subsets(doc["steps"][i]).items()} for i in (1, 2, 3)]
    assert limits == [
        {"zone-a": 2, "zone-b": 3, "zone-c": None},
        {"zone-a": 2, "zone-b": 3, "zone-c": None},
        {"zone-a": 3, "zone-b": 4, "zone-c": None},
    ]


@pytest.mark.slow
def test_adaptive_reschedules_into_the_next_subset_and_recovers() -> None:
    doc = simulate("workloadspread-adaptive.yaml")
    nodes = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "b2": "zone-b"}
    deployed, rescheduled, recovered, scaled = (doc["steps"][i] for i in (1, 2, 4, 5))
    assert running_per_domain(deployed, ZONE, nodes) == {"zone-a": 2, "zone-b": 2}
    assert len(deployed["pending"]) == 2
    pending = {p["name"] for p in deployed["pending"]}
    assert not subsets(deployed)["subset-a"]["unschedulable"]

    assert running_per_domain(rescheduled, ZONE, nodes) == {"zone-a": 2, "zone-b": 4}
    assert rescheduled["pending"] == []
    assert pending.isdisjoint(p["name"] for p in rescheduled["pods"])  # deleted, not moved
    a = subsets(rescheduled)["subset-a"]
    assert a["unschedulable"] and a["failedCount"] == 1
    assert {e["reason"] for e in rescheduled["events"]} >= {
        "SubsetUnschedulable",
        "RescheduleUnschedulablePod",
    }

    a = subsets(recovered)["subset-a"]
    assert not a["unschedulable"] and a["failedCount"] == 1 and a["missingReplicas"] == 2
    assert "RecoverSchedulable" in {e["reason"] for e in recovered["events"]}
    # after recovery new pods go to subset-a again
    assert running_per_domain(scaled, ZONE, nodes) == {"zone-a": 4, "zone-b": 4}
    new = {p["name"] for p in scaled["pods"]} - {p["name"] for p in recovered["pods"]}
    assert len(new) == 2 and all(p["node"] == "a2" for p in scaled["pods"] if p["name"] in new)


@pytest.mark.slow
def test_adaptive_openkruise_flavour_recovers_after_300_seconds() -> None:
    doc = simulate("workloadspread-adaptive.yaml", "--workloadspread", "openkruise")
    recovered = doc["steps"][4]
    (event,) = [e for e in recovered["events"] if e["reason"] == "RecoverSchedulable"]
    assert event["time"] == 330  # marked at 30 s, 300 s window
    # OpenKruise's graded costs: subset 0 of 2 → 200 within its bound
    costs = {p["node"][0]: p["deletionCost"] for p in doc["final"]["pods"]}
    assert costs == {"a": "200", "b": "100"}


def test_job_spread_by_parallelism_wave_after_wave() -> None:
    doc = simulate("workloadspread-job.yaml")
    first, second, done = doc["steps"][1], doc["steps"][2], doc["steps"][3]
    assert running_per_domain(first, ZONE, THREE_ZONES) == {"zone-a": 2, "zone-b": 2}
    assert running_per_domain(second, ZONE, THREE_ZONES) == {"zone-a": 2, "zone-b": 2}
    assert {p["name"] for p in first["pods"] if p["phase"] == "Running"}.isdisjoint(
        p["name"] for p in second["pods"] if p["phase"] == "Running"
    )
    succeeded = [p for p in done["pods"] if p["phase"] == "Succeeded"]
    assert len(succeeded) == 8
    assert sum(1 for p in succeeded if p["node"].startswith("a")) == 4
    assert subsets(done)["zone-a"]["limit"] == 2  # 50% of parallelism 4
