"""``kubespread simulate`` output: changes-only tables, the delta JSON form, pending pods' hints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.controllers import default_controllers
from kubespread.sim.delta import delta_dict, distribution_key, expand, full_dict
from kubespread.sim.hints import PendingHints
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE_FAILURE = EXAMPLES / "zone-failure.yaml"
HONOR = "Set nodeTaintsPolicy: Honor"

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
"""
DEPLOYMENT = """\
- apply:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
"""


def scenario(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "nodes.yaml").write_text(NODES)
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"
        "cluster: [nodes.yaml]\nsteps:\n" + steps
    )
    return path


def run(*args: str) -> str:
    result = CliRunner().invoke(app, ["simulate", *args, "--no-progress"])
    assert result.exit_code == 0, result.output
    return result.stdout


# ------------------------------------------------------------------ --changes-only


def test_a_step_that_changes_nothing_is_one_line_unless_all_steps(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        DEPLOYMENT + "- advance: 10s\n- advance: 20s\n- scale: {kind: Deployment, name: web, replicas: 1}\n",
    )
    out = run(str(path))
    assert "step 2: advance 10s  t=10s: no change" in out
    assert "step 3: advance 20s  t=30s: no change" in out
    # the pending pod is shown once (step 1), not again at the unchanged steps
    assert out.count("pods: 2 running, 1 pending") == 1
    assert "step 4: scale Deployment default/web to 1" in out and "pods: 1 running, 0 pending" in out
    every = run(str(path), "--all-steps")
    assert "no change" not in every
    assert every.count("pods: 2 running, 1 pending") == 3


# ------------------------------------------------------------------ -o json: deltas


def _sorted_distribution(doc: dict[str, Any]) -> dict[str, Any]:
    for step in [doc["initial"], *doc["steps"], doc["final"]]:
        step["distribution"] = sorted(step["distribution"], key=distribution_key)
    return doc


def test_the_delta_form_expands_to_the_full_form() -> None:
    delta = json.loads(run(str(ZONE_FAILURE), "-o", "json"))
    full = json.loads(run(str(ZONE_FAILURE), "-o", "json", "--output-form", "full"))
    assert delta["form"] == "delta" and "events" not in delta
    assert _sorted_distribution(expand(delta)) == _sorted_distribution(full)
    # a step names only the pods it changed: the failure of c1 changes no pod's node or phase
    fail_c1 = delta["steps"][1]
    assert fail_c1["description"] == "fail node c1"
    assert fail_c1["pods"]["added"] == [] and fail_c1["pods"]["removed"] == []
    advance = delta["steps"][3]
    changed = {c["name"]: c for c in advance["pods"]["changed"]}
    assert changed and all(
        set(c) <= {"namespace", "name", "node", "phase", "terminating"} for c in changed.values()
    )
    assert all(c.get("terminating") for c in changed.values())
    assert len(advance["pods"]["added"]) == 6  # the replacements of the 6 evicted pods
    assert {p["name"] for p in advance["pending"]["added"]} == {
        p["name"] for p in full["steps"][3]["pending"]
    }


def test_the_delta_form_is_smaller_and_yaml_has_it_too() -> None:
    delta = run(str(ZONE_FAILURE), "-o", "json")
    full = run(str(ZONE_FAILURE), "-o", "json", "--output-form", "full")
    assert len(delta) < len(full)  # events dominate this small run; pods x steps a large one
    doc = yaml.safe_load(run(str(ZONE_FAILURE), "-o", "yaml"))
    assert doc == json.loads(delta)


def test_an_unchanged_step_has_empty_changes(tmp_path: Path) -> None:
    path = scenario(tmp_path, DEPLOYMENT + "- advance: 10s\n")
    doc = json.loads(run(str(path), "-o", "json"))
    step = doc["steps"][1]
    empty = {"added": [], "removed": [], "changed": []}
    assert step["pods"] == step["distribution"] == step["pending"] == empty
    assert "workloadSpreads" not in step and "podDisruptionBudgets" not in step


# ------------------------------------------------------------------ hints


def test_pending_pods_carry_hints_at_the_step_they_are_pending() -> None:
    doc = json.loads(run(str(ZONE_FAILURE), "-o", "json"))
    after = {p["name"]: p for p in doc["steps"][3]["pending"]["added"]}
    strict = [p for name, p in after.items() if name.startswith("strict-")]
    assert strict and all(any(HONOR in h for h in p["hints"]) for p in strict)
    # the pods recovered at the end: nothing pending, no hint left to give
    assert doc["final"]["pending"] == []
    table = run(str(ZONE_FAILURE))
    hint_lines = [line for line in table.splitlines() if line.startswith("  hint:")]
    assert sum(HONOR in line for line in hint_lines) == 1  # one line per distinct hint
    step4 = table[table.index("step 4:") : table.index("step 5:")]
    assert HONOR in step4


def test_asking_for_hints_does_not_change_the_history() -> None:
    plain = simulate(load_scenario(ZONE_FAILURE)).to_dict()
    hints = PendingHints()
    asked = simulate(load_scenario(ZONE_FAILURE), after_step=hints).to_dict()
    assert asked == plain
    assert hints.by_step[3] and not hints.by_step[5]


def _scenario_files() -> list[Path]:
    """The bundled scenarios (not the node and workload files they name)."""
    return [p for p in sorted(EXAMPLES.glob("*.yaml")) if "kind: Scenario" in p.read_text()]


@pytest.mark.parametrize("path", _scenario_files(), ids=lambda p: p.stem)
def test_every_example_round_trips_through_the_delta_form(path: Path) -> None:
    """expand(delta) is the full form for every bundled scenario (spread rows compared in
    key order, which the delta does not keep)."""
    result = simulate(load_scenario(path), controllers=default_controllers())
    delta = delta_dict(result)
    assert _sorted_distribution(expand(json.loads(json.dumps(delta)))) == _sorted_distribution(
        json.loads(json.dumps(full_dict(result)))
    )


def test_the_hints_leave_the_results_own_dicts_as_they_were() -> None:
    """The report and other callers read SimulationResult.to_dict(): no hints added there."""
    hints = PendingHints()
    result = simulate(load_scenario(ZONE_FAILURE), after_step=hints)
    before = json.dumps(result.to_dict())
    full = full_dict(result, hints.decorate)
    delta_dict(result, hints.decorate)
    assert json.dumps(result.to_dict()) == before
    assert all("hints" in p for p in full["steps"][3]["pending"])
