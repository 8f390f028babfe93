"""Label selectors and node selectors: the API types and their matching.

Two nil conventions exist in Kubernetes and each call site picks one: ``LabelSelectorAsSelector``
turns a nil selector into *Nothing* and an empty one into *Everything* (topology spread,
pod affinity, Services' owners); the scheduler's node affinity treats an empty term as
matching nothing. Callers state which they want through :func:`compile_label_selector`'s
``nil_matches`` rather than guessing.

A compiled :class:`Selector` is an immutable, hashable value: two pods whose selectors mean
the same thing compile to equal selectors, so indexes can share counts between them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from typing import Final

from kubespread.api.model import Model, model

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "LabelSelector",
    "LabelSelectorRequirement",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Requirement",
    "Selector",
    "compile_label_selector",
    "node_field_matches",
    "node_requirement_matches",
    "node_selector_matches",
    "node_selector_term_matches",
    "parse_selector",
]

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
LABEL_SELECTOR_OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_SELECTOR_OPERATORS: Final = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)


@model
class LabelSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] = field(default_factory=list)


@model
class LabelSelector(Model):
    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = field(default_factory=list)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Matching of a non-nil selector: empty selects everything."""
        return compile_label_selector(self).matches(labels)


@model
class NodeSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] = field(default_factory=list)


@model
class NodeSelectorTerm(Model):
    match_expressions: list[NodeSelectorRequirement] = field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = field(default_factory=list)


@model
class NodeSelector(Model):
    node_selector_terms: list[NodeSelectorTerm] = field(default_factory=list)


# --- compiled label selectors -----------------------------------------------------------------


def _as_int(s: str) -> int | None:
    """Gt/Lt operands: base-10 int64, as strconv.ParseInt; anything else never matches."""
    s2 = s[1:] if s[:1] in "+-" else s
    if not s2.isdigit() or not s2.isascii():
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


class Requirement:
    """One compiled requirement: key, operator and a frozenset of values."""

    __slots__ = ("_hash", "key", "op", "values")

    def __init__(self, key: str, op: str, values: frozenset[str] = frozenset()):
        self.key, self.op, self.values = key, op, values
        self._hash = hash((key, op, values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            v = labels.get(self.key)
            if v is None or len(self.values) != 1:
                return False
            lhs, rhs = _as_int(v), _as_int(next(iter(self.values)))
            if lhs is None or rhs is None:
                return False
            return lhs > rhs if op == GT else lhs < rhs
        return False

    def _sort_key(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.key, self.op, tuple(sorted(self.values)))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Requirement)
            and self.key == other.key
            and self.op == other.op
            and self.values == other.values
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"{self.key} {self.op} {sorted(self.values)}"


class Selector:
    """A compiled label selector: AND of requirements, or NOTHING."""

    __slots__ = ("_hash", "nothing", "requirements")

    def __init__(self, requirements: tuple[Requirement, ...] = (), *, nothing: bool = False):
        self.requirements = tuple(sorted(set(requirements), key=Requirement._sort_key))
        self.nothing = nothing
        self._hash = hash((self.requirements, nothing))

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:  # noqa: SIM110 (a loop is faster: asked of every pod)
            if not r.matches(labels):
                return False
        return True

    @property
    def empty(self) -> bool:
        """True when it selects everything."""
        return not self.nothing and not self.requirements

    def with_requirements(self, extra: tuple[Requirement, ...]) -> Selector:
        """This selector ANDed with more requirements (matchLabelKeys, default constraints)."""
        if self.nothing:
            return self
        return Selector(self.requirements + extra)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Selector)
            and self.nothing == other.nothing
            and self.requirements == other.requirements
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.nothing:
            return "Selector(<nothing>)"
        return f"Selector({', '.join(map(repr, self.requirements))})"


EVERYTHING: Final = Selector()
NOTHING: Final = Selector(nothing=True)


