"""``creation_errors``: the 422 a create would give, judged on a copy, with the create's own
sequence (namespace, defaults, the matchLabelKeys merge, validation); a stored object is not
merged again. ``validate`` and ``schedule`` use it, so they agree with ``admit``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.admission import admit
from kubespread.admission.apiserver import creation_errors, is_stored
from kubespread.admission.defaults import apply_defaults
from kubespread.api.core import Node, Pod
from kubespread.api.validation import validate

SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
BOTH = 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'
TSC_DUP = f"spec.topologySpreadConstraints[0][0]: {BOTH}"
ANTI = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]"


def _pod(spec_extra: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web", "pod-template-hash": "abc"}, **meta},
        "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec_extra},
    }


def _repeating_spread() -> dict[str, Any]:
    return {
        "topologySpreadConstraints": [
            {**SPREAD, "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["app"]}
        ]
    }


def _repeating_anti_affinity() -> dict[str, Any]:
    term = {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["app"],
    }
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (_repeating_spread(), TSC_DUP),
        (
            _repeating_anti_affinity(),
            f"{ANTI}: {BOTH}",
        ),
    ],
    ids=["topology spread", "pod anti-affinity"],
)
def test_a_key_repeated_after_the_merge_is_the_error_admit_gives(spec: dict[str, Any], expected: str) -> None:
    manifest = _pod(spec)
    obj = Pod.from_dict(manifest)
    assert [str(e) for e in creation_errors(obj)] == [expected]
    answer = admit(manifest)
    assert answer["accepted"] is False
    assert [f"{c['field']}: {c['message']}" for c in answer["causes"]] == [expected]
    assert obj.spec.topology_spread_constraints == Pod.from_dict(manifest).spec.topology_spread_constraints
    assert obj.metadata.namespace == ""  # judged on a copy


def test_a_key_the_pod_does_not_carry_is_no_error() -> None:
    spec = _repeating_spread()
    manifest = _pod(spec)
    manifest["metadata"]["labels"] = {"tier": "front"}
    spec["topologySpreadConstraints"][0]["labelSelector"] = {"matchLabels": {"app": "web"}}
    assert creation_errors(Pod.from_dict(manifest)) == []


def _merged_spread() -> dict[str, Any]:
    """A dumped pod's constraint: the registry merged pod-template-hash into its selector."""
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]}],
    }
    return {
        "topologySpreadConstraints": [
            {**SPREAD, "labelSelector": selector, "matchLabelKeys": ["pod-template-hash"]}
        ]
    }


@pytest.mark.parametrize(
    "meta",
    [{"uid": "0b0e6f5e-1111-4a4a-9c9c-000000000001"}, {"creationTimestamp": "2026-11-06T17:40:31Z"}],
    ids=["uid", "creationTimestamp"],
)
def test_a_stored_pod_is_not_merged_again(meta: dict[str, Any]) -> None:
    stored = Pod.from_dict(_pod(_merged_spread(), **meta))
    assert is_stored(stored)
    assert creation_errors(stored) == []


def test_the_same_pod_as_a_new_manifest_is_merged_and_refused() -> None:
    new = Pod.from_dict(_pod(_merged_spread()))
    assert not is_stored(new)
    assert [str(e) for e in creation_errors(new)] == [
        'spec.topologySpreadConstraints[0][0]: Invalid value: "pod-template-hash": '
        "exists in both matchLabelKeys and labelSelector"
    ]


_label = st.sampled_from(["zone", "a/b", "-bad", "x" * 64, "ok.example.com/key", ""])
_value = st.sampled_from(["", "v", "-bad-", "y" * 64, "1.5"])
_quantity = st.sampled_from(["1", "1000m", "0.5", "1024Mi", "1.5Gi", 2, 2.5, "-1"])


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(["n1", "Bad_Name", "", "a" * 260]),
    labels=st.dictionaries(_label, _value, max_size=3),
    taints=st.lists(
        st.fixed_dictionaries(
            {"key": _label, "value": _value, "effect": st.sampled_from(["NoSchedule", "Sometimes", ""])}
        ),
        max_size=3,
    ),
    quantities=st.dictionaries(st.sampled_from(["cpu", "memory", "pods"]), _quantity, max_size=3),
)
def test_a_stored_node_is_judged_as_its_defaulted_copy(
    name: str, labels: dict[str, str], taints: list[dict[str, str]], quantities: dict[str, Any]
) -> None:
    node = Node.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": "u", "labels": labels},
            "spec": {"taints": taints},
            "status": {"allocatable": quantities, "capacity": quantities},
        }
    )
    before = node.to_dict()
    probe = node.copy()
    apply_defaults(probe)
    assert [str(e) for e in creation_errors(node)] == [str(e) for e in validate(probe)]
    assert node.to_dict() == before  # judged, not changed
