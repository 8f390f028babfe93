"""Small clusters and pods for the schedule/explain CLI tests, written to tmp files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def node(name: str, zone: str | None, *, cpu: str = "4", taints: list[dict[str, str]] | None = None) -> dict:
    labels = {"kubernetes.io/hostname": name, "node": name}
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
        labels["zone"] = zone
    n: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }
    if taints:
        n["spec"] = {"taints": taints}
    return n


def pod(name: str, labels: dict[str, str], *, node_name: str | None = None, **spec: Any) -> dict:
    s: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": s}


def spread(key: str, max_skew: int = 1, when: str = "DoNotSchedule", **extra: Any) -> dict:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"foo": "bar"}},
        **extra,
    }


def write(path: Path, objects: list[dict]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def docs_conflict_cluster(tmp_path: Path) -> Path:
    """The docs' "conflicting topology spread constraints" cluster: zoneA has node1 (2 pods)
    and node2 (1 pod), zoneB has node3 (2 pods); all pods foo=bar."""
    objs = [node("node1", "zoneA"), node("node2", "zoneA"), node("node3", "zoneB")]
    for i, n in enumerate(["node1", "node1", "node2", "node3", "node3"], 1):
        objs.append(pod(f"p{i}", {"foo": "bar"}, node_name=n))
    return write(tmp_path / "cluster.yaml", objs)


def two_constraints_pod(tmp_path: Path) -> Path:
    """The docs' mypod: zone and node spread, both maxSkew 1 DoNotSchedule."""
    p = pod(
        "mypod",
        {"foo": "bar"},
        topologySpreadConstraints=[spread("zone"), spread("node")],
    )
    return write(tmp_path / "mypod.yaml", [p])
