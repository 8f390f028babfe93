"""A scenario runs as the Kubernetes version it is loaded for: its profiles, API server and
controllers read that version's gates."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubespread.api.features import KubeVersion, features_for
from kubespread.sim.run import simulate
from kubespread.sim.scenario import ScenarioError, parse_scenario

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "web", "rev": "2"}},
    "spec": {
        "containers": [{"name": "c", "image": "x"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "matchLabelKeys": ["rev"],
            }
        ],
    },
}
NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def _run(version: str) -> Any:
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "v"},
        "cluster": [NODE],
        "steps": [{"apply": POD}],
    }
    scenario = parse_scenario(doc, features=features_for(version))
    assert scenario.profiles is not None
    assert {p.features.version for p in scenario.profiles.values()} == {KubeVersion.parse(version)}
    return simulate(scenario).sim


def test_the_scenario_admits_and_schedules_as_its_version() -> None:
    for version, expressions in (("1.33", []), ("1.35", ["rev"])):
        sim = _run(version)
        assert sim.features.version == KubeVersion.parse(version)
        pod = sim.cluster.pods["default/p"]
        assert pod.spec.node_name == "n1"
        stored = pod.spec.topology_spread_constraints[0].label_selector
        assert [e.key for e in stored.match_expressions] == expressions, version


def test_an_apply_step_is_checked_as_the_scenarios_version() -> None:
    """A step's pod whose matchLabelKeys repeat a labelSelector key is refused at load by both
    versions, each by its own rule: v1.33 (unmerged, the legacy rule) at ``matchLabelKeys[0]``,
    v1.35 at the merged expression; as the cluster section is."""
    bad = copy.deepcopy(POD)
    bad["spec"]["topologySpreadConstraints"][0]["matchLabelKeys"] = ["app"]
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "v"},
        "cluster": [NODE],
        "steps": [{"apply": bad}],
    }
    fields = {}
    for version in ("1.33", "1.35"):
        with pytest.raises(ScenarioError) as e:
            parse_scenario(doc, features=features_for(version))
        (problem,) = e.value.problems
        assert "steps[0]" in problem, problem
        fields[version] = "matchLabelKeys[0]" in problem
    assert fields == {"1.33": True, "1.35": False}
