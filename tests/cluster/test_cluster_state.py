"""ClusterState: each operation, its indexes, and each error (which must change nothing)."""

from __future__ import annotations

import numpy as np
import pytest
from cluster_builders import make_namespace, make_node, make_pod

from kubespread.api.apps import Deployment
from kubespread.api.core import Pod, Service
from kubespread.api.resources import Resources
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.api.selectors import EVERYTHING, NOTHING, LabelSelector, compile_label_selector
from kubespread.cluster import ClusterError, ClusterEvent, ClusterState, EventType

Mi = 1024 * 1024


def sel(**labels: str):
    return compile_label_selector(LabelSelector(match_labels=labels))


def state_with_nodes(*names: str, **labels_by_node: dict[str, str]) -> ClusterState:
    s = ClusterState()
    for n in names:
        s.add_node(make_node(n, labels_by_node.get(n, {"zone": "a"})))
    return s


def fingerprint(s: ClusterState) -> tuple:
    """Enough of the state to see that a failed operation changed nothing."""
    return (
        {k: id(v) for k, v in s.pods.items()},
        {k: id(v) for k, v in s.nodes.items()},
        list(s.node_names),
        {
            n: (s.node_info(n).requested, dict(s.node_info(n).used_ports), list(s.node_info(n).pods))
            for n in s.nodes
        },
        {k: id(v) for k, v in s.unbound_pods.items()},
    )


# --- nodes -------------------------------------------------------------------------------------


def test_add_node_indexes_it():
    s = state_with_nodes("n1", "n2", n1={"zone": "a"}, n2={"zone": "b"})
    assert list(s.node_names) == ["n1", "n2"]
    assert s.node_index("n2") == 1
    assert s.num_nodes == 2
    assert set(s.nodes_with_label("zone", "a")) == {"n1"}
    assert set(s.node_label_values("zone")) == {"a", "b"}
    info = s.node_info("n1")
    assert info.allocatable == Resources(4000, 8 * 1024 * Mi, 0, 110)
    assert s.node_vector("allocatable_pods").tolist() == [110, 110]


def test_add_duplicate_node_raises_and_changes_nothing():
    s = state_with_nodes("n1")
    before = fingerprint(s)
    with pytest.raises(ClusterError, match='node "n1" already exists'):
        s.add_node(make_node("n1", {"zone": "z"}))
    assert fingerprint(s) == before
    assert set(s.nodes_with_label("zone", "a")) == {"n1"}


def test_update_node_changes_labels_and_allocatable():
    s = state_with_nodes("n1")
    gen = s.node_generation
    s.update_node(make_node("n1", {"zone": "b"}, cpu="8"))
    assert s.node_generation != gen
    assert not s.nodes_with_label("zone", "a") and set(s.nodes_with_label("zone", "b")) == {"n1"}
    assert s.node_vector("allocatable_milli_cpu").tolist() == [8000]
    assert s.node_info("n1").allocatable.milli_cpu == 8000
    with pytest.raises(ClusterError, match='node "nx" not found'):
        s.update_node(make_node("nx"))


def test_delete_node_keeps_ids_dense_by_moving_the_last_node():
    s = state_with_nodes("n1", "n2", "n3")
    s.add_pod(make_pod("p", node="n3", cpu="1", labels={"app": "x"}))
    counts = s.pod_counts(None, sel(app="x"))
    assert counts.tolist() == [0, 0, 1]
    s.delete_node("n1")
    assert list(s.node_names) == ["n3", "n2"]
    assert s.node_index("n3") == 0 and s.node_info("n3").index == 0
    assert s.node_vector("requested_milli_cpu").tolist() == [1000, 0]
    assert s.pod_counts(None, sel(app="x")).tolist() == [1, 0]
    with pytest.raises(ClusterError):
        s.node_index("n1")
    # a later node takes the next id; its vectors start at zero
    s.add_node(make_node("n4"))
    assert s.node_index("n4") == 2
    assert s.node_vector("requested_milli_cpu").tolist() == [1000, 0, 0]


def test_delete_node_with_bound_pods_raises_and_changes_nothing():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1"))
    before = fingerprint(s)
    with pytest.raises(ClusterError, match="1 pod"):
        s.delete_node("n1")
    assert fingerprint(s) == before
    with pytest.raises(ClusterError, match='node "nx" not found'):
        s.delete_node("nx")


def test_many_nodes_grow_the_vectors():
    s = ClusterState()
    for i in range(100):
        s.add_node(make_node(f"n{i:03d}"))
    assert s.num_nodes == 100 and len(s.node_vector("pod_count")) == 100
    assert s.node_names[57] == "n057"