def compile_label_selector(sel: LabelSelector | None, *, nil_matches: bool = False) -> Selector:
    """LabelSelectorAsSelector: nil gives NOTHING (or EVERYTHING if nil_matches), empty EVERYTHING.

    An unknown operator, or In/NotIn without values, makes the selector select nothing, as
    the conversion error does at Kubernetes call sites (validation rejects such objects first).
    """
    if sel is None:
        return EVERYTHING if nil_matches else NOTHING
    reqs: list[Requirement] = [Requirement(k, IN, frozenset((v,))) for k, v in sel.match_labels.items()]
    for e in sel.match_expressions:
        if e.operator not in LABEL_SELECTOR_OPERATORS:
            return NOTHING
        if e.operator in (IN, NOT_IN) and not e.values:
            return NOTHING
        vals = frozenset(e.values) if e.operator in (IN, NOT_IN) else frozenset()
        reqs.append(Requirement(e.key, e.operator, vals))
    return Selector(tuple(reqs))


# --- node selectors ----------------------------------------------------------------------------


_LABEL_VALUE_RE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _is_label_value(v: str) -> bool:
    """validation.IsValidLabelValue: at most 63 characters of [-A-Za-z0-9_.], alphanumeric ends."""
    return len(v) <= 63 and _LABEL_VALUE_RE.fullmatch(v) is not None


def node_requirement_matches(r: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    """labels.NewRequirement, then Requirement.Matches. A requirement NewRequirement rejects
    fails its whole term (a parse error): In/NotIn without values, Exists/DoesNotExist with
    values, Gt/Lt without exactly one int64 value, or any value that is not a valid label value
    (API validation does not check node affinity values, so e.g. ``Gt ["-1"]`` reaches here)."""
    op = r.operator
    if op in (IN, NOT_IN) and not r.values:
        return False
    if op in (EXISTS, DOES_NOT_EXIST) and r.values:
        return False
    if op in (GT, LT) and len(r.values) != 1:
        return False
    if op not in NODE_SELECTOR_OPERATORS:
        return False
    if not all(_is_label_value(v) for v in r.values):
        return False
    return Requirement(r.key, op, frozenset(r.values)).matches(labels)


def node_selector_term_matches(term: NodeSelectorTerm, labels: Mapping[str, str], node_name: str) -> bool:
    """A term is the AND of its expressions and fields; a term with neither matches nothing."""
    if not term.match_expressions and not term.match_fields:
        return False
    for r in term.match_expressions:
        if not node_requirement_matches(r, labels):
            return False
    return all(node_field_matches(r, node_name) for r in term.match_fields)


def node_field_matches(r: NodeSelectorRequirement, node_name: str) -> bool:
    """A field requirement: only metadata.name is supported, with In/NotIn and one value."""
    if r.key != "metadata.name" or r.operator not in (IN, NOT_IN):
        return False
    if len(r.values) != 1:
        return False
    return (node_name == r.values[0]) == (r.operator == IN)


def node_selector_matches(sel: NodeSelector | None, labels: Mapping[str, str], node_name: str) -> bool:
    """The terms are ORed. A nil NodeSelector matches every node; no terms match none."""
    if sel is None:
        return True
    return any(node_selector_term_matches(t, labels, node_name) for t in sel.node_selector_terms)


# --- the selector string syntax (kubectl -l) -----------------------------------------------------

_SELECTOR_TOKEN = re.compile(
    r"\s*(?:(?P<neg>!)\s*(?P<nkey>[^\s,=!<>()]+)"
    r"|(?P<key>[^\s,=!<>()]+)\s*(?:(?P<op>==|=|!=|<|>)\s*(?P<val>[^\s,()]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<vals>[^)]*)\)|(?=\s*(?:,|$))))\s*(?:,|$)"
)


def parse_selector(text: str) -> Selector:
    """Parse kubectl's ``-l`` syntax (``a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3``).

    Raises ValueError naming the position of the first thing it cannot read.
    """
    reqs: list[Requirement] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _SELECTOR_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"invalid label selector {text!r}: cannot parse at column {pos + 1}")
        pos = m.end()
        if m.group("neg"):
            reqs.append(Requirement(m.group("nkey"), DOES_NOT_EXIST))
        elif m.group("op"):
            op = {"=": IN, "==": IN, "!=": NOT_IN, ">": GT, "<": LT}[m.group("op")]
            reqs.append(Requirement(m.group("key"), op, frozenset((m.group("val"),))))
        elif m.group("setop"):
            vals = frozenset(v.strip() for v in m.group("vals").split(",") if v.strip())
            reqs.append(Requirement(m.group("key"), IN if m.group("setop") == "in" else NOT_IN, vals))
        else:
            reqs.append(Requirement(m.group("key"), EXISTS))
    return Selector(tuple(reqs))
