"""Fluent builders of manifests for admission tests: ``pod().label("app", "web").limits(cpu="1")``.

Each builder holds a manifest dict; ``.manifest()`` gives a copy of it, ``.obj()`` the typed object
decoded from it (as kube-apiserver would decode the request).
"""

from __future__ import annotations

import copy
from typing import Any, Self

from kubespread.api.apps import Deployment, PriorityClass
from kubespread.api.core import Node, Pod
from kubespread.api.meta import KubeObject, ObjectMeta

__all__ = ["deployment", "node", "pod", "priority_class"]


class _Builder:
    cls: type[KubeObject]

    def __init__(self, manifest: dict[str, Any]):
        self.m = manifest

    def label(self, key: str, value: str) -> Self:
        self.m["metadata"].setdefault("labels", {})[key] = value
        return self

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self.m)

    def obj(self) -> Any:
        return self.cls.from_dict(self.manifest())


class _PodSpecBuilder(_Builder):
    def _spec(self) -> dict[str, Any]:
        return self.m["spec"]

    def set(self, **fields: Any) -> Self:
        """Pod spec fields, as the manifest writes them (camelCase keys)."""
        self._spec().update(fields)
        return self

    def container(
        self,
        name: str = "app",
        *,
        requests: dict[str, Any] | None = None,
        limits: dict[str, Any] | None = None,
        init: bool = False,
        sidecar: bool = False,
    ) -> Self:
        c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10"}
        resources = {}
        if requests is not None:
            resources["requests"] = requests
        if limits is not None:
            resources["limits"] = limits
        if resources:
            c["resources"] = resources
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec().setdefault("initContainers" if init or sidecar else "containers", []).append(c)
        return self

    def toleration(self, **t: Any) -> Self:
        self._spec().setdefault("tolerations", []).append(t)
        return self


class PodBuilder(_PodSpecBuilder):
    cls = Pod


class DeploymentBuilder(_PodSpecBuilder):
    cls = Deployment

    def _spec(self) -> dict[str, Any]:
        return self.m["spec"]["template"]["spec"]


class NodeBuilder(_Builder):
    cls = Node

    def taint(self, key: str, effect: str, value: str | None = None) -> Self:
        t: dict[str, Any] = {"key": key, "effect": effect}
        if value is not None:
            t["value"] = value
        self.m.setdefault("spec", {}).setdefault("taints", []).append(t)
        return self


def pod(name: str = "web", namespace: str = "default", *, bare: bool = False) -> PodBuilder:
    """A Pod; with one container ``app`` unless ``bare``."""
    b = PodBuilder(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": {}}
    )
    return b if bare else b.container()


def deployment(name: str = "web", *, bare: bool = False) -> DeploymentBuilder:
    """An apps/v1 Deployment selecting ``app: name``; one container ``app`` unless ``bare``."""
    b = DeploymentBuilder(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": {}},
            },
        }
    )
    return b if bare else b.container()


def node(name: str = "node-1") -> NodeBuilder:
    return NodeBuilder({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def priority_class(
    name: str, value: int, *, global_default: bool = False, preemption_policy: str | None = None
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name),
        value=value,
        global_default=global_default,
        preemption_policy=preemption_policy,
    )