# --- pods ----------------------------------------------------------------------------------------


def test_add_unbound_pod():
    s = state_with_nodes("n1")
    p = make_pod("p", labels={"app": "x"})
    s.add_pod(p)
    assert s.pods["default/p"] is p
    assert s.unbound_pods.keys() == {"default/p"}
    assert s.node_of("default/p") == ""
    assert set(s.pods_in_namespace("default")) == {"default/p"}
    assert set(s.pods_with_label("app", "x")) == {"default/p"}
    assert s.node_info("n1").pod_count == 0


def test_add_bound_pod_updates_node_info():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1", cpu="500m", memory="1Gi"))
    s.add_pod(make_pod("q", node="n1"))  # no requests: non-zero defaults 100m / 200Mi
    info = s.node_info("n1")
    assert info.requested == Resources(milli_cpu=500, memory=1024 * Mi)
    assert (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory) == (600, 1224 * Mi)
    assert info.pod_count == 2 and set(s.pods_on_node("n1")) == {"default/p", "default/q"}
    assert s.node_vector("pod_count").tolist() == [2]
    assert s.node_vector("non_zero_memory").tolist() == [1224 * Mi]
    assert not s.unbound_pods


def test_add_pod_errors_change_nothing():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p"))
    before = fingerprint(s)
    with pytest.raises(ClusterError, match='pod "default/p" already exists'):
        s.add_pod(make_pod("p", node="n1"))
    with pytest.raises(ClusterError, match='node "nx", which does not exist'):
        s.add_pod(make_pod("q", node="nx"))
    assert fingerprint(s) == before
    assert "default/q" not in s.pods


def test_bind_and_unbind():
    s = state_with_nodes("n1", "n2")
    original = make_pod("p", cpu="1", labels={"app": "x"})
    s.add_pod(original)
    s.bind("default/p", "n2")
    bound = s.pods["default/p"]
    assert bound.spec.node_name == "n2" and original.spec.node_name == ""  # a copy was bound
    assert s.pods_with_label("app", "x")["default/p"] is bound
    assert s.node_of("default/p") == "n2"
    assert s.node_vector("requested_milli_cpu").tolist() == [0, 1000]
    assert s.node_info("n2").pods["default/p"] is bound
    s.unbind("default/p")
    assert s.pods["default/p"].spec.node_name == ""
    assert s.node_vector("requested_milli_cpu").tolist() == [0, 0]
    assert s.unbound_pods.keys() == {"default/p"}
    assert s.node_info("n2").requested.is_zero()


def test_bind_errors_change_nothing():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1"))
    s.add_pod(make_pod("u"))
    before = fingerprint(s)
    with pytest.raises(ClusterError, match='pod "default/x" not found'):
        s.bind("default/x", "n1")
    with pytest.raises(ClusterError, match='already bound to node "n1"'):
        s.bind("default/p", "n1")
    with pytest.raises(ClusterError, match='node "nx" not found'):
        s.bind("default/u", "nx")
    with pytest.raises(ClusterError, match="not bound"):
        s.unbind("default/u")
    with pytest.raises(ClusterError, match="not found"):
        s.unbind("default/x")
    assert fingerprint(s) == before


def test_update_pod_reindexes_labels_and_node():
    s = state_with_nodes("n1", "n2")
    s.add_pod(make_pod("p", node="n1", labels={"app": "x"}, cpu="1"))
    counts_x = s.pod_counts(None, sel(app="x"))
    counts_y = s.pod_counts(None, sel(app="y"))
    s.update_pod(make_pod("p", node="n2", labels={"app": "y"}, cpu="2"))
    assert not s.pods_with_label("app", "x") and set(s.pods_with_label("app", "y")) == {"default/p"}
    assert counts_x.tolist() == [0, 0] and counts_y.tolist() == [0, 1]
    assert s.node_vector("requested_milli_cpu").tolist() == [0, 2000]
    with pytest.raises(ClusterError, match="not found"):
        s.update_pod(make_pod("zz"))
    before = fingerprint(s)
    with pytest.raises(ClusterError, match="does not exist"):
        s.update_pod(make_pod("p", node="nx"))
    assert fingerprint(s) == before


