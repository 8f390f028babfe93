"""The chain: plugins run in kube-apiserver's order, mutating then (after the registry) validating;
the first refusal ends the request."""

from __future__ import annotations

from dataclasses import dataclass, field

from admission_builders import pod, priority_class

from kubespread.admission import (
    DEFAULT_CHAIN,
    AdmissionChain,
    AdmissionContext,
    MutatingPlugin,
    Rejection,
    ValidatingPlugin,
    admit,
)
from kubespread.api.core import Pod
from kubespread.api.errors import FieldError
from kubespread.api.meta import KubeObject


@dataclass
class Recorder:
    """A plugin that notes each call in a shared log and refuses when told to."""

    name: str
    log: list[str]
    refuse: Rejection | list[FieldError] | None = None
    seen: list[dict] = field(default_factory=list)

    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        self.log.append(f"mutate {self.name}")
        assert not isinstance(self.refuse, list)
        return self.refuse

    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | list[FieldError] | None:
        self.log.append(f"validate {self.name}")
        self.seen.append(obj.to_dict())
        return self.refuse


def test_the_default_order() -> None:
    assert DEFAULT_CHAIN.names == (
        ("NamespaceLifecycle", "TaintNodesByCondition", "Priority", "DefaultTolerationSeconds"),
        ("HardAntiAffinity", "Priority"),
    )
    assert all(isinstance(p, MutatingPlugin) for p in DEFAULT_CHAIN.mutating)
    assert all(isinstance(p, ValidatingPlugin) for p in DEFAULT_CHAIN.validating)


def test_mutating_in_order_then_validating_in_order() -> None:
    log: list[str] = []
    a, b, c = Recorder("a", log), Recorder("b", log), Recorder("c", log)
    chain = AdmissionChain(mutating=(a, b), validating=(c, a))
    assert admit(pod().manifest(), chain=chain)["accepted"] is True
    assert log == ["mutate a", "mutate b", "validate c", "validate a"]


def test_the_first_mutating_refusal_ends_the_request() -> None:
    log: list[str] = []
    no = Rejection(403, "Forbidden", "no")
    chain = AdmissionChain(mutating=(Recorder("a", log), Recorder("b", log, no), Recorder("c", log)))
    assert admit(pod().manifest(), chain=chain) == no.answer()
    assert log == ["mutate a", "mutate b"]


def test_validating_field_errors_are_a_422() -> None:
    log: list[str] = []
    errors = [FieldError.invalid("spec.schedulerName", "x", "not here")]
    chain = AdmissionChain(validating=(Recorder("v", log, errors), Recorder("w", log)))
    assert admit(pod().manifest(), chain=chain) == {
        "accepted": False,
        "code": 422,
        "reason": "Invalid",
        "message": 'Pod "web" is invalid: spec.schedulerName: Invalid value: "x": not here',
        "causes": [
            {
                "field": "spec.schedulerName",
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "x": not here',
            }
        ],
    }
    assert log == ["validate v"]


def test_validating_plugins_see_the_defaulted_mutated_and_prepared_object() -> None:
    log: list[str] = []
    seer = Recorder("seer", log)
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["version"],
    }
    manifest = (
        pod().label("app", "web").label("version", "v2").set(topologySpreadConstraints=[spread]).manifest()
    )
    chain = AdmissionChain(mutating=DEFAULT_CHAIN.mutating, validating=(seer,))
    admit(manifest, chain=chain)
    spec = seer.seen[0]["spec"]
    assert spec["schedulerName"] == "default-scheduler"  # defaulting
    assert spec["priority"] == 0 and len(spec["tolerations"]) == 2  # mutating admission
    assert spec["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"] == [
        {"key": "version", "operator": "In", "values": ["v2"]}
    ]  # the registry's preparation


def test_priority_403_hides_validation_errors() -> None:
    bad = pod(bare=True).container("Bad_Name").set(priority=1000).manifest()
    answer = admit(bad)
    assert (answer["code"], answer["causes"]) == (403, [])
    assert admit(pod(bare=True).container("Bad_Name").manifest())["code"] == 422


def test_namespace_lifecycle_runs_before_priority() -> None:
    bad = pod(namespace="prod").set(priorityClassName="gold").manifest()
    assert admit(bad, namespaces=["default"])["code"] == 404
    assert admit(bad)["code"] == 403


def test_validation_runs_before_validating_admission() -> None:
    existing = priority_class("low", 1, global_default=True)
    manifest = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "huge"},
        "value": 2_000_000_000,
        "globalDefault": True,
    }
    assert admit(manifest, priority_classes=[existing])["code"] == 422
    manifest["value"] = 1000
    answer = admit(manifest, priority_classes=[existing])
    assert (answer["code"], answer["reason"]) == (403, "Forbidden")


def test_an_empty_chain_still_defaults_prepares_and_validates() -> None:
    answer = admit(pod().manifest(), chain=AdmissionChain())
    spec = answer["object"]["spec"]
    assert spec["schedulerName"] == "default-scheduler"
    assert "priority" not in spec and "tolerations" not in spec
    assert admit(pod(bare=True).container("a.b").manifest(), chain=AdmissionChain())["code"] == 422


def test_a_pod_object_is_changed_in_place() -> None:
    p = Pod.from_dict(pod().manifest())
    ctx = AdmissionContext.create()
    assert DEFAULT_CHAIN.mutate(p, ctx) is None
    assert p.spec.priority == 0 and [t.key for t in p.spec.tolerations] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    assert DEFAULT_CHAIN.validate(p, ctx) is None
