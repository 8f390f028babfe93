"""The Deployment controller: ReplicaSets per pod template, rolled by RollingUpdate or Recreate.

Follows kube-controller-manager v1.35's syncDeployment: a paused Deployment or a change of
``spec.replicas`` only scales (proportionally across the ReplicaSets of a rollout in flight);
otherwise the strategy rolls. RollingUpdate is reconcileNewReplicaSet (surge up to
replicas + maxSurge, counting ReplicaSets' ``spec.replicas``) then reconcileOldReplicaSets
(cleanupUnhealthyReplicas, then scaleDownOldReplicaSetsForRollingUpdate, never below
replicas - maxUnavailable available pods). Recreate scales every old ReplicaSet to 0, waits
until none of their pods is left, then creates the new one at full size.

The new ReplicaSet is ``{deployment}-{hash}`` with the ``pod-template-hash`` label in its
selector, its template and so its pods; a template that returns to an earlier one finds that
ReplicaSet again (EqualIgnoreHash) and gives it the next revision.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Pod, PodTemplateSpec
from kubespread.api.keys import LABEL_POD_TEMPLATE_HASH
from kubespread.api.meta import KubeObject
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import (
    OwnedPods,
    controller_ref,
    followed_pods,
    normalized_template,
    owner_key,
    same_objects,
    scaled_int_or_percent,
    spec_changed,
    status_int,
    template_hash,
)

if TYPE_CHECKING:
    from kubespread.controllers.host import ControllerHost

__all__ = [
    "ANNOTATION_DESIRED_REPLICAS",
    "ANNOTATION_MAX_REPLICAS",
    "ANNOTATION_REVISION",
    "ANNOTATION_REVISION_HISTORY",
    "DeploymentController",
    "max_surge",
    "max_unavailable",
    "resolve_fenceposts",
]

ANNOTATION_REVISION: Final = "deployment.kubernetes.io/revision"
ANNOTATION_REVISION_HISTORY: Final = "deployment.kubernetes.io/revision-history"
ANNOTATION_DESIRED_REPLICAS: Final = "deployment.kubernetes.io/desired-replicas"
ANNOTATION_MAX_REPLICAS: Final = "deployment.kubernetes.io/max-replicas"
#: annotations a Deployment does not pass on to its ReplicaSets
_SKIP_ANNOTATIONS: Final = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        ANNOTATION_REVISION,
        ANNOTATION_REVISION_HISTORY,
        ANNOTATION_DESIRED_REPLICAS,
        ANNOTATION_MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)
MAX_REVISION_HISTORY_CHARS: Final = 2000
DEFAULT_REVISION_HISTORY_LIMIT: Final = 10
DEFAULT_ROLLING: Final = "25%"


# ------------------------------------------------------------------ deployment arithmetic
def _replicas(obj: Deployment | ReplicaSet) -> int:
    return obj.spec.replicas if obj.spec.replicas is not None else 1


def _is_rolling(d: Deployment) -> bool:
    strategy = d.spec.strategy
    return strategy is None or (strategy.type or "RollingUpdate") == "RollingUpdate"


def resolve_fenceposts(d: Deployment) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) for the Deployment's replicas: surge rounds up, unavailable
    down (defaults 25%); when both come to 0, maxUnavailable is 1."""
    rolling = d.spec.strategy.rolling_update if d.spec.strategy is not None else None
    surge_value = (
        rolling.max_surge if rolling is not None and rolling.max_surge is not None else DEFAULT_ROLLING
    )
    unavailable_value = (
        rolling.max_unavailable
        if rolling is not None and rolling.max_unavailable is not None
        else DEFAULT_ROLLING
    )
    desired = _replicas(d)
    surge = scaled_int_or_percent(surge_value, desired, round_up=True)
    unavailable = scaled_int_or_percent(unavailable_value, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Deployment) -> int:
    return resolve_fenceposts(d)[0] if _is_rolling(d) else 0


