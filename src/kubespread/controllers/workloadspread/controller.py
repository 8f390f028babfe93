"""The WorkloadSpread controller: the half of WorkloadSpread that runs beside the cluster.

A sync of one WorkloadSpread (syncWorkloadSpread):

1. finds the target workload's pods and groups them by subset: the subset their
   ``apps.kruise.io/matched-workloadspread`` annotation names or, for a running pod without
   one, the subset its node falls in (the pod is then annotated, as Kruise does);
2. sets each pod's ``controller.kubernetes.io/pod-deletion-cost`` by the proposal's rules, so
   that a scale-down removes a subset's surplus first (Deployment, ReplicaSet, CloneSet);
3. recomputes each subset's status from its active pods: ``replicas``, ``missingReplicas``
   (the bound minus active pods and pods still being created, never below 0; -1 unbounded),
   ``creatingPods``/``deletingPods`` entries the pods have not confirmed yet, dropped after
   their timeout;
4. under Adaptive with ``rescheduleCriticalSeconds``: a subset (not the last) with a pod still
   Pending and Unschedulable that long after its creation is marked unschedulable
   (``subsetUnscheduledStatus``: time, failedCount) and those pods are deleted, so their
   workload recreates them and the webhook puts them in the next subset; the mark is lifted
   after the recovery window (10 minutes);
5. writes the status (with the resourceVersion it read; a Conflict means another sync) and
   asks to be woken for the next deadline among 3 and 4.
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING, Final

from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST, ANNOTATION_WORKLOADSPREAD
from kubespread.api.kruise import (
    CloneSet,
    WorkloadSpread,
    WorkloadSpreadStatus,
    WorkloadSpreadSubset,
    WorkloadSpreadSubsetStatus,
    WorkloadSpreadSubsetUnscheduledStatus,
)
from kubespread.api.meta import KubeObject
from kubespread.api.patch import PatchError, strategic_merge_patch
from kubespread.api.timestamps import timestamp, virtual_seconds
from kubespread.cluster.errors import Conflict
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import ReadyTimes, Wakeups, followed_pods, is_active, spec_changed
from kubespread.controllers.replicaset import deletion_order
from kubespread.controllers.workloadspread.options import WorkloadSpreadOptions
from kubespread.controllers.workloadspread.subsets import (
    WORKLOAD_KINDS,
    Matched,
    group_of,
    matched_subset,
    owner_chain_reaches,
    pod_selected,
    subset_max,
    subset_node_score,
    workload_of,
    workload_replicas,
    workload_spreads_in,
)

if TYPE_CHECKING:
    from kubespread.controllers.host import ControllerHost

__all__ = ["NO_SUBSET", "WorkloadSpreadController", "deletion_costs"]

#: the group of pods that belong to no subset (Kruise's FakeSubsetName)
NO_SUBSET: Final = ""
POSITIVE_COST: Final = 100
NEGATIVE_COST: Final = -100
_COST_KINDS: Final = frozenset({Deployment.KIND, ReplicaSet.KIND, CloneSet.KIND})
#: the kinds whose events the controller reads: pods, WorkloadSpreads and the workloads
_KINDS: Final = frozenset({Pod.KIND, WorkloadSpread.KIND, *(kind for _, kind in WORKLOAD_KINDS)})


def deletion_costs(
    ws: WorkloadSpread,
    groups: dict[str, list[Pod]],
    replicas: int,
    now: float,
    ready: ReadyTimes | None = None,
    *,
    graded: bool = False,
) -> dict[str, int]:
    """pod key → its deletion cost (updateDeletionCostBySubset), for active pods.

    The proposal's four rules: 100 for a subset within its maxReplicas; 0 for an unbounded
    subset; over maxReplicas, -100 for the surplus (the pods controller.ActivePods would delete
    first) and 100 for the rest; -100 for pods of no subset. ``graded``: OpenKruise's
    costs instead, 100·(n-i) and -100·(i+1) for subset i of n (unbounded subsets positive), so
    later subsets shrink first."""
    n = len(ws.spec.subsets)
    costs: dict[str, int] = {}
    subsets: list[tuple[int, WorkloadSpreadSubset | None]] = list(enumerate(ws.spec.subsets))
    subsets.append((n, None))
    for index, subset in subsets:
        pods = [p for p in groups.get(subset.name if subset else NO_SUBSET, []) if is_active(p)]
        positive = POSITIVE_COST * (n - index) if graded else POSITIVE_COST
        negative = NEGATIVE_COST * (index + 1) if graded else NEGATIVE_COST
        if subset is None:
            costs.update((p.key, negative) for p in pods)
            continue
        bound = subset_max(subset, replicas)
        if bound is None:
            costs.update((p.key, positive if graded else 0) for p in pods)
        elif len(pods) <= bound:
            costs.update((p.key, positive) for p in pods)
        else:
            order = deletion_order(pods, [], now, ready, use_cost=False)
            surplus = len(pods) - bound
            costs.update((p.key, negative if i < surplus else positive) for i, p in enumerate(order))
    return costs


def _pending_since(pod: Pod) -> bool:
    """GetTimeBeforePendingTimeout's test: Pending, unbound, not deleted, and the scheduler
    said Unschedulable."""
    if pod.is_terminating or pod.spec.node_name or (pod.status.phase or "Pending") != "Pending":
        return False
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
        for c in pod.status.conditions
    )


class WorkloadSpreadController:
    """Reconciles WorkloadSpreads (see the module docstring); reacts to WorkloadSpreads, the
    pods of their workloads and the workloads themselves (a replica change moves percentages)."""

    name = "workloadspread"

    def __init__(self, options: WorkloadSpreadOptions | None = None) -> None:
        self.options = options or WorkloadSpreadOptions()
        self.sim: ControllerHost | None = None
        self.ready = ReadyTimes()
        self._wakeups = Wakeups()
        self._deferred: set[str] = set()

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        self.ready = followed_pods(sim).ready()
        sim.cluster.subscribe(self._on_event, kinds=_KINDS)
        for key in sorted(sim.cluster.objects(WorkloadSpread.KIND)):
            sim.enqueue(self, key)

    def _get(self, kind: str, key: str) -> KubeObject | None:
        assert self.sim is not None
        return self.sim.cluster.get(kind, key)

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if not sim.cluster.objects(WorkloadSpread.KIND):
            return
        obj = event.obj
        if event.kind == WorkloadSpread.KIND:
            if event.type is EventType.DELETED:
                return
            if spec_changed(event):
                sim.enqueue(self, obj.key)
            else:
                self._soon(obj.key)  # a status write (the webhook's, its own)
            return
        namespace = obj.namespace
        if event.kind == Pod.KIND:
            for pod in (obj, event.old):
                if pod is None:
                    continue
                matched = matched_subset(pod)
                if matched is not None:
                    self._soon(f"{namespace}/{matched.name}")
                    continue
                ref = pod.metadata.controller_ref()
                for ws in workload_spreads_in(sim.cluster, namespace):
                    target = ws.spec.target_ref
                    if target is not None and owner_chain_reaches(target, ref, namespace, self._get):
                        self._soon(ws.key)
        elif (group_of(obj.API_VERSION), event.kind) in WORKLOAD_KINDS and spec_changed(event):
            # at once: a new replica count moves percentages before the workload creates pods
            for ws in workload_spreads_in(sim.cluster, namespace):
                target = ws.spec.target_ref
                if target is not None and target.kind == event.kind and target.name == obj.metadata.name:
                    sim.enqueue(self, ws.key)

    def _soon(self, key: str) -> None:
        """Sync once the burst of changes under way now is over (a zero-delay settling timer,
        which fires when nothing else is left to do at this instant): a sync reads every pod of
        the workload, and the webhook keeps the counts right meanwhile. Without this, a rollout
        of n pods costs n syncs of n pods each."""
        sim = self.sim
        assert sim is not None
        if key in self._deferred:
            return
        self._deferred.add(key)

        def fire() -> None:
            self._deferred.discard(key)
            sim.enqueue(self, key)

        sim.after(0, fire, settle=True)

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        ws = sim.cluster.get(WorkloadSpread.KIND, key)
        if not isinstance(ws, WorkloadSpread) or ws.metadata.deletion_timestamp or ws.spec.target_ref is None:
            return
        workload = workload_of(ws, self._get)
        replicas = workload_replicas(workload, ws)
        pods = self._pods_of(ws)
        groups = self._group(ws, pods, replicas)
        target = ws.spec.target_ref
        if workload is not None and target.kind in _COST_KINDS:
            self._set_costs(ws, groups, replicas)
        statuses, unschedulable_pods = self._statuses(ws, groups, replicas)
        status = WorkloadSpreadStatus(observed_generation=ws.metadata.generation, subset_statuses=statuses)
        if status.to_dict() != ws.status.to_dict():
            updated = copy.copy(ws)
            updated.status = status
            try:
                sim.update(updated, precondition=True)
            except Conflict:
                sim.enqueue(self, key)  # the webhook wrote meanwhile: start again from its state
                return
        for subset_name, victims in unschedulable_pods:
            for pod in victims:
                sim.delete_pod(pod.key)
                sim.record(
                    ws,
                    "RescheduleUnschedulablePod",
                    f"Deleted pod {pod.metadata.name}: unschedulable in subset {subset_name} for "
                    f"{self._critical(ws)}s; its workload recreates it in another subset",
                )

    def _pods_of(self, ws: WorkloadSpread) -> list[Pod]:
        """The target's pods: those whose controller is the target or reaches it, and that its
        targetFilter selects."""
        sim = self.sim
        assert sim is not None and ws.spec.target_ref is not None
        namespace = ws.namespace
        target = ws.spec.target_ref
        pods = sim.cluster.pods_in_namespace(namespace)
        return [
            pods[k]
            for k in sorted(pods)
            if owner_chain_reaches(target, pods[k].metadata.controller_ref(), namespace, self._get)
            and pod_selected(ws, pods[k])
        ]

    def _group(self, ws: WorkloadSpread, pods: list[Pod], replicas: int) -> dict[str, list[Pod]]:
        """groupPodBySubset: by the annotation; a running pod without one joins the subset its
        node fits best (and is annotated); the rest belong to no subset."""
        sim = self.sim
        assert sim is not None
        groups: dict[str, list[Pod]] = {s.name: [] for s in ws.spec.subsets}
        groups[NO_SUBSET] = []
        missing = {s.name: subset_max(s, replicas) for s in ws.spec.subsets}
        unmarked = []
        for pod in pods:
            m = matched_subset(pod)
            if m is not None and m.name == ws.metadata.name and m.subset in groups:
                groups[m.subset].append(pod)
                bound = missing[m.subset]
                if bound is not None:
                    missing[m.subset] = bound - 1
            else:
                unmarked.append(pod)
        for pod in unmarked:
            subset = self._adopt(ws, pod, missing)
            groups[subset.name if subset is not None else NO_SUBSET].append(
                sim.cluster.pods.get(pod.key, pod)
            )
        return groups

    def _adopt(
        self, ws: WorkloadSpread, pod: Pod, missing: dict[str, int | None]
    ) -> WorkloadSpreadSubset | None:
        """getAndUpdateSuitableSubsetName: the best-scoring subset the pod's node fits, the
        first of equals; the pod gets the subset's patch metadata and the annotation."""
        sim = self.sim
        assert sim is not None
        node = sim.cluster.nodes.get(pod.spec.node_name) if pod.spec.node_name else None
        if node is None:
            return None
        best: WorkloadSpreadSubset | None = None
        best_score = -1
        for subset in ws.spec.subsets:
            left = missing[subset.name]
            score = subset_node_score(pod, node, subset, 1 if left is None else left)
            if score is not None and score > best_score:
                best, best_score = subset, score
        if best is None:
            return None
        bound = missing[best.name]
        if bound is not None:
            missing[best.name] = bound - 1
        meta = pod.to_dict()["metadata"]
        patch_meta = best.patch.get("metadata") if isinstance(best.patch, dict) else None
        if isinstance(patch_meta, dict):
            with contextlib.suppress(PatchError):
                meta = strategic_merge_patch(meta, patch_meta)
        updated = copy.copy(pod)
        updated.metadata = copy.copy(pod.metadata)
        updated.metadata.labels = dict(meta.get("labels") or {})
        updated.metadata.annotations = {
            **(meta.get("annotations") or {}),
            ANNOTATION_WORKLOADSPREAD: Matched(ws.metadata.name, best.name).to_json(),
        }
        sim.update(updated)
        return best

    def _set_costs(self, ws: WorkloadSpread, groups: dict[str, list[Pod]], replicas: int) -> None:
        sim = self.sim
        assert sim is not None
        costs = deletion_costs(ws, groups, replicas, sim.now, self.ready, graded=self.options.graded_costs)
        for key in sorted(costs):
            pod = sim.cluster.pods.get(key)
            if pod is None:
                continue
            value = str(costs[key])
            old = pod.metadata.annotations.get(ANNOTATION_POD_DELETION_COST)
            if old == value or (old is None and value == "0"):
                continue
            updated = copy.copy(pod)
            updated.metadata = copy.copy(pod.metadata)
            updated.metadata.annotations = {**pod.metadata.annotations, ANNOTATION_POD_DELETION_COST: value}
            sim.update(updated)

    # ------------------------------------------------------------------ status
    def _critical(self, ws: WorkloadSpread) -> int:
        """rescheduleCriticalSeconds when rescheduling is on (Adaptive), else 0."""
        strategy = ws.spec.schedule_strategy
        if strategy.type != "Adaptive" or strategy.adaptive is None:
            return 0
        return strategy.adaptive.reschedule_critical_seconds or 0

    def _statuses(
        self, ws: WorkloadSpread, groups: dict[str, list[Pod]], replicas: int
    ) -> tuple[list[WorkloadSpreadSubsetStatus], list[tuple[str, list[Pod]]]]:
        old_by_name = {s.name: s for s in ws.status.subset_statuses}
        critical = self._critical(ws)
        out: list[WorkloadSpreadSubsetStatus] = []
        reschedule: list[tuple[str, list[Pod]]] = []
        last = len(ws.spec.subsets) - 1
        for i, subset in enumerate(ws.spec.subsets):
            old = old_by_name.get(subset.name)
            status = self._subset_status(ws, subset, groups[subset.name], old, replicas)
            unscheduled = old.subset_unscheduled_status if old is not None else None
            if critical > 0 and i != last:
                failed = self._timed_out(ws, groups[subset.name], critical)
                unscheduled = self._unschedulable_state(ws, subset, unscheduled, bool(failed))
                if failed:
                    reschedule.append((subset.name, failed))
            elif critical > 0 and unscheduled is not None and unscheduled.unschedulable:
                unscheduled = WorkloadSpreadSubsetUnscheduledStatus(
                    unschedulable=False,
                    unscheduled_time=unscheduled.unscheduled_time,
                    failed_count=unscheduled.failed_count,
                )
            elif critical <= 0:
                unscheduled = None
            status.subset_unscheduled_status = unscheduled.copy() if unscheduled is not None else None
            out.append(status)
        return out, reschedule

    def _subset_status(
        self,
        ws: WorkloadSpread,
        subset: WorkloadSpreadSubset,
        pods: list[Pod],
        old: WorkloadSpreadSubsetStatus | None,
        replicas: int,
    ) -> WorkloadSpreadSubsetStatus:
        """calculateWorkloadSpreadSubsetStatus."""
        sim = self.sim
        assert sim is not None
        now = sim.now
        bound = subset_max(subset, replicas)
        limit = -1 if bound is None else bound
        missing = limit
        creating = dict(old.creating_pods) if old is not None else {}
        deleting_before = old.deleting_pods if old is not None else {}
        deleting: dict[str, str] = {}
        active = 0
        for pod in pods:
            m = matched_subset(pod)
            creating.pop(m.uid if m is not None and m.uid else pod.metadata.name, None)
            if not is_active(pod):
                continue
            active += 1
            if missing > 0:
                missing -= 1
            stamp = deleting_before.get(pod.metadata.name)
            if stamp is not None:
                due = (virtual_seconds(stamp) or 0.0) + self.options.delete_timeout_seconds
                if due <= now:
                    sim.record(
                        ws,
                        "DeletePodFailed",
                        f"Pod {pod.key} was expected to be deleted but it wasn't",
                        type="Warning",
                    )
                else:
                    deleting[pod.metadata.name] = stamp
                    if missing < limit:
                        missing += 1
                    self._wake(ws, due)
        kept: dict[str, str] = {}
        for name, stamp in sorted(creating.items()):
            due = (virtual_seconds(stamp) or 0.0) + self.options.create_timeout_seconds
            if due <= now:
                sim.record(
                    ws,
                    "CreatePodFailed",
                    f"Pod {ws.namespace}/{name} was expected to be created but it wasn't",
                    type="Warning",
                )
                continue
            kept[name] = stamp
            if missing > 0:
                missing -= 1
            self._wake(ws, due)
        return WorkloadSpreadSubsetStatus(
            name=subset.name,
            replicas=active,
            missing_replicas=missing,
            creating_pods=kept,
            deleting_pods=deleting,
        )

    def _timed_out(self, ws: WorkloadSpread, pods: list[Pod], critical: int) -> list[Pod]:
        """Pods pending (Unschedulable) for ``critical`` seconds since their creation; wakes the
        sync for the others' deadlines."""
        sim = self.sim
        assert sim is not None
        out = []
        for pod in pods:
            if not _pending_since(pod):
                continue
            due = (virtual_seconds(pod.metadata.creation_timestamp) or 0.0) + critical
            if due <= sim.now:
                out.append(pod)
            else:
                self._wake(ws, due)
        return out

    def _unschedulable_state(
        self,
        ws: WorkloadSpread,
        subset: WorkloadSpreadSubset,
        old: WorkloadSpreadSubsetUnscheduledStatus | None,
        failing: bool,
    ) -> WorkloadSpreadSubsetUnscheduledStatus | None:
        """rescheduleSubset: marked when pods time out (failedCount counts the marks); lifted
        once the recovery window has passed without new failures."""
        sim = self.sim
        assert sim is not None
        count = old.failed_count if old is not None else 0
        if failing:
            if old is not None and old.unschedulable:
                return old
            sim.record(
                ws,
                "SubsetUnschedulable",
                f"Subset {subset.name} of WorkloadSpread {ws.key} is unschedulable for "
                f"{self.options.recovery:g}s",
                type="Warning",
            )
            self._wake(ws, sim.now + self.options.recovery)
            return WorkloadSpreadSubsetUnscheduledStatus(
                unschedulable=True, unscheduled_time=timestamp(sim.now), failed_count=count + 1
            )
        if old is None or not old.unschedulable:
            return old
        due = (virtual_seconds(old.unscheduled_time) or 0.0) + self.options.recovery
        if due <= sim.now:
            sim.record(
                ws,
                "RecoverSchedulable",
                f"Subset {subset.name} of WorkloadSpread {ws.key} is recovered from unschedulable "
                "to schedulable",
            )
            return WorkloadSpreadSubsetUnscheduledStatus(
                unschedulable=False, unscheduled_time=old.unscheduled_time, failed_count=count
            )
        self._wake(ws, due)
        return old

    def _wake(self, ws: WorkloadSpread, due: float) -> None:
        """A deadline (timeouts, rescheduling, recovery): long timers, fired while time advances."""
        sim = self.sim
        assert sim is not None
        self._wakeups.request(sim, self, ws.key, due, settle=False)
