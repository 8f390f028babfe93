"""Loading manifests: files, directories, stdin; multi-document YAML, JSON, kubectl lists.

Loading never raises for a user's mistake. Every problem (unreadable file, malformed YAML
with its line, a value of the wrong type with its field path, an unknown kind) becomes a
:class:`LoadProblem`, and everything that could be read is still returned, so one run
reports every problem in every file.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from kubespread.api.documents import DocumentError, FieldLines, StrictDict, decode_utf8, parse_documents
from kubespread.api.errors import DecodeError
from kubespread.api.fastdecode import decode_checked
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused
from kubespread.api.schema import IssueKind, Validation, check

__all__ = [
    "LoadProblem",
    "LoadedObject",
    "Manifests",
    "Validation",
    "describe_ref",
    "load",
    "load_bytes",
    "load_data",
    "load_text",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
K = TypeVar("K", bound=KubeObject)


@dataclass(slots=True)
class LoadedObject:
    """A decoded object and where it came from."""

    obj: KubeObject
    source: str
    line: int | None = None
    #: the fields' own lines in the file (YAML sources), for messages about one field
    lines: FieldLines | None = None

    @property
    def ref(self) -> str:
        return describe_ref(self.obj.kind, self.obj.namespace, self.obj.name, self.obj.NAMESPACED)

    def line_of(self, field: str | None) -> int | None:
        """The line ``field`` (a field path, ``spec.replicas``) is written on, else the line of
        the nearest part of it that is (a missing field: its parent), else the object's."""
        if field and self.line is not None and self.lines is not None:
            return self.lines.line(self.line, field) or self.line
        return self.line

    def where(self, field: str | None = None) -> str:
        """``file:line`` of the object, or of ``field`` in it: every message's prefix."""
        line = self.line_of(field)
        return self.source if line is None else f"{self.source}:{line}"


@dataclass(slots=True)
class LoadProblem:
    """One problem found while loading. ``field`` is set for decoding errors."""

    source: str
    message: str
    line: int | None = None
    ref: str | None = None
    field: str | None = None
    warning: bool = False
    #: for "skipped N objects of unknown kind K": K's label and N, so ``load`` can say it once
    #: per kind over every file rather than once per file
    unknown_kind: str | None = None
    skipped: int = 0

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        parts = [where]
        if self.ref:
            parts.append(self.ref)
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


@dataclass(slots=True)
class Manifests:
    """What a load produced: objects in input order, problems, and the files read."""

    objects: list[LoadedObject] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    #: kubespread's own documents met and left out (not cluster objects): (source, line, kind),
    #: so ``validate`` can check a scenario file as ``simulate`` reads it
    own_documents: list[tuple[str, int | None, str]] = field(default_factory=list)

    @property
    def errors(self) -> list[LoadProblem]:
        return [p for p in self.problems if not p.warning]

    @property
    def warnings(self) -> list[LoadProblem]:
        return [p for p in self.problems if p.warning]

    def __iter__(self) -> Iterator[KubeObject]:
        return (lo.obj for lo in self.objects)

    def __len__(self) -> int:
        return len(self.objects)

    def of_kind(self, cls: type[K]) -> list[K]:
        return [lo.obj for lo in self.objects if isinstance(lo.obj, cls)]

    def extend(self, other: Manifests) -> None:
        self.objects += other.objects
        self.problems += other.problems
        self.sources += other.sources
        self.own_documents += other.own_documents


def describe_ref(kind: str, namespace: str, name: str, namespaced: bool = True) -> str:
    """``Kind namespace/name`` (``Kind name`` for cluster-scoped objects), as messages name them."""
    name = name or "<unnamed>"
    if namespaced:
        return f"{kind or '<no kind>'} {namespace or 'default'}/{name}"
    return f"{kind or '<no kind>'} {name}"


def _expand(paths: Iterable[str | Path]) -> tuple[list[str], list[LoadProblem]]:
    files: list[str] = []
    problems: list[LoadProblem] = []
    for p in paths:
        ps = str(p)
        if ps == STDIN:
            files.append(STDIN)
            continue
        path = Path(ps)
        try:
            path.stat()
        except FileNotFoundError:
            pass
        except OSError as e:  # a name too long for the file system, a loop of links, ...
            problems.append(LoadProblem(ps, e.strerror or str(e)))
            continue
        if path.is_dir():
            found = sorted(
                str(f) for f in path.rglob("*") if f.is_file() and f.suffix.lower() in MANIFEST_SUFFIXES
            )
            if not found:
                problems.append(
                    LoadProblem(ps, "no *.yaml, *.yml or *.json files in this directory", warning=True)
                )
            files += found
        elif path.is_file():
            files.append(ps)
        else:
            problems.append(LoadProblem(ps, "no such file or directory"))
    return files, problems


