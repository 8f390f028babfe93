"""Pods made from a template: each gets its own copy of the template's manifest, the same as
the template's in every value and type."""

from __future__ import annotations

from typing import Any

from builders import web_workload_manifests
from kubespread.api.apps import Deployment
from kubespread.controllers.pods import _template_dict, pod_from_template


def _typed(v: Any) -> Any:
    """``v`` with each value's type beside it: equal only when types match too (True != 1)."""
    if isinstance(v, dict):
        return (type(v), [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return (type(v), [_typed(x) for x in v])
    return (type(v), v)


def test_each_pod_has_its_own_copy_of_the_template() -> None:
    template_manifest = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "app:1", "ports": [{"containerPort": 80}]}],
            "nodeSelector": {"disk": "ssd"},
            "enableServiceLinks": True,
            "terminationGracePeriodSeconds": 30,
        },
    }
    d = Deployment.from_dict(web_workload_manifests(2, template_manifest)[0])
    template = d.spec.template
    first = _template_dict(template)
    assert _typed(first) == _typed(template.to_dict())
    first["spec"]["nodeSelector"]["disk"] = "hdd"  # a pod's copy changed ...
    first["spec"]["containers"].append({"name": "x"})
    assert _typed(_template_dict(template)) == _typed(template.to_dict())  # ... the next is not
    a = pod_from_template(template, d, name="web-a")
    b = pod_from_template(template, d, name="web-b")
    a.spec.node_selector["disk"] = "hdd"
    assert b.spec.node_selector == {"disk": "ssd"}
    assert b.to_dict()["spec"] == template.to_dict()["spec"]
