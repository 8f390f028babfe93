"""The one YAML/JSON reader: bytes in, documents out, with kube-apiserver's limits.

Every command reads manifests through :func:`parse_documents`, so a hostile file gets the
same answer everywhere: invalid UTF-8, flow collections nested deeper than the parser's
limit, and alias bombs ("excessive aliasing", go-yaml's rule, which the API server applies)
become a :class:`DocumentError` with a line; integers too long for Python's int conversion
stay strings, as go-yaml resolves literals out of every numeric range; a key given twice in
one mapping is kept once and remembered (:class:`StrictDict`), for strict field validation
to report. Only PyYAML's safe constructors run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import yaml

__all__ = [
    "MAX_REQUEST_BYTES",
    "Document",
    "DocumentError",
    "FieldLines",
    "StrictDict",
    "decode_utf8",
    "parse_documents",
]

#: kube-apiserver's limit on one request's body (3 MiB): ``admit`` reads one object
MAX_REQUEST_BYTES = 3 * 1024 * 1024

#: go-yaml's excessive-aliasing rule: past 100 aliased nodes and 1,000 nodes in all, the share
#: of nodes reached through aliases may not exceed 99% (up to 400,000 nodes), falling to 10%
#: at 4,000,000 nodes
_ALIAS_MIN, _NODES_MIN = 100, 1000
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000


@dataclass(slots=True)
class DocumentError(Exception):
    """Text that is not a readable YAML/JSON stream; ``line`` and ``column`` are 1-based."""

    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        where = f"line {self.line}" if self.column is None else f"line {self.line}, column {self.column}"
        return f"{self.message} ({where})"


@dataclass(slots=True)
class Document:
    """One parsed document: its data, its first line, and the line of each ``items`` entry
    of a list document (to point at the right object of a kubectl dump)."""

    data: Any
    line: int
    item_lines: list[int]


class StrictDict(dict[str, Any]):
    """A mapping that had keys given more than once: ``duplicates`` holds (key, line) for each
    repetition; the last value wins, as in encoding/json."""

    __slots__ = ("duplicates",)
    #: how many this process made: none means no text read so far gave a key twice, which
    #: lets the fused decoder leave a stored pod's unread fields unwalked (``api.fastdecode``)
    made: ClassVar[int] = 0

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.duplicates: list[tuple[str, int]] = []
        StrictDict.made += 1


def decode_utf8(data: bytes) -> str:
    """The text of ``data``; raises DocumentError naming the first invalid byte's line."""
    if data.isascii():  # most manifests: checked and copied many times faster
        return data.decode("ascii")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise DocumentError(
            f"invalid UTF-8: byte 0x{data[err.start]:02x} at offset {err.start}", line, column
        ) from None


