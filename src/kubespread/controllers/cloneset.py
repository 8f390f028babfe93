"""A minimal OpenKruise CloneSet controller (apps.kruise.io/v1alpha1): keep ``spec.replicas``
active pods, delete the ones named in ``spec.scaleStrategy.podsToDelete``, and on scale-down
honour ``controller.kubernetes.io/pod-deletion-cost``.

A sync does at most one of these, in the order of Kruise's ``Scale`` (pkg/controller/cloneset/
sync/cloneset_scale.go): create the missing pods; else delete the CloneSet's pods listed in
podsToDelete (which still count as replicas until they are gone, so their replacements come in
the next sync); else delete the surplus. The pods and cluster events that follow queue the next
sync. A pod is the CloneSet's when its controller ownerReference names it (by uid) and the
selector still selects it; nothing is adopted. New pods are named ``<cloneset>-<instance id>``,
the id (5 characters of utilrand's alphabet) also set as the ``apps.kruise.io/cloneset-instance-id``
label, as Kruise does.

Scale-down victims are ranked by kube's :func:`~kubespread.controllers.replicaset.deletion_order`
(with all the CloneSet's active pods as the related pods, Kruise's SameNodeRanker). Kruise's own
ActivePodsWithRanks differs in two ways we do not reproduce: it compares ready and creation times
exactly rather than on kube's log2 scale (LogarithmicScaleDown), and it asks whether a pod is
available (minReadySeconds) where kube asks whether it is ready.

Limits, beyond what the model does not carry: no update of any kind (a template change only
affects pods created afterwards; existing pods stay as they are; no revisions, partition or
maxSurge); no deletion limit from updateStrategy.maxUnavailable, no scale-up limit from
scaleStrategy.maxUnavailable; no lifecycle hooks, PVCs, ``apps.kruise.io/specified-delete``
label or topology-spread ranker. Deleting the CloneSet needs nothing here: the simulation
deletes its pods with it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Final

from kubespread.admission.framework import Rejection
from kubespread.api.core import Pod
from kubespread.api.kruise import CloneSet
from kubespread.controllers.pods import (
    PodOwnerController,
    SelectorCache,
    create_with_slow_start,
    is_active,
    is_available,
    is_ready,
    pod_from_template,
)
from kubespread.controllers.replicaset import deletion_order

if TYPE_CHECKING:
    pass

__all__ = ["LABEL_CLONESET_INSTANCE_ID", "CloneSetController"]

#: appsv1alpha1.CloneSetInstanceID: the id a CloneSet's pod is named after
LABEL_CLONESET_INSTANCE_ID: Final = "apps.kruise.io/cloneset-instance-id"


class CloneSetController(PodOwnerController):
    """Kruise's cloneset controller, reduced to scaling (Scale without update, lifecycle or PVCs)."""

    name = "cloneset"
    kind = CloneSet.KIND

    def __init__(self) -> None:
        super().__init__()
        self._selectors = SelectorCache()

    # ------------------------------------------------------------------ pods
    def _active(self, cs: CloneSet) -> list[Pod]:
        """getOwnedResource: the active pods it controls and still selects (nothing is adopted)."""
        selector = self._selectors.of(cs)
        return [
            p for p in self.pods.pods(cs.metadata.uid) if is_active(p) and selector.matches(p.metadata.labels)
        ]

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        cs = sim.cluster.get(CloneSet.KIND, key)
        if not isinstance(cs, CloneSet) or cs.metadata.deletion_timestamp:
            return
        active = self._active(cs)
        want = cs.spec.replicas if cs.spec.replicas is not None else 1  # Kruise's defaulting
        named = set(cs.spec.scale_strategy.pods_to_delete) if cs.spec.scale_strategy else set()
        specified = [p for p in active if p.metadata.name in named]
        if len(active) < want:
            self._create(cs, want - len(active), active, named)
        elif specified:
            self._delete(cs, specified)
        elif len(active) > want:
            self._delete(cs, deletion_order(active, active, sim.now, self.ready, first=len(active) - want))
        self._update_status(cs.key)

    def _instance_ids(self, cs: CloneSet, count: int, active: list[Pod], named: set[str]) -> list[str]:
        """getOrGenAvailableIDs without PVCs: fresh ids, unused by its pods. A name already taken
        in the cluster (a Terminating pod) or listed in podsToDelete is drawn again, so the new
        pod is neither refused nor deleted at once."""
        sim = self.sim
        assert sim is not None
        prefix = f"{cs.metadata.name}-"
        taken = {p.metadata.labels.get(LABEL_CLONESET_INSTANCE_ID) for p in active}
        ids: list[str] = []
        while len(ids) < count:
            name = sim.generate_name(prefix, cs.metadata.namespace)
            instance_id = name[len(prefix) :]
            if instance_id not in taken and name not in named:
                taken.add(instance_id)
                ids.append(instance_id)
        return ids

    def _create(self, cs: CloneSet, count: int, active: list[Pod], named: set[str]) -> None:
        sim = self.sim
        assert sim is not None
        pods = [
            pod_from_template(
                cs.spec.template,
                cs,
                name=f"{cs.metadata.name}-{instance_id}",
                labels={LABEL_CLONESET_INSTANCE_ID: instance_id},
            )
            for instance_id in self._instance_ids(cs, count, active, named)
        ]

        def created(pod: Pod) -> None:
            sim.record(cs, "SuccessfulCreate", f"succeed to create pod {pod.metadata.name}")

        def failed(pod: Pod, rejection: Rejection) -> None:
            message = f"failed to create pod: {rejection.message}, pod: {pod.metadata.name}"
            sim.record(cs, "FailedCreate", message, type="Warning")

        create_with_slow_start(sim, pods, on_created=created, on_failed=failed)

    def _delete(self, cs: CloneSet, victims: list[Pod]) -> None:
        sim = self.sim
        assert sim is not None
        for pod in victims:
            sim.delete(Pod.KIND, pod.key)
            sim.record(cs, "SuccessfulDelete", f"succeed to delete pod {pod.metadata.name}")

    def _update_status(self, key: str) -> None:
        """calculateStatus, reduced to counts; written only when it changed, so a status write
        does not loop."""
        sim = self.sim
        assert sim is not None
        cs = sim.cluster.get(CloneSet.KIND, key)
        if not isinstance(cs, CloneSet):
            return
        min_ready = cs.spec.min_ready_seconds
        active = self._active(cs)
        ready = [p for p in active if is_ready(p)]
        waiting = [p for p in ready if not is_available(p, min_ready, sim.now, self.ready)]
        self._wakeups.when_available(sim, self, key, waiting, min_ready, self.ready)
        status = {
            "replicas": len(active),
            "readyReplicas": len(ready),
            "availableReplicas": len(ready) - len(waiting),
            "observedGeneration": cs.metadata.generation,
        }
        if cs.status != status:
            updated = copy.copy(cs)  # only the status changes: share the rest
            updated.status = status
            sim.update(updated)
