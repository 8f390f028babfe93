"""managedFields: FieldsV1 sets and the entries that carry them."""

from __future__ import annotations

import copy
import json
from typing import Any

#: list fields merged by key (listType=map) and their keys; other lists are atomic
LIST_KEYS = {
    "addresses": ("type",),
    "conditions": ("type",),
    "containers": ("name",),
    "env": ("name",),
    "initContainers": ("name",),
    "podIPs": ("ip",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
    "volumeMounts": ("mountPath",),
    "volumes": ("name",),
}
#: fields the API always has (no "." entry of their own) and atomic structs ({} whatever they hold)
NO_DOT = frozenset({"metadata", "spec", "status", "strategy", "template", "containers", "conditions"})
ATOMIC = frozenset({"selector", "labelSelector", "namespaceSelector"})


def element_key(field_name: str, item: dict[str, Any]) -> str:
    """The ``k:{...}`` name of one element of a list merged by key."""
    if field_name == "ports":
        names = ("containerPort", "protocol") if "containerPort" in item else ("port", "protocol")
    elif field_name == "ownerReferences":
        names = ("uid",)
    else:
        names = LIST_KEYS[field_name]
    return "k:" + json.dumps({n: item[n] for n in names if n in item}, sort_keys=True, separators=(",", ":"))


def fieldset(value: dict[str, Any], *, dot: bool = False) -> dict[str, Any]:
    """A FieldsV1 set naming every field of ``value`` (the fields a manager wrote)."""
    out: dict[str, Any] = {".": {}} if dot else {}
    for k in sorted(value):
        out[f"f:{k}"] = field_entry(k, value[k])
    return out


def field_entry(name: str, v: Any) -> dict[str, Any]:
    """The FieldsV1 entry of the field ``name`` holding ``v``."""
    if isinstance(v, dict):
        if not v or name in ATOMIC:
            return {}
        return fieldset(v, dot=name not in NO_DOT)
    if (
        isinstance(v, list)
        and v
        and all(isinstance(x, dict) for x in v)
        and (name in LIST_KEYS or name in ("ports", "ownerReferences"))
    ):
        out: dict[str, Any] = {} if name in NO_DOT else {".": {}}
        for item in v:
            out[element_key(name, item)] = {} if name == "ownerReferences" else fieldset(item, dot=True)
        return out
    if name == "finalizers" and isinstance(v, list):
        return {".": {}, **{f"v:{json.dumps(x)}": {} for x in v}}
    return {}


def managed(
    manager: str,
    operation: str,
    time: str,
    fields: dict[str, Any],
    api_version: str = "v1",
    subresource: str = "",
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
    }
    if subresource:
        entry["subresource"] = subresource
    entry["time"] = time
    return entry


def without(fields: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` less one field (ownership taken over by another manager's Update)."""
    out = copy.deepcopy(fields)
    node = out
    for part in path[:-1]:
        node = node.get(part, {})
    node.pop(path[-1], None)
    return out