_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[valid-type,misc]
    """The safe loader with duplicate keys remembered and overlong integers kept as text."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    dups: list[tuple[str, int]] = []
    pairs = node.value
    if len({k.value for k, _ in pairs if type(k.value) is str}) != len(pairs):  # rare: look closer
        seen: set[str] = set()
        for key_node, _ in pairs:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            if key_node.value in seen:
                dups.append((str(key_node.value), key_node.start_mark.line + 1))
            seen.add(key_node.value)
    data: dict[Any, Any] = StrictDict() if dups else {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
            ) from None
        data[key] = loader.construct_object(value_node, deep=False)
    if isinstance(data, StrictDict):
        data.duplicates = dups


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        # Python refuses to convert more than 4,300 digits; go-yaml, finding the literal out of
        # every int and float range, resolves it as a string: so do we
        return node.value


# go-yaml reads 1e3 as a float (YAML 1.1 as PyYAML has it wants a dot): so does the server
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)
_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


# only JSON's types come out, as the server's YAML-to-JSON conversion makes them: a timestamp
# stays the text it was written as (go-yaml keeps it a string), a !!set is a mapping of nulls,
# !!omap and !!pairs are lists of one-key mappings, !!binary is its base64 text
def _construct_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(node.value)


def _construct_binary(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return "".join(str(node.value).split())


def _construct_pairs(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    out: list[dict[Any, Any]] = []
    yield out
    if not isinstance(node, yaml.SequenceNode):
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"expected a sequence of one-key mappings, found a {type(node).__name__}",
            node.start_mark,
        )
    for item in node.value:
        if not isinstance(item, yaml.MappingNode) or len(item.value) != 1:
            raise yaml.constructor.ConstructorError(
                None, None, "expected a one-key mapping in an ordered map", item.start_mark
            )
        ((key_node, value_node),) = item.value
        out.append({loader.construct_object(key_node): loader.construct_object(value_node)})


def _construct_set(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    data: dict[Any, Any] = {}
    yield data
    for key_node, _ in node.value:
        data[loader.construct_object(key_node)] = None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_text)
_Loader.add_constructor("tag:yaml.org,2002:binary", _construct_binary)
_Loader.add_constructor("tag:yaml.org,2002:omap", _construct_pairs)
_Loader.add_constructor("tag:yaml.org,2002:pairs", _construct_pairs)
_Loader.add_constructor("tag:yaml.org,2002:set", _construct_set)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _allowed_alias_ratio(nodes: int) -> float:
    if nodes <= _RATIO_LOW:
        return 0.99
    if nodes >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (nodes - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def _check_aliasing(root: yaml.Node) -> None:
    """Raise for a document whose expansion is mostly aliases (a "billion laughs" bomb).

    The composer gives an alias the anchored node itself, so the document is a DAG: the
    expanded size of each node is computed once, and a node met again is an alias whose whole
    expansion counts as aliased, without expanding it."""
    size: dict[int, int] = {}
    # post-order sizes, iteratively (no recursion on deep documents)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in size:
            continue
        kids = _children(node)
        if done or not kids:
            size[id(node)] = 1 + sum(size[id(k)] for k in kids)
            continue
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in size)
    total = size[id(root)]
    if total <= _NODES_MIN:
        return
    aliased = 0
    seen: set[int] = set()
    walk = [root]
    while walk:
        node = walk.pop()
        for k in _children(node):
            if id(k) in seen:
                aliased += size[id(k)]
            else:
                seen.add(id(k))
                walk.append(k)
    if aliased > _ALIAS_MIN and aliased / total > _allowed_alias_ratio(total):
        mark = root.start_mark
        raise DocumentError("document contains excessive aliasing", mark.line + 1)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _item_lines(node: yaml.Node) -> list[int]:
    return [item.start_mark.line + 1 for item in _items(node)]


#: one step of a field path: ``.name`` (or a leading ``name``), or ``[index]`` / ``[key]``
_PATH_STEP = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


class FieldLines:
    """Where a field of an object is written in one file, so a message can point at the field's
    own line (``web.yaml:18:``) rather than its object's first line. The YAML is composed
    again on first use only (files without problems never pay for it), from ``text``, or from
    ``read()`` so a large file need not be kept in memory meanwhile."""

    __slots__ = ("_objects", "_read", "_text")

    def __init__(self, text: str | None = None, read: Callable[[], str] | None = None) -> None:
        self._text = text
        self._read = read
        self._objects: dict[int, yaml.Node] | None = None

    def line(self, object_line: int, path: str) -> int | None:
        """The line of ``path`` (``spec.containers[0].resources.requests[cpu]``) in the object
        that starts at ``object_line``: of the deepest part of it written there (a missing
        field points at its parent); None when no object starts at that line."""
        node = self._nodes().get(object_line)
        return None if node is None else _path_line(node, path)

    def _nodes(self) -> dict[int, yaml.Node]:
        if self._objects is None:
            self._objects = {}
            try:
                text = self._text if self._text is not None else self._read() if self._read else ""
            except (OSError, DocumentError):
                text = ""
            loader = _Loader(text)
            try:
                while loader.check_node():
                    node = loader.get_node()
                    if node is not None:
                        self._objects[node.start_mark.line + 1] = node
                        for item in _items(node):
                            self._objects[item.start_mark.line + 1] = item
            except (yaml.YAMLError, RecursionError):
                pass  # the objects before the malformed part are still found
            finally:
                loader.dispose()
            self._text = None
        return self._objects


def _path_line(node: yaml.Node, path: str) -> int:
    line: int = node.start_mark.line + 1
    for m in _PATH_STEP.finditer(path):
        name, key = m.group(1), m.group(2)
        if isinstance(node, yaml.SequenceNode) and key is not None and key.isdigit():
            if int(key) >= len(node.value):
                break
            node = node.value[int(key)]
            line = node.start_mark.line + 1
            continue
        if not isinstance(node, yaml.MappingNode):
            break
        want = name if name is not None else key
        found = next((kv for kv in node.value if _is_key(kv[0], want)), None)
        if found is None:
            break
        line = found[0].start_mark.line + 1
        node = found[1]
    return line


def _is_key(node: yaml.Node, name: str | None) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == name


def _items(node: yaml.Node) -> list[yaml.Node]:
    """The entries of a ``kind: List``'s ``items`` (objects of their own)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "items" and isinstance(v, yaml.SequenceNode):
                return list(v.value)
    return []


class _Unusual(Exception):
    """Something the event reader leaves to the composer: an alias, an explicit tag, a complex
    or merge key, a parse error (whose message and partial documents the composer gives)."""


_STR_TAG = "tag:yaml.org,2002:str"
_NO_KEY = object()
#: plain-scalar tags the event reader constructs itself (the safe constructors' own)
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "timestamp")
)


