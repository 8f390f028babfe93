"""live.scheduler.SecondaryScheduler over the in-memory FakeApi: it binds the pods of its
scheduler name where ``kubespread schedule`` (sim.placement.place) puts them with the same seed,
records Scheduled / FailedScheduling Events and the PodScheduled=False condition (once per
message), and survives binds refused by a conflict, a missing pod or an unreachable server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from builders import HOSTNAME, ZONE, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.io.loader import load_data
from kubespread.live import informer
from kubespread.live.informer import decode
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.scheduler import queue as queue_module
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.sim.placement import place
from live.fake_api import FakeApi

OURS = "kubespread"
ZONES = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c", "c2": "c"}


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoffs of milliseconds, so a retried pod is tried again within the test."""
    monkeypatch.setattr(queue_module, "INITIAL_BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(queue_module, "MAX_BACKOFF_SECONDS", 0.05)
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)


def web_pod(name: str, *, scheduler: str = OURS, cpu: str = "100m", node: str = "") -> dict[str, Any]:
    b = (
        make_pod(name)
        .set("spec.schedulerName", scheduler)
        .label("app", "web")
        .req(cpu=cpu)
        .spread(1, ZONE, selector={"matchLabels": {"app": "web"}})
        .spread(1, HOSTNAME, when="ScheduleAnyway", selector={"matchLabels": {"app": "web"}})
    )
    if node:
        b.node(node)
    return b.dict()


def cluster_api(*pods: dict[str, Any]) -> FakeApi:
    api = FakeApi()
    for name, zone in ZONES.items():
        api.create(make_node(name).zone(zone).dict())
    for p in pods:
        api.create(p)
    return api


def started(api: FakeApi, stop: threading.Event, seed: int = 0) -> SecondaryScheduler:
    sched = SecondaryScheduler(api, {OURS: default_profile()}, seed=seed, stop=stop, identity="test-1")
    sched.start(timeout=2.0)
    return sched


def drive(sched: SecondaryScheduler, done: Callable[[], bool], timeout: float = 2.0) -> bool:
    """Step the scheduler (as run() does) until ``done()``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if done():
            return True
        if not sched.step():
            sched.cache.changed.wait(0.01)
            sched.cache.changed.clear()
    return done()


def stopped(sched: SecondaryScheduler) -> None:
    """Stop as the command does: binds in flight finish, buffered Events are written."""
    sched.shutdown(bind_timeout=2.0, event_timeout=2.0)
    for r in sched.reflectors:
        r.join(2.0)
        assert not r.is_alive()


def node_of(api: FakeApi, name: str) -> str:
    """The pod's node in the API ('' while unbound, or while it is recreated)."""
    pod = api.objects.get(("Pod", f"default/{name}"))
    return str(pod["spec"].get("nodeName") or "") if pod is not None else ""


def all_bound(api: FakeApi, names: list[str]) -> Callable[[], bool]:
    return lambda: all(node_of(api, n) for n in names)


def pod_condition(api: FakeApi, name: str, type_: str) -> dict[str, Any] | None:
    conditions = (api.stored("Pod", f"default/{name}").get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == type_), None)


# --------------------------------------------------------------------------- binding
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 7])
def test_pods_are_bound_where_kubespread_schedule_puts_them(stop: threading.Event, seed: int) -> None:
    mine = [f"web-{i}" for i in range(7)]
    api = cluster_api(
        web_pod("old", scheduler="default-scheduler", node="a1"),
        *(web_pod(n) for n in mine),
        web_pod("theirs", scheduler="default-scheduler"),
    )
    items = [o for kind in ("Node", "Pod") for o in api.list(kind)[0]]
    expected = place(load_data(items, "cluster fake"), profiles={OURS: default_profile()}, seed=seed)
    sched = started(api, stop, seed)
    assert drive(sched, all_bound(api, mine))
    stopped(sched)

    placed = {p.name: p.node for p in expected.placements}
    assert sorted(placed) == mine
    assert {n: node_of(api, n) for n in mine} == placed
    assert node_of(api, "old") == "a1"
    assert node_of(api, "theirs") == ""
    assert not api.calls_matching("pods/theirs/binding")
    assert sched.stats.bound == 7 and sched.stats.attempts == 7
    zones = [ZONES[node_of(api, n)] for n in [*mine, "old"]]
    assert sorted(zones.count(z) for z in "abc") == [2, 3, 3]


