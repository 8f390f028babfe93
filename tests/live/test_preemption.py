"""Preemption in the live scheduler over the in-memory FakeApi: the victims are the ones
``kubespread schedule`` names offline (one decision, one set of rules: the loop's
``after_failure``), each gets the DisruptionTarget condition then a delete naming its uid and a
Preempted Event, the preemptor gets status.nominatedNodeName and binds to that node once they
are gone; a failed victim write drops the nomination; lower nominations there are cleared; the
metrics count attempts and victims."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from builders import make_node, make_pod
from kubespread.io.loader import load_data
from kubespread.live import informer
from kubespread.live.metrics import SchedulerMetrics
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.scheduler import queue as queue_module
from kubespread.scheduler.config import default_profile
from kubespread.sim.placement import place
from live.fake_api import FakeApi
from live.test_scheduler import OURS, drive, node_of, pod_condition, stopped

ZONES = {"n-a": "a", "n-b": "b", "n-c": "c"}


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue_module, "INITIAL_BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(queue_module, "MAX_BACKOFF_SECONDS", 0.05)
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)


def low(name: str, node: str, cpu: str = "400m", priority: int = 0) -> dict[str, Any]:
    return (
        make_pod(name)
        .set("spec.schedulerName", "default-scheduler")
        .set("spec.priority", priority)
        .label("app", "batch")
        .req(cpu=cpu)
        .node(node)
        .dict()
    )


def high(name: str, cpu: str = "700m", priority: int = 1000) -> dict[str, Any]:
    return (
        make_pod(name)
        .set("spec.schedulerName", OURS)
        .set("spec.priority", priority)
        .label("app", "web")
        .req(cpu=cpu)
        .dict()
    )


def full_cluster(*extra: dict[str, Any]) -> FakeApi:
    """Three 1-CPU nodes, one per zone, each holding two 400m low-priority pods (the one of
    n-b with a higher priority, so n-a and n-c are the cheaper candidates)."""
    api = FakeApi()
    for name, zone in ZONES.items():
        api.create(make_node(name).zone(zone).capacity(cpu="1").dict())
    for node in ZONES:
        for i in range(2):
            api.create(low(f"{node}-low-{i}", node, priority=50 if node == "n-b" else 0))
    for obj in extra:
        api.create(obj)
    return api


def offline(api: FakeApi) -> dict[str, tuple[str, list[str]]]:
    """``kubespread schedule``'s answer on the same objects: preemptor -> (node, victims)."""
    items = [o for kind in ("Node", "Pod") for o in api.list(kind)[0]]
    placement = place(load_data(items, "cluster fake"), profiles={OURS: default_profile()})
    return {
        p.pod: (str(p.nominated_node), sorted(f"{v.namespace}/{v.name}" for v in p.victims))
        for p in placement.preemptions
    }


def started(
    api: FakeApi, stop: threading.Event, metrics: SchedulerMetrics | None = None
) -> SecondaryScheduler:
    sched = SecondaryScheduler(api, {OURS: default_profile()}, stop=stop, identity="test-1", metrics=metrics)
    sched.start(timeout=2.0)
    return sched


