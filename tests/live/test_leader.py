"""live.leader.LeaderElector over the FakeApi's Lease: acquire, hold against a second
candidate, take over an expired Lease, lose it when renewals fail, release it on stop, and the
resourceVersion guard between two candidates racing for the same expired Lease."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from kubespread.live.leader import LeaderElector
from kubespread.live.recorder import micro_time
from live.fake_api import FakeApi

KEY = "kube-system/kubespread"


def elector(api: FakeApi, identity: str, stop: threading.Event, **kw: float) -> LeaderElector:
    return LeaderElector(
        api,
        namespace="kube-system",
        name="kubespread",
        identity=identity,
        stop=stop,
        lease_seconds=int(kw.pop("lease_seconds", 15)),
        renew_deadline=kw.pop("renew_deadline", 1.0),
        retry_period=kw.pop("retry_period", 0.02),
    )


def wait_for(cond: Callable[[], bool], timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def lease_spec(api: FakeApi) -> dict:
    return dict(api.get("Lease", KEY)["spec"])


def lease_held_by(api: FakeApi, holder: str, *, renewed_ago: float, duration: int = 15) -> None:
    """A Lease another candidate wrote ``renewed_ago`` seconds ago."""
    renew = micro_time(datetime.now(UTC) - timedelta(seconds=renewed_ago))
    api.put(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kubespread", "namespace": "kube-system"},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": duration,
                "acquireTime": renew,
                "renewTime": renew,
                "leaseTransitions": 3,
            },
        }
    )


def ended(*electors: LeaderElector) -> None:
    for e in electors:
        e.stop.set()
        e.join(2.0)
        assert not e.is_alive()


def test_the_first_candidate_creates_the_lease_and_leads(stop: threading.Event) -> None:
    api = FakeApi()
    a = elector(api, "a", stop)
    a.start()
    assert a.leading.wait(2.0)
    spec = lease_spec(api)
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    first = spec["renewTime"]
    # and it renews
    assert wait_for(lambda: lease_spec(api)["renewTime"] != first)
    assert lease_spec(api)["acquireTime"] == spec["acquireTime"]
    ended(a)


@pytest.mark.slow
def test_a_second_candidate_waits_while_the_lease_is_fresh_and_takes_over_on_release() -> None:
    api = FakeApi()
    stop_a, stop_b = threading.Event(), threading.Event()
    a = elector(api, "a", stop_a)
    a.start()
    assert a.leading.wait(2.0)
    b = elector(api, "b", stop_b)
    b.start()
    try:
        assert wait_for(lambda: len(api.calls_matching("get Lease")) > 20)
        assert not b.leading.is_set()
        assert lease_spec(api)["holderIdentity"] == "a"
        ended(a)  # a clean stop releases the Lease
        assert not a.leading.is_set()
        assert b.leading.wait(2.0)
        spec = lease_spec(api)
        assert spec["holderIdentity"] == "b"
        assert spec["leaseTransitions"] == 1
    finally:
        ended(a, b)


def test_release_on_stop_clears_the_holder(stop: threading.Event) -> None:
    api = FakeApi()
    a = elector(api, "a", stop)
    a.start()
    assert a.leading.wait(2.0)
    ended(a)
    spec = lease_spec(api)
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1


@pytest.mark.slow
def test_a_candidate_takes_over_once_the_holder_stopped_renewing(stop: threading.Event) -> None:
    api = FakeApi()
    lease_held_by(api, "dead", renewed_ago=1.0)
    b = elector(api, "b", stop)
    b.start()
    assert wait_for(lambda: len(api.calls_matching("get Lease")) > 10)
    assert not b.leading.is_set()
    assert not api.calls_matching("replace Lease")
    # the holder's last renewal is now older than its lease duration
    api.stored("Lease", KEY)["spec"]["renewTime"] = micro_time(datetime.now(UTC) - timedelta(seconds=60))
    assert b.leading.wait(2.0)
    spec = lease_spec(api)
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 4
    assert spec["acquireTime"] != api.changes[0][3]["spec"]["acquireTime"]  # a new tenure
    ended(b)


def test_a_released_lease_is_taken_at_once(stop: threading.Event) -> None:
    api = FakeApi()
    lease_held_by(api, "", renewed_ago=0.0)
    b = elector(api, "b", stop)
    b.start()
    assert b.leading.wait(2.0)
    ended(b)


def test_two_candidates_racing_for_an_expired_lease_cannot_both_win() -> None:
    api = FakeApi()
    lease_held_by(api, "dead", renewed_ago=60.0)
    a = elector(api, "a", threading.Event())
    b = elector(api, "b", threading.Event())
    won_by_a: list[bool] = []
    # a writes between b's read and b's write
    api.before_next("replace Lease", lambda: won_by_a.append(a._try_acquire_or_renew()))
    assert b._try_acquire_or_renew() is False
    assert won_by_a == [True]
    assert lease_spec(api)["holderIdentity"] == "a"
    assert lease_spec(api)["leaseTransitions"] == 4


def test_a_leader_that_cannot_renew_loses_the_lease(stop: threading.Event) -> None:
    api = FakeApi()
    a = elector(api, "a", stop, renew_deadline=0.1)
    a.start()
    assert a.leading.wait(2.0)
    api.unreachable = True
    assert a.lost.wait(2.0)
    assert not a.leading.is_set()
    a.join(2.0)
    assert not a.is_alive()  # run() returned: the caller exits
    api.unreachable = False
    assert lease_spec(api)["holderIdentity"] == "a"  # not released: it could not be reached


@pytest.mark.slow
def test_a_candidate_that_cannot_reach_the_server_does_not_lead(stop: threading.Event) -> None:
    api = FakeApi()
    api.unreachable = True
    a = elector(api, "a", stop)
    a.start()
    assert wait_for(lambda: len(api.calls_matching("get Lease")) > 5)
    assert not a.leading.is_set() and not a.lost.is_set()
    api.unreachable = False
    assert a.leading.wait(2.0)
    ended(a)


@pytest.mark.parametrize("status", [401, 403])
def test_a_lease_the_account_may_not_touch_ends_the_election_at_once(
    stop: threading.Event, status: int
) -> None:
    """Issue 36: with a Role in another namespace the Lease answers 403 forever: retrying
    (a warning every 2 s, nothing scheduled, ready all along) helps nobody. The election ends
    on the first refusal and says why."""
    api = FakeApi()
    api.fail_next(1, status=status, only="get Lease")
    a = elector(api, "a", stop, retry_period=0.5)
    a.start()
    assert a.lost.wait(1.0)
    a.join(1.0)
    assert not a.is_alive() and not a.leading.is_set()
    assert a.refused is not None and a.refused.status == status
    assert len(api.calls_matching("Lease")) == 1  # no retry


def test_the_default_lease_namespace_is_where_the_printed_role_grants_it() -> None:
    """The scheduler's --leader-elect-namespace default and the Role `kubespread manifests`
    prints by default name the same namespace."""
    import inspect

    from kubespread.cli.live import scheduler_command
    from kubespread.live.manifests import COMPONENTS_NAMESPACE, manifests

    default = inspect.signature(scheduler_command).parameters["lease_namespace"].default
    role = next(d for d in manifests(["scheduler"]) if d["kind"] == "Role")
    assert default == role["metadata"]["namespace"] == COMPONENTS_NAMESPACE
    assert any("leases" in rule["resources"] for rule in role["rules"])


def test_a_lease_namespace_that_does_not_exist_ends_the_election(stop: threading.Event) -> None:
    api = FakeApi()
    api.fail_next(1, status=404, only="create Lease")
    a = elector(api, "a", stop, retry_period=0.5)
    a.start()
    assert a.lost.wait(1.0)
    assert a.refused is not None and "namespace kube-system does not exist" in a.refused.message
    ended(a)
