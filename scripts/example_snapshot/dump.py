"""The dump: the simulation's end state as kubectl's List, with what the API server, the
kubelet and the controllers write that the simulation does not model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, TypeVar

import yaml

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Node, Pod, Service
from kubespread.api.meta import KubeObject

from .catalog import daemon_pod, node_manifest
from .common import rand_uid, ts
from .nodes import node_dict
from .pods import pod_dict
from .state import Dump, Item
from .workloads import deployment_dict, namespace_dict, replica_set_dict, service_dict

T = TypeVar("T", bound=KubeObject)


def of_type(objs: Mapping[str, KubeObject], cls: type[T]) -> list[T]:
    return [o for o in objs.values() if isinstance(o, cls)]


def late_objects(dump: Dump) -> tuple[list[Item], list[Item]]:
    """The node the autoscaler added for the ledger pods, and its DaemonSet pods: written to
    the dump only, so that the scheduler has not yet had a chance to use it."""
    plan = next(p for p in dump.h.plans if p.late)
    node = Node.from_dict(node_manifest(plan))
    node.metadata.uid = rand_uid(dump.rng)
    node.metadata.creation_timestamp = ts(plan.created)
    pods = []
    rv = dump.max_rv + 311
    for i, ds in enumerate(dump.h.daemonsets):
        pod = Pod.from_dict(daemon_pod(ds, plan.name))
        pod.metadata.name = dump.sim.generate_name(f"{ds.name}-", ds.namespace)
        out = admit_create(pod, dump.sim.admission_context(), dump.sim.chain)
        assert not isinstance(out, Rejection), out
        pod.metadata.uid = rand_uid(dump.rng)
        pod.metadata.creation_timestamp = ts(plan.created + timedelta(seconds=6 + i))
        pod.metadata.generation = 1
        pod.metadata.resource_version = str(rv + 40 + 17 * i)
        pod.spec.node_name = plan.name
        pod.status.phase = "Running"
        pods.append(pod_dict(dump, pod, late=True))
    node_item = node_dict(dump, node, late_rv=str(rv + 120))
    # the kubelet reported for the first time minutes ago: the conditions' times are recent
    for c in node_item["status"]["conditions"]:
        c["lastHeartbeatTime"] = ts(plan.created + timedelta(seconds=75))
        c["lastTransitionTime"] = ts(plan.created + timedelta(seconds=22 if c["type"] == "Ready" else 4))
    node_item["metadata"]["managedFields"][-1]["time"] = ts(plan.created + timedelta(seconds=75))
    return [node_item], pods


def dump_items(dump: Dump) -> tuple[list[Item], list[str], list[str]]:
    """The List's items in kubectl's order, and the pending pods: (items, those that fit
    now, those that do not)."""
    cluster = dump.sim.cluster
    nodes = [node_dict(dump, n) for n in cluster.nodes.values()]
    pending = {p.key for p in dump.h.pending()}
    pods = [pod_dict(dump, p, dump.sim.pending_reasons.get(p.key, "")) for p in cluster.pods.values()]
    late_nodes, late_pods = late_objects(dump)
    nodes += late_nodes
    pods += late_pods
    deployments = [deployment_dict(dump, d) for d in of_type(cluster.objects("Deployment"), Deployment)]
    replica_sets = [replica_set_dict(dump, rs) for rs in of_type(cluster.objects("ReplicaSet"), ReplicaSet)]
    services = [service_dict(dump, s) for s in of_type(cluster.objects("Service"), Service)]
    namespaces = [namespace_dict(dump, ns) for ns in cluster.namespaces.values()]
    placeable = sorted(k for k in pending if not k.startswith("shop/search-"))
    unplaceable = sorted(k for k in pending if k.startswith("shop/search-"))
    by_name: Callable[[Item], tuple[str, str]] = lambda d: (  # noqa: E731
        d["metadata"].get("namespace", ""),
        d["metadata"]["name"],
    )
    ordered = [
        sorted(kind, key=by_name) for kind in (nodes, pods, deployments, replica_sets, services, namespaces)
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
