"""What the WorkloadSpread webhook and controller agree on: which workload a pod belongs to,
a subset's bound, the annotation that ties a pod to its subset, how a subset is injected into
a pod, and which subset an unmarked running pod falls in.

Pure functions over the cluster's objects: no writes, no clock.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, NoReturn

from kubespread.admission.framework import go_quote
from kubespread.api.apps import Deployment, Job, ReplicaSet, StatefulSet
from kubespread.api.core import Affinity, Node, NodeAffinity, Pod
from kubespread.api.errors import DecodeError
from kubespread.api.keys import ANNOTATION_WORKLOADSPREAD
from kubespread.api.kruise import CloneSet, TargetReference, WorkloadSpread, WorkloadSpreadSubset
from kubespread.api.meta import KubeObject, OwnerReference
from kubespread.api.patch import PatchError, strategic_merge_patch
from kubespread.api.selectors import (
    NodeSelector,
    compile_label_selector,
    node_selector_matches,
    node_selector_term_matches,
)
from kubespread.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated
from kubespread.cluster.state import ClusterState
from kubespread.controllers.pods import scaled_int_or_percent

__all__ = [
    "WORKLOAD_KINDS",
    "Matched",
    "MissingOwner",
    "group_of",
    "inject",
    "matched_subset",
    "owner_chain_reaches",
    "pod_selected",
    "reference_equal",
    "subset_max",
    "subset_node_score",
    "workload_of",
    "workload_replicas",
    "workload_spreads_in",
]

#: (group, kind) of the workloads a WorkloadSpread may target; pods reach them through these
WORKLOAD_KINDS: Final = {
    ("apps", "Deployment"): Deployment,
    ("apps", "ReplicaSet"): ReplicaSet,
    ("apps", "StatefulSet"): StatefulSet,
    ("batch", "Job"): Job,
    ("apps.kruise.io", "CloneSet"): CloneSet,
}


def group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


# ------------------------------------------------------------------ the pod's annotation
@dataclass(frozen=True)
class Matched:
    """The ``apps.kruise.io/matched-workloadspread`` annotation: ``{"name", "subset", "uid"}``
    (uid only when the webhook saw a pod without a name)."""

    name: str
    subset: str
    uid: str = ""

    def to_json(self) -> str:
        d = {"name": self.name, "subset": self.subset}
        if self.uid:
            d["uid"] = self.uid
        return json.dumps(d, separators=(",", ":"))


def matched_subset(pod: KubeObject) -> Matched | None:
    """The pod's annotation, or None when absent or unreadable (as Kruise ignores it then)."""
    text = pod.metadata.annotations.get(ANNOTATION_WORKLOADSPREAD)
    return _parse_matched(text) if text else None


class _Members(list[tuple[str, object]]):
    """A JSON object's members in document order (duplicates kept), told apart from an array."""


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")  # Python's json takes NaN and Infinity; Go's does not


#: the non-ASCII runes whose simple case-fold orbit holds an ASCII letter, and the rune Go folds
#: them to (the orbit's smallest): U+017F (long s) is folded as "S", U+212A (Kelvin sign) as "K"
_FOLD_TO_ASCII: Final = {"\u017f": "S", "\u212a": "K"}


def _go_fold(name: str) -> str:
    """encoding/json's foldName, as far as it can make a name equal an ASCII field name: ASCII
    letters upper-cased, the two non-ASCII runes whose fold orbit holds an ASCII letter mapped to
    it, anything else kept (it equals no ASCII name however it folds)."""
    return "".join(_FOLD_TO_ASCII.get(c, c.upper() if c.isascii() else c) for c in name)


#: InjectWorkloadSpread's fields by their folded JSON names
_MATCHED_FIELDS: Final = {_go_fold(f): f for f in ("name", "subset", "uid")}


