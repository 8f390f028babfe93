"""The Pod registry's PrepareForCreate alone: matchLabelKeys / mismatchLabelKeys merged into the
term's labelSelector."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment, pod

from kubespread.admission import prepare_for_create

SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
TIER_EXISTS = {"key": "tier", "operator": "Exists"}

# (id, selector, matchLabelKeys, the selector after the merge) for a pod labelled app=web, version=v2
SPREAD_CASES: list[tuple[str, dict[str, Any] | None, list[str], dict[str, Any] | None]] = [
    (
        "In appended after the user's expressions",
        {"matchLabels": {"app": "web"}, "matchExpressions": [TIER_EXISTS]},
        ["version"],
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [TIER_EXISTS, {"key": "version", "operator": "In", "values": ["v2"]}],
        },
    ),
    (
        "keys the pod lacks are skipped",
        {"matchLabels": {"app": "web"}},
        ["pod-template-hash", "version"],
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "version", "operator": "In", "values": ["v2"]}],
        },
    ),
    (
        "no key the pod carries: unchanged",
        {"matchLabels": {"app": "web"}},
        ["track"],
        {"matchLabels": {"app": "web"}},
    ),
    ("no selector: nothing to narrow", None, ["version"], None),
]


@pytest.mark.parametrize(
    ("selector", "keys", "merged"), [c[1:] for c in SPREAD_CASES], ids=[c[0] for c in SPREAD_CASES]
)
def test_topology_spread(
    selector: dict[str, Any] | None, keys: list[str], merged: dict[str, Any] | None
) -> None:
    constraint: dict[str, Any] = {**SPREAD, "matchLabelKeys": keys}
    if selector is not None:
        constraint["labelSelector"] = selector
    p = pod().label("app", "web").label("version", "v2").set(topologySpreadConstraints=[constraint]).obj()
    prepare_for_create(p)
    out = p.to_dict()["spec"]["topologySpreadConstraints"][0]
    assert out.get("labelSelector") == merged
    assert out["matchLabelKeys"] == keys  # kept


def test_pod_affinity_terms_required_and_preferred() -> None:
    term = {
        "labelSelector": {"matchLabels": {"app": "web"}},
        "topologyKey": "kubernetes.io/hostname",
        "matchLabelKeys": ["version"],
        "mismatchLabelKeys": ["app"],
    }
    affinity = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": term}]
        },
    }
    p = pod().label("app", "web").label("version", "v2").set(affinity=affinity).obj()
    prepare_for_create(p)
    out = p.to_dict()["spec"]["affinity"]
    merged = [
        {"key": "version", "operator": "In", "values": ["v2"]},
        {"key": "app", "operator": "NotIn", "values": ["web"]},
    ]
    required = out["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    preferred = out["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0][
        "podAffinityTerm"
    ]
    for t in (required, preferred):
        assert t["labelSelector"] == {"matchLabels": {"app": "web"}, "matchExpressions": merged}
        assert (t["matchLabelKeys"], t["mismatchLabelKeys"]) == (["version"], ["app"])


def test_deployment_templates_are_not_merged() -> None:
    constraint = {**SPREAD, "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["app"]}
    d = deployment().set(topologySpreadConstraints=[constraint]).obj()
    before = d.to_dict()
    prepare_for_create(d)
    assert d.to_dict() == before
