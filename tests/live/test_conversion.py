"""The WorkloadSpread CRD's conversion webhook (/convert-workloadspreads): ConversionReview v1
between apps.kruise.io/v1alpha1 and v1beta1 (kruise#2466)."""

from __future__ import annotations

import json
from typing import Any

from kubespread.admission.framework import AdmissionOptions
from kubespread.live.webhook import CONVERT_WORKLOADSPREADS, AdmissionHandlers

TERM = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}


def _ws(version: str, selector_key: str) -> dict[str, Any]:
    return {
        "apiVersion": f"apps.kruise.io/{version}",
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "default", "uid": "1"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "subsets": [{"name": "a", selector_key: TERM}],
        },
    }


def _convert(objects: list[Any], desired: str) -> tuple[int, Any]:
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "r1", "desiredAPIVersion": desired, "objects": objects},
    }
    handlers = AdmissionHandlers(None, options=AdmissionOptions(), merge_match_label_keys=False)
    return handlers.handle(CONVERT_WORKLOADSPREADS, json.dumps(body).encode())


def test_v1alpha1_objects_are_converted_to_v1beta1_and_back() -> None:
    status, answer = _convert([_ws("v1alpha1", "requiredNodeSelectorTerm")], "apps.kruise.io/v1beta1")
    assert status == 200 and answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "r1" and response["result"] == {"status": "Success"}
    assert response["convertedObjects"] == [_ws("v1beta1", "requiredNodeSelector")]
    _, back = _convert(response["convertedObjects"], "apps.kruise.io/v1alpha1")
    assert back["response"]["convertedObjects"] == [_ws("v1alpha1", "requiredNodeSelectorTerm")]


def test_anything_else_fails_the_conversion_and_a_non_review_is_a_bad_request() -> None:
    _, answer = _convert([{"apiVersion": "v1", "kind": "Pod"}], "apps.kruise.io/v1beta1")
    assert answer["response"]["result"]["status"] == "Failure"
    _, answer = _convert([_ws("v1alpha1", "requiredNodeSelectorTerm")], "apps.kruise.io/v2")
    assert answer["response"]["result"]["status"] == "Failure"
    handlers = AdmissionHandlers(None, options=AdmissionOptions(), merge_match_label_keys=False)
    assert handlers.handle(CONVERT_WORKLOADSPREADS, b"{}")[0] == 400
    assert handlers.handle(CONVERT_WORKLOADSPREADS, b"", method="GET")[0] == 405
