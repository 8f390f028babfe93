"""Scenario files: a cluster, a scheduler configuration and steps over time.

::

    apiVersion: kubespread.io/v1alpha1
    kind: Scenario
    metadata: {name: rollout}
    seed: 1
    scheduler: scheduler-config.yaml     # optional KubeSchedulerConfiguration (path or inline)
    cluster: [nodes.yaml]                # paths and/or inline objects; or a live cluster,
                                         # read once: {kubeconfig: kc.yaml, context: prod}
    steps:
    - apply: deployment.yaml             # path (a directory under this file's folder: its own
                                         # files), inline object, or a list of them
    - scale: {kind: Deployment, namespace: default, name: web, replicas: 6}
    - set: {kind: Deployment, namespace: default, name: web,
            path: spec.template.spec.containers[0].image, value: "nginx:1.15.0"}
    - label: {kind: Pod, namespace: default, name: web-1, set: {tier: gold}, remove: [old]}
    - delete: {kind: Pod, namespace: default, name: web-1}
    - node: {name: node1, action: cordon}   # uncordon | drain | fail | recover | delete | taint | untaint
    - node: {name: node2, action: taint, taint: {key: dedicated, value: gpu, effect: NoSchedule}}
    - node: {selector: "topology.kubernetes.io/zone=zone-a", action: fail}   # every node it matches
    - evict: {pods: [default/web-1, default/web-2]}  # the Eviction API: a PDB may refuse
    - advance: 90s                          # virtual time; controllers and timers run

Paths are relative to the scenario file. Loading is all or nothing: every problem of the
file, of the files it names and of every object in them (decoding and the API server's
validation) is collected with its location (``rollout.yaml: steps[2].scale.replicas: must
be a non-negative integer``) before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kubespread.admission.apiserver import settle_errors
from kubespread.api.documents import DocumentError, decode_utf8, parse_documents
from kubespread.api.duration import parse_duration
from kubespread.api.errors import Path as ErrorPath
from kubespread.api.features import FeatureGates
from kubespread.api.kinds import KINDS
from kubespread.api.meta import KubeObject
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.api.selectors import parse_selector
from kubespread.api.taints import TAINT_EFFECTS, Taint
from kubespread.api.validation.node import validate_taints
from kubespread.api.validation.pod import StoredPodChecks
from kubespread.io.loader import MANIFEST_SUFFIXES, LoadedObject, Manifests, Validation, load, load_data
from kubespread.scheduler.config import ConfigError, default_profiles, profiles_from_config
from kubespread.scheduler.profile import Profile

__all__ = [
    "API_VERSION",
    "NODE_ACTIONS",
    "STEP_KINDS",
    "TAINT_ACTIONS",
    "LiveSource",
    "Scenario",
    "ScenarioError",
    "Step",
    "creation_problems",
    "load_scenario",
    "parse_scenario",
    "pod_limit_problems",
]

API_VERSION: Final = "kubespread.io/v1alpha1"
STEP_KINDS: Final = ("apply", "scale", "set", "label", "delete", "node", "evict", "advance")
NODE_ACTIONS: Final = ("cordon", "uncordon", "drain", "fail", "recover", "delete", "taint", "untaint")
#: the node actions that take a ``taint``
TAINT_ACTIONS: Final = ("taint", "untaint")
SCALABLE_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet", "CloneSet", "Job")


class ScenarioError(Exception):
    """A scenario that cannot run; ``problems`` are located messages, all of them."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Step:
    """One step: ``action`` (one of STEP_KINDS) and its checked arguments."""

    index: int
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    objects: list[KubeObject] = field(default_factory=list)  # apply
    seconds: float = 0.0  # advance

    @property
    def where(self) -> str:
        return f"steps[{self.index}].{self.action}"

    def describe(self) -> str:
        """One line for tables and progress: what the step does."""
        a = self.args
        ref = f"{a.get('kind', '')} {_key(a)}".strip()
        match self.action:
            case "apply":
                return "apply " + ", ".join(o.ref() for o in self.objects)
            case "scale":
                return f"scale {ref} to {a['replicas']}"
            case "set":
                return f"set {ref} {a['path']} = {a['value']!r}"
            case "label":
                changes = [f"{k}={v}" for k, v in a.get("set", {}).items()] + [
                    f"{k}-" for k in a.get("remove", [])
                ]
                return f"label {ref} {' '.join(changes)}"
            case "delete":
                return f"delete {ref}"
            case "node" if "selector" in a:
                return f"{a['action']} nodes {a['selector']}{_taint_text(a)}"
            case "node":
                return f"{a['action']} node {a['name']}{_taint_text(a)}"
            case "evict":
                return f"evict {', '.join(a['pods'])}"
            case _:
                return f"advance {_fmt_seconds(self.seconds)}"


