"""Label selectors (LabelSelectorAsSelector) and node selectors (component-helpers nodeaffinity),
checked against a plain reference evaluation written here from the Kubernetes rules."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubespread.api.selectors import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    Selector,
    compile_label_selector,
    node_selector_matches,
    node_selector_term_matches,
)

KEYS = ["app", "tier", "example.com/zone"]
VALUES = ["web", "db", "a"]


def all_label_sets(keys: list[str] = KEYS, values: list[str] = VALUES) -> list[dict[str, str]]:
    """Every labelling of the universe: each key absent or carrying one of the values."""
    out = []
    for choice in itertools.product([None, *values], repeat=len(keys)):
        out.append({k: v for k, v in zip(keys, choice, strict=True) if v is not None})
    return out


# --- reference: label selectors ---------------------------------------------------------------------


def ref_label_selector(sel: dict[str, Any] | None, labels: Mapping[str, str], nil_matches: bool) -> bool:
    """matchLabels AND matchExpressions; a nil selector selects nothing (or everything when the
    call site says so); an empty one everything; a selector that does not convert (unknown
    operator, In/NotIn without values) selects nothing."""
    if sel is None:
        return nil_matches
    ok = True
    for key, value in (sel.get("matchLabels") or {}).items():
        if key not in labels or labels[key] != value:
            ok = False
    for expr in sel.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In":
            if not values:
                return False
            if key not in labels or labels[key] not in values:
                ok = False
        elif op == "NotIn":
            if not values:
                return False
            if key in labels and labels[key] in values:
                ok = False
        elif op == "Exists":
            if key not in labels:
                ok = False
        elif op == "DoesNotExist":
            if key in labels:
                ok = False
        else:
            return False
    return ok


values_list = st.lists(st.sampled_from(VALUES), min_size=1, max_size=3)
label_expr = st.one_of(
    st.builds(lambda k, o, v: {"key": k, "operator": o, "values": v},
              st.sampled_from(KEYS), st.sampled_from(["In", "NotIn"]), values_list),
    st.builds(lambda k, o: {"key": k, "operator": o},
              st.sampled_from(KEYS), st.sampled_from(["Exists", "DoesNotExist"])),
)  # fmt: skip
label_selector_dict = st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
        "matchExpressions": st.lists(label_expr, max_size=4),
    },
)
labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


def build(sel: dict[str, Any] | None) -> LabelSelector | None:
    return None if sel is None else LabelSelector.from_dict(sel)


@pytest.mark.slow
@given(st.none() | label_selector_dict, labels_st, st.booleans())
def test_label_selector_matches_reference(
    sel: dict[str, Any] | None, labels: dict[str, str], nil: bool
) -> None:
    compiled = compile_label_selector(build(sel), nil_matches=nil)
    assert compiled.matches(labels) == ref_label_selector(sel, labels, nil)
    if sel is not None:
        obj = build(sel)
        assert obj is not None
        assert obj.matches(labels) == ref_label_selector(sel, labels, False)


@pytest.mark.slow
@given(label_selector_dict, st.randoms(use_true_random=False), st.data())
def test_selectors_that_mean_the_same_are_equal(sel: dict[str, Any], rnd: Any, data: st.DataObject) -> None:
    # the same requirements reordered, values reordered and repeated, some matchLabels
    # written as In with a single value
    exprs = [
        dict(e, values=list(e["values"])) if "values" in e else dict(e)
        for e in sel.get("matchExpressions", [])
    ]
    match_labels = dict(sel.get("matchLabels", {}))
    moved = data.draw(st.lists(st.sampled_from(sorted(match_labels)), unique=True)) if match_labels else []
    for k in moved:
        exprs.append({"key": k, "operator": "In", "values": [match_labels.pop(k)]})
    for e in exprs:
        if "values" in e:
            rnd.shuffle(e["values"])
            e["values"].append(e["values"][0])
    rnd.shuffle(exprs)
    items = list(match_labels.items())
    rnd.shuffle(items)
    other = {"matchLabels": dict(items), "matchExpressions": exprs}
    a, b = compile_label_selector(build(sel)), compile_label_selector(build(other))
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    for labels in all_label_sets():
        assert a.matches(labels) == b.matches(labels) == ref_label_selector(sel, labels, False)


@pytest.mark.slow
@given(label_selector_dict, label_selector_dict)
def test_equal_compiled_selectors_select_the_same_sets(s1: dict[str, Any], s2: dict[str, Any]) -> None:
    a, b = compile_label_selector(build(s1)), compile_label_selector(build(s2))
    if a == b:
        assert hash(a) == hash(b)
        for labels in all_label_sets():
            assert a.matches(labels) == b.matches(labels)


def test_nil_and_empty_selectors() -> None:
    assert compile_label_selector(None) == NOTHING
    assert compile_label_selector(None, nil_matches=True) == EVERYTHING
    empty = compile_label_selector(LabelSelector())
    assert empty == EVERYTHING and empty.empty
    assert compile_label_selector(LabelSelector.from_dict({})) == EVERYTHING
    assert (
        compile_label_selector(LabelSelector.from_dict({"matchLabels": {}, "matchExpressions": []}))
        == EVERYTHING
    )
    assert NOTHING != EVERYTHING
    assert not NOTHING.empty
    for labels in ({}, {"app": "web"}):
        assert EVERYTHING.matches(labels)
        assert not NOTHING.matches(labels)


@pytest.mark.parametrize(
    "expr",
    [
        {"key": "app", "operator": "In", "values": []},
        {"key": "app", "operator": "NotIn"},
        {"key": "app", "operator": "Gt", "values": ["1"]},
        {"key": "app", "operator": "in", "values": ["web"]},
        {"key": "app", "operator": "", "values": ["web"]},
    ],
)
def test_selectors_that_do_not_convert_select_nothing(expr: dict[str, Any]) -> None:
    sel = LabelSelector.from_dict({"matchLabels": {"app": "web"}, "matchExpressions": [expr]})
    assert compile_label_selector(sel) == NOTHING
    assert not sel.matches({"app": "web"})


@pytest.mark.parametrize(
    ("sel", "labels", "expected"),
    [
        ({"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True),
        ({"matchLabels": {"app": "web"}}, {"app": "db"}, False),
        ({"matchLabels": {"app": ""}}, {}, False),
        ({"matchLabels": {"app": ""}}, {"app": ""}, True),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
            {"app": "db"},
            True,
        ),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, {}, False),
        ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, {}, True),
        (
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
            {"app": "web"},
            False,
        ),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {"app": ""}, True),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, {"app": ""}, False),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}],
            },
            {"app": "web"},
            False,
        ),
    ],
)
def test_label_selector_table(sel: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.from_dict(sel).matches(labels) is expected


def test_with_requirements_ands_and_nothing_stays_nothing() -> None:
    base = compile_label_selector(LabelSelector.from_dict({"matchLabels": {"app": "web"}}))
    hash_req = Requirement("pod-template-hash", "In", frozenset({"abc"}))
    merged = base.with_requirements((hash_req,))
    assert merged.matches({"app": "web", "pod-template-hash": "abc"})
    assert not merged.matches({"app": "web", "pod-template-hash": "def"})
    assert not merged.matches({"app": "web"})
    assert merged == Selector((hash_req, Requirement("app", "In", frozenset({"web"}))))
    assert base.with_requirements((base.requirements[0],)) == base
    assert NOTHING.with_requirements((hash_req,)) == NOTHING


# --- reference: node selectors ------------------------------------------------------------------------

NODE_KEYS = ["zone", "cores", "example.com/gpu"]
NODE_LABEL_VALUES = ["a", "b", "1", "5", "10", "007", "x", ""]
# requirement values include ones that are no label value ("-3", "+4", too long) or no integer
REQ_VALUES = ["a", "b", "1", "5", "10", "007", "x", "", "-3", "+4", "9" * 20, "v" * 64]
NODE_NAMES = ["n1", "n2", "node-3.example.com"]

_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_INT64 = re.compile(r"[+-]?[0-9]+")


def is_label_value(v: str) -> bool:
    return len(v) <= 63 and _LABEL_VALUE.fullmatch(v) is not None


def parse_int64(v: str) -> int | None:
    if not _INT64.fullmatch(v):
        return None
    n = int(v)
    return n if -(2**63) <= n < 2**63 else None


def ref_node_requirement(r: dict[str, Any], labels: Mapping[str, str]) -> bool | None:
    """labels.NewRequirement then Matches; None when NewRequirement rejects it."""
    key, op, values = r["key"], r["operator"], r.get("values") or []
    if any(not is_label_value(v) for v in values):
        return None
    if op in ("In", "NotIn"):
        if not values:
            return None
        present = key in labels
        return (
            (present and labels[key] in values) if op == "In" else (not present or labels[key] not in values)
        )
    if op in ("Exists", "DoesNotExist"):
        if values:
            return None
        return (key in labels) == (op == "Exists")
    if op in ("Gt", "Lt"):
        if len(values) != 1 or parse_int64(values[0]) is None:
            return None
        if key not in labels:
            return False
        have = parse_int64(labels[key])
        if have is None:
            return False
        want = parse_int64(values[0])
        assert want is not None
        return have > want if op == "Gt" else have < want
    return None


def ref_node_field(r: dict[str, Any], node_name: str) -> bool | None:
    op, values = r["operator"], r.get("values") or []
    if op not in ("In", "NotIn") or len(values) != 1:
        return None
    return (node_name == values[0]) == (op == "In")


def ref_node_term(term: dict[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term selects nothing
    results = [ref_node_requirement(r, labels) for r in exprs] + [
        ref_node_field(r, node_name) for r in fields
    ]
    if any(r is None for r in results):
        return False  # a term that does not parse never matches
    return all(results)


def ref_node_selector(sel: dict[str, Any] | None, labels: Mapping[str, str], node_name: str) -> bool:
    if sel is None:
        return True
    return any(ref_node_term(t, labels, node_name) for t in sel.get("nodeSelectorTerms") or [])


node_expr = st.builds(
    lambda k, o, v: {"key": k, "operator": o, "values": v},
    st.sampled_from(NODE_KEYS),
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"]),
    st.lists(st.sampled_from(REQ_VALUES), max_size=2),
)
field_expr = st.builds(
    lambda o, v: {"key": "metadata.name", "operator": o, "values": v},
    st.sampled_from(["In", "NotIn", "Exists"]),
    st.lists(st.sampled_from(NODE_NAMES), max_size=2),
)
node_term = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(node_expr, max_size=3),
        "matchFields": st.lists(field_expr, max_size=2),
    },
)
node_selector_dict = st.none() | st.fixed_dictionaries({"nodeSelectorTerms": st.lists(node_term, max_size=3)})
node_labels = st.dictionaries(st.sampled_from(NODE_KEYS), st.sampled_from(NODE_LABEL_VALUES), max_size=3)


@pytest.mark.slow
@given(node_selector_dict, node_labels, st.sampled_from(NODE_NAMES))
def test_node_selector_matches_reference(
    sel: dict[str, Any] | None, labels: dict[str, str], name: str
) -> None:
    ns = None if sel is None else NodeSelector.from_dict(sel)
    assert node_selector_matches(ns, labels, name) == ref_node_selector(sel, labels, name)


@pytest.mark.slow
@given(node_term, node_labels, st.sampled_from(NODE_NAMES))
def test_node_selector_term_matches_reference(
    term: dict[str, Any], labels: dict[str, str], name: str
) -> None:
    got = node_selector_term_matches(NodeSelectorTerm.from_dict(term), labels, name)
    assert got == ref_node_term(term, labels, name)


def term(*exprs: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = list(fields)
    return out


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


NODE_TABLE = [
    # terms are ORed
    (
        {"nodeSelectorTerms": [term(req("zone", "In", "a")), term(req("zone", "In", "b"))]},
        {"zone": "b"},
        True,
    ),
    # expressions within a term are ANDed
    (
        {"nodeSelectorTerms": [term(req("zone", "In", "a"), req("cores", "Gt", "4"))]},
        {"zone": "a", "cores": "2"},
        False,
    ),
    (
        {"nodeSelectorTerms": [term(req("zone", "In", "a"), req("cores", "Gt", "4"))]},
        {"zone": "a", "cores": "8"},
        True,
    ),
    # an empty term matches nothing, even beside nothing else; no terms at all match nothing
    ({"nodeSelectorTerms": [{}]}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [{"matchExpressions": [], "matchFields": []}]}, {}, False),
    ({"nodeSelectorTerms": []}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [{}, term(req("zone", "Exists"))]}, {"zone": "a"}, True),
    # Gt/Lt compare integers; a label or operand that is not an integer never matches
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4"))]}, {"cores": "5"}, True),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4"))]}, {"cores": "4"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Lt", "4"))]}, {"cores": "3"}, True),
    (
        {"nodeSelectorTerms": [term(req("cores", "Lt", "10"))]},
        {"cores": "9"},
        True,
    ),  # not a string comparison
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4"))]}, {"cores": "007"}, True),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4"))]}, {"cores": "many"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4"))]}, {}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "four"))]}, {"cores": "5"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4.5"))]}, {"cores": "5"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4", "5"))]}, {"cores": "9"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "4", "4"))]}, {"cores": "9"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt"))]}, {"cores": "9"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "99999999999999999999"))]}, {"cores": "9"}, False),
    # an operand that is no valid label value fails labels.NewRequirement: the term never matches
    ({"nodeSelectorTerms": [term(req("cores", "Gt", "-1"))]}, {"cores": "9"}, False),
    ({"nodeSelectorTerms": [term(req("cores", "Lt", "+10"))]}, {"cores": "9"}, False),
    ({"nodeSelectorTerms": [term(req("zone", "NotIn", "not a label value"))]}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [term(req("zone", "NotIn", "v" * 64))]}, {}, False),
    ({"nodeSelectorTerms": [term(req("zone", "NotIn", "v" * 63))]}, {}, True),
    # ... but only that term
    (
        {"nodeSelectorTerms": [term(req("zone", "NotIn", "bad!")), term(req("zone", "NotIn", "b"))]},
        {"zone": "a"},
        True,
    ),
    # NotIn and DoesNotExist hold when the key is absent
    ({"nodeSelectorTerms": [term(req("zone", "NotIn", "a"))]}, {}, True),
    ({"nodeSelectorTerms": [term(req("zone", "DoesNotExist"))]}, {}, True),
    ({"nodeSelectorTerms": [term(req("zone", "DoesNotExist"))]}, {"zone": ""}, False),
    # operators that need no values must have none; In/NotIn need some
    ({"nodeSelectorTerms": [term(req("zone", "Exists", "a"))]}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [term(req("zone", "In"))]}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [term(req("zone", "NotIn"))]}, {}, False),
    ({"nodeSelectorTerms": [term(req("zone", "in", "a"))]}, {"zone": "a"}, False),
]


@pytest.mark.parametrize(("sel", "labels", "expected"), NODE_TABLE)
def test_node_selector_table(sel: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert node_selector_matches(NodeSelector.from_dict(sel), labels, "n1") is expected
    assert ref_node_selector(sel, labels, "n1") is expected  # the reference agrees with the table


def test_nil_node_selector_matches_every_node() -> None:
    assert node_selector_matches(None, {}, "n1")
    assert not node_selector_matches(NodeSelector(), {}, "n1")


FIELD_TABLE = [
    (term(fields=(req("metadata.name", "In", "n1"),)), "n1", True),
    (term(fields=(req("metadata.name", "In", "n1"),)), "n2", False),
    (term(fields=(req("metadata.name", "NotIn", "n1"),)), "n2", True),
    (term(fields=(req("metadata.name", "NotIn", "n1"),)), "n1", False),
    # a node name is not held to label-value rules
    (term(fields=(req("metadata.name", "In", "node-1." + "x" * 70 + ".example.com"),)),
     "node-1." + "x" * 70 + ".example.com", True),
    # matchFields takes exactly one value with In or NotIn
    (term(fields=(req("metadata.name", "In", "n1", "n2"),)), "n1", False),
    (term(fields=(req("metadata.name", "NotIn", "n3", "n4"),)), "n1", False),
    (term(fields=(req("metadata.name", "In"),)), "n1", False),
    (term(fields=(req("metadata.name", "Exists"),)), "n1", False),
    # fields and expressions of one term are ANDed
    (term(req("zone", "In", "a"), fields=(req("metadata.name", "In", "n1"),)), "n1", True),
    (term(req("zone", "In", "b"), fields=(req("metadata.name", "In", "n1"),)), "n1", False),
]  # fmt: skip


@pytest.mark.parametrize(("t", "name", "expected"), FIELD_TABLE)
def test_match_fields_on_metadata_name(t: dict[str, Any], name: str, expected: bool) -> None:
    assert node_selector_term_matches(NodeSelectorTerm.from_dict(t), {"zone": "a"}, name) is expected
