"""WorkloadSpread apps.kruise.io/v1beta1 (kruise#2466) beside v1alpha1: the subset selectors
renamed (requiredNodeSelectorTerm → requiredNodeSelector, preferredNodeSelectorTerms →
preferredNodeSelector), subset conditions as metav1.Condition; read, validated, run by the
controller and written back in the version they came in."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from kubespread.admission.apiserver import admit
from kubespread.api.kruise import (
    KRUISE_V1BETA1,
    WorkloadSpread,
    workloadspread_from_v1beta1,
    workloadspread_to_v1beta1,
)
from kubespread.api.schema import check
from kubespread.cli.app import app

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE_A = {
    "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]
}


def _v1beta1() -> dict[str, Any]:
    return {
        "apiVersion": KRUISE_V1BETA1,
        "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "subsets": [
                {
                    "name": "a",
                    "requiredNodeSelector": ZONE_A,
                    "preferredNodeSelector": [{"weight": 10, "preference": ZONE_A}],
                    "maxReplicas": 3,
                },
                {"name": "rest"},
            ],
        },
        "status": {
            "subsetStatuses": [
                {
                    "name": "a",
                    "replicas": 1,
                    "missingReplicas": 2,
                    "conditions": [
                        {
                            "type": "Schedulable",
                            "status": "True",
                            "observedGeneration": 1,
                            "lastTransitionTime": "2026-01-01T00:00:00Z",
                            "reason": "Ok",
                            "message": "",
                        }
                    ],
                }
            ]
        },
    }


def test_conversion_both_ways_renames_the_subset_selectors() -> None:
    beta = _v1beta1()
    alpha = workloadspread_from_v1beta1(beta)
    subset = alpha["spec"]["subsets"][0]
    assert subset["requiredNodeSelectorTerm"] == ZONE_A and "requiredNodeSelector" not in subset
    assert subset["preferredNodeSelectorTerms"] == [{"weight": 10, "preference": ZONE_A}]
    assert "observedGeneration" not in alpha["status"]["subsetStatuses"][0]["conditions"][0]
    assert beta["spec"]["subsets"][0]["requiredNodeSelector"] == ZONE_A  # the input is left alone
    back = workloadspread_to_v1beta1(alpha)
    expected = copy.deepcopy(beta)
    del expected["status"]["subsetStatuses"][0]["conditions"][0]["observedGeneration"]
    assert back == expected


def test_a_v1beta1_object_decodes_to_the_model_and_is_written_back_as_v1beta1() -> None:
    ws = WorkloadSpread.from_dict(_v1beta1())
    assert ws.spec.subsets[0].required_node_selector_term is not None
    assert ws.spec.subsets[0].preferred_node_selector_terms[0].weight == 10
    out = ws.to_dict()
    assert out["apiVersion"] == KRUISE_V1BETA1
    assert out["spec"]["subsets"][0]["requiredNodeSelector"] == ZONE_A
    alpha = WorkloadSpread.from_dict(
        workloadspread_from_v1beta1(_v1beta1()) | {"apiVersion": "apps.kruise.io/v1alpha1"}
    )
    assert alpha.to_dict()["spec"]["subsets"][0]["requiredNodeSelectorTerm"] == ZONE_A


def test_strict_decoding_knows_both_versions_field_names() -> None:
    assert check("WorkloadSpread", _v1beta1()) == []
    as_alpha = _v1beta1() | {"apiVersion": "apps.kruise.io/v1alpha1"}  # v1beta1's names in v1alpha1
    unknown = {i.api_message for i in check("WorkloadSpread", as_alpha)}
    assert any("requiredNodeSelector" in m for m in unknown), unknown


def test_validation_names_v1beta1_fields() -> None:
    bad = _v1beta1()
    bad["spec"]["subsets"][0]["requiredNodeSelector"] = {
        "matchExpressions": [{"key": "k", "operator": "Bogus"}]
    }
    answer = admit(bad)
    assert not answer["accepted"]
    fields = [c["field"] for c in answer["causes"]]
    assert fields and all(
        "requiredNodeSelector" in f and "Term" not in f for f in fields if "Selector" in f
    ), fields


def test_the_controller_runs_a_v1beta1_workloadspread_as_v1alpha1(tmp_path: Path) -> None:
    """The proposal's example scenario with its WorkloadSpread written as v1beta1 places the
    pods as the v1alpha1 one does (3 in zone-a, 2 in zone-b after the first Deployment)."""
    scenario = yaml.safe_load((SCENARIOS / "workloadspread-subsets.yaml").read_text())
    scenario["cluster"] = [str(SCENARIOS / c) for c in scenario["cluster"]]
    ws = scenario["steps"][0]["apply"]
    scenario["steps"][0]["apply"] = workloadspread_to_v1beta1(ws)
    assert "requiredNodeSelector" in scenario["steps"][0]["apply"]["spec"]["subsets"][0]
    beta = tmp_path / "beta.yaml"
    beta.write_text(yaml.safe_dump(scenario))

    def placed(path: Path) -> list[Any]:
        args = ["simulate", str(path), "-o", "json", "--output-form", "full", "--no-progress"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        return [sorted((p["name"], p["node"]) for p in step["pods"]) for step in doc["steps"]]

    assert placed(beta) == placed(SCENARIOS / "workloadspread-subsets.yaml")
