"""The ReplicaSet controller: keep ``spec.replicas`` active pods, choosing scale-down victims
the way kube-controller-manager v1.35 does.

A sync counts the ReplicaSet's active pods (controlled by it through an ownerReference and
still matching its selector; nothing is adopted), creates the missing ones from the template in
slow-start batches, or deletes the surplus ranked by :func:`deletion_order` (controller_utils'
ActivePodsWithRanks with LogarithmicScaleDown and PodDeletionCost on, as they are by default).
The simulation's state is never stale, so the real controller's expectations are not needed.
"""

from __future__ import annotations

import bisect
import copy
import functools
import heapq
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.apps import ReplicaSet
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.timestamps import virtual_seconds
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import (
    OwnedPods,
    ReadyTimes,
    SelectorCache,
    Wakeups,
    create_with_slow_start,
    is_active,
    is_available,
    is_ready,
    owner_key,
    pod_from_template,
    spec_changed,
)

if TYPE_CHECKING:
    from kubespread.controllers.host import ControllerHost

__all__ = ["ReplicaSetController", "deletion_cost", "deletion_order"]

_PHASE_ORDINAL: Final = {"Pending": 0, "Unknown": 1, "Running": 2}
_INT_RE: Final = re.compile(r"[+-]?[0-9]+")


def deletion_cost(pod: Pod) -> int:
    """The controller.kubernetes.io/pod-deletion-cost annotation: an int32, 0 when absent or invalid."""
    value = pod.metadata.annotations.get(ANNOTATION_POD_DELETION_COST)
    if value is None or not _INT_RE.fullmatch(value):
        return 0
    cost = int(value)
    return cost if -(2**31) <= cost < 2**31 else 0


def _max_restarts(pod: Pod) -> tuple[int, int]:
    """(regular, sidecar) highest restartCount from the pod's container statuses, when it has any."""
    extra = pod.status.extra or {}
    sidecars = {c.name for c in pod.spec.init_containers if c.is_sidecar}

    def most(statuses: Any, only: set[str] | None) -> int:
        best = 0
        for s in statuses if isinstance(statuses, list) else ():
            if isinstance(s, dict) and (only is None or s.get("name") in only):
                count = s.get("restartCount")
                if isinstance(count, int):
                    best = max(best, count)
        return best

    return most(extra.get("containerStatuses"), None), most(extra.get("initContainerStatuses"), sidecars)


def _log_rank(t: float | None, now: float) -> int:
    """floor(log2(now - t)) with the difference in nanoseconds, -1 when not positive."""
    if t is None:
        return -1
    d = round((now - t) * 1e9)
    return int(math.log2(d)) if d > 0 else -1


@dataclass(slots=True)
class _Facts:
    """What ActivePodsWithRanks looks at, read once per pod rather than at every comparison."""

    assigned: bool
    phase: int
    ready: bool
    cost: int
    rank: int
    ready_since: float | None
    ready_bucket: int
    restarts: tuple[int, int]
    created: float | None
    created_bucket: int
    uid: str
    name: str


def _newer_first(
    t1: float | None, t2: float | None, bucket1: int, bucket2: int, uid1: str, uid2: str
) -> bool:
    """The logarithmic comparison (LogarithmicScaleDown): a missing time counts as the newest;
    times in the same power-of-two age bucket tie, broken by uid."""
    if t1 is None or t2 is None:
        return t1 is None
    if bucket1 == bucket2:
        return uid1 < uid2
    return bucket1 < bucket2


def _less(a: _Facts, b: _Facts) -> bool:
    """ActivePodsWithRanks.Less: whether ``a`` is the better pod to delete."""
    if a.assigned != b.assigned:
        return not a.assigned
    if a.phase != b.phase:
        return a.phase < b.phase
    if a.ready != b.ready:
        return not a.ready
    if a.cost != b.cost:
        return a.cost < b.cost
    if a.rank != b.rank:
        return a.rank > b.rank
    if a.ready and b.ready and a.ready_since != b.ready_since:
        return _newer_first(a.ready_since, b.ready_since, a.ready_bucket, b.ready_bucket, a.uid, b.uid)
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    if a.created != b.created:
        return _newer_first(a.created, b.created, a.created_bucket, b.created_bucket, a.uid, b.uid)
    return False


