"""kubespread.scheduler.views: spread as the scheduler counts it, per pod and per workload.

The per-pod views must agree with the Filter itself (the domains they allow are the nodes it
lets through); the per-workload rows put the scheduler's view first and name the raw one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_node, make_pod
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.cluster.workloads import WorkloadRef
from kubespread.scheduler import default_profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.views import SpreadRow, constraint_views, profile_views, spread_rows

WEB = {"matchLabels": {"app": "web"}}
PROFILES = {"default-scheduler": default_profile()}


def owned(pod: PodBuilder, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"{name}-uid", "controller": True}
    return pod.set("metadata.ownerReferences", [ref])


def replica_set(name: str, deployment: str | None = "web", selector: dict[str, Any] = WEB) -> ReplicaSet:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"{name}-uid"}
    if deployment:
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment, "uid": "d"}
        meta["ownerReferences"] = [{**ref, "controller": True}]
    return ReplicaSet.from_dict(
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": {"selector": selector}}
    )


def deployment(name: str = "web") -> Deployment:
    return Deployment.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default", "uid": "d"},
            "spec": {"selector": WEB, "template": {"metadata": {"labels": {"app": "web"}}}},
        }
    )


def web_pod(name: str, node: str | None, rs: str = "web-1", **labels: str) -> PodBuilder:
    p = owned(make_pod(name).labels(app="web", **labels), "ReplicaSet", rs)
    return p.node(node) if node else p


def only(rows: list[SpreadRow], key: str = ZONE) -> SpreadRow:
    (row,) = [r for r in rows if r.topology_key == key]
    return row


# ------------------------------------------------------------------ one pod: as the Filter


@pytest.mark.parametrize("taints_policy", ["Ignore", "Honor"])
def test_the_allowed_domains_are_the_nodes_the_filter_lets_through(taints_policy: str) -> None:
    """Two hard constraints (zone, hostname). 'nokey' has a zone but no hostname: PreFilter
    counts neither its pods nor its zone for any constraint, and the views say the same.
    'tainted' is left out under Honor."""
    nodes = [
        make_node("a1").zone("a"),
        make_node("a2").zone("a"),
        make_node("b1").zone("b"),
        make_node("c1").zone("c").taint("dedicated", "x"),
        make_node("nokey").zone("d").no_label(HOSTNAME),
    ]
    pods = [web_pod("w1", "a1"), web_pod("w2", "a2"), web_pod("w3", "nokey"), web_pod("w4", "nokey")]
    cluster = cluster_of(nodes, pods)
    incoming = (
        make_pod("new")
        .labels(app="web")
        .toleration("dedicated", "x", "NoSchedule")
        .spread(1, ZONE, selector=WEB, nodeTaintsPolicy=taints_policy)
        .spread(1, HOSTNAME, selector=WEB)
        .obj()
    )
    zone, host = constraint_views(cluster, incoming)
    assert "d" not in zone.domains and "nokey" not in host.domains  # not counted anywhere
    assert zone.missing_key == () and host.missing_key == ("nokey",)
    decision = schedule_one(incoming, cluster, default_profile())
    allowed = {
        name
        for name, node in cluster.nodes.items()
        if node.metadata.labels.get(ZONE) in zone.allowed and name in host.allowed
    }
    assert set(decision.feasible) == allowed
    assert zone.domains == {"a": 2, "b": 0, "c": 0} and zone.skew == 2 and not zone.within


def test_node_taints_policy_honor_leaves_the_tainted_zone_out() -> None:
    cluster = cluster_of(
        [make_node("a1").zone("a"), make_node("b1").zone("b"), make_node("c1").zone("c").taint("down")],
        [web_pod("w1", "a1"), web_pod("w2", "b1")],
    )
    honor = make_pod("p").labels(app="web").spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor").obj()
    ignore = make_pod("p").labels(app="web").spread(1, ZONE, selector=WEB).obj()
    (h,) = constraint_views(cluster, honor)
    (i,) = constraint_views(cluster, ignore)
    assert (h.domains, h.min_match, h.skew, h.allowed) == ({"a": 1, "b": 1}, 1, 0, ("a", "b"))
    assert (i.domains, i.min_match, i.skew, i.allowed) == ({"a": 1, "b": 1, "c": 0}, 0, 1, ("c",))
    assert i.tainted_domains == {"c": ("c1",)}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("abc"), st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"])
        ),
        min_size=1,
        max_size=9,
    ),
    st.booleans(),
)
def test_a_domain_is_counted_tainted_when_each_of_its_nodes_is(
    nodes: list[tuple[str, str]], tolerate: bool
) -> None:
    """``tainted_domains`` (counted per domain at once) against its definition, domain by
    domain: the zones every node of which has a taint the pod does not tolerate, with those
    nodes in node-id order; a PreferNoSchedule taint, or a tolerated one, leaves a node out."""
    builders = []
    for i, (zone, effect) in enumerate(nodes):
        b = make_node(f"n{i}").zone(zone)
        builders.append(b.taint("down", effect=effect) if effect else b)
    cluster = cluster_of(builders, [web_pod("w0", "n0")])
    pod = make_pod("p").labels(app="web").spread(1, ZONE, selector=WEB)
    if tolerate:
        pod = pod.toleration("down", "", "NoExecute")
    (view,) = constraint_views(cluster, pod.obj())
    untolerated = {
        f"n{i}"
        for i, (_, effect) in enumerate(nodes)
        if effect in ("NoSchedule", "NoExecute") and not (tolerate and effect == "NoExecute")
    }
    expected = {}
    for zone in sorted({z for z, _ in nodes}):
        members = tuple(
            str(n)
            for n in cluster.node_names[: cluster.num_nodes]
            if cluster.nodes[str(n)].metadata.labels[ZONE] == zone
        )
        if all(n in untolerated for n in members):
            expected[zone] = members
    assert view.tainted_domains == expected


def test_system_default_constraints_spread_by_hostname_without_zones() -> None:
    """System defaulting counts its soft constraints each on its own (as PreScore does): on a
    cluster without zone labels the hostname default still sees every node."""
    nodes = [make_node("n1"), make_node("n2")]
    cluster = cluster_of(nodes, [web_pod("w1", "n1"), web_pod("w2", "n1")], objects=[replica_set("web-1")])
    views = profile_views(cluster, web_pod("w3", None).obj(), default_profile())
    host = next(v for v in views if v.constraint.topology_key == HOSTNAME)
    assert host.defaulted and host.domains == {"n1": 2, "n2": 0} and host.skew == 2
    assert host.constraint.max_skew == 3 and host.when_unsatisfiable == "ScheduleAnyway"


# ------------------------------------------------------------------ one workload


def failed_zone_cluster() -> ClusterState:
    """web-1 (of Deployment web) 2/2 over zones a and b; zone c's node is down (tainted)."""
    nodes = [
        make_node("a1").zone("a"),
        make_node("b1").zone("b"),
        make_node("c1").zone("c").taint("node.kubernetes.io/unreachable"),
    ]
    pods = [
        web_pod(f"web-1-{i}", n).spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor")
        for i, n in enumerate(["a1", "a1", "b1", "b1"])
    ]
    return cluster_of(nodes, pods, objects=[deployment(), replica_set("web-1")])


