"""kubespread.admission against shared/conformance/admission: what kube-apiserver v1.36 answered
to 240 manifests (README there). Every rejection must match (compare_admission.diff_case: the
multiset of (field, reason) causes); every acceptance must be an acceptance (the stored object is
compared once defaulting exists). Also the admission steps the corpus relies on, tested alone."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubespread.admission.apiserver import admit, admit_text
from kubespread.api.apps import PriorityClass
from kubespread.api.meta import ObjectMeta

SHARED = Path(__file__).parents[2].parent / "shared"
CORPUS = SHARED / "conformance" / "admission"
CASES = CORPUS / "cases"

needs_corpus = pytest.mark.skipif(
    not (CASES.is_dir() and (CORPUS / "compare_admission.py").is_file()),
    reason=f"the admission corpus is not there ({CORPUS}): it lives in the shared checkout beside the repo",
)


def _compare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_admission", CORPUS / "compare_admission.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(accepted: bool) -> list[str]:
    if not CASES.is_dir():
        return []
    names = []
    for f in sorted(CASES.glob("*.expected.json")):
        if json.loads(f.read_text())["accepted"] is accepted:
            names.append(f.name.removesuffix(".expected.json"))
    return names


def _run(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    expected = json.loads((CASES / f"{name}.expected.json").read_text())
    actual = admit_text((CASES / f"{name}.input.yaml").read_text())
    return expected, actual


@needs_corpus
@pytest.mark.parametrize("name", _cases(accepted=False))
def test_rejection_matches(name: str) -> None:
    expected, actual = _run(name)
    assert _compare().diff_case(expected, actual) == []


@needs_corpus
@pytest.mark.parametrize("name", _cases(accepted=True))
def test_acceptance_is_an_acceptance(name: str) -> None:
    _, actual = _run(name)
    assert actual["accepted"] is True, actual.get("message")


@needs_corpus
def test_rejection_messages_are_identical() -> None:
    """Not a pass/fail rule of the corpus (messages are only counted there), but we match them
    all: status message and every cause's message."""
    compare = _compare()
    names = _cases(accepted=False)
    differ = [n for n in names if not compare.messages_identical(*_run(n))]
    assert len(names) == 125
    assert differ == [], f"messages identical: {len(names) - len(differ)}/{len(names)}"


# --- the steps alone ------------------------------------------------------------------------------------


def _pod(**spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx"}]}
    s.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "version": "v2"}},
        "spec": s,
    }


def test_accepted_answer_carries_the_object() -> None:
    answer = admit(_pod())
    assert answer["accepted"] is True
    assert answer["object"]["metadata"]["name"] == "web"
    assert answer["object"]["spec"]["priority"] == 0  # set by the Priority plugin


def test_priority_without_class_is_forbidden_before_validation() -> None:
    answer = admit(_pod(priority=1000, containers=[{"name": "Bad_Name", "image": "x"}]))
    assert answer == {
        "accepted": False,
        "code": 403,
        "reason": "Forbidden",
        "message": 'pods "web" is forbidden: the integer value of priority (1000) '
        "must not be provided in pod spec; priority admission controller computed 0 "
        "from the given PriorityClass name",
        "causes": [],
    }


def test_priority_matching_its_class_is_accepted() -> None:
    answer = admit(_pod(priorityClassName="system-node-critical", priority=2000001000))
    assert answer["accepted"] is True
    assert answer["object"]["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_unknown_priority_class_is_forbidden() -> None:
    answer = admit(_pod(priorityClassName="high"))
    assert (answer["code"], answer["message"]) == (
        403,
        'pods "web" is forbidden: no PriorityClass with name high was found',
    )


def test_priority_classes_can_be_given() -> None:
    high = PriorityClass(metadata=ObjectMeta(name="high"), value=1000)
    answer = admit(_pod(priorityClassName="high"), priority_classes={"high": high})
    assert answer["accepted"] is True and answer["object"]["spec"]["priority"] == 1000


def test_deployment_template_priority_is_not_checked() -> None:
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"priority": 1000, "containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
    assert admit(manifest)["accepted"] is True


def test_match_label_keys_are_merged_into_the_selector() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["version", "pod-template-hash"],
    }
    term = {
        "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        "topologyKey": "kubernetes.io/hostname",
        "mismatchLabelKeys": ["version"],
    }
    answer = admit(
        _pod(
            topologySpreadConstraints=[spread],
            affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        )
    )
    assert answer["accepted"] is True
    spec = answer["object"]["spec"]
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "version", "operator": "In", "values": ["v2"]}],
    }
    assert spec["topologySpreadConstraints"][0]["matchLabelKeys"] == ["version", "pod-template-hash"]
    merged = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert merged["labelSelector"]["matchExpressions"] == [
        {"key": "tier", "operator": "Exists"},
        {"key": "version", "operator": "NotIn", "values": ["v2"]},
    ]


def test_key_in_match_label_keys_and_selector_fires_only_for_a_label_the_pod_carries() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web", "track": "stable"}},
        "matchLabelKeys": ["track", "app"],
    }
    answer = admit(_pod(topologySpreadConstraints=[spread]))
    assert answer["causes"] == [
        {
            "field": "spec.topologySpreadConstraints[0][1]",
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "app": exists in both matchLabelKeys and labelSelector',
        }
    ]
    assert answer["message"] == (
        'Pod "web" is invalid: spec.topologySpreadConstraints[0][1]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector"
    )


def test_invalid_message_lists_distinct_errors_in_brackets() -> None:
    answer = admit(_pod(containers=[{"name": "a.b", "image": "x"}, {"name": "a.b", "image": "x"}]))
    assert (answer["code"], answer["reason"]) == (422, "Invalid")
    assert answer["message"] == (
        'Pod "web" is invalid: [spec.containers[0].name: Invalid value: "a.b": must not contain dots, '
        'spec.containers[1].name: Invalid value: "a.b": must not contain dots, '
        'spec.containers[1].name: Duplicate value: "a.b"]'
    )
    assert len(answer["causes"]) == 3


def test_deployment_message_names_the_group() -> None:
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": -1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "x"}]},
            },
        },
    }
    assert admit(manifest)["message"] == (
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


def test_a_malformed_quantity_is_a_bad_request() -> None:
    answer = admit(
        _pod(containers=[{"name": "app", "image": "x", "resources": {"requests": {"cpu": "1 core"}}}])
    )
    assert answer == {
        "accepted": False,
        "code": 400,
        "reason": "BadRequest",
        "message": 'Pod in version "v1" cannot be handled as a Pod: '
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        "causes": [],
    }


def test_a_wrong_type_is_a_bad_request_naming_the_field() -> None:
    answer = admit(_pod(topologySpreadConstraints=[{"maxSkew": "one"}]))
    assert answer["code"] == 400 and answer["causes"] == []
    assert answer["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: spec.topologySpreadConstraints[0].maxSkew: '
        "cannot unmarshal string into an integer field"
    )


def test_text_that_is_not_yaml_or_not_an_object_is_a_bad_request() -> None:
    assert admit_text("kind: Pod\nmetadata: {name: [\n")["code"] == 400
    assert admit_text("- 1\n- 2\n")["code"] == 400
    assert admit_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")["reason"] == "BadRequest"
    wrong_group = admit_text("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\n")
    assert wrong_group["message"] == 'no matches for kind "Pod" in version "apps/v1"'
