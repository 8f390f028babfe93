"""The sim-side use cases called directly, request in, typed result out: ``schedule``,
``explain``, ``diff``, ``simulate`` (and ``schedule --optimal``'s comparison rows), without
the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubespread.api.core import Pod
from kubespread.io import load
from kubespread.io.loader import Validation
from kubespread.plan.optimal import Comparison, greedy_vs_optimal, optimal, per_zone
from kubespread.scheduler.views import SpreadRow
from kubespread.sim.diff import DiffRequest, PlacementDiff, PodMove, SpreadChange, diff
from kubespread.sim.placement import (
    ExplainRequest,
    NoProfile,
    PlacementError,
    PlacementResult,
    PodNotFound,
    PodRefused,
    ScheduleRequest,
    explain,
    schedule,
)
from kubespread.sim.runs import RunsResult
from kubespread.sim.scenario import load_scenario
from kubespread.sim.simulate import SimulateHooks, SimulateRequest, run_scenario
from placement_inputs import node, pod, spread, write

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _three_zones(tmp_path: Path, *, cpu: str = "4") -> Path:
    return write(tmp_path / "nodes.yaml", [node(f"n{i}", z, cpu=cpu) for i, z in enumerate("abc")])


def test_schedule_places_the_request_with_its_seed_and_bound(tmp_path: Path) -> None:
    nodes = _three_zones(tmp_path)
    pods = [pod(f"p{i}", {"foo": "bar"}, topologySpreadConstraints=[spread("zone")]) for i in range(3)]
    request = ScheduleRequest(load([nodes, write(tmp_path / "pods.yaml", pods)]), seed=7)
    result = schedule(request)
    assert isinstance(result, PlacementResult)
    assert sorted(p.zone for p in result.placements) == ["a", "b", "c"]
    assert result.baseline.seed == 7
    rows = result.spread()  # a bare pod is a workload of its own: one row each
    assert all(isinstance(r, SpreadRow) for r in rows)
    assert sorted(r.pod for r in rows) == ["p0", "p1", "p2"]
    assert all(r.topology_key == "zone" and r.within for r in rows)
    with pytest.raises(PlacementError):  # three pods do not fit in a bound of two
        schedule(ScheduleRequest(request.manifests, max_pods=2))


def test_explain_a_bound_pod_says_where_it_runs_and_leaves_the_cluster_alone(tmp_path: Path) -> None:
    nodes = _three_zones(tmp_path)
    result = schedule(ScheduleRequest(load([nodes, write(tmp_path / "p.yaml", [pod("p", {})])])))
    node_of = result.sim.cluster.pods["default/p"].spec.node_name
    events = len(result.sim.events)
    e = explain(ExplainRequest(result, "p", timed=True))
    assert e.running_on == node_of
    assert e.timings is not None
    assert len(result.sim.events) == events
    assert result.sim.cluster.pods["default/p"].spec.node_name == node_of


def test_explain_names_the_missing_pod_and_the_pending_ones(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", [node("n0", "a", cpu="1")])
    big = pod("big", {}, containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}])
    result = schedule(ScheduleRequest(load([nodes, write(tmp_path / "p.yaml", [big])])))
    with pytest.raises(PodNotFound) as e:
        explain(ExplainRequest(result, "default/nope"))
    assert e.value.pending == ["default/big"]
    assert str(e.value) == "pod default/nope not found in the input or among the pods its workloads create"
    pending = explain(ExplainRequest(result, "big"))
    assert not pending.to_dict()["scheduled"]


def test_explain_a_manifest_admits_it_first(tmp_path: Path) -> None:
    nodes = _three_zones(tmp_path)
    result = schedule(ScheduleRequest(load([nodes])))
    merged = pod(
        "m", {"foo": "bar", "app": "x"}, topologySpreadConstraints=[spread("zone", matchLabelKeys=["app"])]
    )
    (lo,) = load([write(tmp_path / "m.yaml", [merged])]).objects
    e = explain(ExplainRequest(result, lo))
    assert e.to_dict()["scheduled"]
    assert isinstance(e.decision.pod, Pod)
    selector = e.decision.pod.spec.topology_spread_constraints[0].label_selector
    assert [x.key for x in selector.match_expressions] == ["app"]  # the API server's merge
    refused = pod("r", {}, priorityClassName="no-such-class")
    (lo,) = load([write(tmp_path / "r.yaml", [refused])]).objects
    with pytest.raises(PodRefused, match=r"r\.yaml.*Pod default/r: the API server would refuse it"):
        explain(ExplainRequest(result, lo))
    other = pod("o", {}, schedulerName="my-scheduler")
    (lo,) = load([write(tmp_path / "o.yaml", [other])]).objects
    with pytest.raises(NoProfile, match="my-scheduler"):
        explain(ExplainRequest(result, lo))


def test_diff_pairs_the_versions_into_typed_rows_and_writes_the_documented_json() -> None:
    cluster = load([EXAMPLES / "diff/nodes.yaml"]).objects
    before = ScheduleRequest([*cluster, *load([EXAMPLES / "diff/web.yaml"]).objects])
    after = ScheduleRequest([*cluster, *load([EXAMPLES / "diff/web-honor.yaml"]).objects])
    d = diff(DiffRequest(before, after))
    assert isinstance(d, PlacementDiff)
    assert all(isinstance(p, PodMove) for p in d.pods)
    assert (d.before.pending, d.after.pending) == (2, 0)
    assert sorted(p.change for p in d.changed) == ["placed", "placed"]
    assert all(p.before is not None and p.before.node is None for p in d.changed)
    (change,) = d.spread
    assert isinstance(change, SpreadChange) and change.changed
    assert (change.owner, change.topology_key) == ("deploy/web", "topology.kubernetes.io/zone")
    assert change.before is not None and change.after is not None
    assert (change.before.skew, change.after.skew) == (1, 0)
    doc = json.loads(json.dumps(d.to_dict()))
    assert list(doc) == ["pods", "spread", "before", "after"]
    assert list(doc["pods"][0]) == ["namespace", "owner", "before", "after", "change"]
    assert doc["after"] == {"placed": 4, "pending": 0}
    assert doc["spread"][0]["after"]["skew"] == 0
    same = diff(DiffRequest(before, before))
    assert not same.changed and not any(s.changed for s in same.spread)


def test_greedy_vs_optimal_rows_per_node_and_per_zone(tmp_path: Path) -> None:
    """Two spreads (zone and hostname) on 3 nodes of 3 CPU in zones b, c, b: greedy strands 2
    of 7 one-CPU pods, the optimal arrangement places all 7."""
    nodes = write(
        tmp_path / "nodes.yaml",
        [node("n0", "b", cpu="3"), node("n1", "c", cpu="3"), node("n2", "b", cpu="3")],
    )
    template = pod(
        "web",
        {"app": "web"},
        containers=[{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}],
        topologySpreadConstraints=[
            {**spread(key), "labelSelector": {"matchLabels": {"app": "web"}}}
            for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname")
        ],
    )
    web = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 7,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
        },
    }
    result = schedule(ScheduleRequest(load([nodes, write(tmp_path / "web.yaml", [web])])))
    solved = optimal(result)
    assert solved is not None and not solved.error and not solved.pending
    rows = greedy_vs_optimal(result, solved)
    assert all(isinstance(r, Comparison) for r in rows)
    assert [r.node for r in rows] == ["n0", "n1", "n2"]
    assert sum(r.greedy for r in rows) == 5 and sum(r.optimal for r in rows) == 7
    zones = per_zone(rows)
    assert [(z.zone, z.node) for z in zones] == [("b", ""), ("c", "")]
    assert sum(z.optimal for z in zones) == 7


def test_simulate_one_run_keeps_its_result_hints_and_documents() -> None:
    scenario = load_scenario(EXAMPLES / "scenarios/zone-failure.yaml", validation=Validation.STRICT)
    steps: list[int] = []
    outcome = run_scenario(SimulateRequest(scenario), SimulateHooks(on_step=lambda s: steps.append(s.index)))
    assert steps == [s.index for s in scenario.steps]
    assert outcome.runs is None and outcome.result is not None and outcome.hints is not None
    full, delta = outcome.full_doc(), outcome.delta_doc()
    assert len(full["steps"]) == len(delta["steps"]) == len(scenario.steps)
    assert delta["form"] == "delta"
    assert outcome.report_explanation() is not None


def test_simulate_runs_summarises_and_keeps_only_what_is_asked() -> None:
    scenario = load_scenario(EXAMPLES / "scenarios/zone-failure.yaml", validation=Validation.STRICT)
    seeds: list[int] = []
    bare = run_scenario(
        SimulateRequest(scenario, runs=2, seed=5), SimulateHooks(on_run=lambda i, s: seeds.append(s))
    )
    assert isinstance(bare.runs, RunsResult) and bare.runs.seeds == seeds == [5, 6]
    assert bare.result is None and bare.hints is None
    with pytest.raises(ValueError, match="not kept"):
        bare.full_doc()
    kept = run_scenario(SimulateRequest(scenario, runs=2, seed=5, keep_first=True, explain_first=True))
    assert kept.result is not None and kept.result.seed == 5
    assert kept.runs is not None and kept.runs.to_dict() == bare.runs.to_dict()
    assert len(kept.full_doc()["steps"]) == len(scenario.steps)