@dataclass(slots=True, frozen=True)
class _Later:
    """What ranking reads of one pod object (criteria 1-4 and 6-8, its node, the name), read
    once per object: a stored pod is replaced, never changed in place."""

    active: bool
    assigned: bool
    phase: int
    ready: bool
    cost: int
    node: str
    ready_since: float | None
    restarts: tuple[int, int]
    created: float | None
    uid: str
    name: str
    #: criteria 6-8's facts: pods equal on them compare by name alone
    same: tuple[bool, float | None, tuple[int, int], float | None]


def _later_facts(p: Pod, ready: ReadyTimes, cache: dict[str, tuple[Pod, _Later]]) -> _Later:
    key = p.metadata.uid  # (cheaper than p.key; the pod object itself is checked)
    hit = cache.get(key)
    if hit is not None and hit[0] is p:
        return hit[1]
    is_r, since, restarts = is_ready(p), ready.since(p), _max_restarts(p)
    created = virtual_seconds(p.metadata.creation_timestamp)
    facts = _Later(
        active=is_active(p),
        assigned=bool(p.spec.node_name),
        phase=_PHASE_ORDINAL.get(p.status.phase, 0),
        ready=is_r,
        cost=deletion_cost(p),
        node=p.spec.node_name,
        ready_since=since,
        restarts=restarts,
        created=created,
        uid=p.metadata.uid,
        name=p.metadata.name,
        same=(is_r, since, restarts, created),
    )
    cache[key] = (p, facts)
    return facts


def _one_victim(
    pods: Sequence[Pod],
    related: Sequence[Pod],
    now: float,
    ready: ReadyTimes,
    use_cost: bool,
    cache: dict[str, tuple[Pod, _Later]],
) -> Pod:
    """``heapq.nsmallest(1, ...)`` of :func:`deletion_order`, which is min(): the first pod no
    later pod is less than. Criteria 1-5 are plain comparisons, so only the pods with the least
    (assigned, phase, ready, cost, -rank) can win, and among them min() meets the same
    comparisons in the same order (:func:`_least`)."""
    get = cache.get  # (_later_facts inlined: these loops run over every pod at each deletion)
    on_node: dict[str, int] = {}
    for p in related:
        hit = get(p.metadata.uid)
        f = hit[1] if hit is not None and hit[0] is p else _later_facts(p, ready, cache)
        if f.active:
            on_node[f.node] = on_node.get(f.node, 0) + 1
    least: tuple[bool, int, bool, int, int] | None = None
    group: list[tuple[Pod, _Later]] = []
    for p in pods:
        hit = get(p.metadata.uid)
        f = hit[1] if hit is not None and hit[0] is p else _later_facts(p, ready, cache)
        k = (f.assigned, f.phase, f.ready, f.cost if use_cost else 0, -on_node.get(f.node, 0))
        if least is None or k < least:
            least, group = k, [(p, f)]
        elif k == least:
            group.append((p, f))
    return _least(group, now)


