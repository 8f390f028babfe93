"""The TaintNodesByCondition plugin alone: a new Node is tainted not-ready:NoSchedule."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import node, pod

from kubespread.admission import AdmissionContext, Operation, TaintNodesByCondition

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}

# (id, the node's taints as (key, effect, value), the taints it is stored with)
CASES: list[tuple[str, list[tuple[str, str, str | None]], list[dict[str, Any]]]] = [
    ("no taints", [], [NOT_READY]),
    (
        "appended after the node's own",
        [("dedicated", "NoSchedule", "infra")],
        [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}, NOT_READY],
    ),
    ("already there", [("node.kubernetes.io/not-ready", "NoSchedule", None)], [NOT_READY]),
    (
        "already there with a value: same key and effect is enough",
        [("node.kubernetes.io/not-ready", "NoSchedule", "x")],
        [{**NOT_READY, "value": "x"}],
    ),
    (
        "the same key with another effect does not count",
        [("node.kubernetes.io/not-ready", "NoExecute", None)],
        [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}, NOT_READY],
    ),
]


@pytest.mark.parametrize(("given", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_taints_of_a_new_node(
    given: list[tuple[str, str, str | None]], expected: list[dict[str, Any]]
) -> None:
    b = node()
    for key, effect, value in given:
        b.taint(key, effect, value)
    n = b.obj()
    assert TaintNodesByCondition().mutate(n, AdmissionContext.create()) is None
    assert n.to_dict()["spec"] == {"taints": expected}


def test_a_node_without_spec_gets_one() -> None:
    n = node().obj()
    TaintNodesByCondition().mutate(n, AdmissionContext.create())
    assert n.to_dict() == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1"},
        "spec": {"taints": [NOT_READY]},
    }


def test_pods_and_updates_are_left_alone() -> None:
    n = node().obj()
    TaintNodesByCondition().mutate(n, AdmissionContext.create(operation=Operation.UPDATE))
    assert "spec" not in n.to_dict()
    p = pod().obj()
    before = p.to_dict()
    TaintNodesByCondition().mutate(p, AdmissionContext.create())
    assert p.to_dict() == before
