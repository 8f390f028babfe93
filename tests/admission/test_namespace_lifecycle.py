"""The NamespaceLifecycle plugin alone: nothing is created in a namespace that does not exist."""

from __future__ import annotations

import pytest
from admission_builders import node, pod

from kubespread.admission import AdmissionContext, NamespaceLifecycle, Operation, Rejection

CTX = AdmissionContext.create(namespaces=["default", "team-a"])


@pytest.mark.parametrize("namespace", ["default", "team-a", "kube-system", "kube-public", "kube-node-lease"])
def test_existing_and_system_namespaces(namespace: str) -> None:
    assert NamespaceLifecycle().mutate(pod(namespace=namespace).obj(), CTX) is None


def test_an_unknown_namespace_is_not_found() -> None:
    assert NamespaceLifecycle().mutate(pod(namespace="prod").obj(), CTX) == Rejection(
        404, "NotFound", 'namespaces "prod" not found'
    )


def test_no_namespace_is_the_default_one() -> None:
    p = pod().obj()
    p.metadata.namespace = ""
    assert NamespaceLifecycle().mutate(p, AdmissionContext.create(namespaces=["team-a"])) is None


def test_without_known_namespaces_every_namespace_exists() -> None:
    assert NamespaceLifecycle().mutate(pod(namespace="prod").obj(), AdmissionContext.create()) is None


def test_cluster_scoped_objects_and_other_operations_pass() -> None:
    assert NamespaceLifecycle().mutate(node().obj(), CTX) is None
    update = AdmissionContext.create(namespaces=["default"], operation=Operation.UPDATE)
    assert NamespaceLifecycle().mutate(pod(namespace="prod").obj(), update) is None
