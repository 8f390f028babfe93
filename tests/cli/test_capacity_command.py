"""``kubespread capacity``: both answers in JSON, workloads as templates (their running
replicas count), and bad input refused on stderr without a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"matchLabels": {"app": "web"}}


def node(name: str, zone: str, cpu: str = "3") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod_spec() -> dict[str, Any]:
    return {
        "containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}],
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": WEB}
            for key in (ZONE, HOST)
        ],
    }


def web_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": pod_spec(),
    }


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": WEB,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec()},
        },
    }


def write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["capacity", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    return write(tmp_path / "cluster.yaml", node("n0", "b"), node("n1", "c"), node("n2", "b"))


def test_json_has_both_answers(tmp_path: Path, cluster: str) -> None:
    code, stdout, stderr = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", web_pod()), "-o", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["greedy"], doc["maximum"], doc["proven"]) == (5, 7, True)
    assert doc["perDomain"] == {ZONE: {"b": 4, "c": 3}}
    assert doc["limitedBy"] == [f"topology spread {ZONE} maxSkew 1"]


def test_table(tmp_path: Path, cluster: str) -> None:
    code, stdout, _ = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", web_pod()))
    assert code == 0
    assert "greedy" in stdout and "proven optimal" in stdout and "limited by:" in stdout


def test_a_workloads_running_replicas_count(tmp_path: Path) -> None:
    running = web_pod() | {"metadata": {"name": "web-0", "labels": {"app": "web"}}}
    running["spec"] = pod_spec() | {"nodeName": "n1"}
    cluster = write(tmp_path / "cluster.yaml", node("n0", "b"), node("n1", "c"), node("n2", "b"), running)
    code, stdout, stderr = run(
        "-f", cluster, "-f", write(tmp_path / "deploy.yaml", deployment()), "-o", "json"
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["template"] == "Deployment default/web"
    assert doc["maximum"] == 6  # 7 in all, one of them already running
    assert doc["perDomain"] == {ZONE: {"b": 4, "c": 2}}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--time-limit", "0"], 2, "more than 0 seconds"),
        (["--max", "0"], 2, "--max"),
    ],
)
def test_bad_options(tmp_path: Path, cluster: str, args: list[str], code: int, message: str) -> None:
    got, _, stderr = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", web_pod()), *args)
    assert got == code
    assert message in stderr and "Traceback" not in stderr


def test_a_template_that_is_not_a_pod_or_workload(tmp_path: Path, cluster: str) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    code, _, stderr = run("-f", cluster, "-f", write(tmp_path / "ns.yaml", ns))
    assert code == 1
    assert "TEMPLATE is a Namespace" in stderr


def test_no_nodes(tmp_path: Path) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    code, _, stderr = run("-f", write(tmp_path / "c.yaml", ns), "-f", write(tmp_path / "pod.yaml", web_pod()))
    assert code == 1
    assert "no nodes" in stderr


def test_one_file_is_not_enough(cluster: str) -> None:
    code, _, stderr = run("-f", cluster)
    assert code == 2
    assert "-f TEMPLATE" in stderr


def test_required_pod_affinity_is_modelled(tmp_path: Path, cluster: str) -> None:
    """Zone affinity to itself with the zone and hostname spreads: the scheduler's first pod
    goes to zone b; the second must join it (affinity) but the zone spread forbids b: 2
    against c: 0, so greedy stops at 1. In the final state both zones hold web pods (each
    pod has another in its zone): b 4 (2+2) and c 3 hold 7, every pod passing the Filter."""
    pod = web_pod()
    term = {"labelSelector": WEB, "topologyKey": ZONE}
    pod["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    code, stdout, stderr = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", pod), "-o", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["greedy"], doc["maximum"], doc["proven"]) == (1, 7, True)
    assert doc["perDomain"][ZONE] == {"b": 4, "c": 3}


def test_scheduler_config_and_scheduler_name(tmp_path: Path, cluster: str) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n- schedulerName: other\n"
    )
    pod = web_pod()
    pod["spec"]["schedulerName"] = "other"
    template = write(tmp_path / "pod.yaml", pod)
    code, stdout, stderr = run("-f", cluster, "-f", template, "--scheduler-config", str(cfg), "-o", "json")
    assert code == 0, stderr
    assert json.loads(stdout)["maximum"] == 7
    code, _, stderr = run("-f", cluster, "-f", template)
    assert code == 1
    assert 'scheduler "other"' in stderr


def test_the_template_is_admitted_as_its_replicas_would_be(tmp_path: Path, cluster: str) -> None:
    """Defaulting gives a container with limits only its requests: 1 CPU each, 9 on 3x3."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lim"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]},
    }
    code, stdout, stderr = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", pod), "-o", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["greedy"], doc["maximum"]) == (9, 9)
    assert doc["limitedBy"] == ["cpu on nodes n0,n1,n2"]


