"""API defaulting alone: scheduler name, requests from limits, canonical quantities."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment, node, pod

from kubespread.admission import apply_defaults
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Node
from kubespread.api.kruise import CloneSet

# (written in the manifest, as the API server stores it)
QUANTITIES: list[tuple[Any, str]] = [
    ("0.5", "500m"),
    (0.5, "500m"),
    (0.1, "100m"),
    (2, "2"),
    ("2", "2"),
    ("1000m", "1"),
    ("1500m", "1500m"),
    ("1.5", "1500m"),
    ("1024Mi", "1Gi"),
    ("1.5Gi", "1536Mi"),
    ("1536Ki", "1536Ki"),
    ("512M", "512M"),
    ("0.5Gi", "512Mi"),
    ("1e3", "1e3"),
    ("0", "0"),
    ("100m", "100m"),
]


@pytest.mark.parametrize(("written", "stored"), QUANTITIES, ids=[repr(q[0]) for q in QUANTITIES])
def test_quantities_are_stored_canonical(written: Any, stored: str) -> None:
    p = pod(bare=True).container(requests={"cpu": written}).obj()
    apply_defaults(p)
    assert p.to_dict()["spec"]["containers"][0]["resources"] == {"requests": {"cpu": stored}}


# (id, requests, limits, the resources the container is stored with)
RESOURCES: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None, dict[str, Any]]] = [
    ("nothing", None, None, {}),
    ("requests only", {"cpu": "1"}, None, {"requests": {"cpu": "1"}}),
    (
        "limits only: copied",
        None,
        {"cpu": 2, "memory": "1.5Gi", "example.com/gpu": 1},
        {
            "limits": {"cpu": "2", "memory": "1536Mi", "example.com/gpu": "1"},
            "requests": {"cpu": "2", "memory": "1536Mi", "example.com/gpu": "1"},
        },
    ),
    (
        "per resource name: a request is kept, a missing one copied",
        {"cpu": "100m"},
        {"cpu": "1", "memory": "1Gi"},
        {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
    ),
]


@pytest.mark.parametrize(
    ("requests", "limits", "stored"), [r[1:] for r in RESOURCES], ids=[r[0] for r in RESOURCES]
)
def test_pod_requests_default_to_limits(
    requests: dict[str, Any] | None, limits: dict[str, Any] | None, stored: dict[str, Any]
) -> None:
    p = (
        pod(bare=True)
        .container("app", requests=requests, limits=limits)
        .container("init", requests=requests, limits=limits, init=True)
        .container("sidecar", requests=requests, limits=limits, sidecar=True)
        .obj()
    )
    apply_defaults(p)
    spec = p.to_dict()["spec"]
    for c in (*spec["containers"], *spec["initContainers"]):
        assert c.get("resources", {}) == stored, c["name"]


def test_a_pod_gets_the_default_scheduler_and_keeps_its_own() -> None:
    p = pod().obj()
    apply_defaults(p)
    assert p.to_dict()["spec"] == {
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
        "schedulerName": "default-scheduler",
    }
    p = pod().set(schedulerName="my-scheduler").obj()
    apply_defaults(p)
    assert p.to_dict()["spec"]["schedulerName"] == "my-scheduler"


def test_overhead_is_canonical_and_not_copied() -> None:
    p = pod().set(overhead={"cpu": 0.25, "memory": "1024Mi"}).obj()
    apply_defaults(p)
    spec = p.to_dict()["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "1Gi"}
    assert "resources" not in spec["containers"][0]


def test_a_deployment_template_gets_the_scheduler_and_canonical_quantities_only() -> None:
    d = (
        deployment(bare=True)
        .container(requests={"cpu": 0.1}, limits={"cpu": "1000m", "memory": "1.5Gi"})
        .obj()
    )
    apply_defaults(d)
    template = d.to_dict()["spec"]["template"]["spec"]
    assert template == {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "1536Mi"}},
            }
        ],
        "schedulerName": "default-scheduler",
    }


def test_node_quantities_are_canonical_and_nothing_else_changes() -> None:
    m = node().manifest()
    m["status"] = {"capacity": {"cpu": 4, "memory": "16384Mi", "pods": "110"}}
    n = Node.from_dict(m)
    apply_defaults(n)
    assert n.to_dict() == {**m, "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def test_a_priority_class_gets_a_preemption_policy() -> None:
    pc = PriorityClass.from_dict(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 5,
        }
    )
    apply_defaults(pc)
    assert pc.preemption_policy == "PreemptLowerPriority"


def test_custom_resources_are_stored_as_they_come() -> None:
    manifest = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "app", "image": "x", "resources": {"limits": {"cpu": 0.5}}}]
                },
            },
        },
    }
    cs = CloneSet.from_dict(manifest)
    apply_defaults(cs)
    assert cs.to_dict() == manifest


def test_canonicalizing_visits_only_fields_that_can_hold_quantities() -> None:
    """The fields skipped hold no Quantity by their declared type; every quantity of a pod,
    in containers, init containers, overhead and pod-level resources, is still reached."""
    from kubespread.admission.defaults import _quantity_fields, canonicalize_quantities
    from kubespread.api.core import Pod, PodSpec

    assert "affinity" not in _quantity_fields(PodSpec) and "metadata" not in _quantity_fields(Pod)
    assert {"containers", "init_containers", "overhead", "resources"} <= set(_quantity_fields(PodSpec))
    pod = Pod.from_dict(
        {
            "metadata": {"name": "p", "labels": {"a": "0.5"}},
            "spec": {
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "0.5"}}}],
                "initContainers": [
                    {"name": "i", "image": "i", "resources": {"limits": {"memory": "1024Mi"}}}
                ],
                "overhead": {"cpu": "1.5"},
            },
        }
    )
    canonicalize_quantities(pod)
    spec = pod.to_dict()["spec"]
    assert spec["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert spec["initContainers"][0]["resources"]["limits"]["memory"] == "1Gi"
    assert spec["overhead"]["cpu"] == "1500m"
    assert pod.metadata.labels == {"a": "0.5"}
