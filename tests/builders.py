"""Fluent builders for test objects: ``make_pod("a").label("app", "web").spread(1, ZONE)``.

Each builder edits a manifest dict and ``.obj()`` decodes it through the real model, so the
tests exercise the same path as a user's YAML.
"""

from __future__ import annotations

import copy
from typing import Any

from kubespread.api.core import Namespace, Node, Pod
from kubespread.cluster.state import ClusterState

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self.d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }

    @property
    def spec(self) -> dict[str, Any]:
        return self.d["spec"]

    def label(self, key: str, value: str) -> PodBuilder:
        self.d["metadata"].setdefault("labels", {})[key] = value
        return self

    def labels(self, **kv: str) -> PodBuilder:
        for k, v in kv.items():
            self.label(k, v)
        return self

    def node(self, name: str) -> PodBuilder:
        self.spec["nodeName"] = name
        return self

    def terminating(self) -> PodBuilder:
        self.d["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def phase(self, phase: str) -> PodBuilder:
        self.d.setdefault("status", {})["phase"] = phase
        return self

    def req(self, cpu: str | None = None, memory: str | None = None, **other: str) -> PodBuilder:
        """Requests of the (first) container."""
        reqs = self.spec["containers"][0].setdefault("resources", {}).setdefault("requests", {})
        if cpu is not None:
            reqs["cpu"] = cpu
        if memory is not None:
            reqs["memory"] = memory
        reqs.update({k.replace("_", "-"): v for k, v in other.items()})
        return self

    def container(
        self,
        name: str,
        *,
        image: str = "busybox",
        cpu: str | None = None,
        memory: str | None = None,
        init: bool = False,
        sidecar: bool = False,
    ) -> PodBuilder:
        c: dict[str, Any] = {"name": name, "image": image}
        reqs = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        if reqs:
            c["resources"] = {"requests": reqs}
        if sidecar:
            c["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers" if init or sidecar else "containers", []).append(c)
        return self

    def image(self, image: str) -> PodBuilder:
        self.spec["containers"][0]["image"] = image
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        self.spec["containers"][0].setdefault("ports", []).append(p)
        return self

    def node_selector(self, **kv: str) -> PodBuilder:
        self.spec.setdefault("nodeSelector", {}).update(kv)
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "") -> PodBuilder:
        fields = (("key", key), ("operator", operator), ("value", value), ("effect", effect))
        t = {k: v for k, v in fields if v}
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def spread(
        self,
        max_skew: int,
        key: str,
        when: str = "DoNotSchedule",
        selector: dict[str, Any] | None = None,
        **extra: Any,
    ) -> PodBuilder:
        """A topologySpreadConstraint; ``selector`` is a LabelSelector dict; extra fields
        (minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys) as camelCase kwargs."""
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = selector
        c.update(extra)
        self.spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def affinity(self, path: str, value: Any) -> PodBuilder:
        """Append to the list at spec.affinity.<path>
        (e.g. "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"), or set it when
        it names a single object (nodeAffinity's required NodeSelector)."""
        cur = self.spec.setdefault("affinity", {})
        parts = path.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        single = path == "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        if single or not path.endswith("Execution"):
            cur[parts[-1]] = value
        else:
            cur.setdefault(parts[-1], []).append(value)
        return self

    def pod_affinity(
        self, key: str, selector: dict[str, Any], *, anti: bool = False, weight: int = 0, **term_extra: Any
    ) -> PodBuilder:
        """A required (weight 0) or preferred pod (anti-)affinity term."""
        term: dict[str, Any] = {"labelSelector": selector, "topologyKey": key, **term_extra}
        kind = "podAntiAffinity" if anti else "podAffinity"
        if weight:
            return self.affinity(
                f"{kind}.preferredDuringSchedulingIgnoredDuringExecution",
                {"weight": weight, "podAffinityTerm": term},
            )
        return self.affinity(f"{kind}.requiredDuringSchedulingIgnoredDuringExecution", term)

    def set(self, path: str, value: Any) -> PodBuilder:
        """Set any field by a dotted path from the top (``spec.priority``)."""
        cur = self.d
        parts = path.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
        return self

    def dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.d)

    def obj(self) -> Pod:
        return Pod.from_dict(self.dict())


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self.d: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }

    def label(self, key: str, value: str) -> NodeBuilder:
        self.d["metadata"]["labels"][key] = value
        return self

    def zone(self, zone: str) -> NodeBuilder:
        return self.label(ZONE, zone)

    def no_label(self, key: str) -> NodeBuilder:
        self.d["metadata"]["labels"].pop(key, None)
        return self

    def capacity(
        self, cpu: str | None = None, memory: str | None = None, pods: str | None = None, **other: str
    ) -> NodeBuilder:
        alloc = self.d["status"]["allocatable"]
        for k, v in (("cpu", cpu), ("memory", memory), ("pods", pods)):
            if v is not None:
                alloc[k] = v
        alloc.update({k.replace("_", "-"): v for k, v in other.items()})
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self.d["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self) -> NodeBuilder:
        self.d["spec"]["unschedulable"] = True
        return self

    def image(self, names: list[str], size: int) -> NodeBuilder:
        self.d["status"].setdefault("images", []).append({"names": names, "sizeBytes": size})
        return self

    def dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.d)

    def obj(self) -> Node:
        return Node.from_dict(self.dict())


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def make_namespace(name: str, **labels: str) -> Namespace:
    return Namespace.from_dict(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}
    )


def cluster_of(
    nodes: list[NodeBuilder | Node],
    pods: list[PodBuilder | Pod] = (),  # type: ignore[assignment]
    namespaces: list[Namespace] = (),
    objects: list[Any] = (),
) -> ClusterState:  # type: ignore[assignment]
    """A ClusterState holding these nodes, pods (bound by spec.nodeName), namespaces and objects."""
    state = ClusterState()
    for n in nodes:
        state.add(n.obj() if isinstance(n, NodeBuilder) else n)
    for ns in namespaces:
        state.add(ns)
    for o in objects:
        state.add(o)
    for p in pods:
        state.add(p.obj() if isinstance(p, PodBuilder) else p)
    return state


def web_workload_manifests(replicas: int, template: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Deployment web (uid dep-uid) and its ReplicaSet web-1 (uid rs-uid, controlled by it) as
    manifests: the owner chain WorkloadSpread follows from a pod to its target."""
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "dep-uid"},
        "spec": spec,
    }
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "dep-uid"}
    owner["controller"] = True
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "default", "uid": "rs-uid", "ownerReferences": [owner]},
        "spec": dict(spec),
    }
    return deployment, replica_set


def web_rs_owner() -> dict[str, Any]:
    """The controller reference of a pod of ReplicaSet web-1 (see web_workload_manifests)."""
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid"}
    return {**owner, "controller": True}
