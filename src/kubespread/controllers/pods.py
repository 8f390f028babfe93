"""What the workload controllers share: pods made from templates, owner references, which pods
count, when a pod became ready, IntOrString scaling and the pod-template hash.

One home for these so the ReplicaSet, Deployment, StatefulSet and Job controllers agree on the
meaning of "active", "ready" and "available", as kube-controller-manager's shared
``controller_utils`` and ``podutil`` make them agree.
"""

from __future__ import annotations

import bisect
import json
import math
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.defaults import canonicalize_quantities, default_pod_spec
from kubespread.admission.framework import Rejection
from kubespread.api.core import Pod, PodTemplateSpec
from kubespread.api.keys import LABEL_POD_TEMPLATE_HASH
from kubespread.api.meta import NAME_ALPHABET, KubeObject, OwnerReference
from kubespread.api.selectors import Selector, compile_label_selector
from kubespread.api.timestamps import virtual_seconds
from kubespread.cluster.events import ClusterEvent, EventType

if TYPE_CHECKING:
    from kubespread.cluster.state import ClusterState
    from kubespread.controllers.host import Controller, ControllerHost

__all__ = [
    "FollowedPods",
    "OwnedPods",
    "PodOwnerController",
    "ReadyTimes",
    "SelectorCache",
    "Wakeups",
    "controller_ref",
    "create_with_slow_start",
    "fnv32a",
    "followed_pods",
    "is_active",
    "is_available",
    "is_ready",
    "is_running_and_ready",
    "normalized_template",
    "owner_key",
    "pod_from_template",
    "safe_encode",
    "same_objects",
    "scaled_int_or_percent",
    "seeding_together",
    "spec_changed",
    "status_int",
    "template_hash",
]

_FNV_OFFSET: Final = 0x811C9DC5
_FNV_PRIME: Final = 0x01000193
#: the first batch of slowStartBatch (controller.SlowStartInitialBatchSize)
SLOW_START_INITIAL_BATCH: Final = 1


# ------------------------------------------------------------------ owners
def controller_ref(owner: KubeObject) -> OwnerReference:
    """metav1.NewControllerRef: the reference a controller stamps on what it creates."""
    return OwnerReference(
        api_version=owner.API_VERSION,
        kind=owner.KIND,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )


def owner_key(obj: KubeObject, kind: str) -> str | None:
    """The key (namespace/name) of ``obj``'s controller when it is of ``kind``."""
    ref = obj.metadata.controller_ref()
    if ref is None or ref.kind != kind:
        return None
    return f"{obj.namespace}/{ref.name}"


# ------------------------------------------------------------------ pod state
def is_active(pod: Pod) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return not pod.is_terminating and not pod.is_finished


def is_ready(pod: Pod) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    for c in pod.status.conditions:  # noqa: SIM110 (a loop is faster: asked of every pod)
        if c.type == "Ready" and c.status == "True":
            return True
    return False


def is_running_and_ready(pod: Pod) -> bool:
    return pod.status.phase == "Running" and is_ready(pod)


def _seed_ready(since: dict[str, float], pods: Iterable[Pod], at: float) -> None:
    """:meth:`ReadyTimes.seed`'s pass: each pod noted as Ready since ``at``, or not Ready."""
    for pod in pods:
        if is_ready(pod):
            since.setdefault(pod.metadata.uid, at)
        else:
            since.pop(pod.metadata.uid, None)


