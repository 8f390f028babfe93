"""Seeded, deterministic mutations of the bundled manifests under examples/.

A careful user's mistakes, one to three per input: a value of the wrong type, a number out of
range, a wrong enum, a missing or unknown field, a duplicated item, deep nesting, empty, long or
unicode strings, invalid label keys and values. The same (source, seed) always gives the same
text, so a crash found once reproduces from its two numbers.

Replicas stay at most 1,000 unless beyond ``--max-pods`` (an error at once): a valid count of
tens of thousands of pods is a real, minutes-long run, not a fault. A scenario's ``advance``
is mutated freely: a wait of years with pending pods costs nothing while nothing changes.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubespread.cluster.errors import DEFAULT_MAX_PODS

__all__ = ["EXAMPLES", "Mutant", "Source", "mutate", "sources"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MAX_REPLICAS = 1000
COUNTS = ("replicas", "count", "completions", "parallelism")

Path_ = tuple[str | int, ...]
#: libyaml's safe loader and emitter when PyYAML has them (ten times the pure-Python speed)
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True)
class Source:
    """One bundled manifest file and its documents."""

    path: Path
    docs: tuple[Any, ...]

    @property
    def name(self) -> str:
        return str(self.path.relative_to(EXAMPLES))

    @property
    def is_scenario(self) -> bool:
        return any(isinstance(d, dict) and d.get("kind") == "Scenario" for d in self.docs)

    @property
    def has_pod(self) -> bool:
        return any(isinstance(d, dict) and d.get("kind") == "Pod" for d in self.docs)


@dataclass(frozen=True)
class Mutant:
    """A mutated source: its text and what was done, for a reproduction."""

    source: Source
    seed: int
    text: str
    steps: tuple[str, ...]
    single: str  # one mutated object alone, for admit (one manifest on stdin)


def sources() -> list[Source]:
    """Every YAML manifest under examples/, sorted so that indices are stable."""
    found = []
    for p in sorted(EXAMPLES.rglob("*.yaml")):
        docs = tuple(d for d in yaml.load_all(p.read_text(), Loader=_LOADER) if d is not None)
        if docs:
            found.append(Source(p, docs))
    return found


# -- value pools ---------------------------------------------------------------------------

RAW = "__RAW{}__"  # placeholders for YAML scalars a dump cannot write (1e400, .nan, ...)
RAW_TEXT = ("1e400", "-1e400", ".nan", ".inf", "0x7fffffff", "0o17", "1_000", "~", "0.0", "-0")

NUMBERS: tuple[Any, ...] = (
    -1,
    0,
    1,
    2,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    10**30,
    -(10**30),
    1.5,
    -0.5,
    1e300,
    3.0,
    1e-300,
)
STRINGS: tuple[Any, ...] = (
    "",
    " ",
    "a",
    "-",
    "0",
    "1",
    "true",
    "null",
    "x" * 254,
    "x" * 64,
    "y" * 100_000,
    "é",
    "日本語",
    "\u200b",
    "a\nb",
    "a b",
    "UPPER",
    "-leading",
    "trailing-",
    "a/b/c",
    "a" * 63 + "/" + "b" * 64,
    "100m",
    "1Gi",
    "1.5",
    "-1",
    "1e3",
    "5mi",
    "10Qi",
    "..",
    "%",
    "$(VAR)",
    "*",
    "kubernetes.io/",
    "\x00",
    "\t",
    "🚀",
)
ENUM_WORDS: tuple[str, ...] = (
    "DoNotSchedule",
    "ScheduleAnyway",
    "doNotSchedule",
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "Gt",
    "Lt",
    "Equal",
    "in",
    "NoSchedule",
    "PreferNoSchedule",
    "NoExecute",
    "noschedule",
    "Honor",
    "Ignore",
    "honor",
    "Always",
    "Never",
    "OnFailure",
    "IfNotPresent",
    "Recreate",
    "RollingUpdate",
    "Parallel",
    "OrderedReady",
    "True",
    "False",
    "Unknown",
    "Bogus",
    "",
)
LABEL_KEYS: tuple[str, ...] = (
    "",
    "-a",
    "a-",
    "a/b/c",
    "/a",
    "a/",
    "UPPER/x",
    "x" * 64,
    "k" * 254 + "/a",
    "a b",
    "ключ",
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "a..b/c",
    "_a",
    "a_b",
    "a.b",
)
LABEL_VALUES: tuple[Any, ...] = ("", "-a", "a-", "x" * 64, "a b", "a/b", "é", "_", "a.b", 1, True, None)


def _scalars(rng: random.Random) -> Any:
    pools: list[tuple[Any, ...]] = [NUMBERS, STRINGS, ENUM_WORDS, (None, True, False)]
    return rng.choice(rng.choice(pools))


def _any_value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 2 or r < 0.6:
        if rng.random() < 0.1:
            return RAW.format(rng.randrange(len(RAW_TEXT)))
        return _scalars(rng)
    if r < 0.8:
        return [_any_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        rng.choice(STRINGS[:8] + LABEL_KEYS[:6]): _any_value(rng, depth + 1) for _ in range(rng.randint(0, 3))
    }


# -- the tree ------------------------------------------------------------------------------


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path into the tree, the root included."""
    found = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found += _paths(v, (*prefix, i))
    return found