def test_pods_listed_before_their_nodes_still_count(tmp_path: Path) -> None:
    """A directory lists pods.yaml before zz-nodes.yaml: the bound pods still find their nodes
    (nodes go in first), so the one running pod takes its cpu."""
    (tmp_path / "cluster").mkdir()
    running = {**web_pod(), "metadata": {"name": "running", "labels": {"app": "web"}}}
    running["spec"] = {**pod_spec(), "nodeName": "n0"}
    write(tmp_path / "cluster" / "pods.yaml", running)
    write(tmp_path / "cluster" / "zz-nodes.yaml", node("n0", "b", cpu="1"), node("n1", "c", cpu="1"))
    code, stdout, stderr = run(
        "-f", str(tmp_path / "cluster"), "-f", write(tmp_path / "pod.yaml", web_pod()), "-o", "json"
    )
    assert code == 0, stderr
    assert "left out" not in stderr
    assert json.loads(stdout)["maximum"] == 1  # n1 only: n0's cpu is the running pod's


def workload(kind: str, name: str, replicas: int, cpu: str) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]},
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def one_cpu_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "one", "labels": {"app": "one"}},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
    }


@pytest.fixture
def busy_cluster(tmp_path: Path) -> str:
    """9 nodes of 4 CPU (36 in all) and workloads asking 33 of them: 9 x 3 CPU in a
    Deployment, 6 x 1 CPU in a Deployment and a StatefulSet (3 each)."""
    nodes = [node(f"n{i}", "abc"[i % 3], cpu="4") for i in range(9)]
    workloads = [
        workload("Deployment", "big", 9, "3"),
        workload("Deployment", "small", 3, "1"),
        workload("StatefulSet", "db", 3, "1"),
    ]
    return write(tmp_path / "cluster.yaml", *nodes, *workloads)


def test_the_cluster_files_workloads_run_their_pods_before_counting(
    tmp_path: Path, busy_cluster: str
) -> None:
    """The issue's numbers: 36 CPU, 33 requested by the cluster files' workloads, a 1-CPU
    template: 3 more replicas (it used to answer 36, the workloads' pods never created)."""
    code, stdout, stderr = run(
        "-f", busy_cluster, "-f", write(tmp_path / "one.yaml", one_cpu_pod()), "-o", "json"
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert (doc["greedy"], doc["maximum"], doc["proven"]) == (3, 3, True)


def test_the_library_counts_on_the_settled_baseline(busy_cluster: str, tmp_path: Path) -> None:
    from kubespread.api.core import Pod
    from kubespread.io import load
    from kubespread.plan.capacity import greedy, greedy_counts, maximum
    from kubespread.scheduler import default_profile
    from kubespread.sim.baseline import settle

    baseline = settle(load([busy_cluster]))
    assert sum(1 for p in baseline.cluster.pods.values() if p.spec.node_name) == 15
    template = Pod.from_dict(one_cpu_pod())
    before = dict(baseline.cluster.pods)
    assert greedy(baseline, template, default_profile()) == 3
    assert dict(baseline.cluster.pods) == before  # the clones were a trial
    best = maximum(
        baseline, template, default_profile(), hint=greedy_counts(baseline, template, default_profile())
    )
    assert (best.maximum, best.proven) == (3, True)


def test_a_dumps_pending_pods_are_placed_before_counting(tmp_path: Path) -> None:
    """A pending pod of a dump (stored: it has a uid) takes its room first: 2 nodes of 3 CPU
    and a pending 2-CPU pod leave 4 CPU for 1-CPU replicas (it used to answer 6)."""
    pending = {**one_cpu_pod(), "metadata": {"name": "waiting", "namespace": "default", "uid": "u-1"}}
    pending["spec"] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}
    cluster = write(tmp_path / "dump.yaml", node("n0", "b"), node("n1", "c"), pending)
    code, stdout, stderr = run("-f", cluster, "-f", write(tmp_path / "one.yaml", one_cpu_pod()), "-o", "json")
    assert code == 0, stderr
    assert (json.loads(stdout)["greedy"], json.loads(stdout)["maximum"]) == (4, 4)


def test_a_cluster_that_does_not_settle_is_refused_with_every_problem(tmp_path: Path) -> None:
    orphan = {**web_pod(), "spec": {**pod_spec(), "nodeName": "nowhere"}}
    cluster = write(tmp_path / "c.yaml", node("n0", "b"), orphan)
    code, _, stderr = run("-f", cluster, "-f", write(tmp_path / "pod.yaml", web_pod()))
    assert code == 1
    assert "nowhere" in stderr and "nothing was counted" in stderr and "Traceback" not in stderr
