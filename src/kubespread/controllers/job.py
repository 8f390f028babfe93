"""The Job controller: run pods until enough of them succeed.

Follows kube-controller-manager v1.35's syncJob/manageJob for NonIndexed and Indexed Jobs:
``parallelism`` (default 1) pods at once, never more than the completions still missing; with
``completions`` unset (and ``parallelism`` set: both unset default to 1 and 1) the Job is a work
queue, done once some pod has succeeded and none is left running. Pods that fail or are deleted
before succeeding count as failures: past ``backoffLimit`` (default 6) the Job fails, and each
replacement waits the pod-failure backoff (10 s doubling, at most 10 min). ``activeDeadlineSeconds``
fails the Job that runs longer. Finished pods stay (they hold nothing).

A pod has no program to run here: it succeeds ``kubespread.io/duration`` after it is bound
(``30s``, ``2m``, ``1h30m``, ``500ms`` or plain seconds, from the pod's annotations, i.e. its
template's); without one it runs until something else ends it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from kubespread.admission.framework import Rejection
from kubespread.api.apps import Job
from kubespread.api.core import Pod, PodCondition
from kubespread.api.duration import parse_duration
from kubespread.api.timestamps import virtual_seconds
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import (
    OwnedPods,
    ReadyTimes,
    Wakeups,
    create_with_slow_start,
    followed_pods,
    is_active,
    is_ready,
    owner_key,
    pod_from_template,
    spec_changed,
)
from kubespread.controllers.replicaset import deletion_order

if TYPE_CHECKING:
    from kubespread.controllers.host import Cancellable, ControllerHost

__all__ = [
    "ANNOTATION_DURATION",
    "LABEL_COMPLETION_INDEX",
    "LABEL_CONTROLLER_UID",
    "LABEL_JOB_NAME",
    "JobController",
]

#: how long a pod runs once bound, before it succeeds (kubespread's stand-in for its program)
ANNOTATION_DURATION: Final = "kubespread.io/duration"
LABEL_JOB_NAME: Final = "batch.kubernetes.io/job-name"
LABEL_CONTROLLER_UID: Final = "batch.kubernetes.io/controller-uid"
LABEL_LEGACY_JOB_NAME: Final = "job-name"
LABEL_LEGACY_CONTROLLER_UID: Final = "controller-uid"
LABEL_COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"
DEFAULT_BACKOFF_LIMIT: Final = 6
POD_FAILURE_BACKOFF: Final = 10.0
MAX_POD_FAILURE_BACKOFF: Final = 600.0
MAX_POD_CREATE_DELETE_PER_SYNC: Final = 500


def _conditions(job: Job) -> list[Mapping[str, Any]]:
    status = job.status if isinstance(job.status, Mapping) else {}
    conditions = status.get("conditions")
    return [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []


def _finished(job: Job) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in _conditions(job)
    )


def _index(pod: Pod) -> int | None:
    value = pod.metadata.annotations.get(LABEL_COMPLETION_INDEX)
    return int(value) if value is not None and value.isdigit() else None


def _ranges(indexes: set[int]) -> str:
    """status.completedIndexes: ``1,3-5,7``."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


class _Tally:
    """What a Job's pods did, by pod uid: kept after the pods are gone (the tracking finalizers
    and uncountedTerminatedPods of the real controller)."""

    def __init__(self) -> None:
        self.succeeded: set[str] = set()
        self.failed: set[str] = set()
        self.succeeded_indexes: set[int] = set()
        self.last_failure: float | None = None
        self.failures_since_success = 0


