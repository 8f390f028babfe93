"""A pending pod the scheduler never tried says why in ``schedule -o json`` as in the table
(issue 36: the JSON's message was empty for a pod whose schedulerName has no profile)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

OBJECTS = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: default}
spec: {schedulerName: nobody, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: default}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: x}]
"""


def test_an_untried_pod_says_why_in_json_and_in_the_table(tmp_path: Path) -> None:
    f = tmp_path / "objects.yaml"
    f.write_text(OBJECTS)
    runner = CliRunner()
    out = runner.invoke(app, ["schedule", "-f", str(f), "-o", "json"])
    assert out.exit_code == 0, out.output
    pending = {p["name"]: p["message"] for p in json.loads(out.stdout)["pending"]}
    assert pending == {
        "elsewhere": 'not scheduled: no scheduler profile for schedulerName "nobody"',
        "gated": "Scheduling is blocked due to non-empty scheduling gates: example.com/wait",
    }
    table = runner.invoke(app, ["schedule", "-f", str(f)])
    assert table.exit_code == 0
    for message in pending.values():
        assert message in table.stdout
