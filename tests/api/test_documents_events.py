"""The event reader (``documents._read_events``) builds what the composer and the safe
constructors build: the same data, the same duplicate keys with their lines, the same
document and ``items`` lines; what it leaves to the composer (aliases, tags, merge and complex
keys, errors) is read the composer's way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubespread.api import documents
from kubespread.api.documents import Document, DocumentError, parse_documents

REPO = Path(__file__).resolve().parents[2]

FAST = {
    "scalars": """\
a: 012
b: 0x1F
c: 1_000
d: 1:30
e: [yes, no, on, off, Yes, ~, null, Null, "", '', .inf, -.Inf, 1e3, 1.5e-3, "1", '2']
f: [2026-11-20T14:45:31Z, 2001-12-14, 1.0, -0, +12, 0b101, 0o17]
big: 1111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111
""",
    "a value met again, plain and quoted (plain ones are resolved once)": """\
a: [012, "012", 012, yes, 'yes', yes, ~, "~", ~, 1e3, 1e3]
c: {012: 012, "012": x}
b: {yes: 012, "yes": 012}
""",
    "duplicates nested, and keys equal once constructed": """\
f: {x: 1, x: 2, "1": a, 1: b, 01: c}
g:
  - h: 1
    h: 2
items:
  - {kind: Pod, k: v, k: v2}
""",
    "a list with items of every shape": """\
---
---
apiVersion: v1
kind: List
items:
- 1
- a: b
- [x]
-
  c: d
---
just a scalar
---
{"a": [1, 2.5, true, null, "x\\u00e9"], "b": {"c": -0}}
""",
    "anchors without aliases": "a: &x {b: 1}\nc: &y [1]\n",
    "items not at the top": "spec:\n  items:\n  - 1\n  - 2\n",
    "empty": "",
}

COMPOSER = {
    "an alias": "x: &a {y: 1}\nz: *a\n",
    "a tag": "k: !!str 3\n",
    "a merge key": "base: &b {a: 1}\nm:\n  <<: *b\n",
    "a complex key": "? [complex]\n: 1\n",
    "duplicate keys at the top": "items: [1, 2]\nitems: [3]\n",
    "an error after a document": "a: 1\n---\nbad: [unclosed\n",
    "a tab": "a: 1\n\tb: 2\n",
}


def _composed(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Document], DocumentError | None]:
    def refuse(text: str) -> list[Document]:
        raise documents._Unusual

    with monkeypatch.context() as m:
        m.setattr(documents, "_read_events", refuse)
        return parse_documents(text)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (
            getattr(a, "duplicates", None) == getattr(b, "duplicates", None)
            and list(a) == list(b)
            and all(_same(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _check(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, err = parse_documents(text)
    want, want_err = _composed(text, monkeypatch)
    assert str(err) == str(want_err)
    assert [(d.line, d.item_lines) for d in docs] == [(d.line, d.item_lines) for d in want]
    assert all(_same(d.data, w.data) for d, w in zip(docs, want, strict=True))


@pytest.mark.parametrize("text", FAST.values(), ids=FAST.keys())
def test_event_reader_builds_what_the_composer_builds(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    documents._read_events(text)  # read without falling back
    _check(text, monkeypatch)


@pytest.mark.parametrize("text", COMPOSER.values(), ids=COMPOSER.keys())
def test_what_the_event_reader_leaves_is_read_the_composers_way(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(documents._Unusual):
        documents._read_events(text)
    _check(text, monkeypatch)


def test_duplicate_keys_keep_their_lines() -> None:
    docs, err = parse_documents("a:\n  k: 1\n  k: 2\n  j: 3\n  j: 4\n")
    assert err is None
    inner = docs[0].data["a"]
    assert inner == {"k": 2, "j": 4}
    assert inner.duplicates == [("k", 3), ("j", 5)]


def test_every_bundled_manifest_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    assert len(paths) > 20
    for path in paths:
        _check(path.read_text(encoding="utf-8"), monkeypatch)
