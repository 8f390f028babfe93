"""The WorkloadSpread webhook: what runs inside the API server's admission of pods.

On a pod's creation it picks the subset (the proposal's "Pod creation" steps), books the pod
in that subset's ``creatingPods`` and takes one from ``missingReplicas`` with an update that
carries the resourceVersion it read (read again and retried on a 409 Conflict), then injects
the subset into the pod; a pod whose owner chain leads to a workload that does not exist is
refused, as Kruise's webhook refuses it. On a deletion or an eviction it books the pod in
``deletingPods`` and gives the subset one back; when a pod finishes (Succeeded/Failed) it gives
one back too.

It also validates WorkloadSpreads against what only the cluster knows: no two may target the
same workload, and each subset's patch must make a valid pod of the workload's template.

The webhook reads and writes through a :class:`WorkloadSpreadClient`, so the same code serves
the simulation and, later, a real API server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from kubespread.admission.defaults import apply_defaults
from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.core import Pod
from kubespread.api.errors import FieldError, Path
from kubespread.api.kruise import (
    WorkloadSpread,
    WorkloadSpreadSubset,
    WorkloadSpreadSubsetStatus,
)
from kubespread.api.meta import KubeObject
from kubespread.api.patch import PatchError
from kubespread.api.resources import pod_requests
from kubespread.api.validation import validate
from kubespread.api.validation.kruise import with_claim_volumes
from kubespread.cluster.errors import Conflict
from kubespread.cluster.state import ClusterState
from kubespread.controllers.pods import is_active, pod_from_template
from kubespread.controllers.workloadspread.options import WorkloadSpreadOptions
from kubespread.controllers.workloadspread.subsets import (
    MissingOwner,
    group_of,
    inject,
    matched_subset,
    pod_selected,
    reference_equal,
    subset_max,
    workload_of,
    workload_replicas,
    workload_spreads_in,
)
from kubespread.scheduler.predicates import fits_resources, node_filter

__all__ = ["WEBHOOK_NAME", "WorkloadSpreadClient", "WorkloadSpreadWebhook", "subset_statuses"]

WEBHOOK_NAME: Final = "WorkloadSpread"
#: retry.DefaultBackoff's steps: how many times a conflicting status update is tried
CONFLICT_RETRIES: Final = 5


class WorkloadSpreadClient(Protocol):
    """What the webhook reads and writes: the cluster as its informers see it, the clock, and
    WorkloadSpread status updates that fail with Conflict when the object changed meanwhile."""

    @property
    def cluster(self) -> ClusterState: ...

    def now(self) -> float: ...

    def stamp(self, seconds: float) -> str: ...

    def update_status(self, ws: WorkloadSpread) -> None: ...

    def get(self, kind: str, key: str) -> KubeObject | None:
        """The object as stored now (a live client may read through its cache to the API)."""
        ...


def subset_statuses(ws: WorkloadSpread, replicas: int) -> list[WorkloadSpreadSubsetStatus]:
    """The status of each subset in spec order (copies, safe to change): the recorded one, or a
    fresh one whose missingReplicas is the subset's bound (-1: unbounded)."""
    recorded = {s.name: s for s in ws.status.subset_statuses}
    out = []
    for subset in ws.spec.subsets:
        old = recorded.get(subset.name)
        if old is not None:
            out.append(old.copy())
        else:
            bound = subset_max(subset, replicas)
            out.append(
                WorkloadSpreadSubsetStatus(name=subset.name, missing_replicas=-1 if bound is None else bound)
            )
    return out


def _unschedulable(status: WorkloadSpreadSubsetStatus) -> bool:
    u = status.subset_unscheduled_status
    return u is not None and u.unschedulable