class ReadyTimes:
    """When each pod became Ready, the Ready condition's lastTransitionTime in Kubernetes.

    The simulation's conditions carry no times, so a controller observes them: a pod is Ready
    from the (whole) virtual second it was first seen Ready. A condition that does carry
    ``lastTransitionTime`` (a loaded manifest) wins; pods already Ready when observation began
    count as Ready since then.
    """

    def __init__(self) -> None:
        self._since: dict[str, float] = {}

    def seed(self, pods: Iterable[Pod], now: float) -> None:
        """Every pod at the start (``_note`` inline: a dump's 100,000 pods, per controller;
        under :func:`seeding_together` a first seed is the one the other controllers found)."""
        at = float(math.floor(now))
        starting = _starting()
        if starting is not None and not self._since:
            self._since = starting.ready_since(tuple(pods), at)
            return
        _seed_ready(self._since, pods, at)

    def observe(self, event: ClusterEvent, now: float) -> None:
        if event.kind != Pod.KIND:
            return
        pod: Pod = event.obj
        if event.type is EventType.DELETED:
            self._since.pop(pod.metadata.uid, None)
        elif event.type is not EventType.UNBOUND:
            self._note(pod, now)

    def _note(self, pod: Pod, now: float) -> None:
        uid = pod.metadata.uid
        if is_ready(pod):
            self._since.setdefault(uid, float(math.floor(now)))
        else:
            self._since.pop(uid, None)

    def since(self, pod: Pod) -> float | None:
        """When the pod became Ready (virtual seconds), None when it is not Ready."""
        for c in pod.status.conditions:
            if c.type == "Ready" and c.status == "True":
                stamp = (c.extra or {}).get("lastTransitionTime")
                given = virtual_seconds(stamp) if isinstance(stamp, str) else None
                return given if given is not None else self._since.get(pod.metadata.uid)
        return None


def is_available(pod: Pod, min_ready_seconds: int, now: float, ready: ReadyTimes) -> bool:
    """podutil.IsPodAvailable: Ready, and for at least minReadySeconds."""
    if not is_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready.since(pod)
    return since is not None and since + min_ready_seconds <= now


