"""live.informer: the ClusterCache's assumed pods and spec identity, and the Reflector's list,
watch and re-list over the in-memory FakeApi (breaks, deletions missed meanwhile, 410 Gone)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from builders import ZONE, make_node, make_pod
from kubespread.live import informer
from kubespread.live.informer import ClusterCache, Reflector, start_reflectors
from kubespread.live.kube import ApiError
from live.fake_api import FakeApi, merge_patch

DEADLINE = 3.0


def wait_for(cond: Callable[[], bool], timeout: float = DEADLINE) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def pod(name: str, **kw: Any) -> dict[str, Any]:
    b = make_pod(name).set("spec.schedulerName", "kubespread").label("app", "web")
    if "node" in kw:
        b.node(kw["node"])
    return b.dict()


def node(name: str, zone: str = "a") -> dict[str, Any]:
    return make_node(name).label(ZONE, zone).dict()


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)


def joined(threads: list[Reflector], stop: threading.Event) -> None:
    stop.set()
    for t in threads:
        t.join(2.0)
        assert not t.is_alive()


# --------------------------------------------------------------------------- the fake itself
def test_merge_patch_merges_dicts_deletes_nulls_and_conditions_by_type() -> None:
    old = {
        "metadata": {"labels": {"a": "1", "b": "2"}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]
        },
    }
    new = merge_patch(
        old,
        {
            "metadata": {"labels": {"b": None, "c": "3"}},
            "status": {
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
            },
        },
    )
    assert new["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert new["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
    ]
    assert old["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_fake_versions_conflicts_and_watch_log() -> None:
    api = FakeApi()
    created = api.create(pod("p"))
    assert created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    assert created["metadata"]["resourceVersion"] == "1"
    items, version = api.list("Pod")
    assert [i["metadata"]["name"] for i in items] == ["p"] and version == "1"
    updated = api.replace(created)
    assert updated["metadata"]["resourceVersion"] == "2"
    with pytest.raises(ApiError) as e:
        api.replace(created)  # version 1 is stale
    assert e.value.status == 409
    api.delete("Pod", "default/p")
    assert [(t, o["metadata"]["resourceVersion"]) for t, o in api.watch("Pod", "0")] == [
        ("ADDED", "1"),
        ("MODIFIED", "2"),
        ("DELETED", "3"),
    ]
    api.fail_next(1, only="get Pod")
    with pytest.raises(ApiError) as e:
        api.get("Pod", "default/p")
    assert e.value.unreachable
    with pytest.raises(ApiError) as e:
        api.get("Pod", "default/p")
    assert e.value.status == 404


# --------------------------------------------------------------------------- ClusterCache
def cache_with(*objs: dict[str, Any]) -> ClusterCache:
    cache = ClusterCache()
    for o in objs:
        cache.apply("ADDED", o)
    return cache


def test_an_assumed_pod_keeps_its_node_through_an_update_without_one() -> None:
    cache = cache_with(node("n1"), node("n2"), pod("p"))
    cache.assume("default/p", "n1")
    again = pod("p")
    again["metadata"]["labels"]["seen"] = "yes"  # any update of the still unbound pod
    cache.apply("MODIFIED", again)
    assert cache.cluster.pods["default/p"].spec.node_name == "n1"
    assert cache.cluster.node_of("default/p") == "n1"
    assert cache.assumed == {"default/p": "n1"}


def test_an_update_with_a_node_confirms_the_assumption() -> None:
    cache = cache_with(node("n1"), node("n2"), pod("p"))
    cache.assume("default/p", "n1")
    cache.apply("MODIFIED", pod("p", node="n1"))
    assert cache.assumed == {}
    assert cache.cluster.node_of("default/p") == "n1"
    cache.forget("default/p")  # too late: the watch saw it bound
    assert cache.cluster.node_of("default/p") == "n1"


def test_the_api_servers_node_wins_over_the_assumed_one() -> None:
    cache = cache_with(node("n1"), node("n2"), pod("p"))
    cache.assume("default/p", "n1")
    cache.apply("MODIFIED", pod("p", node="n2"))
    assert cache.cluster.node_of("default/p") == "n2"
    assert cache.assumed == {}


def test_forget_unbinds_an_assumed_pod() -> None:
    cache = cache_with(node("n1"), pod("p"))
    cache.assume("default/p", "n1")
    cache.forget("default/p")
    assert cache.cluster.pods["default/p"].spec.node_name == ""
    assert "default/p" in cache.cluster.unbound_pods
    assert cache.assumed == {}


def test_deleting_an_assumed_pod_forgets_it() -> None:
    cache = cache_with(node("n1"), pod("p"))
    cache.assume("default/p", "n1")
    cache.apply("DELETED", pod("p"))
    assert "default/p" not in cache.cluster.pods and cache.assumed == {}


def test_an_equal_spec_decoded_again_keeps_the_cached_spec_object() -> None:
    cache = cache_with(node("n1"), pod("p"))
    before = cache.cluster.pods["default/p"].spec
    status_only = pod("p")
    status_only["status"] = {"conditions": [{"type": "PodScheduled", "status": "False"}]}
    cache.apply("MODIFIED", status_only)
    after = cache.cluster.pods["default/p"]
    assert after.spec is before
    assert after.status.conditions[0].type == "PodScheduled"
    changed = pod("p")
    changed["spec"]["priority"] = 5
    cache.apply("MODIFIED", changed)
    assert cache.cluster.pods["default/p"].spec is not before


def test_the_cache_skips_what_it_cannot_read_and_sets_changed() -> None:
    cache = ClusterCache()
    cache.apply("ADDED", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    cache.apply("DELETED", pod("never-seen"))  # logged, not raised
    bad = pod("bad")
    bad["spec"]["containers"] = "nope"
    cache.apply("ADDED", bad)
    assert cache.cluster.pods == {}
    assert cache.changed.is_set()


# --------------------------------------------------------------------------- Reflector
def test_the_reflector_lists_then_follows_the_watch(stop: threading.Event) -> None:
    api = FakeApi()
    api.create(node("n1"))
    api.create(pod("a"))
    cache = ClusterCache()
    (r,) = start_reflectors(api, ["Pod"], cache, stop, timeout=2.0)
    with cache.lock:
        assert set(cache.cluster.pods) == {"default/a"}
    api.create(pod("b"))
    api.patch("Pod", "default/a", {"metadata": {"labels": {"tier": "x"}}})
    api.delete("Pod", "default/b")
    api.create(pod("c"))

    def settled() -> bool:
        with cache.lock:
            pods = cache.cluster.pods
            return (
                set(pods) == {"default/a", "default/c"}
                and pods["default/a"].metadata.labels.get("tier") == "x"
            )

    assert wait_for(settled)
    assert r.relists == 0
    joined([r], stop)


@pytest.mark.slow
def test_after_an_outage_a_relist_drops_what_was_deleted_and_adds_what_is_new(
    stop: threading.Event, fast_retries: None
) -> None:
    api = FakeApi()
    api.create(node("n1"))
    for name in ("a", "b"):
        api.create(pod(name))
    cache = ClusterCache()
    reflectors = start_reflectors(api, ["Node", "Pod"], cache, stop, timeout=2.0)
    api.unreachable = True
    # both watches notice the outage (a watch refused or broken, a list refused)
    assert wait_for(lambda: len(api.calls_matching("list Pod")) >= 2)
    api.remove("Pod", "default/a")  # meanwhile: the watch never shows these
    api.put(pod("z"))
    api.put(node("n2", "b"))
    api.compact()  # and the server forgot the old versions
    api.unreachable = False

    def caught_up() -> bool:
        with cache.lock:
            return set(cache.cluster.pods) == {"default/b", "default/z"} and set(cache.cluster.nodes) == {
                "n1",
                "n2",
            }

    assert wait_for(caught_up)
    pods_reflector = next(r for r in reflectors if r.kind == "Pod")
    assert pods_reflector.relists >= 1
    joined(reflectors, stop)


@pytest.mark.slow
def test_a_relist_deletes_an_assumed_pod_gone_from_the_server(
    stop: threading.Event, fast_retries: None
) -> None:
    api = FakeApi()
    api.create(node("n1"))
    api.create(pod("a"))
    cache = ClusterCache()
    reflectors = start_reflectors(api, ["Node", "Pod"], cache, stop, timeout=2.0)
    cache.assume("default/a", "n1")
    api.unreachable = True
    assert wait_for(lambda: len(api.calls_matching("list Pod")) >= 2)
    api.remove("Pod", "default/a")
    api.unreachable = False
    assert wait_for(lambda: "default/a" not in cache.cluster.pods)
    assert cache.assumed == {}
    joined(reflectors, stop)


def test_410_gone_leads_to_a_relist(stop: threading.Event, fast_retries: None) -> None:
    api = FakeApi()
    api.create(pod("a"))
    cache = ClusterCache()
    (r,) = start_reflectors(api, ["Pod"], cache, stop, timeout=2.0)
    lists = len(api.calls_matching("list Pod"))
    api.break_watch("Pod", 410)
    assert wait_for(lambda: r.relists == 1)
    assert len(api.calls_matching("list Pod")) == lists + 1
    api.create(pod("b"))  # and it watches again afterwards
    assert wait_for(lambda: "default/b" in cache.cluster.pods)
    joined([r], stop)


def test_a_watch_from_a_compacted_version_gets_410() -> None:
    api = FakeApi()
    api.create(pod("a"))
    api.create(pod("b"))
    api.compact()
    with pytest.raises(ApiError) as e:
        list(api.watch("Pod", "1"))
    assert e.value.status == 410


def test_a_missing_crd_counts_as_listed(stop: threading.Event, fast_retries: None) -> None:
    api = FakeApi(missing_kinds=frozenset({"WorkloadSpread"}))
    cache = ClusterCache()
    (r,) = start_reflectors(api, ["WorkloadSpread"], cache, stop, timeout=2.0)
    assert r.synced.is_set()
    joined([r], stop)


@pytest.mark.slow
def test_start_reflectors_gives_up_when_the_server_cannot_be_reached(
    stop: threading.Event, fast_retries: None
) -> None:
    api = FakeApi()
    api.unreachable = True
    cache = ClusterCache()
    with pytest.raises(ApiError) as e:
        start_reflectors(api, ["Pod"], cache, stop, timeout=0.3)
    assert e.value.unreachable and "could not list Pod" in e.value.message
    stop.set()


def test_a_stopped_reflector_ends(stop: threading.Event) -> None:
    api = FakeApi()
    cache = ClusterCache()
    r = Reflector(api, "Node", cache, stop)
    r.start()
    assert r.synced.wait(2.0)
    joined([r], stop)


# --------------------------------------------------------------------------- nodes and their pods
def test_pods_listed_before_their_nodes_are_kept(stop: threading.Event) -> None:
    """The reflectors list in parallel: the Pod list may be applied before the Node list."""
    api = FakeApi()
    api.create(node("n1"))
    api.create(pod("bound", node="n1"))
    api.create(pod("pending"))
    pods_listed = threading.Event()
    api.before_next("watch Pod", pods_listed.set)
    api.before_next("list Node", lambda: pods_listed.wait(2.0))
    cache = ClusterCache()
    reflectors = start_reflectors(api, ["Node", "Pod"], cache, stop, timeout=3.0)
    with cache.lock:
        assert set(cache.cluster.nodes) == {"n1"}
        assert set(cache.cluster.pods) == {"default/bound", "default/pending"}
        assert cache.cluster.node_of("default/bound") == "n1"
    joined(reflectors, stop)


def test_a_node_deleted_before_its_pods_leaves_the_cache(stop: threading.Event) -> None:
    """kube deletes a Node first; its pods are garbage-collected later (podgc)."""
    api = FakeApi()
    api.create(node("n1"))
    api.create(node("n2"))
    api.create(pod("on-n2", node="n2"))
    cache = ClusterCache()
    reflectors = start_reflectors(api, ["Node", "Pod"], cache, stop, timeout=2.0)
    api.delete("Node", "n2")
    assert wait_for(lambda: "n2" not in cache.cluster.nodes, timeout=1.0)
    joined(reflectors, stop)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_relist_after_a_node_and_its_pods_went_away_keeps_the_reflectors_alive(
    stop: threading.Event, fast_retries: None
) -> None:
    api = FakeApi()
    api.create(node("n1"))
    api.create(node("n2"))
    api.create(pod("on-n2", node="n2"))
    api.create(pod("on-n1", node="n1"))
    cache = ClusterCache()
    reflectors = start_reflectors(api, ["Node", "Pod"], cache, stop, timeout=2.0)
    api.unreachable = True
    assert wait_for(lambda: len(api.calls_matching("list Node")) >= 2)
    api.remove("Node", "n2")
    api.remove("Pod", "default/on-n2")
    # the Node reflector lists first
    pod_relisted = threading.Event()
    api.before_next("list Pod", lambda: pod_relisted.wait(0.5))
    api.before_next("watch Node", pod_relisted.set)
    api.unreachable = False
    assert wait_for(lambda: set(cache.cluster.nodes) == {"n1"}, timeout=0.8)
    assert wait_for(lambda: set(cache.cluster.pods) == {"default/on-n1"}, timeout=1.0)
    assert all(r.is_alive() for r in reflectors)
    joined(reflectors, stop)


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (401, "401 Unauthorized: check the kubeconfig's credentials"),
        (403, "403 Forbidden: injected failure of list Pod (check the RBAC of the account it runs as)"),
    ],
)
def test_a_denied_first_list_fails_at_once_with_what_to_check(status: int, says: str) -> None:
    """401/403 will not pass by waiting: no 60 s of retries ending in 'could not list'."""
    api = FakeApi()
    api.fail_next(1, status=status, only="list Pod")
    stop = threading.Event()
    started = time.monotonic()
    with pytest.raises(ApiError) as caught:
        start_reflectors(api, ["Node", "Pod"], ClusterCache(), stop, timeout=30.0)
    stop.set()
    assert time.monotonic() - started < 5.0
    assert caught.value.status == status
    assert str(caught.value) == f"{api.host}: {says}"


def test_a_denied_list_after_the_first_sync_is_retried() -> None:
    """Once running, a 401/403 may be a rotating token or an RBAC edit: keep trying."""
    api = FakeApi()
    stop = threading.Event()
    (r,) = start_reflectors(api, ["Node"], ClusterCache(), stop, timeout=5.0)
    api.fail_next(1, status=401, only="list Node")
    api.break_watch("Node")
    deadline = time.monotonic() + 5.0
    while r.relists == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    assert r.relists >= 1 and r.denied is None
