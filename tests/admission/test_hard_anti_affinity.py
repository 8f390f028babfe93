"""HardAntiAffinity: the pod affinity design's limit (no required anti-affinity against all
namespaces beyond a node) and kube's LimitPodHardAntiAffinityTopology (no required
anti-affinity beyond a node at all), both off by default."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import deployment, pod

from kubespread.admission import (
    AdmissionContext,
    AdmissionOptions,
    HardAntiAffinity,
    Operation,
    Rejection,
    admit,
)

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ALL_NS: dict[str, Any] = {}  # namespaceSelector {}: every namespace
SEL = {"matchLabels": {"app": "web"}}

DESIGN = AdmissionContext.create(options=AdmissionOptions(hard_anti_affinity_limit=True))
KUBE = AdmissionContext.create(options=AdmissionOptions(limit_pod_hard_anti_affinity_topology=True))
BOTH = AdmissionContext.create(
    options=AdmissionOptions(hard_anti_affinity_limit=True, limit_pod_hard_anti_affinity_topology=True)
)


def term(key: str, ns_selector: dict | None = None, **extra: Any) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": SEL, "topologyKey": key, **extra}
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def with_affinity(affinity: dict[str, Any]) -> dict[str, Any]:
    return pod().label("app", "web").set(affinity=affinity).manifest()


def anti(*terms: dict, form: str = IDE) -> dict[str, Any]:
    return with_affinity({"podAntiAffinity": {form: list(terms)}})


def design_refusal(path: str, key: str) -> str:
    return (
        f'pods "web" is forbidden: {path}.topologyKey: a required anti-affinity term that selects all '
        f'namespaces (namespaceSelector: {{}}) may only use topologyKey {HOST}, not "{key}"'
    )


def kube_refusal(path: str, key: str) -> str:
    return (
        f'pods "web" is forbidden: {path}.topologyKey: affinity.PodAntiAffinity.RequiredDuringScheduling '
        f"has TopologyKey {key} but only key {HOST} is allowed"
    )


A = "spec.affinity.podAntiAffinity"

# (id, manifest, context, expected message or None for accepted)
CASES: list[tuple[str, dict, AdmissionContext | None, str | None]] = [
    ("off: kube-apiserver accepts a zone against everyone", anti(term(ZONE, ALL_NS)), None, None),
    ("design: all namespaces, zone", anti(term(ZONE, ALL_NS)), DESIGN, design_refusal(f"{A}.{IDE}[0]", ZONE)),
    (
        "design: RDE form too",
        anti(term(ZONE, ALL_NS), form=RDE),
        DESIGN,
        design_refusal(f"{A}.{RDE}[0]", ZONE),
    ),
    (
        "design: the offending term is named",
        anti(term(HOST, ALL_NS), term("rack", ALL_NS)),
        DESIGN,
        design_refusal(f"{A}.{IDE}[1]", "rack"),
    ),
    (
        "design: ignored form before the enforced one",
        with_affinity({"podAntiAffinity": {RDE: [term("rack", ALL_NS)], IDE: [term(ZONE, ALL_NS)]}}),
        DESIGN,
        design_refusal(f"{A}.{IDE}[0]", ZONE),
    ),
    ("design: exclusive node is fine", anti(term(HOST, ALL_NS)), DESIGN, None),
    ("design: own namespace, zone", anti(term(ZONE)), DESIGN, None),
    ("design: listed namespaces, zone", anti(term(ZONE, namespaces=["a", "b"])), DESIGN, None),
    ("design: labelled namespaces, zone", anti(term(ZONE, {"matchLabels": {"team": "x"}})), DESIGN, None),
    (
        "design: preferred terms are not limited",
        with_affinity({"podAntiAffinity": {PREF: [{"weight": 1, "podAffinityTerm": term(ZONE, ALL_NS)}]}}),
        DESIGN,
        None,
    ),
    (
        "design: pod affinity is not limited",
        with_affinity({"podAffinity": {IDE: [term(ZONE, ALL_NS)]}}),
        DESIGN,
        None,
    ),
    ("kube: any zone term", anti(term(ZONE)), KUBE, kube_refusal(f"{A}.{IDE}[0]", ZONE)),
    ("kube: RDE form", anti(term(HOST), term(ZONE), form=RDE), KUBE, kube_refusal(f"{A}.{RDE}[1]", ZONE)),
    ("kube: hostname is fine", anti(term(HOST, ALL_NS), term(HOST)), KUBE, None),
    (
        "both: kube's stricter wording wins",
        anti(term(ZONE, ALL_NS)),
        BOTH,
        kube_refusal(f"{A}.{IDE}[0]", ZONE),
    ),
    ("off: kube's case accepted too", anti(term(ZONE)), None, None),
]


@pytest.mark.parametrize(("name", "manifest", "ctx", "message"), CASES, ids=[c[0] for c in CASES])
def test_required_anti_affinity_limits(name: str, manifest: dict, ctx: Any, message: str | None) -> None:
    answer = admit(manifest, context=ctx)
    if message is None:
        assert answer["accepted"] is True, answer
    else:
        assert answer == {
            "accepted": False,
            "code": 403,
            "reason": "Forbidden",
            "message": message,
            "causes": [],
        }


def test_deployment_templates_are_not_looked_at() -> None:
    d = deployment().set(affinity={"podAntiAffinity": {IDE: [term(ZONE, ALL_NS)]}}).manifest()
    assert admit(d, context=BOTH)["accepted"] is True


def test_validation_errors_come_before_the_limit() -> None:
    answer = admit(anti(term(ZONE, ALL_NS), {"labelSelector": SEL, "topologyKey": ""}), context=BOTH)
    assert answer["code"] == 422


@pytest.mark.parametrize(
    ("operation", "refused"),
    [
        (Operation.CREATE, True),
        (Operation.UPDATE, True),
        (Operation.DELETE, False),
        (Operation.CONNECT, False),
    ],
)
def test_create_and_update_only(operation: Operation, refused: bool) -> None:
    obj = pod().set(affinity={"podAntiAffinity": {IDE: [term(ZONE)]}}).obj()
    ctx = AdmissionContext.create(operation=operation, options=KUBE.options)
    outcome = HardAntiAffinity().validate(obj, ctx)
    assert isinstance(outcome, Rejection) is refused


def test_nothing_to_do_with_both_options_off() -> None:
    obj = pod().set(affinity={"podAntiAffinity": {IDE: [term(ZONE, ALL_NS)]}}).obj()
    assert HardAntiAffinity().validate(obj, AdmissionContext.create()) is None
