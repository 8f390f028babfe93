"""Issue 18's reproductions, as a user runs them: strict fields with --validate, API integer
widths, hostile YAML. Every one ends in exit 1 with the file, object and field path, or is
accepted; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml"
runner = CliRunner()

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx
        resoures: {requests: {cpu: 100m}}
"""
TYPO = "spec.template.spec.containers[0].resoures"


def run(*args: str, stdin: str | bytes | None = None):
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_a_typo_is_refused_by_default_with_its_path_and_a_suggestion(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOY)
    for command in (["schedule"], ["get", "pods"], ["validate"]):
        r = run(*command, "-f", str(NODES), "-f", str(f))
        assert r.exit_code == 1, (command, r.output)
        assert str(f) in r.output, (command, r.output)
        want = f'Deployment default/web: {TYPO}: unknown field "resoures" (did you mean "resources"?)'
        assert want in r.output, (command, r.output)


def test_validate_warn_loads_the_manifest_and_says_what_was_ignored(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOY)
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--validate=warn", "-o", "json")
    assert r.exit_code == 0, r.output
    assert f"warning: {f}" in r.output and TYPO in r.output
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--validate", "ignore", "-o", "json")
    assert r.exit_code == 0 and "resoures" not in r.output.split("{", 1)[0]
    assert "warning" not in r.output


def test_the_strict_hint_names_the_way_out(tmp_path: Path) -> None:
    f = tmp_path / "web.yaml"
    f.write_text(DEPLOY)
    r = run("schedule", "-f", str(NODES), "-f", str(f))
    assert "--validate=warn" in r.output


def test_duplicate_keys_are_refused_in_yaml_and_json(tmp_path: Path) -> None:
    y = tmp_path / "dup.yaml"
    y.write_text(DEPLOY.replace("        image: nginx\n", "        image: nginx\n        image: httpd\n"))
    r = run("validate", "-f", str(y))
    assert r.exit_code == 1
    assert 'spec.template.spec.containers[0].image: duplicate field "image" (line 13)' in r.output
    j = tmp_path / "dup.json"
    j.write_text('{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "name": "b"}}')
    r = run("validate", "-f", str(j))
    assert r.exit_code == 1 and 'metadata.name: duplicate field "name"' in r.output


def test_an_int32_overflow_is_refused_before_anything_runs(tmp_path: Path) -> None:
    f = tmp_path / "big.yaml"
    f.write_text(
        DEPLOY.replace("replicas: 3", "replicas: 2147483648").replace("        resoures:", "        x:")
    )
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--validate=ignore")
    assert r.exit_code == 1
    assert (
        "Deployment default/web: spec.replicas: cannot unmarshal number 2147483648 into a field of type int32"
        in r.output
    )


def test_a_scenario_carries_the_same_checks(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"""apiVersion: kubespread.io/v1alpha1
kind: Scenario
metadata: {{name: s}}
cluster: [{NODES}]
steps:
- apply:
    apiVersion: v1
    kind: Pod
    metadata: {{name: p}}
    spec:
      containers: [{{name: c, image: x}}]
      topologySpreadConstraints: [{{maxSkew: 1, topologyKy: zone, whenUnsatisfiable: DoNotSchedule}}]
"""
    )
    r = run("simulate", str(scenario))
    assert r.exit_code == 1
    assert 'spec.topologySpreadConstraints[0].topologyKy: unknown field "topologyKy"' in r.output
    assert "steps[0].apply" in r.output


@pytest.mark.parametrize(
    ("body", "expect"),
    [
        ("spec: {foo: " + "[" * 1000 + "]" * 1000 + "}\n", "nesting depth"),
        ("spec: {priority: " + "9" * 5000 + "}\n", "spec.priority: cannot unmarshal string"),
    ],
)
def test_hostile_yaml_is_a_located_error_in_every_command(tmp_path: Path, body: str, expect: str) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n" + body)
    for command in (["validate"], ["schedule", "-f", str(NODES)], ["get", "pods"]):
        r = run(*command, "-f", str(f))
        assert r.exit_code == 1 and str(f) in r.output and expect in r.output, (command, r.output)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        f"cluster: [{NODES}, {f}]\n"
    )
    r = run("simulate", str(scenario))
    assert r.exit_code == 1 and expect in r.output, r.output
    r = run("admit", stdin=f.read_text())
    assert r.exit_code == 0 and '"code": 400' in r.output


def test_invalid_utf8_on_stdin_and_in_files(tmp_path: Path) -> None:
    raw = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p\xff}\n"
    r = run("admit", stdin=raw)
    assert r.exit_code == 0 and '"code": 400' in r.output and "invalid UTF-8" in r.output
    f = tmp_path / "bad.yaml"
    f.write_bytes(raw)
    r = run("validate", "-f", str(f))
    assert r.exit_code == 1 and f"{f}:3: cannot read: invalid UTF-8: byte 0xff" in r.output
    r = run("validate", "-f", "-", stdin=raw)
    assert r.exit_code == 1 and "<stdin>:3: cannot read: invalid UTF-8" in r.output


def test_a_misspelt_plugin_argument_is_refused_as_kube_scheduler_does(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text(
        """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultConstraint: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
      defaultingType: List
"""
    )
    r = run("schedule", "-f", str(NODES), "--scheduler-config", str(config))
    assert r.exit_code == 1
    assert (
        "profiles[0].pluginConfig[0].args.defaultConstraint: Invalid value: "
        'unknown field "defaultConstraint" (did you mean "defaultConstraints"?)'
    ) in r.output
