"""The command line as a user runs it: exit codes, tables, machine output, no tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubespread import __version__
from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
runner = CliRunner()


def run(*args: str, stdin: str | None = None):
    return runner.invoke(app, list(args), input=stdin)


def test_version() -> None:
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"kubespread {__version__}"


def test_get_nodes_table_has_zones_and_allocatable() -> None:
    r = run("get", "nodes", "-f", str(EXAMPLES / "cluster"))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ZONE", "CPU", "MEMORY", "PODS", "TAINTS"]
    assert lines[1].split() == ["node1", "Ready", "zoneA", "3920m", "15Gi", "110", "<none>"]
    assert [ln.split()[2] for ln in lines[1:]] == ["zoneA", "zoneA", "zoneB", "zoneB"]


def test_get_pods_shows_node_zone_and_pending() -> None:
    r = run(
        "get", "pods", "-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "pods" / "one-constraint.yaml")
    )
    assert r.exit_code == 0, r.output
    rows = {ln.split()[1]: ln.split() for ln in r.stdout.splitlines()[1:]}
    assert rows["foo-3"][2:7] == ["Running", "node3", "zoneB", "100m", "64Mi"]
    assert rows["mypod"][2:7] == ["Pending", "<none>", "<none>", "0", "0"]


def test_get_pods_namespace_filter_and_json_output() -> None:
    r = run("get", "pods", "-f", str(EXAMPLES / "cluster"), "-n", "nothing-here")
    assert r.exit_code == 0 and "No pods found." in r.stdout
    r = run("get", "pods", "-f", str(EXAMPLES / "cluster"), "-o", "json")
    data = json.loads(r.stdout)
    assert data["kind"] == "List"
    assert [i["metadata"]["name"] for i in data["items"]] == ["foo-1", "foo-2", "foo-3"]


def test_get_nodes_yaml_output_is_a_loadable_list() -> None:
    r = run("get", "nodes", "-f", str(EXAMPLES / "cluster"), "-o", "yaml")
    data = yaml.safe_load(r.stdout)
    assert [i["metadata"]["labels"]["zone"] for i in data["items"]] == ["zoneA", "zoneA", "zoneB", "zoneB"]


def test_missing_file_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    r = run("get", "pods", "-f", str(tmp_path / "nope.yaml"))
    assert r.exit_code == 1
    assert "nope.yaml: no such file or directory" in r.stderr
    assert "Traceback" not in r.output


def test_no_input_is_a_usage_error() -> None:
    r = run("get", "pods")
    assert r.exit_code == 2 and "no input" in r.stderr


@pytest.mark.slow
def test_validate_examples_are_valid() -> None:
    r = run("validate", "-f", str(EXAMPLES))
    assert r.exit_code == 0, r.output
    assert f"{EXAMPLES / 'cluster' / 'nodes.yaml'}: 4 objects valid" in r.stdout


def test_validate_reports_every_error_of_every_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
        "  containers: [{name: app, image: x}]\n"
        "  topologySpreadConstraints:\n"
        "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
    )
    (tmp_path / "b.yaml").write_text("kind: Pod\nmetadata:\n\tname: x\n")
    r = run("validate", "-f", str(tmp_path))
    assert r.exit_code == 1
    assert (
        f"{tmp_path / 'a.yaml'}:7: Pod default/web: spec.topologySpreadConstraints[0].maxSkew: "
        "Invalid value: 0: must be greater than zero"
    ) in r.stdout
    assert f"{tmp_path / 'b.yaml'}:3: malformed YAML" in r.stdout
    assert "Traceback" not in r.output


def test_validate_json_output(tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints: [{key: a, effect: Sometimes}]\n"
    )
    r = run("validate", "-f", str(tmp_path), "-o", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["valid"] is False
    (f,) = data["files"]
    assert [e["field"] for e in f["errors"]] == ["metadata.taints[0].effect"]


def test_admit_answers_a_rejection_as_json() -> None:
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
        "  containers: [{name: app, image: x}]\n"
        "  tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 5}]\n"
    )
    r = run("admit", stdin=manifest)
    assert r.exit_code == 0
    answer = json.loads(r.stdout)
    assert answer["accepted"] is False
    assert [(c["field"], c["reason"]) for c in answer["causes"]] == [
        ("spec.tolerations[0].effect", "FieldValueInvalid")
    ]


@pytest.mark.slow
def test_get_with_label_selector() -> None:
    r = run("get", "nodes", "-f", str(EXAMPLES / "cluster"), "-l", "zone=zoneB", "-o", "json")
    assert [i["metadata"]["name"] for i in json.loads(r.stdout)["items"]] == ["node3", "node4"]
    r = run("get", "pods", "-f", str(EXAMPLES), "-l", "foo=bar,!nope")
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 7
    r = run("get", "pods", "-f", str(EXAMPLES), "-l", "a=(b")
    assert r.exit_code == 2 and "invalid label selector" in r.stderr