def _go_string(s: str) -> str:
    """Go decodes a lone surrogate escape (``"\\ud800"``) as U+FFFD; Python keeps it."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in s)


@functools.lru_cache(maxsize=4096)
def _parse_matched(text: str) -> Matched | None:
    """json.Unmarshal into Kruise's InjectWorkloadSpread: an object whose member names match
    ``name``, ``subset`` and ``uid`` case-insensitively (Go's folding), the last of duplicates
    winning, unknown members ignored, null leaving a field empty. None for text that is not
    JSON, a value that is not an object (``null`` included: Kruise's deletion path reads it as
    no annotation), or a field that is not a string (Go reports the type error and Kruise drops
    the annotation). Cached: every pod of a subset carries the same few annotation texts."""
    try:
        doc = json.loads(text, object_pairs_hook=_Members, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # Go gives up nesting deeper than 10000, Python sooner
        return None
    if not isinstance(doc, _Members):
        return None
    fields = {"name": "", "subset": "", "uid": ""}
    for key, value in doc:
        name = _MATCHED_FIELDS.get(_go_fold(key))
        if name is None or value is None:
            continue
        if not isinstance(value, str):
            return None
        fields[name] = _go_string(value)
    return Matched(fields["name"], fields["subset"], fields["uid"])


# ------------------------------------------------------------------ workloads
def _same_target(target: TargetReference, group: str, kind: str, name: str) -> bool:
    return group_of(target.api_version) == group and target.kind == kind and target.name == name


@dataclass(frozen=True)
class MissingOwner:
    """An owner on a pod's chain that is of a kind a WorkloadSpread can target but does not exist:
    Kruise's webhook gets NotFound reading it and refuses the pod."""

    api_version: str
    kind: str
    name: str

    @property
    def message(self) -> str:
        """controller-runtime's cache NotFound: the kind (as resource) and group, then the name."""
        group = group_of(self.api_version)
        resource = f"{self.kind}.{group}" if group else self.kind
        return f"{resource} {go_quote(self.name)} not found"


def _walk(
    target: TargetReference,
    ref: OwnerReference | None,
    namespace: str,
    get: Callable[[str, str], KubeObject | None],
    *,
    match_uid: bool,
) -> bool | MissingOwner:
    for _ in range(4):  # pod → ReplicaSet → Deployment is the longest chain there is
        if ref is None:
            return False
        group = group_of(ref.api_version)
        if _same_target(target, group, ref.kind, ref.name):
            return True
        if (group, ref.kind) not in WORKLOAD_KINDS:
            return False
        owner = get(ref.kind, f"{namespace}/{ref.name}")
        if owner is None:
            return MissingOwner(ref.api_version, ref.kind, ref.name)
        if match_uid and ref.uid and owner.metadata.uid != ref.uid:
            return False
        ref = owner.metadata.controller_ref()
    return False


def owner_chain_reaches(
    target: TargetReference,
    ref: OwnerReference | None,
    namespace: str,
    get: Callable[[str, str], KubeObject | None],
) -> bool:
    """The controller's reading: the controller ``ref`` is the target, or controls something (a
    Deployment's ReplicaSet) that reaches it, each owner being the object of that uid; a missing
    owner reaches nothing. ``get(kind, key)`` reads the cluster."""
    return _walk(target, ref, namespace, get, match_uid=True) is True


def reference_equal(
    target: TargetReference,
    ref: OwnerReference | None,
    namespace: str,
    get: Callable[[str, str], KubeObject | None],
) -> bool | MissingOwner:
    """isReferenceEqual as Kruise's pod webhook runs it: owners are read by name (the uid is not
    compared), and an owner of a targetable kind that is not the target and does not exist is
    returned as a :class:`MissingOwner` (not a bool: test it with ``is True``). Owners of other
    kinds end the chain, as do Advanced StatefulSets, which kubespread cannot read (Kruise
    would)."""
    return _walk(target, ref, namespace, get, match_uid=False)


def workload_spreads_in(cluster: ClusterState, namespace: str) -> list[WorkloadSpread]:
    """The WorkloadSpreads of a namespace, by name (the order the webhook tries them in)."""
    spreads = [
        ws
        for ws in cluster.objects(WorkloadSpread.KIND).values()
        if isinstance(ws, WorkloadSpread) and ws.namespace == namespace
    ]
    return sorted(spreads, key=lambda ws: ws.metadata.name)


def workload_of(ws: WorkloadSpread, get: Callable[[str, str], KubeObject | None]) -> KubeObject | None:
    """The workload the WorkloadSpread targets, if it exists and is of a kind it can target."""
    target = ws.spec.target_ref
    if target is None:
        return None
    cls = WORKLOAD_KINDS.get((group_of(target.api_version), target.kind))
    if cls is None:
        return None
    obj = get(target.kind, f"{ws.namespace}/{target.name}")
    return obj if isinstance(obj, cls) else None


def pod_selected(ws: WorkloadSpread, pod: Pod) -> bool:
    """IsPodSelected: whether the WorkloadSpread manages the pod (its targetFilter's selector
    matches the pod's labels; no filter or no selector: every pod of the target)."""
    tf = ws.spec.target_filter
    if tf is None or tf.selector is None:
        return True
    return compile_label_selector(tf.selector).matches(pod.metadata.labels)


def _replicas_at(doc: object, path: str) -> int:
    """The integer at a dot path of the workload as JSON (a number indexes a list); 0 when the
    path leads nowhere or not to an integer (Kruise's controller fails the sync and retries)."""
    node = doc
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return 0
    return node if isinstance(node, int) and not isinstance(node, bool) else 0


def workload_replicas(workload: KubeObject | None, ws: WorkloadSpread | None = None) -> int:
    """What percentages are of: spec.replicas (a Job's parallelism), 1 when unset, as the
    API server defaults them; 0 for no workload. A targetFilter's replicasPathList replaces
    it: the sum of the integers at those paths (GetReplicasFromWorkloadWithTargetFilter)."""
    if workload is None:
        return 0
    tf = ws.spec.target_filter if ws is not None else None
    if tf is not None and tf.replicas_path_list:
        doc = workload.to_dict()
        return sum(_replicas_at(doc, path) for path in tf.replicas_path_list)
    spec = workload.spec  # type: ignore[attr-defined]
    value = spec.parallelism if isinstance(workload, Job) else spec.replicas
    return 1 if value is None else int(value)


def subset_max(subset: WorkloadSpreadSubset, replicas: int) -> int | None:
    """The subset's bound in pods (a percentage of ``replicas`` rounded up); None: unbounded."""
    if subset.max_replicas is None:
        return None
    return max(scaled_int_or_percent(subset.max_replicas, replicas, round_up=True), 0)


# ------------------------------------------------------------------ injection
def inject(pod: Pod, ws: WorkloadSpread, subset: WorkloadSpreadSubset, uid: str = "") -> Pod:
    """The pod with the subset's rules in it (webhook's injectWorkloadSpreadIntoPod): tolerations
    appended, preferred terms appended, the required term ANDed into every required term (or
    the only term), the patch applied as a strategic merge, the annotation set. ``pod`` is not
    changed. Raises PatchError when the patch does not apply to this pod."""
    out = pod.copy()
    spec = out.spec
    spec.tolerations = [*spec.tolerations, *(t.copy() for t in subset.tolerations)]
    if spec.affinity is None:
        spec.affinity = Affinity()
    if spec.affinity.node_affinity is None:
        spec.affinity.node_affinity = NodeAffinity()
    na = spec.affinity.node_affinity
    if subset.preferred_node_selector_terms:
        na.preferred_during_scheduling_ignored_during_execution = [
            *na.preferred_during_scheduling_ignored_during_execution,
            *(t.copy() for t in subset.preferred_node_selector_terms),
        ]
    term = subset.required_node_selector_term
    if term is not None:
        if na.required_during_scheduling_ignored_during_execution is None:
            na.required_during_scheduling_ignored_during_execution = NodeSelector()
        required = na.required_during_scheduling_ignored_during_execution
        if not required.node_selector_terms:
            required.node_selector_terms = [term.copy()]
        else:
            for t in required.node_selector_terms:
                t.match_expressions = [*t.match_expressions, *(r.copy() for r in term.match_expressions)]
                t.match_fields = [*t.match_fields, *(r.copy() for r in term.match_fields)]
    if isinstance(subset.patch, dict) and subset.patch:
        out = _patched(out, subset.patch)
    out.metadata.annotations = {
        **out.metadata.annotations,
        ANNOTATION_WORKLOADSPREAD: Matched(ws.metadata.name, subset.name, uid).to_json(),
    }
    return out


def _patched(pod: Pod, patch: dict) -> Pod:
    merged = strategic_merge_patch(pod.to_dict(), patch)
    try:
        out = Pod.from_dict(merged)
    except DecodeError as e:
        raise PatchError(f"the patched pod cannot be read: {e}") from e
    if out.spec.priority_class_name != pod.spec.priority_class_name:
        out.spec.priority = None  # admission resolved the old class; the new one is not checked
    return out


# ------------------------------------------------------------------ pods already running
def subset_node_score(pod: Pod, node: Node, subset: WorkloadSpreadSubset, missing: int) -> int | None:
    """matchesSubset: None when the pod on ``node`` cannot belong to the subset (a taint neither
    it nor the subset tolerates, or the subset's required term ANDed into the pod's terms does not
    match); otherwise a preference: preferred-term weight x100, +10 when the subset's patch
    would change nothing, +1 when the subset still misses pods."""
    untolerated = find_untolerated(
        node.spec.taints, [*pod.spec.tolerations, *subset.tolerations], (NO_SCHEDULE, NO_EXECUTE)
    )
    if untolerated is not None:
        return None
    labels, name = node.metadata.labels, node.metadata.name
    term = subset.required_node_selector_term
    if term is not None:
        aff = pod.spec.affinity
        na = aff.node_affinity if aff is not None else None
        own = na.required_during_scheduling_ignored_during_execution if na is not None else None
        if own is not None and own.node_selector_terms:
            combined = own.copy()
            for t in combined.node_selector_terms:
                t.match_expressions = [*t.match_expressions, *term.match_expressions]
                t.match_fields = [*t.match_fields, *term.match_fields]
            if not node_selector_matches(combined, labels, name):
                return None
        elif not node_selector_term_matches(term, labels, name):
            return None
    score = 100 * sum(
        t.weight
        for t in subset.preferred_node_selector_terms
        if node_selector_term_matches(t.preference, labels, name)
    )
    if isinstance(subset.patch, dict) and subset.patch and _patch_changes_nothing(pod, subset.patch):
        score += 10
    if missing > 0:
        score += 1
    return score


def _patch_changes_nothing(pod: Pod, patch: dict) -> bool:
    try:
        patched = _patched(pod, patch)
    except PatchError:
        return False
    patched.metadata.annotations = pod.metadata.annotations
    return patched.to_dict() == pod.to_dict()