class OwnedPods:
    """Pods by the uid of their controller (of one kind), kept current from cluster events so a
    sync reads its pods without scanning the cluster. Each owner's keys are kept sorted as
    they come and go, so reading them in order costs no sort."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._by_owner: dict[str, dict[str, Pod]] = {}
        #: owner uid -> its pods' keys, sorted (the same set as ``_by_owner[uid]``)
        self._keys: dict[str, list[str]] = {}
        self._owner_of: dict[str, str] = {}

    def seed(self, pods: Iterable[Pod]) -> None:
        if self._owner_of:  # seeded before: each pod set again, as an event sets it
            for pod in pods:
                self._set(pod.key, pod)
            return
        # a first seed (the start, a dump's 100,000 pods): only the pods this kind controls
        # are set, setting the others would be a no-op
        pods = tuple(pods)
        starting = _starting()
        if starting is not None:
            seeded = starting.owned(pods, self.kind)
            if seeded is not None:  # another controller's of the same kind, from the same pods
                self._copy(seeded)
                return
            controlled: Iterable[tuple[Pod, OwnerReference]] = starting.controlled(pods, self.kind)
        else:
            controlled = _controlled_by(pods, self.kind)
        # what _set does for each pod into empty tables, with each owner's keys sorted once
        by_owner, owner_of = self._by_owner, self._owner_of
        for pod, ref in controlled:
            key = pod.key
            owner_of[key] = ref.uid
            owned = by_owner.get(ref.uid)
            if owned is None:
                by_owner[ref.uid] = {key: pod}
            else:
                owned[key] = pod
        self._keys = {uid: sorted(owned) for uid, owned in by_owner.items()}
        if starting is not None:
            starting.keep_owned(pods, OwnedPods(self.kind)._copy(self))

    def _copy(self, other: OwnedPods) -> OwnedPods:
        """This, made what ``other`` is (a copy of its own); returns itself."""
        self._by_owner = {uid: dict(owned) for uid, owned in other._by_owner.items()}
        self._keys = {uid: list(keys) for uid, keys in other._keys.items()}
        self._owner_of = dict(other._owner_of)
        return self

    def observe(self, event: ClusterEvent, cluster: ClusterState) -> None:
        if event.kind == Pod.KIND:
            key = event.obj.key
            self._set(key, cluster.pods.get(key))

    def _set(self, key: str, pod: Pod | None) -> None:
        ref = pod.metadata.controller_ref() if pod is not None else None
        owner = ref.uid if ref is not None and ref.kind == self.kind and ref.uid else None
        old_owner = self._owner_of.get(key)
        if old_owner is not None and old_owner == owner:
            self._by_owner[owner][key] = pod  # type: ignore[assignment]  # a new version, same owner
            return
        if old_owner is not None:
            del self._owner_of[key]
            owned = self._by_owner.get(old_owner)
            if owned is not None:
                owned.pop(key, None)
                keys = self._keys[old_owner]
                i = bisect.bisect_left(keys, key)
                if i < len(keys) and keys[i] == key:
                    del keys[i]
                if not owned:
                    del self._by_owner[old_owner]
                    del self._keys[old_owner]
        if pod is None or owner is None:
            return
        self._owner_of[key] = owner
        self._by_owner.setdefault(owner, {})[key] = pod
        bisect.insort(self._keys.setdefault(owner, []), key)

    def pods(self, uid: str) -> list[Pod]:
        """The pods controlled by ``uid``, by key (a deterministic order)."""
        owned = self._by_owner.get(uid)
        return [owned[k] for k in self._keys[uid]] if owned else []

    def items(self, uid: str) -> list[tuple[str, Pod]]:
        """(key, pod) of the pods controlled by ``uid``, by key."""
        owned = self._by_owner.get(uid)
        return [(k, owned[k]) for k in self._keys[uid]] if owned else []

    def unordered(self, uid: str) -> Iterable[Pod]:
        """The pods controlled by ``uid``, in no particular order (for counting)."""
        owned = self._by_owner.get(uid)
        return owned.values() if owned else ()


class _StartingPods:
    """What the controllers starting on one cluster each read of its pods (a dump's 100,000,
    by five controllers), found once: their controller references, who is Ready since when,
    and the pods by owner of one kind (the ReplicaSet and Deployment controllers' both). An
    answer is given again only for the very same pod objects in the same order (a stored pod
    is replaced, never changed in place); any other pods are read afresh."""

    def __init__(self) -> None:
        self._refs: tuple[tuple[Pod, ...], dict[str, list[tuple[Pod, OwnerReference]]]] | None = None
        self._ready: tuple[tuple[Pod, ...], float, dict[str, float]] | None = None
        self._owned: dict[str, tuple[tuple[Pod, ...], OwnedPods]] = {}
        self._followed: FollowedPods | None = None

    def followed(self, host: ControllerHost) -> FollowedPods:
        """The one :class:`FollowedPods` of the controllers starting on ``host`` now."""
        kept = self._followed
        if kept is None or kept.host is not host or kept.since != host.now:
            kept = self._followed = FollowedPods(host)
        return kept

    def owned(self, pods: tuple[Pod, ...], kind: str) -> OwnedPods | None:
        """A first :meth:`OwnedPods.seed` of ``kind`` from these pods, when one was kept."""
        kept = self._owned.get(kind)
        return kept[1] if kept is not None and same_objects(kept[0], pods) else None

    def keep_owned(self, pods: tuple[Pod, ...], seeded: OwnedPods) -> None:
        self._owned[seeded.kind] = (pods, seeded)

    def controlled(self, pods: tuple[Pod, ...], kind: str) -> list[tuple[Pod, OwnerReference]]:
        """:func:`_controlled_by` of these pods and ``kind``: the pods sorted by their
        controller's kind once for every kind asked (a dump's pods are a few kinds', and the
        controllers of the others need not pass over them)."""
        kept = self._refs
        if kept is None or not same_objects(kept[0], pods):
            kept = self._refs = (pods, _by_controller_kind(pods))
        return kept[1].get(kind, [])

    def ready_since(self, pods: tuple[Pod, ...], at: float) -> dict[str, float]:
        """A first :meth:`ReadyTimes.seed`'s ``since`` (a copy of its own)."""
        kept = self._ready
        if kept is None or kept[1] != at or not same_objects(kept[0], pods):
            since: dict[str, float] = {}
            _seed_ready(since, pods, at)
            kept = self._ready = (pods, at, since)
        return dict(kept[2])


def _by_controller_kind(pods: Iterable[Pod]) -> dict[str, list[tuple[Pod, OwnerReference]]]:
    """(pod, its controller reference) of the pods, in order, whose controller has a uid
    (those :meth:`OwnedPods._set` files under an owner), by the controller's kind."""
    by_kind: dict[str, list[tuple[Pod, OwnerReference]]] = {}
    for pod in pods:
        ref = pod.metadata.controller_ref()
        if ref is not None and ref.uid:
            of_kind = by_kind.get(ref.kind)
            if of_kind is None:
                by_kind[ref.kind] = [(pod, ref)]
            else:
                of_kind.append((pod, ref))
    return by_kind