def test_delete_pod():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1", cpu="1", labels={"app": "x"}, host_ports=[80]))
    s.delete_pod("default/p")
    assert not s.pods and not s.pods_in_namespace("default") and not s.pod_label_values("app")
    info = s.node_info("n1")
    assert info.requested.is_zero() and not info.used_ports and info.pod_count == 0
    with pytest.raises(ClusterError, match="not found"):
        s.delete_pod("default/p")


def test_host_ports_are_sanitized_and_counted_per_holder():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("a", node="n1", host_ports=[80, (53, "UDP", "10.0.0.1")]))
    s.add_pod(make_pod("b", node="n1", host_ports=[80]))
    assert s.node_info("n1").used_ports == {("0.0.0.0", "TCP", 80): 2, ("10.0.0.1", "UDP", 53): 1}
    s.delete_pod("default/b")
    assert ("0.0.0.0", "TCP", 80) in s.node_info("n1").used_ports


def test_init_container_host_ports_held_only_by_sidecars():
    # GetHostPorts: a plain init container has exited before the pod runs
    init = [
        {"name": "i", "image": "x", "ports": [{"containerPort": 1, "hostPort": 1001}]},
        {
            "name": "s",
            "image": "x",
            "restartPolicy": "Always",
            "ports": [{"containerPort": 2, "hostPort": 1002}],
        },
    ]
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1", init=init))
    assert set(s.node_info("n1").used_ports) == {("0.0.0.0", "TCP", 1002)}


def test_terminating_pod_holds_resources_but_spread_counts_skip_it():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1", cpu="1", labels={"app": "x"}, terminating=True))
    info = s.node_info("n1")
    assert info.requested.milli_cpu == 1000 and info.pod_count == 1
    assert s.pod_counts(None, sel(app="x")).tolist() == [1]
    assert s.pod_counts(None, sel(app="x"), include_terminating=False).tolist() == [0]
    assert s.pods["default/p"].is_terminating


def test_finished_pod_is_indexed_but_not_on_node_info():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("p", node="n1", cpu="1", labels={"app": "x"}, phase="Succeeded", host_ports=[80]))
    info = s.node_info("n1")
    assert set(s.pods_on_node("n1")) == {"default/p"} and not info.pods
    assert info.requested.is_zero() and not info.used_ports and info.pod_count == 0
    assert s.pod_counts(None, sel(app="x")).tolist() == [0]
    assert set(s.pods_with_label("app", "x")) == {"default/p"}
    # it still holds the node: the node cannot be deleted under it
    with pytest.raises(ClusterError):
        s.delete_node("n1")
    # a running pod that finishes leaves NodeInfo
    s.add_pod(make_pod("q", node="n1", cpu="1", labels={"app": "x"}))
    s.update_pod(make_pod("q", node="n1", cpu="1", labels={"app": "x"}, phase="Failed"))
    assert s.node_info("n1").requested.is_zero() and s.pod_counts(None, sel(app="x")).tolist() == [0]


# --- matching-pod counts ------------------------------------------------------------------------


def test_pod_counts_live_shared_and_read_only():
    s = state_with_nodes("n1", "n2")
    s.add_pod(make_pod("a", node="n1", labels={"app": "x"}))
    s.add_pod(make_pod("b", namespace="other", node="n2", labels={"app": "x"}))
    s.add_pod(make_pod("c", labels={"app": "x"}))
    v = s.pod_counts(None, sel(app="x"))
    assert v.tolist() == [1, 1]
    assert s.pod_counts(None, sel(app="x")) is v  # equal keys share one vector
    assert np.shares_memory(s.pod_counts(frozenset({"default"}), sel(app="x")), v) is False
    s.bind("default/c", "n2")
    assert v.tolist() == [1, 2]  # live
    with pytest.raises(ValueError):
        v[0] = 5
    assert s.pod_counts(frozenset({"default"}), sel(app="x")).tolist() == [1, 1]
    assert s.pod_counts(frozenset({"other", "nope"}), sel(app="x")).tolist() == [0, 1]
    assert s.pod_counts(None, EVERYTHING).tolist() == [1, 2]
    assert s.pod_counts(None, NOTHING).tolist() == [0, 0]
    assert s.pod_counts({"default"}, sel(app="x")).tolist() == [1, 1]  # type: ignore[arg-type]


