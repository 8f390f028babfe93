"""Toleration.tolerates against k8s.io/api core/v1 ToleratesTaint (comparison operators off, as
the TaintTolerationComparisonOperators feature gate is by default), and find_untolerated
against the TaintToleration filter's FindMatchingUntoleratedTaint."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubespread.api.taints import Taint, Toleration, find_untolerated, tolerates_all, toleration_time


def tol(**kw: Any) -> Toleration:
    return Toleration.from_dict(kw)


def taint(key: str = "k", value: str = "v", effect: str = "NoSchedule") -> Taint:
    return Taint.from_dict({"key": key, "value": value, "effect": effect})


TABLE = [
    # empty key with Exists tolerates every taint, whatever its key, value and effect
    ({"operator": "Exists"}, taint("a", "1", "NoSchedule"), True),
    ({"operator": "Exists"}, taint("b", "", "NoExecute"), True),
    ({"operator": "Exists"}, taint("", "", "PreferNoSchedule"), True),
    ({"operator": "Exists", "effect": "NoExecute"}, taint("b", "x", "NoSchedule"), False),
    # an empty effect matches every effect
    ({"key": "k", "operator": "Equal", "value": "v"}, taint(effect="NoSchedule"), True),
    ({"key": "k", "operator": "Equal", "value": "v"}, taint(effect="NoExecute"), True),
    ({"key": "k", "operator": "Equal", "value": "v"}, taint(effect="PreferNoSchedule"), True),
    # a set effect must be the taint's
    ({"key": "k", "value": "v", "effect": "NoSchedule"}, taint(effect="NoSchedule"), True),
    ({"key": "k", "value": "v", "effect": "NoSchedule"}, taint(effect="NoExecute"), False),
    ({"key": "k", "value": "v", "effect": "NoExecute"}, taint(effect="PreferNoSchedule"), False),
    # an empty operator means Equal
    ({"key": "k", "value": "v"}, taint(), True),
    ({"key": "k", "value": "w"}, taint(), False),
    ({"key": "k"}, taint(value=""), True),
    ({"key": "k"}, taint(value="v"), False),
    # Equal compares values exactly (case and all)
    ({"key": "k", "operator": "Equal", "value": "w"}, taint(), False),
    ({"key": "k", "operator": "Equal", "value": "V"}, taint(), False),
    ({"key": "k", "operator": "Equal", "value": ""}, taint(value=""), True),
    # Exists ignores the value, even one that is set
    ({"key": "k", "operator": "Exists"}, taint(value="anything"), True),
    ({"key": "k", "operator": "Exists", "value": "other"}, taint(value="anything"), True),
    # keys must be equal when the toleration names one
    ({"key": "other", "operator": "Exists"}, taint(), False),
    ({"key": "K", "operator": "Exists"}, taint(), False),
    # an empty key with Equal (invalid, but evaluated) compares only the value
    ({"operator": "Equal", "value": "v"}, taint("any-key", "v"), True),
    ({"operator": "Equal", "value": "v"}, taint("any-key", "w"), False),
    # operators are case-sensitive; unknown ones and disabled Lt/Gt tolerate nothing
    ({"key": "k", "operator": "exists"}, taint(), False),
    ({"key": "k", "operator": "equal", "value": "v"}, taint(), False),
    ({"key": "k", "operator": "Gt", "value": "1"}, taint(value="5"), False),
    ({"key": "k", "operator": "Lt", "value": "9"}, taint(value="5"), False),
    # tolerationSeconds does not take part in matching
    (
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0},
        taint(effect="NoExecute"),
        True,
    ),
]


@pytest.mark.parametrize(("t", "tn", "expected"), TABLE)
def test_tolerates_taint_table(t: dict[str, Any], tn: Taint, expected: bool) -> None:
    assert tol(**t).tolerates(tn) is expected


# --- reference ------------------------------------------------------------------------------------


def ref_tolerates(t: dict[str, Any], tn: dict[str, str]) -> bool:
    """Tolerated when every condition the toleration states holds: its effect (if any) is the
    taint's, its key (if any) is the taint's, and its operator accepts the value."""
    conditions = []
    if t.get("effect"):
        conditions.append(t["effect"] == tn["effect"])
    if t.get("key"):
        conditions.append(t["key"] == tn["key"])
    value_rule = {
        "Exists": True,
        "Equal": t.get("value", "") == tn["value"],
        "": t.get("value", "") == tn["value"],
    }
    conditions.append(value_rule.get(t.get("operator", ""), False))
    return all(conditions)


KEYS = ["", "a", "b"]
VALS = ["", "x", "y"]
EFFECTS = ["", "NoSchedule", "PreferNoSchedule", "NoExecute"]
OPS = ["", "Equal", "Exists", "Gt", "Bogus"]

toleration_dict = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(KEYS),
        "operator": st.sampled_from(OPS),
        "value": st.sampled_from(VALS),
        "effect": st.sampled_from(EFFECTS),
        "tolerationSeconds": st.integers(0, 600),
    },
)
taint_dict = st.fixed_dictionaries(
    {"key": st.sampled_from(KEYS), "value": st.sampled_from(VALS), "effect": st.sampled_from(EFFECTS[1:])}
)


@pytest.mark.slow
@given(toleration_dict, taint_dict)
def test_tolerates_matches_reference(t: dict[str, Any], tn: dict[str, str]) -> None:
    assert Toleration.from_dict(t).tolerates(Taint.from_dict(tn)) == ref_tolerates(t, tn)


@pytest.mark.slow
@given(st.lists(toleration_dict, max_size=4), taint_dict)
def test_tolerates_all_is_any(ts: list[dict[str, Any]], tn: dict[str, str]) -> None:
    got = tolerates_all([Toleration.from_dict(t) for t in ts], Taint.from_dict(tn))
    assert got == any(ref_tolerates(t, tn) for t in ts)


@pytest.mark.slow
@given(st.lists(taint_dict, max_size=5), st.lists(toleration_dict, max_size=3))
def test_find_untolerated_is_the_first_hard_taint_nobody_tolerates(
    taints: list[dict[str, str]], tolerations: list[dict[str, Any]]
) -> None:
    got = find_untolerated(
        [Taint.from_dict(t) for t in taints], [Toleration.from_dict(t) for t in tolerations]
    )
    expected = next(
        (
            t
            for t in taints
            if t["effect"] in ("NoSchedule", "NoExecute")
            and not any(ref_tolerates(x, t) for x in tolerations)
        ),
        None,
    )
    assert (got.to_dict() if got is not None else None) == expected


def test_find_untolerated_filters_by_effect_and_keeps_node_order() -> None:
    taints = [
        taint("soft", "", "PreferNoSchedule"),
        taint("a", "1", "NoExecute"),
        taint("b", "2", "NoSchedule"),
    ]
    assert find_untolerated(taints, []) is taints[1]
    assert find_untolerated(taints, [tol(key="a", operator="Exists")]) is taints[2]
    assert find_untolerated(taints, [tol(operator="Exists", effect="NoSchedule")]) is taints[1]
    assert find_untolerated(taints, [tol(key="a", operator="Exists"), tol(key="b", value="2")]) is None
    assert find_untolerated(taints, [], effects=("PreferNoSchedule",)) is taints[0]
    assert find_untolerated([], [tol(key="x")]) is None


def test_taint_renders_as_in_the_scheduler_reason() -> None:
    # "node(s) had untolerated taint {key: value}"
    assert str(taint("dedicated", "infra")) == "{dedicated: infra}"
    assert str(taint("node.kubernetes.io/not-ready", "")) == "{node.kubernetes.io/not-ready: }"


def _tol(**kw: object) -> Toleration:
    return Toleration.from_dict(kw)


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        ([], None),  # nothing tolerates: evicted at once
        ([{"key": "other", "operator": "Exists"}], None),
        ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}], math.inf),
        (
            [
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
            ],
            300,  # the first toleration that matches the taint is the one used (GetMatchingTolerations)
        ),
        ([{"operator": "Exists", "tolerationSeconds": -5}], 0),
        (
            [
                {"operator": "Exists"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 30},
            ],
            math.inf,  # the catch-all comes first and has no tolerationSeconds: forever
        ),
    ],
)
def test_toleration_time_is_the_first_matching_toleration_per_taint(
    tolerations: list[dict[str, object]], expected: float | None
) -> None:
    taint = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    assert toleration_time([_tol(**t) for t in tolerations], taint) == expected
