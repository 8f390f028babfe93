"""``kubespread schedule``: placements in order, workloads expanded, spread, FitErrors,
snapshots kept as they are, located input errors, 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import docs_conflict_cluster, node, pod, spread, two_constraints_pod, write

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str, columns: int = 80, terminal: bool = False) -> tuple[int, str, str]:
    """``terminal``: as on a terminal of ``columns`` (TTY_COMPATIBLE); else as to a pipe."""
    env = {"COLUMNS": str(columns), "TTY_COMPATIBLE": "1" if terminal else "0"}
    result = CliRunner().invoke(app, ["schedule", *args, "--no-progress"], env=env)
    return result.exit_code, result.stdout, result.stderr


def run_json(*args: str) -> dict:
    code, stdout, stderr = run(*args, "-o", "json")
    assert code == 0, stderr
    return json.loads(stdout)


def test_conflicting_constraints_leave_the_pod_pending_with_kube_schedulers_message(tmp_path: Path) -> None:
    cluster, mypod = docs_conflict_cluster(tmp_path), two_constraints_pod(tmp_path)
    code, stdout, _ = run("-f", str(cluster), "-f", str(mypod))
    assert code == 0
    assert "placed 0 pod(s), 1 pending" in stdout
    assert "pending mypod: 0/3 nodes are available: 3 node(s) didn't match pod topology" in stdout
    doc = run_json("-f", str(cluster), "-f", str(mypod))
    assert doc["placements"] == []
    assert doc["pending"] == [
        {
            "namespace": "default",
            "name": "mypod",
            "message": "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. "
            "no new claims to deallocate, preemption: 0/3 nodes are available: "
            "3 No preemption victims found for incoming pod.",
        }
    ]


def test_the_docs_two_constraints_pod_goes_to_node4(tmp_path: Path) -> None:
    """Docs, "multiple topology spread constraints": node4 is the only valid placement, so it
    is not scored."""
    doc = run_json("-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "pods" / "two-constraints.yaml"))
    (placed,) = doc["placements"]
    assert (placed["name"], placed["node"], placed["score"], placed["feasibleNodes"]) == (
        "mypod",
        "node4",
        None,
        1,
    )


def test_a_deployment_becomes_pods_placed_within_its_spread(tmp_path: Path) -> None:
    doc = run_json("-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "workloads" / "web-deployment.yaml"))
    placed = doc["placements"]
    assert len(placed) == 6
    # owner: the Deployment; workload: its ReplicaSet (before: workload was the Deployment)
    assert {(p["owner"]["kind"], p["owner"]["name"]) for p in placed} == {("Deployment", "web")}
    controllers = {(p["workload"]["kind"], p["workload"]["name"][:4]) for p in placed}
    assert controllers == {("ReplicaSet", "web-")}
    assert all(p["score"] is not None and p["zone"] in ("zoneA", "zoneB") for p in placed)
    zone = next(r for r in doc["spread"] if r["topologyKey"] == "topology.kubernetes.io/zone")
    # the pods' controller, and the Deployment above it (before: workload was the Deployment)
    assert zone["owner"] == {"kind": "Deployment", "name": "web"}
    assert zone["workload"]["kind"] == "ReplicaSet" and zone["workload"]["name"].startswith("web-")
    assert sum(zone["domains"].values()) == 6
    assert zone["skew"] <= zone["maxSkew"] and zone["withinMaxSkew"]


def test_objects_are_placed_in_the_order_given(tmp_path: Path) -> None:
    """Hostname anti-affinity on 2 nodes: the first two pods given fit, the third is pending."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    nodes = write(tmp_path / "nodes.yaml", [node("n1", "a"), node("n2", "b")])
    pods = write(tmp_path / "pods.yaml", [pod(f"db-{i}", {"app": "db"}, affinity=anti) for i in (3, 1, 2)])
    doc = run_json("-f", str(nodes), "-f", str(pods))
    assert [p["name"] for p in doc["placements"]] == ["db-3", "db-1"]
    assert [p["step"] for p in doc["placements"]] == [0, 1]
    assert [p["name"] for p in doc["pending"]] == ["db-2"]
    assert "didn't match pod anti-affinity rules" in doc["pending"][0]["message"]


def test_a_kubectl_snapshot_keeps_bound_pods_and_places_pending_ones(tmp_path: Path) -> None:
    """A List as kubectl prints it (uid, managedFields, status): the bound pod stays on n2 even
    though n1 would score better now; the pending pod of the dump is placed."""
    managed = [
        {
            "manager": "kube-scheduler",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-11-02T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {}}},
            "subresource": "status",
        }
    ]
    bound = pod("old", {"app": "x"}, node_name="n2")
    pending = pod("new", {"app": "x"})
    for i, p in enumerate((bound, pending)):
        p["metadata"].update(
            namespace="prod",
            uid=f"0e6b3c1a-0000-4000-8000-00000000000{i}",
            resourceVersion=str(100 + i),
            creationTimestamp="2026-11-02T10:00:00Z",
            managedFields=managed,
        )
    bound["status"] = {"phase": "Running", "podIP": "10.0.0.7", "hostIP": "10.1.0.2"}
    pending["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "uid": "u"}}
    dump = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [node("n1", "a", cpu="8"), node("n2", "b", cpu="1"), bound, pending, ns],
        "metadata": {"resourceVersion": ""},
    }
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump, sort_keys=False))
    doc = run_json("-f", str(path))
    pods = {p["name"]: p["node"] for p in doc["final"]["pods"]}
    assert pods == {"old": "n2", "new": "n1"}
    assert [p["name"] for p in doc["placements"]] == ["new"]