@gc_paused()
def load(
    paths: Iterable[str | Path] | str | Path,
    *,
    stdin_text: str | None = None,
    validate: Validation = Validation.STRICT,
) -> Manifests:
    """Load every manifest under ``paths`` (files, directories recursively, ``-`` for stdin).

    ``validate`` is kubectl's ``--validate``: unknown and duplicate fields are errors
    (strict, the default), warnings (warn) or let through (ignore). Values the API server
    cannot decode (a string for an integer, an int32 field over 2147483647) are errors in
    every mode."""
    if isinstance(paths, str | Path):
        paths = [paths]
    files, problems = _expand(paths)
    out = Manifests(problems=problems)
    for f in files:
        if f == STDIN:
            if stdin_text is not None:
                out.extend(load_text(stdin_text, "<stdin>", validate=validate))
            else:
                out.extend(load_bytes(sys.stdin.buffer.read(), "<stdin>", validate=validate))
            continue
        loaded = _load_file(f, validate)
        reread = FieldLines(read=_reader(f))  # not the text itself: a large dump is not kept twice
        for lo in loaded.objects:
            if lo.lines is not None:
                lo.lines = reread
        out.extend(loaded)
    out.problems = _one_warning_per_kind(out.problems)
    return out


def _load_file(path: str, validate: Validation) -> Manifests:
    """:func:`load_bytes` of one file. A JSON list (a dump of 100,000 pods is 600 MiB of
    it) is read a piece at a time and decoded item by item, never held whole; any other
    file, or one that does not read so, is read whole."""
    if path.lower().endswith(".json"):
        try:
            with open(path, "rb") as f:
                streamed = _load_json_list(_file_pieces(f), path, validate)
        except OSError:
            streamed = None  # said as reading it whole says it
        if streamed is not None:
            return streamed
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return Manifests(sources=[path], problems=[LoadProblem(path, f"cannot read: {err.strerror or err}")])
    try:
        text = decode_utf8(data)
    except DocumentError as err:
        return Manifests(sources=[path], problems=[LoadProblem(path, f"cannot read: {err}", line=err.line)])
    del data
    return _load_text(text, path, path.lower().endswith(".json"), validate, as_list=False)


def _reader(path: str) -> Callable[[], str]:
    return lambda: decode_utf8(Path(path).read_bytes())


def _one_warning_per_kind(problems: list[LoadProblem]) -> list[LoadProblem]:
    """The unknown-kind warnings of several files merged into one per kind, in the place of
    its first, naming the files (a directory of ConfigMaps gives one line, not one a file)."""
    by_kind: dict[str, list[LoadProblem]] = {}
    for p in problems:
        if p.unknown_kind is not None:
            by_kind.setdefault(p.unknown_kind, []).append(p)
    out = []
    for p in problems:
        if p.unknown_kind is None:
            out.append(p)
            continue
        same = by_kind[p.unknown_kind]
        if len(same) == 1:
            out.append(p)
        elif same[0] is p:
            sources = [q.source for q in same]
            n = sum(q.skipped for q in same)
            names = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
            message = (
                f"skipped {n} objects of unknown kind {p.unknown_kind} in {len(sources)} files ({names})"
            )
            where = _common_dir(sources)
            out.append(LoadProblem(where, message, warning=True, unknown_kind=p.unknown_kind, skipped=n))
    return out


def _common_dir(sources: list[str]) -> str:
    """The directory the files share (``examples``), else the first file's name."""
    try:
        common = os.path.commonpath(sources)
    except ValueError:  # absolute and relative paths together
        common = ""
    return common or sources[0]