def max_unavailable(d: Deployment) -> int:
    if not _is_rolling(d) or _replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], _replicas(d))


def _spec_sum(rss: Sequence[ReplicaSet | None]) -> int:
    return sum(_replicas(rs) for rs in rss if rs is not None)


def _status_sum(rss: Sequence[ReplicaSet | None], field: str) -> int:
    return sum(status_int(rs, field) for rs in rss if rs is not None)


def _active(rss: Sequence[ReplicaSet | None]) -> list[ReplicaSet]:
    """FilterActiveReplicaSets: those asked for at least one pod."""
    return [rs for rs in rss if rs is not None and _replicas(rs) > 0]


def _by_creation(rs: ReplicaSet) -> tuple[str, str]:
    """ReplicaSetsByCreationTimestamp: older first, then by name."""
    return (rs.metadata.creation_timestamp or "", rs.metadata.name)


def _revision(rs: ReplicaSet) -> int:
    try:
        return int(rs.metadata.annotations.get(ANNOTATION_REVISION, ""))
    except ValueError:
        return 0


def _int_annotation(rs: ReplicaSet, key: str) -> int | None:
    try:
        return int(rs.metadata.annotations[key])
    except (KeyError, ValueError):
        return None


def _status_field(d: Deployment, field: str) -> Any:
    return d.status.get(field) if isinstance(d.status, dict) else None


def _complete(d: Deployment, status: dict[str, Any]) -> bool:
    """DeploymentComplete: every replica updated and available, nothing else left."""
    want = _replicas(d)
    return (
        status["updatedReplicas"] == want
        and status["replicas"] == want
        and status["availableReplicas"] == want
        and status["observedGeneration"] >= d.metadata.generation
    )


def _working_copy(obj: Deployment | ReplicaSet) -> Any:
    """A copy whose metadata (annotations included) and status may be changed; the spec is shared
    (copy it too before changing it). Cheaper than a deep copy, and the shared template keeps
    hitting the template cache."""
    new = copy.copy(obj)
    new.metadata = copy.copy(obj.metadata)
    new.metadata.annotations = dict(obj.metadata.annotations)
    if isinstance(obj.status, dict):
        new.status = dict(obj.status)
    return new


