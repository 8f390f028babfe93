"""``kubespread diff``: two versions of the same manifests (or two scheduler configurations)
scheduled as ``schedule`` does; per pod the node before and after, per workload and
constraint the spread and skew before and after (``schedule``'s own rows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import node, write

ZONE = "topology.kubernetes.io/zone"


def deployment(replicas: int, **spread: Any) -> dict[str, Any]:
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        **spread,
    }
    container = {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [container], "topologySpreadConstraints": [constraint]},
            },
        },
    }


def cluster(tmp_path: Path) -> Path:
    """Zones a, b and c; c's only node is tainted (in maintenance)."""
    tainted = node("c1", "c", taints=[{"key": "maintenance", "effect": "NoSchedule"}])
    return write(tmp_path / "nodes.yaml", [node("a1", "a"), node("b1", "b"), tainted])


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["diff", *args, "--no-progress"], env={"TTY_COMPATIBLE": "0"})
    return result.exit_code, result.stdout, result.stderr


def test_node_taints_policy_honor_places_what_ignore_left_pending(tmp_path: Path) -> None:
    """Under Ignore the tainted zone c counts with 0 pods, so a and b hold one each and two
    stay pending; under Honor c is left out and all four fit."""
    before = write(tmp_path / "before.yaml", [deployment(4)])
    after = write(tmp_path / "after.yaml", [deployment(4, nodeTaintsPolicy="Honor")])
    args = ["-f", str(cluster(tmp_path)), "--before", str(before), "--after", str(after)]
    code, stdout, stderr = run(*args, "-o", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["before"]["pending"] == 2 and doc["after"]["pending"] == 0
    assert sorted(p["change"] for p in doc["pods"]) == ["placed", "placed", "same", "same"]
    assert {p["owner"] for p in doc["pods"]} == {"deploy/web"}  # (before: named workload)
    placed = [p for p in doc["pods"] if p["change"] == "placed"]
    assert {p["after"]["zone"] for p in placed} == {"a", "b"} and all(
        p["before"]["node"] is None for p in placed
    )
    (zone,) = [r for r in doc["spread"] if r["topologyKey"] == ZONE]
    assert zone["owner"] == "deploy/web" and "workload" not in zone  # (before: named workload)
    assert (zone["before"]["domains"], zone["before"]["skew"]) == ({"a": 1, "b": 1, "c": 0}, 1)
    assert (zone["after"]["domains"], zone["after"]["skew"], zone["after"]["leftOutDomains"]) == (
        {"a": 2, "b": 2},
        0,
        ["c"],
    )
    code, stdout, _ = run(*args)
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "4 pod(s): 2 changed, 2 on the same node; pending 2 -> 0"
    assert sum(line.split()[1:3] == ["placed", "pending"] for line in lines) == 2
    (row,) = [line for line in lines if line.startswith("deploy/web")]
    assert row.split() == ["deploy/web", "zone", "a=1", "b=1", "c=0", "1/1", "a=2", "b=2", "(c=0)", "0/1"]


def test_two_scheduler_configurations_of_the_same_manifests(tmp_path: Path) -> None:
    """MostAllocated without PodTopologySpread's scores packs the second replica beside the
    first; the default profile spreads it."""
    default = tmp_path / "default.yaml"
    default.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    packing = tmp_path / "packing.yaml"
    packing.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled:\n"
        "      - name: PodTopologySpread\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
        "      scoringStrategy:\n        type: MostAllocated\n"
    )
    web = deployment(2)
    del web["spec"]["template"]["spec"]["topologySpreadConstraints"]
    files = ["-f", str(cluster(tmp_path)), "-f", str(write(tmp_path / "web.yaml", [web]))]
    code, stdout, stderr = run(
        *files, "--before-config", str(default), "--after-config", str(packing), "-o", "json"
    )
    assert code == 0, stderr
    doc = json.loads(stdout)
    before = {p["before"]["node"] for p in doc["pods"]}
    after = {p["after"]["node"] for p in doc["pods"]}
    assert len(before) == 2 and len(after) == 1
    assert [p["change"] for p in doc["pods"]].count("moved") == 1


