"""The ReplicaSet controller: replicas kept, victims chosen as ActivePodsWithRanks ranks them,
refusals reported once, status written."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod
from kubespread.api.apps import ReplicaSet
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.selectors import LabelSelector
from kubespread.api.timestamps import timestamp
from kubespread.controllers.pods import ReadyTimes, SelectorCache
from kubespread.controllers.replicaset import ReplicaSetController, deletion_cost, deletion_order
from kubespread.sim.engine import Simulation

RS_UID = "rs-uid-1"


def replica_set(replicas: int = 3, *, uid: str = "", **template_spec: Any) -> ReplicaSet:
    meta: dict[str, Any] = {"name": "web", "namespace": "default"}
    if uid:
        meta.update(uid=uid, creationTimestamp=timestamp(0))
    return ReplicaSet.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta,
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}], **template_spec},
                },
            },
        }
    )


def owned_pod(name: str, node: str = "", *, created: float = 0, **annotations: str):
    """A pod of the RS with RS_UID, as if it had created it ``created`` seconds after EPOCH."""
    pod = make_pod(name).label("app", "web").set("metadata.uid", f"uid-{name}")
    pod.set("metadata.creationTimestamp", timestamp(created))
    pod.set(
        "metadata.ownerReferences",
        [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": RS_UID, "controller": True}],
    )
    if annotations:
        pod.set("metadata.annotations", annotations)
    if node:
        pod.node(node).phase("Running").set("status.conditions", [{"type": "Ready", "status": "True"}])
    return pod


def scale(sim: Simulation, replicas: int) -> None:
    rs = sim.cluster.get("ReplicaSet", "default/web").copy()
    rs.spec.replicas = replicas
    sim.update(rs)


def live_pods(sim: Simulation) -> list[str]:
    return sorted(p.metadata.name for p in sim.cluster.pods.values() if not p.is_terminating)


def test_creates_the_missing_pods_from_the_template_and_reports_status() -> None:
    sim = Simulation(cluster_of([make_node("n1"), make_node("n2")]), controllers=[ReplicaSetController()])
    rs = sim.create(replica_set(3))
    assert isinstance(rs, ReplicaSet)
    sim.run_until_quiet()
    pods = sorted(sim.cluster.pods.values(), key=lambda p: p.key)
    assert len(pods) == 3
    for pod in pods:
        assert pod.metadata.name.startswith("web-") and len(pod.metadata.name) == len("web-") + 5
        assert pod.metadata.generate_name == "web-"
        assert pod.metadata.labels == {"app": "web"}
        ref = pod.metadata.controller_ref()
        assert ref is not None and (ref.kind, ref.name, ref.uid) == ("ReplicaSet", "web", rs.metadata.uid)
        assert pod.spec.node_name
    created = [e.message for e in sim.events if e.reason == "SuccessfulCreate"]
    assert sorted(created) == sorted(f"Created pod: {p.metadata.name}" for p in pods)
    status = sim.cluster.get("ReplicaSet", "default/web").status
    assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == 3


def test_the_same_seed_creates_the_same_pods() -> None:
    def names(seed: int) -> list[str]:
        sim = Simulation(cluster_of([make_node("n1")]), controllers=[ReplicaSetController()], seed=seed)
        sim.create(replica_set(4))
        sim.run_until_quiet()
        return [e.message for e in sim.events if e.reason == "SuccessfulCreate"]

    assert names(7) == names(7)
    assert names(7) != names(8)


def test_scale_down_deletes_the_pod_with_the_lowest_deletion_cost() -> None:
    rs = replica_set(3, uid=RS_UID)
    pods = [
        owned_pod("a", "n1", created=0, **{ANNOTATION_POD_DELETION_COST: "100"}),
        owned_pod("b", "n2", created=0, **{ANNOTATION_POD_DELETION_COST: "-5"}),
        owned_pod("c", "n3", created=600),  # newest, but cost 0 > -5
    ]
    nodes = [make_node(n) for n in ("n1", "n2", "n3")]
    sim = Simulation(cluster_of(nodes, pods, objects=[rs]), controllers=[ReplicaSetController()])
    sim.advance(1000)
    assert sim.events == []  # three pods for three replicas: nothing to do
    scale(sim, 2)
    sim.run_until_quiet()
    assert [e.message for e in sim.events if e.reason == "SuccessfulDelete"] == ["Deleted pod: b"]
    scale(sim, 1)
    sim.run_until_quiet()
    assert live_pods(sim) == ["a"]


def test_scale_down_prefers_doubled_up_nodes_then_newer_pods() -> None:
    rs = replica_set(3, uid=RS_UID)
    pods = [
        owned_pod("a", "n1", created=0),
        owned_pod("b", "n1", created=600),
        owned_pod("c", "n2", created=1200),
    ]
    sim = Simulation(
        cluster_of([make_node("n1"), make_node("n2")], pods, objects=[rs]),
        controllers=[ReplicaSetController()],
    )
    sim.advance(1300)
    scale(sim, 2)
    sim.run_until_quiet()
    # c is the newest, but a and b share n1: of those, b is the newer (aged 700 s against 1300 s,
    # in different powers of two)
    assert [e.message for e in sim.events if e.reason == "SuccessfulDelete"] == ["Deleted pod: b"]


def test_unassigned_pods_go_first() -> None:
    rs = replica_set(3, uid=RS_UID)
    pending = owned_pod("p", created=0).set("spec.schedulerName", "elsewhere")
    pods = [owned_pod("a", "n1", created=600), owned_pod("b", "n1", created=1200), pending]
    sim = Simulation(cluster_of([make_node("n1")], pods, objects=[rs]), controllers=[ReplicaSetController()])
    sim.run_until_quiet()
    scale(sim, 2)
    sim.run_until_quiet()
    assert "default/p" not in sim.cluster.pods
    assert live_pods(sim) == ["a", "b"]


def test_creation_times_compare_on_a_log_scale() -> None:
    def pod(name: str, created: float):
        return owned_pod(name, "n1", created=created).obj()

    ready = ReadyTimes()
    old, new = pod("a-old", 0), pod("b-new", 1)
    # at t=1000 s the ages 1000 s and 999 s share a power of two: the uid decides, not the age
    assert [p.metadata.name for p in deletion_order([new, old], [], 1000, ready)] == ["a-old", "b-new"]
    # 1000 s and 400 s do not: the newer goes first
    newer = pod("b-new", 600)
    assert [p.metadata.name for p in deletion_order([old, newer], [], 1000, ready)] == ["b-new", "a-old"]


def test_deletion_cost_reads_an_int32_and_ignores_anything_else() -> None:
    def cost(value: str) -> int:
        return deletion_cost(
            make_pod("p").set("metadata.annotations", {ANNOTATION_POD_DELETION_COST: value}).obj()
        )

    assert cost("-7") == -7
    assert cost("+3") == 3
    assert cost("1.5") == 0
    assert cost("x") == 0
    assert cost(str(2**31)) == 0
    assert deletion_cost(make_pod("p").obj()) == 0


def test_terminating_pods_do_not_count_and_are_not_deleted_twice() -> None:
    sim = Simulation(cluster_of([make_node("n1")]), controllers=[ReplicaSetController()])
    sim.create(replica_set(3))
    sim.run_until_quiet()
    scale(sim, 1)
    sim.advance(1)  # the two victims are Terminating for 30 s
    assert sum(p.is_terminating for p in sim.cluster.pods.values()) == 2
    scale(sim, 2)
    sim.advance(1)
    deletes = [e for e in sim.events if e.reason == "SuccessfulDelete"]
    assert len(deletes) == 2
    assert len(live_pods(sim)) == 2  # one new pod replaces a Terminating one at once
    assert len([e for e in sim.events if e.reason == "SuccessfulCreate"]) == 4
    sim.run_until_quiet()
    assert len(sim.cluster.pods) == 2
    assert sim.cluster.get("ReplicaSet", "default/web").status["replicas"] == 2


def test_a_refused_pod_is_reported_once_and_not_retried_in_a_loop() -> None:
    sim = Simulation(cluster_of([make_node("n1")]), controllers=[ReplicaSetController()])
    sim.create(replica_set(3, priorityClassName="missing"))
    sim.run_until_quiet()
    assert sim.cluster.pods == {}
    failures = [e for e in sim.events if e.reason == "FailedCreate"]
    assert len(failures) == 1  # slow start: the first batch of one fails, the rest is not tried
    assert failures[0].type == "Warning"
    assert failures[0].message.startswith("Error creating: ")
    assert "no PriorityClass with name missing was found" in failures[0].message
    assert sim.cluster.get("ReplicaSet", "default/web").status["replicas"] == 0


def test_pods_that_leave_the_selector_are_not_counted() -> None:
    rs = replica_set(1, uid=RS_UID)
    stray = owned_pod("stray", "n1").set("metadata.labels", {"app": "other"})
    sim = Simulation(
        cluster_of([make_node("n1")], [stray], objects=[rs]), controllers=[ReplicaSetController()]
    )
    sim.run_until_quiet()
    assert len(sim.cluster.pods) == 2
    assert sim.cluster.pods["default/stray"].metadata.labels == {"app": "other"}


def test_min_ready_seconds_delays_availability() -> None:
    rs = replica_set(2)
    rs.spec.min_ready_seconds = 20
    sim = Simulation(cluster_of([make_node("n1")]), controllers=[ReplicaSetController()])
    sim.create(rs)
    sim.advance(5)
    status = sim.cluster.get("ReplicaSet", "default/web").status
    assert (status["readyReplicas"], status["availableReplicas"]) == (2, 0)
    sim.advance(15)
    assert sim.cluster.get("ReplicaSet", "default/web").status["availableReplicas"] == 2


def test_one_victim_is_the_one_the_full_ranking_picks() -> None:
    """deletion_order(first=1) ranks only the pods that can win, with facts kept across calls;
    it must pick what min() over the full comparator picks (the same pods, in the same order;
    names repeat across trials, so a cached fact of another pod object must not be reused),
    whatever the mix of nodes, readiness, costs, creation and ready times."""
    import functools
    import random

    from kubespread.controllers import replicaset as rs_module

    def reference(pods: list, related: list, now: float, ready: ReadyTimes) -> str:
        """min() with the comparator itself, read off two-pod rankings (names are distinct,
        so of two pods exactly one goes first)."""

        def compare(a: Any, b: Any) -> int:
            return -1 if rs_module.deletion_order([a, b], related, now, ready)[0] is a else 1

        return min(pods, key=functools.cmp_to_key(compare)).metadata.name

    rng = random.Random(7)
    cache: dict = {}
    for trial in range(90):
        ready = ReadyTimes()
        pods = []
        uniform = trial % 3 == 0  # alike but for names (a rollout's old pods), shuffled
        for i in rng.sample(range(12), rng.randint(1, 12)):
            node = rng.choice(["n1", "n2", "n3"] if uniform else ["", "n1", "n2", "n3"])
            annotations = {ANNOTATION_POD_DELETION_COST: str(0 if uniform else rng.choice([0, 0, 5]))}
            created = 0 if uniform else rng.choice([0, 1, 400, 900])
            p = owned_pod(f"p-{i:02d}", node, created=created, **annotations)
            if node and not uniform and rng.random() < 0.3:
                p.set("status.conditions", [{"type": "Ready", "status": "False"}])
            if node and (uniform or rng.random() < 0.5):
                stamp = timestamp(100 if uniform else rng.choice([100, 101, 600]))
                p.set(
                    "status.conditions",
                    [{"type": "Ready", "status": "True", "lastTransitionTime": stamp}],
                )
            pods.append(p.obj())
        related = [*pods, owned_pod(f"r{trial}", "n1").obj()]
        got = deletion_order(pods, related, 1000, ready, first=1, cache=cache)
        assert [p.metadata.name for p in got] == [reference(pods, related, 1000, ready)]


def test_the_active_pods_kept_per_replica_set_follow_every_change() -> None:
    """The controller keeps each ReplicaSet's active claimed pods as pods come, go, terminate
    and leave the selector: always the claimed pods that are active, by key."""
    from kubespread.controllers.pods import is_active

    controller = ReplicaSetController()
    sim = Simulation(cluster_of([make_node("n1"), make_node("n2")]), controllers=[controller])
    rs = sim.create(replica_set(6))
    assert isinstance(rs, ReplicaSet)

    def check() -> None:
        stored = sim.cluster.get("ReplicaSet", "default/web")
        assert isinstance(stored, ReplicaSet)
        expected = [p.key for p in controller._claimed(stored) if is_active(p)]
        assert [p.key for p in controller._active_claimed(stored)] == expected

    for replicas in (6, 2, 5, 1, 4):
        scale(sim, replicas)
        sim.run_until_quiet()
        check()
        assert len(controller._active_claimed(sim.cluster.get("ReplicaSet", "default/web"))) == replicas
    victim = sorted(sim.cluster.pods.values(), key=lambda p: p.key)[0]
    relabelled = victim.copy()
    relabelled.metadata.labels = {"app": "other"}
    sim.update(relabelled)  # leaves the selector: no longer claimed, replaced
    sim.run_until_quiet()
    check()
    sim.delete_pod(sorted(sim.cluster.pods)[-1])
    check()  # terminating: no longer active
    sim.run_until_quiet()
    check()


def test_the_selector_cache_follows_the_selector_object_not_the_spec() -> None:
    """A scale copies the spec and keeps its selector: the compiled one is reused; a new selector
    (an update that changes it) is compiled again and selects as it says."""
    cache = SelectorCache()
    rs = replica_set(1, uid=RS_UID)
    first = cache.of(rs)
    scaled = copy.copy(rs)
    scaled.spec = copy.copy(rs.spec)
    scaled.spec.replicas = 5
    assert cache.of(scaled) is first
    moved = copy.copy(scaled)
    moved.spec = copy.copy(scaled.spec)
    moved.spec.selector = LabelSelector(match_labels={"app": "other"})
    again = cache.of(moved)
    assert again is not first
    assert again.matches({"app": "other"}) and not again.matches({"app": "web"})
    assert first.matches({"app": "web"})


def _claims_state(c: ReplicaSetController) -> tuple[object, ...]:
    related = c._related_counts
    return (c._claims, c._counts, c._active_keys, related._counted, related._counts)


_rs_st = st.tuples(
    st.sampled_from(["web", "api"]),  # name (its uid: u-name)
    st.booleans(),  # a selector of every pod
    st.booleans(),  # a template label more than the selector's
)
_claim_pod_st = st.tuples(
    st.sampled_from(["ReplicaSet", "ReplicaSet", "ReplicaSet", "Job", ""]),  # its controller ("": none)
    st.sampled_from(["web", "web", "api", "gone"]),  # the controller's name
    st.sampled_from(["same", "same", "same", "old", ""]),  # its uid: the ReplicaSet's, another, none
    st.sampled_from(["web", "api", "other"]),  # the pod's app label
    st.booleans(),  # the template's extra label too
    st.sampled_from(["", "Running", "Running", "Succeeded"]),
    st.sampled_from(["", "n1", "n2"]),  # the node
    st.booleans(),  # Ready
    st.booleans(),  # terminating
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_rs_st, max_size=2, unique_by=lambda r: r[0]), st.lists(_claim_pod_st, max_size=16))
def test_the_claims_at_start_equal_each_pod_claimed_alone(
    sets: list[tuple[str, bool, bool]], specs: list[tuple[Any, ...]]
) -> None:
    """start's claims and related counts (one pass, each owner looked up once, equal labels
    selected once) are those of _claim and RelatedCounts.set asked pod by pod, in key order:
    the same claims, counts, sorted active keys and active pods per node, whatever the
    owners, uids, selectors, template labels, phases and readiness."""
    objects = []
    for name, wide, tier in sets:
        rs = replica_set(uid=f"u-{name}")
        rs.metadata.name = name
        rs.spec.selector = LabelSelector.from_dict({"matchLabels": {} if wide else {"app": name}})
        if tier:
            rs.spec.template.metadata.labels = {"app": name, "tier": "x"}
        objects.append(rs)
    pods = []
    for i, (kind, owner, same, app, tier, phase, node, ready, terminating) in enumerate(specs):
        uid = {"same": f"u-{owner}", "old": "u-old", "": ""}[same]
        pod = make_pod(f"p{i:02d}").label("app", app).set("metadata.uid", f"pod-{i}")
        if tier:
            pod.label("tier", "x")
        if kind:
            ref = {"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": uid, "controller": True}
            pod.set("metadata.ownerReferences", [ref])
        if phase:
            pod.phase(phase)
        if node:
            pod.node(node)
        if ready:
            pod.set("status.conditions", [{"type": "Ready", "status": "True"}])
        if terminating:
            pod.terminating()
        pods.append(pod)
    started = ReplicaSetController()
    cluster = cluster_of([make_node("n1"), make_node("n2")], pods, objects=objects)
    sim = Simulation(cluster, controllers=[started])
    alone = ReplicaSetController()
    alone.sim = sim
    for key in sorted(sim.cluster.pods):
        alone._claim(key)
        alone._related_counts.set(key, sim.cluster.pods[key])
    assert _claims_state(started) == _claims_state(alone)