def _get(node: Any, path: Path_) -> Any:
    for p in path:
        node = node[p]
    return node


def _set(root: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _delete(root: Any, path: Path_) -> Any:
    if not path:
        return root
    parent = _get(root, path[:-1])
    del parent[path[-1]]
    return root


def _key(path: Path_) -> str:
    return next((str(p) for p in reversed(path) if isinstance(p, str)), "")


# -- mutations: (root, path, rng) -> (new root, description) -------------------------------

Mutation = Callable[[Any, Path_, random.Random], tuple[Any, str]]


def change_type(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    old = _get(root, path)
    choices: list[Any] = [None, True, 0, 1, "", "text", [], {}, [old], {"x": old}, str(old)]
    if isinstance(old, str) and old.lstrip("-").isdigit():
        choices.append(int(old))
    if isinstance(old, int | float) and not isinstance(old, bool):
        choices += [str(old), float(old), [old]]
    value = rng.choice(choices)
    return _set(root, path, value), f"type {value!r:.40}"


def out_of_range(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    raw_ok = _key(path) not in (*COUNTS, "advance")  # 0x7fffffff is an int to YAML 1.1: no cap would see it
    value = (
        rng.choice(NUMBERS) if rng.random() < 0.85 or not raw_ok else RAW.format(rng.randrange(len(RAW_TEXT)))
    )
    return _set(root, path, value), f"number {value!r}"


def wrong_enum(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    value = rng.choice(ENUM_WORDS)
    return _set(root, path, value), f"enum {value!r}"


def odd_string(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    value = rng.choice(STRINGS)
    return _set(root, path, value), f"string {value!r:.40}"


def delete_field(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    return _delete(root, path), "delete"


def unknown_field(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    node = _get(root, path)
    if not isinstance(node, dict):
        return change_type(root, path, rng)
    key = rng.choice(("bogus", "spec", "metadata", "kind", "status", "", "Name", "x" * 300, "名前"))
    node[key] = _any_value(rng)
    return root, f"add field {key!r:.40}"


def duplicate_item(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    node = _get(root, path)
    if isinstance(node, list) and node:
        item = rng.choice(node)
        node.insert(rng.randrange(len(node) + 1), yaml.safe_load(yaml.safe_dump(item)))
        return root, "duplicate item"
    return _set(root, path, [node, node] if rng.random() < 0.5 else [node]), "wrap in list"


def deep_nesting(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    value: Any = _get(root, path)
    depth = rng.choice((5, 50, 200))
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return _set(root, path, value), f"nest {depth}"


def label_mutation(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    node = _get(root, path)
    if isinstance(node, dict):
        key = rng.choice(LABEL_KEYS)
        node[key] = rng.choice(LABEL_VALUES) if rng.random() < 0.5 else "v"
        return root, f"label key {key!r:.40}"
    value = rng.choice(LABEL_VALUES)
    return _set(root, path, value), f"label value {value!r:.40}"


def empty_container(root: Any, path: Path_, rng: random.Random) -> tuple[Any, str]:
    node = _get(root, path)
    value: Any = [] if isinstance(node, list) else {} if isinstance(node, dict) else ""
    return _set(root, path, value), "empty"


MUTATIONS: tuple[Mutation, ...] = (
    change_type,
    out_of_range,
    wrong_enum,
    odd_string,
    delete_field,
    unknown_field,
    duplicate_item,
    deep_nesting,
    label_mutation,
    empty_container,
)
#: where a field's name suggests what to do with it
NUMERIC = (
    "maxSkew",
    "minDomains",
    "replicas",
    "weight",
    "tolerationSeconds",
    "priority",
    "parallelism",
    "completions",
    "seed",
    "count",
    "maxSurge",
    "maxUnavailable",
    "percent",
    "backoffLimit",
)
ENUMS = (
    "whenUnsatisfiable",
    "operator",
    "effect",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "restartPolicy",
    "type",
    "status",
    "action",
    "policy",
    "podManagementPolicy",
)
LABELISH = ("labels", "matchLabels", "nodeSelector", "annotations", "topologyKey", "key", "matchLabelKeys")


def _pick(rng: random.Random, root: Any, path: Path_) -> Mutation:
    key = _key(path)
    if key in NUMERIC and rng.random() < 0.6:
        return out_of_range
    if key in ENUMS and rng.random() < 0.6:
        return wrong_enum
    if key in LABELISH and rng.random() < 0.6:
        return label_mutation
    return rng.choice(MUTATIONS)


def _what(step: str) -> str:
    return step.rsplit(": ", 1)[-1]


def _cap_replicas(node: Any) -> None:
    """Keep replicas (and similar counts) at most MAX_REPLICAS unless the run refuses them
    (over DEFAULT_MAX_PODS): see the module's note."""
    if isinstance(node, dict):
        for k, v in node.items():
            if (
                k in COUNTS
                and isinstance(v, int | float)
                and not isinstance(v, bool)
                and MAX_REPLICAS < v <= DEFAULT_MAX_PODS
            ):
                node[k] = MAX_REPLICAS
            _cap_replicas(v)
    elif isinstance(node, list):
        for v in node:
            _cap_replicas(v)


LIST_SAMPLE = 40


def _sample_lists(docs: list[Any], rng: random.Random) -> list[Any]:
    """A kubectl List dump (the snapshot: 344 objects, 2 MB) keeps its nodes and a sample of
    the rest, so that one input takes a fraction of a second and mutations land where it runs."""
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List" and len(doc.get("items", ())) > LIST_SAMPLE:
            items = doc["items"]
            nodes = [i for i in items if i.get("kind") == "Node"]
            rest = [i for i in items if i.get("kind") != "Node"]
            keep = set(map(id, rng.sample(rest, min(LIST_SAMPLE, len(rest)))))
            doc["items"] = nodes + [i for i in rest if id(i) in keep]
    return docs


def _dump(docs: list[Any], rng: random.Random) -> str:
    text = yaml.dump_all(
        docs, Dumper=_DUMPER, sort_keys=False, allow_unicode=rng.random() < 0.5, width=10_000
    )
    for n, raw in enumerate(RAW_TEXT):
        text = text.replace(RAW.format(n), raw)
    return text


def mutate(source: Source, seed: int, max_steps: int = 3) -> Mutant:
    """One to ``max_steps`` mutations of one document (sometimes of the whole file) of ``source``."""
    rng = random.Random(f"{source.name}:{seed}")
    docs: list[Any] = _sample_lists(copy.deepcopy(list(source.docs)), rng)
    steps: list[str] = []
    last: Path_ = ()
    last_doc = 0
    for _ in range(rng.randint(1, max_steps)):
        if not docs:
            break
        i = rng.randrange(len(docs))
        paths = _paths(docs[i])
        # deeper fields are where the rules are: weight the choice toward them
        path = max(rng.sample(paths, min(2, len(paths))), key=len)
        mutation = _pick(rng, docs[i], path)
        if mutation is deep_nesting and any(s.startswith("nest") for s in map(_what, steps)):
            mutation = change_type  # nested twice, PyYAML's dumper itself runs out of stack
        try:
            docs[i], what = mutation(docs[i], path, rng)
        except (KeyError, IndexError, TypeError):  # an earlier step changed the shape
            continue
        last, last_doc = path, i
        steps.append(f"doc {i} {'.'.join(map(str, path)) or '<root>'}: {what}")
    if rng.random() < 0.05 and len(docs) > 1:
        docs.insert(rng.randrange(len(docs)), rng.choice(docs))
        steps.append("duplicate document")
    _cap_replicas(docs)
    single: Any = docs[last_doc] if docs else None
    if isinstance(single, dict) and single.get("kind") == "List" and last[:1] == ("items",):
        with contextlib.suppress(KeyError, IndexError, TypeError):
            single = single["items"][last[1]]
    return Mutant(source, seed, _dump(docs, rng), tuple(steps), _dump([single], rng))
