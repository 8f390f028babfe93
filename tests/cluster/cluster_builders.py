"""Small builders for cluster tests: manifests in, typed objects out."""

from __future__ import annotations

from typing import Any

from kubespread.api.core import Namespace, Node, Pod


def make_node(
    name: str,
    labels: dict[str, str] | None = None,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    **extra_alloc: str,
) -> Node:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **extra_alloc}
    return Node.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {})},
            "status": {"allocatable": alloc, "capacity": alloc},
        }
    )


def make_pod(
    name: str,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    node: str = "",
    cpu: str | None = None,
    memory: str | None = None,
    host_ports: list[int | tuple[int, str, str]] | None = None,
    phase: str = "",
    terminating: bool = False,
    init: list[dict[str, Any]] | None = None,
) -> Pod:
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    c: dict[str, Any] = {"name": "app", "image": "x"}
    if requests:
        c["resources"] = {"requests": requests}
    if host_ports:
        ports = []
        for hp in host_ports:
            port, proto, ip = hp if isinstance(hp, tuple) else (hp, "", "")
            p: dict[str, Any] = {"containerPort": port, "hostPort": port}
            if proto:
                p["protocol"] = proto
            if ip:
                p["hostIP"] = ip
            ports.append(p)
        c["ports"] = ports
    spec: dict[str, Any] = {"containers": [c]}
    if init:
        spec["initContainers"] = init
    if node:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if phase:
        d["status"] = {"phase": phase}
    return Pod.from_dict(d)


def make_namespace(name: str, labels: dict[str, str] | None = None) -> Namespace:
    return Namespace.from_dict(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}
    )
