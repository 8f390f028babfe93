"""Field errors as the API server reports them, and decoding errors.

Validation never raises: it returns a list of :class:`FieldError` so that every problem of
every object is reported in one run. Messages follow k8s.io/apimachinery's field.Error
formatting, so ``str(err)`` reads exactly like kube-apiserver's
``spec.tolerations[2].effect: Invalid value: "NoSchedule": ...``.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

__all__ = ["DecodeError", "ErrorType", "FieldError", "Path"]


class ErrorType(StrEnum):
    """field.ErrorType: the value is the `reason` of a status cause."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"

    # field.ErrorType.String(); it replaces str.title, which no caller uses on these values
    @property
    def title(self) -> str:  # type: ignore[override]
        return _TITLES[self]


_TITLES = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
}

_NO_VALUE = object()


class Path(str):
    """A field path; ``p.child("spec")``, ``p.index(0)``, ``p.key("cpu")`` build deeper ones."""

    __slots__ = ()

    def child(self, *names: str) -> Path:
        if len(names) == 1:  # the usual call, built for every field a validator looks at
            return Path(f"{self}.{names[0]}" if self else names[0])
        out = str(self)
        for n in names:
            out = f"{out}.{n}" if out else n
        return Path(out)

    # field.Path.Index; it replaces str.index, which no caller uses on a path
    def index(self, i: int) -> Path:  # type: ignore[override]
        return Path(f"{self}[{i}]")

    def key(self, k: str) -> Path:
        return Path(f"{self}[{k}]")


def _format_value(v: Any) -> str:
    """Go's %q for strings, %v for numbers and booleans, as field.Error does; null for a nil
    value; maps and lists (and structs, given as dicts) as compact JSON, as kube-apiserver
    v1.36 prints them (``Invalid value: {"app":"web"}``)."""
    if v is None:
        return "null"
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


class FieldError:
    """One problem at one field: its reason (ErrorType), the bad value and a detail."""

    __slots__ = ("detail", "field", "type", "value")

    def __init__(self, type_: ErrorType, field: str, value: Any = _NO_VALUE, detail: str = ""):
        self.type, self.field, self.value, self.detail = type_, str(field), value, detail

    @classmethod
    def invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        return cls(ErrorType.INVALID, field, value, detail)

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        return cls(ErrorType.REQUIRED, field, _NO_VALUE, detail)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        return cls(ErrorType.FORBIDDEN, field, _NO_VALUE, detail)

    @classmethod
    def not_found(cls, field: str, value: Any) -> FieldError:
        """field.NotFound: ``name: Not found: "data"``."""
        return cls(ErrorType.NOT_FOUND, field, value, "")

    @classmethod
    def duplicate(cls, field: str, value: Any) -> FieldError:
        return cls(ErrorType.DUPLICATE, field, value, "")

    @classmethod
    def not_supported(cls, field: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
        detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
        return cls(ErrorType.NOT_SUPPORTED, field, value, detail)

    @classmethod
    def too_long(cls, field: str, max_len: int) -> FieldError:
        return cls(ErrorType.TOO_LONG, field, _NO_VALUE, f"must have at most {max_len} bytes")

    @property
    def reason(self) -> str:
        return self.type.value

    def body(self) -> str:
        """The message without the field path (a status cause's `message`)."""
        s = self.type.title
        if self.value is not _NO_VALUE and self.type not in (
            ErrorType.REQUIRED,
            ErrorType.FORBIDDEN,
            ErrorType.TOO_LONG,
            ErrorType.INTERNAL,
        ):
            s = f"{s}: {_format_value(self.value)}"
        if self.detail:
            s = f"{s}: {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def __repr__(self) -> str:
        return f"FieldError({self.reason}, {self.field!r}, {self.body()!r})"

    def cause(self) -> dict[str, str]:
        return {"field": self.field, "reason": self.reason, "message": self.body()}

    def prefixed(self, prefix: str) -> FieldError:
        """The same error under a parent path (e.g. a Deployment's spec.template)."""
        field = f"{prefix}.{self.field}" if self.field else prefix
        return FieldError(self.type, field, self.value, self.detail)


class DecodeError(Exception):
    """A manifest value of the wrong type: the API server's 400 BadRequest.

    ``path`` is filled in while the error travels up through the decoder, so building it
    costs nothing when decoding succeeds.
    """

    def __init__(self, path: list[str], message: str, *, quantity: bool = False):
        super().__init__(message)
        self.path = path
        self.message = message
        self.quantity = quantity

    @property
    def field(self) -> str:
        out = ""
        for p in self.path:
            out = out + p if p.startswith("[") or not out else f"{out}.{p}"
        return out

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.path else self.message