class JobController:
    """kube-controller-manager's job controller (no pod failure or success policies)."""

    name = "job"

    def __init__(self) -> None:
        self.sim: ControllerHost | None = None
        self.pods = OwnedPods(Job.KIND)
        self.ready = ReadyTimes()
        self._wakeups = Wakeups()
        self._tallies: dict[str, _Tally] = {}
        self._timers: dict[str, Cancellable] = {}

    def start(self, sim: ControllerHost) -> None:
        self.sim = sim
        followed = followed_pods(sim)
        self.pods, self.ready = followed.owned(Job.KIND), followed.ready()
        sim.cluster.subscribe(self._on_event, kinds=(Job.KIND, Pod.KIND))
        jobs_pods = [pod for pod in sim.cluster.pods.values() if owner_key(pod, Job.KIND)]
        for pod in sorted(jobs_pods, key=lambda p: p.key):  # a dump's other pods left unsorted
            self._account(pod)
            if pod.spec.node_name and is_active(pod):
                self._start_clock(pod)
        for key in sorted(sim.cluster.objects(Job.KIND)):
            sim.enqueue(self, key)

    def _on_event(self, event: ClusterEvent) -> None:
        sim = self.sim
        assert sim is not None
        if event.kind == Job.KIND:
            if spec_changed(event):
                sim.enqueue(self, event.obj.key)
            return
        if event.kind != Pod.KIND:
            return
        pod: Pod = event.obj
        key = owner_key(pod, Job.KIND)
        if key is None:
            return
        if event.type is EventType.BOUND and is_active(pod):
            self._start_clock(pod)
        elif event.type is EventType.DELETED or event.type is EventType.UNBOUND or not is_active(pod):
            timer = self._timers.pop(pod.metadata.uid, None)
            if timer is not None:
                timer.cancel()
        current = sim.cluster.pods.get(pod.key)
        self._account(current if current is not None else pod, deleted=current is None)
        sim.enqueue(self, key)

    # ------------------------------------------------------------------ pods running their course
    def _duration(self, pod: Pod) -> float | None:
        text = pod.metadata.annotations.get(ANNOTATION_DURATION)
        if text is None:
            sim = self.sim
            assert sim is not None
            key = owner_key(pod, Job.KIND)
            job = sim.cluster.get(Job.KIND, key) if key else None
            if isinstance(job, Job):
                text = job.spec.template.metadata.annotations.get(ANNOTATION_DURATION)
        return parse_duration(text) if text is not None else None

    def _start_clock(self, pod: Pod) -> None:
        sim = self.sim
        assert sim is not None
        duration = self._duration(pod)
        uid = pod.metadata.uid
        if duration is None or uid in self._timers:
            return
        key = pod.key

        def finish() -> None:
            self._timers.pop(uid, None)
            current = sim.cluster.pods.get(key)
            if (
                current is None
                or current.metadata.uid != uid
                or not current.spec.node_name
                or not is_active(current)
            ):
                return
            done = [
                PodCondition(type="PodScheduled", status="True"),
                PodCondition(type="Ready", status="False", reason="PodCompleted"),
            ]
            sim.set_pod_status(key, "Succeeded", conditions=done)

        self._timers[uid] = sim.after(duration, finish)

    # ------------------------------------------------------------------ counting
    def _tally(self, job_uid: str) -> _Tally:
        tally = self._tallies.get(job_uid)
        if tally is None:
            tally = self._tallies[job_uid] = _Tally()
        return tally

    def _account(self, pod: Pod, *, deleted: bool = False) -> None:
        """Count a pod that succeeded, failed, or went (Terminating or deleted) before succeeding."""
        sim = self.sim
        assert sim is not None
        ref = pod.metadata.controller_ref()
        if ref is None:
            return
        tally = self._tally(ref.uid)
        uid = pod.metadata.uid
        if uid in tally.succeeded or uid in tally.failed:
            return
        if pod.status.phase == "Succeeded":
            tally.succeeded.add(uid)
            index = _index(pod)
            if index is not None:
                tally.succeeded_indexes.add(index)
            tally.failures_since_success = 0
        elif pod.status.phase == "Failed" or pod.is_terminating or deleted:
            tally.failed.add(uid)
            tally.failures_since_success += 1
            tally.last_failure = sim.now

    # ------------------------------------------------------------------ sync
    def sync(self, key: str) -> None:
        sim = self.sim
        assert sim is not None
        job = sim.cluster.get(Job.KIND, key)
        if not isinstance(job, Job) or _finished(job):
            return
        from kubespread.api.timestamps import timestamp

        tally = self._tally(job.metadata.uid)
        status: dict[str, Any] = dict(job.status) if isinstance(job.status, Mapping) else {}
        if "startTime" not in status:
            status["startTime"] = timestamp(sim.now)
        started = virtual_seconds(status["startTime"])
        deadline = job.spec.active_deadline_seconds
        spec = job.spec
        backoff_limit = spec.backoff_limit if spec.backoff_limit is not None else DEFAULT_BACKOFF_LIMIT
        failure: tuple[str, str] | None = None
        if len(tally.failed) > backoff_limit:
            failure = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif deadline is not None and started is not None:
            if sim.now - started >= deadline:
                failure = ("DeadlineExceeded", "Job was active longer than specified deadline")
            else:
                self._wakeups.request(sim, self, key, started + deadline, settle=False)
        if failure is not None:
            self._fail(job, status, *failure)
        elif not self._complete(job, status, tally):
            self._manage(job, tally)
        self._write_status(key, status, tally)

    def _settings(self, job: Job) -> tuple[int, int | None, bool]:
        """(parallelism, completions, indexed) after the API's defaulting."""
        spec = job.spec
        parallelism = spec.parallelism if spec.parallelism is not None else 1
        completions = spec.completions
        if completions is None and spec.parallelism is None:
            completions = 1
        if (spec.extra or {}).get("suspend") is True:
            parallelism = 0
        return parallelism, completions, spec.completion_mode == "Indexed" and completions is not None

    def _complete(self, job: Job, status: dict[str, Any], tally: _Tally) -> bool:
        """Mark the Job Complete once enough pods succeeded and none is left running."""
        sim = self.sim
        assert sim is not None
        from kubespread.api.timestamps import timestamp

        _, completions, indexed = self._settings(job)
        pods = self.pods.pods(job.metadata.uid)
        if any(is_active(p) or (p.is_terminating and not p.is_finished) for p in pods):
            if not (completions is not None and self._done_count(tally, indexed) >= completions):
                return False
            self._delete(job, [p for p in pods if is_active(p)])
            return True
        if completions is None:
            done = bool(tally.succeeded)
        else:
            done = self._done_count(tally, indexed) >= completions
        if not done:
            return False
        now = timestamp(sim.now)
        status["conditions"] = [
            *_conditions(job),
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
        ]
        status["completionTime"] = now
        sim.record(job, "Completed", "Job completed")
        return True

    @staticmethod
    def _done_count(tally: _Tally, indexed: bool) -> int:
        return len(tally.succeeded_indexes) if indexed else len(tally.succeeded)

    def _fail(self, job: Job, status: dict[str, Any], reason: str, message: str) -> None:
        """Delete what still runs; the Job is Failed once none of its pods is left terminating."""
        sim = self.sim
        assert sim is not None
        pods = self.pods.pods(job.metadata.uid)
        self._delete(job, [p for p in pods if is_active(p)])
        conditions = _conditions(job)
        if not any(c.get("type") == "FailureTarget" for c in conditions):
            conditions.append(
                {"type": "FailureTarget", "status": "True", "reason": reason, "message": message}
            )
        if not any(p.is_terminating and not p.is_finished for p in self.pods.pods(job.metadata.uid)):
            conditions.append({"type": "Failed", "status": "True", "reason": reason, "message": message})
            sim.record(job, reason, message, type="Warning")
        status["conditions"] = conditions

    def _manage(self, job: Job, tally: _Tally) -> None:
        """manageJob: delete beyond what is wanted, create up to it (after the failure backoff)."""
        sim = self.sim
        assert sim is not None
        parallelism, completions, indexed = self._settings(job)
        active = [p for p in self.pods.pods(job.metadata.uid) if is_active(p)]
        if indexed:
            assert completions is not None
            active, to_create = self._indexed_plan(job, active, tally, parallelism, completions)
        else:
            if completions is None:
                want = len(active) if tally.succeeded else parallelism
            else:
                want = max(0, min(completions - len(tally.succeeded), parallelism))
            if len(active) > want:
                surplus = deletion_order(active, [], sim.now, self.ready)[: len(active) - want]
                self._delete(job, surplus)
                active = [p for p in active if p not in surplus]
            to_create = [None] * max(0, want - len(active))
        if not to_create:
            return
        if tally.last_failure is not None and tally.failures_since_success > 0:
            wait = min(POD_FAILURE_BACKOFF * 2 ** (tally.failures_since_success - 1), MAX_POD_FAILURE_BACKOFF)
            if tally.last_failure + wait > sim.now:
                self._wakeups.request(sim, self, job.key, tally.last_failure + wait, settle=False)
                return
        self._create(job, to_create[:MAX_POD_CREATE_DELETE_PER_SYNC])

    def _indexed_plan(
        self, job: Job, active: list[Pod], tally: _Tally, parallelism: int, completions: int
    ) -> tuple[list[Pod], list[int | None]]:
        """Keep one active pod per index still to do (lowest first, within parallelism); the
        indexes to start next."""
        keep: dict[int, Pod] = {}
        surplus: list[Pod] = []
        for pod in sorted(active, key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name)):
            index = _index(pod)
            if index is None or index >= completions or index in tally.succeeded_indexes or index in keep:
                surplus.append(pod)
            else:
                keep[index] = pod
        want = max(0, min(parallelism, completions - len(tally.succeeded_indexes)))
        for index in sorted(keep, reverse=True)[: max(0, len(keep) - want)]:
            surplus.append(keep.pop(index))
        self._delete(job, surplus)
        missing = [i for i in range(completions) if i not in tally.succeeded_indexes and i not in keep]
        return list(keep.values()), list(missing[: max(0, want - len(keep))])

    def _create(self, job: Job, indexes: list[int | None]) -> None:
        sim = self.sim
        assert sim is not None
        labels = {
            LABEL_CONTROLLER_UID: job.metadata.uid,
            LABEL_JOB_NAME: job.metadata.name,
            LABEL_LEGACY_CONTROLLER_UID: job.metadata.uid,
            LABEL_LEGACY_JOB_NAME: job.metadata.name,
        }
        pods = []
        for index in indexes:
            if index is None:
                pods.append(
                    pod_from_template(
                        job.spec.template, job, generate_name=f"{job.metadata.name}-", labels=labels
                    )
                )
                continue
            pods.append(
                pod_from_template(
                    job.spec.template,
                    job,
                    generate_name=f"{job.metadata.name}-{index}-",
                    labels={**labels, LABEL_COMPLETION_INDEX: str(index)},
                    annotations={LABEL_COMPLETION_INDEX: str(index)},
                    spec_fields={"hostname": f"{job.metadata.name}-{index}"},
                )
            )

        def created(pod: Pod) -> None:
            sim.record(job, "SuccessfulCreate", f"Created pod: {pod.metadata.name}")

        def failed(pod: Pod, rejection: Rejection) -> None:
            sim.record(job, "FailedCreate", f"Error creating: {rejection.message}", type="Warning")

        create_with_slow_start(sim, pods, on_created=created, on_failed=failed)

    def _delete(self, job: Job, pods: list[Pod]) -> None:
        sim = self.sim
        assert sim is not None
        for pod in pods[:MAX_POD_CREATE_DELETE_PER_SYNC]:
            sim.delete(Pod.KIND, pod.key)
            sim.record(job, "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")

    def _write_status(self, key: str, status: dict[str, Any], tally: _Tally) -> None:
        """The counts as they now are; written only when changed."""
        sim = self.sim
        assert sim is not None
        job = sim.cluster.get(Job.KIND, key)
        if not isinstance(job, Job):
            return
        pods = self.pods.pods(job.metadata.uid)
        active = [p for p in pods if is_active(p)]
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_ready(p))
        status["terminating"] = sum(1 for p in pods if p.is_terminating and not p.is_finished)
        status["succeeded"] = len(tally.succeeded)
        status["failed"] = len(tally.failed)
        if self._settings(job)[2]:
            status["completedIndexes"] = _ranges(tally.succeeded_indexes)
        if job.status != status:
            updated = copy.copy(job)  # only the status changes: share the rest
            updated.status = status
            sim.update(updated)
