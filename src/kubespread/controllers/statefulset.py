"""The StatefulSet controller: pods with stable names, created and removed in ordinal order.

Follows kube-controller-manager v1.35's updateStatefulSet. Each sync sorts the set's pods into
the slots ``start .. start+replicas-1`` (``spec.ordinals.start``) and the condemned rest, then:

1. walks the slots in order: a finished pod is deleted (and recreated on a later sync), a
   missing one created; under OrderedReady (monotonic) the walk stops at the first pod it
   created or that is Terminating, not Running and Ready, or not yet available;
2. deletes condemned pods from the highest ordinal, one at a time under OrderedReady, each only
   once the ones before it are gone;
3. rolls the template (RollingUpdate): deletes pods of an older revision from the highest
   ordinal down to ``partition``, while fewer than maxUnavailable slots are unavailable: 1,
   or rollingUpdate.maxUnavailable where MaxUnavailableStatefulSet is on (Beta but off in
   v1.35 and v1.36, kubernetes#137904); the slots refill at the new revision.

``Parallel`` does 1 and 2 for every pod at once. A revision is ``{name}-{hash}`` of the template,
its pods labelled ``controller-revision-hash``; the templates of earlier revisions are remembered
by the controller (there are no ControllerRevision objects) so partitioned pods are recreated at
the revision they had.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.apps import StatefulSet
from kubespread.api.core import Pod, PodTemplateSpec
from kubespread.api.features import MAX_UNAVAILABLE_STATEFUL_SET
from kubespread.controllers.pods import (
    PodOwnerController,
    SelectorCache,
    is_available,
    is_running_and_ready,
    pod_from_template,
    scaled_int_or_percent,
    template_hash,
)

if TYPE_CHECKING:
    pass

__all__ = ["LABEL_POD_INDEX", "LABEL_POD_NAME", "LABEL_REVISION_HASH", "StatefulSetController"]

LABEL_POD_NAME: Final = "statefulset.kubernetes.io/pod-name"
LABEL_POD_INDEX: Final = "apps.kubernetes.io/pod-index"
LABEL_REVISION_HASH: Final = "controller-revision-hash"
_ORDINAL_RE: Final = re.compile(r"(.*)-([0-9]+)")


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else None


def _ordinal(sts: StatefulSet, pod: Pod) -> int | None:
    """The pod's ordinal when its name is ``{set}-{n}``, else None (not a member)."""
    m = _ORDINAL_RE.fullmatch(pod.metadata.name)
    if m is None or m.group(1) != sts.metadata.name:
        return None
    return int(m.group(2))


def _revision(pod: Pod) -> str:
    return pod.metadata.labels.get(LABEL_REVISION_HASH, "")


