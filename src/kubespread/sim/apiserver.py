"""The in-memory API server: what a write to the cluster goes through before it is stored.

Objects enter through :meth:`ApiServer.create` (generateName, the admission chain, a uid,
creationTimestamp and resourceVersion; a refused object is never stored) and leave through
:meth:`ApiServer.delete`, which is graceful for pods (Terminating, deletionTimestamp set; the
kubelet stand-in removes them when their grace period ends) and cascades to dependents by
ownerReferences, as the garbage collector would. Every write gets a new resourceVersion and an
update may carry a precondition on it (409 Conflict when someone wrote in between).

Determinism: generated names and uids draw from generators seeded by the simulation's seed.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Callable, Iterable
from typing import Final, Protocol

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.chain import DEFAULT_CHAIN, AdmissionChain
from kubespread.admission.framework import AdmissionContext, AdmissionOptions, Operation, Rejection
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod, PodCondition, PodStatus
from kubespread.api.meta import NAME_ALPHABET, KubeObject
from kubespread.api.timestamps import timestamp
from kubespread.cluster.errors import ClusterError, Conflict, PodLimitExceeded, SimulationError
from kubespread.cluster.state import OBJECT_KINDS, ClusterState
from kubespread.controllers.disruption import check_eviction

__all__ = ["DEFAULT_GRACE_SECONDS", "ApiServer", "PodKiller"]

DEFAULT_GRACE_SECONDS: Final = 30
#: the DisruptionTarget reason the eviction subresource writes
EVICTION_REASON: Final = "EvictionByEvictionAPI"


class PodKiller(Protocol):
    """Who stops a Terminating pod's containers and confirms the deletion (the kubelet)."""

    def kill(self, pod: Pod, grace_seconds: float) -> None: ...

    def forget(self, key: str) -> None: ...


