"""Issue 18: ``validate`` and ``schedule`` judge a new object as a create would (so they agree
with ``admit``), and say what they assume about the input (namespaces, nodes)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml"
runner = CliRunner()

REPEATING = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: app, image: nginx}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [app]
"""
DUP = (
    'spec.topologySpreadConstraints[0][0]: Invalid value: "app": '
    "exists in both matchLabelKeys and labelSelector"
)


def run(*args: str, stdin: str | None = None):
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_validate_refuses_what_admit_refuses_after_the_match_label_keys_merge(tmp_path: Path) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(REPEATING)
    admitted = json.loads(run("admit", stdin=REPEATING).stdout)
    assert admitted["accepted"] is False
    assert [f"{c['field']}: {c['message']}" for c in admitted["causes"]] == [DUP]
    r = run("validate", "-f", str(f))
    assert r.exit_code == 1
    assert f"{f}: Pod default/web: {DUP}" in r.stdout


def test_validate_does_not_merge_a_dumped_pod_again(tmp_path: Path) -> None:
    stored = REPEATING.replace(
        "metadata: {name: web, labels: {app: web}}",
        "metadata: {name: web, uid: 0b0e6f5e-1111-4a4a-9c9c-000000000001, "
        'creationTimestamp: "2026-11-06T17:40:31Z", labels: {app: web, h: abc}}',
    ).replace(
        "labelSelector: {matchLabels: {app: web}}\n    matchLabelKeys: [app]",
        "labelSelector: {matchLabels: {app: web}, "
        "matchExpressions: [{key: h, operator: In, values: [abc]}]}\n"
        "    matchLabelKeys: [h]",
    )
    f = tmp_path / "dump.yaml"
    f.write_text(stored)
    r = run("validate", "-f", str(f))
    assert r.exit_code == 0, r.output
    assert f"{f}: 1 object valid" in r.stdout
    # the same pod as a manifest to create is merged, and the merge repeats h
    f.write_text(
        stored.replace("uid: 0b0e6f5e-1111-4a4a-9c9c-000000000001, ", "").replace(
            'creationTimestamp: "2026-11-06T17:40:31Z", ', ""
        )
    )
    r = run("validate", "-f", str(f))
    assert r.exit_code == 1
    assert 'Invalid value: "h": exists in both matchLabelKeys and labelSelector' in r.stdout


def test_schedule_stops_before_placing_a_pod_admit_would_refuse(tmp_path: Path) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(REPEATING)
    r = run("schedule", "-f", str(NODES), "-f", str(f), "--no-progress")
    assert r.exit_code == 1
    assert f"{f}:1: Pod default/web: {DUP}" in r.stderr
    assert "nothing was placed" in r.stderr


PODS = ROOT / "examples" / "pods" / "one-constraint.yaml"


def test_schedule_without_nodes_says_so_and_where_a_cluster_comes_from() -> None:
    r = run("schedule", "-f", str(PODS), "--no-progress")
    assert r.exit_code == 1
    assert "error: the input has no nodes" in r.stderr
    assert "-f examples/snapshot/cluster.yaml" in r.stderr
    assert r.stdout == ""


def test_explain_without_nodes_says_so() -> None:
    r = run("explain", "web", "-f", str(PODS), "--no-progress")
    assert r.exit_code == 1
    assert "error: the input has no nodes: explain places pods" in r.stderr
    assert r.stdout == ""
