"""``validate`` of a scenario file checks it as ``simulate`` reads it (the same problems, in
the same words, and exit 1; a valid one counts the objects it holds), and a CheckPolicy as
``check --policy`` reads it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"

BROKEN = """\
apiVersion: kubespread.io/v1alpha1
kind: Scenario
metadata: {name: broken}
seed: x
cluster: [nodes-missing.yaml]
steps:
- scale: {kind: Deployment, name: web}
- apply:
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "-1"}}}]}
"""


def test_a_broken_scenario_fails_validate_with_simulates_problems(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    simulated = CliRunner().invoke(app, ["simulate", str(path)])
    validated = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert simulated.exit_code == validated.exit_code == 1
    problems = [line for line in simulated.stderr.splitlines() if line.startswith(str(path))]
    assert len(problems) == 4
    assert validated.stdout.splitlines() == problems
    assert "0 objects valid" not in validated.output
    doc = json.loads(CliRunner().invoke(app, ["validate", "-f", str(path), "-o", "json"]).stdout)
    assert doc["valid"] is False and len(doc["files"][0]["errors"]) == 4


def test_a_valid_scenario_counts_its_objects() -> None:
    r = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / "zone-failure.yaml")])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip().endswith("zone-failure.yaml: 9 objects valid")


def test_a_check_policy_is_validated_as_check_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: CheckPolicy\nchecks:\n  rollout: {maxTrials: x}\n"
    )
    r = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [f"{path}:4: checks.rollout.maxTrials: must be an integer, got a string"]
    ok = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES.parent / "ci" / "check-policy.yaml")])
    assert ok.exit_code == 0 and ok.stdout.strip().endswith("check-policy.yaml: 1 object valid")
