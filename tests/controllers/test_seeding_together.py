"""Controllers started together (a Simulation's) seed from what one of them read of the pods:
each ends as it would started alone, and other pods are never answered from what was kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import cluster_of, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.controllers.deployment import DeploymentController
from kubespread.controllers.job import JobController
from kubespread.controllers.pods import OwnedPods, ReadyTimes, followed_pods, seeding_together
from kubespread.controllers.replicaset import ReplicaSetController
from kubespread.controllers.statefulset import StatefulSetController
from kubespread.sim.engine import Simulation

KINDS = ("ReplicaSet", "Job", "StatefulSet", "")


def _pod(i: int, kind: str, uid: str, ready: bool, same_uid: bool) -> Pod:
    b = make_pod(f"p{i}").label("app", "web").set("metadata.uid", "dup" if same_uid else f"uid-{i}")
    if kind:
        ref = {"apiVersion": "apps/v1", "kind": kind, "name": "w", "uid": uid, "controller": True}
        b.set("metadata.ownerReferences", [ref])
    if ready:
        b.node("n1").phase("Running").set("status.conditions", [{"type": "Ready", "status": "True"}])
    return b.obj()


pods_st = st.lists(
    st.tuples(st.sampled_from(KINDS), st.sampled_from(["", "u1", "u2"]), st.booleans(), st.booleans()),
    max_size=12,
)


def _state(owned: OwnedPods) -> tuple[object, ...]:
    return (list(owned._by_owner.items()), list(owned._keys.items()), list(owned._owner_of.items()))


@settings(max_examples=60, deadline=None)
@given(pods_st, st.floats(min_value=0, max_value=100))
def test_seeds_together_equal_seeds_alone(specs: list[tuple[str, str, bool, bool]], now: float) -> None:
    pods = [_pod(i, *spec) for i, spec in enumerate(specs)]
    alone_ready, alone_owned = ReadyTimes(), {k: OwnedPods(k) for k in KINDS[:3]}
    alone_ready.seed(pods, now)
    for owned in alone_owned.values():
        owned.seed(pods)
        by_events = OwnedPods(owned.kind)  # a first seed fills its tables as events would
        for p in pods:
            by_events._set(p.key, p)
        assert _state(owned) == _state(by_events)
    with seeding_together():
        readies = [ReadyTimes() for _ in range(3)]
        for ready in readies:
            ready.seed(iter(pods), now)
        owneds = [OwnedPods(k) for k in (*KINDS[:3], "ReplicaSet")]
        for owned in owneds:
            owned.seed(pods)
        other = [p.copy() for p in reversed(pods)]  # other pods, at another time: read afresh
        later = ReadyTimes()
        later.seed(other, now + 5)
        again = OwnedPods("ReplicaSet")
        again.seed(other)
    for ready in readies:
        assert list(ready._since.items()) == list(alone_ready._since.items())
    readies[0]._since["changed"] = 1.0  # each a copy of its own
    assert "changed" not in readies[1]._since
    for owned in owneds:
        assert _state(owned) == _state(alone_owned[owned.kind])
    owneds[0]._by_owner.setdefault("u1", {})["changed"] = pods[0] if pods else Pod()
    assert _state(owneds[-1]) == _state(alone_owned["ReplicaSet"])
    reference, reference_owned = ReadyTimes(), OwnedPods("ReplicaSet")
    reference.seed(other, now + 5)
    reference_owned.seed(other)
    assert list(later._since.items()) == list(reference._since.items())
    assert _state(again) == _state(reference_owned)


def test_a_simulation_starts_its_controllers_as_each_alone() -> None:
    pods = [_pod(i, kind, "u1", i % 3 != 0, False) for i, kind in enumerate(KINDS * 3)]
    controllers = [ReplicaSetController(), DeploymentController(), JobController(), StatefulSetController()]
    Simulation(cluster_of([make_node("n1")], pods), controllers=controllers, start=7.5)
    for controller in controllers:
        alone = type(controller)()
        Simulation(cluster_of([make_node("n1")], pods), controllers=[alone], start=7.5)
        assert _state(controller.pods) == _state(alone.pods)
        ready = getattr(controller, "ready", None)
        if ready is not None:
            assert ready._since == alone.ready._since  # type: ignore[attr-defined]


class _Host:
    """What FollowedPods reads of a host: its cluster and its time."""

    def __init__(self, cluster: ClusterState, now: float) -> None:
        self.cluster, self.now = cluster, now


ops_st = st.lists(
    st.tuples(
        st.sampled_from(["add", "ready", "unready", "owner", "delete", "later"]),
        st.integers(0, 5),
        st.sampled_from(KINDS),
        st.sampled_from(["u1", "u2"]),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(pods_st, ops_st)
def test_followed_pods_equal_the_indexes_recomputed(
    specs: list[tuple[str, str, bool, bool]], ops: list[tuple[str, int, str, str]]
) -> None:
    """One FollowedPods for the controllers starting together, kept by cluster events: its
    pods by owner equal a fresh seed of the cluster's pods, its ready times those of a
    ReadyTimes that observed every event itself, after any changes."""
    cluster = cluster_of([make_node("n1")], [_pod(i, *spec) for i, spec in enumerate(specs)])
    host = _Host(cluster, 3.0)
    with seeding_together():
        followed = followed_pods(host)  # type: ignore[arg-type]
        assert followed_pods(host) is followed  # type: ignore[arg-type]
        owned = {k: followed.owned(k) for k in KINDS[:3]}
        ready = followed.ready()
    assert followed_pods(host) is not followed  # type: ignore[arg-type]  # alone: its own
    reference = ReadyTimes()
    reference.seed(cluster.pods.values(), host.now)
    cluster.subscribe(lambda e: reference.observe(e, host.now))
    for op, i, kind, uid in ops:
        key = f"default/p{i}"
        stored = cluster.pods.get(key)
        if op == "later":
            host.now += 1.5
        elif op == "add" and stored is None:
            cluster.add_pod(_pod(i, kind, uid, False, False))
        elif op == "delete" and stored is not None:
            cluster.delete_pod(key)
        elif stored is not None and op in ("ready", "unready", "owner"):
            b = make_pod(f"p{i}").label("app", "web").set("metadata.uid", stored.metadata.uid)
            refs = stored.metadata.to_dict().get("ownerReferences")
            if op == "owner":
                refs = [{"apiVersion": "apps/v1", "kind": kind, "name": "w", "uid": uid, "controller": True}]
            if refs:
                b.set("metadata.ownerReferences", refs)
            if stored.spec.node_name:
                b.node(stored.spec.node_name)
            status = "True" if op == "ready" else "False"
            b.phase("Running").set("status.conditions", [{"type": "Ready", "status": status}])
            cluster.update_pod(b.obj())
    for kind, index in owned.items():
        fresh = OwnedPods(kind)
        fresh.seed(cluster.pods.values())
        assert (index._by_owner, index._keys, index._owner_of) == (
            fresh._by_owner,
            fresh._keys,
            fresh._owner_of,
        )  # the same content (the order pods came in aside)
    assert ready._since == reference._since
