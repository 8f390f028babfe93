"""Kube's ranking of a ReplicaSet's pods for deletion (controller_utils' ActivePodsWithRanks,
with LogarithmicScaleDown and PodDeletionCost on, as they are by default): the order itself
(:func:`deletion_order`), and :class:`VictimRanking`, which keeps one ReplicaSet's pods
ranked between syncs so a one-pod scale-down does not rank them all again.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubespread.api.core import Pod, restart_count
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.timestamps import virtual_seconds
from kubespread.controllers.pods import ReadyTimes, is_active, is_ready

__all__ = ["RelatedCounts", "VictimRanking", "deletion_cost", "deletion_order"]

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
                best = max(best, restart_count(s))
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


# ------------------------------------------------------------------ kept between syncs
_Rank = tuple[bool, int, bool, int, int]


class RelatedCounts:
    """Active pods per node for each ReplicaSet uid, over the pods it controls (what
    :class:`~kubespread.controllers.pods.OwnedPods` holds for it): criterion 5's "related
    pods" summed over a Deployment's ReplicaSets, kept from pod events rather than counted at
    every scale-down. ``on_change(owner, node)`` hears every count that moves."""

    def __init__(self, kind: str, on_change: Callable[[str, str], None]) -> None:
        self.kind = kind
        self._on_change = on_change
        self._counts: dict[str, dict[str, int]] = {}
        #: pod key -> (owner uid, node) of an active pod counted
        self._counted: dict[str, tuple[str, str]] = {}

    def set(self, key: str, pod: Pod | None) -> None:
        """Count ``key`` as ``pod`` is now (None: gone)."""
        ref = pod.metadata.controller_ref() if pod is not None else None
        new = None
        if pod is not None and ref is not None and ref.kind == self.kind and ref.uid and is_active(pod):
            new = (ref.uid, pod.spec.node_name)
        old = self._counted.get(key)
        if old == new:
            return
        if old is not None:
            del self._counted[key]
            counts = self._counts[old[0]]
            counts[old[1]] -= 1
            if not counts[old[1]]:
                del counts[old[1]]
                if not counts:
                    del self._counts[old[0]]
            self._on_change(*old)
        if new is not None:
            self._counted[key] = new
            counts = self._counts.setdefault(new[0], {})
            counts[new[1]] = counts.get(new[1], 0) + 1
            self._on_change(*new)

    def seed(self, active: Iterable[tuple[str, str, str]]) -> None:
        """A first count, of ``(key, owner uid, node)`` for each active pod of this kind's
        (what :meth:`set` would count of it): as many ``set`` calls into empty tables, except
        that ``on_change`` is not called, there being nothing yet that a count could move."""
        assert not self._counted
        counted, counts_of = self._counted, self._counts
        for key, uid, node in active:
            counted[key] = (uid, node)
            counts = counts_of.get(uid)
            if counts is None:
                counts_of[uid] = {node: 1}
            else:
                counts[node] = counts.get(node, 0) + 1

    def on_node(self, owners: Iterable[str], node: str) -> int:
        """Active pods of any of ``owners`` on ``node`` ("" for unassigned ones)."""
        total = 0
        for owner in owners:
            counts = self._counts.get(owner)
            if counts:
                total += counts.get(node, 0)
        return total


@dataclass(slots=True)
class _Bucket:
    """The filed pods equal on criteria 1-5: their keys sorted (a ReplicaSet's pods share a
    namespace, so by name too), and how many have each criteria-6-8 ``same`` tuple."""

    keys: list[str]
    same: dict[tuple[bool, float | None, tuple[int, int], float | None], int]


class VictimRanking:
    """One ReplicaSet's active claimed pods filed by criteria 1-5 (ActivePodsWithRanks'
    plain comparisons: assigned, phase, ready, deletion cost, related pods on the node), kept
    between syncs: the controller marks a pod ``dirty_pods`` on each of its events and a node
    ``dirty_nodes`` when a count of :class:`RelatedCounts` over ``members`` moves there, and
    :meth:`refresh` re-files only those. :meth:`victim` then reads the least bucket, as
    ``deletion_order(first=1)`` (``_one_victim``) does over all the pods: when the bucket's
    pods are alike on criteria 6-8 the first name, else :func:`_least` over the bucket."""

    def __init__(self, members: frozenset[str]) -> None:
        #: the uids of the ReplicaSets whose pods are "related" (the same controller's)
        self.members = members
        self.dirty_pods: set[str] = set()
        self.dirty_nodes: set[str] = set()
        self._filed: dict[str, tuple[Pod, _Later, _Rank]] = {}
        self._by_node: dict[str, set[str]] = {}
        self._buckets: dict[_Rank, _Bucket] = {}
        self._heap: list[_Rank] = []

    def __len__(self) -> int:
        return len(self._filed)

    def refresh(
        self,
        current: Callable[[str], Pod | None],
        counts: RelatedCounts,
        ready: ReadyTimes,
        cache: dict[str, tuple[Pod, _Later]],
    ) -> None:
        """Re-file the dirty pods and the pods on dirty nodes; ``current(key)``: the pod as it
        is now when it is still one of the ReplicaSet's active claimed pods, else None."""
        dirty = self.dirty_pods
        for node in self.dirty_nodes:
            on = self._by_node.get(node)
            if on:
                dirty |= on
        self.dirty_nodes = set()
        self.dirty_pods = set()
        for key in dirty:
            self._unfile(key)
            pod = current(key)
            if pod is not None:
                self._file(key, pod, counts, ready, cache)

    def _file(
        self,
        key: str,
        pod: Pod,
        counts: RelatedCounts,
        ready: ReadyTimes,
        cache: dict[str, tuple[Pod, _Later]],
    ) -> None:
        f = _later_facts(pod, ready, cache)
        rank = (f.assigned, f.phase, f.ready, f.cost, -counts.on_node(self.members, f.node))
        self._filed[key] = (pod, f, rank)
        self._by_node.setdefault(f.node, set()).add(key)
        bucket = self._buckets.get(rank)
        if bucket is None:
            bucket = self._buckets[rank] = _Bucket([], {})
            if len(self._heap) > 2 * len(self._buckets) + 16:  # mostly emptied buckets' entries
                self._heap = list(self._buckets)
                heapq.heapify(self._heap)
            else:
                heapq.heappush(self._heap, rank)
        bisect.insort(bucket.keys, key)
        bucket.same[f.same] = bucket.same.get(f.same, 0) + 1

    def _unfile(self, key: str) -> None:
        filed = self._filed.pop(key, None)
        if filed is None:
            return
        _, f, rank = filed
        on = self._by_node[f.node]
        on.discard(key)
        if not on:
            del self._by_node[f.node]
        bucket = self._buckets[rank]
        if len(bucket.keys) == 1:
            del self._buckets[rank]  # (its heap entry goes when it reaches the top)
            return
        del bucket.keys[bisect.bisect_left(bucket.keys, key)]
        left = bucket.same[f.same] - 1
        if left:
            bucket.same[f.same] = left
        else:
            del bucket.same[f.same]

    def victim(self, now: float) -> Pod | None:
        """The pod ``deletion_order(pods, related, now, first=1)`` picks, None when none is filed."""
        heap = self._heap
        while heap and heap[0] not in self._buckets:
            heapq.heappop(heap)
        if not heap:
            return None
        bucket = self._buckets[heap[0]]
        if len(bucket.same) == 1:
            return self._filed[bucket.keys[0]][0]
        return _least([self._filed[k][:2] for k in bucket.keys], now)
