"""``kubespread simulate``: admission options, located errors, the table."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
"""


def scenario(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "nodes.yaml").write_text(NODES)
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"
        "cluster: [nodes.yaml]\nsteps:\n" + textwrap.dedent(steps)
    )
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["simulate", *args, "--no-progress"])
    return result.exit_code, result.stdout, result.stderr


def anti_pod(key: str, all_namespaces: bool) -> str:
    ns = "namespaceSelector: {}, " if all_namespaces else ""
    return f"""\
    - apply:
        apiVersion: v1
        kind: Pod
        metadata: {{name: p, labels: {{app: p}}}}
        spec:
          containers: [{{name: c, image: i}}]
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
              - {{{ns}topologyKey: {key}, labelSelector: {{matchLabels: {{app: x}}}}}}
    """


def test_the_hard_anti_affinity_limit_refuses_all_namespaces_beyond_the_node(tmp_path: Path) -> None:
    path = scenario(tmp_path, anti_pod("topology.kubernetes.io/zone", all_namespaces=True))
    code, out, _ = run(str(path), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    (refused,) = doc["steps"][0]["rejections"]
    assert refused["object"] == "Pod default/p"
    assert "forbidden" in refused["message"] and "topologyKey" in refused["message"]
    assert doc["final"]["pods"] == []
    code, out, _ = run(str(path), "-o", "json", "--no-hard-anti-affinity-limit")
    assert [p["node"] for p in json.loads(out)["final"]["pods"]] == ["n1"]


def test_kube_limit_refuses_any_topology_but_the_hostname(tmp_path: Path) -> None:
    path = scenario(tmp_path, anti_pod("topology.kubernetes.io/zone", all_namespaces=False))
    code, out, _ = run(str(path), "-o", "json")
    assert code == 0
    assert json.loads(out)["steps"][0]["rejections"] == []
    code, out, _ = run(str(path), "-o", "json", "--limit-pod-hard-anti-affinity-topology")
    assert code == 0
    (refused,) = json.loads(out)["steps"][0]["rejections"]
    assert "only key kubernetes.io/hostname is allowed" in refused["message"]


def test_a_bad_scenario_is_reported_with_places_and_no_traceback(tmp_path: Path) -> None:
    path = scenario(tmp_path, "- scale: {kind: Deployment, name: web, replicas: -2}\n- advance: later\n")
    code, out, err = run(str(path))
    assert code == 1
    assert f"{path}: steps[0].scale.replicas: must be a non-negative integer, got -2" in err
    assert f"{path}: steps[1].advance: must be a duration" in err
    assert "error: 2 problems in the scenario" in err
    assert "Traceback" not in err + out


def test_a_step_on_a_missing_object_stops_with_its_place(tmp_path: Path) -> None:
    path = scenario(tmp_path, "- scale: {kind: Deployment, name: web, replicas: 2}\n")
    code, _, err = run(str(path))
    assert code == 1
    assert f"error: {path}: steps[0].scale: Deployment default/web not found" in err


def test_the_table_shows_steps_pending_pods_and_why(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        """\
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
        - node: {name: n1, action: cordon}
        """,
    )
    code, out, _ = run(str(path))
    assert code == 0
    assert "step 1: apply Deployment default/web" in out
    assert "step 2: cordon node n1" in out
    assert "pods: 2 running, 1 pending" in out
    assert "Insufficient cpu" in out
    # no constraint of its own: the default ones the scheduler applies (System defaulting)
    assert "hostname (default)  n1=2" in out and "0/3 soft" in out
    assert max(len(line) for line in out.splitlines() if not line.startswith(("  pending", "  hint:"))) <= 80
