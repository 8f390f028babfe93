"""One create request end to end (admit, admit_text, admit_object): the answers and the stored
objects, exactly."""

from __future__ import annotations

import pytest
from admission_builders import deployment, node, pod, priority_class

from kubespread.admission import AdmissionContext, admit, admit_object, admit_text
from kubespread.api.core import Pod

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {**NOT_READY, "key": "node.kubernetes.io/unreachable"}


def test_an_accepted_pod_is_the_whole_stored_object() -> None:
    manifest = (
        pod(bare=True).label("app", "web").container(limits={"cpu": 0.5, "memory": "1024Mi"}).manifest()
    )
    manifest["metadata"].pop("namespace")
    assert admit(manifest) == {
        "accepted": True,
        "object": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web"}, "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "1Gi"},
                            "requests": {"cpu": "500m", "memory": "1Gi"},
                        },
                    }
                ],
                "tolerations": [NOT_READY, UNREACHABLE],
                "priority": 0,
                "schedulerName": "default-scheduler",
                "preemptionPolicy": "PreemptLowerPriority",
            },
        },
    }


def test_an_accepted_node_is_tainted() -> None:
    answer = admit(node().taint("dedicated", "NoSchedule", "infra").manifest())
    assert answer == {
        "accepted": True,
        "object": {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "node-1"},
            "spec": {
                "taints": [
                    {"key": "dedicated", "effect": "NoSchedule", "value": "infra"},
                    {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                ]
            },
        },
    }


def test_an_accepted_deployment_template_gets_the_scheduler_only() -> None:
    manifest = deployment(bare=True).container(limits={"cpu": 2}).set(priority=1000).manifest()
    template = admit(manifest)["object"]["spec"]["template"]["spec"]
    assert template == {
        "containers": [
            {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"limits": {"cpu": "2"}}}
        ],
        "priority": 1000,
        "schedulerName": "default-scheduler",
    }


def test_priority_classes_are_added_to_the_builtin_ones() -> None:
    high = priority_class("high", 1000)
    answer = admit(pod().set(priorityClassName="high").manifest(), priority_classes={"high": high})
    assert answer["object"]["spec"]["priority"] == 1000
    answer = admit(pod().set(priorityClassName="system-node-critical").manifest(), priority_classes=[high])
    assert answer["object"]["spec"]["priority"] == 2000001000


def test_a_context_can_be_given_whole() -> None:
    ctx = AdmissionContext.create(namespaces=["team-a"])
    assert admit(pod(namespace="team-b").manifest(), context=ctx)["code"] == 404
    with pytest.raises(TypeError):
        admit(pod().manifest(), context=ctx, namespaces=["x"])


def test_admit_object_changes_the_object_it_is_given() -> None:
    p = Pod.from_dict(pod().manifest())
    answer = admit_object(p)
    assert answer["accepted"] is True and answer["object"] == p.to_dict()
    assert p.spec.scheduler_name == "default-scheduler"


def test_key_in_match_label_keys_and_selector_fires_only_for_a_label_the_pod_carries() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web", "track": "stable"}},
        "matchLabelKeys": ["track", "app"],
    }
    answer = admit(pod().label("app", "web").set(topologySpreadConstraints=[spread]).manifest())
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


def test_validation_sees_requests_copied_from_limits() -> None:
    """An unknown resource name is two errors per map; a limits-only one is copied first: four."""
    answer = admit(pod(bare=True).container(limits={"gpu": "1"}).manifest())
    assert [c["field"] for c in answer["causes"]] == [
        "spec.containers[0].resources.limits[gpu]",
        "spec.containers[0].resources.limits[gpu]",
        "spec.containers[0].resources.requests[gpu]",
        "spec.containers[0].resources.requests[gpu]",
    ]


def test_invalid_message_lists_distinct_errors_in_brackets() -> None:
    answer = admit(pod(bare=True).container("a.b").container("a.b").manifest())
    assert (answer["code"], answer["reason"]) == (422, "Invalid")
    assert answer["message"] == (
        'Pod "web" is invalid: [spec.containers[0].name: Invalid value: "a.b": must not contain dots, '
        'spec.containers[1].name: Invalid value: "a.b": must not contain dots, '
        'spec.containers[1].name: Duplicate value: "a.b"]'
    )
    assert len(answer["causes"]) == 3


def test_deployment_message_names_the_group() -> None:
    manifest = deployment().manifest()
    manifest["spec"]["replicas"] = -1
    assert admit(manifest)["message"] == (
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


def test_a_malformed_quantity_is_a_bad_request() -> None:
    assert admit(pod(bare=True).container(requests={"cpu": "1 core"}).manifest()) == {
        "accepted": False,
        "code": 400,
        "reason": "BadRequest",
        "message": 'Pod in version "v1" cannot be handled as a Pod: '
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        "causes": [],
    }


def test_a_wrong_type_is_a_bad_request_naming_the_field() -> None:
    answer = admit(pod().set(topologySpreadConstraints=[{"maxSkew": "one"}]).manifest())
    assert answer["code"] == 400 and answer["causes"] == []
    assert answer["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct '
        "field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32"
    )


def test_text_that_is_not_yaml_or_not_an_object_is_a_bad_request() -> None:
    assert admit_text("kind: Pod\nmetadata: {name: [\n")["code"] == 400
    assert admit_text("- 1\n- 2\n")["code"] == 400
    assert (
        admit_text("apiVersion: v1\nmetadata: {name: p}\n")["message"]
        == "Object 'Kind' is missing in the manifest"
    )
    assert (
        admit_text("kind: Pod\nmetadata: {name: p}\n")["message"]
        == "Object 'apiVersion' is missing in the manifest"
    )
    assert admit_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")["reason"] == "BadRequest"
    wrong_group = admit_text("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: p}\n")
    assert wrong_group["message"] == 'no matches for kind "Pod" in version "apps/v1"'
