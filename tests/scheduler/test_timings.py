"""Every plugin call of a scheduling cycle is timed and kept in its Decision, per extension
point (kube-scheduler's metric labels) and plugin: nothing global."""

from __future__ import annotations

from builders import cluster_of, make_node, make_pod
from kubespread.scheduler import default_profile
from kubespread.scheduler.scheduler import schedule_one

WEB = {"matchLabels": {"app": "web"}}
ZONE = "topology.kubernetes.io/zone"


def test_a_scheduled_pod_times_every_plugin_it_ran() -> None:
    cluster = cluster_of([make_node(f"n{i}").zone("ab"[i % 2]).capacity(cpu="4") for i in range(4)])
    pod = make_pod("web").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB).obj()
    profile = default_profile()
    decision = schedule_one(pod, cluster, profile)
    assert decision.selected is not None
    assert decision.timings is not None
    t = decision.timings.plugins
    assert set(t) >= {"PreFilter", "Filter", "PreScore", "Score", "NormalizeScore"}
    assert "PodTopologySpread" in t["Filter"] and "NodeResourcesFit" in t["Filter"]
    assert set(t["Score"]) == set(decision.scores)  # exactly the plugins that scored
    assert all(ns >= 0 for point in t.values() for ns in point.values())
    assert sum(t["Filter"].values()) > 0
    # a second decision has its own timings
    assert schedule_one(pod, cluster, profile).timings is not decision.timings


def test_an_unschedulable_pod_times_postfilter_and_no_score() -> None:
    cluster = cluster_of([make_node("n0").capacity(cpu="1")])
    pod = make_pod("big").req(cpu="2").obj()
    decision = schedule_one(pod, cluster, default_profile())
    assert decision.selected is None
    assert decision.timings is not None
    assert "DefaultPreemption" in decision.timings.plugins.get("PostFilter", {})
    assert "Score" not in decision.timings.plugins


def test_points_statuses_and_the_cycle() -> None:
    nodes = [make_node(f"n{i}").zone("ab"[i % 2]).capacity(cpu="2") for i in range(4)]
    nodes.append(make_node("small").zone("a").capacity(cpu="100m"))
    cluster = cluster_of(nodes)
    pod = make_pod("web").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB).obj()
    decision = schedule_one(pod, cluster, default_profile())
    t = decision.timings
    assert t is not None and decision.selected is not None
    # a Filter call that rejected a node says so; one that rejected none is Success
    assert t.status("Filter", "NodeResourcesFit") == "UnschedulableAndUnresolvable"  # > allocatable
    assert t.status("Filter", "PodTopologySpread") == "Success"
    assert "PodTopologySpread" not in t.statuses.get("Filter", {})  # only other codes are kept
    assert t.point_status["Filter"] == "Success"
    # each point holds its plugins' time, and the cycle holds every point's
    for point in ("PreFilter", "Filter", "PreScore"):
        assert t.points[point] >= sum(t.plugins[point].values())
    assert t.points["Score"] >= sum(t.plugins["Score"].values()) + sum(t.plugins["NormalizeScore"].values())
    assert t.cycle_ns >= sum(t.points.values()) > 0
    d = t.to_dict()
    assert [p["name"] for p in d["extensionPoints"]] == ["PreFilter", "Filter", "PreScore", "Score"]
    score = next(p for p in d["extensionPoints"] if p["name"] == "Score")
    assert {q["extensionPoint"] for q in score["plugins"]} == {"Score", "NormalizeScore"}


def test_a_prefilter_rejection_is_the_points_status() -> None:
    cluster = cluster_of([make_node("n0").zone("a").capacity(cpu="4")])
    # two names required at once: NodeAffinity's PreFilter finds no node can be both
    names = ({"key": "metadata.name", "operator": "In", "values": [n]} for n in ("a", "b"))
    term = {"matchFields": list(names)}
    required = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    pod = make_pod("p").affinity(required, {"nodeSelectorTerms": [term]}).obj()
    decision = schedule_one(pod, cluster, default_profile())
    assert decision.selected is None and decision.timings is not None
    assert decision.timings.point_status["PreFilter"] == "UnschedulableAndUnresolvable"
    assert decision.timings.status("PreFilter", "NodeAffinity") == "UnschedulableAndUnresolvable"
    assert "Filter" not in decision.timings.plugins


def test_untimed_cycles_decide_alike_and_keep_no_timings() -> None:
    cluster = cluster_of([make_node(f"n{i}").zone("abc"[i % 3]).capacity(cpu="4") for i in range(6)])
    profile = default_profile()
    for i in range(6):
        pod = make_pod(f"web-{i}").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB).obj()
        timed = schedule_one(pod, cluster, profile)
        untimed = schedule_one(pod, cluster, profile, timed=False)
        assert untimed.timings is None
        assert (timed.selected, timed.feasible, timed.totals.tolist()) == (
            untimed.selected,
            untimed.feasible,
            untimed.totals.tolist(),
        )
        assert timed.selected is not None
        cluster.add_pod(make_pod(f"web-{i}").labels(app="web").req(cpu="1").node(timed.selected).obj())
