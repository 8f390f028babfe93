"""The Priority plugin alone: a new Pod's priority and preemption policy come from its class."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment, pod, priority_class

from kubespread.admission import AdmissionContext, Operation, Priority, Rejection
from kubespread.api.core import Pod

HIGH = priority_class("high", 1000)
NEVER = priority_class("batch", 10, preemption_policy="Never")
LOW_DEFAULT = priority_class("low", -5, global_default=True)
LOWER_DEFAULT = priority_class("lower", -10, global_default=True)

FORBIDDEN = 'pods "web" is forbidden: '


def _priority_fields(p: Pod) -> dict[str, Any]:
    spec = p.to_dict()["spec"]
    return {k: spec[k] for k in ("priorityClassName", "priority", "preemptionPolicy") if k in spec}


# (id, pod spec fields, extra classes, expected spec fields or the 403 message)
CASES: list[tuple[str, dict[str, Any], list[Any], dict[str, Any] | str]] = [
    (
        "no class, no default: 0",
        {},
        [],
        {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "a built-in class",
        {"priorityClassName": "system-node-critical"},
        [],
        {
            "priorityClassName": "system-node-critical",
            "priority": 2000001000,
            "preemptionPolicy": "PreemptLowerPriority",
        },
    ),
    (
        "a given class; a class without a policy preempts",
        {"priorityClassName": "high"},
        [HIGH],
        {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "the class's policy",
        {"priorityClassName": "batch"},
        [NEVER],
        {"priorityClassName": "batch", "priority": 10, "preemptionPolicy": "Never"},
    ),
    (
        "the priority the class gives may be written",
        {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"},
        [HIGH],
        {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "priority 0 without a class",
        {"priority": 0},
        [],
        {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "the global default class, named in the pod",
        {},
        [LOW_DEFAULT],
        {"priorityClassName": "low", "priority": -5, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "of two global defaults the lowest",
        {},
        [LOW_DEFAULT, LOWER_DEFAULT],
        {"priorityClassName": "lower", "priority": -10, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "a named class wins over the default",
        {"priorityClassName": "high"},
        [HIGH, LOW_DEFAULT],
        {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "unknown class",
        {"priorityClassName": "gold"},
        [HIGH],
        FORBIDDEN + "no PriorityClass with name gold was found",
    ),
    (
        "priority without a class",
        {"priority": 1000},
        [],
        FORBIDDEN + "the integer value of priority (1000) must not be provided in pod spec; "
        "priority admission controller computed 0 from the given PriorityClass name",
    ),
    (
        "priority other than the class's",
        {"priorityClassName": "system-node-critical", "priority": 1000000},
        [],
        FORBIDDEN + "the integer value of priority (1000000) must not be provided in pod spec; "
        "priority admission controller computed 2000001000 from the given PriorityClass name",
    ),
    (
        "preemption policy other than the class's",
        {"priorityClassName": "batch", "preemptionPolicy": "PreemptLowerPriority"},
        [NEVER],
        FORBIDDEN + "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided "
        "in pod spec; priority admission controller computed Never from the given PriorityClass name",
    ),
    (
        "Never without a class",
        {"preemptionPolicy": "Never"},
        [],
        FORBIDDEN + "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
        "priority admission controller computed PreemptLowerPriority from the given PriorityClass name",
    ),
]


@pytest.mark.parametrize(("fields", "classes", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_priority_of_a_new_pod(fields: dict[str, Any], classes: list[Any], expected: Any) -> None:
    p = pod().set(**fields).obj()
    outcome = Priority().mutate(p, AdmissionContext.create(priority_classes=classes))
    if isinstance(expected, str):
        assert outcome == Rejection(403, "Forbidden", expected)
    else:
        assert outcome is None
        assert _priority_fields(p) == expected


def test_a_refused_pod_keeps_its_priority_fields() -> None:
    p = pod().set(priority=5).obj()
    assert Priority().mutate(p, AdmissionContext.create()) is not None
    assert _priority_fields(p) == {"priority": 5}


def test_workload_templates_and_other_operations_are_not_looked_at() -> None:
    ctx = AdmissionContext.create()
    d = deployment().set(priority=1000, priorityClassName="gold").obj()
    before = d.to_dict()
    assert Priority().mutate(d, ctx) is None
    assert d.to_dict() == before
    p = pod().set(priority=1000).obj()
    assert Priority().mutate(p, AdmissionContext.create(operation=Operation.UPDATE)) is None
    assert _priority_fields(p) == {"priority": 1000}


def test_only_one_global_default_class() -> None:
    plugin, ctx = Priority(), AdmissionContext.create(priority_classes=[LOW_DEFAULT])
    second = priority_class("other", 7, global_default=True)
    assert plugin.validate(second, ctx) == Rejection(
        403,
        "Forbidden",
        'priorityclasses.scheduling.k8s.io "other" is forbidden: '
        "PriorityClass low is already marked as default. Only one default can exist",
    )
    assert plugin.validate(second, AdmissionContext.create()) is None
    assert plugin.validate(priority_class("plain", 7), ctx) is None
    assert plugin.validate(pod().obj(), ctx) is None
