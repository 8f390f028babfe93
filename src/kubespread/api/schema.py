"""Strict decoding: every field name and value type a kind allows, as kube-apiserver decodes.

The field table (``schema.json``, made by scripts/make_api_schema.py from a real
kube-apiserver's OpenAPI documents) covers every field of every kind kubespread reads, the
ones it does not model too. :func:`check` walks a manifest against it and returns what the
API server's strict decoder (``fieldValidation=Strict``, kubectl's default) would refuse:

- a value of the wrong JSON type, or an integer out of its field's range (int32 for
  ``replicas``, ``maxSkew``, ``priority``, ports, weights; int64 elsewhere): always an error,
  whatever the validation mode, since the server cannot decode it at all;
- a field the kind does not have (``resoures``), and a key given twice in one mapping: errors
  under strict validation, warnings or nothing under ``warn`` / ``ignore``.

Walkers are compiled per type on first use and return None on the common, clean path, so
a 100,000-pod dump is checked at a few microseconds per object.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from kubespread.api.kruise import KRUISE_V1BETA1, workloadspread_from_v1beta1

__all__ = ["FieldIssue", "IssueKind", "Validation", "check", "known_kind"]


class Validation(StrEnum):
    """kubectl's ``--validate``: what unknown and duplicate fields do."""

    STRICT = "strict"
    WARN = "warn"
    IGNORE = "ignore"


class IssueKind(StrEnum):
    TYPE = "type"
    UNKNOWN = "unknown"
    DUPLICATE = "duplicate"


_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_GO_TYPES = {"string": "string", "boolean": "bool", "number": "float64", "int32": "int32", "int64": "int64"}


@dataclass(slots=True)
class FieldIssue:
    """One refusal of the strict decoder; ``segments`` is the field path, root first."""

    kind: IssueKind
    segments: list[str | int]
    #: for TYPE: what was given (``number 2147483648``, ``string``) and the Go type wanted
    got: str = ""
    want: str = ""
    #: for TYPE: the Go struct holding the field, and the JSON field names down to it
    go_struct: str = ""
    go_path: list[str] = field(default_factory=list)
    #: for UNKNOWN: the field names the object does have
    known: frozenset[str] = frozenset()
    #: for DUPLICATE: the line of the repeated key
    line: int | None = None

    @property
    def path(self) -> str:
        """``spec.containers[0].resoures``, ``metadata.labels[app]`` (field.Path's form)."""
        out = ""
        for s in self.segments:
            if isinstance(s, int):
                out += f"[{s}]"
            elif s.startswith("["):
                out += s
            else:
                out = f"{out}.{s}" if out else s
        return out

    @property
    def message(self) -> str:
        """The user's message, for a line that already names the field path."""
        if self.kind is IssueKind.TYPE:
            lo_hi = _INT_RANGES.get(self.want)
            if lo_hi is not None and self.got.startswith("number "):
                return (
                    f"cannot unmarshal {self.got} into a field of type {self.want} "
                    f"(from {lo_hi[0]} to {lo_hi[1]})"
                )
            return f"cannot unmarshal {self.got} into a field of type {self.want}"
        name = str(self.segments[-1])
        if self.kind is IssueKind.DUPLICATE:
            return f'duplicate field "{name}"' + (f" (line {self.line})" if self.line else "")
        msg = f'unknown field "{name}"'
        close = difflib.get_close_matches(str(name), sorted(self.known), n=1, cutoff=0.75)
        return msg + (f' (did you mean "{close[0]}"?)' if close else "")

    @property
    def api_message(self) -> str:
        """kube-apiserver's words for it (after ``cannot be handled as a Pod: ``)."""
        if self.kind is IssueKind.TYPE:
            where = ".".join([self.go_struct, *self.go_path])
            return f"json: cannot unmarshal {self.got} into Go struct field {where} of type {self.want}"
        return f'{self.kind.value} field "{self.path}"'

    def sort_key(self) -> tuple[Any, ...]:
        """Where the server's decoder meets it: keys in sorted order (a YAML body reaches
        the decoder as JSON with sorted keys), list items in order."""
        return tuple((0, s, "") if isinstance(s, int) else (1, 0, s) for s in self.segments)


Walker = Callable[[Any], list[FieldIssue] | None]