def test_each_bind_records_a_scheduled_event(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"), web_pod("q"))
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p", "q"]))
    stopped(sched)
    events = api.events("Scheduled")
    assert sorted(e["note"] for e in events) == sorted(
        f"Successfully assigned default/{n} to {node_of(api, n)}" for n in ("p", "q")
    )
    for e in events:
        assert e["type"] == "Normal" and e["action"] == "Binding"
        assert e["reportingController"] == "kubespread-scheduler" and e["reportingInstance"] == "test-1"
        pod = api.stored("Pod", f"default/{e['regarding']['name']}")
        assert e["regarding"]["uid"] == pod["metadata"]["uid"]
        assert e["regarding"]["kind"] == "Pod"
    assert pod_condition(api, "p", "PodScheduled") == {"type": "PodScheduled", "status": "True"}


def test_a_pod_created_while_running_is_scheduled(stop: threading.Event) -> None:
    api = cluster_api()
    sched = started(api, stop)
    api.create(web_pod("late"))
    assert drive(sched, all_bound(api, ["late"]))
    stopped(sched)


def test_a_bound_pod_is_not_scheduled_again_when_the_watch_confirms_it(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p"]))
    # the watch shows it bound: the cache agrees, no assumption left, nothing queued
    assert drive(sched, lambda: not sched.cache.assumed and sched.cache.cluster.node_of("default/p") != "")
    assert sched.cache.cluster.node_of("default/p") == node_of(api, "p")
    assert not sched.step()
    assert len(api.calls_matching("binding")) == 1
    stopped(sched)


@pytest.mark.slow
def test_a_gated_pod_waits_until_its_gates_are_removed(stop: threading.Event) -> None:
    gated = web_pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    api = cluster_api(gated, web_pod("free"))
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["free"]))
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.2)
    assert sched.queue.where("default/gated") == "gated"
    api.patch("Pod", "default/gated", {"spec": {"schedulingGates": None}})
    assert drive(sched, all_bound(api, ["gated"]))
    stopped(sched)
    assert sched.stats.attempts == 2


@pytest.mark.slow
def test_terminating_and_finished_pods_are_not_scheduled(stop: threading.Event) -> None:
    dying = web_pod("dying")
    dying["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    done = web_pod("done")
    done["status"] = {"phase": "Succeeded"}
    api = cluster_api(dying, done, web_pod("p"))
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p"]))
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.2)
    stopped(sched)
    assert node_of(api, "dying") == "" and node_of(api, "done") == ""
    assert len(api.calls_matching("binding")) == 1


# --------------------------------------------------------------------------- unschedulable
def expected_fit_error(api: FakeApi, name: str) -> str:
    cluster = ClusterState()
    for kind in ("Node", "Pod"):
        for item in api.list(kind)[0]:
            obj = decode(item)
            assert obj is not None
            cluster.add(obj)
    pod = cluster.pods[f"default/{name}"]
    assert isinstance(pod, Pod)
    return schedule_one(pod, cluster, default_profile()).fit_error


@pytest.mark.slow
def test_an_unfittable_pod_gets_failed_scheduling_and_the_condition_once(
    stop: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = cluster_api(web_pod("huge", cpu="100"))
    fit_error = expected_fit_error(api, "huge")
    assert fit_error.startswith("0/6 nodes are available:")
    sched = started(api, stop)
    # the Event and the condition are written beside the loop
    assert drive(
        sched,
        lambda: (
            sched.stats.unschedulable == 1
            and api.events("FailedScheduling")
            and pod_condition(api, "huge", "PodScheduled")
        ),
    )
    (event,) = api.events("FailedScheduling")
    assert event["note"] == fit_error
    assert event["type"] == "Warning" and event["regarding"]["name"] == "huge"
    cond = pod_condition(api, "huge", "PodScheduled")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", fit_error)
    assert "lastTransitionTime" in cond

    # the condition's own write comes back through the watch and wakes nothing
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.2)

    # a label change helps no plugin that rejected it (NodeResourcesFit): no retry, as kube's
    # queueing hints decide
    api.patch("Node", "a1", {"metadata": {"labels": {"touched": "yes"}}})
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.2)

    # the 5-minute flush gives it another try: same message, so the same Event counts again
    # and the condition is not written a second time
    monkeypatch.setattr(queue_module, "MAX_UNSCHEDULABLE_SECONDS", 0.0)
    sched._last_leftover_sweep = 0.0
    assert drive(sched, lambda: sched.stats.attempts == 2)
    stopped(sched)
    assert sched.stats.unschedulable == 2
    assert len(api.calls_matching("patch Pod default/huge status")) == 1
    (event,) = api.events("FailedScheduling")
    assert event["series"]["count"] == 2
    assert node_of(api, "huge") == ""