def test_victims_are_marked_deleted_and_the_preemptor_binds_where_schedule_says(
    stop: threading.Event,
) -> None:
    api = full_cluster(high("vip"))
    expected = offline(api)
    assert list(expected) == ["default/vip"]
    node, victims = expected["default/vip"]
    assert len(victims) == 2 and all(v.startswith(f"default/{node}-low-") for v in victims)

    marked: dict[str, dict[str, Any] | None] = {}
    for v in victims:  # what each victim carried when its delete was sent
        name = v.split("/")[1]
        api.before_next(
            f"delete Pod {v}",
            lambda n=name, k=v: marked.__setitem__(k, pod_condition(api, n, "DisruptionTarget")),
        )
    metrics = SchedulerMetrics()
    sched = started(api, stop, metrics)
    assert drive(sched, lambda: node_of(api, "vip") != "", timeout=5.0)
    stopped(sched)

    assert node_of(api, "vip") == node
    gone = sorted(
        f"default/{p['metadata']['name']}" for p in api.objects_of("Pod") if "-low-" in p["metadata"]["name"]
    )
    assert sorted(set(f"default/{n}-low-{i}" for n in ZONES for i in range(2)) - set(gone)) == victims
    for v in victims:
        cond = marked[v]
        assert cond is not None
        assert (cond["status"], cond["reason"]) == ("True", "PreemptionByScheduler")
        assert cond["message"] == f"{OURS}: preempting to accommodate a higher priority pod"
    # the status patch comes before the delete, for each victim
    calls = [c for c in api.calls if c.startswith(("patch Pod", "delete Pod"))]
    for v in victims:
        assert calls.index(f"patch Pod {v} status") < calls.index(f"delete Pod {v}")
    uid = api.stored("Pod", "default/vip")["metadata"]["uid"]
    preempted = api.events("Preempted")
    assert sorted(f"default/{e['regarding']['name']}" for e in preempted) == victims
    assert {e["note"] for e in preempted} == {f"Preempted by pod {uid} on node {node}"}
    assert {e["type"] for e in preempted} == {"Normal"}
    # bound only after its victims were deleted (its nomination write may be skipped when the
    # room is free before that write's turn: the pod is assumed bound by then)
    binding = api.calls.index("request POST /api/v1/namespaces/default/pods/vip/binding")
    assert all(api.calls.index(f"delete Pod {v}") < binding for v in victims)
    assert sched.stats.preemptions == 1 and sched.stats.victims == 2
    assert len(sched.stats.preemption_to_bind) == 1 and sched.stats.preemption_to_bind[0] > 0
    assert not sched.loop.nominated  # bound: its nomination is gone
    attempts = metrics.registry.get_sample_value("scheduler_preemption_attempts_total")
    assert attempts is not None and attempts >= 1
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_count") == 1
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_sum") == 2
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_bucket", {"le": "2.0"}) == 1
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_bucket", {"le": "1.0"}) == 0


def terminating(api: FakeApi) -> list[str]:
    return sorted(
        k for (kind, k), o in api.objects.items() if kind == "Pod" and o["metadata"].get("deletionTimestamp")
    )


def nominated_in_api(api: FakeApi, name: str) -> str | None:
    return (api.stored("Pod", f"default/{name}").get("status") or {}).get("nominatedNodeName")


def test_the_nomination_is_written_and_kept_while_the_victims_terminate(stop: threading.Event) -> None:
    """Victims that do not go at once (graceful: Terminating until their kubelet is done): the
    preemptor carries nominatedNodeName, waits, makes no second preemption, and binds there
    once they are gone."""
    api = full_cluster(high("vip"))
    api.graceful = True
    node, victims = offline(api)["default/vip"]
    sched = started(api, stop)
    assert drive(sched, lambda: nominated_in_api(api, "vip") == node, timeout=5.0)
    assert drive(sched, lambda: terminating(api) == victims, timeout=5.0)
    assert not drive(sched, lambda: node_of(api, "vip") != "", timeout=0.3)
    assert sched.loop.nominated_node("default/vip") == node
    assert sched.stats.preemptions == 1
    for key in victims:
        api.remove("Pod", key)  # their kubelet is done
    assert drive(sched, lambda: node_of(api, "vip") != "", timeout=5.0)
    stopped(sched)
    assert node_of(api, "vip") == node
    assert sched.stats.preemptions == 1
    assert len(api.calls_matching("delete Pod")) == 2


def test_a_preemptor_retried_before_its_victims_are_seen_deleting_does_not_preempt_again(
    stop: threading.Event,
) -> None:
    """Async preemption's PreEnqueue (kube's IsPodRunningPreemption): the preemptor moved back
    to the active queue while its first victim is marked but not yet deleted (a flush, or the
    DisruptionTarget update) is held back, not given a second preemption; it binds once the
    victims are gone."""
    api = full_cluster(high("vip"))
    node, victims = offline(api)["default/vip"]
    held = api.hold_next(f"delete Pod {victims[0]}")
    sched = started(api, stop)
    assert drive(sched, lambda: held.arrived.is_set(), timeout=5.0)
    # the first victim carries DisruptionTarget, nothing is deleted yet: flush the pool
    assert drive(sched, lambda: pod_condition(api, victims[0].split("/")[1], "DisruptionTarget") is not None)
    for _ in range(3):
        with sched.cache.lock:
            sched.loop.queue.move_all_to_active_or_backoff(time.monotonic() + 1.0)
        drive(sched, lambda: False, timeout=0.1)
    assert sched.stats.preemptions == 1
    assert sched.loop.queue.where("default/vip") == "unschedulable"
    held.release()
    assert drive(sched, lambda: node_of(api, "vip") != "", timeout=5.0)
    stopped(sched)
    assert node_of(api, "vip") == node
    assert sched.stats.preemptions == 1
    assert len(api.calls_matching("delete Pod")) == 2


