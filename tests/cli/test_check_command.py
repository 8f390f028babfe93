"""``kubespread check``: exit codes (0 pass, 3 a check failed, 1 input, 2 usage), the table,
``-o json``, ``--junit`` read back by a JUnit parser, ``--format github`` annotations, the
policy file, and the CI example's committed dump."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from junitparser import Failure, JUnitXml
from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "check"
NODES_2 = str(ROOT / "examples" / "scenarios" / "nodes-2.yaml")
NODES_3_ZONES = str(ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml")
CI = ROOT / "examples" / "ci"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["check", "--no-progress", *args])


def test_changes_that_pass_exit_0() -> None:
    r = run("--cluster", NODES_3_ZONES, "-f", f"{DATA / 'spread.yaml'},{DATA / 'spread-pdb.yaml'}")
    assert r.exit_code == 0, r.output
    assert "passed: 5 checks (0 errors, 0 warnings)" in r.stdout
    assert "FAIL" not in r.stdout


def test_a_deadlocked_rollout_exits_3_with_the_suggestion(tmp_path: Path) -> None:
    junit = tmp_path / "out" / "check.xml"
    r = run(
        "--cluster",
        NODES_2,
        "--cluster",
        str(DATA / "anti-v1.yaml"),
        "-f",
        str(DATA / "anti-v2.yaml"),
        "--domains",
        "kubernetes.io/hostname",
        "--junit",
        str(junit),
        "-o",
        "json",
    )
    assert r.exit_code == 3, r.output
    doc = json.loads(r.stdout)
    (rollout,) = [f for f in doc["findings"] if f["check"] == "rollout"]
    assert rollout["suggestion"]["maxUnavailable"] >= 1
    assert rollout["file"].endswith("anti-v2.yaml") and rollout["line"] == 4  # spec.strategy's parent: spec
    xml = JUnitXml.fromfile(str(junit))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"admission", "placement", "rollout", "failureSurvival"}
    (case,) = list(suites["rollout"])
    assert case.name == "Deployment default/anti" and case.classname == "kubespread.check.rollout"
    assert case.is_failure and isinstance(case.result[0], Failure)
    assert "stuck at step 1 of 2" in (case.result[0].message or "")
    assert xml.failures == 2 and xml.tests == 4  # rollout and placement (its new pod is pending)


def test_a_zone_loss_that_breaks_a_budget_exits_3(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    r = run(
        "--cluster",
        NODES_3_ZONES,
        "-f",
        str(DATA / "ha.yaml"),
        "-f",
        str(DATA / "ha-pdb.yaml"),
        "--junit",
        str(junit),
    )
    assert r.exit_code == 3, r.output
    assert "error: failureSurvival: pdb/ha: losing topology.kubernetes.io/zone=zone-a" in r.stdout
    assert "error: 1 of 5 checks failed (1 error, 1 warning)" in r.stderr
    xml = JUnitXml.fromfile(str(junit))
    failed = [(s.name, c.name) for s in xml for c in s if c.is_failure]
    assert failed == [("failureSurvival", "PodDisruptionBudget default/ha")]
    # the warnings (replicas left pending) are the passing case's output, not failures
    ha = next(c for s in xml for c in s if s.name == "failureSurvival" and c.name == "Deployment default/ha")
    assert ha.is_passed and "leaves 2 replica(s) pending" in (ha.system_out or "")


def test_warnings_fail_with_strict() -> None:
    args = ("--cluster", NODES_3_ZONES, "-f", str(DATA / "ha.yaml"))
    assert run(*args).exit_code == 0
    r = run(*args, "--strict")
    assert r.exit_code == 3 and "(--strict: warnings fail)" in r.stderr


def test_a_deployment_that_can_create_no_pod_exits_3() -> None:
    r = run("--cluster", NODES_3_ZONES, "-f", str(DATA / "typo-priority.yaml"))
    assert r.exit_code == 3, r.output
    assert "placement: deploy/urgent: cannot create pods" in r.stdout
    assert "no PriorityClass with name hgih-priority was found" in r.stdout


def test_github_annotations() -> None:
    r = run("--cluster", NODES_3_ZONES, "-f", str(DATA / "bad-skew.yaml"), "--format", "github")
    assert r.exit_code == 3
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("::")]
    where = str(DATA / "bad-skew.yaml").replace(":", "%3A").replace(",", "%2C")
    assert line.startswith(
        f"::error file={where},line=12,title=kubespread check admission%3A Deployment default/skewed::"
    )
    assert line.endswith("maxSkew: Invalid value: 0: must be greater than zero")


def test_input_errors_exit_1(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Deployment\n  bad: [indent\n")
    r = run("--cluster", NODES_3_ZONES, "-f", str(broken))
    assert r.exit_code == 1 and "Traceback" not in r.output
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: kubespread.io/v1alpha1\nkind: CheckPolicy\nstrcit: true\n")
    r = run("--cluster", NODES_3_ZONES, "-f", str(DATA / "spread.yaml"), "--policy", str(policy))
    assert r.exit_code == 1
    assert f'{policy}:3: strcit: unknown field "strcit"' in r.stderr
    assert "error: 1 problem in the policy file" in r.stderr
    r = run("--cluster", str(DATA / "spread.yaml"), "-f", str(DATA / "spread.yaml"))
    assert r.exit_code == 1 and "the input has no nodes" in r.stderr


def test_usage_errors_exit_2() -> None:
    assert run("-f", str(DATA / "spread.yaml")).exit_code == 2  # no cluster
    assert run("--cluster", NODES_3_ZONES).exit_code == 2  # no change
    r = run("--cluster", NODES_3_ZONES, "-f", str(DATA / "spread.yaml"), "--format", "github", "-o", "json")
    assert r.exit_code == 2
    assert (
        run("--cluster", NODES_3_ZONES, "-f", str(DATA / "spread.yaml"), "--format", "gitlab").exit_code == 2
    )


def test_changed_files_as_arguments_as_a_pre_commit_hook_passes_them() -> None:
    r = run("--cluster", NODES_3_ZONES, str(DATA / "spread.yaml"), str(DATA / "spread-pdb.yaml"))
    assert r.exit_code == 0, r.output
    assert "pdb/spread" in r.stdout and "deploy/spread" in r.stdout


def test_a_policy_switches_checks_off(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: CheckPolicy\n"
        "checks:\n  failureSurvival: {enabled: false}\n  rollout: {enabled: false}\n"
    )
    r = run(
        "--cluster",
        NODES_3_ZONES,
        "-f",
        str(DATA / "ha.yaml"),
        "-f",
        str(DATA / "ha-pdb.yaml"),
        "--policy",
        str(policy),
    )
    assert r.exit_code == 0, r.output
    assert "failureSurvival" not in r.stdout


def test_the_ci_example_fails_on_its_rollout_and_its_budget() -> None:
    r = run("--cluster", str(CI / "cluster.yaml"), "-f", str(CI / "manifests"), "-o", "json")
    assert r.exit_code == 3, r.output
    doc = json.loads(r.stdout)
    failed = {
        (c["check"], c["object"])
        for c in doc["cases"]
        if any(f["severity"] == "error" for f in c["findings"])
    }
    assert failed == {
        ("placement", "Deployment shop/api"),
        ("rollout", "Deployment shop/api"),
        ("failureSurvival", "PodDisruptionBudget shop/api"),
    }
    (rollout,) = [f for f in doc["findings"] if f["check"] == "rollout"]
    assert (rollout["suggestion"]["maxSurge"], rollout["suggestion"]["maxUnavailable"]) == (0, 1)


def _argv(command: str) -> list[str]:
    """A shell command line's words after ``kubespread``."""
    words = shlex.split(command)
    assert words[:2] == ["kubespread", "check"], command
    return words[1:]