class ApiServer:
    """Admission, names, uids, resourceVersions, graceful deletion and garbage collection over
    one :class:`~kubespread.cluster.state.ClusterState`. ``now`` reads the clock; ``killer``
    ends Terminating pods (set by the host once its kubelet exists)."""

    def __init__(
        self,
        cluster: ClusterState,
        *,
        now: Callable[[], float],
        seed: int = 0,
        options: AdmissionOptions | None = None,
        max_pods: int | None = None,
    ) -> None:
        self.cluster = cluster
        #: pods that may exist at once (None: no limit); a create beyond raises PodLimitExceeded
        self.max_pods = max_pods
        self._now = now
        self.options = options or AdmissionOptions()
        self.chain: AdmissionChain = DEFAULT_CHAIN
        self.killer: PodKiller | None = None
        self.rng = random.Random(f"kubespread-names-{seed}")
        self._uid_rng = random.Random(f"kubespread-uids-{seed}")
        #: the uids in use, gathered on the first one generated (see ``_new_uid``)
        self._uids: set[str] | None = None
        self._resource_version = 0

    # ------------------------------------------------------------------ admission
    def admission_context(
        self, operation: Operation = Operation.CREATE, *, subresource: str = "", old: KubeObject | None = None
    ) -> AdmissionContext:
        namespaces = self.cluster.namespaces
        classes = self.cluster.objects(PriorityClass.KIND).values()
        return AdmissionContext.create(
            operation=operation,
            subresource=subresource,
            old=old,
            priority_classes=[c for c in classes if isinstance(c, PriorityClass)],
            namespaces=list(namespaces) if namespaces else None,
            options=self.options,
        )

    def admit_change(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        """Admission of an update, a delete, an eviction or a status update: the validating
        plugins that handle it (webhooks watching pods and WorkloadSpreads) may refuse it; the
        built-in ones here look at creates only."""
        return self.chain.validate(obj, ctx)

    # ------------------------------------------------------------------ identity
    def generate_name(self, prefix: str, namespace: str = "", kind: str = "Pod") -> str:
        """``prefix`` + 5 random characters (the API server's generateName), unique."""
        while True:
            name = prefix + "".join(self.rng.choice(NAME_ALPHABET) for _ in range(5))
            key = f"{namespace or 'default'}/{name}" if namespace or kind == "Pod" else name
            if self.cluster.get(kind, key) is None:
                return name

    def _new_uid(self) -> str:
        """A uid no object of the cluster has. The draws are seeded, so a dump this simulator
        wrote holds the very uids a simulation with the same seed draws next: taking one again
        would make a new ReplicaSet the owner of an old one's pods (owner references match by
        uid). The uids in use are gathered once, when the first is drawn (a dump is loaded
        before anything is created)."""
        if self._uids is None:
            cluster = self.cluster
            objs: list[KubeObject] = [
                *cluster.namespaces.values(),
                *cluster.nodes.values(),
                *cluster.pods.values(),
            ]
            for cls in OBJECT_KINDS:
                objs += cluster.objects(cls.KIND).values()
            self._uids = {o.metadata.uid for o in objs if o.metadata.uid}
        while True:
            uid = str(uuid.UUID(int=self._uid_rng.getrandbits(128), version=4))
            if uid not in self._uids:
                self._uids.add(uid)
                return uid

    def _stamp(self, obj: KubeObject) -> None:
        meta = obj.metadata
        if not meta.uid:  # random, as the API server's: scale-down breaks ties by uid (KEP-2185)
            meta.uid = self._new_uid()
        if not meta.creation_timestamp:
            meta.creation_timestamp = timestamp(self._now())
        meta.generation = meta.generation or 1
        self._next_resource_version(obj)

    def _next_resource_version(self, obj: KubeObject) -> None:
        """A new resourceVersion at every write."""
        self._resource_version += 1
        obj.metadata.resource_version = str(self._resource_version)

    # ------------------------------------------------------------------ writes
    def create(self, obj: KubeObject) -> KubeObject | Rejection:
        """Defaulting, admission, validation; the object (changed in place) is stored, or the
        refusal is returned and nothing is. PodLimitExceeded when a pod would exceed ``max_pods``
        (the run's guard against runaway work, not an API answer: a controller would retry a
        refusal forever)."""
        if self.max_pods is not None and isinstance(obj, Pod) and len(self.cluster.pods) >= self.max_pods:
            raise PodLimitExceeded(self.max_pods)
        if not obj.metadata.name and obj.metadata.generate_name:
            obj.metadata.name = self.generate_name(
                obj.metadata.generate_name, obj.metadata.namespace, obj.KIND
            )
        outcome = admit_create(obj, self.admission_context(), self.chain)
        if isinstance(outcome, Rejection):
            return outcome
        if self.cluster.get(obj.KIND, obj.key) is not None:
            name = obj.metadata.name
            return Rejection(409, "AlreadyExists", f'{obj.KIND.lower()}s "{name}" already exists')
        self._stamp(obj)
        if isinstance(obj, Pod) and obj.spec.node_name and not obj.status.phase:
            obj.status.phase = "Running"  # bound at creation: its kubelet starts it
        try:
            self.cluster.add(obj)
        except ClusterError as e:
            return Rejection(422, "Invalid", str(e))
        return obj

    def update(self, obj: KubeObject, *, precondition: bool = False) -> None:
        """Store a changed object (a copy the caller made; stored objects are not edited in place).
        ``precondition``: the write of a client that read ``obj`` at its resourceVersion and must
        not overwrite a newer one; raises :class:`~kubespread.cluster.errors.Conflict` if it is
        no longer current."""
        if precondition:
            stored = self.cluster.get(obj.KIND, obj.key)
            if stored is None:
                raise Conflict(f"{obj.KIND} {obj.key} no longer exists")
            if stored.metadata.resource_version != obj.metadata.resource_version:
                raise Conflict(
                    f'Operation cannot be fulfilled on {obj.KIND.lower()}s "{obj.metadata.name}": '
                    "the object has been modified; please apply your changes to the latest version "
                    "and try again"
                )
        obj.metadata = copy.copy(obj.metadata)  # a shallow copy may share it with the stored object
        self._next_resource_version(obj)
        self.cluster.update(obj)

    def set_pod_status(
        self,
        key: str,
        phase: str,
        *,
        conditions: Iterable[PodCondition] | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """A status update (kubelet's, or the scheduler's condition and nomination): phase, and
        conditions and status.nominatedNodeName when given. A change of phase passes admission
        as an update of pods/status."""
        pod = self.cluster.pods[key]
        updated = copy.copy(pod)
        updated.status = PodStatus(
            phase=phase,
            conditions=list(conditions) if conditions is not None else list(pod.status.conditions),
            nominated_node_name=(
                pod.status.nominated_node_name if nominated_node_name is None else nominated_node_name
            ),
            start_time=pod.status.start_time,
        )
        if phase != pod.status.phase:
            self.admit_change(
                updated, self.admission_context(Operation.UPDATE, subresource="status", old=pod)
            )
        self.cluster.update_pod(updated)

    # ------------------------------------------------------------------ deletion
    def delete(self, kind: str, key: str, *, grace_seconds: float | None = None) -> None:
        """Delete an object; pods gracefully, dependents (by ownerReferences) with it."""
        if kind == Pod.KIND:
            self.delete_pod(key, grace_seconds=grace_seconds)
            return
        obj = self.cluster.get(kind, key)
        if obj is None:
            raise SimulationError(f"{kind} {key} not found")
        uid = obj.metadata.uid
        self.cluster.delete(kind, key)
        if uid:
            self._delete_dependents(uid)

    def _delete_dependents(self, uid: str) -> None:
        """The garbage collector: what the deleted object owned goes with it."""
        owned = [
            p for p in self.cluster.pods.values() if any(r.uid == uid for r in p.metadata.owner_references)
        ]
        for pod in sorted(owned, key=lambda p: p.key):  # the dependents only, by key
            self.delete_pod(pod.key)
        for cls in OBJECT_KINDS:
            store = self.cluster.objects(cls.KIND)
            dependents = [o for o in store.values() if any(r.uid == uid for r in o.metadata.owner_references)]
            for obj in sorted(dependents, key=lambda o: o.key):
                self.delete(cls.KIND, obj.key)

    def delete_pod(
        self, key: str, *, grace_seconds: float | None = None, subresource: str = ""
    ) -> Rejection | None:
        """Graceful deletion: the pod is Terminating (deletionTimestamp set; controllers no
        longer count it, the scheduler still does for resources and affinity) until the kubelet
        confirms the kill. A pending pod, or grace 0, goes at once. The request passes
        admission first (``subresource="eviction"`` for an eviction, which the API server admits
        as a create of pods/eviction); a refusal is returned and nothing changes."""
        pod = self.cluster.pods.get(key)
        if pod is None:
            return None
        if pod.is_terminating:
            if grace_seconds == 0:
                self.remove_pod(key)
            return None
        if subresource:
            ctx = self.admission_context(Operation.CREATE, subresource=subresource, old=pod)
        else:
            ctx = self.admission_context(Operation.DELETE, old=pod)
        refused = self.admit_change(pod, ctx)
        if refused is not None:
            return refused
        self._delete_admitted(pod, grace_seconds)
        return None

    def evict_pod(
        self,
        key: str,
        *,
        grace_seconds: float | None = None,
        before_delete: Callable[[Pod], None] | None = None,
    ) -> Rejection | None:
        """The pods/eviction subresource (eviction.go): admission of the eviction (a create of
        pods/eviction), then the PodDisruptionBudget check
        (:func:`~kubespread.controllers.disruption.check_eviction`: 429 when it would break the
        budget, 500 for a pod under several), the granted disruption booked in the PDB's status,
        the pod's DisruptionTarget condition (EvictionByEvictionAPI), and a graceful deletion.
        ``before_delete(pod)`` runs once the eviction is granted (the caller's Event). A pod
        gone or already terminating: nothing to do."""
        pod = self.cluster.pods.get(key)
        if pod is None or pod.is_terminating:
            return None
        ctx = self.admission_context(Operation.CREATE, subresource="eviction", old=pod)
        refused = self.admit_change(pod, ctx)
        if refused is not None:
            return refused
        refused, booked = check_eviction(self.cluster, pod, self._now())
        if refused is not None:
            return refused
        if booked is not None:
            self.update(booked)  # the status write comes before the deletion
        if before_delete is not None:
            before_delete(pod)
        marked = pod.with_disruption_target(EVICTION_REASON, "Eviction API: evicting")
        self.update(marked)
        self._delete_admitted(marked, grace_seconds)
        return None

    def _delete_admitted(self, pod: Pod, grace_seconds: float | None) -> None:
        """The deletion itself, once admitted: Terminating with a deletionTimestamp, or gone."""
        key = pod.key
        if grace_seconds is None:
            spec_grace = pod.spec.termination_grace_period_seconds
            grace_seconds = DEFAULT_GRACE_SECONDS if spec_grace is None else spec_grace
        if not pod.spec.node_name or grace_seconds <= 0 or pod.is_finished:
            self.remove_pod(key)
            return
        terminating = copy.copy(pod)
        terminating.metadata = copy.copy(pod.metadata)
        terminating.metadata.deletion_timestamp = timestamp(self._now() + grace_seconds)
        terminating.metadata.deletion_grace_period_seconds = int(grace_seconds)
        self.cluster.update_pod(terminating)
        if self.killer is not None:
            self.killer.kill(pod, grace_seconds)

    def remove_pod(self, key: str) -> None:
        """The pod object goes (the kubelet confirmed the kill, or there was nothing to kill)."""
        if self.killer is not None:
            self.killer.forget(key)
        if key in self.cluster.pods:
            self.cluster.delete_pod(key)
