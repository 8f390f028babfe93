"""Pods made from a template: each gets its own copy of the template's manifest, the same as
the template's in every value and type, whatever the manifest holds."""

from __future__ import annotations

import marshal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import web_workload_manifests
from kubespread.api.apps import Deployment
from kubespread.controllers.pods import _clone, _marshalled, _template_dict, pod_from_template

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


class _Label(str):
    """A str subclass (marshal refuses it)."""


def _typed(v: Any) -> Any:
    """``v`` with each value's type beside it: equal only when types match too (True != 1)."""
    if isinstance(v, dict):
        return (type(v), [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return (type(v), [_typed(x) for x in v])
    return (type(v), v)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4), st.booleans())
def test_a_marshalled_copy_is_the_clone(d: dict[str, Any], subclass: bool) -> None:
    if subclass:
        d = {**d, "k": _Label("v")}
    data = _marshalled(d)
    assert (data is None) == subclass
    if data is not None:
        assert _typed(marshal.loads(data)) == _typed(_clone(d)) == _typed(d)


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
