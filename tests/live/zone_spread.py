"""The live tests' zone-spread ReplicaSet, one builder for the real API server's tests and the
in-memory ones: a ReplicaSet ``name`` whose pods spread over zones (maxSkew 1, DoNotSchedule)
and a maker of its pods, owned by it as kube-controller-manager (absent from both) would make
them for a Deployment's revision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ZONE", "zone_spread_replicaset"]

ZONE = "topology.kubernetes.io/zone"
PAUSE = "registry.k8s.io/pause:3.10"


def zone_spread_replicaset(
    api: Any,
    namespace: str,
    name: str,
    replicas: int,
    *,
    cpu: str,
    scheduler: str | None = None,
    priority_class: str | None = None,
    node_selector: dict[str, str] | None = None,
) -> Callable[..., dict[str, Any]]:
    """Create the ReplicaSet through ``api`` (a ``KubeApi`` or the in-memory ``FakeApi``);
    return ``pod(i, **spec)``, the manifest of its i-th pod (``name-07``) with ``spec``'s
    fields over the template's (``nodeName=...`` for a pod already bound)."""
    labels = {"app": name}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": PAUSE, "resources": {"requests": {"cpu": cpu}}}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ],
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    rs = api.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": spec},
            },
        }
    )
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": name,
        "uid": rs["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }

    def pod(i: int, **more: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{i:02d}",
                "namespace": namespace,
                "labels": dict(labels),
                "ownerReferences": [dict(owner)],
            },
            "spec": {**spec, **more},
        }

    return pod