def _least(group: list[tuple[Pod, _Later]], now: float) -> Pod:
    """min() over pods equal on criteria 1-5 (see :func:`deletion_order`): the first pod that
    no later one is less than, with :func:`_less`'s comparisons from criterion 6 on."""
    same = group[0][1].same
    if all(f.same == same for _, f in group):
        # equal on 6-8 (a rollout's old pods, created and ready together): every comparison
        # falls through to the name
        return min(group, key=lambda pf: pf[1].name)[0]
    buckets: dict[float, int] = {}

    def bucket(t: float) -> int:
        b = buckets.get(t)
        if b is None:
            b = buckets[t] = _log_rank(t, now)
        return b

    def newer_first(t1: float | None, t2: float | None, uid1: str, uid2: str) -> bool:
        if t1 is None or t2 is None:
            return t1 is None
        return _newer_first(t1, t2, bucket(t1), bucket(t2), uid1, uid2)

    def less(a: _Later, b: _Later) -> bool:
        if a.ready and b.ready and a.ready_since != b.ready_since:
            return newer_first(a.ready_since, b.ready_since, a.uid, b.uid)
        if a.restarts != b.restarts:
            return a.restarts > b.restarts
        if a.created != b.created:
            return newer_first(a.created, b.created, a.uid, b.uid)
        return False

    best, bf = group[0]
    for p, f in group[1:]:
        if less(f, bf) or (not less(bf, f) and f.name < bf.name):
            best, bf = p, f
    return best


def deletion_order(
    pods: Sequence[Pod],
    related: Sequence[Pod],
    now: float,
    ready: ReadyTimes | None = None,
    *,
    first: int | None = None,
    use_cost: bool = True,
    cache: dict[str, tuple[Pod, _Later]] | None = None,
) -> list[Pod]:
    """``pods`` ordered the way ActivePodsWithRanks sorts them, first deleted first:

    1. unassigned before assigned; 2. Pending < Unknown < Running; 3. not ready before ready;
    4. lower pod-deletion-cost first; 5. more active ``related`` pods on the same node first
    (doubled up); 6. when both are ready, more recently ready first; 7. more container restarts
    first; 8. newer creation first. 6 and 8 compare ages on a log2 scale (LogarithmicScaleDown),
    ties within a bucket broken by uid. Pods equal on all of these go by name. ``first``: only
    that many from the front (what getPodsToDelete keeps of the sorted list). ``use_cost=False``
    leaves 4 out: the order of controller.ActivePods, which the WorkloadSpread controller ranks
    pods by when it decides their deletion cost. ``cache``: a caller's memory of
    :class:`_Later` per pod uid (the pod object it was read from kept with it), across calls.
    """
    ready = ready if ready is not None else ReadyTimes()
    if first == 1 and pods:
        # one pod to delete (a Deployment's rollout scales its old ReplicaSet down one at a time)
        return [_one_victim(pods, related, now, ready, use_cost, cache if cache is not None else {})]
    on_node: dict[str, int] = {}
    for p in related:
        if is_active(p):
            on_node[p.spec.node_name] = on_node.get(p.spec.node_name, 0) + 1
    facts: dict[str, _Facts] = {}
    for p in pods:
        since = ready.since(p)
        created = virtual_seconds(p.metadata.creation_timestamp)
        facts[p.key] = _Facts(
            assigned=bool(p.spec.node_name),
            phase=_PHASE_ORDINAL.get(p.status.phase, 0),
            ready=is_ready(p),
            cost=deletion_cost(p) if use_cost else 0,
            rank=on_node.get(p.spec.node_name, 0),
            ready_since=since,
            ready_bucket=_log_rank(since, now),
            restarts=_max_restarts(p),
            created=created,
            created_bucket=_log_rank(created, now),
            uid=p.metadata.uid,
            name=p.metadata.name,
        )

    def compare(a: Pod, b: Pod) -> int:
        fa, fb = facts[a.key], facts[b.key]
        if _less(fa, fb):
            return -1
        if _less(fb, fa):
            return 1
        return (fa.name > fb.name) - (fa.name < fb.name)

    key = functools.cmp_to_key(compare)
    if first is not None:
        return heapq.nsmallest(first, pods, key=key)
    return sorted(pods, key=key)