class WorkloadSpreadWebhook:
    """Mutating (pod creation) and validating (pod deletion, eviction and status; WorkloadSpread
    creation and update) admission plugin."""

    name = WEBHOOK_NAME
    operations = (Operation.CREATE, Operation.UPDATE, Operation.DELETE)
    subresources = ("", "eviction", "status")

    def __init__(
        self,
        client: WorkloadSpreadClient,
        options: WorkloadSpreadOptions | None = None,
        *,
        cluster_lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self.client = client
        self.options = options or WorkloadSpreadOptions()
        #: held while reading ``client.cluster`` directly: a live cache is changed by its
        #: watches' threads while reviews are answered on others
        self.cluster_lock: AbstractContextManager[Any] = cluster_lock or contextlib.nullcontext()
        #: status updates refused with a Conflict and retried (for tests and reports)
        self.conflicts = 0

    def _get(self, kind: str, key: str) -> KubeObject | None:
        return self.client.get(kind, key)

    # ------------------------------------------------------------------ creation
    def mutate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | None:
        if not isinstance(obj, Pod) or ctx.operation is not Operation.CREATE or ctx.subresource:
            return None
        ws = self.workload_spread_for(obj)
        if ws is None or isinstance(ws, Rejection):
            return ws
        (subset_name,) = self.acquire_many(ws.key, [(ws, obj)])
        return self.inject_subset(obj, ws, subset_name)

    def inject_subset(
        self, pod: Pod, ws: WorkloadSpread, subset_name: str | Rejection | None
    ) -> Rejection | None:
        """Put the pod into the subset :meth:`acquire_many` booked it in (in place)."""
        if isinstance(subset_name, Rejection):
            return subset_name
        if subset_name is None:
            return None  # no subset left: the pod goes as it is
        subset = next((s for s in ws.spec.subsets if s.name == subset_name), None)
        if subset is None:  # the spec changed between the pod's search and its booking
            return None
        try:
            injected = inject(pod, ws, subset)
        except PatchError as e:
            return Rejection(
                500,
                "InternalError",
                f'admission webhook "{WEBHOOK_NAME}" failed to inject subset {subset_name}: {e}',
            )
        pod.metadata = injected.metadata
        pod.spec = injected.spec
        return None

    def workload_spread_for(self, pod: Pod) -> WorkloadSpread | Rejection | None:
        """HandlePodCreation's search: the first WorkloadSpread (by name) of the pod's namespace,
        not being deleted, that selects the pod (targetFilter) and whose target the pod's
        controller is or reaches; None for pods
        without a controller, not active, or of no WorkloadSpread. Walking a WorkloadSpread's
        chain to an owner that does not exist refuses the pod (500, Kruise's NotFound), so its
        creator retries once the owner is there, rather than admitting it unbooked."""
        ref = pod.metadata.controller_ref()
        if ref is None or not is_active(pod):
            return None
        namespace = pod.namespace
        with self.cluster_lock:  # a snapshot: the owner walk below may call the API
            spreads = workload_spreads_in(self.client.cluster, namespace)
        for ws in spreads:
            target = ws.spec.target_ref
            if target is None or ws.metadata.deletion_timestamp or not pod_selected(ws, pod):
                continue
            found = reference_equal(target, ref, namespace, self._get)
            if isinstance(found, MissingOwner):
                return Rejection(
                    500,
                    "InternalError",
                    f'admission webhook "{WEBHOOK_NAME}" denied the request: {found.message}',
                )
            if found:
                return ws
        return None

    def _choose(
        self, ws: WorkloadSpread, pod: Pod, statuses: list[WorkloadSpreadSubsetStatus]
    ) -> WorkloadSpreadSubsetStatus | None:
        """getSuitableSubset: the first subset not unschedulable that still misses pods (or is
        unbounded) and, under Adaptive, whose nodes can take the pod."""
        strategy = ws.spec.schedule_strategy
        adaptive = strategy.type == "Adaptive"
        check = (
            adaptive
            and self.options.resource_check
            and not (strategy.adaptive is not None and strategy.adaptive.disable_simulation_schedule)
        )
        by_name = {s.name: s for s in ws.spec.subsets}
        for status in statuses:
            if _unschedulable(status):
                continue
            if status.missing_replicas > 0 or status.missing_replicas == -1:
                if check and not self._fits(pod, ws, by_name[status.name]):
                    continue
                return status
        return None

    def _fits(self, pod: Pod, ws: WorkloadSpread, subset: WorkloadSpreadSubset) -> bool:
        """The proposal's simulation schedule, kept simple as it says: some node the subset's
        rules admit (node selector and required affinity, taints) has room for the pod's
        requests and one more pod."""
        try:
            candidate = inject(pod, ws, subset)
        except PatchError:
            return False
        admits = node_filter(candidate)
        request = pod_requests(candidate)
        cluster = self.client.cluster
        with self.cluster_lock:
            return any(
                admits(cluster.nodes[info.name]) and fits_resources(request, info)
                for info in cluster.node_infos()
            )

    def acquire_many(
        self, key: str, pods: Sequence[tuple[WorkloadSpread, Pod]]
    ) -> list[str | Rejection | None]:
        """acquireSuitableSubset for several pods of WorkloadSpread ``key`` at once, in order:
        each is booked in the subset it would get after the ones before it, and all of them
        with one optimistic status update (re-read and redone after every Conflict). Why: a
        burst of creations costs one read and one write instead of one each per pod. Each pod
        is paired with the WorkloadSpread it was found under (its spec picks the subset)."""
        if not pods:
            return []
        ws = pods[0][0]
        if len(ws.spec.subsets) == 1 and ws.spec.subsets[0].max_replicas is None:
            return [ws.spec.subsets[0].name] * len(pods)  # nothing to count
        for _ in range(CONFLICT_RETRIES):
            read = self._read(key)
            if read is None:
                return [None] * len(pods)
            current, statuses = read
            chosen = [self._book(found, pod, statuses) for found, pod in pods]
            if not any(booked for _, booked in chosen) or self._write(current, statuses):
                return [name for name, _ in chosen]
        return [self._gave_up(ws)] * len(pods)

    def _book(
        self, ws: WorkloadSpread, pod: Pod, statuses: list[WorkloadSpreadSubsetStatus]
    ) -> tuple[str | None, bool]:
        """The subset for one pod and whether ``statuses`` changed (booked in creatingPods,
        missingReplicas taken)."""
        name = pod.metadata.name
        for status in statuses:
            if name in status.creating_pods or name in status.deleting_pods:
                return status.name, False  # already booked (a retried request)
        chosen = self._choose(ws, pod, statuses)
        if chosen is None:
            return None, False
        if chosen.missing_replicas == -1:
            return chosen.name, False
        chosen.creating_pods = {**chosen.creating_pods, name: self.client.stamp(self.client.now())}
        if chosen.missing_replicas > 0:
            chosen.missing_replicas -= 1
        return chosen.name, True

    def _read(self, key: str) -> tuple[WorkloadSpread, list[WorkloadSpreadSubsetStatus]] | None:
        """The WorkloadSpread as stored now and its subsets' statuses (copies to change)."""
        current = self._get(WorkloadSpread.KIND, key)
        if not isinstance(current, WorkloadSpread):
            return None
        return current, subset_statuses(current, workload_replicas(workload_of(current, self._get), current))

    def _write(self, ws: WorkloadSpread, statuses: list[WorkloadSpreadSubsetStatus]) -> bool:
        updated = ws.copy()
        updated.status.subset_statuses = statuses
        try:
            self.client.update_status(updated)
        except Conflict:
            self.conflicts += 1
            return False
        return True

    def _gave_up(self, ws: WorkloadSpread) -> Rejection:
        return Rejection(
            409,
            "Conflict",
            f'admission webhook "{WEBHOOK_NAME}": WorkloadSpread {ws.key} kept changing; '
            f"gave up after {CONFLICT_RETRIES} conflicting updates",
        )

    # ------------------------------------------------------------------ deletion, status, validation
    def validate(self, obj: KubeObject, ctx: AdmissionContext) -> Rejection | list[FieldError] | None:
        if isinstance(obj, WorkloadSpread):
            if ctx.operation in (Operation.CREATE, Operation.UPDATE) and not ctx.subresource:
                return self._validate_workload_spread(obj)
            return None
        if not isinstance(obj, Pod):
            return None
        if ctx.operation is Operation.DELETE and not ctx.subresource:
            return self._give_back(ctx.old if isinstance(ctx.old, Pod) else obj, deleting=True)
        if ctx.operation is Operation.CREATE and ctx.subresource == "eviction":
            return self._give_back(ctx.old if isinstance(ctx.old, Pod) else obj, deleting=True)
        if ctx.operation is Operation.UPDATE and ctx.subresource == "status" and self.options.count_finished:
            old = ctx.old
            if isinstance(old, Pod) and not old.is_finished and obj.is_finished:
                return self._give_back(old, deleting=False)
        return None

    def _booked_spread(self, pod: Pod) -> tuple[WorkloadSpread, str] | None:
        matched = matched_subset(pod)
        if matched is None or not is_active(pod) or pod.metadata.controller_ref() is None:
            return None
        ws = self._get(WorkloadSpread.KIND, f"{pod.namespace}/{matched.name}")
        return (ws, matched.subset) if isinstance(ws, WorkloadSpread) else None

    def _give_back(self, pod: Pod, *, deleting: bool) -> Rejection | None:
        """The subset gets the pod's place back (missingReplicas + 1): HandlePodDeletion for a
        deletion or an eviction (``deleting``: booked in deletingPods, once), the proposal's
        "Update Pod Status" for a pod that ran to its end (``pod`` is it before the update)."""
        booked = self._booked_spread(pod)
        if booked is None:
            return None
        ws, subset = booked
        name = pod.metadata.name
        for _ in range(CONFLICT_RETRIES):
            read = self._read(ws.key)
            if read is None:
                return None
            current, statuses = read
            if deleting and any(name in s.creating_pods or name in s.deleting_pods for s in statuses):
                return None
            status = next((s for s in statuses if s.name == subset), None)
            if status is None or status.missing_replicas == -1:
                return None
            if deleting:
                status.deleting_pods = {**status.deleting_pods, name: self.client.stamp(self.client.now())}
            status.missing_replicas += 1
            if self._write(current, statuses):
                return None
        return self._gave_up(ws)

    def _validate_workload_spread(self, ws: WorkloadSpread) -> list[FieldError]:
        """What the cluster decides: a workload has at most one WorkloadSpread, and each
        subset's patch applied to the workload's pod template (a volume per volumeClaimTemplate
        added, as Kruise's withVolumeClaimTemplates does) gives a valid pod."""
        errs: list[FieldError] = []
        target = ws.spec.target_ref
        if target is None:
            return errs
        spec_path = Path("spec")
        namespace = ws.namespace
        with self.cluster_lock:
            others = workload_spreads_in(self.client.cluster, namespace)
        for other in others:
            if other.metadata.name == ws.metadata.name or other.spec.target_ref is None:
                continue
            t = other.spec.target_ref
            if (group_of(t.api_version), t.kind, t.name) == (
                group_of(target.api_version),
                target.kind,
                target.name,
            ):
                errs.append(
                    FieldError.invalid(
                        spec_path.child("targetRef"),
                        target.to_dict(),
                        f"ws.spec.targetRef is in conflict with other WorkloadSpread {other.metadata.name}",
                    )
                )
        workload = workload_of(ws, self._get)
        template = getattr(getattr(workload, "spec", None), "template", None)
        if workload is None or template is None:
            return errs
        # a CloneSet's or StatefulSet's containers may mount what only a claim provides
        template = with_claim_volumes(template, (workload.spec.extra or {}).get("volumeClaimTemplates"))  # type: ignore[attr-defined]
        for i, subset in enumerate(ws.spec.subsets):
            if not isinstance(subset.patch, dict) or not subset.patch:
                continue
            path = spec_path.child("subsets").index(i).child("patch")
            pod = pod_from_template(template, workload, name=f"{workload.metadata.name}-check")
            apply_defaults(pod)
            try:
                patched = inject(pod, ws, subset)
            except PatchError as e:
                errs.append(FieldError.invalid(path, subset.patch, f"failed to merge patch: {e}"))
                continue
            for problem in validate(patched):
                errs.append(FieldError.invalid(path, subset.patch, f"the patched pod is invalid: {problem}"))
        return errs
