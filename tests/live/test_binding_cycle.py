"""The live scheduler's binding cycle runs beside its loop: a bind the API server does not
answer holds up no other pod; a pod counts on its node while its bind is in flight; a failed
bind is forgotten and the pod bound later; a bind applied whose answer was lost is recorded
once and never repeated; a pod deleted meanwhile is dropped; shutdown waits for binds in
flight up to a deadline. Over the in-memory FakeApi (``hold_next`` freezes one call)."""

from __future__ import annotations

import logging
import threading

import pytest

from builders import make_node
from kubespread.live import recorder as recorder_module
from kubespread.live.kube import ApiError
from kubespread.live.scheduler import ApiWorkers
from live.fake_api import FakeApi
from live.test_scheduler import (
    all_bound,
    cluster_api,
    drive,
    fast,  # noqa: F401  (autouse: millisecond backoffs)
    node_of,
    pod_condition,
    started,
    stopped,
    web_pod,
)

TIMEOUT = ApiError(0, "Unreachable", "https://fake.invalid:6443: read timed out")


@pytest.fixture(autouse=True)
def fast_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(recorder_module, "MAX_RETRY_SECONDS", 0.05)


def scheduled_notes(api: FakeApi) -> list[str]:
    return sorted(e["note"] for e in api.events("Scheduled"))


# --------------------------------------------------------------------------- a bind that hangs
def test_a_hanging_bind_does_not_stop_other_pods_from_being_bound(stop: threading.Event) -> None:
    names = [f"web-{i}" for i in range(6)]
    api = cluster_api(*(web_pod(n) for n in names))
    held = api.hold_next("/binding")  # the first bind, whichever pod it is
    sched = started(api, stop)
    assert drive(sched, lambda: held.arrived.is_set() and sum(bool(node_of(api, n)) for n in names) == 5)
    (stuck,) = [n for n in names if not node_of(api, n)]
    # the loop went on; the stuck pod still counts on its node in the cache
    assert sched.cache.assumed.get(f"default/{stuck}")
    assert drive(sched, lambda: sched.binding.busy == 1)  # the others' jobs have ended
    held.release()
    assert drive(sched, all_bound(api, names))
    stopped(sched)
    assert len(api.calls_matching("/binding")) == 6
    assert scheduled_notes(api) == sorted(
        f"Successfully assigned default/{n} to {node_of(api, n)}" for n in names
    )


def test_a_pod_counts_on_its_node_while_its_bind_is_in_flight(stop: threading.Event) -> None:
    """Room for one pod: while the first pod's bind hangs the second finds no room; when that
    bind fails, the assumption is forgotten and one of them is bound, once."""
    api = FakeApi()
    api.create(make_node("n1").zone("a").capacity(cpu="1").dict())
    api.create(web_pod("a", cpu="600m"))
    api.create(web_pod("b", cpu="600m"))
    held = api.hold_next("/binding")
    sched = started(api, stop)
    assert drive(sched, lambda: held.arrived.is_set() and sched.stats.unschedulable >= 1)
    assert sched.stats.bound == 0 and len(api.calls_matching("/binding")) == 1
    held.release(TIMEOUT)  # the bind timed out: not applied
    assert drive(sched, lambda: sched.stats.bound == 1)
    stopped(sched)
    bound = [n for n in ("a", "b") if node_of(api, n)]
    assert len(bound) == 1 and node_of(api, bound[0]) == "n1"
    assert sched.stats.bind_errors == 1
    assert len(api.events("Scheduled")) == 1


