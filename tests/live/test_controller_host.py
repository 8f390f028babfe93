"""live.workloadspread: the LiveController hosting the simulator's WorkloadSpread controller on
the FakeApi (status written through PUT .../status with the version read, 409 -> another sync,
pods adopted and given deletion costs, timers and the settle debounce), and the webhook's
LiveWorkloadSpreadClient (WorkloadSpreads fresh from the API, owners from the cache or the API)."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from builders import ZONE, make_node, web_rs_owner, web_workload_manifests
from kubespread.api.apps import ReplicaSet
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST, ANNOTATION_WORKLOADSPREAD
from kubespread.api.kruise import WorkloadSpread
from kubespread.api.timestamps import timestamp
from kubespread.cluster.errors import Conflict
from kubespread.live import informer
from kubespread.live import workloadspread as live_ws
from kubespread.live.kube import ApiError
from kubespread.live.workloadspread import LiveController, LiveWorkloadSpreadClient
from live.fake_api import FakeApi

WS_KEY = "default/spread"
STATUS_WRITE = "replace WorkloadSpread default/spread status"


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)
    monkeypatch.setattr(live_ws, "SETTLE_SECONDS", 0.1)


# --------------------------------------------------------------------------- the world
def template() -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }


def zone_subset(name: str, zone: str, max_replicas: int | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {
        "name": name,
        "requiredNodeSelectorTerm": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]},
    }
    if max_replicas is not None:
        s["maxReplicas"] = max_replicas
    return s


def workload_spread() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "spread", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "subsets": [zone_subset("subset-a", "zone-a", 2), zone_subset("subset-b", "zone-b")],
        },
    }


def rs_pod(name: str, node: str, subset: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": {"app": "web"},
        "ownerReferences": [web_rs_owner()],
    }
    if subset is not None:
        meta["annotations"] = {ANNOTATION_WORKLOADSPREAD: json.dumps({"name": "spread", "subset": subset})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "main", "image": "nginx"}], "nodeName": node},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def world(*, spread: bool = True, unmarked: bool = False) -> FakeApi:
    """Nodes za1 (zone-a) and zb1 (zone-b); Deployment web (3 replicas), its ReplicaSet web-1
    and three pods: two in subset-a, one in subset-b (or, ``unmarked``, with no annotation on
    zone-b's pod); the WorkloadSpread spread: subset-a at most 2, subset-b unbounded."""
    api = FakeApi()
    api.create(make_node("za1").label(ZONE, "zone-a").dict())
    api.create(make_node("zb1").label(ZONE, "zone-b").dict())
    for manifest in web_workload_manifests(3, template()):
        api.create(manifest)
    api.create(rs_pod("web-1-aaaaa", "za1", "subset-a"))
    api.create(rs_pod("web-1-bbbbb", "za1", "subset-a"))
    api.create(rs_pod("web-1-ccccc", "zb1", None if unmarked else "subset-b"))
    if spread:
        api.create(workload_spread())
    return api


def started(api: FakeApi, stop: threading.Event) -> LiveController:
    host = LiveController(api, stop=stop)
    host.start(timeout=2.0)
    return host


def run_until(host: LiveController, done: Callable[[], bool], timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if done():
            return True
        host.run_once(timeout=0.02)
    return done()


def stopped(host: LiveController) -> None:
    host.stop.set()
    for r in host.reflectors:
        r.join(2.0)
        assert not r.is_alive()


def subset_statuses(api: FakeApi) -> dict[str, tuple[int, int]]:
    status = api.stored("WorkloadSpread", WS_KEY).get("status") or {}
    return {
        s["name"]: (s.get("replicas", 0), s.get("missingReplicas", 0))
        for s in status.get("subsetStatuses") or []
    }


EXPECTED = {"subset-a": (2, 0), "subset-b": (1, -1)}


# --------------------------------------------------------------------------- the controller host
def test_a_sync_writes_the_status_through_the_status_subresource(stop: threading.Event) -> None:
    api = world()
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    stopped(host)
    writes = api.calls_matching(STATUS_WRITE)
    assert len(writes) == 1
    assert host.conflicts == 0 and host.syncs >= 1
    stored = api.stored("WorkloadSpread", WS_KEY)
    assert stored["status"]["observedGeneration"] == 1
    assert stored["spec"] == workload_spread()["spec"]  # a status write leaves the spec alone
    # a full subset says so: missingReplicas 0 is written, as Kruise writes it (no omitempty)
    full = next(s for s in stored["status"]["subsetStatuses"] if s["name"] == "subset-a")
    assert full["missingReplicas"] == 0 and full["replicas"] == 2


@pytest.mark.slow
def test_the_status_is_not_written_again_when_nothing_changed(stop: threading.Event) -> None:
    api = world()
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    # the write comes back through the watch (a status-only change: a deferred sync), and the
    # sync it leads to finds nothing to write
    syncs = host.syncs
    assert run_until(host, lambda: host.syncs > syncs)
    run_until(host, lambda: False, timeout=0.3)
    stopped(host)
    assert len(api.calls_matching(STATUS_WRITE)) == 1


def test_pods_in_a_bounded_subset_get_a_deletion_cost(stop: threading.Event) -> None:
    api = world()
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    stopped(host)
    costs = {
        n: (api.stored("Pod", f"default/{n}")["metadata"].get("annotations") or {}).get(
            ANNOTATION_POD_DELETION_COST
        )
        for n in ("web-1-aaaaa", "web-1-bbbbb", "web-1-ccccc")
    }
    assert costs == {"web-1-aaaaa": "100", "web-1-bbbbb": "100", "web-1-ccccc": None}


def test_a_running_pod_without_the_annotation_is_adopted_by_its_nodes_subset(stop: threading.Event) -> None:
    api = world(unmarked=True)
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    stopped(host)
    annotations = api.stored("Pod", "default/web-1-ccccc")["metadata"]["annotations"]
    assert json.loads(annotations[ANNOTATION_WORKLOADSPREAD]) == {"name": "spread", "subset": "subset-b"}


LABEL = "kubespread.io/workloadspread"


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def ns_labels(api: FakeApi, name: str) -> dict[str, str]:
    return dict(api.stored("Namespace", name)["metadata"].get("labels") or {})


def test_the_controller_labels_exactly_the_namespaces_holding_a_workload_spread(
    stop: threading.Event,
) -> None:
    api = world()
    api.create(namespace("default", team="shop"))
    api.create(namespace("stale", **{LABEL: "true"}))  # labelled, but its WorkloadSpread is gone
    api.create(namespace("plain"))
    host = started(api, stop)
    assert run_until(
        host, lambda: ns_labels(api, "default").get(LABEL) == "true" and LABEL not in ns_labels(api, "stale")
    )
    assert ns_labels(api, "default") == {"team": "shop", LABEL: "true"}  # other labels kept
    assert ns_labels(api, "plain") == {}
    # a WorkloadSpread created in a namespace labels it; the last one deleted unlabels it
    ws = workload_spread()
    ws["metadata"]["namespace"] = "plain"
    api.create(ws)
    assert run_until(host, lambda: ns_labels(api, "plain").get(LABEL) == "true")
    api.delete("WorkloadSpread", WS_KEY)
    assert run_until(host, lambda: LABEL not in ns_labels(api, "default"))
    # someone removing the label by hand: put back
    api.patch("Namespace", "plain", {"metadata": {"labels": {LABEL: None}}})
    assert run_until(host, lambda: ns_labels(api, "plain").get(LABEL) == "true")
    stopped(host)
    assert (host.labelled, host.unlabelled) == (3, 2)


def test_a_failed_label_patch_is_tried_again(stop: threading.Event) -> None:
    api = world()
    api.create(namespace("default"))
    api.fail_next(1, status=500, only="patch Namespace default")
    host = started(api, stop)
    assert run_until(host, lambda: ns_labels(api, "default").get(LABEL) == "true", timeout=4.0)
    stopped(host)
    assert len(api.calls_matching("patch Namespace default")) == 2


def test_a_conflict_on_the_status_write_leads_to_a_sync_that_succeeds(stop: threading.Event) -> None:
    api = world()
    # someone (the webhook) writes the WorkloadSpread just before the controller's first write
    api.before_next(
        STATUS_WRITE,
        lambda: api.patch("WorkloadSpread", WS_KEY, {"metadata": {"annotations": {"touched": "yes"}}}),
    )
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    stopped(host)
    assert host.conflicts >= 1
    assert len(api.calls_matching(STATUS_WRITE)) == host.conflicts + 1
    stored = api.stored("WorkloadSpread", WS_KEY)
    assert stored["metadata"]["annotations"] == {"touched": "yes"}  # the other write is kept


@pytest.mark.slow
def test_a_new_workload_spread_is_synced(stop: threading.Event) -> None:
    api = world(spread=False)
    host = started(api, stop)
    assert not run_until(host, lambda: host.syncs > 0, timeout=0.1)
    api.create(workload_spread())
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    stopped(host)


def test_a_scale_up_moves_the_missing_replicas(stop: threading.Event) -> None:
    api = world()
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    api.patch("Deployment", "default/web", {"spec": {"replicas": 4}})
    # subset-a stays at most 2 (not a percentage); subset-b unbounded: nothing moves
    api.patch(
        "WorkloadSpread",
        WS_KEY,
        {"spec": {"subsets": [zone_subset("subset-a", "zone-a", 3), zone_subset("subset-b", "zone-b")]}},
    )
    assert run_until(host, lambda: subset_statuses(api) == {"subset-a": (2, 1), "subset-b": (1, -1)})
    stopped(host)
    assert api.stored("WorkloadSpread", WS_KEY)["status"]["observedGeneration"] == 2


@pytest.mark.slow
def test_an_api_error_during_a_sync_is_retried_by_a_timer(stop: threading.Event) -> None:
    api = world()
    for name in ("web-1-aaaaa", "web-1-bbbbb"):  # costs already set: the sync writes nothing else
        api.patch(
            "Pod", f"default/{name}", {"metadata": {"annotations": {ANNOTATION_POD_DELETION_COST: "100"}}}
        )
    api.fail_next(1, status=500, only=STATUS_WRITE)
    host = started(api, stop)
    assert run_until(host, lambda: len(api.calls_matching(STATUS_WRITE)) == 1)
    assert subset_statuses(api) == {}
    assert host._timers and not host._work  # nothing but the retry can sync it again
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED, timeout=2.5)
    stopped(host)
    assert host.syncs == 2
    assert not api.calls_matching("patch Pod")[2:]


def test_creating_pods_time_out_on_the_wall_clock(stop: threading.Event) -> None:
    """The controller's seconds are the wall clock on the simulator's scale: an entry the
    webhook wrote 100 s ago is dropped (CreatePodFailed), one written now is kept and a timer
    is set for its deadline."""
    api = world(spread=False)
    ws = workload_spread()
    now = live_ws.wall_seconds()
    ws["status"] = {
        "subsetStatuses": [
            {"name": "subset-a", "replicas": 2, "creatingPods": {"web-1-old": timestamp(now - 100)}},
            {
                "name": "subset-b",
                "replicas": 1,
                "missingReplicas": -1,
                "creatingPods": {"web-1-new": timestamp(now)},
            },
        ]
    }
    api.create(ws)
    host = started(api, stop)

    def written() -> bool:
        status = api.stored("WorkloadSpread", WS_KEY)["status"]
        return (
            len(api.calls_matching(STATUS_WRITE)) >= 1
            and status["subsetStatuses"][0].get("creatingPods") is None
        )

    assert run_until(host, written)
    stopped(host)
    assert host.recorder.flush(2.0)
    a, b = api.stored("WorkloadSpread", WS_KEY)["status"]["subsetStatuses"]
    assert (a["name"], a.get("creatingPods"), b["creatingPods"]) == (
        "subset-a",
        None,
        {"web-1-new": timestamp(now)},
    )
    (event,) = api.events("CreatePodFailed")
    assert event["note"] == "Pod default/web-1-old was expected to be created but it wasn't"
    assert any(due - time.monotonic() > 20 for due, _, _ in host._timers)


def test_update_of_a_pod_with_a_stale_version_is_a_conflict(stop: threading.Event) -> None:
    api = world()
    host = LiveController(api, stop=stop)
    for n in api.list("Node")[0]:
        host.cache.apply("ADDED", n)
    pod = Pod.from_dict(api.get("Pod", "default/web-1-aaaaa"))
    api.patch("Pod", "default/web-1-aaaaa", {"metadata": {"labels": {"x": "1"}}})
    pod.metadata.labels["y"] = "2"
    with pytest.raises(Conflict):
        host.update(pod, precondition=True)
    host.update(pod)  # without the precondition it applies
    assert api.stored("Pod", "default/web-1-aaaaa")["metadata"]["labels"] == {
        "app": "web",
        "x": "1",
        "y": "2",
    }
    assert host.cache.cluster.pods["default/web-1-aaaaa"].metadata.labels["y"] == "2"


def test_delete_pod_and_record(stop: threading.Event) -> None:
    api = world()
    host = LiveController(api, stop=stop)
    host.delete_pod("default/web-1-aaaaa")
    host.delete_pod("default/web-1-aaaaa")  # already gone: not an error
    assert not api.has("Pod", "default/web-1-aaaaa")
    ws = WorkloadSpread.from_dict(api.get("WorkloadSpread", WS_KEY))
    host.record(ws, "SubsetUnschedulable", "subset-a is unschedulable", type="Warning")
    assert host.recorder.flush(2.0)  # Events are written in the background
    (event,) = api.events("SubsetUnschedulable")
    assert event["type"] == "Warning" and event["note"] == "subset-a is unschedulable"
    assert event["regarding"]["kind"] == "WorkloadSpread" and event["regarding"]["name"] == "spread"


# --------------------------------------------------------------------------- timers
def test_a_settle_timer_fires_only_after_the_debounce(stop: threading.Event) -> None:
    host = LiveController(FakeApi(), stop=stop)
    fired: list[float] = []
    start = time.monotonic()
    host.after(0, lambda: fired.append(time.monotonic()), settle=True)
    assert host.run_once() is False
    assert fired == []
    end = time.monotonic() + 2.0
    while not fired and time.monotonic() < end:
        host.run_once(timeout=0.05)
    assert len(fired) == 1
    assert fired[0] - start >= live_ws.SETTLE_SECONDS


def test_a_plain_zero_delay_timer_fires_at_the_next_turn(stop: threading.Event) -> None:
    host = LiveController(FakeApi(), stop=stop)
    fired: list[str] = []
    host.after(0, lambda: fired.append("now"))
    host.after(30, lambda: fired.append("later"))
    assert host.run_once() is True
    assert fired == ["now"]
    assert host.run_once() is False


def test_enqueue_twice_syncs_once(stop: threading.Event) -> None:
    host = LiveController(FakeApi(), stop=stop)
    synced: list[str] = []

    class Recorder:
        def sync(self, key: str) -> None:
            synced.append(key)

    c = Recorder()
    host.enqueue(c, "default/a")
    host.enqueue(c, "default/a")
    host.enqueue(c, "default/b")
    while host.run_once():
        pass
    assert synced == ["default/a", "default/b"]


# --------------------------------------------------------------------------- the webhook's client
def test_the_client_reads_workload_spreads_from_the_api_not_the_cache() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    client.cache.apply("ADDED", api.get("WorkloadSpread", WS_KEY))
    api.patch("WorkloadSpread", WS_KEY, {"metadata": {"labels": {"new": "yes"}}})
    ws = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(ws, WorkloadSpread)
    assert ws.metadata.resource_version == api.stored("WorkloadSpread", WS_KEY)["metadata"]["resourceVersion"]
    assert ws.metadata.labels == {"new": "yes"}
    assert len(api.calls_matching("get WorkloadSpread")) == 2
    assert client.get("WorkloadSpread", "default/nothing") is None


def test_update_status_with_a_stale_version_is_a_conflict() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    ws = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(ws, WorkloadSpread)
    api.patch("WorkloadSpread", WS_KEY, {"metadata": {"labels": {"new": "yes"}}})
    ws.status.observed_generation = 1
    with pytest.raises(Conflict):
        client.update_status(ws)
    fresh = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(fresh, WorkloadSpread)
    fresh.status.observed_generation = 1
    client.update_status(fresh)
    stored = api.stored("WorkloadSpread", WS_KEY)
    assert stored["status"] == {"observedGeneration": 1}
    cached = client.cache.cluster.get("WorkloadSpread", WS_KEY)
    assert cached is not None and cached.metadata.resource_version == stored["metadata"]["resourceVersion"]


def test_after_its_own_write_the_client_reads_nothing_until_another_writer_shows() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    client.cache.apply("ADDED", api.get("WorkloadSpread", WS_KEY))
    gets = lambda: len(api.calls_matching("get WorkloadSpread")) - 1  # noqa: E731
    ws = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(ws, WorkloadSpread) and gets() == 1
    ws.status.observed_generation = 1
    client.update_status(ws)
    mine = client.get("WorkloadSpread", WS_KEY)
    assert gets() == 1  # its own write is the latest version: no round trip
    stored = api.stored("WorkloadSpread", WS_KEY)
    assert isinstance(mine, WorkloadSpread)
    assert mine.metadata.resource_version == stored["metadata"]["resourceVersion"]
    # another replica writes; once the watch shows it, reads go to the API server again
    api.patch("WorkloadSpread", WS_KEY, {"status": {"observedGeneration": 2}}, subresource="status")
    client.cache.apply("MODIFIED", copy.deepcopy(api.stored("WorkloadSpread", WS_KEY)))
    theirs = client.get("WorkloadSpread", WS_KEY)
    assert gets() == 2 and isinstance(theirs, WorkloadSpread) and theirs.status.observed_generation == 2
    # the watch saw it deleted: read, and found gone
    client.cache.apply("DELETED", copy.deepcopy(api.stored("WorkloadSpread", WS_KEY)))
    api.delete("WorkloadSpread", WS_KEY)
    assert client.get("WorkloadSpread", WS_KEY) is None and gets() == 3


def test_after_a_conflict_the_client_reads_from_the_api_before_each_write_for_a_while() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    client.cache.apply("ADDED", api.get("WorkloadSpread", WS_KEY))
    gets = lambda: len(api.calls_matching("get WorkloadSpread")) - 1  # noqa: E731
    stale = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(stale, WorkloadSpread)
    api.patch("WorkloadSpread", WS_KEY, {"metadata": {"labels": {"new": "yes"}}})  # not yet watched
    with pytest.raises(Conflict):
        client.update_status(stale)
    fresh = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(fresh, WorkloadSpread) and gets() == 2
    client.update_status(fresh)
    client.get("WorkloadSpread", WS_KEY)
    assert gets() == 3  # within FRESH_READS_SECONDS of the conflict: read first, every time


def test_a_status_write_to_a_deleted_workload_spread_is_a_conflict_and_the_read_finds_none() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    ws = client.get("WorkloadSpread", WS_KEY)
    assert isinstance(ws, WorkloadSpread)
    api.delete("WorkloadSpread", WS_KEY)
    with pytest.raises(Conflict):
        client.update_status(ws)
    assert client.get("WorkloadSpread", WS_KEY) is None


def test_an_owner_missing_from_the_cache_is_read_from_the_api_and_kept() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    rs = client.get("ReplicaSet", "default/web-1")
    assert isinstance(rs, ReplicaSet) and rs.metadata.uid == "rs-uid"
    assert client.cache.cluster.get("ReplicaSet", "default/web-1") is not None
    again = client.get("ReplicaSet", "default/web-1")
    assert isinstance(again, ReplicaSet) and again.metadata.uid == "rs-uid"
    assert len(api.calls_matching("get ReplicaSet")) == 1  # the second read came from the cache
    assert client.get("Deployment", "default/gone") is None


def test_pods_read_from_the_api_are_not_cached() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    assert isinstance(client.get("Pod", "default/web-1-aaaaa"), Pod)
    assert client.cache.cluster.pods == {}


def test_an_unreachable_server_is_an_error_not_a_missing_object() -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    api.unreachable = True
    with pytest.raises(ApiError) as e:
        client.get("ReplicaSet", "default/web-1")
    assert e.value.unreachable


def test_the_client_watches_the_webhook_kinds(stop: threading.Event) -> None:
    api = world()
    client = LiveWorkloadSpreadClient(api)
    client.start(stop, timeout=2.0)
    with client.cache.lock:
        assert client.cluster.get("ReplicaSet", "default/web-1") is not None
        assert client.cluster.get("WorkloadSpread", WS_KEY) is not None
        assert set(client.cluster.nodes) == {"za1", "zb1"}
    assert client.now() > 0
    stop.set()
    for r in client.reflectors:
        r.join(2.0)
        assert not r.is_alive()
