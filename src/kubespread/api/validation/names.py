"""Names, label keys and label values, with kube-apiserver's exact messages.

The ``is_*`` functions return the list of problems (empty when the value is fine), worded as
k8s.io/apimachinery words them (v1.36): a DNS name that is too long is "no more than 63
characters", a qualified-name part or a label value "no more than 63 bytes"; a regex failure
names the regex and gives examples. The ``validate_*`` functions wrap them into field errors.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Concatenate, ParamSpec

from kubespread.api.errors import FieldError, Path

__all__ = [
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_percent",
    "name_is_dns1035_label",
    "name_is_dns1123_label",
    "name_is_dns1123_subdomain",
    "validate_dns1123_label",
    "validate_label_name",
    "validate_labels",
    "validate_qualified_name",
]

NameFn = Callable[[str, bool], list[str]]

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
PERCENT_FMT = "[0-9]+%"

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)
_PERCENT_RE = re.compile(PERCENT_FMT)

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
DNS1035_LABEL_MSG = (
    "a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
EMPTY_MSG = "must be non-empty"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError: ``msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')``.

    The double space before "or" is theirs (each example is followed by ", " and joined by " or ").
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


P = ParamSpec("P")

#: strings remembered valid per check, at most this many each
_REMEMBERED = 100_000


def _remember_valid(
    check: Callable[Concatenate[str, P], list[str]],
) -> Callable[Concatenate[str, P], list[str]]:
    """``check`` answering at once for a string it found valid before: the pods of a dump
    repeat the same label keys, values and names by the thousand. Only the wording of an
    error depends on the other arguments, so a valid string is valid for all of them."""
    valid: set[str] = set()

    @functools.wraps(check)
    def remembered(value: str, /, *args: P.args, **kwargs: P.kwargs) -> list[str]:
        if value in valid:
            return []
        errs = check(value, *args, **kwargs)
        if not errs and len(valid) < _REMEMBERED:
            valid.add(value)
        return errs

    return remembered


def _blen(s: str) -> int:
    """Go's len(): bytes of the UTF-8 encoding."""
    return len(s.encode("utf-8"))


@_remember_valid
def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            # a valid subdomain that is not a valid label: the length is checked above, so dots
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


@_remember_valid
def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_remember_valid
def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if _blen(value) > DNS1035_LABEL_MAX:
        errs.append(f"must be no more than {DNS1035_LABEL_MAX} characters")
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@_remember_valid
def is_qualified_name(value: str, *, label_key: bool = False) -> list[str]:
    """IsQualifiedName: ``[prefix/]name``, the prefix a DNS subdomain, the name ≤ 63 bytes.

    ``label_key`` words the error for a value with more than one '/' as label keys get it
    ("a valid label key must consist of ...") rather than "a qualified name must consist of ...".
    """
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_MSG)
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        what = "a valid label key " if label_key else "a qualified name "
        return [
            what
            + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + EMPTY_MSG)
    elif _blen(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} bytes")
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


@_remember_valid
def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if _blen(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_percent(value: str) -> list[str]:
    if not _PERCENT_RE.fullmatch(value):
        return [regex_error(PERCENT_MSG, PERCENT_FMT, "1%", "93%")]
    return []


# --- object names (ValidateNameFunc: prefix=True for generateName) -----------------------------


def _mask_trailing_dash(name: str) -> str:
    """A generateName may end in '-': the generated suffix follows it."""
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns1123_subdomain(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1123_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


# --- field errors --------------------------------------------------------------------------------


def validate_label_name(key: str, path: Path) -> list[FieldError]:
    """ValidateLabelName: a label key (also topology keys, toleration and taint keys)."""
    return [FieldError.invalid(path, key, m) for m in is_qualified_name(key, label_key=True)]


def validate_qualified_name(value: str, path: Path) -> list[FieldError]:
    return [FieldError.invalid(path, value, m) for m in is_qualified_name(value)]


def validate_dns1123_label(value: str, path: Path) -> list[FieldError]:
    return [FieldError.invalid(path, value, m) for m in is_dns1123_label(value)]


def validate_labels(labels: Mapping[str, str], path: Path) -> list[FieldError]:
    """ValidateLabels: every key and value, each error at the map's path (not the key's)."""
    errs: list[FieldError] = []
    for k, v in labels.items():
        errs.extend(validate_label_name(k, path))
        errs.extend(FieldError.invalid(path, v, m) for m in is_valid_label_value(v))
    return errs