def test_a_new_message_is_written_to_the_condition_again(stop: threading.Event) -> None:
    api = cluster_api(web_pod("huge", cpu="100"))
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.unschedulable == 1)
    # a node where it would fit but for a taint: NodeResourcesFit's hint queues it; 0/7 now
    api.create(make_node("d1").zone("d").capacity(cpu="200").taint("dedicated", "x").dict())
    assert drive(sched, lambda: sched.stats.attempts == 2)
    stopped(sched)
    assert len(api.calls_matching("patch Pod default/huge status")) == 2
    cond = pod_condition(api, "huge", "PodScheduled")
    assert cond is not None and cond["message"].startswith("0/7 nodes are available:")
    assert len(api.events("FailedScheduling")) == 2


def test_a_rewritten_condition_keeps_its_transition_time_while_the_status_holds(
    stop: threading.Event,
) -> None:
    """UpdatePodCondition: a new message with the same status keeps lastTransitionTime."""
    pod = web_pod("huge", cpu="100")
    old = "2020-01-02T03:04:05Z"
    held = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/5 nodes"}
    pod["status"] = {"conditions": [{**held, "lastTransitionTime": old}]}
    api = cluster_api(pod)
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.unschedulable == 1)
    stopped(sched)
    cond = pod_condition(api, "huge", "PodScheduled")
    assert cond is not None and cond["message"].startswith("0/6 nodes are available:")
    assert cond["lastTransitionTime"] == old


def test_a_pod_recreated_under_the_same_name_gets_the_condition_again(stop: threading.Event) -> None:
    api = cluster_api(web_pod("huge", cpu="100"))
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.unschedulable == 1)
    api.delete("Pod", "default/huge")
    api.create(web_pod("huge", cpu="100"))
    assert drive(sched, lambda: sched.stats.unschedulable == 2)
    stopped(sched)
    cond = pod_condition(api, "huge", "PodScheduled")
    assert cond is not None and cond["reason"] == "Unschedulable"


# --------------------------------------------------------------------------- refused binds
def test_a_pod_bound_by_someone_else_meanwhile_stays_there(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    api.before_next("pods/p/binding", lambda: api.bind("default/p", "c2"))
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.bind_conflicts == 1)
    assert node_of(api, "p") == "c2"
    assert drive(sched, lambda: sched.cache.cluster.node_of("default/p") == "c2")
    assert "default/p" not in sched.queue
    assert not sched.step()
    stopped(sched)
    assert sched.stats.bound == 0
    assert api.events("Scheduled") == []
    assert len(api.calls_matching("binding")) == 1


def test_a_pod_recreated_under_the_same_name_is_not_bound_by_mistake(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))

    def recreate() -> None:
        api.remove("Pod", "default/p")
        api.put(web_pod("p"))  # a new uid

    api.before_next("pods/p/binding", recreate)
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.bind_conflicts == 1)
    # the new pod is scheduled in its turn
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    (event,) = api.events("Scheduled")
    assert event["regarding"]["uid"] == api.stored("Pod", "default/p")["metadata"]["uid"]


