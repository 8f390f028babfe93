"""Several groups of new pods in one model: rules across groups (a spread selecting both, anti-
affinity one way, affinity to the other group) give the brute-force optimum, and every
arrangement passes the scheduler's Filter pod by pod."""

from __future__ import annotations

import random

import pytest

from builders import cluster_of, make_node, make_pod
from capacity_cases import HOST, WEB, ZONE, brute_force_groups
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler import default_profile
from kubespread.solve import build_groups, conflict, solve, verify_groups

DB = {"matchLabels": {"app": "db"}}
BOTH = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}


def random_groups(seed: int) -> tuple[ClusterState, list[Pod], list[int]]:
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}").zone(rng.choice("ab")).capacity(cpu=str(rng.randint(1, 3))) for i in range(3)]
    web = make_pod("web").labels(app="web").req(cpu="1")
    db = make_pod("db").labels(app="db").req(cpu="1")
    if rng.random() < 0.5:
        web = web.spread(1, ZONE, selector=WEB)
    if rng.random() < 0.5:
        web = web.pod_affinity(HOST, DB, anti=True)
    if rng.random() < 0.4:
        web = web.pod_affinity(ZONE, DB)
    if rng.random() < 0.5:
        db = db.spread(1, HOST, selector=BOTH)
    if rng.random() < 0.4:
        db = db.pod_affinity(HOST, DB, anti=True)
    if rng.random() < 0.2:
        web = web.pod_affinity(HOST, WEB)
    pods = [make_pod("db-old").labels(app="db").node("n2")] if rng.random() < 0.3 else []
    return cluster_of(nodes, pods), [web.obj(), db.obj()], [3, 2]


@pytest.mark.parametrize("seed", range(30))
def test_groups_match_brute_force(seed: int) -> None:
    cluster, templates, counts = random_groups(seed)
    profile = default_profile()
    wanted = [(t.metadata.name, t, k) for t, k in zip(templates, counts, strict=True)]
    model = build_groups(cluster, wanted, profile)
    placement = solve(model, time_limit=5)
    assert placement.proven
    verify_groups(cluster, templates, profile, placement.by_group)
    assert placement.placed == brute_force_groups(cluster, templates, profile, 3, counts)
    # all of them fit exactly when no constraint conflicts
    assert (conflict(model) is None) == (placement.placed == sum(counts))


def test_anti_affinity_one_way_keeps_both_apart() -> None:
    """web repels db by hostname (db has no rule): two nodes, each can hold both; the best
    puts web on one and db on the other, never together (kube checks the existing pods'
    terms too)."""
    cluster = cluster_of([make_node(f"n{i}").capacity(cpu="4") for i in range(2)])
    web = make_pod("web").labels(app="web").req(cpu="1").pod_affinity(HOST, DB, anti=True).obj()
    db = make_pod("db").labels(app="db").req(cpu="1").obj()
    profile = default_profile()
    placement = solve(build_groups(cluster, [("web", web, 2), ("db", db, 2)], profile))
    assert placement.placed == 4
    web_nodes, db_nodes = (set(c) for c in placement.by_group)
    assert len(web_nodes) == len(db_nodes) == 1 and not web_nodes & db_nodes
    verify_groups(cluster, [web, db], profile, placement.by_group)


def test_shared_resources_are_summed_per_node() -> None:
    """One 3-CPU node: 2 web (1 CPU) and 2 db (1 CPU) do not all fit; 3 of them do."""
    cluster = cluster_of([make_node("n0").capacity(cpu="3")])
    web = make_pod("web").labels(app="web").req(cpu="1").obj()
    db = make_pod("db").labels(app="db").req(cpu="1").obj()
    model = build_groups(cluster, [("web", web, 2), ("db", db, 2)], default_profile())
    assert solve(model).placed == 3
    assert conflict(model) == ["resources"]