def test_the_pre_commit_hook_runs_check_on_the_changed_manifests(monkeypatch: Any) -> None:
    config = yaml.safe_load((CI / "pre-commit-config.yaml.example").read_text())
    (hook,) = config["repos"][0]["hooks"]
    assert hook["pass_filenames"] is True
    monkeypatch.chdir(ROOT)
    changed = sorted(
        str(p.relative_to(ROOT))
        for p in (CI / "manifests").iterdir()
        if re.search(hook["files"], str(p.relative_to(ROOT)))
    )
    assert changed  # the hook's pattern matches the example's manifests
    r = CliRunner().invoke(app, [*_argv(hook["entry"]), *changed])
    assert r.exit_code == 3, r.output
    assert "rollout          deploy/shop/api" in r.stdout


def test_the_github_workflow_runs_check_with_annotations_and_junit(monkeypatch: Any, tmp_path: Path) -> None:
    workflow = yaml.safe_load((CI / "github-workflow.yaml.example").read_text())
    step = next(s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "kubespread check")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    files = ",".join(f"examples/ci/manifests/{name}" for name in ("api.yaml", "api-pdb.yaml"))
    command = step["run"].replace('"${{ steps.changed.outputs.files }}"', files)
    r = CliRunner().invoke(app, _argv(command))
    assert r.exit_code == 3, r.output
    annotations = [x for x in r.stdout.splitlines() if x.startswith("::error ")]
    assert any(x.startswith("::error file=examples/ci/manifests/api.yaml,line=12,") for x in annotations)
    xml = JUnitXml.fromfile(str(tmp_path / "reports" / "kubespread-check.xml"))
    assert xml.failures == 3