def test_a_pod_deleted_before_its_bind_is_dropped(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    api.before_next("pods/p/binding", lambda: api.remove("Pod", "default/p"))
    sched = started(api, stop)
    assert drive(sched, lambda: len(api.calls_matching("binding")) == 1 and not sched.cache.assumed)
    assert drive(sched, lambda: "default/p" not in sched.cache.cluster.pods)
    assert not sched.step()
    stopped(sched)
    assert sched.stats.bound == 0 and sched.stats.bind_errors == 0
    assert "default/p" not in sched.queue
    assert api.events() == []


def test_an_unreachable_bind_is_retried_after_backoff_and_binds_once(stop: threading.Event) -> None:
    """Only the bind fails (the watches stay up, so no re-list brings the pod back): the pod
    the assume took out of the queue must go back to it, in backoff."""
    api = cluster_api(web_pod("p"))
    api.fail_next(1, only="pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.bind_errors == 1)
    assert node_of(api, "p") == ""
    assert drive(sched, all_bound(api, ["p"]), timeout=1.0)
    stopped(sched)
    assert sched.stats.bound == 1
    assert len(api.calls_matching("pods/p/binding")) == 2
    assert len(api.events("Scheduled")) == 1


def test_a_server_error_on_bind_is_retried(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    api.fail_next(2, status=500, only="pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert sched.stats.bind_errors == 2 and sched.stats.bound == 1
    assert len(api.calls_matching("pods/p/binding")) == 3
    assert len(api.events("Scheduled")) == 1


def test_a_conflict_whose_reread_fails_is_retried(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))

    def recreate() -> None:
        api.remove("Pod", "default/p")
        api.put(web_pod("p"))
        api.fail_next(1, only="get Pod default/p")

    api.before_next("pods/p/binding", recreate)
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert sched.stats.bind_conflicts >= 1
    (event,) = api.events("Scheduled")
    assert event["regarding"]["uid"] == api.stored("Pod", "default/p")["metadata"]["uid"]


def test_a_bind_that_fails_with_the_whole_server_down_is_retried_after_the_relist(
    stop: threading.Event,
) -> None:
    """When the server is down for everyone, the watches break and list again afterwards,
    which brings the pod back to the queue."""
    api = cluster_api(web_pod("p"))
    sched = started(api, stop)
    lists = len(api.calls_matching("list Pod"))
    api.unreachable = True
    assert drive(sched, lambda: sched.stats.bind_errors == 1)
    assert drive(sched, lambda: len(api.calls_matching("list Pod")) > lists + 1)
    api.unreachable = False
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert sched.stats.bound == 1
    assert len(api.events("Scheduled")) == 1
    assert sched.cache.cluster.node_of("default/p") in ("", node_of(api, "p"))


# --------------------------------------------------------------------------- run with a leader
class Leadership:
    def __init__(self) -> None:
        self.leading = threading.Event()
        self.lost = threading.Event()


@pytest.mark.slow
def test_run_waits_for_leadership_and_returns_when_it_is_lost(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    sched = started(api, stop)
    leader = Leadership()
    t = threading.Thread(target=sched.run, args=(leader,), daemon=True)  # type: ignore[arg-type]
    t.start()
    time.sleep(0.1)
    assert node_of(api, "p") == "" and sched.stats.attempts == 0
    leader.leading.set()
    end = time.monotonic() + 2.0
    while time.monotonic() < end and not node_of(api, "p"):
        time.sleep(0.01)
    assert node_of(api, "p")
    leader.leading.clear()
    leader.lost.set()
    t.join(2.0)
    assert not t.is_alive()
    stopped(sched)


# --------------------------------------------------------------------------- queueing hints
def test_a_cordon_does_not_retry_a_node_affinity_rejected_pod_a_matching_label_does(
    stop: threading.Event,
) -> None:
    """Issue 26: cordoning an unrelated node used to retry the pod (a new FailedScheduling every
    few seconds); NodeAffinity's queueing hint ignores it, and a node labelled to match wakes
    the pod, which is then bound there."""
    ssd = make_pod("ssd").set("spec.schedulerName", OURS).node_selector(disk="ssd").dict()
    api = cluster_api(ssd)
    sched = started(api, stop)
    assert drive(sched, lambda: sched.stats.unschedulable == 1)
    api.patch("Node", "b1", {"spec": {"unschedulable": True}})
    assert drive(sched, lambda: sched.cache.cluster.nodes["b1"].spec.unschedulable)
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.3)
    assert sched.queue.where("default/ssd") == "unschedulable"
    (event,) = api.events("FailedScheduling")
    assert "series" not in event
    api.patch("Node", "c2", {"metadata": {"labels": {"disk": "ssd"}}})
    assert drive(sched, lambda: node_of(api, "ssd") == "c2")
    stopped(sched)
    assert sched.stats.attempts == 2
