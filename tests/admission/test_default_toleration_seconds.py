"""The DefaultTolerationSeconds plugin alone: not-ready and unreachable NoExecute tolerations."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment, pod

from kubespread.admission import AdmissionContext, AdmissionOptions, DefaultTolerationSeconds, Operation

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
GPU = {"key": "gpu", "value": "true", "effect": "NoSchedule"}

# (id, the pod's tolerations, the tolerations it is stored with)
CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("none: both appended", [], [NOT_READY, UNREACHABLE]),
    ("other keys: both appended after them", [GPU], [GPU, NOT_READY, UNREACHABLE]),
    (
        "an empty key with NoExecute covers both",
        [{"operator": "Exists", "effect": "NoExecute"}],
        [{"operator": "Exists", "effect": "NoExecute"}],
    ),
    ("tolerate everything covers both", [{"operator": "Exists"}], [{"operator": "Exists"}]),
    (
        "an empty key with another effect covers nothing",
        [{"operator": "Exists", "effect": "NoSchedule"}],
        [{"operator": "Exists", "effect": "NoSchedule"}, NOT_READY, UNREACHABLE],
    ),
    (
        "the not-ready key with an empty effect covers not-ready",
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}, UNREACHABLE],
    ),
    (
        "the user's seconds are kept",
        [{**NOT_READY, "tolerationSeconds": 60}],
        [{**NOT_READY, "tolerationSeconds": 60}, UNREACHABLE],
    ),
    (
        "the unreachable key with NoSchedule does not cover it",
        [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoSchedule"}],
        [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoSchedule"},
            NOT_READY,
            UNREACHABLE,
        ],
    ),
    (
        "operator and value are not looked at",
        [{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "value": "x", "effect": "NoExecute"}],
        [
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Equal",
                "value": "x",
                "effect": "NoExecute",
            },
            NOT_READY,
        ],
    ),
    ("both present: nothing added", [UNREACHABLE, NOT_READY], [UNREACHABLE, NOT_READY]),
]


@pytest.mark.parametrize(("given", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_tolerations_of_a_new_pod(given: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    b = pod()
    for t in given:
        b.toleration(**t)
    p = b.obj()
    assert DefaultTolerationSeconds().mutate(p, AdmissionContext.create()) is None
    assert p.to_dict()["spec"]["tolerations"] == expected


def test_the_seconds_are_server_options() -> None:
    p = pod().obj()
    opts = AdmissionOptions(
        default_not_ready_toleration_seconds=30, default_unreachable_toleration_seconds=45
    )
    DefaultTolerationSeconds().mutate(p, AdmissionContext.create(options=opts))
    assert [t["tolerationSeconds"] for t in p.to_dict()["spec"]["tolerations"]] == [30, 45]


def test_templates_and_other_operations_are_left_alone() -> None:
    d = deployment().obj()
    DefaultTolerationSeconds().mutate(d, AdmissionContext.create())
    assert "tolerations" not in d.to_dict()["spec"]["template"]["spec"]
    p = pod().obj()
    DefaultTolerationSeconds().mutate(p, AdmissionContext.create(operation=Operation.UPDATE))
    assert "tolerations" not in p.to_dict()["spec"]
