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
    t = decision.timings
    assert set(t) >= {"PreFilter", "Filter", "PreScore", "Score", "NormalizeScore"}
    assert "PodTopologySpread" in t["Filter"] and "NodeResourcesFit" in t["Filter"]
    assert set(t["Score"]) == set(decision.scores)  # exactly the plugins that scored
    assert all(ns >= 0 for point in t.values() for ns in point.values())
    assert sum(t["Filter"].values()) > 0
    # a second decision has its own timings
    assert schedule_one(pod, cluster, profile).timings is not t


def test_an_unschedulable_pod_times_postfilter_and_no_score() -> None:
    cluster = cluster_of([make_node("n0").capacity(cpu="1")])
    pod = make_pod("big").req(cpu="2").obj()
    decision = schedule_one(pod, cluster, default_profile())
    assert decision.selected is None
    assert "DefaultPreemption" in decision.timings.get("PostFilter", {})
    assert "Score" not in decision.timings