class StatefulSetController(PodOwnerController):
    """kube-controller-manager's statefulset controller (pods only: no volume claims)."""

    name = "statefulset"
    kind = StatefulSet.KIND

    def __init__(self) -> None:
        super().__init__()
        self._selectors = SelectorCache()
        #: namespace/revision name → the template of that revision
        self._revisions: dict[str, PodTemplateSpec] = {}

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        sts = sim.cluster.get(StatefulSet.KIND, key)
        if not isinstance(sts, StatefulSet) or sts.metadata.deletion_timestamp:
            return
        namespace = sts.namespace
        status = sts.status if isinstance(sts.status, Mapping) else {}
        collisions = status.get("collisionCount")
        update_rev = f"{sts.metadata.name}-{template_hash(sts.spec.template, collisions or None)}"
        self._revisions[f"{namespace}/{update_rev}"] = sts.spec.template
        current_rev = status.get("currentRevision") or update_rev
        if f"{namespace}/{current_rev}" not in self._revisions:
            current_rev = update_rev  # an unknown history starts at the present template
        self._update(sts, current_rev, update_rev)
        self._update_status(key, current_rev, update_rev)

    def _members(self, sts: StatefulSet) -> list[tuple[int, Pod]]:
        selector = self._selectors.of(sts)
        members = []
        for pod in self.pods.pods(sts.metadata.uid):
            ordinal = _ordinal(sts, pod)
            if ordinal is not None and selector.matches(pod.metadata.labels):
                members.append((ordinal, pod))
        return sorted(members, key=lambda m: m[0])

    @staticmethod
    def _settings(sts: StatefulSet) -> tuple[int, int, bool, str, int, int]:
        """(replicas, start ordinal, monotonic, strategy type, partition, minReadySeconds)."""
        spec = sts.spec
        replicas = spec.replicas if spec.replicas is not None else 1
        start = _field(spec.ordinals, "start") or 0
        monotonic = (spec.pod_management_policy or "OrderedReady") != "Parallel"
        strategy = spec.update_strategy
        kind = _field(strategy, "type") or "RollingUpdate"
        partition = _field(_field(strategy, "rollingUpdate"), "partition") or 0
        min_ready = (spec.extra or {}).get("minReadySeconds") or 0
        return replicas, int(start), monotonic, kind, int(partition), int(min_ready)

    def _healthy(self, pod: Pod | None, min_ready: int) -> bool:
        sim = self.sim
        assert sim is not None
        return (
            pod is not None
            and not pod.is_terminating
            and is_running_and_ready(pod)
            and is_available(pod, min_ready, sim.now, self.ready)
        )

    def _waits_for_available(self, sts: StatefulSet, pod: Pod, min_ready: int) -> bool:
        """Running and Ready but not yet for minReadySeconds: come back when it will be."""
        sim = self.sim
        assert sim is not None
        if is_available(pod, min_ready, sim.now, self.ready):
            return False
        since = self.ready.since(pod)
        if since is not None:
            self._wakeups.request(sim, self, sts.key, since + min_ready)
        return True

    def _update(self, sts: StatefulSet, current_rev: str, update_rev: str) -> None:
        replicas, start, monotonic, kind, partition, min_ready = self._settings(sts)
        slots: list[Pod | None] = [None] * replicas
        condemned: list[Pod] = []
        for ordinal, member in self._members(sts):
            if 0 <= ordinal - start < replicas:
                slots[ordinal - start] = member
            else:
                condemned.append(member)
        first_unhealthy = next((p for p in [*slots, *condemned] if not self._healthy(p, min_ready)), None)
        for i, pod in enumerate(slots):
            if pod is not None and pod.is_finished:
                failed = pod.status.phase == "Failed"
                self._record_recreate(sts, pod, failed)
                if not pod.is_terminating:
                    self._delete_pod(sts, pod)
                if monotonic:
                    return
                continue
            if pod is None:
                revision = current_rev if kind == "RollingUpdate" and i < partition else update_rev
                created = self._create_pod(sts, start + i, revision)
                if created is None or monotonic:
                    return
                slots[i] = created
                continue
            if not monotonic:
                continue
            if pod.is_terminating or not is_running_and_ready(pod):
                return
            if self._waits_for_available(sts, pod, min_ready):
                return
        for victim in reversed(condemned):
            if victim.is_terminating:
                if monotonic:
                    return
                continue
            if (
                monotonic
                and victim is not first_unhealthy
                and (not is_running_and_ready(victim) or self._waits_for_available(sts, victim, min_ready))
            ):
                return
            self._delete_pod(sts, victim)
            if monotonic:
                return
        if kind == "OnDelete":
            return
        self._roll(sts, slots, update_rev, partition, min_ready)

    def _roll(
        self, sts: StatefulSet, slots: list[Pod | None], update_rev: str, partition: int, min_ready: int
    ) -> None:
        """updateStatefulSetAfterInvariantEstablished: replace old-revision pods from the top
        while fewer than maxUnavailable slots are unavailable."""
        rolling = _field(sts.spec.update_strategy, "rollingUpdate")
        max_unavailable = 1
        assert self.sim is not None
        if self.sim.features.enabled(MAX_UNAVAILABLE_STATEFUL_SET):
            max_unavailable = max(
                1,
                scaled_int_or_percent(
                    _field(rolling, "maxUnavailable"), len(slots), round_up=False, default=1
                ),
            )
        unavailable = sum(1 for p in slots if not self._healthy(p, min_ready))
        if unavailable >= max_unavailable:
            return
        budget = max_unavailable - unavailable
        for i in range(len(slots) - 1, partition - 1, -1):
            if budget <= 0:
                break
            pod = slots[i]
            if pod is not None and _revision(pod) != update_rev and not pod.is_terminating:
                self._delete_pod(sts, pod)
                budget -= 1

    # ------------------------------------------------------------------ pods
    def _create_pod(self, sts: StatefulSet, ordinal: int, revision: str) -> Pod | None:
        sim = self.sim
        assert sim is not None
        namespace = sts.namespace
        template = self._revisions.get(f"{namespace}/{revision}", sts.spec.template)
        name = f"{sts.metadata.name}-{ordinal}"
        spec_fields: dict[str, Any] = {"hostname": name}
        if sts.spec.service_name:
            spec_fields["subdomain"] = sts.spec.service_name
        claims = (sts.spec.extra or {}).get("volumeClaimTemplates")
        if isinstance(claims, list) and claims:
            spec_fields["volumes"] = _claim_volumes(template, claims, sts.metadata.name, ordinal)
        pod = pod_from_template(
            template,
            sts,
            name=name,
            labels={LABEL_POD_NAME: name, LABEL_POD_INDEX: str(ordinal), LABEL_REVISION_HASH: revision},
            spec_fields=spec_fields,
        )
        outcome = sim.create(pod)
        if isinstance(outcome, Rejection):
            message = f"create Pod {name} in StatefulSet {sts.metadata.name} failed error: {outcome.message}"
            sim.record(sts, "FailedCreate", message, type="Warning")
            return None
        sim.record(
            sts, "SuccessfulCreate", f"create Pod {name} in StatefulSet {sts.metadata.name} successful"
        )
        return outcome  # type: ignore[return-value]

    def _delete_pod(self, sts: StatefulSet, pod: Pod) -> None:
        sim = self.sim
        assert sim is not None
        sim.delete(Pod.KIND, pod.key)
        name = pod.metadata.name
        sim.record(
            sts, "SuccessfulDelete", f"delete Pod {name} in StatefulSet {sts.metadata.name} successful"
        )

    def _record_recreate(self, sts: StatefulSet, pod: Pod, failed: bool) -> None:
        sim = self.sim
        assert sim is not None
        reason, what = (
            ("RecreatingFailedPod", "failed") if failed else ("RecreatingTerminatedPod", "terminated")
        )
        where = f"{sts.namespace}/{sts.metadata.name}"
        message = f"StatefulSet {where} is recreating {what} Pod {pod.metadata.name}"
        sim.record(sts, reason, message, type="Warning")

    # ------------------------------------------------------------------ status
    def _update_status(self, key: str, current_rev: str, update_rev: str) -> None:
        """The counts, the revisions, and a finished rolling update made current; written only
        when changed."""
        sim = self.sim
        assert sim is not None
        sts = sim.cluster.get(StatefulSet.KIND, key)
        if not isinstance(sts, StatefulSet):
            return
        _, _, _, kind, _, min_ready = self._settings(sts)
        pods = [p for _, p in self._members(sts)]
        ready = [p for p in pods if is_running_and_ready(p)]
        live = [p for p in pods if not p.is_terminating]
        old = sts.status if isinstance(sts.status, Mapping) else {}
        status: dict[str, Any] = {
            "observedGeneration": sts.metadata.generation,
            "replicas": len(pods),
            "readyReplicas": len(ready),
            "currentReplicas": sum(1 for p in live if _revision(p) == current_rev),
            "updatedReplicas": sum(1 for p in live if _revision(p) == update_rev),
            "availableReplicas": sum(1 for p in ready if is_available(p, min_ready, sim.now, self.ready)),
            "currentRevision": current_rev,
            "updateRevision": update_rev,
            "collisionCount": old.get("collisionCount") or 0,
        }
        if (
            kind == "RollingUpdate"
            and status["updatedReplicas"] == status["replicas"] == status["readyReplicas"]
        ):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = update_rev
        if sts.status != status:
            updated = copy.copy(sts)  # only the status changes: share the rest
            updated.status = status
            sim.update(updated)


def _claim_volumes(template: Any, claims: list[Any], set_name: str, ordinal: int) -> list[Any]:
    """updateStorage: a volume per volumeClaimTemplate, on the claim ``<claim>-<set>-<ordinal>``
    (what the template's containers mount), then the template's own volumes of other names.
    The claims themselves are not modelled: their volumes make the pod valid."""
    names = [
        c["metadata"]["name"] for c in claims if isinstance(c, dict) and isinstance(c.get("metadata"), dict)
    ]
    volumes: list[Any] = [
        {"name": n, "persistentVolumeClaim": {"claimName": f"{n}-{set_name}-{ordinal}"}}
        for n in names
        if isinstance(n, str)
    ]
    own = (template.spec.extra or {}).get("volumes") or []
    volumes += [v for v in own if not (isinstance(v, dict) and v.get("name") in names)]
    return volumes
