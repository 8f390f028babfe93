"""A StatefulSet's containers mount the volumes of its volumeClaimTemplates, which its pod
template does not list: kube-apiserver checks a StatefulSet's template for its metadata only
(ValidatePodTemplateSpecForStatefulSet), and the controller gives each pod a volume per claim
(updateStorage). A mount naming nothing is refused when the pod is created, and shown."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "examples" / "cluster" / "nodes.yaml"
runner = CliRunner()


def statefulset(mount: str, claims: bool) -> str:
    text = f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  serviceName: db
  replicas: 2
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      containers:
      - name: db
        image: postgres
        volumeMounts: [{{name: {mount}, mountPath: /data}}, {{name: cfg, mountPath: /etc/db}}]
      volumes: [{{name: cfg, configMap: {{name: db}}}}]
"""
    if claims:
        text += """  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
    return text


def test_claim_template_mounts_are_valid_and_each_pod_gets_its_claim(tmp_path: Path) -> None:
    f = tmp_path / "sts.yaml"
    f.write_text(statefulset("data", claims=True))
    assert runner.invoke(app, ["validate", "-f", str(f)]).exit_code == 0
    r = runner.invoke(app, ["schedule", "-f", str(NODES), "-f", str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert sorted(p["name"] for p in doc["placements"]) == ["db-0", "db-1"]
    assert doc["failedCreates"] == []


def test_a_mount_naming_no_volume_passes_the_statefulset_and_fails_its_pods(tmp_path: Path) -> None:
    f = tmp_path / "sts.yaml"
    f.write_text(statefulset("data", claims=False))
    assert runner.invoke(app, ["validate", "-f", str(f)]).exit_code == 0  # as kube-apiserver
    r = runner.invoke(app, ["schedule", "-f", str(NODES), "-f", str(f)])
    assert r.exit_code == 0
    assert "placed 0 pod(s)" in r.output
    assert (
        "failed StatefulSet default/db: create Pod db-0 in StatefulSet db failed error: "
        'Pod "db-0" is invalid: ' in r.output
    )
    assert 'spec.containers[0].volumeMounts[0].name: Not found: "data"' in r.output


def test_the_pod_volumes_are_the_claims_then_the_templates_own() -> None:
    from kubespread.io.loader import load_text
    from kubespread.sim.placement import place

    manifests = load_text(NODES.read_text() + "---\n" + statefulset("data", claims=True), "in")
    result = place(manifests)
    pod = result.sim.cluster.pods["default/db-1"]
    assert (pod.spec.extra or {})["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}},
        {"name": "cfg", "configMap": {"name": "db"}},
    ]
