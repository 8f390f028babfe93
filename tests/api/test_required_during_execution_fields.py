"""The design's RequiredDuringSchedulingRequiredDuringExecution fields: decoded as typed fields
(not left as unknown ones), dumped only when given, validated exactly as the
IgnoredDuringExecution forms at their own paths, and merged with matchLabelKeys on create."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from builders import HOSTNAME, make_pod
from kubespread.admission import admit
from kubespread.api.core import Pod
from kubespread.api.validation import validate

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
WEB = {"matchLabels": {"app": "web"}}


def _with(kind: str, form: str, value: Any) -> dict[str, Any]:
    """A valid pod manifest with spec.affinity.<kind>.<form> = value."""
    d = make_pod("web").label("app", "web").dict()
    d["spec"]["affinity"] = {kind: {form: copy.deepcopy(value)}}
    return d


def _errors(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e.field, str(e)) for e in validate(Pod.from_dict(manifest))]


# --- the model ------------------------------------------------------------------------------------


def test_absent_fields_stay_out_of_the_manifest() -> None:
    d = _with("podAntiAffinity", IDE, [{"labelSelector": WEB, "topologyKey": HOSTNAME}])
    d["spec"]["affinity"]["nodeAffinity"] = {}
    pod = Pod.from_dict(d)
    out = pod.to_dict()["spec"]["affinity"]
    assert out == d["spec"]["affinity"]
    assert RDE not in out["podAntiAffinity"] and RDE not in out["nodeAffinity"]
    assert pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
    assert pod.spec.affinity.node_affinity.required_during_scheduling_required_during_execution is None


@pytest.mark.parametrize(
    ("kind", "attr", "value"),
    [
        ("podAffinity", "pod_affinity", [{"labelSelector": WEB, "topologyKey": HOSTNAME}]),
        (
            "podAntiAffinity",
            "pod_anti_affinity",
            [{"labelSelector": WEB, "topologyKey": "zone", "namespaceSelector": {}}],
        ),
        (
            "nodeAffinity",
            "node_affinity",
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]},
        ),
    ],
)
def test_given_fields_are_typed_and_round_trip(kind: str, attr: str, value: Any) -> None:
    d = _with(kind, RDE, value)
    pod = Pod.from_dict(d)
    rule = getattr(pod.spec.affinity, attr)
    assert not rule.extra  # a modelled field, not an unknown one kept aside
    assert rule.required_during_scheduling_required_during_execution
    assert pod.to_dict() == d


# --- validation: same errors as the IgnoredDuringExecution form, at the RDE path ---------------------

BAD_POD_TERMS = [
    ("empty topologyKey", {"labelSelector": WEB, "topologyKey": ""}),
    ("invalid topologyKey", {"labelSelector": WEB, "topologyKey": "zone!"}),
    (
        "bad selector operator",
        {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}, "topologyKey": HOSTNAME},
    ),
    ("bad namespace", {"labelSelector": WEB, "namespaces": ["Not_A_Name"], "topologyKey": HOSTNAME}),
    ("matchLabelKeys without selector", {"topologyKey": HOSTNAME, "matchLabelKeys": ["app"]}),
    (
        "key in match and mismatch",
        {"labelSelector": WEB, "topologyKey": HOSTNAME, "matchLabelKeys": ["v"], "mismatchLabelKeys": ["v"]},
    ),
]


@pytest.mark.parametrize("kind", ["podAffinity", "podAntiAffinity"])
@pytest.mark.parametrize(("name", "term"), BAD_POD_TERMS, ids=[n for n, _ in BAD_POD_TERMS])
def test_pod_terms_are_validated_like_the_ignored_form(kind: str, name: str, term: dict) -> None:
    ignored = _errors(_with(kind, IDE, [{"labelSelector": WEB, "topologyKey": HOSTNAME}, term]))
    assert ignored, "the case must be invalid in the IgnoredDuringExecution form"
    enforced = _errors(_with(kind, RDE, [{"labelSelector": WEB, "topologyKey": HOSTNAME}, term]))
    assert enforced == [(f.replace(IDE, RDE), m.replace(IDE, RDE)) for f, m in ignored]
    assert all(f.startswith(f"spec.affinity.{kind}.{RDE}[1]") for f, _ in enforced)


BAD_NODE_SELECTORS = [
    ("no terms", {"nodeSelectorTerms": []}),
    ("In without values", {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]}),
    ("bad operator", {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Near"}]}]}),
    (
        "bad field",
        {"nodeSelectorTerms": [{"matchFields": [{"key": "spec.x", "operator": "In", "values": ["n"]}]}]},
    ),
]


@pytest.mark.parametrize(("name", "sel"), BAD_NODE_SELECTORS, ids=[n for n, _ in BAD_NODE_SELECTORS])
def test_node_selector_is_validated_like_the_ignored_form(name: str, sel: dict) -> None:
    ignored = _errors(_with("nodeAffinity", IDE, sel))
    assert ignored
    enforced = _errors(_with("nodeAffinity", RDE, sel))
    assert enforced == [(f.replace(IDE, RDE), m.replace(IDE, RDE)) for f, m in ignored]
    assert all(f.startswith(f"spec.affinity.nodeAffinity.{RDE}") for f, _ in enforced)


def test_both_forms_report_their_own_errors_ignored_first() -> None:
    d = _with("podAntiAffinity", IDE, [{"labelSelector": WEB, "topologyKey": "zone!"}])
    d["spec"]["affinity"]["podAntiAffinity"][RDE] = [{"labelSelector": WEB, "topologyKey": "rack!"}]
    fields = [f for f, _ in _errors(d)]
    assert fields == [
        f"spec.affinity.podAntiAffinity.{IDE}[0].topologyKey",
        f"spec.affinity.podAntiAffinity.{RDE}[0].topologyKey",
    ]


def test_a_valid_rde_pod_is_valid() -> None:
    d = _with("podAffinity", RDE, [{"labelSelector": WEB, "topologyKey": HOSTNAME}])
    d["spec"]["affinity"]["nodeAffinity"] = {
        RDE: {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}
    }
    assert _errors(d) == []


# --- matchLabelKeys merge on create ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["podAffinity", "podAntiAffinity"])
def test_match_label_keys_are_merged_into_rde_terms(kind: str) -> None:
    term = {
        "labelSelector": WEB,
        "topologyKey": HOSTNAME,
        "matchLabelKeys": ["v"],
        "mismatchLabelKeys": ["t"],
    }
    d = _with(kind, RDE, [term])
    d["metadata"]["labels"].update(v="2", t="blue")
    answer = admit(d)
    assert answer["accepted"] is True, answer
    stored = answer["object"]["spec"]["affinity"][kind][RDE][0]["labelSelector"]
    assert stored["matchExpressions"] == [
        {"key": "v", "operator": "In", "values": ["2"]},
        {"key": "t", "operator": "NotIn", "values": ["blue"]},
    ]


def test_merged_rde_key_already_in_selector_is_refused_at_its_path() -> None:
    sel = {"matchExpressions": [{"key": "v", "operator": "In", "values": ["2"]}]}
    d = _with(
        "podAntiAffinity", RDE, [{"labelSelector": sel, "topologyKey": HOSTNAME, "matchLabelKeys": ["v"]}]
    )
    d["metadata"]["labels"]["v"] = "2"
    answer = admit(d)
    assert answer["code"] == 422
    assert [c["field"] for c in answer["causes"]] == [f"spec.affinity.podAntiAffinity.{RDE}[0][0]"]