def load_bytes(
    data: bytes, source: str, *, json_only: bool = False, validate: Validation = Validation.STRICT
) -> Manifests:
    """:func:`load_text` for the raw bytes of a file: invalid UTF-8 is a problem, not a crash."""
    try:
        text = decode_utf8(data)
    except DocumentError as err:
        out = Manifests(sources=[source])
        out.problems.append(LoadProblem(source, f"cannot read: {err}", line=err.line))
        return out
    return load_text(text, source, json_only=json_only, validate=validate)


def load_text(
    text: str, source: str, *, json_only: bool = False, validate: Validation = Validation.STRICT
) -> Manifests:
    """Load the documents of one file's text; ``source`` names it in messages."""
    return _load_text(text, source, json_only, validate, as_list=True)


def _load_text(text: str, source: str, json_only: bool, validate: Validation, as_list: bool) -> Manifests:
    """:func:`load_text`; ``as_list`` False when the text is known not to read as a JSON list."""
    if (
        json_only
        and as_list
        and (streamed := _load_json_list(_text_pieces(text), source, validate)) is not None
    ):
        return streamed
    out = Manifests(sources=[source])
    docs = _parse_json(text, source, out) if json_only else _parse_yaml(text, source, out)
    out = _decode_documents(docs, source, out, validate)
    if json_only:
        return out
    lines = FieldLines(text)
    for p in out.problems:  # a field's problem points at the field's own line
        if p.field and p.line is not None:
            p.line = lines.line(p.line, p.field) or p.line
    for lo in out.objects:
        lo.lines = lines
    return out


def load_data(items: Iterable[Any], source: str, *, validate: Validation | None = None) -> Manifests:
    """Decode objects already parsed; ``source`` names them in messages (``cluster kind-dev``),
    as a file name does. ``validate`` None (an API server's answers, which it decoded
    already): no strict field check."""
    return _decode_documents(
        [(item, None, []) for item in items], source, Manifests(sources=[source]), validate
    )


def _decode_documents(docs: list[Doc], source: str, out: Manifests, validate: Validation | None) -> Manifests:
    unknown: dict[str, int] = {}
    for data, line, item_lines in docs:
        _add_document(data, line, item_lines, source, out, unknown, validate)
    _warn_unknown(unknown, source, out)
    return out


def _warn_unknown(unknown: dict[str, int], source: str, out: Manifests) -> None:
    for kind, n in unknown.items():
        plural = "object" if n == 1 else "objects"
        message = f"skipped {n} {plural} of unknown kind {kind}"
        out.problems.append(LoadProblem(source, message, warning=True, unknown_kind=kind, skipped=n))


Doc = tuple[Any, int | None, list[int]]


def _parse_yaml(text: str, source: str, out: Manifests) -> list[Doc]:
    docs, err = parse_documents(text)
    if err is not None:
        out.problems.append(LoadProblem(source, str(err), line=err.line))
    return [(d.data, d.line, d.item_lines) for d in docs]


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = dict(pairs)
    if len(d) == len(pairs):  # no key given twice: the usual case, at C speed
        return d
    d = {}
    dups: list[tuple[str, int]] = []
    for k, v in pairs:
        if k in d:
            dups.append((k, 0))
        d[k] = v
    if not dups:
        return d
    strict = StrictDict(d)
    strict.duplicates = dups
    return strict


def _json_int(text: str) -> int | str:
    # past Python's 4,300-digit conversion limit the number is out of every API range anyway
    return int(text) if len(text) <= 4000 else text


#: the digits json's own conversion takes while a list is read item by item: below any number
#: _json_int keeps as text (4,000 characters with a sign)
_C_INT_DIGITS = 3999


def _parse_json(text: str, source: str, out: Manifests) -> list[Doc]:
    try:
        data = json.loads(text, object_pairs_hook=_json_object, parse_int=_json_int)
    except json.JSONDecodeError as err:
        out.problems.append(
            LoadProblem(
                source, f"malformed JSON: {err.msg} (line {err.lineno}, column {err.colno})", line=err.lineno
            )
        )
        return []
    except RecursionError:
        out.problems.append(LoadProblem(source, "malformed JSON: exceeded maximum nesting depth"))
        return []
    return [(data, None, [])]


class _NotAList(Exception):
    """JSON text that :func:`_each_list_item` leaves to ``json.loads``."""


_JSON_SPACE = re.compile(r"[ \t\n\r]*")

#: how much of a file is read at a time: a dump is never held whole, as bytes or as text
_CHUNK = 1 << 22