def test_a_bind_that_times_out_is_forgotten_and_the_pod_bound_later(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"), web_pod("q"))
    held = api.hold_next("pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, lambda: held.arrived.is_set() and bool(node_of(api, "q")))
    held.release(TIMEOUT)
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert len(api.calls_matching("pods/p/binding")) == 2
    assert sched.stats.bind_errors == 1 and sched.stats.bound == 2
    assert not sched.cache.assumed
    assert len(api.events("Scheduled")) == 2


def test_the_backoff_grows_with_each_failed_bind(
    stop: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed bind puts the pod back in the queue with its count of failed binds, so its
    backoff doubles as kube's does (it used to restart at 1 s each time)."""
    api = cluster_api(web_pod("p"))
    api.fail_next(3, status=500, only="pods/p/binding")
    sched = started(api, stop)
    counts: list[int] = []
    errored = sched.queue.errored

    def counting(key: str, now: float) -> None:
        errored(key, now)
        info = sched.queue.info(key)
        counts.append(info.attempts if info is not None else -1)

    monkeypatch.setattr(sched.queue, "errored", counting)
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert counts == [1, 2, 3]


def test_a_bind_that_raises_something_unexpected_is_forgotten_and_retried(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))

    def garbled() -> None:
        raise ValueError("Expecting value: line 1 column 1 (char 0)")

    api.before_next("pods/p/binding", garbled)
    sched = started(api, stop)
    assert drive(sched, all_bound(api, ["p"]))
    stopped(sched)
    assert sched.stats.bind_errors == 1 and sched.stats.bound == 1
    assert len(api.events("Scheduled")) == 1


def test_a_condition_write_that_hangs_does_not_stop_binding(stop: threading.Event) -> None:
    api = cluster_api(web_pod("huge", cpu="100"), web_pod("p"), web_pod("q"))
    held = api.hold_next("patch Pod default/huge status")
    sched = started(api, stop)
    assert drive(sched, lambda: held.arrived.is_set() and bool(node_of(api, "p")) and bool(node_of(api, "q")))
    assert pod_condition(api, "huge", "PodScheduled") is None
    held.release()
    assert drive(sched, lambda: pod_condition(api, "huge", "PodScheduled") is not None)
    stopped(sched)


# --------------------------------------------------------------------------- lost answers
def test_a_bind_confirmed_by_the_watch_before_it_answers_is_bound_once(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    held = api.hold_next("pods/p/binding", after=True)
    sched = started(api, stop)
    assert drive(sched, held.arrived.is_set)
    node = node_of(api, "p")
    assert node
    # the watch shows it bound while the binder still waits for the answer
    assert drive(sched, lambda: "default/p" not in sched.cache.assumed)
    assert sched.cache.cluster.node_of("default/p") == node
    held.release()
    assert drive(sched, lambda: sched.stats.bound == 1)
    assert not drive(sched, lambda: sched.stats.attempts > 1, timeout=0.2)
    stopped(sched)
    assert len(api.calls_matching("pods/p/binding")) == 1
    assert scheduled_notes(api) == [f"Successfully assigned default/p to {node}"]


@pytest.mark.parametrize("watch_first", [True, False])
def test_a_bind_applied_whose_answer_was_lost_is_recorded_once_and_not_repeated(
    stop: threading.Event, watch_first: bool
) -> None:
    """The API server applied the bind; the answer did not come back. The pod is forgotten
    and backs off, then the watch (or a second bind's 409 and re-read) shows it on that node:
    Scheduled is recorded then, once, and the pod is bound only by the first POST."""
    api = cluster_api(web_pod("p"))
    if watch_first:  # the watch shows it bound before the binder learns the answer is lost
        held = api.hold_next("pods/p/binding", after=True)
    api.lose_answer_next(only="pods/p/binding")
    sched = started(api, stop)
    if watch_first:
        assert drive(sched, lambda: held.arrived.is_set() and "default/p" not in sched.cache.assumed)
        held.release()
    assert drive(sched, lambda: sched.stats.bound == 1)
    assert not drive(sched, lambda: sched.stats.bound > 1 or sched.stats.attempts > 2, timeout=0.2)
    stopped(sched)
    node = node_of(api, "p")
    assert scheduled_notes(api) == [f"Successfully assigned default/p to {node}"]
    binds = len(api.calls_matching("pods/p/binding"))
    assert binds == 1 + sched.stats.bind_conflicts  # any second POST was refused (409)
    assert sched.stats.bind_errors == 1


# --------------------------------------------------------------------------- deleted meanwhile
def test_a_pod_deleted_while_its_bind_hangs_is_dropped(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    held = api.hold_next("pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, held.arrived.is_set)
    api.remove("Pod", "default/p")
    assert drive(sched, lambda: "default/p" not in sched.cache.cluster.pods)
    assert not sched.cache.assumed
    held.release()  # served now: 404
    assert drive(sched, lambda: sched.binding.busy == 0)
    assert not sched.step()
    stopped(sched)
    assert "default/p" not in sched.queue and "default/p" not in sched.cache.cluster.pods
    assert sched.stats.bound == 0 and sched.stats.bind_errors == 0
    assert api.events() == []


# --------------------------------------------------------------------------- shutdown
def test_shutdown_waits_for_a_bind_in_flight(stop: threading.Event) -> None:
    api = cluster_api(web_pod("p"))
    held = api.hold_next("pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, held.arrived.is_set)
    releaser = threading.Timer(0.1, held.release)  # answered well within the deadline
    releaser.start()
    sched.shutdown(bind_timeout=10.0, event_timeout=5.0)
    releaser.join()
    # shutdown returned after the bind and its Event were written
    assert node_of(api, "p")
    assert scheduled_notes(api) == [f"Successfully assigned default/p to {node_of(api, 'p')}"]
    stopped(sched)


def test_shutdown_leaves_a_bind_stuck_past_its_deadline(
    stop: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    api = cluster_api(web_pod("p"))
    held = api.hold_next("pods/p/binding")
    sched = started(api, stop)
    assert drive(sched, held.arrived.is_set)
    with caplog.at_level(logging.WARNING, logger="kubespread.scheduler"):
        sched.shutdown(bind_timeout=0.1, event_timeout=0.1)
    assert node_of(api, "p") == ""
    assert "stopping with 1 binds or condition writes unfinished" in caplog.text
    held.release()
    assert not sched.binding.submit("x", lambda: None)  # closed
    stopped(sched)


# --------------------------------------------------------------------------- events
def test_events_recorded_while_the_api_server_is_away_are_written_when_it_returns(
    stop: threading.Event,
) -> None:
    api = cluster_api(web_pod("p"), web_pod("q"), web_pod("huge", cpu="100"))
    api.fail_next(20, only="create Event")  # the Events API away; binds go through
    sched = started(api, stop)
    assert drive(sched, lambda: all_bound(api, ["p", "q"])() and sched.stats.unschedulable >= 1)
    assert drive(sched, lambda: len(api.events()) == 3)
    stopped(sched)
    assert len(api.calls_matching("create Event")) > 3  # retried
    assert sorted(e["reason"] for e in api.events()) == ["FailedScheduling", "Scheduled", "Scheduled"]


# --------------------------------------------------------------------------- the worker pool
def test_one_pods_jobs_run_in_order_and_others_beside_them() -> None:
    workers = ApiWorkers(4, "binder")
    gate = threading.Event()
    finished = {name: threading.Event() for name in ("p1", "p2", "q1")}
    order: list[str] = []
    lock = threading.Lock()

    def job(name: str, wait: bool = False) -> None:
        if wait:
            assert gate.wait(5.0)
        with lock:
            order.append(name)
        finished[name].set()

    workers.submit("p", lambda: job("p1", wait=True))
    workers.submit("p", lambda: job("p2"))
    workers.submit("q", lambda: job("q1"))
    assert finished["q1"].wait(5.0)  # q's job ran while p's first job waits
    assert not finished["p2"].is_set()  # p's second job waits for its first
    gate.set()
    assert workers.drain(5.0)
    assert order == ["q1", "p1", "p2"]
    assert workers.close(1.0) == 0
    assert not workers.submit("p", lambda: None)


def test_a_job_given_while_the_idle_threads_are_taken_gets_a_thread_of_its_own() -> None:
    """One idle thread, two jobs given at once, the first of which hangs: the second must not
    wait behind it."""
    workers = ApiWorkers(4, "binder")
    warm = threading.Event()
    workers.submit("w", warm.set)
    assert warm.wait(5.0) and workers.drain(5.0)  # one thread, idle now
    gate, second = threading.Event(), threading.Event()

    def hang() -> None:
        gate.wait(5.0)

    workers.submit("a", hang)
    workers.submit("b", second.set)
    try:
        assert second.wait(2.0)
    finally:
        gate.set()
    assert workers.close(5.0) == 0
