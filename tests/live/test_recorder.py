"""live.recorder.EventRecorder writes Events in the background: recording never waits on the
API server; what is recorded while it is away is written when it returns, in order, repeats
merged into a series; a create whose answer was lost is not written twice; a refusal drops
one event; the buffer is bounded; close() writes what it can within a deadline."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from builders import make_pod
from kubespread.api.core import Pod
from kubespread.live import recorder as recorder_module
from kubespread.live.kube import ApiError
from kubespread.live.recorder import EventRecorder
from live.fake_api import FakeApi


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(recorder_module, "MAX_RETRY_SECONDS", 0.05)


@pytest.fixture
def api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def rec(api: FakeApi, stop: threading.Event) -> Iterator[EventRecorder]:
    r = EventRecorder(api, "kubespread-scheduler", "test-1", stop=stop)
    yield r
    r.close(1.0)


def pod(name: str) -> Pod:
    return Pod.from_dict(make_pod(name).set("metadata.uid", f"uid-{name}").dict())


def scheduled(rec: EventRecorder, name: str, note: str = "") -> None:
    rec.record(pod(name), "Normal", "Scheduled", "Binding", note or f"Successfully assigned default/{name}")


def test_events_recorded_while_unreachable_are_written_in_order_when_it_returns(
    api: FakeApi, rec: EventRecorder
) -> None:
    api.unreachable = True
    for i in range(5):
        scheduled(rec, f"p{i}")
    assert not rec.flush(0.1)
    assert rec.pending == 5 and api.events() == []
    api.unreachable = False
    assert rec.flush(5.0)
    assert [e["regarding"]["name"] for e in api.events()] == [f"p{i}" for i in range(5)]
    assert rec.dropped == 0 and rec.written == 5


def test_repeats_waiting_to_be_written_become_one_series(api: FakeApi, rec: EventRecorder) -> None:
    api.unreachable = True
    for _ in range(3):
        rec.record(pod("huge"), "Warning", "FailedScheduling", "Scheduling", "0/6 nodes are available")
    assert rec.pending == 1
    api.unreachable = False
    assert rec.flush(5.0)
    (event,) = api.events()
    assert event["series"]["count"] == 3 and event["series"]["lastObservedTime"]
    rec.record(pod("huge"), "Warning", "FailedScheduling", "Scheduling", "0/6 nodes are available")
    assert rec.flush(5.0)
    (event,) = api.events()
    assert event["series"]["count"] == 4
    assert len(api.calls_matching("patch Event")) == 1  # the fourth went on the series


def test_a_create_whose_answer_was_lost_is_not_written_twice(api: FakeApi, rec: EventRecorder) -> None:
    api.lose_answer_next(only="create Event")
    scheduled(rec, "p")
    assert rec.flush(5.0)
    assert len(api.calls_matching("create Event")) == 2  # the retry got 409 AlreadyExists
    (event,) = api.events()
    assert "series" not in event
    scheduled(rec, "p")  # the series goes on from the Event that was written
    assert rec.flush(5.0)
    (event,) = api.events()
    assert event["series"]["count"] == 2


def test_a_refused_event_is_dropped_and_the_next_written(api: FakeApi, rec: EventRecorder) -> None:
    api.fail_next(1, status=403, only="create Event default/a")
    scheduled(rec, "a")
    scheduled(rec, "b")
    assert rec.flush(5.0)
    assert [e["regarding"]["name"] for e in api.events()] == ["b"]
    assert rec.dropped == 1
    assert len(api.calls_matching("create Event default/a")) == 1  # not retried


def test_a_server_error_is_retried(api: FakeApi, rec: EventRecorder) -> None:
    api.fail_next(3, status=503, only="create Event")
    scheduled(rec, "a")
    assert rec.flush(5.0)
    assert len(api.events()) == 1 and len(api.calls_matching("create Event")) == 4


def test_a_series_whose_first_event_is_gone_starts_a_new_one(api: FakeApi, rec: EventRecorder) -> None:
    scheduled(rec, "p")
    assert rec.flush(5.0)
    (first,) = api.events()
    api.remove("Event", f"default/{first['metadata']['name']}")
    scheduled(rec, "p")
    assert rec.flush(5.0)
    (second,) = api.events()
    assert second["metadata"]["name"] != first["metadata"]["name"] and "series" not in second


def test_recording_does_not_wait_for_a_write_that_hangs(api: FakeApi, rec: EventRecorder) -> None:
    held = api.hold_next("create Event")
    scheduled(rec, "a")
    assert held.arrived.wait(5.0)
    scheduled(rec, "b")  # returns while the first write hangs
    scheduled(rec, "a")  # a repeat of the one being written: counted on its series next
    assert rec.pending == 2
    held.release()
    assert rec.flush(5.0)
    events = {e["regarding"]["name"]: e for e in api.events()}
    assert set(events) == {"a", "b"}
    assert events["a"]["series"]["count"] == 2


def test_the_buffer_is_bounded(api: FakeApi, rec: EventRecorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "MAX_PENDING_EVENTS", 3)
    api.unreachable = True
    for i in range(5):
        scheduled(rec, f"p{i}")
    scheduled(rec, "p0")  # a repeat of a buffered event takes no room
    assert rec.pending == 3 and rec.dropped == 2
    api.unreachable = False
    assert rec.flush(5.0)
    assert [e["regarding"]["name"] for e in api.events()] == ["p0", "p1", "p2"]
    assert api.events()[0]["series"]["count"] == 2


def test_close_writes_what_it_can_within_its_deadline(api: FakeApi, stop: threading.Event) -> None:
    rec = EventRecorder(api, "kubespread-scheduler", "test-1", stop=stop)
    scheduled(rec, "a")
    assert rec.flush(5.0)
    api.unreachable = True
    scheduled(rec, "b")
    scheduled(rec, "c")
    assert rec.close(0.1) == 2
    scheduled(rec, "d")  # closed: not buffered
    assert rec.pending == 0
    api.unreachable = False
    assert [e["regarding"]["name"] for e in api.events()] == ["a"]


def test_close_waits_for_the_api_server_within_its_deadline(api: FakeApi, stop: threading.Event) -> None:
    rec = EventRecorder(api, "kubespread-scheduler", "test-1", stop=stop)
    api.unreachable = True
    scheduled(rec, "a")
    back = threading.Timer(0.1, lambda: setattr(api, "unreachable", False))
    back.start()
    assert rec.close(10.0) == 0
    back.join()
    assert [e["regarding"]["name"] for e in api.events()] == ["a"]


def test_new_events_do_not_cut_a_retry_backoff_short(
    api: FakeApi, rec: EventRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the API server is away, recording more events must not make the recorder try
    again at once (each record would hammer a server that is coming back)."""
    monkeypatch.setattr(recorder_module, "INITIAL_RETRY_SECONDS", 60.0)
    monkeypatch.setattr(recorder_module, "MAX_RETRY_SECONDS", 60.0)
    held = api.hold_next("create Event")
    scheduled(rec, "a")
    assert held.arrived.wait(5.0)
    held.release(ApiError(0, "Unreachable", "connection refused"))
    for i in range(20):
        scheduled(rec, f"b{i}")
    assert not rec.flush(0.2)
    assert len(api.calls_matching("create Event")) == 1
    assert rec.close(0.0) == 21
