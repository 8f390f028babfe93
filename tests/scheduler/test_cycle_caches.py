"""What the cycle keeps between cycles gives the answers a fresh computation gives.

NodeMemo (per-node verdicts and raw scores), DomainTally (topology spread's counts per
domain), the existing pods' matched terms and the content-keyed parse caches all carry state
from one cycle to the next. Each test changes a cluster the way scheduling does (binds,
deletions, label updates, node changes) and compares a cycle on it, caches warm, with the
same cycle on a cluster rebuilt from the same objects, caches cold.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from builders import HOSTNAME, ZONE, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.decision import Decision
from kubespread.scheduler.node_memo import NodeMemo
from kubespread.scheduler.plugins.interpodaffinity.common import pod_terms
from kubespread.scheduler.plugins.podtopologyspread.common import parse_constraints
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.selection import NodeOrder

APP = {"matchLabels": {"app": "web"}}


def _nodes(n: int, rng: random.Random) -> list[Any]:
    out = []
    for i in range(n):
        b = make_node(f"n{i:03d}").zone(f"z{i % 3}").capacity(cpu=rng.choice(["1", "2", "4"]), pods="6")
        if i % 7 == 0:
            b = b.taint("dedicated", "infra")
        if i % 5 == 0:
            b = b.label("disk", "ssd")
        if i % 4 == 0:
            b = b.image(["registry.example/app:1"], 300 * 1024 * 1024)
        out.append(b.obj())
    return out


def _template(kind: int, name: str, rng: random.Random) -> Pod:
    """A new pod object of one of a few workloads (equal contents, separate objects)."""
    p = make_pod(name).label("app", "web" if kind != 3 else "db").req(cpu=rng.choice(["100m", "500m"]))
    if kind == 0:
        p = p.spread(1, ZONE, selector=APP).spread(1, HOSTNAME, when="ScheduleAnyway", selector=APP)
    elif kind == 1:
        p = p.pod_affinity(HOSTNAME, APP, anti=True).image("registry.example/app:1")
    elif kind == 2:
        p = p.pod_affinity(ZONE, APP, weight=100).affinity(
            "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            {
                "weight": 20,
                "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
            },
        )
    else:
        p = p.toleration("dedicated", "infra", "NoSchedule").pod_affinity(HOSTNAME, APP, anti=True, weight=50)
    return p.obj()


def _rebuilt(cluster: ClusterState) -> ClusterState:
    """The same objects in a new ClusterState (node ids in the same order): no cache knows it."""
    fresh = ClusterState()
    for i in range(cluster.num_nodes):
        fresh.add(cluster.node_info_at(i).node)
    for pod in cluster.pods.values():
        fresh.add(pod)
    return fresh


def _same(a: Decision, b: Decision) -> None:
    assert a.selected == b.selected
    assert a.feasible_ids.tolist() == b.feasible_ids.tolist()
    assert a.totals.tolist() == b.totals.tolist()
    assert sorted(a.scores) == sorted(b.scores)
    for name, ps in a.scores.items():
        assert ps.raw.tolist() == b.scores[name].raw.tolist(), name
        assert ps.normalized.tolist() == b.scores[name].normalized.tolist(), name
    assert a.rejections == b.rejections
    assert a.fit_error == b.fit_error


@pytest.mark.slow
def test_warm_caches_answer_as_a_cold_cluster_does() -> None:
    rng = random.Random(38)
    profile = default_profile()
    cluster = ClusterState()
    for node in _nodes(240, rng):
        cluster.add(node)
    bound: list[str] = []
    for step in range(160):
        action = rng.random()
        if action < 0.12 and bound:  # a bound pod goes
            cluster.delete_pod(bound.pop(rng.randrange(len(bound))))
            continue
        if action < 0.17 and bound:  # a bound pod's labels change (it leaves or joins a selector)
            key = rng.choice(bound)
            old = cluster.pods[key]
            labels = dict(old.metadata.labels)
            labels["app"] = "web" if labels.get("app") != "web" else "other"
            new = Pod.from_dict(
                {**old.to_dict(), "metadata": {**old.to_dict()["metadata"], "labels": labels}}
            )
            cluster.update_pod(new)
            continue
        if action < 0.19:  # a node's labels change: a new node set
            i = rng.randrange(cluster.num_nodes)
            node = cluster.node_info_at(i).node
            d = node.to_dict()
            d["metadata"]["labels"]["disk"] = "hdd" if d["metadata"]["labels"].get("disk") == "ssd" else "ssd"
            cluster.update_node(type(node).from_dict(d))
            continue
        pod = _template(rng.randrange(4), f"p{step:03d}", rng)
        start = rng.randrange(cluster.num_nodes)
        warm_order = NodeOrder.of(cluster)
        warm_order.next_start = start
        fresh = _rebuilt(cluster)
        cold_order = NodeOrder.of(fresh)
        cold_order.next_start = start
        warm = schedule_one(pod, cluster, profile, order=warm_order, timed=False)
        cold = schedule_one(pod, fresh, profile, order=cold_order, timed=False)
        _same(warm, cold)
        every_warm = schedule_one(pod, cluster, profile, timed=False)
        every_cold = schedule_one(pod, _rebuilt(cluster), profile, timed=False)
        _same(every_warm, every_cold)
        if warm.selected is not None:
            cluster.add(pod)
            cluster.bind(pod.key, warm.selected)
            bound.append(pod.key)
    assert len(bound) > 40  # most pods found a node: the caches were exercised


def test_node_memo_recomputes_only_the_nodes_whose_pods_changed() -> None:
    cluster = ClusterState()
    for i in range(6):
        cluster.add(make_node(f"n{i}").zone("a").obj())
    calls: list[list[int]] = []

    def pods_on(c: ClusterState, ids: np.ndarray, key: str) -> np.ndarray:
        calls.append(ids.tolist())
        return np.asarray([len(c.node_info_at(int(i)).pods) for i in ids], dtype=np.int64)

    memo: NodeMemo[str] = NodeMemo(pods_on)
    everyone = np.arange(6, dtype=np.int64)
    assert memo.values(cluster, "k", everyone).tolist() == [0] * 6
    assert calls == [[0, 1, 2, 3, 4, 5]]
    cluster.add(make_pod("a").node("n4").obj())
    cluster.add(make_pod("b").node("n1").obj())
    assert memo.values(cluster, "k", np.array([0, 2], dtype=np.int64)).tolist() == [0, 0]
    assert len(calls) == 1  # the changed nodes are not asked for: nothing recomputed
    assert memo.values(cluster, "k", np.array([5, 4], dtype=np.int64)).tolist() == [0, 1]
    assert calls[1] == [1, 4]  # one call for every changed node, n1 included
    assert memo.values(cluster, "k", everyone).tolist() == [0, 1, 0, 0, 1, 0]
    assert len(calls) == 2
    cluster.delete_pod("default/a")
    assert memo.values(cluster, "k", everyone).tolist() == [0, 1, 0, 0, 0, 0]
    assert calls[2] == [4]
    cluster.add(make_node("n6").zone("a").obj())  # a new node set: everything again
    assert memo.values(cluster, "k", np.arange(7, dtype=np.int64)).tolist() == [0, 1, 0, 0, 0, 0, 0]
    assert calls[3] == list(range(7))
    assert memo.values(cluster, "other", np.array([1], dtype=np.int64)).tolist() == [1]  # its own values


def test_node_memo_hears_a_preemption_dry_run_and_its_undoing() -> None:
    cluster = ClusterState()
    for i in range(3):
        cluster.add(make_node(f"n{i}").obj())
    cluster.add(make_pod("a").node("n2").obj())

    def pods_on(c: ClusterState, ids: np.ndarray, key: str) -> np.ndarray:
        return np.asarray([len(c.node_info_at(int(i)).pods) for i in ids], dtype=np.int64)

    memo: NodeMemo[str] = NodeMemo(pods_on)
    everyone = np.arange(3, dtype=np.int64)
    assert memo.values(cluster, "k", everyone).tolist() == [0, 0, 1]
    with cluster.hypothetical():
        cluster.unbind("default/a")
        assert memo.values(cluster, "k", everyone).tolist() == [0, 0, 0]
        cluster.bind("default/a", "n2")
    assert memo.values(cluster, "k", everyone).tolist() == [0, 0, 1]


def test_equal_constraints_and_terms_of_separate_pods_share_one_parse() -> None:
    a = make_pod("a").spread(1, ZONE, selector=APP).pod_affinity(HOSTNAME, APP, anti=True).obj()
    b = make_pod("b").spread(1, ZONE, selector=APP).pod_affinity(HOSTNAME, APP, anti=True).obj()
    other = make_pod("c").spread(2, ZONE, selector=APP).pod_affinity(ZONE, APP, anti=True).obj()
    elsewhere = make_pod("d", "shop").pod_affinity(HOSTNAME, APP, anti=True).obj()
    assert a.spec.topology_spread_constraints is not b.spec.topology_spread_constraints
    pa, pb = (parse_constraints(p.spec.topology_spread_constraints, "DoNotSchedule") for p in (a, b))
    assert pa[0] is pb[0]
    (po,) = parse_constraints(other.spec.topology_spread_constraints, "DoNotSchedule")
    assert po.max_skew == 2 and po is not pa[0]
    assert pod_terms(a) is pod_terms(b)
    assert pod_terms(other).required_anti_affinity[0].topology_key == ZONE
    # the same terms in another namespace name that namespace
    assert pod_terms(elsewhere).required_anti_affinity[0].namespaces == frozenset({"shop"})
    assert pod_terms(a).required_anti_affinity[0].namespaces == frozenset({"default"})


def test_a_new_existing_term_is_matched_once_it_appears() -> None:
    cluster = ClusterState()
    for i in range(3):
        cluster.add(make_node(f"n{i}").obj())
    profile = default_profile()
    # a term that does not match app=web: the matching is worked out (and kept) for p
    db = {"matchLabels": {"app": "db"}}
    cluster.add(make_pod("db-guard").pod_affinity(HOSTNAME, db, anti=True).node("n0").obj())
    pod = make_pod("p").label("app", "web").obj()
    assert schedule_one(pod, cluster, profile, timed=False).feasible_ids.tolist() == [0, 1, 2]
    # a pod whose anti-affinity term matches app=web: its node is closed to the next pod
    cluster.add(make_pod("guard").pod_affinity(HOSTNAME, APP, anti=True).node("n1").obj())
    again = make_pod("q").label("app", "web").obj()
    assert schedule_one(again, cluster, profile, timed=False).feasible_ids.tolist() == [0, 2]
    cluster.delete_pod("default/guard")
    third = make_pod("r").label("app", "web").obj()
    assert schedule_one(third, cluster, profile, timed=False).feasible_ids.tolist() == [0, 1, 2]
