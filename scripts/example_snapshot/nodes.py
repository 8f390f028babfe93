"""Nodes as kubectl prints them: what the kubelet reports, and who wrote which field."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubespread.api.core import Node

from .catalog import GROUPS, NODE_CONDITIONS, SYSTEM_IMAGES, NodePlan
from .common import DUMP_TIME, KUBELET_VERSION, SEED, digest, later, rand_hex, rand_uid, ts
from .fields import fieldset, managed

if TYPE_CHECKING:
    from .state import Dump

TTL = "node.alpha.kubernetes.io/ttl"


def image_ref(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{digest(image)}"


def image_size(image: str) -> int:
    return 20_000_000 + int(digest(image)[:8], 16) % 180_000_000


def node_dict(dump: Dump, node: Node, late_rv: str | None = None) -> dict[str, Any]:
    """The node, its status as its kubelet last reported it (``heartbeat``) and its managedFields.
    ``late_rv``: the resourceVersion of a node the simulation has not seen."""
    d = node.to_dict()
    plan = dump.plans[node.name]
    meta = d["metadata"]
    if late_rv is None:
        dump.common_meta(d, keep_generation=False)
    else:
        meta["resourceVersion"] = late_rv
        meta.pop("generation", None)
    rng = random.Random(f"{SEED}-node-{node.name}")
    created = meta["creationTimestamp"]
    heartbeat = ts(DUMP_TIME - timedelta(seconds=rng.randint(5, 290)))
    d["status"].update(kubelet_status(plan, created, heartbeat, rng, dump.images_on(node.name)))
    meta["managedFields"] = node_fields(d, plan, heartbeat, rng, dump.h.cordon_time)
    return d


def kubelet_status(
    plan: NodePlan, created: str, heartbeat: str, rng: random.Random, pulled: list[str]
) -> dict[str, Any]:
    """What the kubelet adds to the registered node's status (``pulled``: its pods' images)."""
    ready_at = later(created, rng.randint(18, 40))
    pressure_at = later(created, rng.randint(3, 9))
    images = dict(SYSTEM_IMAGES)
    for image in pulled:
        images[image] = image_size(image)
    handler = {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}}
    return {
        "addresses": [
            {"address": plan.ip, "type": "InternalIP"},
            {"address": plan.name, "type": "InternalDNS"},
            {"address": plan.name, "type": "Hostname"},
        ],
        "conditions": [
            {
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": ready_at if t == "Ready" else pressure_at,
                "message": m,
                "reason": r,
                "status": s,
                "type": t,
            }
            for t, s, r, m in NODE_CONDITIONS
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "features": {"supplementalGroupsPolicy": True},
        "images": [
            {"names": [image_ref(name), name], "sizeBytes": size}
            for name, size in sorted(images.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "nodeInfo": node_info(rng),
        "runtimeHandlers": [{**handler, "name": ""}, {**handler, "name": "runc"}],
    }


def node_info(rng: random.Random) -> dict[str, str]:
    return {
        "architecture": "amd64",
        "bootID": rand_uid(rng),
        "containerRuntimeVersion": "containerd://2.1.4",
        "kernelVersion": "6.12.40-63.114.amzn2023.x86_64",
        "kubeletVersion": KUBELET_VERSION,
        "machineID": "ec2" + rand_hex(29, rng),
        "operatingSystem": "linux",
        "osImage": "Amazon Linux 2023.9.20250929",
        "systemUUID": "ec2" + rand_hex(5, rng) + "-" + "-".join(rand_hex(n, rng) for n in (4, 4, 4, 12)),
    }


def node_fields(
    d: dict[str, Any], plan: NodePlan, heartbeat: str, rng: random.Random, cordon_time: str
) -> list[dict[str, Any]]:
    """The kubelet registered the node and reports its status; the controller manager wrote the
    ttl annotation; a cordoned node has kubectl's unschedulable and the controller's taint."""
    meta, spec, status = d["metadata"], d["spec"], d["status"]
    created = meta["creationTimestamp"]
    kubelet_spec: dict[str, Any] = {"f:providerID": {}}
    if GROUPS[plan.group].taints:
        kubelet_spec["f:taints"] = {}
    annotations = {k: v for k, v in meta["annotations"].items() if k != TTL}
    registered = {
        "f:metadata": fieldset({"annotations": annotations, "labels": meta["labels"]}),
        "f:spec": kubelet_spec,
    }
    ttl = {"f:metadata": {"f:annotations": {f"f:{TTL}": {}}}}
    ttl_time = later(created, rng.randint(2, 6))
    entries = [managed("kubelet", "Update", created, registered)]
    if spec.get("unschedulable"):
        cordon = {"f:spec": {"f:unschedulable": {}}}
        entries.append(managed("kubectl-cordon", "Update", cordon_time, cordon))
        entries.append(
            managed("kube-controller-manager", "Update", cordon_time, {**ttl, "f:spec": {"f:taints": {}}})
        )
    else:
        entries.append(managed("kube-controller-manager", "Update", ttl_time, ttl))
    entries.append(
        managed("kubelet", "Update", heartbeat, {"f:status": fieldset(status)}, subresource="status")
    )
    return entries
