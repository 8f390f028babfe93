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
    assert f"{f}:7: Pod default/web: {DUP}" in r.stdout  # the constraint's line


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
    assert f"{f}:7: Pod default/web: {DUP}" in r.stderr  # the constraint's own line, as validate
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


NAMESPACE_SHOP = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"
POD_IN = """apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: {ns}}}
spec:
  containers: [{{name: app, image: nginx}}]
"""
DEPLOY_IN_STAGING = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: staging}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: app, image: nginx}]
"""
ASSUMED = "warning: the input has no Namespace objects; assuming these namespaces exist:"


def _inputs(tmp_path: Path, *, with_namespace: bool) -> list[str]:
    (tmp_path / "pod.yaml").write_text(POD_IN.format(ns="prod"))
    (tmp_path / "ok.yaml").write_text(POD_IN.format(ns="kube-system").replace("name: web", "name: sys"))
    (tmp_path / "deploy.yaml").write_text(DEPLOY_IN_STAGING)
    files = [tmp_path / "pod.yaml", tmp_path / "ok.yaml", tmp_path / "deploy.yaml"]
    if with_namespace:
        (tmp_path / "ns.yaml").write_text(NAMESPACE_SHOP)
        files.insert(0, tmp_path / "ns.yaml")
    return [a for f in files for a in ("-f", str(f))]


def test_validate_refuses_a_create_in_a_namespace_the_input_does_not_have(tmp_path: Path) -> None:
    r = run("validate", *_inputs(tmp_path, with_namespace=True))
    assert r.exit_code == 1
    assert (
        f'{tmp_path / "pod.yaml"}:3: Pod prod/web: metadata.namespace: namespaces "prod" not found'
        in r.stdout
    )
    assert (
        f"{tmp_path / 'deploy.yaml'}:3: Deployment staging/api: metadata.namespace: "
        'namespaces "staging" not found'
    ) in r.stdout
    assert f"{tmp_path / 'ok.yaml'}: 1 object valid" in r.stdout  # kube-system always exists
    assert ASSUMED not in r.stderr


def test_validate_of_a_dumped_object_does_not_ask_for_its_namespace(tmp_path: Path) -> None:
    (tmp_path / "ns.yaml").write_text(NAMESPACE_SHOP)
    stored = POD_IN.format(ns="prod").replace("namespace: prod", 'namespace: prod, uid: "1"')
    (tmp_path / "pod.yaml").write_text(stored)
    r = run("validate", "-f", str(tmp_path / "ns.yaml"), "-f", str(tmp_path / "pod.yaml"))
    assert r.exit_code == 0, r.output


def test_schedule_refuses_a_create_in_a_namespace_the_input_does_not_have(tmp_path: Path) -> None:
    r = run("schedule", "-f", str(NODES), *_inputs(tmp_path, with_namespace=True), "--no-progress")
    assert r.exit_code == 1
    assert f'refused {tmp_path / "pod.yaml"}:1: Pod prod/web: namespaces "prod" not found' in r.stdout
    assert 'Deployment staging/api: namespaces "staging" not found' in r.stdout
    assert "error: the API server refused 2 object(s)" in r.stderr
    assert "kube-system/sys" in r.stdout  # placed
    j = run("schedule", "-f", str(NODES), *_inputs(tmp_path, with_namespace=True), "-o", "json")
    assert j.exit_code == 1
    assert json.loads(j.stdout)["rejections"][0] == {
        "object": "Pod prod/web",
        "source": f"{tmp_path / 'pod.yaml'}:1",
        "message": 'namespaces "prod" not found',
    }


def test_bare_manifests_are_accepted_with_one_warning_naming_the_assumed_namespaces(tmp_path: Path) -> None:
    args = _inputs(tmp_path, with_namespace=False)
    r = run("validate", *args)
    assert r.exit_code == 0, r.output
    assert r.stderr.count("warning:") == 1
    assert f"{ASSUMED} prod, staging\n" in r.stderr  # not kube-system
    s = run("schedule", "-f", str(NODES), *args, "--no-progress")
    assert s.exit_code == 0, s.output
    assert s.stderr.count("warning:") == 1
    assert f"{ASSUMED} prod, staging\n" in s.stderr
    assert "placed 3 pod(s), 0 pending" in s.stdout


def test_no_warning_when_every_namespace_is_one_every_cluster_has() -> None:
    r = run("schedule", "-f", str(NODES), "-f", str(PODS), "--no-progress")
    assert r.exit_code == 0, r.output
    assert "warning" not in r.stderr


MOUNT_WITHOUT_VOLUME = DEPLOY_IN_STAGING.replace("namespace: staging", "namespace: default").replace(
    "[{name: app, image: nginx}]",
    "[{name: app, image: nginx, volumeMounts: [{name: data, mountPath: /data}]}]",
)


def test_validate_and_schedule_refuse_a_mount_naming_no_volume(tmp_path: Path) -> None:
    f = tmp_path / "deploy.yaml"
    f.write_text(MOUNT_WITHOUT_VOLUME)
    line = 'Deployment default/api: spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"'
    r = run("validate", "-f", str(f))
    assert r.exit_code == 1
    assert f"{f}:10: {line}" in r.stdout  # the mount's own line
    s = run("schedule", "-f", str(NODES), "-f", str(f), "--no-progress")
    assert s.exit_code == 1
    assert f"{f}:10: {line}" in s.stderr  # the same line as validate