def test_a_row_has_the_schedulers_view_and_the_raw_one_named() -> None:
    row = only(spread_rows(failed_zone_cluster(), PROFILES))
    assert (row.namespace, row.controller) == ("default", WorkloadRef("default", "ReplicaSet", "web-1"))
    assert row.top == WorkloadRef("default", "Deployment", "web")
    assert row.view is not None and row.view.domains == {"a": 2, "b": 2}
    assert (row.skew, row.within) == (0, True)
    assert row.raw_domains == {"a": 2, "b": 2, "c": 0} and row.raw_skew == 2
    assert row.left_out == ("c",) and row.running == 4
    d = row.to_dict()
    assert d["workload"] == {"kind": "ReplicaSet", "namespace": "default", "name": "web-1"}
    assert d["owner"] == {"kind": "Deployment", "name": "web"}
    assert (d["skew"], d["globalMinimum"], d["rawSkew"], d["leftOutDomains"]) == (0, 2, 2, ["c"])
    assert d["domains"] == {"a": 2, "b": 2} and d["rawDomains"] == {"a": 2, "b": 2, "c": 0}
    assert d["constraints"] == [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "minDomains": None}]


def test_the_representative_is_a_pending_pod_first() -> None:
    cluster = failed_zone_cluster()
    cluster.add(web_pod("web-1-zz", None).spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor").obj())
    row = only(spread_rows(cluster, PROFILES))
    assert row.pod == "web-1-zz" and row.running == 4


def test_a_rollouts_revisions_count_each_other_but_raw_is_their_own() -> None:
    """Without matchLabelKeys the new revision's selector matches the old pods: the scheduler
    sees 2/2/2 in all; the new ReplicaSet's own pods are 2/0/0, the old one's 0/2/2."""
    nodes = [make_node(n).zone(n) for n in ("a", "b", "c")]
    old = enumerate(["b", "c", "b", "c"])
    pods = [web_pod(f"old-{i}", n, rs="web-old").spread(1, ZONE, selector=WEB) for i, n in old]
    pods += [web_pod(f"new-{i}", "a", rs="web-new").spread(1, ZONE, selector=WEB) for i in range(2)]
    cluster = cluster_of(nodes, pods, objects=[deployment(), replica_set("web-old"), replica_set("web-new")])
    rows = {r.controller.name: r for r in spread_rows(cluster, PROFILES) if r.controller}
    new = rows["web-new"]
    assert new.view is not None and new.view.domains == {"a": 2, "b": 2, "c": 2} and new.skew == 0
    assert new.raw_domains == {"a": 2, "b": 0, "c": 0} and new.raw_skew == 2
    assert rows["web-old"].raw_domains == {"a": 0, "b": 2, "c": 2}
    assert {r.top for r in rows.values()} == {WorkloadRef("default", "Deployment", "web")}


def test_without_constraints_defaults_then_raw_only_rows_for_affinity_keys() -> None:
    """No constraint of its own: the System defaults (zone left out: no node has it) and a
    raw-only row for the rack key its anti-affinity names."""
    nodes = [make_node("n1").label("rack", "r1"), make_node("n2").label("rack", "r2")]
    pods = [web_pod(f"w{i}", "n1").pod_affinity("rack", WEB, anti=True, weight=10) for i in range(2)]
    cluster = cluster_of(nodes, pods, objects=[deployment(), replica_set("web-1")])
    rows = spread_rows(cluster, PROFILES)
    assert [(r.topology_key, r.view is not None) for r in rows] == [(HOSTNAME, True), ("rack", False)]
    host, rack = rows
    assert host.view is not None and host.view.defaulted and host.skew == 2 and host.within
    assert rack.skew is None and rack.within is None and rack.raw_domains == {"r1": 2, "r2": 0}
    d = rack.to_dict()
    assert d["skew"] is None and d["maxSkew"] is None and d["domains"] is None and d["rawSkew"] == 2


def test_a_workload_with_nothing_to_spread_by_shows_its_pods_by_hostname() -> None:
    profile = default_profile()
    no_pts = {"default-scheduler": type(profile)(profile.scheduler_name)}  # no PodTopologySpread
    nodes = [make_node("n1"), make_node("n2")]
    cluster = cluster_of(nodes, [web_pod("w1", "n1")], objects=[deployment(), replica_set("web-1")])
    (row,) = spread_rows(cluster, no_pts)
    assert (row.topology_key, row.view, row.raw_domains) == (HOSTNAME, None, {"n1": 1, "n2": 0})


def test_pods_without_a_controller_show_only_their_constraints() -> None:
    nodes = [make_node("a1").zone("a"), make_node("b1").zone("b")]
    plain = make_pod("plain").labels(app="x").node("a1")
    y = {"matchLabels": {"app": "y"}}
    spread = make_pod("spread").labels(app="y").node("a1").spread(1, ZONE, selector=y)
    rows = spread_rows(cluster_of(nodes, [plain, spread]), PROFILES)
    assert [(r.pod, r.controller, r.top, r.topology_key, r.skew) for r in rows] == [
        ("spread", None, None, ZONE, 1)
    ]


def test_only_the_workloads_of_the_given_pods_with_all_their_pods() -> None:
    cluster = failed_zone_cluster()
    other: Pod = owned(make_pod("o1").labels(app="o").node("a1"), "ReplicaSet", "other").obj()
    cluster.add(other)
    given = [cluster.pods["default/web-1-0"]]
    (row,) = spread_rows(cluster, PROFILES, given)
    assert row.controller == WorkloadRef("default", "ReplicaSet", "web-1") and row.running == 4
    every = {r.controller for r in spread_rows(cluster, PROFILES)}
    assert every == {WorkloadRef("default", "ReplicaSet", name) for name in ("web-1", "other")}


def test_a_scheduler_that_is_not_simulated_gives_raw_rows_only() -> None:
    cluster = cluster_of(
        [make_node("a1").zone("a"), make_node("b1").zone("b")],
        [web_pod("w1", "a1").set("spec.schedulerName", "elsewhere").spread(1, ZONE, selector=WEB)],
        objects=[deployment(), replica_set("web-1")],
    )
    (row,) = spread_rows(cluster, PROFILES)
    assert (row.topology_key, row.view, row.raw_skew) == (ZONE, None, 1)
