"""Label selectors and node selectors (ValidateLabelSelector, ValidateNodeSelector)."""

from __future__ import annotations

from typing import Any

from kubespread.api.errors import FieldError, Path
from kubespread.api.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from kubespread.api.validation.names import (
    is_valid_label_value,
    name_is_dns1123_subdomain,
    validate_label_name,
    validate_labels,
)

__all__ = [
    "label_selector_json",
    "label_selector_parses",
    "validate_label_selector",
    "validate_node_selector",
    "validate_node_selector_term",
]

VALUES_REQUIRED = "must be specified when `operator` is 'In' or 'NotIn'"
VALUES_FORBIDDEN = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
VALUES_SINGLE = "must be specified single value when `operator` is 'Lt' or 'Gt'"
BAD_OPERATOR = "not a valid selector operator"


def validate_label_selector(
    sel: LabelSelector | None, path: Path, *, allow_invalid_values: bool = False
) -> list[FieldError]:
    """matchLabels as labels, then each matchExpression: operator and values, key, values."""
    if sel is None:
        return []
    errs = validate_labels(sel.match_labels, path.child("matchLabels"))
    for i, req in enumerate(sel.match_expressions):
        rp = path.child("matchExpressions").index(i)
        if req.operator in (IN, NOT_IN):
            if not req.values:
                errs.append(FieldError.required(rp.child("values"), VALUES_REQUIRED))
        elif req.operator in (EXISTS, DOES_NOT_EXIST):
            if req.values:
                errs.append(FieldError.forbidden(rp.child("values"), VALUES_FORBIDDEN))
        else:
            errs.append(FieldError.invalid(rp.child("operator"), req.operator, BAD_OPERATOR))
        errs.extend(validate_label_name(req.key, rp.child("key")))
        if not allow_invalid_values:
            vp = rp.child("values")
            for j, v in enumerate(req.values):
                errs.extend(FieldError.invalid(vp.index(j), v, m) for m in is_valid_label_value(v))
    return errs


def label_selector_parses(sel: LabelSelector | None) -> bool:
    """Whether metav1.LabelSelectorAsSelector accepts it: the same rules as validation, so a
    selector parses exactly when strict validation finds nothing (nil parses, as Nothing)."""
    return not validate_label_selector(sel, Path(""))


def label_selector_json(sel: LabelSelector | None) -> Any:
    """The selector as Go's json.Marshal writes it in an error value (omitempty fields dropped)."""
    if sel is None:
        return None
    out: dict[str, Any] = {}
    if sel.match_labels:
        out["matchLabels"] = dict(sorted(sel.match_labels.items()))
    if sel.match_expressions:
        exprs = []
        for r in sel.match_expressions:
            e: dict[str, Any] = {"key": r.key, "operator": r.operator}
            if r.values:
                e["values"] = list(r.values)
            exprs.append(e)
        out["matchExpressions"] = exprs
    return out


# --- node selectors -------------------------------------------------------------------------------


def _validate_node_selector_requirement(
    req: NodeSelectorRequirement, path: Path, *, allow_invalid_values: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    if req.operator in (IN, NOT_IN):
        if not req.values:
            errs.append(FieldError.required(path.child("values"), VALUES_REQUIRED))
    elif req.operator in (EXISTS, DOES_NOT_EXIST):
        if req.values:
            errs.append(FieldError.forbidden(path.child("values"), VALUES_FORBIDDEN))
    elif req.operator in (GT, LT):
        # exactly one value; that it is an integer is not checked (the scheduler just never matches)
        if len(req.values) != 1:
            errs.append(FieldError.required(path.child("values"), VALUES_SINGLE))
    else:
        errs.append(FieldError.invalid(path.child("operator"), req.operator, BAD_OPERATOR))
    errs.extend(validate_label_name(req.key, path.child("key")))
    if not allow_invalid_values:
        vp = path.child("values")
        for j, v in enumerate(req.values):
            errs.extend(FieldError.invalid(vp.index(j), v, m) for m in is_valid_label_value(v))
    return errs


def _validate_node_field_requirement(req: NodeSelectorRequirement, path: Path) -> list[FieldError]:
    """matchFields: only ``metadata.name``, with In or NotIn and exactly one value."""
    errs: list[FieldError] = []
    if req.operator in (IN, NOT_IN):
        if len(req.values) != 1:
            errs.append(
                FieldError.required(
                    path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(FieldError.invalid(path.child("operator"), req.operator, BAD_OPERATOR))
    if req.key != "metadata.name":
        errs.append(FieldError.invalid(path.child("key"), req.key, "not a valid field selector key"))
    else:
        for j, v in enumerate(req.values):
            errs.extend(
                FieldError.invalid(path.child("values").index(j), v, m) for m in name_is_dns1123_subdomain(v)
            )
    return errs


def validate_node_selector_term(
    term: NodeSelectorTerm, path: Path, *, allow_invalid_values: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        errs.extend(
            _validate_node_selector_requirement(
                req, path.child("matchExpressions").index(j), allow_invalid_values=allow_invalid_values
            )
        )
    for j, req in enumerate(term.match_fields):
        errs.extend(_validate_node_field_requirement(req, path.child("matchFields").index(j)))
    return errs


def validate_node_selector(
    sel: NodeSelector, path: Path, *, allow_invalid_values: bool = False
) -> list[FieldError]:
    """At least one term; each term's requirements (required node affinity checks values too)."""
    terms_path = path.child("nodeSelectorTerms")
    if not sel.node_selector_terms:
        return [FieldError.required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(sel.node_selector_terms):
        errs.extend(
            validate_node_selector_term(term, terms_path.index(i), allow_invalid_values=allow_invalid_values)
        )
    return errs