def test_a_victim_write_refused_drops_the_nomination_and_the_preemptor_tries_again(
    stop: threading.Event,
) -> None:
    api = full_cluster(high("vip"))
    node, victims = offline(api)["default/vip"]
    api.fail_next(1, status=500, only=f"patch Pod {victims[0]} status")
    sched = started(api, stop)
    assert drive(sched, lambda: node_of(api, "vip") != "", timeout=5.0)
    stopped(sched)
    assert node_of(api, "vip") == node
    assert sched.stats.preemptions == 2  # the first one stopped at its first write


def test_lower_priority_nominations_on_the_node_are_cleared(stop: threading.Event) -> None:
    """One node: a priority-500 pod preempts its two pods and is nominated while they
    terminate; a priority-1000 pod then needs the same room: its preemption (victims already
    terminating: nothing more to delete) takes the node, and the 500 one's nominatedNodeName is
    cleared by a status patch."""
    api = FakeApi()
    api.graceful = True
    api.create(make_node("n-a").zone("a").capacity(cpu="1").dict())
    for i in range(2):
        api.create(low(f"n-a-low-{i}", "n-a"))
    sched = started(api, stop)
    api.create(high("mid", priority=500))
    assert drive(sched, lambda: nominated_in_api(api, "mid") == "n-a", timeout=5.0)
    assert drive(sched, lambda: len(terminating(api)) == 2, timeout=5.0)
    api.create(high("vip", priority=1000))
    assert drive(sched, lambda: nominated_in_api(api, "vip") == "n-a", timeout=5.0)
    assert drive(sched, lambda: nominated_in_api(api, "mid") is None, timeout=5.0)
    assert {n: [p.key for p in pods] for n, pods in sched.loop.nominated.items()} == {"n-a": ["default/vip"]}
    assert len(api.calls_matching("delete Pod")) == 2  # the victims were deleted once
    for key in terminating(api):
        api.remove("Pod", key)
    assert drive(sched, lambda: node_of(api, "vip") == "n-a", timeout=5.0)
    stopped(sched)
    assert node_of(api, "mid") == ""
    assert sched.stats.preemptions == 2 and sched.stats.victims == 2


@pytest.mark.parametrize("policy", ["Never"])
def test_a_pod_that_may_not_preempt_deletes_nothing(stop: threading.Event, policy: str) -> None:
    vip = high("vip")
    vip["spec"]["preemptionPolicy"] = policy
    api = full_cluster(vip)
    metrics = SchedulerMetrics()
    sched = started(api, stop, metrics)
    assert drive(sched, lambda: sched.stats.unschedulable >= 1, timeout=5.0)
    stopped(sched)
    assert not api.calls_matching("delete Pod")
    assert not api.events("Preempted")
    assert sched.stats.preemptions == 0
    assert api.stored("Pod", "default/vip").get("status", {}).get("nominatedNodeName") is None
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_count") == 0


def test_a_nomination_made_before_a_restart_holds_the_room(stop: threading.Event) -> None:
    """A pending pod listed with status.nominatedNodeName (a preemption of the scheduler that
    ran before) is in the nominator at once: the filters keep its room from a lower-priority
    pod, which stays pending while the nominated one is tried."""
    api = FakeApi()
    api.create(make_node("n-a").zone("a").capacity(cpu="1").dict())
    vip = high("vip", priority=1000)
    vip["status"] = {"nominatedNodeName": "n-a"}
    api.create(vip)
    sched = started(api, stop)
    assert sched.loop.nominated_node("default/vip") == "n-a"
    assert sched.loop.nominated_node("default/other") == ""
    api.create(high("small", cpu="500m", priority=10))
    assert drive(sched, lambda: "default/small" in sched.cache.cluster.pods, timeout=2.0)
    with sched.cache.lock:
        assert sched.loop.nominated_node("default/small") == ""  # added while running: not listed
    assert drive(sched, lambda: node_of(api, "vip") == "n-a", timeout=5.0)
    stopped(sched)