def test_the_same_version_twice_changes_nothing(tmp_path: Path) -> None:
    web = write(tmp_path / "web.yaml", [deployment(2)])
    code, stdout, _ = run("-f", str(cluster(tmp_path)), "--before", str(web), "--after", str(web))
    assert code == 0
    assert stdout.splitlines() == [
        "2 pod(s): 0 changed, 2 on the same node; pending 0 -> 0",
        "",
        "spread: the same before and after",
    ]


def test_a_half_given_pair_is_a_usage_error(tmp_path: Path) -> None:
    web = write(tmp_path / "web.yaml", [deployment(2)])
    code, _, stderr = run("-f", str(cluster(tmp_path)), "--before", str(web))
    assert code == 2 and "give both --before and --after" in stderr
    code, _, stderr = run("-f", str(cluster(tmp_path)))
    assert code == 2 and "nothing to compare" in stderr


def test_an_object_refused_in_one_version_is_said_and_exits_1(tmp_path: Path) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    ns = write(tmp_path / "ns.yaml", [namespace])
    before = write(tmp_path / "before.yaml", [deployment(2)])
    moved = deployment(2)
    moved["metadata"]["namespace"] = "prod"  # no such namespace: refused
    after = write(tmp_path / "after.yaml", [moved])
    code, stdout, stderr = run(
        "-f", str(cluster(tmp_path)), "-f", str(ns), "--before", str(before), "--after", str(after)
    )
    assert code == 1
    assert stdout.startswith("2 pod(s): 2 changed")
    assert f'refused (after) {after}:1: Deployment prod/web: namespaces "prod" not found' in stderr


def test_a_pod_pending_in_both_with_another_message_is_changed(tmp_path: Path) -> None:
    """A pod no node fits for two reasons: the default profile rejects it at NodeAffinity (the
    first filter to reject), one without that filter at NodeResourcesFit. Pending in both, its
    FailedScheduling message differs: the change is ``message``, with each version's text."""
    default = tmp_path / "default.yaml"
    default.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    lax = tmp_path / "lax.yaml"
    lax.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    filter:\n      disabled:\n"
        "      - name: NodeAffinity\n"
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big"},
        "spec": {
            "nodeSelector": {"disk": "ssd"},
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100"}}}],
        },
    }
    nodes = write(tmp_path / "nodes.yaml", [node("a1", "a"), node("b1", "b")])
    files = ["-f", str(nodes), "-f", str(write(tmp_path / "pod.yaml", [pod]))]
    code, stdout, stderr = run(
        *files, "--before-config", str(default), "--after-config", str(lax), "-o", "json"
    )
    assert code == 0, stderr
    (p,) = json.loads(stdout)["pods"]
    assert p["change"] == "message"
    assert "didn't match Pod's node affinity/selector" in p["before"]["message"]
    assert "Insufficient cpu" in p["after"]["message"]
    assert p["before"]["node"] is None and p["after"]["node"] is None
    code, stdout, _ = run(
        *files, "--before-config", str(default), "--after-config", str(default), "-o", "json"
    )
    assert [p["change"] for p in json.loads(stdout)["pods"]] == ["same"]


def test_an_upgrade_that_rewords_why_a_pod_waits(tmp_path: Path) -> None:
    """v1.34.1 names the taint that keeps a pod off a node; v1.35 does not (kubernetes#134740):
    the pod is pending in both, and ``diff --against`` shows the new message."""
    tainted = [node("a1", "a", taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    files = [
        "-f",
        str(write(tmp_path / "nodes.yaml", tainted)),
        "-f",
        str(write(tmp_path / "pod.yaml", [pod])),
    ]
    code, stdout, stderr = run(*files, "--kube-version", "1.34", "--against", "1.35", "-o", "json")
    assert code == 0, stderr
    (p,) = json.loads(stdout)["pods"]
    assert p["change"] == "message"
    assert p["before"]["message"].startswith(
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}."
    )
    assert p["after"]["message"].startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")
    code, stdout, stderr = run(*files, "--kube-version", "1.34", "--against", "1.35")
    assert code == 0, stderr
    texts = stdout.split("why pending (FailedScheduling, before and after)\n", 1)[1].splitlines()
    assert texts[0] == "p"
    assert texts[1].startswith(
        "  before: 0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}."
    )
    assert texts[2].startswith("  after:  0/1 nodes are available: 1 node(s) had untolerated taint(s).")
