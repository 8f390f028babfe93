"""Nodes: name, labels, taints.

kube-apiserver reports a Node's taint errors under ``metadata.taints[i]`` (not
``spec.taints[i]``): ValidateNode builds the path from "metadata". We do the same.
"""

from __future__ import annotations

from typing import Any

from kubespread.api.core import Node
from kubespread.api.errors import FieldError, Path
from kubespread.api.taints import TAINT_EFFECTS, Taint
from kubespread.api.validation.meta import validate_object_meta
from kubespread.api.validation.names import (
    is_valid_label_value,
    name_is_dns1123_subdomain,
    validate_label_name,
)

__all__ = ["validate_node", "validate_taints"]


def _taint_json(t: Taint) -> dict[str, Any]:
    """The taint as it prints in a Duplicate error (Go's json of core.Taint, omitempty)."""
    out: dict[str, Any] = {"key": t.key}
    if t.value:
        out["value"] = t.value
    out["effect"] = t.effect
    if t.time_added:
        out["timeAdded"] = t.time_added
    return out


def validate_taints(taints: list[Taint], path: Path) -> list[FieldError]:
    """Key, value, effect (required); a second taint with the same key and effect is a duplicate."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints):
        p = path.index(i)
        errs.extend(validate_label_name(t.key, p.child("key")))
        msgs = is_valid_label_value(t.value)
        if msgs:
            errs.append(FieldError.invalid(p.child("value"), t.value, ";".join(msgs)))
        if not t.effect:
            errs.append(FieldError.required(p.child("effect")))
        elif t.effect not in TAINT_EFFECTS:
            errs.append(FieldError.not_supported(p.child("effect"), t.effect, TAINT_EFFECTS))
        if (t.effect, t.key) in seen:
            dup = FieldError.duplicate(p, _taint_json(t))
            dup.detail = "taints must be unique by key and effect pair"
            errs.append(dup)
            continue
        seen.add((t.effect, t.key))
    return errs


def validate_node(node: Node) -> list[FieldError]:
    meta_path = Path("metadata")
    errs = validate_object_meta(
        node.metadata, namespaced=False, name_fn=name_is_dns1123_subdomain, path=meta_path
    )
    errs.extend(validate_taints(node.spec.taints, meta_path.child("taints")))
    return errs
