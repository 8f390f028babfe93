"""The Job controller: parallelism and completions over virtual time, the work-queue form,
Indexed Jobs, failures with backoff and a limit, the active deadline."""

from __future__ import annotations

from typing import Any

import pytest

from builders import cluster_of, make_node
from kubespread.api.apps import Job
from kubespread.api.duration import parse_duration
from kubespread.controllers.job import (
    ANNOTATION_DURATION,
    LABEL_COMPLETION_INDEX,
    LABEL_CONTROLLER_UID,
    LABEL_JOB_NAME,
    JobController,
)
from kubespread.sim.engine import Simulation


def job(duration: str | None = "30s", **spec: Any) -> Job:
    meta: dict[str, Any] = {"labels": {"app": "batch"}}
    if duration is not None:
        meta["annotations"] = {ANNOTATION_DURATION: duration}
    return Job.from_dict(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "crunch", "namespace": "default"},
            "spec": {
                "template": {
                    "metadata": meta,
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
                },
                **spec,
            },
        }
    )


def simulation() -> Simulation:
    return Simulation(cluster_of([make_node("n1"), make_node("n2")]), controllers=[JobController()])


def status(sim: Simulation) -> dict[str, Any]:
    return sim.cluster.get("Job", "default/crunch").status


def phases(sim: Simulation) -> list[str]:
    return sorted(p.status.phase for p in sim.cluster.pods.values())


def conditions(sim: Simulation) -> list[str]:
    return [c["type"] for c in status(sim).get("conditions", [])]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("2m", 120), ("1h", 3600), ("1m30s", 90), ("250ms", 0.25), ("45", 45), ("1.5", 1.5)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "10d", "-5", "5 s", "m"])
def test_bad_durations(text: str) -> None:
    assert parse_duration(text) is None


def test_parallelism_two_completions_four_finishes_after_two_rounds() -> None:
    sim = simulation()
    created = sim.create(job(parallelism=2, completions=4))
    assert isinstance(created, Job)
    sim.run_until_quiet()  # pods run for 30 s: long timers are not waited for
    assert phases(sim) == ["Running", "Running"]
    pod = next(iter(sim.cluster.pods.values()))
    assert pod.metadata.name.startswith("crunch-")
    assert pod.metadata.labels[LABEL_JOB_NAME] == "crunch"
    assert pod.metadata.labels[LABEL_CONTROLLER_UID] == created.metadata.uid
    assert pod.metadata.labels["job-name"] == "crunch" and pod.metadata.labels["app"] == "batch"
    sim.advance(30)
    assert phases(sim) == ["Running", "Running", "Succeeded", "Succeeded"]
    sim.advance(29)
    assert status(sim)["succeeded"] == 2 and "Complete" not in conditions(sim)
    sim.advance(1)
    assert phases(sim) == ["Succeeded"] * 4  # finished pods stay
    st = status(sim)
    assert (st["succeeded"], st["active"], st["failed"]) == (4, 0, 0)
    assert "Complete" in conditions(sim)
    assert st["completionTime"] == "2026-01-01T00:01:00Z"
    assert [e.message for e in sim.events if e.reason == "Completed"] == ["Job completed"]
    assert len([e for e in sim.events if e.reason == "SuccessfulCreate"]) == 4
    sim.advance(600)
    assert len(sim.cluster.pods) == 4


def test_both_unset_means_one_pod_once() -> None:
    sim = simulation()
    sim.create(job())
    sim.advance(30)
    assert phases(sim) == ["Succeeded"]
    assert "Complete" in conditions(sim)


def test_without_completions_the_first_success_stops_new_pods() -> None:
    sim = simulation()
    sim.create(job(duration=None, parallelism=3))
    sim.run_until_quiet()
    keys = sorted(sim.cluster.pods)
    assert len(keys) == 3
    sim.set_pod_status(keys[0], "Succeeded")
    sim.run_until_quiet()
    assert len(sim.cluster.pods) == 3  # no replacement: the others finish the queue
    assert "Complete" not in conditions(sim)
    sim.set_pod_status(keys[1], "Succeeded")
    sim.set_pod_status(keys[2], "Failed")
    sim.run_until_quiet()
    assert len(sim.cluster.pods) == 3
    assert "Complete" in conditions(sim)


def test_pods_without_a_duration_run_forever() -> None:
    sim = simulation()
    sim.create(job(duration=None))
    sim.advance(10 * 24 * 3600)
    assert phases(sim) == ["Running"]


def test_indexed_job_runs_each_index_once() -> None:
    sim = simulation()
    sim.create(job(parallelism=2, completions=3, completionMode="Indexed"))
    sim.run_until_quiet()
    first = sorted(p.metadata.annotations[LABEL_COMPLETION_INDEX] for p in sim.cluster.pods.values())
    assert first == ["0", "1"]
    pod = sim.cluster.pods[next(k for k in sim.cluster.pods)]
    index = pod.metadata.labels[LABEL_COMPLETION_INDEX]
    assert pod.metadata.name.startswith(f"crunch-{index}-")
    assert pod.to_dict()["spec"]["hostname"] == f"crunch-{index}"
    sim.advance(60)
    indexes = sorted(p.metadata.annotations[LABEL_COMPLETION_INDEX] for p in sim.cluster.pods.values())
    assert indexes == ["0", "1", "2"]
    assert status(sim)["completedIndexes"] == "0-2"
    assert "Complete" in conditions(sim)


def test_failures_back_off_then_exhaust_the_limit() -> None:
    sim = simulation()
    sim.create(job(duration=None, backoffLimit=1))
    sim.run_until_quiet()
    (first,) = sim.cluster.pods
    sim.set_pod_status(first, "Failed")
    sim.advance(9)
    assert len(sim.cluster.pods) == 1  # the replacement waits the 10 s pod-failure backoff
    sim.advance(1)
    assert len(sim.cluster.pods) == 2
    second = next(k for k in sim.cluster.pods if k != first)
    sim.set_pod_status(second, "Failed")
    sim.run_until_quiet()
    assert len(sim.cluster.pods) == 2
    assert conditions(sim) == ["FailureTarget", "Failed"]
    failures = [e for e in sim.events if e.reason == "BackoffLimitExceeded"]
    assert [(e.type, e.message) for e in failures] == [
        ("Warning", "Job has reached the specified backoff limit")
    ]
    assert status(sim)["failed"] == 2


def test_a_deleted_pod_counts_as_failed_and_is_replaced() -> None:
    sim = simulation()
    sim.create(job(duration=None))
    sim.run_until_quiet()
    (first,) = sim.cluster.pods
    sim.delete("Pod", first)
    sim.advance(1)
    assert status(sim)["failed"] == 1
    sim.advance(10)
    live = [p for p in sim.cluster.pods.values() if not p.is_terminating]
    assert len(live) == 1 and live[0].key != first


def test_active_deadline_fails_the_job_and_stops_its_pods() -> None:
    sim = simulation()
    sim.create(job(duration=None, parallelism=2, completions=2, activeDeadlineSeconds=100))
    sim.advance(99)
    assert phases(sim) == ["Running", "Running"]
    sim.advance(1)
    assert all(p.is_terminating for p in sim.cluster.pods.values())
    sim.advance(30)
    assert sim.cluster.pods == {}
    assert conditions(sim) == ["FailureTarget", "Failed"]
    assert [e.message for e in sim.events if e.reason == "DeadlineExceeded"] == [
        "Job was active longer than specified deadline"
    ]
