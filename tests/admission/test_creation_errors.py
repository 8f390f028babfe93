"""``creation_errors``: the 422 a create would give, judged on a copy, with the create's own
sequence (namespace, defaults, the matchLabelKeys merge, validation); a stored object is not
merged again. ``validate`` and ``schedule`` use it, so they agree with ``admit``."""

from __future__ import annotations

from typing import Any

import pytest

from kubespread.admission import admit
from kubespread.admission.apiserver import creation_errors, is_stored
from kubespread.api.core import Pod

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