class ReplicaSetController:
    """kube-controller-manager's replicaset controller (syncReplicaSet / manageReplicas).

    Every pod event leads to a sync of its ReplicaSet, so the claimed pods' counts (active,
    ready, fully labelled) are kept per ReplicaSet as the events arrive: a sync with nothing to
    do costs no scan of the ReplicaSet's pods.
    """

    name = "replicaset"

    def __init__(self) -> None:
        self.sim: ControllerHost | None = None
        self.pods = OwnedPods(ReplicaSet.KIND)
        self.ready = ReadyTimes()
        self._wakeups = Wakeups()
        #: claimed pod key -> (ReplicaSet uid, active, ready, fully labelled)
        self._claims: dict[str, tuple[str, bool, bool, bool]] = {}
        #: ReplicaSet uid -> [active, ready, fully labelled] over its claimed pods
        self._counts: dict[str, list[int]] = {}
        #: ReplicaSet uid -> the keys of its active claimed pods, sorted
        self._active_keys: dict[str, list[str]] = {}
        self._selectors = SelectorCache()
        #: deletion_order's facts per pod, across syncs
        self._later: dict[str, tuple[Pod, _Later]] = {}

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        self.pods.seed(sim.cluster.pods.values())
        self.ready.seed(sim.cluster.pods.values(), sim.now)
        for key in sorted(sim.cluster.pods):
            self._claim(key)
        sim.cluster.subscribe(self._on_event)
        for key in sorted(sim.cluster.objects(ReplicaSet.KIND)):
            sim.enqueue(self, key)

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if event.kind == Pod.KIND:
            self.pods.observe(event, sim.cluster)
            self.ready.observe(event, sim.now)
            self._claim(event.obj.key)
            if event.type is EventType.DELETED:
                self._later.pop(event.obj.metadata.uid, None)
            for pod in (event.obj, event.old):
                key = owner_key(pod, ReplicaSet.KIND) if pod is not None else None
                if key is not None:
                    sim.enqueue(self, key)
        elif event.kind == ReplicaSet.KIND and spec_changed(event):
            rs, old = event.obj, event.old
            if (
                old is None
                or old.spec.selector != rs.spec.selector
                or old.spec.template.metadata.labels != rs.spec.template.metadata.labels
            ):
                for pod in self.pods.pods(rs.metadata.uid):
                    self._claim(pod.key)
            sim.enqueue(self, rs.key)

    # ------------------------------------------------------------------ claims
    def _claim(self, key: str) -> None:
        """Recount one pod: claimed when a live ReplicaSet controls it and still selects it."""
        sim = self.sim
        assert sim is not None
        old = self._claims.pop(key, None)
        if old is not None:
            counts = self._counts[old[0]]
            counts[0] -= old[1]
            counts[1] -= old[2]
            counts[2] -= old[3]
            if old[1]:
                keys = self._active_keys[old[0]]
                del keys[bisect.bisect_left(keys, key)]
        pod = sim.cluster.pods.get(key)
        ref = pod.metadata.controller_ref() if pod is not None else None
        if pod is None or ref is None or ref.kind != ReplicaSet.KIND:
            return
        rs = sim.cluster.get(ReplicaSet.KIND, f"{pod.namespace}/{ref.name}")
        if not isinstance(rs, ReplicaSet) or rs.metadata.uid != ref.uid:
            return
        labels = pod.metadata.labels
        if not self._selectors.of(rs).matches(labels):
            return
        active = is_active(pod)
        template_labels = rs.spec.template.metadata.labels
        fully = active and all(labels.get(k) == v for k, v in template_labels.items())
        facts = (ref.uid, active, active and is_ready(pod), fully)
        self._claims[key] = facts
        counts = self._counts.setdefault(ref.uid, [0, 0, 0])
        counts[0] += facts[1]
        counts[1] += facts[2]
        counts[2] += facts[3]
        if active:
            bisect.insort(self._active_keys.setdefault(ref.uid, []), key)

    def _claimed(self, rs: ReplicaSet) -> list[Pod]:
        """Pods this ReplicaSet controls that its selector still selects (nothing is adopted)."""
        claims = self._claims
        return [p for k, p in self.pods.items(rs.metadata.uid) if k in claims]

    def _active_claimed(self, rs: ReplicaSet) -> list[Pod]:
        """The claimed pods that are active, by key (kept as the claims change)."""
        sim = self.sim
        assert sim is not None
        pods = sim.cluster.pods
        return [pods[k] for k in self._active_keys.get(rs.metadata.uid, ())]

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        rs = sim.cluster.get(ReplicaSet.KIND, key)
        if not isinstance(rs, ReplicaSet) or rs.metadata.deletion_timestamp:
            return
        active = self._counts.get(rs.metadata.uid, [0, 0, 0])[0]
        want = rs.spec.replicas if rs.spec.replicas is not None else 1
        diff = active - want
        if diff < 0:
            self._create(rs, -diff)
        elif diff > 0:
            self._delete(rs, self._active_claimed(rs), diff)
        self._update_status(rs.key)

    def _create(self, rs: ReplicaSet, count: int) -> None:
        sim = self.sim
        assert sim is not None
        pods = [
            pod_from_template(rs.spec.template, rs, generate_name=f"{rs.metadata.name}-")
            for _ in range(count)
        ]

        def created(pod: Pod) -> None:
            sim.record(rs, "SuccessfulCreate", f"Created pod: {pod.metadata.name}")

        def failed(pod: Pod, rejection: Rejection) -> None:
            sim.record(rs, "FailedCreate", f"Error creating: {rejection.message}", type="Warning")

        create_with_slow_start(sim, pods, on_created=created, on_failed=failed)

    def _related(self, rs: ReplicaSet) -> list[Pod]:
        """getIndirectlyRelatedPods: the pods of every ReplicaSet under the same controller."""
        sim = self.sim
        assert sim is not None
        ref = rs.metadata.controller_ref()
        if ref is None:
            return self.pods.pods(rs.metadata.uid)
        namespace = rs.metadata.namespace
        related: list[Pod] = []
        for other in sim.cluster.objects(ReplicaSet.KIND).values():
            other_ref = other.metadata.controller_ref()
            if other.metadata.namespace == namespace and other_ref is not None and other_ref.uid == ref.uid:
                related.extend(self.pods.unordered(other.metadata.uid))  # counted per node only
        return related

    def _delete(self, rs: ReplicaSet, active: list[Pod], count: int) -> None:
        sim = self.sim
        assert sim is not None
        if count < len(active):
            victims = deletion_order(
                active, self._related(rs), sim.now, self.ready, first=count, cache=self._later
            )
        else:
            victims = active
        for pod in victims:
            sim.delete(Pod.KIND, pod.key)
            sim.record(rs, "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")

    def _update_status(self, key: str) -> None:
        """calculateStatus; written only when it changed, so a status write does not loop."""
        sim = self.sim
        assert sim is not None
        rs = sim.cluster.get(ReplicaSet.KIND, key)
        if not isinstance(rs, ReplicaSet):
            return
        active, ready, fully_labeled = self._counts.get(rs.metadata.uid, [0, 0, 0])
        available = ready
        min_ready = rs.spec.min_ready_seconds
        if min_ready > 0 and ready:
            waiting = [
                p
                for p in self._claimed(rs)
                if is_active(p) and is_ready(p) and not is_available(p, min_ready, sim.now, self.ready)
            ]
            available -= len(waiting)
            self._wakeups.when_available(sim, self, key, waiting, min_ready, self.ready)
        status = {
            "replicas": active,
            "fullyLabeledReplicas": fully_labeled,
            "readyReplicas": ready,
            "availableReplicas": available,
            "observedGeneration": rs.metadata.generation,
        }
        if rs.status != status:
            updated = copy.copy(rs)  # only the status changes: share the rest
            updated.status = status
            sim.update(updated)