#: the next piece of a text, at least about the size asked for; "" at its end
Pieces = Callable[[int], str]


def _text_pieces(text: str) -> Pieces:
    """The pieces of a text already read: all of it at once."""
    left = [text]

    def read(size: int) -> str:
        return left.pop() if left else ""

    return read


def _file_pieces(f: BinaryIO) -> Pieces:
    """The pieces of a UTF-8 file read as asked; invalid UTF-8 raises a ValueError (the
    file is then read whole, which says where)."""
    utf8 = codecs.getincrementaldecoder("utf-8")()

    def read(size: int) -> str:
        while True:
            data = f.read(size)
            text = utf8.decode(data, final=not data)
            if text or not data:
                return text

    return read


def _each_list_item(read: Pieces, on_item: Callable[[Any], None]) -> dict[str, Any]:
    """Read a JSON object whose ``items`` is an array, handing each item to ``on_item`` as
    soon as it is read, and return its other fields (``items`` as the number of items):
    neither the whole text nor the items' raw dicts are ever all alive at once, the text
    being asked of ``read`` a piece at a time. Raises _NotAList for any other text (a
    duplicate top-level key, no ``items`` array...) and json's errors for malformed text:
    ``json.loads`` then reads it whole, and says what is wrong the one way."""
    # integers by json's C code (a call of _json_int for each of a dump's million was 3% of
    # its load), below a digit limit past which _json_int could differ: such an item raises a
    # ValueError, and the text is read whole by _parse_json
    decoder = json.JSONDecoder(object_pairs_hook=_json_object)
    scan, space = decoder.raw_decode, _JSON_SPACE.match
    buf, i, eof = read(_CHUNK), 0, False

    def more() -> bool:
        """The next piece appended (what is consumed let go); False at the end of the text."""
        nonlocal buf, i, eof
        if eof:
            return False
        piece = read(max(_CHUNK, len(buf) - i))  # an item larger than a piece: grow fast
        if not piece:
            eof = True
            return False
        buf, i = buf[i:] + piece, 0
        return True

    def peek() -> str:
        """The next character that is not white space ("" at the end of the text)."""
        nonlocal i
        while True:
            i = space(buf, i).end()  # type: ignore[union-attr]
            if i < len(buf):
                return buf[i]
            if not more():
                return ""

    def value() -> Any:
        """The next JSON value, read again with more text when it (or a number) might go on.
        The next piece is read first when a sixteenth of one is left (a dump's items are a
        few KiB): a value cut at the end of the text read costs its partial parse, and json's
        error, which counts the lines before it."""
        nonlocal i
        if len(buf) - i < _CHUNK >> 4:
            more()
        while True:
            limit = sys.get_int_max_str_digits()
            sys.set_int_max_str_digits(_C_INT_DIGITS)
            try:
                v, end = scan(buf, i)
            except json.JSONDecodeError:  # cut at the end of the text read (or malformed)
                if more():
                    continue
                raise
            finally:
                sys.set_int_max_str_digits(limit)
            if end < len(buf) or not more():
                i = end
                return v

    if peek() != "{":
        raise _NotAList
    i += 1
    top: dict[str, Any] = {}
    while True:
        peek()
        key = value()
        if not isinstance(key, str) or key in top or peek() != ":":
            raise _NotAList
        i += 1
        if key == "items" and peek() == "[":
            count = 0
            i += 1
            if peek() == "]":
                i += 1
            else:
                while True:
                    on_item(value())
                    count += 1
                    c = peek()
                    i += 1
                    if c == "]":
                        break
                    if c != ",":
                        raise _NotAList
                    peek()
            top[key] = count
        else:
            peek()
            top[key] = value()
        c = peek()
        i += 1
        if c == "}":
            break
        if c != ",":
            raise _NotAList
    if peek() != "":
        raise _NotAList
    return top