def _read_events(text: str) -> list[Document]:
    """Documents built straight from the parser's events, as the composer and the safe
    constructors would build them, without composing a node tree first (its nodes and their
    marks were most of a large dump's reading time). Raises :class:`_Unusual` for anything
    else, which :func:`parse_documents` then reads the composer's way."""
    resolvers = _Loader.yaml_implicit_resolvers
    wildcard = resolvers.get(None, [])
    constructors = _Loader.yaml_constructors
    loader = _Loader(text)
    keys: dict[str, str] = {}  # one string per distinct key: a dump's keys repeat
    # a plain scalar's value by its text (immutable: str, int, float, bool, None): a dump's
    # values repeat too, and resolving one runs its tag's regular expressions
    plain: dict[str, Any] = {}
    docs: list[Document] = []
    try:
        get = loader.get_event
        get()  # StreamStartEvent
        while type(get()) is yaml.DocumentStartEvent:
            root: list[Any] = []
            # the open collections, each (container, is_mapping, pending key, key events)
            stack: list[tuple[Any, bool, Any, list[Any]]] = []
            cur: Any = root
            is_map = False
            key: Any = _NO_KEY
            key_events: list[Any] = []
            first_line = 0
            items: list[Any] = []  # the top mapping's `items`, once met
            item_lines: list[int] = []
            while True:
                event = get()
                cls = type(event)
                if cls is yaml.ScalarEvent:
                    if event.tag is not None:
                        raise _Unusual
                    value = event.value
                    if event.implicit[0]:
                        data: Any = plain.get(value, _NO_KEY)
                        if data is _NO_KEY:
                            tag = _STR_TAG
                            found = resolvers.get(value[0], []) if value else resolvers.get("", [])
                            for t, regexp in found + wildcard if wildcard else found:
                                if regexp.match(value):
                                    tag = t
                                    break
                            if tag is _STR_TAG:
                                data = value
                            elif tag in _SCALAR_TAGS:
                                node = yaml.ScalarNode(tag, value, event.start_mark)
                                data = constructors[tag](loader, node)
                            else:
                                raise _Unusual  # a merge key, `=`
                            plain[value] = data
                    else:
                        data = value
                    if is_map:
                        if key is _NO_KEY:
                            key = keys.setdefault(data, data) if type(data) is str else data
                            key_events.append(event)
                            continue
                        cur[key] = data
                        key = _NO_KEY
                    else:
                        if cur is items:
                            item_lines.append(event.start_mark.line + 1)
                        elif cur is root:
                            first_line = event.start_mark.line + 1
                        cur.append(data)
                elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                    if event.tag is not None or (is_map and key is _NO_KEY):
                        raise _Unusual  # a tagged collection, a complex key
                    opened: Any = {} if cls is yaml.MappingStartEvent else []
                    if cur is items:
                        item_lines.append(event.start_mark.line + 1)
                    elif cur is root:
                        first_line = event.start_mark.line + 1
                    elif len(stack) == 1 and key == "items" and type(opened) is list:
                        items = opened
                    stack.append((cur, is_map, key, key_events))
                    cur, is_map, key, key_events = opened, type(opened) is dict, _NO_KEY, []
                elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                    done = cur
                    if is_map and len({e.value for e in key_events}) != len(key_events):
                        if not stack or len(stack) == 1:
                            raise _Unusual  # which `items` lines mean is the composer's
                        done = _with_duplicates(done, key_events)
                    cur, is_map, key, key_events = stack.pop()
                    if is_map:
                        cur[key] = done
                        key = _NO_KEY
                    else:
                        cur.append(done)
                elif cls is yaml.DocumentEndEvent:
                    break
                else:
                    raise _Unusual  # an alias
            docs.append(Document(root[0], first_line, item_lines))
    except yaml.YAMLError:
        raise _Unusual from None
    finally:
        loader.dispose()
    return docs


def _with_duplicates(data: dict[Any, Any], key_events: list[Any]) -> StrictDict:
    """``data`` as a :class:`StrictDict` remembering its keys written more than once (the
    key's text, as :func:`_construct_mapping` compares them, and its line)."""
    strict = StrictDict(data)
    seen: set[str] = set()
    for e in key_events:
        if e.value in seen:
            strict.duplicates.append((str(e.value), e.start_mark.line + 1))
        seen.add(e.value)
    return strict


def parse_documents(text: str) -> tuple[list[Document], DocumentError | None]:
    """Every document of a YAML (or JSON) stream, and the error that stopped reading, if any:
    the documents before a malformed one are still returned."""
    try:
        return _read_events(text), None
    except _Unusual:
        pass
    docs: list[Document] = []
    aliases = "*" in text  # no alias without one: skip the check (most files)
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if aliases:
                _check_aliasing(node)
            docs.append(
                Document(loader.construct_document(node), node.start_mark.line + 1, _item_lines(node))
            )
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        message = f"malformed YAML: {context + ', ' if context else ''}{problem}"
        if mark is None:
            return docs, DocumentError(message)
        return docs, DocumentError(message, mark.line + 1, mark.column + 1)
    except DocumentError as err:
        return docs, err
    except RecursionError:
        # only the pure-Python parser recurses; libyaml stops at its own depth limit first
        return docs, DocumentError("malformed YAML: exceeded maximum nesting depth")
    finally:
        loader.dispose()
    return docs, None
