"""The dump: the simulation's end state as kubectl's List, with what the API server, the
kubelet and the controllers write that the simulation does not model."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, TypeVar

import yaml

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Node, Pod, Service
from kubespread.api.meta import KubeObject

from .catalog import SYSTEM_IMAGES, daemon_pod, node_manifest
from .common import SEED, digest, later, rand_uid, ts
from .history import History, controlled_by
from .nodes import node_dict
from .pods import pod_dict
from .workloads import deployment_dict, namespace_dict, replica_set_dict, service_dict

Item = dict[str, Any]
T = TypeVar("T", bound=KubeObject)


def of_type(objs: Mapping[str, KubeObject], cls: type[T]) -> list[T]:
    return [o for o in objs.values() if isinstance(o, cls)]


class Dump:
    """What the object writers share: the history, resourceVersions, pod IPs."""

    def __init__(self, history: History) -> None:
        self.h = history
        self.sim = history.sim
        self.rng = random.Random(f"{SEED}-dump")
        self.plans = {p.name: p for p in history.plans}
        self.rv_base = 51_273_000
        self.max_rv = 0
        self.pod_ips: dict[str, str] = {}

    def rv(self, sim_rv: str) -> str:
        """The resourceVersion of a real API server, in the simulation's order."""
        n = self.rv_base + int(sim_rv) * 23 + int(digest(sim_rv)[:4], 16) % 20
        self.max_rv = max(self.max_rv, n)
        return str(n)

    def common_meta(self, d: Item, *, keep_generation: bool) -> dict[str, Any]:
        meta = d["metadata"]
        meta["resourceVersion"] = self.rv(meta["resourceVersion"])
        if not keep_generation:
            meta.pop("generation", None)
        return meta

    def images_on(self, node: str) -> list[str]:
        """The images the node's pods run that it had not pulled from the start."""
        pods = self.sim.cluster.pods.values()
        running = {c.image for pod in pods if pod.spec.node_name == node for c in pod.spec.containers}
        return sorted(running - {name for name, _ in SYSTEM_IMAGES})

    def last_pod_time(self, uids: set[str], default: str) -> str:
        """Seconds after the last pod of these owners was created (their last status write)."""
        times = [
            p.metadata.creation_timestamp or ""
            for p in self.sim.cluster.pods.values()
            if controlled_by(p, uids)
        ]
        return later(max([default, *times]), 14)

    def late_objects(self) -> tuple[list[Item], list[Item]]:
        """The node the autoscaler added for the ledger pods, and its DaemonSet pods: written to
        the dump only, so that the scheduler has not yet had a chance to use it."""
        plan = next(p for p in self.h.plans if p.late)
        node = Node.from_dict(node_manifest(plan))
        node.metadata.uid = rand_uid(self.rng)
        node.metadata.creation_timestamp = ts(plan.created)
        pods = []
        rv = self.max_rv + 311
        for i, ds in enumerate(self.h.daemonsets):
            pod = Pod.from_dict(daemon_pod(ds, plan.name))
            pod.metadata.name = self.sim.generate_name(f"{ds.name}-", ds.namespace)
            out = admit_create(pod, self.sim.admission_context(), self.sim.chain)
            assert not isinstance(out, Rejection), out
            pod.metadata.uid = rand_uid(self.rng)
            pod.metadata.creation_timestamp = ts(plan.created + timedelta(seconds=6 + i))
            pod.metadata.generation = 1
            pod.metadata.resource_version = str(rv + 40 + 17 * i)
            pod.spec.node_name = plan.name
            pod.status.phase = "Running"
            pods.append(pod_dict(self, pod, late=True))
        node_item = node_dict(self, node, late_rv=str(rv + 120))
        # the kubelet reported for the first time minutes ago: the conditions' times are recent
        for c in node_item["status"]["conditions"]:
            c["lastHeartbeatTime"] = ts(plan.created + timedelta(seconds=75))
            c["lastTransitionTime"] = ts(plan.created + timedelta(seconds=22 if c["type"] == "Ready" else 4))
        node_item["metadata"]["managedFields"][-1]["time"] = ts(plan.created + timedelta(seconds=75))
        return [node_item], pods

    def items(self) -> tuple[list[Item], list[str], list[str]]:
        """The List's items in kubectl's order, and the pending pods: (items, those that fit
        now, those that do not)."""
        cluster = self.sim.cluster
        nodes = [node_dict(self, n) for n in cluster.nodes.values()]
        pending = {p.key for p in self.h.pending()}
        pods = [pod_dict(self, p, self.sim.pending_reasons.get(p.key, "")) for p in cluster.pods.values()]
        late_nodes, late_pods = self.late_objects()
        nodes += late_nodes
        pods += late_pods
        deployments = [deployment_dict(self, d) for d in of_type(cluster.objects("Deployment"), Deployment)]
        replica_sets = [
            replica_set_dict(self, rs) for rs in of_type(cluster.objects("ReplicaSet"), ReplicaSet)
        ]
        services = [service_dict(self, s) for s in of_type(cluster.objects("Service"), Service)]
        namespaces = [namespace_dict(self, ns) for ns in cluster.namespaces.values()]
        placeable = sorted(k for k in pending if not k.startswith("shop/search-"))
        unplaceable = sorted(k for k in pending if k.startswith("shop/search-"))
        by_name: Callable[[Item], tuple[str, str]] = lambda d: (  # noqa: E731
            d["metadata"].get("namespace", ""),
            d["metadata"]["name"],
        )
        ordered = [
            sorted(kind, key=by_name)
            for kind in (nodes, pods, deployments, replica_sets, services, namespaces)
        ]
        return [item for kind in ordered for item in kind], placeable, unplaceable


# --------------------------------------------------------------------------------------------
# YAML as kubectl writes it: keys sorted, "quoted" ambiguous strings, multi-line strings as blocks


class KubectlDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    resolved = dumper.resolve(yaml.ScalarNode, value, (True, False))
    if value == "" or resolved != "tag:yaml.org,2002:str":
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


KubectlDumper.add_representer(str, represent_str)


def to_yaml(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=KubectlDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=100_000,
    )