def test_pod_counts_with_expressions():
    s = state_with_nodes("n1", "n2")
    exists = compile_label_selector(
        LabelSelector.from_dict({"matchExpressions": [{"key": "app", "operator": "Exists"}]})
    )
    not_in = compile_label_selector(
        LabelSelector.from_dict({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["x"]}]})
    )
    in_many = compile_label_selector(
        LabelSelector.from_dict(
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["x", "y"]}]}
        )
    )
    vs = [s.pod_counts(None, k) for k in (exists, not_in, in_many)]
    s.add_pod(make_pod("a", node="n1", labels={"app": "x"}))
    s.add_pod(make_pod("b", node="n2", labels={"app": "y"}))
    s.add_pod(make_pod("c", node="n2", labels={"app": "z"}))
    s.add_pod(make_pod("d", node="n2"))
    assert [v.tolist() for v in vs] == [[1, 2], [0, 3], [1, 1]]


def test_pod_counts_after_node_added_must_be_fetched_again():
    s = state_with_nodes("n1")
    s.add_pod(make_pod("a", node="n1", labels={"app": "x"}))
    v = s.pod_counts(None, sel(app="x"))
    for i in range(40):  # past the initial capacity: buffers are reallocated
        s.add_node(make_node(f"m{i}"))
    s.add_pod(make_pod("b", node="m39", labels={"app": "x"}))
    v2 = s.pod_counts(None, sel(app="x"))
    assert len(v2) == 41 and v2[0] == 1 and v2[40] == 1
    assert len(v) == 1  # the old view is of the old node set


# --- events ------------------------------------------------------------------------------------


def test_listener_sees_every_change_in_order():
    s = state_with_nodes("n1", "n2")
    seen: list[tuple[EventType, str, str]] = []

    def listener(e: ClusterEvent) -> None:
        seen.append((e.type, e.obj.key, e.node_name))
        if e.type is EventType.BOUND:
            assert s.node_of(e.obj.key) == e.node_name  # the state is already updated

    unsubscribe = s.subscribe(listener)
    s.add_pod(make_pod("p"))
    s.bind("default/p", "n1")
    s.update_pod(make_pod("p", node="n2"))
    s.unbind("default/p")
    s.add_pod(make_pod("q", node="n1"))
    s.delete_pod("default/q")
    unsubscribe()
    s.add_pod(make_pod("r"))
    A, B, U, UP, D = EventType.ADDED, EventType.BOUND, EventType.UNBOUND, EventType.UPDATED, EventType.DELETED
    assert seen == [
        (A, "default/p", ""),
        (B, "default/p", "n1"),
        (U, "default/p", "n1"),
        (UP, "default/p", ""),
        (B, "default/p", "n2"),
        (U, "default/p", "n2"),
        (A, "default/q", ""),
        (B, "default/q", "n1"),
        (U, "default/q", "n1"),
        (D, "default/q", ""),
    ]


def test_only_the_bound_right_after_an_update_is_an_echo_of_it():
    """update_pod onto a node tells UPDATED then BOUND with the same objects, the BOUND marked
    as its echo; deleting a bound pod, UNBOUND (the echo) then DELETED; a bind, an unbind or
    a pod added bound is no echo (no other event tells it)."""
    s = state_with_nodes("n1", "n2")
    seen: list[ClusterEvent] = []
    s.subscribe(seen.append)
    s.add_pod(make_pod("p"))
    s.bind("default/p", "n1")
    s.update_pod(make_pod("p", node="n2"))
    s.add_pod(make_pod("q", node="n1"))
    s.update_pod(make_pod("q", node="n1", labels={"v": "2"}))
    s.delete_pod("default/q")
    s.unbind("default/p")
    assert [(e.type, e.obj.key, e.echo) for e in seen if e.type in (EventType.BOUND, EventType.UNBOUND)] == [
        (EventType.BOUND, "default/p", False),
        (EventType.UNBOUND, "default/p", False),  # update_pod moving it off n1
        (EventType.BOUND, "default/p", True),
        (EventType.BOUND, "default/q", False),
        (EventType.UNBOUND, "default/q", True),
        (EventType.UNBOUND, "default/p", False),
    ]
    bound, unbound = (i for i, e in enumerate(seen) if e.echo)
    updated, deleted = seen[bound - 1], seen[unbound + 1]
    assert updated.type is EventType.UPDATED and deleted.type is EventType.DELETED
    assert (updated.obj, updated.old) == (seen[bound].obj, seen[bound].old)
    assert deleted.obj is seen[unbound].obj


