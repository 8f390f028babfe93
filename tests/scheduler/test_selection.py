"""kube-scheduler's node selection: the node tree's order, the rotating start index, sampling,
the nominated node first and the score heap's pick (scheduler/selection.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from builders import ZONE, cluster_of, make_node, make_pod
from kubespread.api.core import Node
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.scheduler import Scheduler, schedule_one
from kubespread.scheduler.selection import NodeOrder, NodeTree, heap_top, num_feasible_nodes_to_find, zone_key
from kubespread.sim.engine import Simulation


def zoned(name: str, zone: str | None) -> Node:
    b = make_node(name)
    b = b.no_label(ZONE) if zone is None else b.zone(zone)
    return b.obj()


def test_num_feasible_nodes_to_find_follows_schedule_one_go() -> None:
    adaptive = {1: 1, 99: 99, 100: 100, 250: 120, 1000: 420, 5000: 500, 6000: 300, 10000: 500}
    for n, want in adaptive.items():
        assert num_feasible_nodes_to_find(0, n) == want, n
    assert num_feasible_nodes_to_find(30, 200) == 100  # at least 100
    assert num_feasible_nodes_to_find(30, 1000) == 300
    assert num_feasible_nodes_to_find(100, 5000) == 5000
    assert num_feasible_nodes_to_find(1, 50) == 50  # below 100 nodes: every node


def test_zone_key_prefers_the_beta_labels_and_joins_region_and_zone() -> None:
    node = make_node("n").zone("a").label("topology.kubernetes.io/region", "r").obj()
    assert zone_key(node) == "r:\x00:a"
    beta = make_node("n").zone("a").label("failure-domain.beta.kubernetes.io/zone", "").obj()
    assert zone_key(beta) == ""  # the beta label is present (empty): it wins, and both are empty
    assert zone_key(make_node("n").no_label(ZONE).obj()) == ""


def test_node_tree_lists_zones_round_robin_in_first_seen_order() -> None:
    nodes = [zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("c1", "c"), zoned("c2", "c")]
    nodes.append(zoned("c3", "c"))
    tree = NodeTree(nodes)
    assert tree.list() == ["a1", "b1", "c1", "a2", "c2", "c3"]
    assert tree.remove(nodes[2]) and tree.zones == [zone_key(nodes[0]), zone_key(nodes[3])]
    tree.add(nodes[2])  # zone b comes back last
    assert tree.list() == ["a1", "c1", "b1", "a2", "c2", "c3"]
    assert not tree.add(nodes[2])  # already there: ignored
    tree.update(nodes[0], zoned("a1", "c"))  # moved to the back of zone c
    assert tree.list() == ["a2", "c1", "b1", "c2", "c3", "a1"]


def test_the_order_follows_node_events_and_rereads_the_tree_only_on_add_or_remove() -> None:
    cluster = cluster_of([zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b")])
    order = NodeOrder.of(cluster)
    cluster.subscribe(order.follow)

    def names() -> list[str]:
        return cluster.node_names[order.visit_ids(cluster)].tolist()

    assert names() == ["a1", "b1", "a2"]
    cluster.update_node(zoned("a1", "b"))  # the tree moves a1; the snapshot's list does not
    assert names() == ["a1", "b1", "a2"]
    cluster.add_node(zoned("c1", "c"))  # a node added: the list is read from the tree again
    assert names() == ["a2", "b1", "c1", "a1"]
    cluster.delete_node("b1")  # ids move (the last node takes b1's slot); names stay in order
    assert names() == ["a2", "a1", "c1"]


def test_an_order_that_missed_events_is_reconciled() -> None:
    cluster = cluster_of([zoned("a1", "a"), zoned("b1", "b")])
    order = NodeOrder.of(cluster)
    cluster.add_node(zoned("a2", "a"))
    cluster.delete_node("b1")
    assert sorted(cluster.node_names[order.visit_ids(cluster)].tolist()) == ["a1", "a2"]


def go_heap_top(totals: list[int]) -> int:
    """container/heap's Init as Go writes it, with nodeScoreHeap.Less (higher first)."""
    h = list(range(len(totals)))
    n = len(h)

    def less(i: int, j: int) -> bool:
        return totals[h[i]] > totals[h[j]]

    for i0 in range(n // 2 - 1, -1, -1):
        i = i0
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and less(j + 1, j):
                j += 1
            if not less(j, i):
                break
            h[i], h[j] = h[j], h[i]
            i = j
    return h[0]


@given(st.lists(st.integers(0, 4), min_size=1, max_size=200))
def test_heap_top_is_what_container_heap_puts_on_top(totals: list[int]) -> None:
    assert heap_top(np.array(totals, dtype=np.int64)) == go_heap_top(totals)


def big_cluster(n: int, zones: int = 3) -> ClusterState:
    return cluster_of([zoned(f"n{i:04d}", f"z{i % zones}") for i in range(n)])


def test_sampling_stops_past_num_feasible_and_the_start_index_rotates() -> None:
    cluster = big_cluster(150)
    sched = Scheduler()
    first = sched.schedule(make_pod("p0").obj(), cluster)
    sm = first.sampling
    assert sm is not None and sm.to_find == 100 and sm.start == 0
    # every node fits: the 101st feasible one ends the search, unexamined and uncounted
    assert sm.examined == 100 and sm.unexamined == 50 and sm.processed == 100
    assert sm.stopped_at == int(sm.visit[100])
    assert len(first.feasible_ids) == 100 and len(first.scores["NodeResourcesFit"].raw) == 100
    assert sched.order is not None and sched.order.next_start == 100
    second = sched.schedule(make_pod("p1").obj(), cluster)
    assert second.sampling is not None and second.sampling.start == 100
    assert (
        cluster.node_names[second.sampling.visit[0]]
        == cluster.node_names[sched.order.visit_ids(cluster)[100]]
    )
    assert sched.order.next_start == 50  # (100 + 100) % 150


def test_rejections_met_before_the_stop_are_processed_and_kept() -> None:
    nodes = [zoned(f"n{i:04d}", "a") for i in range(150)]
    nodes[3] = make_node("n0003").zone("a").taint("k", "v").obj()
    cluster = cluster_of(nodes)
    sched = Scheduler()
    d = sched.schedule(make_pod("p").obj(), cluster)
    assert d.sampling is not None and d.sampling.examined == 101 and d.sampling.processed == 101
    assert list(d.rejections) == ["n0003"]
    assert sched.order is not None and sched.order.next_start == 101


def test_percentage_100_scores_every_node_and_a_profile_without_scores_takes_the_first_fit() -> None:
    import dataclasses

    cluster = big_cluster(150)
    full = dataclasses.replace(default_profile(), percentage_of_nodes_to_score=100)
    d = schedule_one(make_pod("p").obj(), cluster, full, order=NodeOrder.of(cluster))
    assert d.sampling is not None and d.sampling.unexamined == 0 and len(d.feasible_ids) == 150
    unscored = dataclasses.replace(default_profile(), score=())
    d = schedule_one(make_pod("p").obj(), cluster, unscored, order=NodeOrder.of(cluster))
    assert d.sampling is not None and d.sampling.to_find == 1 and d.selected == "n0000"
    assert d.selection_reason == "onlyFeasibleNode"


def test_a_nominated_pod_tries_its_node_first_and_the_start_index_stays() -> None:
    cluster = big_cluster(150)
    order = NodeOrder.of(cluster)
    pod = make_pod("p").obj()
    pod.status.nominated_node_name = "n0077"
    d = schedule_one(pod, cluster, default_profile(), order=order)
    assert d.selected == "n0077" and d.selection_reason == "nominatedNode" and order.next_start == 0
    assert d.sampling is not None and d.sampling.nominated_first
    # a nominated node that no longer fits: the search goes on, and its rejection counts
    cluster.update_node(make_node("n0077").zone("z2").taint("k", "v").obj())
    d = schedule_one(pod, cluster, default_profile(), order=order)
    assert d.selected != "n0077" and "n0077" in d.rejections
    assert d.sampling is not None and d.sampling.processed == 101  # 100 found + n0077, met on the way


def test_the_every_node_cycle_is_unchanged_without_an_order() -> None:
    cluster = big_cluster(150)
    d = schedule_one(make_pod("p").obj(), cluster, default_profile())
    assert d.sampling is None and len(d.feasible_ids) == 150 and d.tie_break == "smallestName"
    assert d.selected == "n0000"


def test_a_simulation_places_as_kube_does_whatever_the_seed_unless_ties_are_drawn() -> None:
    def run(seed: int, random_ties: bool) -> list[str]:
        sim = Simulation(big_cluster(9), controllers=[], seed=seed, random_ties=random_ties)
        for i in range(6):
            sim.create(make_pod(f"p{i}").obj())
        sim.run_until_quiet()
        return [sim.cluster.pods[f"default/p{i}"].spec.node_name for i in range(6)]

    assert run(1, False) == run(2, False) == run(3, False)
    assert len({tuple(run(s, True)) for s in range(1, 6)}) > 1


def test_a_simulation_keeps_its_node_tree_as_nodes_come_and_go() -> None:
    sim = Simulation(big_cluster(3), controllers=[])
    sim.cluster.delete_node("n0000")
    sim.cluster.add_node(zoned("n0000", "z0"))
    order = sim.scheduling.order
    # z0 emptied and came back: it is visited last now
    assert sim.cluster.node_names[order.visit_ids(sim.cluster)].tolist() == ["n0001", "n0002", "n0000"]


def test_a_configuration_sets_the_percentage_globally_and_per_profile() -> None:
    from kubespread.api.schedconfig import KubeSchedulerConfiguration
    from kubespread.scheduler.config import ConfigError, profiles_from_config

    cfg = KubeSchedulerConfiguration.from_dict(
        {
            "percentageOfNodesToScore": 30,
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {"schedulerName": "every-node", "percentageOfNodesToScore": 100},
                {"schedulerName": "adaptive", "percentageOfNodesToScore": 0},
            ],
        }
    )
    got = {name: p.percentage_of_nodes_to_score for name, p in profiles_from_config(cfg).items()}
    assert got == {"default-scheduler": 30, "every-node": 100, "adaptive": 0}
    assert profiles_from_config(KubeSchedulerConfiguration()).popitem()[1].percentage_of_nodes_to_score == 0
    bad = KubeSchedulerConfiguration.from_dict(
        {"parallelism": 0, "profiles": [{"schedulerName": "x", "percentageOfNodesToScore": 101}]}
    )
    try:
        profiles_from_config(bad)
    except ConfigError as e:
        text = str(e)
        assert "profiles[0].percentageOfNodesToScore" in text and "not in valid range [0-100]" in text
        assert "parallelism" in text
    else:
        raise AssertionError("invalid configuration accepted")


def test_a_prefilter_result_narrows_the_visit_and_the_rest_is_rejected_unexamined() -> None:
    """Node affinity by metadata.name (two terms, one name each: matchFields In takes one
    value): only those nodes are visited, in the tree's order (kube's is Go's random map
    order, which the sampling says); the others are rejected at PreFilterResult and are not
    counted as processed."""
    from kubespread.api.core import Pod

    cluster = big_cluster(150)
    manifest = make_pod("p").obj().to_dict()
    terms = [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}
        for n in ("n0100", "n0005")
    ]
    manifest["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    order = NodeOrder.of(cluster)
    d = schedule_one(Pod.from_dict(manifest), cluster, default_profile(), order=order)
    sm = d.sampling
    assert sm is not None and sm.narrowed and len(sm.visit) == 2 and sm.processed == 2
    assert cluster.node_names[sm.visit].tolist() == ["n0005", "n0100"]  # the tree lists n0005 first
    assert sorted(d.feasible) == ["n0005", "n0100"] and d.selected in d.feasible
    assert len(d.rejections) == 148 and {r.stage for r in d.rejections.values()} == {"PreFilterResult"}
    assert order.next_start == 2
