"""Volumes and volume mounts (ValidateVolumes, ValidateVolumeMounts): a mount that names no
volume is refused as kube-apiserver refuses it, in a Pod, a workload template and init
containers, with kube's paths, messages and order."""

from __future__ import annotations

from typing import Any

import pytest

from k8s_messages import LABEL_1123
from kubespread.admission import admit
from kubespread.api.kinds import class_for
from kubespread.api.validation import validate


def _pod_manifest(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}


def _errors(manifest: dict[str, Any]) -> list[str]:
    cls = class_for(manifest["apiVersion"], manifest["kind"])
    assert cls is not None
    return [str(e) for e in validate(cls.from_dict(manifest))]


def _app(*mounts: dict[str, Any]) -> dict[str, Any]:
    return {"name": "app", "image": "nginx", "volumeMounts": list(mounts)}


def test_a_mount_naming_no_volume_is_not_found_as_admit_says() -> None:
    manifest = _pod_manifest({"containers": [_app({"name": "data", "mountPath": "/data"})]})
    expected = 'spec.containers[0].volumeMounts[0].name: Not found: "data"'
    assert _errors(manifest) == [expected]
    answer = admit(manifest)
    assert answer["code"] == 422
    assert answer["causes"] == [
        {
            "field": "spec.containers[0].volumeMounts[0].name",
            "reason": "FieldValueNotFound",
            "message": 'Not found: "data"',
        }
    ]
    assert answer["message"] == f'Pod "web" is invalid: {expected}'


def test_a_mount_of_a_declared_volume_is_valid() -> None:
    spec = {
        "containers": [_app({"name": "data", "mountPath": "/data"}, {"name": "cfg", "mountPath": "/etc/x"})],
        "initContainers": [
            {"name": "init", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}
        ],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "web"}}],
    }
    assert _errors(_pod_manifest(spec)) == []


def test_workload_templates_and_init_containers_are_checked() -> None:
    template_spec = {
        "initContainers": [
            {"name": "init", "image": "busybox", "volumeMounts": [{"name": "cache", "mountPath": "/c"}]}
        ],
        "containers": [_app({"name": "data", "mountPath": "/data"})],
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template_spec},
        },
    }
    assert _errors(deployment) == [
        'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"',
        'spec.template.spec.initContainers[0].volumeMounts[0].name: Not found: "cache"',
    ]


def test_the_rules_of_a_mount_in_kubes_order() -> None:
    spec = {
        "containers": [
            _app(
                {"name": "data", "mountPath": "/data"},
                {"name": "data", "mountPath": "/data"},
                {"name": "", "mountPath": ""},
            )
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }
    m = "spec.containers[0].volumeMounts"
    assert _errors(_pod_manifest(spec)) == [
        f'{m}[1].mountPath: Invalid value: "/data": must be unique',
        f"{m}[2].name: Required value",
        f'{m}[2].name: Not found: ""',
        f"{m}[2].mountPath: Required value",
    ]


def test_the_rules_of_a_volume_and_a_bad_volume_is_not_mountable() -> None:
    spec = {
        "containers": [_app({"name": "Bad_Name", "mountPath": "/a"}, {"name": "two", "mountPath": "/b"})],
        "volumes": [
            {"name": "cfg", "configMap": {"name": "web"}},
            {"name": "cfg", "emptyDir": {}},
            {"name": "Bad_Name", "emptyDir": {}},
            {"name": "two", "emptyDir": {}, "hostPath": {"path": "/x"}, "downwardAPI": {}},
            {"name": "none"},
            {"emptyDir": {}},
        ],
    }
    v = "spec.volumes"
    m = "spec.containers[0].volumeMounts"
    assert _errors(_pod_manifest(spec)) == [
        f'{v}[1].name: Duplicate value: "cfg"',
        f'{v}[2].name: Invalid value: "Bad_Name": {LABEL_1123}',
        # kube's own spelling of the downwardAPI path in this message
        f"{v}[3].hostPath: Forbidden: may not specify more than 1 volume type",
        f"{v}[3].downwarAPI: Forbidden: may not specify more than 1 volume type",
        f"{v}[4]: Required value: must specify a volume type",
        f"{v}[5].name: Required value",
        f'{m}[0].name: Not found: "Bad_Name"',
        f'{m}[1].name: Not found: "two"',
    ]


def test_volumes_come_before_the_containers() -> None:
    spec = {"containers": [{"name": "app"}], "volumes": [{"name": "v"}]}
    assert _errors(_pod_manifest(spec)) == [
        "spec.volumes[0]: Required value: must specify a volume type",
        "spec.containers[0].image: Required value",
    ]


@pytest.mark.parametrize(
    "source", ["emptyDir", "secret", "persistentVolumeClaim", "projected", "csi", "image"]
)
def test_each_volume_type_alone_is_one_type(source: str) -> None:
    spec = {"containers": [_app({"name": "v", "mountPath": "/v"})], "volumes": [{"name": "v", source: {}}]}
    assert _errors(_pod_manifest(spec)) == []