def _controlled_by(pods: Iterable[Pod], kind: str) -> list[tuple[Pod, OwnerReference]]:
    """:func:`_by_controller_kind`'s pods of ``kind``."""
    return _by_controller_kind(pods).get(kind, [])


def same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    """The very same objects, in the same order (a stored object is replaced, never changed
    in place: the same objects are the same content)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


_seeding = threading.local()


def _starting() -> _StartingPods | None:
    starting: _StartingPods | None = getattr(_seeding, "starting", None)
    return starting


@contextmanager
def seeding_together() -> Iterator[None]:
    """A scope in which controllers start on one cluster (a Simulation's): what each seeds
    from its pods is read of them once for all (:class:`_StartingPods`), and let go after."""
    outer = _starting()
    _seeding.starting = _StartingPods()
    try:
        yield
    finally:
        _seeding.starting = outer


class FollowedPods:
    """Ready times and pods by owner (of each kind asked for) on one host's cluster, kept by one
    listener: the ReplicaSet, Deployment, Job, StatefulSet, CloneSet and WorkloadSpread
    controllers read the same facts, and each keeping its own made every pod event update
    them once per controller. The listener is subscribed before the controllers that read it,
    so each sees them already updated by the event it is handed."""

    def __init__(self, host: ControllerHost) -> None:
        self.host = host
        #: the host's time when this began following (the ready times of the pods Ready then)
        self.since = host.now
        self._ready: ReadyTimes | None = None
        self._owned: dict[str, OwnedPods] = {}
        host.cluster.subscribe(self._on_event, kinds=(Pod.KIND,))

    def ready(self) -> ReadyTimes:
        """The ready times, seeded (when first asked for) as of ``since``."""
        if self._ready is None:
            self._ready = ReadyTimes()
            self._ready.seed(self.host.cluster.pods.values(), self.since)
        return self._ready

    def owned(self, kind: str) -> OwnedPods:
        """The pods controlled by objects of ``kind``, seeded when first asked for."""
        owned = self._owned.get(kind)
        if owned is None:
            owned = self._owned[kind] = OwnedPods(kind)
            owned.seed(self.host.cluster.pods.values())
        return owned

    def _on_event(self, event: ClusterEvent) -> None:
        if event.echo:  # the pod as the UPDATED just before (or the DELETED just after) tells it
            return
        if self._ready is not None:
            self._ready.observe(event, self.host.now)
        for owned in self._owned.values():
            owned.observe(event, self.host.cluster)


def followed_pods(host: ControllerHost) -> FollowedPods:
    """The :class:`FollowedPods` a controller starting on ``host`` reads: under
    :func:`seeding_together`, the one every controller starting then shares; otherwise its own."""
    starting = _starting()
    return FollowedPods(host) if starting is None else starting.followed(host)


class PodOwnerController:
    """What controllers of their own pods share (StatefulSet, CloneSet): the pods by owner and
    their ready times kept from cluster events, and a sync of the owner on each of its pods'
    events and on its own spec changes. A subclass sets ``name`` and ``kind`` and writes ``sync``."""

    name: str
    kind: str

    def __init__(self) -> None:
        self.sim: ControllerHost | None = None
        self.pods = OwnedPods(self.kind)
        self.ready = ReadyTimes()
        self._wakeups = Wakeups()

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        followed = followed_pods(sim)
        self.pods, self.ready = followed.owned(self.kind), followed.ready()
        sim.cluster.subscribe(self._on_event, kinds=(Pod.KIND, self.kind))
        for key in sorted(sim.cluster.objects(self.kind)):
            sim.enqueue(self, key)  # type: ignore[arg-type]

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if event.kind == Pod.KIND:
            if event.echo:  # its pod's sync asked for by the UPDATED before (the DELETED after)
                return
            for pod in (event.obj, event.old):
                key = owner_key(pod, self.kind) if pod is not None else None
                if key is not None:
                    sim.enqueue(self, key)  # type: ignore[arg-type]
        elif event.kind == self.kind and spec_changed(event):
            sim.enqueue(self, event.obj.key)  # type: ignore[arg-type]


class Wakeups:
    """At most one pending timer per key, due at the earliest time asked for, that queues the
    key's sync again: how a controller waits for minReadySeconds, a backoff or a deadline."""

    def __init__(self) -> None:
        self._due: dict[str, float] = {}

    def request(
        self, sim: ControllerHost, controller: Controller, key: str, due: float, *, settle: bool = True
    ) -> None:
        pending = self._due.get(key)
        if pending is not None and sim.now < pending <= due:
            return
        self._due[key] = due

        def wake() -> None:
            if self._due.get(key) == due:
                del self._due[key]
            sim.enqueue(controller, key)

        sim.after(due - sim.now, wake, settle=settle)

    def when_available(
        self,
        sim: ControllerHost,
        controller: Controller,
        key: str,
        pods: Iterable[Pod],
        min_ready_seconds: int,
        ready: ReadyTimes,
    ) -> None:
        """Sync ``key`` again when the first of these ready pods has been ready for
        minReadySeconds: when the availableReplicas of its status changes."""
        times = [since + min_ready_seconds for p in pods if (since := ready.since(p)) is not None]
        if times:
            self.request(sim, controller, key, min(times))


# ------------------------------------------------------------------ templates
class SelectorCache:
    """Each workload's compiled ``spec.selector``, by uid, compiled again only when the
    selector object changes (an update stores a new one; the selector is immutable in the API
    for most kinds, but not for every one). A scale copies the spec and shares its selector,
    so it costs no recompilation."""

    def __init__(self) -> None:
        self._compiled: dict[str, tuple[object, Selector]] = {}

    def of(self, workload: KubeObject) -> Selector:
        given = getattr(workload, "spec").selector  # noqa: B009  (every workload kind has spec.selector)
        cached = self._compiled.get(workload.metadata.uid)
        if cached is not None and cached[0] is given:
            return cached[1]
        selector = compile_label_selector(given)
        self._compiled[workload.metadata.uid] = (given, selector)
        return selector

    def forget(self, uid: str) -> None:
        self._compiled.pop(uid, None)


#: template object id -> (the template, its manifest): a ReplicaSet's thousand pods read
#: their template's manifest once (stored templates are replaced, never changed in place)
_TEMPLATE_DICTS: dict[int, tuple[PodTemplateSpec, dict[str, Any]]] = {}


def _clone(v: Any) -> Any:
    """A manifest value's own copy: dicts and lists anew, scalars shared (a copy by ``marshal``
    was no faster over a whole run and, its strings each pod's own, took 49 MiB more at 22,000
    pods)."""
    if isinstance(v, dict):
        return {k: _clone(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clone(x) for x in v]
    return v


def _template_dict(template: PodTemplateSpec) -> dict[str, Any]:
    """``template.to_dict()``, read once per template object and copied for each pod."""
    hit = _TEMPLATE_DICTS.get(id(template))
    if hit is None or hit[0] is not template:
        if len(_TEMPLATE_DICTS) >= 1024:
            _TEMPLATE_DICTS.clear()
        hit = _TEMPLATE_DICTS[id(template)] = (template, template.to_dict())
    copied: dict[str, Any] = _clone(hit[1])
    return copied


def pod_from_template(
    template: PodTemplateSpec,
    owner: KubeObject,
    *,
    name: str = "",
    generate_name: str = "",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    spec_fields: Mapping[str, Any] | None = None,
) -> Pod:
    """controller.GetPodFromTemplate: the template's labels, annotations, finalizers and spec,
    in the owner's namespace, controlled by the owner; ``labels``/``annotations`` are added on top
    and ``spec_fields`` (hostname, subdomain) set in the spec."""
    d = _template_dict(template)
    tmeta = d.get("metadata") or {}
    meta: dict[str, Any] = {"namespace": owner.namespace}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    pod_labels = {**(tmeta.get("labels") or {}), **(labels or {})}
    pod_annotations = {**(tmeta.get("annotations") or {}), **(annotations or {})}
    if pod_labels:
        meta["labels"] = pod_labels
    if pod_annotations:
        meta["annotations"] = pod_annotations
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    meta["ownerReferences"] = [controller_ref(owner).to_dict()]
    spec = dict(d.get("spec") or {})
    spec.update(spec_fields or {})
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def normalized_template(template: PodTemplateSpec) -> dict[str, Any]:
    """The template as the API server would store it, without the pod-template-hash label:
    what two templates are compared by (EqualIgnoreHash) and hashed from."""
    t = template.copy()
    default_pod_spec(t.spec)
    canonicalize_quantities(t)
    d = t.to_dict()
    meta = dict(d.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != LABEL_POD_TEMPLATE_HASH}
    for field, value in (("labels", labels), ("annotations", meta.get("annotations") or {})):
        if value:
            meta[field] = value
        else:
            meta.pop(field, None)
    if meta:
        d["metadata"] = meta
    else:
        d.pop("metadata", None)
    return d


def fnv32a(data: bytes, h: int = _FNV_OFFSET) -> int:
    """32-bit FNV-1a (hash/fnv's New32a), continuing from ``h``."""
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each byte onto the no-vowel alphabet, so no word is ever spelt."""
    return "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in s.encode())


def template_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """controller.ComputeHash's shape: FNV-1a 32 of the template (here its canonical JSON rather
    than Go's deep-hash dump, so it is stable across runs and processes but not equal to
    Kubernetes' value), then the collisionCount as 8 little-endian bytes, the decimal of the
    sum safe-encoded: a 1-10 character label value."""
    data = json.dumps(normalized_template(template), sort_keys=True, separators=(",", ":"))
    h = fnv32a(data.encode())
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), h)
    return safe_encode(str(h))


# ------------------------------------------------------------------ numbers
def scaled_int_or_percent(value: int | str | None, total: int, *, round_up: bool, default: int = 0) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, ``"N%"`` of ``total`` rounded up or
    down; a plain numeric string is read as its int (validation refuses anything else)."""
    if value is None:
        return default
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%"):
        try:
            percent = int(text[:-1])
        except ValueError:
            return default
        scaled = percent * total / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    try:
        return int(text)
    except ValueError:
        return default


def spec_changed(event: ClusterEvent) -> bool:
    """Whether a workload event is worth a sync of the workload itself: it is new, or its spec,
    labels or annotations changed. A controller's own status write is not, or every refused
    create would be retried by the status update that reports it."""
    if event.type is EventType.ADDED:
        return True
    if event.type is not EventType.UPDATED:
        return False
    old, new = event.old, event.obj
    if old is None:
        return True
    if old.spec is not new.spec and getattr(old.spec, "replicas", None) != getattr(
        new.spec, "replicas", None
    ):
        return True  # a scale: no need to compare the rest
    return (
        (old.spec is not new.spec and old.spec.to_dict() != new.spec.to_dict())
        or old.metadata.labels != new.metadata.labels
        or old.metadata.annotations != new.metadata.annotations
    )


def status_int(obj: KubeObject, field: str) -> int:
    """An integer status field of a workload whose status is a plain dict (0 when absent)."""
    status = getattr(obj, "status", None)
    if type(status) is dict or isinstance(status, Mapping):  # (a dict's check is the fast one)
        value = status.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


# ------------------------------------------------------------------ creating
def create_with_slow_start(
    sim: ControllerHost,
    pods: list[Pod],
    *,
    on_created: Callable[[Pod], None],
    on_failed: Callable[[Pod, Rejection], None],
) -> int:
    """slowStartBatch: create in batches of 1, 2, 4, ... and stop after a batch with a failure,
    so a refused template costs one attempt, not one per replica. ``on_created(pod)`` and
    ``on_failed(pod, rejection)`` record the events; returns how many were created."""
    created = 0
    remaining = list(pods)
    batch = SLOW_START_INITIAL_BATCH
    while remaining:
        now, remaining = remaining[:batch], remaining[batch:]
        failed = False
        for pod in now:
            outcome = sim.create(pod)
            if isinstance(outcome, Rejection):
                failed = True
                on_failed(pod, outcome)
            else:
                created += 1
                on_created(pod)  # the API server stored it as given (defaulted in place)
        if failed:
            break
        batch *= 2
    return created