def test_hypothetical_changes_reach_only_derived_listeners():
    s = state_with_nodes("n1")
    plain: list[EventType] = []
    derived: list[EventType] = []
    s.subscribe(lambda e: plain.append(e.type))
    unsubscribe = s.subscribe(lambda e: derived.append(e.type), derived=True)
    s.add_pod(make_pod("p", node="n1"))
    assert plain == derived == [EventType.ADDED, EventType.BOUND]
    with s.hypothetical():
        with s.hypothetical():  # nested scopes, as a dry run inside a dry run
            s.unbind("default/p")
        s.bind("default/p", "n1")
    assert plain == [EventType.ADDED, EventType.BOUND]
    assert derived[2:] == [EventType.UNBOUND, EventType.BOUND]
    s.delete_pod("default/p")  # outside the scope everyone hears again
    assert plain[-1] is EventType.DELETED and derived[-1] is EventType.DELETED
    unsubscribe()
    s.add_pod(make_pod("q"))
    assert derived[-1] is EventType.DELETED and plain[-1] is EventType.ADDED


def test_listeners_of_some_kinds_hear_exactly_those_events_in_subscription_order():
    s = state_with_nodes("n1")
    heard: list[tuple[str, str, str]] = []
    s.subscribe(lambda e: heard.append(("all", e.kind, e.type)))
    s.subscribe(lambda e: heard.append(("pods", e.kind, e.type)), kinds=("Pod",))
    nodes_off = s.subscribe(lambda e: heard.append(("nodes", e.kind, e.type)), kinds=["Node"])
    s.subscribe(lambda e: heard.append(("derived pods", e.kind, e.type)), derived=True, kinds={"Pod"})

    def changes() -> None:
        s.add_node(make_node("n2"))
        s.add_pod(make_pod("p", node="n1"))
        s.add_object(Deployment.from_dict({"metadata": {"name": "d", "namespace": "default"}}))
        with s.hypothetical():
            s.unbind("default/p")
            s.bind("default/p", "n1")
        s.delete_pod("default/p")

    changes()
    everything = [(kind, type_) for who, kind, type_ in heard if who == "all"]
    for who, kinds, derived in (
        ("pods", {"Pod"}, False),
        ("nodes", {"Node"}, False),
        ("derived pods", {"Pod"}, True),
    ):
        expected = [(k, t) for k, t in everything if k in kinds]
        if derived:  # and the tentative changes, which the plain listeners never hear
            expected[2:2] = [("Pod", EventType.UNBOUND), ("Pod", EventType.BOUND)]
        assert [(k, t) for w, k, t in heard if w == who] == expected
    # one delivery per change: each listener's entries follow the order they subscribed in
    assert [w for w, k, t in heard[:2]] == ["all", "nodes"]
    assert [w for w, k, t in heard[2:5]] == ["all", "pods", "derived pods"]
    heard.clear()
    nodes_off()  # the routes follow (un)subscribing
    late: list[str] = []
    s.subscribe(lambda e: late.append(e.kind), kinds=("Node",))
    s.delete_node("n2")
    assert ("nodes", "Node", EventType.DELETED) not in heard and late == ["Node"]


def test_updates_sharing_the_containers_count_what_a_rebuilt_state_counts():
    """An update whose pod shares its containers with the version it replaces takes that
    version's requests and ports (no recount); one with new containers is counted anew."""
    import copy

    s = state_with_nodes("n1", "n2")
    s.add_pod(make_pod("p", cpu="500m", memory="1Gi", host_ports=[80]))
    s.add_pod(
        make_pod("q", node="n1", cpu="1", init=[{"name": "i", "image": "x", "restartPolicy": "Always"}])
    )
    s.add_pod(make_pod("done", node="n2", cpu="2", phase="Succeeded"))

    def shallow(key: str) -> Pod:
        pod = copy.copy(s.pods[key])
        pod.spec = copy.copy(pod.spec)
        pod.metadata = copy.copy(pod.metadata)
        return pod

    def node_totals(state: ClusterState) -> dict[str, tuple]:
        return {
            n: (
                repr(state.node_info(n).requested),
                repr(state.node_info(n).non_zero_requested),
                dict(state.node_info(n).used_ports),
            )
            for n in state.nodes
        }

    bound = shallow("default/p")
    bound.spec.node_name = "n2"  # a bind written as an update: the containers are shared
    s.update_pod(bound)
    resized = shallow("default/q")
    resized.spec.containers = make_pod("q", cpu="3", host_ports=[8080]).spec.containers  # new objects
    s.update_pod(resized)
    revived = shallow("default/done")
    revived.status = copy.copy(revived.status)
    revived.status.phase = "Running"  # finished before: it counted nothing to reuse
    s.update_pod(revived)
    rebuilt = state_with_nodes("n1", "n2")
    for pod in s.pods.values():
        rebuilt.add_pod(pod)
    assert node_totals(s) == node_totals(rebuilt)
    assert s.node_info("n1").used_ports and s.node_info("n2").used_ports