def _taint_text(a: Mapping[str, Any]) -> str:
    """`` key=value:effect`` (kubectl taint's form; untaint: ``key:effect-``), or nothing."""
    t = a.get("taint")
    if not isinstance(t, dict):
        return ""
    text = str(t.get("key", "")) + (f"={t['value']}" if t.get("value") else "")
    text += f":{t['effect']}" if t.get("effect") else ""
    return f" {text}-" if a.get("action") == "untaint" else f" {text}"


def _fmt_seconds(s: float) -> str:
    return f"{s:g}s"


def _key(a: Mapping[str, Any]) -> str:
    cls = KINDS.get(str(a.get("kind", "")))
    if cls is not None and not cls.NAMESPACED:
        return str(a.get("name", ""))
    return f"{a.get('namespace') or 'default'}/{a.get('name', '')}"


@dataclass(frozen=True)
class LiveSource:
    """A scenario's ``cluster: {kubeconfig: FILE, context: NAME}``: the cluster is read once
    from that API server (by the command: sim never connects) and the steps run offline on
    it. ``kubeconfig`` None: the default one ($KUBECONFIG, ~/.kube/config)."""

    kubeconfig: Path | None = None
    context: str | None = None


@dataclass
class Scenario:
    name: str
    seed: int
    profiles: dict[str, Profile] | None
    cluster: list[LoadedObject]
    steps: list[Step]
    source: str = ""
    #: what loading let through with a warning (``--validate=warn``), to print
    warnings: list[str] = field(default_factory=list)
    #: the live cluster ``cluster`` stands for, to read before running (then ``cluster`` is empty)
    live: LiveSource | None = None


# ------------------------------------------------------------------ loading


class _Problems(list[str]):
    """Every problem of one scenario, and how its manifests are loaded (``--validate``)."""

    def __init__(self, validation: Validation = Validation.STRICT) -> None:
        super().__init__()
        self.validation = validation
        self.warnings: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.append(f"{where}: {message}")


def _objects(value: Any, where: str, base: Path, problems: _Problems, source: str) -> list[LoadedObject]:
    """Objects of a ``cluster`` or ``apply`` value: a path, an inline object, or a list of them."""
    items = value if isinstance(value, list) else [value]
    out = Manifests()
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        if isinstance(item, str):
            path = Path(item)
            if not path.is_absolute():
                path = base / path
            shown = item if len(item) <= 80 else f"{item[:77]}..."
            try:
                path.stat()
            except (FileNotFoundError, NotADirectoryError):
                problems.add(f"{source}: {at}", f"no such file or directory: {shown}")
                continue
            except OSError as e:  # a name too long for the file system, a loop of links, ...
                problems.add(f"{source}: {at}", f"cannot read {shown}: {e.strerror or e}")
                continue
            if path.is_dir():
                # a directory under the scenario's own folder, and its own files only, as
                # `kubectl apply -f DIR` without -R: a value such as `..` must not make a run
                # read every manifest of a tree it does not own (/tmp: 116,000 objects, 90 s)
                if not path.resolve().is_relative_to(base.resolve()):
                    problems.add(
                        f"{source}: {at}",
                        f"directory {item} is outside the scenario's folder: name the files there one "
                        "by one (a directory is read only under the scenario's folder)",
                    )
                    continue
                files = sorted(
                    f for f in path.iterdir() if f.suffix.lower() in MANIFEST_SUFFIXES and f.is_file()
                )
                if not files:
                    problems.add(
                        f"{source}: {at}",
                        f"no *.yaml, *.yml or *.json files in directory {item} (a scenario reads a "
                        "directory's own files, not its subdirectories)",
                    )
                    continue
                out.extend(load(files, validate=problems.validation))
                continue
            out.extend(load([path], validate=problems.validation))
        elif isinstance(item, dict):
            out.extend(load_data([item], f"{source}: {at}", validate=problems.validation))
        else:
            problems.add(f"{source}: {at}", "must be a path or an object")
    for p in out.errors:
        problems.append(str(p))
    problems.warnings += [str(p) for p in out.warnings]
    return out.objects


