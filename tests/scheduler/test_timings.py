"""Every plugin call of a scheduling cycle is timed and kept in its Decision, per extension
point (kube-scheduler's metric labels) and plugin: nothing global."""

from __future__ import annotations

from builders import cluster_of, make_node, make_pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler import default_profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.timings import CycleTimings

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


def _busy_cluster() -> ClusterState:
    """300 nodes over 3 zones, 600 pods of two apps running: a cycle with real work."""
    nodes = [make_node(f"n{i:03d}").zone("abc"[i % 3]).capacity(cpu="8") for i in range(300)]
    pods = [
        make_pod(f"{app}-{i}").labels(app=app).req(cpu="100m").node(f"n{(i * 7) % 300:03d}")
        for app in ("web", "db")
        for i in range(300)
    ]
    return cluster_of(nodes, pods)


def test_the_rows_add_up_to_the_cycle_within_ten_percent() -> None:
    """Plugins and the framework's own timed work (inside the points and the steps outside
    them) account for the cycle: what is in no row (the glue, the clock reads) stays under
    10%. The median of five cycles, so one preemption of the process does not decide it."""
    cluster = _busy_cluster()
    profile = default_profile()
    pod = make_pod("web-new").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB).obj()
    left = []
    for _ in range(5):
        t = schedule_one(pod, cluster, profile).timings
        assert t is not None
        rows = t.rows()
        # the rows are every timed part: plugins, then each point's framework work and the steps
        assert sum(r.ns for r in rows if not r.framework) == t.plugin_ns
        assert sum(r.ns for r in rows) == sum(t.points.values()) + sum(t.steps.values())
        assert {r.point for r in rows if r.framework} >= {"Filter", "Score", "Snapshot", "SelectHost"}
        assert t.plugin_ns + t.framework_ns + t.other_ns == t.cycle_ns
        left.append(t.other_ns / t.cycle_ns)
    assert sorted(left)[2] < 0.10


def test_an_unschedulable_cycle_times_its_fit_error_and_many_cycles_add_up() -> None:
    cluster = _busy_cluster()
    profile = default_profile()
    big = make_pod("big").req(cpu="64").obj()
    small = make_pod("small").req(cpu="1").obj()
    a, b = (schedule_one(p, cluster, profile).timings for p in (big, small))
    assert a is not None and b is not None
    assert "FitError" in a.steps and "SelectHost" not in a.steps
    assert a.status("Filter", "NodeResourcesFit") == "UnschedulableAndUnresolvable"  # > allocatable
    total = CycleTimings()
    total.add(a)
    total.add(b)
    assert total.cycle_ns == a.cycle_ns + b.cycle_ns
    assert total.plugins["Filter"]["NodeResourcesFit"] == (
        a.plugins["Filter"]["NodeResourcesFit"] + b.plugins["Filter"]["NodeResourcesFit"]
    )
    assert total.status("Filter", "NodeResourcesFit") == "UnschedulableAndUnresolvable"  # the worst
    assert set(total.steps) == set(a.steps) | set(b.steps)
    d = total.to_dict()
    assert d["cycleMicroseconds"] == round(total.cycle_ns / 1000, 1)
    assert [s["name"] for s in d["frameworkSteps"]] == ["Snapshot", "SelectHost", "FitError"]


def test_a_filter_calls_status_is_the_worst_it_gave_a_node_not_the_worst_it_could() -> None:
    # every node has the zone label: the spread Filter rejects for skew only (Unschedulable),
    # though its vectorized answer also lists the missing-label code it did not give
    nodes = [make_node(f"n{i}").zone("ab"[i % 2]).capacity(cpu="4") for i in range(4)]
    running = [make_pod(f"web-{i}").labels(app="web").node(f"n{2 * i}") for i in range(2)]
    cluster = cluster_of(nodes, running)
    pod = make_pod("web-new").labels(app="web").spread(1, ZONE, selector=WEB).obj()
    decision = schedule_one(pod, cluster, default_profile())
    assert decision.selected in ("n1", "n3")
    assert decision.timings is not None
    assert decision.timings.status("Filter", "PodTopologySpread") == "Unschedulable"
    # kept as plain strings (a Code is a str enum that YAML cannot dump)
    assert {type(v) for per in decision.timings.statuses.values() for v in per.values()} == {str}