def test_bind_event_carries_old_and_new_pod():
    s = state_with_nodes("n1")
    events: list[ClusterEvent] = []
    s.subscribe(events.append)
    s.add_pod(make_pod("p"))
    s.bind("default/p", "n1")
    e = events[-1]
    assert e.kind == "Pod" and e.obj.spec.node_name == "n1" and e.old.spec.node_name == ""
    assert "Bound Pod default/p node=n1" in repr(e)


# --- other objects, generic operations ------------------------------------------------------------


def test_namespaces_and_namespace_selectors():
    s = ClusterState()
    s.add(make_namespace("a", {"team": "x"}))
    s.add(make_namespace("b", {"team": "y"}))
    assert s.namespaces_matching(sel(team="x")) == frozenset({"a"})
    assert s.namespaces_matching(EVERYTHING) == frozenset({"a", "b"})
    s.update(make_namespace("b", {"team": "x"}))
    assert s.namespaces_matching(sel(team="x")) == frozenset({"a", "b"})
    s.delete("Namespace", "a")
    assert set(s.namespaces) == {"b"}
    with pytest.raises(ClusterError, match="already exists"):
        s.add_namespace(make_namespace("b"))
    with pytest.raises(ClusterError, match="not found"):
        s.delete_namespace("a")
    with pytest.raises(ClusterError, match="not found"):
        s.update_namespace(make_namespace("zz"))


def test_workload_objects_by_kind_and_key():
    s = ClusterState()
    d = Deployment.from_dict({"metadata": {"name": "web", "namespace": "prod"}, "spec": {"replicas": 3}})
    s.add(d)
    assert s.objects("Deployment") == {"prod/web": d}
    assert s.get("Deployment", "prod/web") is d
    d2 = Deployment.from_dict({"metadata": {"name": "web", "namespace": "prod"}, "spec": {"replicas": 5}})
    s.update(d2)
    assert s.get("Deployment", "prod/web") is d2
    with pytest.raises(ClusterError, match='Deployment "prod/web" already exists'):
        s.add(d)
    svc = Service.from_dict({"metadata": {"name": "web"}})
    s.add(svc)
    assert s.get("Service", "default/web") is svc
    s.delete("Deployment", "prod/web")
    assert not s.objects("Deployment")
    with pytest.raises(ClusterError, match="not found"):
        s.delete("Deployment", "prod/web")
    with pytest.raises(ClusterError, match="not found"):
        s.update(d)
    with pytest.raises(ClusterError, match="does not keep KubeSchedulerConfiguration"):
        s.add(KubeSchedulerConfiguration())
    with pytest.raises(ClusterError, match="does not keep"):
        s.objects("Widget")
    assert s.get("Widget", "x") is None


def test_generic_dispatch_and_add_all_adds_nodes_first():
    s = ClusterState()
    s.add_all([make_pod("p", node="n1", cpu="1"), make_namespace("default"), make_node("n1")])
    assert s.node_of("default/p") == "n1"
    assert s.get("Pod", "default/p") is s.pods["default/p"]
    assert s.get("Node", "n1") is s.nodes["n1"] and s.get("Namespace", "default") is not None
    s.update(make_node("n1", {"x": "y"}))
    assert set(s.nodes_with_label("x", "y")) == {"n1"}
    s.delete("Pod", "default/p")
    s.delete("Node", "n1")
    assert s.num_nodes == 0 and not s.pods


def test_node_label_column_gives_domain_codes():
    s = state_with_nodes("n1", "n2", "n3", n1={"zone": "b"}, n2={"zone": "a"}, n3={})
    codes, values = s.node_label_column("zone")
    assert values == ("a", "b") and codes.tolist() == [1, 0, -1]
    s.update_node(make_node("n3", {"zone": "a"}))
    codes, values = s.node_label_column("zone")
    assert codes.tolist() == [1, 0, 0]
    assert s.node_label_column("missing")[0].tolist() == [-1, -1, -1]


def test_read_only_views():
    s = state_with_nodes("n1")
    with pytest.raises(TypeError):
        s.pods["x"] = None  # type: ignore[index]
    with pytest.raises(ValueError):
        s.node_names[0] = "zz"
    with pytest.raises(ValueError):
        s.node_vector("pod_count")[0] = 3
    with pytest.raises(KeyError):
        s.node_vector("nope")
    assert "ClusterState(nodes=1" in repr(s)
