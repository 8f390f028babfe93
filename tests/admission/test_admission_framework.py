"""The framework's values: refusals and how they name objects, the context plugins read."""

from __future__ import annotations

import pytest
from admission_builders import deployment, node, pod, priority_class

from kubespread.admission import (
    BUILTIN_PRIORITY_CLASSES,
    AdmissionContext,
    AdmissionOptions,
    Operation,
    Rejection,
)
from kubespread.admission.framework import qualified_kind, resource_name
from kubespread.api.apps import PriorityClass
from kubespread.api.errors import FieldError
from kubespread.api.kruise import CloneSet


@pytest.mark.parametrize(
    ("obj", "resource", "kind"),
    [
        (pod().obj(), "pods", "Pod"),
        (node().obj(), "nodes", "Node"),
        (deployment().obj(), "deployments.apps", "Deployment.apps"),
        (priority_class("x", 1), "priorityclasses.scheduling.k8s.io", "PriorityClass.scheduling.k8s.io"),
        (CloneSet(), "clonesets.apps.kruise.io", "CloneSet.apps.kruise.io"),
    ],
)
def test_how_objects_are_named(obj: object, resource: str, kind: str) -> None:
    assert (resource_name(obj), qualified_kind(obj)) == (resource, kind)  # type: ignore[arg-type]


def test_forbidden_names_the_resource_and_object() -> None:
    assert Rejection.forbidden(deployment().obj(), "why").answer() == {
        "accepted": False,
        "code": 403,
        "reason": "Forbidden",
        "message": 'deployments.apps "web" is forbidden: why',
        "causes": [],
    }
    unnamed = pod(name="").obj()
    assert Rejection.forbidden(unnamed, "why").message == "pods is forbidden: why"


def test_invalid_lists_distinct_errors() -> None:
    p = pod().obj()
    a = FieldError.invalid("spec.x", "v", "bad")
    b = FieldError.required("spec.y")
    assert Rejection.invalid(p, []).message == 'Pod "web" is invalid'
    one = Rejection.invalid(p, [a, a])
    assert one.message == 'Pod "web" is invalid: spec.x: Invalid value: "v": bad'
    assert len(one.causes) == 2  # the causes keep every error
    two = Rejection.invalid(p, [a, b])
    assert two.message == 'Pod "web" is invalid: [spec.x: Invalid value: "v": bad, spec.y: Required value]'
    assert (two.code, two.reason) == (422, "Invalid")
    assert list(two.causes) == [a.cause(), b.cause()]


def test_not_found_and_bad_request() -> None:
    assert Rejection.not_found("namespaces", "prod") == Rejection(
        404, "NotFound", 'namespaces "prod" not found'
    )
    assert Rejection.bad_request("no") == Rejection(400, "BadRequest", "no")


def test_context_has_the_builtin_classes_plus_the_given_ones() -> None:
    ctx = AdmissionContext()
    assert set(ctx.priority_classes) == {"system-cluster-critical", "system-node-critical"}
    assert ctx.priority_classes["system-cluster-critical"].value == 2_000_000_000
    assert ctx.priority_classes["system-node-critical"].value == 2_000_001_000
    assert ctx.global_default_priority_class() is None
    high = priority_class("high", 1000)
    for given in ([high], {"high": high}):
        ctx = AdmissionContext.create(priority_classes=given)
        assert set(ctx.priority_classes) == {*BUILTIN_PRIORITY_CLASSES, "high"}
    assert (ctx.operation, ctx.options, ctx.namespaces) == (Operation.CREATE, AdmissionOptions(), None)


def test_the_builtin_classes_cannot_be_changed() -> None:
    with pytest.raises(TypeError):
        BUILTIN_PRIORITY_CLASSES["mine"] = PriorityClass()  # type: ignore[index]


def test_known_namespaces() -> None:
    assert AdmissionContext.create().namespace_exists("anything")
    ctx = AdmissionContext.create(namespaces=["team-a"])
    assert ctx.namespace_exists("team-a") and not ctx.namespace_exists("team-b")