def test_invalid_new_objects_stop_the_run_with_every_problem_located(tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.yaml", [node("n1", "a")])
    bad = write(
        tmp_path / "bad.yaml",
        [
            pod("a", {"foo": "bar"}, topologySpreadConstraints=[spread("zone", max_skew=0)]),
            pod("b", {"foo": "bar"}, topologySpreadConstraints=[spread("zone", when="Sometimes")]),
        ],
    )
    code, stdout, stderr = run("-f", str(nodes), "-f", str(bad))
    assert code == 1
    assert stdout == ""
    assert "Pod default/a: spec.topologySpreadConstraints[0].maxSkew" in stderr
    assert "Pod default/b: spec.topologySpreadConstraints[0].whenUnsatisfiable" in stderr
    assert "error: 2 problems in the input; nothing was placed" in stderr
    assert "Traceback" not in stderr


def test_scheduler_config_default_constraints_spread_a_plain_deployment(tmp_path: Path) -> None:
    """A List-defaulted hostname constraint (DoNotSchedule, maxSkew 1) from the configuration
    shows in the spread as a default and holds the Deployment to one pod per node first."""
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
        "      defaultingType: List\n      defaultConstraints:\n"
        "      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}\n"
    )
    nodes = write(tmp_path / "nodes.yaml", [node(f"n{i}", "a") for i in range(3)])
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "plain"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "plain"}},
            "template": {
                "metadata": {"labels": {"app": "plain"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    dep = write(tmp_path / "deploy.yaml", [deploy])
    code, stdout, stderr = run("-f", str(nodes), "-f", str(dep), "-o", "json", "--scheduler-config", str(cfg))
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert sorted(p["node"] for p in doc["placements"]) == ["n0", "n1", "n2"]
    (row,) = doc["spread"]
    assert row["defaulted"] and row["topologyKey"] == "kubernetes.io/hostname"
    assert row["domains"] == {"n0": 1, "n1": 1, "n2": 1}
    code, stdout, _ = run("-f", str(nodes), "-f", str(dep), "--scheduler-config", str(cfg))
    assert "hostname (default)" in stdout


def test_a_bad_scheduler_config_is_located(tmp_path: Path) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 120\n"
    )
    code, _, stderr = run("-f", str(EXAMPLES / "cluster"), "--scheduler-config", str(cfg))
    assert code == 1
    assert "percentageOfNodesToScore" in stderr and "sched.yaml" in stderr


@pytest.mark.slow
def test_yaml_output_is_the_same_document(tmp_path: Path) -> None:
    cluster, mypod = docs_conflict_cluster(tmp_path), two_constraints_pod(tmp_path)
    code, stdout, _ = run("-f", str(cluster), "-f", str(mypod), "-o", "yaml")
    assert code == 0
    assert yaml.safe_load(stdout) == run_json("-f", str(cluster), "-f", str(mypod))


def test_table_fits_80_columns_with_long_node_names(tmp_path: Path) -> None:
    """AWS-style names lose their shared DNS suffix (said once) and every line fits."""
    names = [f"ip-10-20-{i}-{i * 7}.eu-west-1.compute.internal" for i in range(6)]
    nodes = write(tmp_path / "nodes.yaml", [node(n, f"eu-west-1{'abc'[i % 3]}") for i, n in enumerate(names)])
    code, stdout, _ = run(
        "-f", str(nodes), "-f", str(EXAMPLES / "workloads" / "web-deployment.yaml"), terminal=True
    )
    assert code == 0
    assert "node names end in .eu-west-1.compute.internal" in stdout
    assert "ip-10-20-0-0 " in stdout
    assert max(len(line) for line in stdout.splitlines()) <= 80


def test_a_scheduler_configuration_among_the_manifests_points_to_the_option(tmp_path: Path) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    code, _, stderr = run("-f", str(EXAMPLES / "cluster"), "-f", str(cfg))
    assert code == 1
    assert "is not a cluster object" in stderr and "--scheduler-config" in stderr


def test_a_tie_across_zones_is_said_and_carried_in_json(tmp_path: Path) -> None:
    """Three equal nodes in three zones: the pod goes to the first the scheduler's node tree
    lists (the input's first node), and the placement says its zone was a coin toss."""
    cluster = write(tmp_path / "cluster.yaml", [node("n-b", "b"), node("n-a", "a"), node("n-c", "c")])
    solo = write(tmp_path / "solo.yaml", [pod("solo", {"app": "solo"})])
    code, stdout, _ = run("-f", str(cluster), "-f", str(solo))
    assert code == 0
    assert "1 placement(s) tied across zones" in " ".join(stdout.split())
    (placed,) = run_json("-f", str(cluster), "-f", str(solo))["placements"]
    assert placed["node"] == "n-b"  # first found, not the smallest name
    assert placed["tiedNodes"] == 3 and placed["tiedZones"] == ["a", "b", "c"]
    assert placed["unexaminedNodes"] == 0
    code, wide, _ = run("-f", str(cluster), "-f", str(solo), "-o", "wide")
    assert (
        wide.splitlines()[1].split()[-2:] == ["feasible", "tied"] and wide.splitlines()[2].split()[-1] == "3"
    )


def test_no_tie_no_line(tmp_path: Path) -> None:
    cluster = write(tmp_path / "cluster.yaml", [node("n-a", "a", cpu="8"), node("n-b", "b")])
    solo = write(tmp_path / "solo.yaml", [pod("solo", {"app": "solo"})])
    code, stdout, _ = run("-f", str(cluster), "-f", str(solo))
    assert code == 0 and "tied across zones" not in stdout
