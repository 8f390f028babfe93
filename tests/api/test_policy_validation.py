"""PodDisruptionBudget (policy/v1) and PriorityClass bad input: kube-apiserver v1.36's exact
(field path, reason, message), through validation, ``kubespread admit`` and ``validate -f``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from k8s_messages import PERCENT
from kubespread.admission.apiserver import admit
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.validation import validate
from kubespread.cli.app import app

SELECTOR = {"matchLabels": {"app": "web"}}


def pdb(spec: dict[str, Any], name: str = "web", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, **meta},
        "spec": spec,
    }


def causes(manifest: dict[str, Any]) -> list[tuple[str, str, str]]:
    obj = PodDisruptionBudget.from_dict(manifest)
    return [(e.field, e.reason, e.body()) for e in validate(obj)]


@pytest.mark.parametrize(
    "spec",
    [
        {"minAvailable": 2, "selector": SELECTOR},
        {"minAvailable": "100%", "selector": SELECTOR},
        {"maxUnavailable": 0, "selector": SELECTOR},
        {"maxUnavailable": "0%", "selector": {}},
        {"selector": SELECTOR, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
        {"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"},  # no selector: selects none
        {},
    ],
)
def test_valid_budgets(spec: dict[str, Any]) -> None:
    assert causes(pdb(spec)) == []


def test_both_set_is_reported_at_spec_with_the_internal_struct_as_value() -> None:
    # the internal type has no json tags: Go field names, declaration order, nil as null
    assert causes(pdb({"minAvailable": 2, "maxUnavailable": "50%", "selector": SELECTOR})) == [
        (
            "spec",
            "FieldValueInvalid",
            'Invalid value: {"MinAvailable":2,"Selector":{"matchLabels":{"app":"web"}},'
            '"MaxUnavailable":"50%","UnhealthyPodEvictionPolicy":null}: '
            "minAvailable and maxUnavailable cannot be both set",
        )
    ]


def test_every_spec_error_at_once() -> None:
    spec = {
        "minAvailable": -1,
        "maxUnavailable": "150%",
        "unhealthyPodEvictionPolicy": "Sometimes",
        "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In"}]},
    }
    got = causes(pdb(spec))
    assert [c[0] for c in got] == [
        "spec",
        "spec.minAvailable",
        "spec.maxUnavailable",
        "spec.selector.matchExpressions[0].values",
        "spec.unhealthyPodEvictionPolicy",
    ]
    assert got[1:] == [
        ("spec.minAvailable", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.maxUnavailable", "FieldValueInvalid", 'Invalid value: "150%": must not be greater than 100%'),
        (
            "spec.selector.matchExpressions[0].values",
            "FieldValueRequired",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "spec.unhealthyPodEvictionPolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"',
        ),
    ]


@pytest.mark.parametrize(
    ("value", "messages"),
    [
        ("50", [PERCENT]),  # a numeric string is not a percent
        ("x%", [PERCENT]),
        ("-5%", [PERCENT]),
        ("101%", ["must not be greater than 100%"]),
    ],
)
def test_int_or_percent(value: str, messages: list[str]) -> None:
    assert causes(pdb({"maxUnavailable": value, "selector": SELECTOR})) == [
        ("spec.maxUnavailable", "FieldValueInvalid", f'Invalid value: "{value}": {m}') for m in messages
    ]


def test_metadata_is_checked_only_when_the_spec_is_valid_and_names_are_path_segments() -> None:
    # the registry's generic ObjectMeta check: loosest name rule, after the strategy's spec check
    assert causes(pdb({"minAvailable": 1}, name="My_Budget")) == []
    assert causes(pdb({"minAvailable": 1}, name="a/b%c", labels={"bad key": "x"})) == [
        ("metadata.name", "FieldValueInvalid", "Invalid value: \"a/b%c\": may not contain '/'"),
        ("metadata.name", "FieldValueInvalid", "Invalid value: \"a/b%c\": may not contain '%'"),
        (
            "metadata.labels",
            "FieldValueInvalid",
            "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' "
            "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
    ]
    assert causes(pdb({"minAvailable": 1}, name="..")) == [
        ("metadata.name", "FieldValueInvalid", "Invalid value: \"..\": may not be '..'")
    ]
    # a bad spec hides a bad name
    assert [c[0] for c in causes(pdb({"minAvailable": -1}, name="a/b"))] == ["spec.minAvailable"]


def test_admit_answers_as_the_api_server() -> None:
    answer = admit(pdb({"minAvailable": 1, "maxUnavailable": 1, "selector": SELECTOR}))
    assert answer["accepted"] is False and answer["code"] == 422
    assert answer["message"].startswith('PodDisruptionBudget.policy "web" is invalid: spec: Invalid value: {')
    ok = admit({**pdb({"minAvailable": "50%", "selector": SELECTOR}), "status": {"disruptionsAllowed": 5}})
    assert ok["accepted"] is True
    stored = ok["object"]
    assert stored["metadata"]["namespace"] == "default" and stored["metadata"]["generation"] == 1
    assert not stored.get("status")  # a create cannot set status


# ------------------------------------------------------------------ PriorityClass and priorityClassName
def test_priority_class_negative_value_is_valid_but_out_of_int32_is_a_decode_error() -> None:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}}
    assert admit({**pc, "value": -10})["accepted"] is True
    answer = admit({**pc, "value": -3_000_000_000})
    assert answer["code"] == 400
    assert answer["message"] == (
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal '
        "number -3000000000 into Go struct field PriorityClass.value of type int32"
    )
    empty = admit({**pc, "value": 1, "preemptionPolicy": ""})
    assert empty["causes"] == [
        {"field": "preemptionPolicy", "reason": "FieldValueRequired", "message": "Required value"}
    ]


def test_unknown_priority_class_name() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"priorityClassName": "nope", "containers": [{"name": "c", "image": "nginx"}]},
    }
    answer = admit(pod)
    assert (answer["code"], answer["reason"]) == (403, "Forbidden")
    assert answer["message"] == 'pods "p" is forbidden: no PriorityClass with name nope was found'


def test_validate_command_reports_the_three_bad_inputs(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\n"
        "spec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec: {priorityClassName: nope, containers: [{name: c, image: nginx}]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: q}\n"
        "spec: {priorityClassName: mine, containers: [{name: c, image: nginx}]}\n"
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: mine}\nvalue: -5\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: stored, uid: u1}\n"
        "spec: {priorityClassName: gone, containers: [{name: c, image: nginx}]}\n"
    )
    r = CliRunner().invoke(app, ["validate", "-f", str(tmp_path)])
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert any("PodDisruptionBudget default/web: spec: Invalid value: {" in line for line in lines)
    assert any(
        line.endswith(
            'Pod default/p: spec.priorityClassName: pods "p" is forbidden: '
            "no PriorityClass with name nope was found"
        )
        for line in lines
    )
    assert not any("default/q" in line or "mine" in line or "stored" in line for line in lines)
