"""Loading manifests: files, directories, stdin; multi-document YAML, JSON, kubectl lists.

Loading never raises for a user's mistake. Every problem (unreadable file, malformed YAML
with its line, a value of the wrong type with its field path, an unknown kind) becomes a
:class:`LoadProblem`, and everything that could be read is still returned, so one run
reports every problem in every file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from kubespread.api.errors import DecodeError
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused

__all__ = ["LoadProblem", "LoadedObject", "Manifests", "describe_ref", "load", "load_data", "load_text"]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
K = TypeVar("K", bound=KubeObject)


@dataclass(slots=True)
class LoadedObject:
    """A decoded object and where it came from."""

    obj: KubeObject
    source: str
    line: int | None = None

    @property
    def ref(self) -> str:
        return describe_ref(self.obj.kind, self.obj.namespace, self.obj.name, self.obj.NAMESPACED)


@dataclass(slots=True)
class LoadProblem:
    """One problem found while loading. ``field`` is set for decoding errors."""

    source: str
    message: str
    line: int | None = None
    ref: str | None = None
    field: str | None = None
    warning: bool = False

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
def load(paths: Iterable[str | Path] | str | Path, *, stdin_text: str | None = None) -> Manifests:
    """Load every manifest under ``paths`` (files, directories recursively, ``-`` for stdin)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    files, problems = _expand(paths)
    out = Manifests(problems=problems)
    for f in files:
        if f == STDIN:
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            out.extend(load_text(text, "<stdin>"))
            continue
        try:
            text = Path(f).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            out.problems.append(LoadProblem(f, f"cannot read: {err}"))
            continue
        out.extend(load_text(text, f, json_only=f.lower().endswith(".json")))
    return out


def load_text(text: str, source: str, *, json_only: bool = False) -> Manifests:
    """Load the documents of one file's text; ``source`` names it in messages."""
    out = Manifests(sources=[source])
    docs = _parse_json(text, source, out) if json_only else _parse_yaml(text, source, out)
    return _decode_documents(docs, source, out)


def load_data(items: Iterable[Any], source: str) -> Manifests:
    """Decode objects already parsed (an API server's answers); ``source`` names them in
    messages (``cluster kind-dev``), as a file name does."""
    return _decode_documents([(item, None, []) for item in items], source, Manifests(sources=[source]))


def _decode_documents(docs: list[Doc], source: str, out: Manifests) -> Manifests:
    unknown: dict[str, int] = {}
    for data, line, item_lines in docs:
        _add_document(data, line, item_lines, source, out, unknown)
    for kind, n in unknown.items():
        plural = "object" if n == 1 else "objects"
        out.problems.append(LoadProblem(source, f"skipped {n} {plural} of unknown kind {kind}", warning=True))
    return out


Doc = tuple[Any, int | None, list[int]]

#: libyaml's safe loader when PyYAML was built with it: 4x faster on a kubectl dump of a few
#: MB; the same safe constructors, marks and errors
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_yaml(text: str, source: str, out: Manifests) -> list[Doc]:
    docs: list[Doc] = []
    loader = _SAFE_LOADER(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            data = loader.construct_document(node)
            docs.append((data, node.start_mark.line + 1, _item_lines(node)))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        msg = f"malformed YAML: {context + ', ' if context else ''}{problem}"
        if mark is not None:
            msg += f" (line {mark.line + 1}, column {mark.column + 1})"
        out.problems.append(LoadProblem(source, msg, line=line))
    finally:
        loader.dispose()
    return docs


def _item_lines(node: yaml.Node) -> list[int]:
    """Line of each entry of a list document's ``items``, to point at the right object."""
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == "items" and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []


def _parse_json(text: str, source: str, out: Manifests) -> list[Doc]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        out.problems.append(
            LoadProblem(
                source, f"malformed JSON: {err.msg} (line {err.lineno}, column {err.colno})", line=err.lineno
            )
        )
        return []
    return [(data, None, [])]


def _add_document(
    data: Any, line: int | None, item_lines: list[int], source: str, out: Manifests, unknown: dict[str, int]
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
            _add_document(item, item_line, [], source, out, unknown)
        return
    _add_object(data, line, source, out, unknown)


def _raw_ref(data: dict[str, Any], namespaced: bool = True) -> str:
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = meta.get("name") or meta.get("generateName") or ""
    ns = meta.get("namespace") or ""
    return describe_ref(str(data.get("kind") or ""), str(ns), str(name), namespaced)


def _add_object(
    data: dict[str, Any], line: int | None, source: str, out: Manifests, unknown: dict[str, int]
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
    cls = class_for(api_version, kind)
    if cls is None:
        label = f"{kind} ({api_version})"
        unknown[label] = unknown.get(label, 0) + 1
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