class DeploymentController:
    """kube-controller-manager's deployment controller (syncDeployment and its strategies)."""

    name = "deployment"

    def __init__(self) -> None:
        self.sim: ControllerHost | None = None
        self.pods = OwnedPods(ReplicaSet.KIND)
        self._templates: dict[int, tuple[PodTemplateSpec, str]] = {}
        #: ReplicaSet key -> its controller's uid, and controller uid -> its ReplicaSets' keys,
        #: kept from cluster events: a sync reads its ReplicaSets without scanning them all
        self._rs_owner: dict[str, str] = {}
        self._owned_rs: dict[str, set[str]] = {}
        #: Deployment key -> what its last sync read (the Deployment and its ReplicaSets, as
        #: stored) when that sync changed and recorded nothing: the same objects again would
        #: make the same no-op sync (a rolling one reads nothing else), so it is skipped
        self._idle: dict[str, tuple[KubeObject | None, ...]] = {}
        #: off: every sync runs (the tests' reference for the skipped ones)
        self.skip_idle_syncs = True
        #: Events this controller recorded so far (a sync that records one is not idle)
        self._recorded = 0

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        self.pods = followed_pods(sim).owned(ReplicaSet.KIND)
        for rs in sim.cluster.objects(ReplicaSet.KIND).values():
            self._index_rs(rs.key, rs)
        sim.cluster.subscribe(self._on_event, kinds=(Deployment.KIND, ReplicaSet.KIND, Pod.KIND))
        for key in sorted(sim.cluster.objects(Deployment.KIND)):
            sim.enqueue(self, key)

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if event.kind == Deployment.KIND:
            if spec_changed(event):
                sim.enqueue(self, event.obj.key)
        elif event.kind == ReplicaSet.KIND:
            self._index_rs(event.obj.key, None if event.type is EventType.DELETED else event.obj)
            for rs in (event.obj, event.old):
                key = owner_key(rs, Deployment.KIND) if rs is not None else None
                if key is not None:
                    sim.enqueue(self, key)
        elif event.kind == Pod.KIND and event.type is EventType.DELETED:
            # Recreate waits for the old pods to be gone
            rs_key = owner_key(event.obj, ReplicaSet.KIND)
            rs = sim.cluster.get(ReplicaSet.KIND, rs_key) if rs_key else None
            key = owner_key(rs, Deployment.KIND) if rs is not None else None
            if key is not None:
                sim.enqueue(self, key)

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        stored = sim.cluster.get(Deployment.KIND, key)
        if not isinstance(stored, Deployment) or stored.metadata.deletion_timestamp:
            self._idle.pop(key, None)
            return
        inputs = self._inputs(stored)
        idle = self._idle.pop(key, None)
        if idle is not None and same_objects(idle, inputs):
            self._idle[key] = idle
            return
        recorded = self._recorded
        self._sync(stored)
        if self.skip_idle_syncs and _is_rolling(stored) and self._recorded == recorded:
            after = sim.cluster.get(Deployment.KIND, key)
            if after is stored and same_objects(inputs, self._inputs(stored)):
                self._idle[key] = inputs

    def _record(self, obj: KubeObject, reason: str, message: str, *, type: str = "Normal") -> None:
        sim = self.sim
        assert sim is not None
        self._recorded += 1
        sim.record(obj, reason, message, type=type)

    def _inputs(self, stored: Deployment) -> tuple[KubeObject | None, ...]:
        """What a rolling sync reads: the Deployment and its ReplicaSets as stored now."""
        sim = self.sim
        assert sim is not None
        get = sim.cluster.get
        return (
            stored,
            *(get(ReplicaSet.KIND, k) for k in sorted(self._owned_rs.get(stored.metadata.uid, ()))),
        )

    def _sync(self, stored: Deployment) -> None:
        sim = self.sim
        assert sim is not None
        d = _working_copy(stored)
        selector = d.spec.selector
        if selector is not None and not selector.match_labels and not selector.match_expressions:
            self._record(
                d,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
                type="Warning",
            )
            d.status = {**(d.status if isinstance(d.status, dict) else {})}
            d.status["observedGeneration"] = d.metadata.generation
        else:
            self._reconcile(d)
            d.status = self._calculate_status(d)
        if d.status != stored.status or d.metadata.annotations != stored.metadata.annotations:
            sim.update(d)

    def _reconcile(self, d: Deployment) -> None:
        rs_list = self._replica_sets(d)
        if d.spec.paused or self._is_scaling_event(d, rs_list):
            self._sync_scale(d, rs_list)
        elif _is_rolling(d):
            self._rollout_rolling(d, rs_list)
        else:
            self._rollout_recreate(d, rs_list)

    def _index_rs(self, key: str, rs: KubeObject | None) -> None:
        ref = rs.metadata.controller_ref() if rs is not None else None
        uid = ref.uid if ref is not None else None
        old = self._rs_owner.get(key)
        if old == uid:
            return
        if old is not None:
            del self._rs_owner[key]
            keys = self._owned_rs[old]
            keys.discard(key)
            if not keys:
                del self._owned_rs[old]
        if uid is not None:
            self._rs_owner[key] = uid
            self._owned_rs.setdefault(uid, set()).add(key)

    def _replica_sets(self, d: Deployment) -> list[ReplicaSet]:
        """The ReplicaSets this Deployment controls (none is adopted), oldest first."""
        sim = self.sim
        assert sim is not None
        uid, namespace = d.metadata.uid, d.metadata.namespace
        owned = []
        for key in self._owned_rs.get(uid, ()):
            rs = sim.cluster.get(ReplicaSet.KIND, key)
            if isinstance(rs, ReplicaSet) and rs.metadata.namespace == namespace:
                owned.append(rs)
        return sorted(owned, key=_by_creation)

    def _fresh(self, rs: ReplicaSet) -> ReplicaSet:
        sim = self.sim
        assert sim is not None
        current = sim.cluster.get(ReplicaSet.KIND, rs.key)
        return current if isinstance(current, ReplicaSet) else rs

    # ------------------------------------------------------------------ the new ReplicaSet
    def _template_key(self, template: PodTemplateSpec) -> str:
        """The normalized template as canonical JSON, cached by template object (stored templates
        are never changed in place)."""
        hit = self._templates.get(id(template))
        if hit is not None and hit[0] is template:
            return hit[1]
        key = json.dumps(normalized_template(template), sort_keys=True, separators=(",", ":"))
        if len(self._templates) >= 4096:
            self._templates.clear()
        self._templates[id(template)] = (template, key)
        return key

    def _equal_ignore_hash(self, d: Deployment, rs: ReplicaSet) -> bool:
        return self._template_key(rs.spec.template) == self._template_key(d.spec.template)

    def _find_new(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> ReplicaSet | None:
        """FindNewReplicaSet: the oldest whose template equals the Deployment's, hash aside."""
        want = self._template_key(d.spec.template)
        for rs in sorted(rs_list, key=_by_creation):
            if self._template_key(rs.spec.template) == want:
                return rs
        return None

    def _all_replica_sets(
        self, d: Deployment, rs_list: Sequence[ReplicaSet], *, create: bool
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """getAllReplicaSetsAndSyncRevision: (new, old); the new one created if asked and absent."""
        rs_list = [self._fresh(rs) for rs in rs_list]
        existing = self._find_new(d, rs_list)
        old = [rs for rs in rs_list if rs is not existing]
        return self._new_replica_set(d, existing, old, create=create), old

    def _new_replica_set(
        self, d: Deployment, existing: ReplicaSet | None, old: list[ReplicaSet], *, create: bool
    ) -> ReplicaSet | None:
        sim = self.sim
        assert sim is not None
        new_revision = str(max((_revision(rs) for rs in old), default=0) + 1)
        if existing is not None:
            annotations = dict(existing.metadata.annotations)  # the copy is made only if they change
            changed = self._set_new_annotations(d, annotations, new_revision)
            if changed or existing.spec.min_ready_seconds != d.spec.min_ready_seconds:
                updated = _working_copy(existing)
                updated.metadata.annotations = annotations
                if updated.spec.min_ready_seconds != d.spec.min_ready_seconds:
                    updated.spec = copy.copy(existing.spec)
                    updated.spec.min_ready_seconds = d.spec.min_ready_seconds
                    updated.metadata.generation += 1
                sim.update(updated)
                return updated
            self._set_deployment_revision(d, annotations.get(ANNOTATION_REVISION, ""))
            return existing
        if not create:
            return None
        collisions = _status_field(d, "collisionCount")
        pod_hash = template_hash(d.spec.template, collisions if isinstance(collisions, int) else None)
        template = d.spec.template.to_dict()
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), LABEL_POD_TEMPLATE_HASH: pod_hash}
        selector = d.spec.selector.to_dict() if d.spec.selector is not None else {}
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), LABEL_POD_TEMPLATE_HASH: pod_hash}
        new_rs = ReplicaSet.from_dict(
            {
                "apiVersion": ReplicaSet.API_VERSION,
                "kind": ReplicaSet.KIND,
                "metadata": {
                    "name": f"{d.metadata.name}-{pod_hash}",
                    "namespace": d.namespace,
                    "labels": dict(tmeta["labels"]),
                    "ownerReferences": [controller_ref(d).to_dict()],
                },
                "spec": {
                    "replicas": 0,
                    "minReadySeconds": d.spec.min_ready_seconds,
                    "selector": selector,
                    "template": template,
                },
            }
        )
        new_replicas = self._new_rs_new_replicas(d, [*old, new_rs], new_rs)
        new_rs.spec.replicas = new_replicas
        self._set_new_annotations(d, new_rs.metadata.annotations, new_revision, created=new_rs)
        outcome = sim.create(new_rs)
        already_exists = False
        if isinstance(outcome, Rejection):
            found = sim.cluster.get(ReplicaSet.KIND, new_rs.key)
            ref = found.metadata.controller_ref() if found is not None else None
            if outcome.reason != "AlreadyExists" or not isinstance(found, ReplicaSet):
                message = f'Failed to create new replica set "{new_rs.metadata.name}": {outcome.message}'
                self._record(d, "ReplicaSetCreateError", message, type="Warning")
                return None
            if ref is None or ref.uid != d.metadata.uid or not self._equal_ignore_hash(d, found):
                # a hash collision: the next sync hashes with the bumped count
                status = dict(d.status) if isinstance(d.status, dict) else {}
                status["collisionCount"] = (collisions if isinstance(collisions, int) else 0) + 1
                d.status = status
                sim.enqueue(self, d.key)
                return None
            created, already_exists = found, True
        else:
            created = outcome  # type: ignore[assignment]
        assert isinstance(created, ReplicaSet)
        if not already_exists and new_replicas > 0:
            self._record(
                d,
                "ScalingReplicaSet",
                f"Scaled up replica set {created.metadata.name} from 0 to {new_replicas}",
            )
        self._set_deployment_revision(d, new_revision)
        return created

    def _set_new_annotations(
        self,
        d: Deployment,
        annotations: dict[str, str],
        new_revision: str,
        *,
        created: ReplicaSet | None = None,
    ) -> bool:
        """SetNewReplicaSetAnnotations on a ReplicaSet's ``annotations`` (changed in place): the
        Deployment's annotations, the revision (kept in the history when an old ReplicaSet comes
        back), and on creation (``created``, whose annotations they are) desired/max replicas."""
        changed = False
        for k, v in d.metadata.annotations.items():
            if k in _SKIP_ANNOTATIONS or annotations.get(k) == v:
                continue
            annotations[k] = v
            changed = True
        old_revision = annotations.get(ANNOTATION_REVISION)
        try:
            old_int = int(old_revision) if old_revision else 0
        except ValueError:
            return False
        new_int = int(new_revision)
        if old_int < new_int:
            annotations[ANNOTATION_REVISION] = new_revision
            changed = True
            if old_revision is not None:
                history = annotations.get(ANNOTATION_REVISION_HISTORY, "")
                revisions = [r for r in history.split(",") if r] + [old_revision]
                while len(",".join(revisions)) > MAX_REVISION_HISTORY_CHARS and len(revisions) > 1:
                    revisions.pop(0)
                annotations[ANNOTATION_REVISION_HISTORY] = ",".join(revisions)
        if created is not None and self._set_replicas_annotations(created, d):
            changed = True
        return changed

    @staticmethod
    def _set_replicas_annotations(rs: ReplicaSet, d: Deployment) -> bool:
        desired, most = str(_replicas(d)), str(_replicas(d) + max_surge(d))
        annotations = rs.metadata.annotations
        if (
            annotations.get(ANNOTATION_DESIRED_REPLICAS) == desired
            and annotations.get(ANNOTATION_MAX_REPLICAS) == most
        ):
            return False
        annotations[ANNOTATION_DESIRED_REPLICAS] = desired
        annotations[ANNOTATION_MAX_REPLICAS] = most
        return True

    @staticmethod
    def _set_deployment_revision(d: Deployment, revision: str) -> None:
        if revision and d.metadata.annotations.get(ANNOTATION_REVISION) != revision:
            d.metadata.annotations[ANNOTATION_REVISION] = revision

    @staticmethod
    def _new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet) -> int:
        """NewRSNewReplicas: as far as the surge allows (RollingUpdate) or full size (Recreate)."""
        if not _is_rolling(d):
            return _replicas(d)
        max_total = _replicas(d) + max_surge(d)
        current = _spec_sum(all_rss)
        if current >= max_total:
            return _replicas(new_rs)
        scale_up = min(max_total - current, _replicas(d) - _replicas(new_rs))
        return _replicas(new_rs) + scale_up

    # ------------------------------------------------------------------ scaling
    def _scale(
        self, d: Deployment, rs: ReplicaSet, new_scale: int, operation: str
    ) -> tuple[bool, ReplicaSet]:
        """scaleReplicaSet: the size and the desired/max annotations; an event when the size moved."""
        sim = self.sim
        assert sim is not None
        rs = self._fresh(rs)
        size_changes = _replicas(rs) != new_scale
        desired, most = str(_replicas(d)), str(_replicas(d) + max_surge(d))
        annotations = rs.metadata.annotations
        annotations_change = (
            annotations.get(ANNOTATION_DESIRED_REPLICAS) != desired
            or annotations.get(ANNOTATION_MAX_REPLICAS) != most
        )
        if not size_changes and not annotations_change:
            return False, rs
        old_scale = _replicas(rs)
        updated = _working_copy(rs)
        updated.spec = copy.copy(rs.spec)
        updated.spec.replicas = new_scale
        self._set_replicas_annotations(updated, d)
        if size_changes:
            updated.metadata.generation += 1
        sim.update(updated)
        if size_changes:
            self._record(
                d,
                "ScalingReplicaSet",
                f"Scaled {operation} replica set {rs.metadata.name} from {old_scale} to {new_scale}",
            )
        return size_changes, updated

    def _scale_and_record(self, d: Deployment, rs: ReplicaSet, new_scale: int) -> tuple[bool, ReplicaSet]:
        if _replicas(rs) == new_scale:
            return False, rs
        return self._scale(d, rs, new_scale, "up" if _replicas(rs) < new_scale else "down")

    def _is_scaling_event(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> bool:
        """An active ReplicaSet annotated with a different desired size: replicas changed."""
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        for rs in _active([*old, new_rs]):
            desired = _int_annotation(rs, ANNOTATION_DESIRED_REPLICAS)
            if desired is not None and desired != _replicas(d):
                return True
        return False

    def _sync_scale(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        """sync(): scale, and clean up old history when paused."""
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        self._proportional_scale(d, new_rs, old)
        if d.spec.paused:
            self._cleanup(d, [self._fresh(rs) for rs in old])

    def _proportional_scale(self, d: Deployment, new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> None:
        """scale(): one active ReplicaSet takes the new size; a saturated new one leaves the old at
        0; otherwise the difference is shared in proportion to each one's size."""
        target = self._active_or_latest(new_rs, old)
        if target is not None:
            if _replicas(target) != _replicas(d):
                self._scale_and_record(d, target, _replicas(d))
            return
        if self._saturated(d, new_rs):
            for rs in _active(old):
                self._scale_and_record(d, rs, 0)
            return
        if not _is_rolling(d):
            return
        all_rss = _active([*old, new_rs])
        allowed = _replicas(d) + max_surge(d) if _replicas(d) > 0 else 0
        to_add = allowed - _spec_sum(all_rss)
        operation = ""
        if to_add > 0:  # larger first; among equals the newer first
            all_rss.sort(key=_by_creation, reverse=True)
            all_rss.sort(key=_replicas, reverse=True)
            operation = "up"
        elif to_add < 0:  # larger first; among equals the older first
            all_rss.sort(key=_by_creation)
            all_rss.sort(key=_replicas, reverse=True)
            operation = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                share = self._proportion(rs, d, to_add, added)
                sizes[rs.metadata.name] = _replicas(rs) + share
                added += share
            else:
                sizes[rs.metadata.name] = _replicas(rs)
        for i, rs in enumerate(all_rss):
            if i == 0 and to_add != 0:  # leftovers to the largest
                sizes[rs.metadata.name] = max(0, sizes[rs.metadata.name] + to_add - added)
            self._scale(d, rs, sizes[rs.metadata.name], operation)

    @staticmethod
    def _active_or_latest(new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> ReplicaSet | None:
        """FindActiveOrLatest: the only active ReplicaSet, the newest if none is active, else None."""
        if new_rs is None and not old:
            return None
        newest_first = sorted(old, key=_by_creation, reverse=True)
        active = _active([*newest_first, new_rs])
        if not active:
            return new_rs if new_rs is not None else newest_first[0]
        return active[0] if len(active) == 1 else None

    @staticmethod
    def _saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
        if rs is None:
            return False
        desired = _int_annotation(rs, ANNOTATION_DESIRED_REPLICAS)
        want = _replicas(d)
        return _replicas(rs) == want and desired == want and status_int(rs, "availableReplicas") == want

    @staticmethod
    def _proportion(rs: ReplicaSet, d: Deployment, to_add: int, added: int) -> int:
        """GetReplicaSetProportion: this ReplicaSet's share of the change, within what is left."""
        if _replicas(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        if _replicas(d) == 0:
            fraction = -_replicas(rs)
        else:
            before = _int_annotation(rs, ANNOTATION_MAX_REPLICAS)
            if not before:
                before = status_int(d, "replicas")
            if not before:
                fraction = 0
            else:
                size = _replicas(rs) * (_replicas(d) + max_surge(d)) / before
                rounded = int(size + 0.5) if size >= 0 else -int(-size + 0.5)  # math.Round
                fraction = rounded - _replicas(rs)
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    # ------------------------------------------------------------------ RollingUpdate
    def _rollout_rolling(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        new_rs, old = self._all_replica_sets(d, rs_list, create=True)
        if new_rs is None:
            return
        all_rss = [*old, new_rs]
        if self._reconcile_new(all_rss, new_rs, d):
            return
        if self._reconcile_old(all_rss, _active(old), self._fresh(new_rs), d):
            return
        if _complete(d, self._calculate_status(d)):
            self._cleanup(d, [self._fresh(rs) for rs in old])

    def _reconcile_new(self, all_rss: list[ReplicaSet], new_rs: ReplicaSet, d: Deployment) -> bool:
        if _replicas(new_rs) == _replicas(d):
            return False
        if _replicas(new_rs) > _replicas(d):
            return self._scale_and_record(d, new_rs, _replicas(d))[0]
        count = self._new_rs_new_replicas(d, all_rss, new_rs)
        return self._scale_and_record(d, new_rs, count)[0]

    def _reconcile_old(
        self, all_rss: list[ReplicaSet], old: list[ReplicaSet], new_rs: ReplicaSet, d: Deployment
    ) -> bool:
        old_pods = _spec_sum(old)
        if old_pods == 0:
            return False
        min_available = _replicas(d) - max_unavailable(d)
        new_unavailable = _replicas(new_rs) - status_int(new_rs, "availableReplicas")
        max_scaled_down = _spec_sum(all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old, cleaned = self._cleanup_unhealthy(old, d, max_scaled_down)
        scaled = self._scale_down_old_for_rolling([*old, new_rs], old, d)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(
        self, old: list[ReplicaSet], d: Deployment, max_cleanup: int
    ) -> tuple[list[ReplicaSet], int]:
        """Scale old ReplicaSets down by their unavailable pods first (they serve nothing)."""
        old = sorted(old, key=_by_creation)
        total = 0
        for i, rs in enumerate(old):
            if total >= max_cleanup:
                break
            available = status_int(rs, "availableReplicas")
            if _replicas(rs) == 0 or _replicas(rs) == available:
                continue
            down = min(max_cleanup - total, _replicas(rs) - available)
            _, old[i] = self._scale_and_record(d, rs, _replicas(rs) - down)
            total += down
        return old, total

    def _scale_down_old_for_rolling(
        self, all_rss: list[ReplicaSet], old: list[ReplicaSet], d: Deployment
    ) -> int:
        """Scale old ReplicaSets down, oldest first, as far as the available pods allow."""
        min_available = _replicas(d) - max_unavailable(d)
        available = _status_sum(all_rss, "availableReplicas")
        if available <= min_available:
            return 0
        total, budget = 0, available - min_available
        for rs in sorted(old, key=_by_creation):
            if total >= budget:
                break
            if _replicas(rs) == 0:
                continue
            down = min(_replicas(rs), budget - total)
            self._scale_and_record(d, rs, _replicas(rs) - down)
            total += down
        return total

    # ------------------------------------------------------------------ Recreate
    def _rollout_recreate(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> None:
        new_rs, old = self._all_replica_sets(d, rs_list, create=False)
        scaled_down = False
        for rs in _active(old):
            scaled, _ = self._scale_and_record(d, rs, 0)
            scaled_down = scaled_down or scaled
        if scaled_down or self._old_pods_running(new_rs, [self._fresh(rs) for rs in old]):
            return
        if new_rs is None:
            new_rs, old = self._all_replica_sets(d, rs_list, create=True)
            if new_rs is None:
                return
        self._scale_and_record(d, self._fresh(new_rs), _replicas(d))
        if _complete(d, self._calculate_status(d)):
            self._cleanup(d, [self._fresh(rs) for rs in old])

    def _old_pods_running(self, new_rs: ReplicaSet | None, old: list[ReplicaSet]) -> bool:
        """Any old ReplicaSet reporting pods, or any of their pods not finished (Terminating too)."""
        if _status_sum(old, "replicas") > 0:
            return True
        return any(not p.is_finished for rs in old for p in self.pods.pods(rs.metadata.uid))

    # ------------------------------------------------------------------ history and status
    def _cleanup(self, d: Deployment, old: list[ReplicaSet]) -> None:
        """cleanupDeployment: delete the oldest revisions beyond revisionHistoryLimit, if idle."""
        sim = self.sim
        assert sim is not None
        limit = d.spec.revision_history_limit
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit
        alive = [rs for rs in old if not rs.metadata.deletion_timestamp]
        excess = len(alive) - limit
        if excess <= 0:
            return
        by_revision = sorted(alive, key=lambda rs: (_revision(rs), *_by_creation(rs)))
        for rs in by_revision[:excess]:
            idle = status_int(rs, "replicas") == 0 and _replicas(rs) == 0
            if not idle or rs.metadata.generation > status_int(rs, "observedGeneration"):
                continue
            if sim.cluster.get(ReplicaSet.KIND, rs.key) is not None:
                sim.delete(ReplicaSet.KIND, rs.key)

    def _calculate_status(self, d: Deployment) -> dict[str, Any]:
        """calculateStatus (conditions aside) from the ReplicaSets as they now are."""
        all_rss = self._replica_sets(d)
        new_rs = self._find_new(d, all_rss)
        replicas = ready = available = 0
        for rs in all_rss:  # one pass for the three sums
            replicas += status_int(rs, "replicas")
            ready += status_int(rs, "readyReplicas")
            available += status_int(rs, "availableReplicas")
        status: dict[str, Any] = {
            "observedGeneration": d.metadata.generation,
            "replicas": replicas,
            "updatedReplicas": status_int(new_rs, "replicas") if new_rs is not None else 0,
            "readyReplicas": ready,
            "availableReplicas": available,
            "unavailableReplicas": max(0, _spec_sum(all_rss) - available),
        }
        collisions = _status_field(d, "collisionCount")
        if isinstance(collisions, int):
            status["collisionCount"] = collisions
        return status