def _load_json_list(read: Pieces, source: str, validate: Validation) -> Manifests | None:
    """A JSON list of objects (``kubectl get -o json``) decoded item by item as it is read
    (``read``: its text, a piece at a time), as :func:`_decode_documents` decodes them; None
    for any other JSON (read whole)."""
    out = Manifests(sources=[source])
    unknown: dict[str, int] = {}

    def on_item(item: Any) -> None:
        if isinstance(item, dict) and not item.get("kind"):
            raise _NotAList  # a typed list's item: its kind is the list's, which may come later
        _add_document(item, None, [], source, out, unknown, validate)

    try:
        top = _each_list_item(read, on_item)
    except (_NotAList, ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None
    kind = top.get("kind")
    if "items" not in top or not isinstance(kind, str) or not kind.endswith("List"):
        return None
    _warn_unknown(unknown, source, out)
    return out


def _add_document(
    data: Any,
    line: int | None,
    item_lines: list[int],
    source: str,
    out: Manifests,
    unknown: dict[str, int],
    validate: Validation | None,
) -> None:
    if data is None:
        return
    if not isinstance(data, dict):
        out.problems.append(LoadProblem(source, "a manifest must be a mapping (an object)", line=line))
        return
    kind = data.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list):
        item_kind = kind[: -len("List")] if kind != "List" else ""
        for i, item in enumerate(data["items"]):
            item_line = item_lines[i] if i < len(item_lines) else line
            if isinstance(item, dict) and item_kind and not item.get("kind"):
                # typed lists (PodList) may leave kind and apiVersion to the list
                item = {"apiVersion": data.get("apiVersion", ""), "kind": item_kind, **item}
            _add_document(item, item_line, [], source, out, unknown, validate)
        return
    _add_object(data, line, source, out, unknown, validate)


def _raw_ref(data: dict[str, Any], namespaced: bool = True) -> str:
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = meta.get("name") or meta.get("generateName") or ""
    ns = meta.get("namespace") or ""
    return describe_ref(str(data.get("kind") or ""), str(ns), str(name), namespaced)


#: kubespread's own documents that are not cluster objects: a scenario file is ``simulate``'s
#: input, a CheckPolicy ``check``'s, so a directory of examples loads without a warning for
#: each one (``validate`` checks them as their command reads them)
_OWN_DOCUMENTS = frozenset(
    {("kubespread.io/v1alpha1", "Scenario"), ("kubespread.io/v1alpha1", "CheckPolicy")}
)


def _add_object(
    data: dict[str, Any],
    line: int | None,
    source: str,
    out: Manifests,
    unknown: dict[str, int],
    validate: Validation | None,
) -> None:
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        out.problems.append(
            LoadProblem(source, "Required value: kind not set", line=line, ref=_raw_ref(data), field="kind")
        )
        return
    if not isinstance(api_version, str) or not api_version:
        out.problems.append(
            LoadProblem(
                source,
                "Required value: apiVersion not set",
                line=line,
                ref=_raw_ref(data),
                field="apiVersion",
            )
        )
        return
    if (api_version, kind) in _OWN_DOCUMENTS:
        out.own_documents.append((source, line, kind))
        return
    cls = class_for(api_version, kind)
    if cls is None:
        label = f"{kind} ({api_version})"
        unknown[label] = unknown.get(label, 0) + 1
        return
    if validate is not None:
        fast = decode_checked(cls, data)  # the usual object: checked and decoded in one pass
        if fast is not None:
            out.objects.append(LoadedObject(fast, source, line))
            return
        if not _strict_check(data, cls, line, source, out, validate):
            return
    try:
        obj = cls.from_dict(data)
    except DecodeError as err:
        out.problems.append(
            LoadProblem(
                source, err.message, line=line, ref=_raw_ref(data, cls.NAMESPACED), field=err.field or None
            )
        )
        return
    out.objects.append(LoadedObject(obj, source, line))


def _strict_check(
    data: dict[str, Any],
    cls: type[KubeObject],
    line: int | None,
    source: str,
    out: Manifests,
    validate: Validation,
) -> bool:
    """Report what the strict decoder refuses; False when the object cannot be loaded."""
    issues = check(cls.KIND, data)
    if not issues:
        return True
    ref = _raw_ref(data, cls.NAMESPACED)
    fatal = False
    for issue in issues:
        if issue.kind is IssueKind.TYPE:
            fatal = True
        elif validate is Validation.IGNORE:
            continue
        elif validate is Validation.STRICT:
            fatal = True
        warning = issue.kind is not IssueKind.TYPE and validate is Validation.WARN
        at = issue.line if issue.line else line
        out.problems.append(
            LoadProblem(source, issue.message, line=at, ref=ref, field=issue.path, warning=warning)
        )
    return not fatal