class _Mismatch(Exception):
    """A scalar walker's verdict, turned into a FieldIssue by the struct holding the field."""

    def __init__(self, got: str, want: str) -> None:
        self.got, self.want = got, want


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("kubespread.api").joinpath("schema.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def known_kind(kind: str) -> bool:
    return kind in _schema()["kinds"]


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _number_text(v: int | float) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return str(v) if isinstance(v, int) else repr(v)


def _go_type(ref: str) -> str:
    if ref.startswith("[]"):
        return "[]" + _go_type(ref[2:])
    if ref.startswith("{}"):
        return "map[string]" + _go_type(ref[2:])
    if ref in _GO_TYPES:
        return _GO_TYPES[ref]
    if ref == "intstr":
        return "intstr.IntOrString"
    if "." in ref:
        _, version, name = ref.rsplit(".", 2)
        return f"{version}.{name}"
    return "interface {}"


_compiled: dict[str, Walker] = {}


def _walker(ref: str) -> Walker:
    got = _compiled.get(ref)
    if got is None:
        got = _compile(ref)
        _compiled[ref] = got
    return got


def _ok(v: Any) -> None:
    return None


def _compile(ref: str) -> Walker:
    if ref in ("any", "quantity"):
        return _ok  # quantities are parsed (with the server's message) by the model
    if ref == "string":

        def string(v: Any) -> None:
            if type(v) is not str:
                raise _Mismatch(_json_type(v), "string")

        return string
    if ref == "boolean":

        def boolean(v: Any) -> None:
            if type(v) is not bool:
                raise _Mismatch(_json_type(v), "bool")

        return boolean
    if ref == "number":

        def number(v: Any) -> None:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise _Mismatch(_json_type(v), "float64")

        return number
    if ref in _INT_RANGES:
        lo, hi = _INT_RANGES[ref]

        def integer(v: Any) -> None:
            if type(v) is int:
                if lo <= v <= hi:
                    return
            elif isinstance(v, float) and not isinstance(v, bool):
                if v.is_integer() and lo <= v <= hi:
                    return  # 1.0 and 1e3 reach the server as integers
            else:
                raise _Mismatch(_json_type(v), ref)
            raise _Mismatch(f"number {_number_text(v)}", ref)

        return integer
    if ref == "intstr":

        def intstr(v: Any) -> None:
            if type(v) is str:
                return
            if type(v) is int or (isinstance(v, float) and not isinstance(v, bool)):
                _walker("int32")(v)
                return
            raise _Mismatch(_json_type(v), "intstr.IntOrString")

        return intstr
    if ref.startswith("[]"):
        return _list_walker(ref)
    if ref.startswith("{}"):
        return _map_walker(ref)
    return _struct_walker(ref)


def _list_walker(ref: str) -> Walker:
    item_ref = ref[2:]

    def walk(v: Any) -> list[FieldIssue] | None:
        if type(v) is not list:
            raise _Mismatch(_json_type(v), _go_type(ref))
        item = _walker(item_ref)
        out: list[FieldIssue] | None = None
        for i, x in enumerate(v):
            if x is None:
                continue
            try:
                issues = item(x)
            except _Mismatch as m:
                issues = [FieldIssue(IssueKind.TYPE, [], got=m.got, want=m.want)]
            if issues:
                for issue in issues:
                    issue.segments.insert(0, i)
                out = (out or []) + issues
        return out

    return walk


def _map_walker(ref: str) -> Walker:
    value_ref = ref[2:]

    def walk(v: Any) -> list[FieldIssue] | None:
        if not isinstance(v, dict):
            raise _Mismatch(_json_type(v), _go_type(ref))
        value = _walker(value_ref)
        out: list[FieldIssue] | None = None
        for k, x in v.items():
            if x is None:
                continue
            try:
                issues = value(x)
            except _Mismatch as m:
                issues = [FieldIssue(IssueKind.TYPE, [], got=m.got, want=m.want)]
            if issues:
                for issue in issues:
                    issue.segments.insert(0, f"[{k}]")
                out = (out or []) + issues
        return out

    return walk


def _struct_walker(ref: str) -> Walker:
    fields: dict[str, str] = _schema()["types"][ref]
    known = frozenset(fields)
    go_struct = ref.rsplit(".", 1)[-1]
    go_type = _go_type(ref)
    walkers: dict[str, Walker] = {}
    # fields whose values are checked here without a call: the type a string or boolean
    # field's value must be (anything else goes to its walker, which says what is wrong),
    # and fields any value passes (quantities are parsed by the model)
    simple: dict[str, type | None] = {
        k: (str if r == "string" else bool if r == "boolean" else None)
        for k, r in fields.items()
        if r in ("string", "boolean", "any", "quantity")
    }

    def walk(v: Any) -> list[FieldIssue] | None:
        if not isinstance(v, dict):
            raise _Mismatch(_json_type(v), go_type)
        out: list[FieldIssue] | None = None
        if not v.keys() <= known:
            out = [
                FieldIssue(IssueKind.UNKNOWN, [str(k)], known=known)
                for k in v
                if k not in known and k is not None
            ]
        dups = None if type(v) is dict else getattr(v, "duplicates", None)
        if dups:
            out = (out or []) + [FieldIssue(IssueKind.DUPLICATE, [k], line=line) for k, line in dups]
        for k, x in v.items():
            if x is None:
                continue
            if k in simple:
                t = simple[k]
                if t is None or type(x) is t:
                    continue
            w = walkers.get(k)
            if w is None:
                r = fields.get(k)
                if r is None:
                    continue
                w = walkers[k] = _walker(r)
            try:
                issues = w(x)
            except _Mismatch as m:
                issues = [FieldIssue(IssueKind.TYPE, [], got=m.got, want=m.want)]
            if issues:
                for issue in issues:
                    issue.segments.insert(0, k)
                    if issue.kind is IssueKind.TYPE:
                        issue.go_path.insert(0, k)
                        # the innermost struct holding the field names it, as in the server
                        issue.go_struct = issue.go_struct or go_struct
                out = (out or []) + issues
        return out

    return walk


def check(kind: str, data: dict[str, Any]) -> list[FieldIssue]:
    """What the strict decoder refuses in one manifest of ``kind`` (empty when clean, and for
    kinds without a schema). Type errors come first, each group in the server's order."""
    ref = _schema()["kinds"].get(kind)
    if ref is None:
        return []
    if kind == "WorkloadSpread" and isinstance(data, dict) and data.get("apiVersion") == KRUISE_V1BETA1:
        data = workloadspread_from_v1beta1(data)  # judged in the schema of the version it converts to
    try:
        issues = _walker(ref)(data) or []
    except _Mismatch as m:  # the document itself is not an object
        return [FieldIssue(IssueKind.TYPE, [], got=m.got, want=m.want, go_struct=kind)]
    issues.sort(key=lambda i: (i.kind is not IssueKind.TYPE, i.sort_key()))
    return issues