def creation_problems(objs: list[LoadedObject], features: FeatureGates | None = None) -> list[str]:
    """The errors creating each object would report as ``features``' version
    (``admission.apiserver.settle_errors``: a stored pod, only in what a run reads of it),
    located as ``file:line: Kind ns/name: field: message``, so a bad manifest stops a run
    before anything is created."""
    problems = []
    stored = StoredPodChecks()
    for lo in objs:
        if isinstance(lo.obj, KubeSchedulerConfiguration):
            problems.append(
                f"{lo.source}: {lo.ref}: a KubeSchedulerConfiguration is not a cluster object: give it "
                "as a scenario's `scheduler:` or with --scheduler-config"
            )
            continue
        for e in settle_errors(lo.obj, features, stored):
            problems.append(f"{lo.where(e.field)}: {lo.ref}: {e}")
    return problems


def _asked_pods(obj: KubeObject) -> tuple[str, int] | None:
    """(field, pods): what a workload asks to run at once (replicas, or a Job's parallelism)."""
    spec = getattr(obj, "spec", None)
    for name, path in (("replicas", "spec.replicas"), ("parallelism", "spec.parallelism")):
        value = getattr(spec, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return path, value
    return None


def pod_limit_problems(
    objs: list[LoadedObject], max_pods: int | None, scenario: Scenario | None = None
) -> list[str]:
    """Workloads (and a scenario's scale steps) asking for more pods than a run may hold, with
    the field that asks: refused at once rather than after creating ``max_pods`` pods. Many
    workloads that exceed the limit only together meet the run's own guard
    (:class:`~kubespread.cluster.errors.PodLimitExceeded`)."""
    if max_pods is None:
        return []
    limit = f"more pods than the run may hold (--max-pods {max_pods:,})"
    problems = []
    asked: list[tuple[str, str, int]] = []  # (where, field, pods)
    for lo in objs:
        # located only when over the limit: finding a field's line composes its file's YAML
        if (found := _asked_pods(lo.obj)) is not None and found[1] > max_pods:
            asked.append((f"{lo.where(found[0])}: {lo.ref}", found[0], found[1]))
    if scenario is not None:
        for step in scenario.steps:
            for obj in step.objects:
                if (found := _asked_pods(obj)) is not None:
                    asked.append((f"{scenario.source}: {step.where}: {obj.ref()}", found[0], found[1]))
            replicas = step.args.get("replicas") if step.action == "scale" else None
            if isinstance(replicas, int):
                asked.append((f"{scenario.source}: {step.where}", "replicas", replicas))
    for where, path, pods in asked:
        if pods > max_pods:
            problems.append(f"{where}: {path}: Invalid value: {pods}: {limit}")
    return problems


def _profiles(
    value: Any, base: Path, problems: _Problems, source: str, features: FeatureGates | None = None
) -> dict[str, Profile] | None:
    """The scenario's ``scheduler:`` profiles as ``features``' version; without one, the
    default profiles of that version (None when no version either: the simulation's own)."""
    if value is None:
        return default_profiles(features=features) if features is not None else None
    objs = _objects(value, "scheduler", base, problems, source)
    cfgs = [lo for lo in objs if isinstance(lo.obj, KubeSchedulerConfiguration)]
    if len(cfgs) != 1 or len(objs) != 1:
        if objs or not problems:
            problems.add(f"{source}: scheduler", "must be exactly one KubeSchedulerConfiguration")
        return None
    config = cfgs[0].obj
    assert isinstance(config, KubeSchedulerConfiguration)
    try:
        return profiles_from_config(config, features=features)
    except ConfigError as e:
        for err in e.errors:
            problems.append(f"{cfgs[0].source}: {err}")
        return None


def _ref_args(
    d: dict[str, Any], where: str, problems: _Problems, *, kinds: tuple[str, ...] | None = None
) -> None:
    kind = d.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        problems.add(f"{where}.kind", f"must name a kind kubespread models, got {kind!r}")
    elif kinds is not None and kind not in kinds:
        problems.add(f"{where}.kind", f"must be one of {', '.join(kinds)}, got {kind!r}")
    if not isinstance(d.get("name"), str) or not d.get("name"):
        problems.add(f"{where}.name", "required")
    if "namespace" in d and not isinstance(d["namespace"], str):
        problems.add(f"{where}.namespace", "must be a string")


def _only(d: dict[str, Any], allowed: tuple[str, ...], where: str, problems: _Problems) -> None:
    for k in d:
        if k not in allowed:
            problems.add(f"{where}.{k}", f"unknown field (allowed: {', '.join(allowed)})")


def _node_taint(value: dict[str, Any], at: str, problems: _Problems) -> None:
    """A ``taint`` step's ``taint: {key, value, effect}`` (checked as the API server checks a
    node's taints); an ``untaint`` step's ``taint: {key, effect}`` (effect optional: every
    taint with the key); no ``taint`` on other actions."""
    action, taint = value.get("action"), value.get("taint")
    if action not in TAINT_ACTIONS:
        if "taint" in value:
            problems.add(f"{at}.taint", f"only with action {' or '.join(TAINT_ACTIONS)}")
        return
    where = f"{at}.taint"
    if not isinstance(taint, dict):
        problems.add(where, "required: a mapping such as {key: dedicated, value: gpu, effect: NoSchedule}")
        return
    allowed = ("key", "value", "effect") if action == "taint" else ("key", "effect")
    _only(taint, allowed, where, problems)
    if not all(isinstance(taint.get(k, ""), str) for k in allowed):
        problems.add(where, f"{', '.join(allowed)} must be strings")
        return
    if action == "untaint":
        if not taint.get("key"):
            problems.add(f"{where}.key", "required")
        if taint.get("effect") and taint["effect"] not in TAINT_EFFECTS:
            problems.add(
                f"{where}.effect", f"must be one of {', '.join(TAINT_EFFECTS)}, got {taint['effect']!r}"
            )
        return
    given = Taint(key=taint.get("key", ""), value=taint.get("value", ""), effect=taint.get("effect", ""))
    for e in validate_taints([given], ErrorPath("taint")):
        # "taint[0].effect: ..." → "steps[i].node.taint.effect: ..."
        text = str(e).removeprefix("taint[0]")
        problems.append(f"{where}{text}")


def _step(
    raw: Any, i: int, base: Path, problems: _Problems, source: str, features: FeatureGates | None = None
) -> Step | None:
    where = f"{source}: steps[{i}]"
    if not isinstance(raw, dict) or len(raw) != 1:
        problems.add(where, f"must be a mapping with exactly one of: {', '.join(STEP_KINDS)}")
        return None
    ((action, value),) = raw.items()
    if action not in STEP_KINDS:
        problems.add(where, f"unknown step {action!r} (one of: {', '.join(STEP_KINDS)})")
        return None
    at = f"{where}.{action}"
    step = Step(i, action)
    if action == "apply":
        loaded = _objects(value, f"steps[{i}].apply", base, problems, source)
        problems.extend(creation_problems(loaded, features))
        step.objects = [lo.obj for lo in loaded]
        return step
    if action == "advance":
        seconds = parse_duration(value)
        if seconds is None:
            problems.add(at, f"must be a duration such as 90s, 5m or 1h30m (at most 2562047h), got {value!r}")
        step.seconds = seconds or 0.0
        return step
    if not isinstance(value, dict):
        problems.add(at, "must be a mapping")
        return None
    step.args = dict(value)
    if action == "node":
        _only(value, ("name", "selector", "action", "taint"), at, problems)
        _node_taint(value, at, problems)
        if "selector" in value:
            # every node the label selector (kubectl's -l syntax) matches, in one step
            if "name" in value:
                problems.add(at, "give name or selector, not both")
            elif not isinstance(value["selector"], str) or not value["selector"].strip():
                problems.add(
                    f"{at}.selector", "must be a label selector such as topology.kubernetes.io/zone=a"
                )
            else:
                try:
                    parse_selector(value["selector"])
                except ValueError as e:
                    problems.add(f"{at}.selector", str(e))
        elif not isinstance(value.get("name"), str) or not value.get("name"):
            problems.add(f"{at}.name", "required")
        if value.get("action") not in NODE_ACTIONS:
            problems.add(
                f"{at}.action", f"must be one of {', '.join(NODE_ACTIONS)}, got {value.get('action')!r}"
            )
        return step
    if action == "evict":
        _only(value, ("pods",), at, problems)
        pods = value.get("pods")
        if not isinstance(pods, list) or not pods:
            problems.add(f"{at}.pods", "must be a non-empty list of namespace/name")
        else:
            for j, ref in enumerate(pods):
                if not isinstance(ref, str) or ref.count("/") != 1 or "" in ref.split("/"):
                    problems.add(f"{at}.pods[{j}]", f"must be namespace/name, got {ref!r}")
        return step
    if action == "scale":
        _only(value, ("kind", "namespace", "name", "replicas"), at, problems)
        _ref_args(value, at, problems, kinds=SCALABLE_KINDS)
        r = value.get("replicas")
        if not isinstance(r, int) or isinstance(r, bool) or r < 0:
            problems.add(f"{at}.replicas", f"must be a non-negative integer, got {r!r}")
    elif action == "set":
        _only(value, ("kind", "namespace", "name", "path", "value"), at, problems)
        _ref_args(value, at, problems)
        if not isinstance(value.get("path"), str) or parse_path(value["path"]) is None:
            problems.add(
                f"{at}.path", f"must be a field path such as spec.replicas, got {value.get('path')!r}"
            )
        if "value" not in value:
            problems.add(f"{at}.value", "required")
    elif action == "label":
        _only(value, ("kind", "namespace", "name", "set", "remove"), at, problems)
        _ref_args(value, at, problems)
        sets, removes = value.get("set", {}), value.get("remove", [])
        if not isinstance(sets, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in sets.items()
        ):
            problems.add(f"{at}.set", "must map label keys to string values")
        if not isinstance(removes, list) or not all(isinstance(k, str) for k in removes):
            problems.add(f"{at}.remove", "must be a list of label keys")
    elif action == "delete":
        _only(value, ("kind", "namespace", "name"), at, problems)
        _ref_args(value, at, problems)
    return step


_PATH_PART: Final = re.compile(r"([A-Za-z_][\w.-]*?)((?:\[\d+\])*)(?:\.|$)")


def parse_path(path: str) -> list[str | int] | None:
    """``spec.template.spec.containers[0].image`` → ['spec', 'template', 'spec', 'containers', 0,
    'image']; None when malformed."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PATH_PART.match(path, pos)
        if m is None or m.end() == pos:
            return None
        parts.append(m.group(1))
        parts += [int(x) for x in re.findall(r"\[(\d+)\]", m.group(2))]
        pos = m.end()
    return parts or None


def parse_scenario(
    doc: Any,
    *,
    source: str = "<scenario>",
    base: Path | None = None,
    validation: Validation = Validation.STRICT,
    features: FeatureGates | None = None,
) -> Scenario:
    """A checked Scenario from its parsed YAML; ScenarioError lists every problem.
    ``validation`` is how the manifests it holds or names are loaded (kubectl's --validate);
    ``features`` the Kubernetes version its profiles (and so its run) answer as."""
    base = base or Path.cwd()
    problems = _Problems(validation)
    if not isinstance(doc, dict):
        raise ScenarioError([f"{source}: a scenario must be a mapping"])
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != "Scenario":
        problems.add(source, f"must have apiVersion: {API_VERSION} and kind: Scenario")
    _only(doc, ("apiVersion", "kind", "metadata", "seed", "scheduler", "cluster", "steps"), source, problems)
    meta = doc.get("metadata") or {}
    name = meta.get("name", "") if isinstance(meta, dict) else ""
    seed = doc.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        problems.add(f"{source}: seed", f"must be an integer, got {seed!r}")
        seed = 0
    profiles = _profiles(doc.get("scheduler"), base, problems, source, features)
    cluster_value = doc.get("cluster") or []
    live = _live_source(cluster_value, base, problems, source)
    cluster = [] if live is not None else _objects(cluster_value, "cluster", base, problems, source)
    problems.extend(creation_problems(cluster, features))
    raw_steps = doc.get("steps") or []
    if not isinstance(raw_steps, list):
        problems.add(f"{source}: steps", "must be a list")
        raw_steps = []
    steps = [
        s
        for i, raw in enumerate(raw_steps)
        if (s := _step(raw, i, base, problems, source, features)) is not None
    ]
    if problems:
        raise ScenarioError(list(problems))
    return Scenario(str(name), seed, profiles, cluster, steps, source, problems.warnings, live)


def _live_source(value: Any, base: Path, problems: _Problems, source: str) -> LiveSource | None:
    """``cluster: {kubeconfig: ..., context: ...}`` (a mapping that is not an object: no
    apiVersion/kind), its path relative to the scenario file; None for files and objects."""
    if not isinstance(value, dict) or not ({"kubeconfig", "context"} & value.keys()):
        return None
    if "kind" in value or "apiVersion" in value:
        return None
    for key in sorted(value.keys() - {"kubeconfig", "context"}):
        problems.add(f"{source}: cluster.{key}", "unknown field: a live cluster takes kubeconfig and context")
    kubeconfig, context = value.get("kubeconfig"), value.get("context")
    path = None
    if kubeconfig is not None:
        if not isinstance(kubeconfig, str) or not kubeconfig:
            problems.add(f"{source}: cluster.kubeconfig", "must be a path")
        else:
            path = Path(kubeconfig).expanduser()
            path = path if path.is_absolute() else base / path
    if context is not None and (not isinstance(context, str) or not context):
        problems.add(f"{source}: cluster.context", "must be a context name")
        context = None
    return LiveSource(path, context)


def load_scenario(
    path: str | Path, *, validation: Validation = Validation.STRICT, features: FeatureGates | None = None
) -> Scenario:
    """Read and check a scenario file (see the module notes), as ``features``' version."""
    path = Path(path)
    try:
        text = decode_utf8(path.read_bytes())
    except OSError as e:
        raise ScenarioError([f"{path}: cannot read: {e.strerror or e}"]) from None
    except DocumentError as e:
        raise ScenarioError([f"{path}: cannot read: {e}"]) from None
    docs, error = parse_documents(text)
    if error is not None:
        message = f"{path}: {error}"
        if "flow mapping" in error.message or "flow sequence" in error.message:
            message += (
                "\nhint: inside { } and [ ], YAML forbids unquoted [ ] { } and commas in values: "
                'quote a path such as path: "spec.template.spec.containers[0].image"'
            )
        raise ScenarioError([message])
    if len(docs) > 1:
        raise ScenarioError([f"{path}: a scenario file holds one YAML document, found {len(docs)}"])
    doc = docs[0].data if docs else None
    return parse_scenario(doc, source=str(path), base=path.parent, validation=validation, features=features)
