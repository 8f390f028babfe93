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
from typing import TYPE_CHECKING

from kubespread.admission.framework import Rejection
from kubespread.api.apps import ReplicaSet
from kubespread.api.core import Pod
from kubespread.api.selectors import Selector
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import (
    OwnedPods,
    ReadyTimes,
    SelectorCache,
    Wakeups,
    create_with_slow_start,
    followed_pods,
    is_active,
    is_available,
    is_ready,
    owner_key,
    pod_from_template,
    spec_changed,
)
from kubespread.controllers.ranking import (
    RelatedCounts,
    VictimRanking,
    _Later,
    deletion_cost,
    deletion_order,
)

if TYPE_CHECKING:
    from kubespread.controllers.host import ControllerHost

__all__ = ["ReplicaSetController", "deletion_cost", "deletion_order"]


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
        #: active pods per node per ReplicaSet (criterion 5 of the ranking), kept from events
        self._related_counts = RelatedCounts(ReplicaSet.KIND, self._count_moved)
        #: ReplicaSet uid -> its pods ranked for a one-pod scale-down, once it has had one
        self._rankings: dict[str, VictimRanking] = {}
        #: ReplicaSet uid -> the uids of the rankings counting its pods as related
        self._ranked_by_member: dict[str, set[str]] = {}

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        followed = followed_pods(sim)
        self.pods, self.ready = followed.owned(ReplicaSet.KIND), followed.ready()
        self._claim_all(sorted(sim.cluster.pods))
        sim.cluster.subscribe(self._on_event, kinds=(Pod.KIND, ReplicaSet.KIND))
        for key in sorted(sim.cluster.objects(ReplicaSet.KIND)):
            sim.enqueue(self, key)

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if event.kind == Pod.KIND:
            if event.echo:  # claimed, counted, synced on the UPDATED before (the DELETED after)
                return
            self._claim(event.obj.key)
            self._related_counts.set(event.obj.key, sim.cluster.pods.get(event.obj.key))
            if event.type is EventType.DELETED:
                self._later.pop(event.obj.metadata.uid, None)
            for pod in (event.obj, event.old):
                key = owner_key(pod, ReplicaSet.KIND) if pod is not None else None
                if key is not None:
                    sim.enqueue(self, key)
        elif event.kind == ReplicaSet.KIND and event.type is EventType.DELETED:
            self._forget_ranking(event.obj.metadata.uid)
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
        facts = self._facts(key)
        old = self._claims.get(key)
        if old == facts:  # counted as it was (a bind, a status write): only its ranking may move
            if old is not None and old[0] in self._rankings:
                self._rankings[old[0]].dirty_pods.add(key)
            return
        if old is not None:
            del self._claims[key]
            if old[0] in self._rankings:
                self._rankings[old[0]].dirty_pods.add(key)
            counts = self._counts[old[0]]
            counts[0] -= old[1]
            counts[1] -= old[2]
            counts[2] -= old[3]
            if old[1]:
                keys = self._active_keys[old[0]]
                del keys[bisect.bisect_left(keys, key)]
        if facts is None:
            return
        uid = facts[0]
        self._claims[key] = facts
        if uid in self._rankings:
            self._rankings[uid].dirty_pods.add(key)
        counts = self._counts.setdefault(uid, [0, 0, 0])
        counts[0] += facts[1]
        counts[1] += facts[2]
        counts[2] += facts[3]
        if facts[1]:
            bisect.insort(self._active_keys.setdefault(uid, []), key)

    def _claim_all(self, keys: list[str]) -> None:
        """:meth:`_claim` and ``_related_counts.set`` of every pod at the start (``keys``
        sorted, nothing claimed, counted or ranked yet), in one pass: each controlling
        ReplicaSet looked up and its selector fetched once rather than once per pod (a dump's
        100,000 pods have a few hundred owners), and a pod with the labels of the one before
        of its owner selected as that one was."""
        sim = self.sim
        assert sim is not None and not self._claims and not self._rankings
        pods = sim.cluster.pods
        owners: dict[tuple[str, str, str], tuple[ReplicaSet, Selector] | None] = {}
        #: owner uid -> (labels, selected, labelled as the template) of its last pod claimed
        last_labels: dict[str, tuple[dict[str, str], bool, bool]] = {}
        claims, counts, active_keys = self._claims, self._counts, self._active_keys
        related: list[tuple[str, str, str]] = []
        kind = ReplicaSet.KIND
        for key in keys:
            pod = pods[key]
            ref = pod.metadata.controller_ref()
            if ref is None or ref.kind != kind:
                continue
            uid = ref.uid
            active = is_active(pod)
            if active and uid:
                related.append((key, uid, pod.spec.node_name))
            owner = (pod.namespace, ref.name, uid)
            if owner in owners:
                got = owners[owner]
            else:
                got = owners[owner] = self._controlling(pod.namespace, ref.name, uid)
            if got is None:
                continue
            labels = pod.metadata.labels
            seen = last_labels.get(uid)
            if seen is not None and seen[0] == labels:
                selected, labelled = seen[1], seen[2]
            else:
                selected, labelled = _selected(labels, *got)
                last_labels[uid] = (labels, selected, labelled)
            if not selected:
                continue
            facts = _claim_facts(pod, uid, active, labelled)
            claims[key] = facts
            c = counts.setdefault(uid, [0, 0, 0])
            c[0] += facts[1]
            c[1] += facts[2]
            c[2] += facts[3]
            if active:  # keys come sorted: appending keeps each list sorted
                active_keys.setdefault(uid, []).append(key)
        self._related_counts.seed(related)

    def _controlling(self, namespace: str, name: str, uid: str) -> tuple[ReplicaSet, Selector] | None:
        """The live ReplicaSet an ownerReference names (by name and uid) and its selector."""
        sim = self.sim
        assert sim is not None
        rs = sim.cluster.get(ReplicaSet.KIND, f"{namespace}/{name}")
        if not isinstance(rs, ReplicaSet) or rs.metadata.uid != uid:
            return None
        return rs, self._selectors.of(rs)

    def _facts(self, key: str) -> tuple[str, bool, bool, bool] | None:
        """(ReplicaSet uid, active, ready, fully labelled) when a live ReplicaSet controls the
        pod and still selects it, else None."""
        sim = self.sim
        assert sim is not None
        pod = sim.cluster.pods.get(key)
        ref = pod.metadata.controller_ref() if pod is not None else None
        if pod is None or ref is None or ref.kind != ReplicaSet.KIND:
            return None
        got = self._controlling(pod.namespace, ref.name, ref.uid)
        return None if got is None else _pod_facts(pod, ref.uid, *got)

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
        elif diff == 1 and active > 1:
            victim = self._ranked_victim(rs)
            self._delete(rs, [victim] if victim is not None else self._active_claimed(rs), diff)
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

    def _members(self, rs: ReplicaSet) -> frozenset[str]:
        """getIndirectlyRelatedPods' ReplicaSets: every one under the same controller (this one
        alone when it has none), by uid."""
        sim = self.sim
        assert sim is not None
        ref = rs.metadata.controller_ref()
        if ref is None:
            return frozenset((rs.metadata.uid,))
        namespace = rs.metadata.namespace
        return frozenset(
            other.metadata.uid
            for other in sim.cluster.objects(ReplicaSet.KIND).values()
            if other.metadata.namespace == namespace
            and (other_ref := other.metadata.controller_ref()) is not None
            and other_ref.uid == ref.uid
        )

    def _related(self, rs: ReplicaSet) -> list[Pod]:
        """getIndirectlyRelatedPods: the pods of every ReplicaSet under the same controller."""
        related: list[Pod] = []
        for uid in self._members(rs):
            related.extend(self.pods.unordered(uid))  # counted per node only
        return related

    # ------------------------------------------------------------------ one-pod scale-downs
    def _ranked_victim(self, rs: ReplicaSet) -> Pod | None:
        """The pod ``deletion_order(active, related, first=1)`` picks, from the ReplicaSet's
        :class:`VictimRanking` brought up to date (built on its first one-pod scale-down; a
        rollout shrinks the old ReplicaSet one pod per new pod available)."""
        sim = self.sim
        assert sim is not None
        uid = rs.metadata.uid
        members = self._members(rs)
        ranking = self._rankings.get(uid)
        if ranking is None or ranking.members != members:
            self._forget_ranking(uid)
            ranking = self._rankings[uid] = VictimRanking(members)
            for member in members:
                self._ranked_by_member.setdefault(member, set()).add(uid)
            ranking.dirty_pods.update(self._active_keys.get(uid, ()))
        claims, pods = self._claims, sim.cluster.pods

        def current(key: str) -> Pod | None:
            claim = claims.get(key)
            return pods[key] if claim is not None and claim[0] == uid and claim[1] else None

        ranking.refresh(current, self._related_counts, self.ready, self._later)
        return ranking.victim(sim.now)

    def _count_moved(self, owner: str, node: str) -> None:
        for uid in self._ranked_by_member.get(owner, ()):
            self._rankings[uid].dirty_nodes.add(node)

    def _forget_ranking(self, uid: str) -> None:
        ranking = self._rankings.pop(uid, None)
        if ranking is None:
            return
        for member in ranking.members:
            ranked = self._ranked_by_member.get(member)
            if ranked is not None:
                ranked.discard(uid)
                if not ranked:
                    del self._ranked_by_member[member]

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


def _pod_facts(pod: Pod, uid: str, rs: ReplicaSet, selector: Selector) -> tuple[str, bool, bool, bool] | None:
    """A claim's facts (:meth:`ReplicaSetController._facts`) of a pod the ReplicaSet ``rs``
    (uid ``uid``, compiled ``selector``) controls: None when the selector no longer selects it."""
    selected, labelled = _selected(pod.metadata.labels, rs, selector)
    return _claim_facts(pod, uid, is_active(pod), labelled) if selected else None


def _claim_facts(pod: Pod, uid: str, active: bool, labelled: bool) -> tuple[str, bool, bool, bool]:
    """(owner uid, active, ready, fully labelled): ready and labelled count only when active."""
    return (uid, active, active and is_ready(pod), active and labelled)


def _selected(labels: dict[str, str], rs: ReplicaSet, selector: Selector) -> tuple[bool, bool]:
    """Whether a pod with these labels is selected by ``rs`` (compiled ``selector``) and has
    each of its template's labels as the template has it: what of a claim its labels decide."""
    if not selector.matches(labels):
        return False, False
    return True, rs.spec.template.metadata.labels.items() <= labels.items()
