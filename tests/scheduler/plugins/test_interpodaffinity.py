"""InterPodAffinity on small clusters: feasible sets, reasons and scores as kube-scheduler v1.35."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_namespace, make_node, make_pod
from kubespread.api.schedconfig import InterPodAffinityArgs
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Code, CycleState
from kubespread.scheduler.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)

AFF = ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH

DB = {"matchLabels": {"app": "db"}}
WEB = {"matchLabels": {"app": "web"}}


def zoned_nodes() -> list[Any]:
    """n1, n2 in zone a; n3 in zone b; n4 without a zone label."""
    return [make_node("n1").zone("a"), make_node("n2").zone("a"), make_node("n3").zone("b"), make_node("n4")]


def run_filter(cs: ClusterState, pod: PodBuilder, plugin: InterPodAffinity | None = None) -> dict[str, Any]:
    """name -> None (passes) or (code, reasons); 'SKIP' for every node when PreFilter skips."""
    plugin = plugin or InterPodAffinity()
    state = CycleState(cs)
    p = pod.obj()
    _, st = plugin.pre_filter(state, p)
    names = [str(n) for n in cs.node_names]
    if st.is_skip:
        return {n: "SKIP" for n in names}
    assert st.is_success
    res = plugin.filter_nodes(state, p, np.arange(cs.num_nodes))
    out: dict[str, Any] = {}
    for i, n in enumerate(names):
        w = int(res.which[i])
        out[n] = None if w < 0 else (res.statuses[w].code, res.statuses[w].reasons)
        # the per-node form agrees with the batch form
        single = plugin.filter(state, p, cs.node_info_at(i))
        assert (single.is_success and w < 0) or (w >= 0 and single == res.statuses[w])
    return out


def feasible(result: dict[str, Any]) -> set[str]:
    return {n for n, r in result.items() if r is None or r == "SKIP"}


def run_score(
    cs: ClusterState, pod: PodBuilder, nodes: list[str] | None = None, plugin: InterPodAffinity | None = None
) -> tuple[dict[str, int], dict[str, int]] | None:
    """(raw, normalized) by node name over ``nodes`` (default all); None when PreScore skips."""
    plugin = plugin or InterPodAffinity()
    state = CycleState(cs)
    p = pod.obj()
    names = [str(n) for n in cs.node_names]
    nodes = nodes or names
    ids = np.array([names.index(n) for n in nodes], dtype=np.int64)
    if plugin.pre_score(state, p, ids).is_skip:
        return None
    raw = plugin.score_nodes(state, p, ids)
    norm = plugin.normalize_scores(state, p, ids, raw.copy())
    return dict(zip(nodes, raw.tolist(), strict=True)), dict(zip(nodes, norm.tolist(), strict=True))


# ---------------------------------------------------------------------------- required affinity


def test_required_affinity_follows_matching_pod_zone() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("db").label("app", "db").node("n2")])
    res = run_filter(cs, make_pod("p").pod_affinity(ZONE, DB))
    assert feasible(res) == {"n1", "n2"}
    assert res["n3"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFF,))
    assert res["n4"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFF,))


def test_first_pod_matching_its_own_terms_goes_anywhere_with_the_key() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("other").label("app", "web").node("n1")])
    res = run_filter(cs, make_pod("p").label("app", "db").pod_affinity(ZONE, DB))
    assert feasible(res) == {"n1", "n2", "n3"}
    assert res["n4"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFF,))


def test_first_pod_not_matching_its_own_terms_goes_nowhere() -> None:
    cs = cluster_of(zoned_nodes())
    res = run_filter(cs, make_pod("p").label("app", "web").pod_affinity(ZONE, DB))
    assert feasible(res) == set()


def test_matching_pod_on_node_without_the_key_leaves_first_pod_rule_in_force() -> None:
    # the db pod sits on n4, which has no zone: it creates no topology pair, so kube's
    # affinity counts stay empty and a self-matching pod is treated as the first one
    cs = cluster_of(zoned_nodes(), [make_pod("db").label("app", "db").node("n4")])
    self_matching = make_pod("p").label("app", "db").pod_affinity(ZONE, DB)
    assert feasible(run_filter(cs, self_matching)) == {"n1", "n2", "n3"}
    assert feasible(run_filter(cs, make_pod("q").pod_affinity(ZONE, DB))) == set()


def test_required_affinity_counts_pods_matching_all_terms_at_once() -> None:
    # app=db on n1 and tier=cache on n2 (same zone), but no pod carries both: no pod matches
    # all terms, so the incoming pod (which matches both) is a first pod and may go anywhere
    pods = [make_pod("a").label("app", "db").node("n1"), make_pod("b").label("tier", "cache").node("n2")]
    cs = cluster_of(zoned_nodes(), pods)
    pod = (
        make_pod("p")
        .labels(app="db", tier="cache")
        .pod_affinity(ZONE, DB)
        .pod_affinity(ZONE, {"matchLabels": {"tier": "cache"}})
    )
    assert feasible(run_filter(cs, pod)) == {"n1", "n2", "n3"}
    # once a pod matches both, only its zone remains
    cs.add(make_pod("c").labels(app="db", tier="cache").node("n3").obj())
    assert feasible(run_filter(cs, pod)) == {"n3"}


def test_every_term_needs_its_own_domain() -> None:
    pods = [make_pod("db").labels(app="db").node("n2")]
    cs = cluster_of(zoned_nodes(), pods)
    pod = make_pod("p").pod_affinity(ZONE, DB).pod_affinity(HOSTNAME, DB)
    assert feasible(run_filter(cs, pod)) == {"n2"}


def test_terminating_pods_count_for_affinity() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("db").label("app", "db").node("n3").terminating()])
    assert feasible(run_filter(cs, make_pod("p").pod_affinity(ZONE, DB))) == {"n3"}


def test_finished_pods_do_not_count() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("db").label("app", "db").node("n3").phase("Succeeded")])
    assert feasible(run_filter(cs, make_pod("p").pod_affinity(ZONE, DB))) == set()


# ---------------------------------------------------------------------------- anti-affinity


def test_required_anti_affinity_blocks_the_domain_only() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("w").label("app", "web").node("n1")])
    res = run_filter(cs, make_pod("p").pod_affinity(ZONE, WEB, anti=True))
    assert res["n1"] == res["n2"] == (Code.UNSCHEDULABLE, (ANTI,))
    assert res["n3"] is None and res["n4"] is None  # other zone; no zone key: not blocked


def test_anti_affinity_with_terminating_pod() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("w").label("app", "web").node("n3").terminating()])
    res = run_filter(cs, make_pod("p").pod_affinity(HOSTNAME, WEB, anti=True))
    assert feasible(res) == {"n1", "n2", "n4"}


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    guard = make_pod("g").label("app", "db").node("n3").pod_affinity(ZONE, WEB, anti=True)
    cs = cluster_of(zoned_nodes(), [guard])
    res = run_filter(cs, make_pod("p").label("app", "web"))
    assert res["n3"] == (Code.UNSCHEDULABLE, (EXISTING,))
    assert feasible(res) == {"n1", "n2", "n4"}
    # a pod the guard's term does not match: PreFilter has nothing to check
    assert set(run_filter(cs, make_pod("q").label("app", "api")).values()) == {"SKIP"}


def test_filter_order_affinity_then_anti_then_existing() -> None:
    pods = [
        make_pod("db").label("app", "db").node("n1"),
        make_pod("w").label("app", "web").node("n2"),
        make_pod("g").node("n3").pod_affinity(HOSTNAME, {"matchLabels": {"role": "x"}}, anti=True),
    ]
    cs = cluster_of(zoned_nodes(), pods)
    pod = make_pod("p").label("role", "x").pod_affinity(ZONE, DB).pod_affinity(HOSTNAME, WEB, anti=True)
    res = run_filter(cs, pod)
    assert res["n1"] is None
    assert res["n2"] == (Code.UNSCHEDULABLE, (ANTI,))
    # n3 fails affinity and existing pods' anti-affinity: affinity is reported
    assert res["n3"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (AFF,))
    pod2 = make_pod("p2").label("role", "x").pod_affinity(HOSTNAME, WEB, anti=True)
    res2 = run_filter(cs, pod2)
    assert res2["n3"] == (Code.UNSCHEDULABLE, (EXISTING,))
    assert res2["n2"] == (Code.UNSCHEDULABLE, (ANTI,))


def test_prefilter_skips_without_terms() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("w").label("app", "web").node("n1")])
    assert set(run_filter(cs, make_pod("p").label("app", "web")).values()) == {"SKIP"}


# ---------------------------------------------------------------------------- namespaces


def ns_cluster() -> ClusterState:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b"), make_node("n3").zone("c")]
    pods = [
        make_pod("d1").label("app", "db").node("n1"),  # default namespace
        make_pod("d2", "team-x").label("app", "db").node("n2"),
        make_pod("d3", "bare").label("app", "db").node("n3"),
    ]
    namespaces = [make_namespace("default"), make_namespace("team-x", team="x"), make_namespace("bare")]
    return cluster_of(nodes, pods, namespaces)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, {"n1"}),  # own namespace
        ({"namespaces": ["team-x"]}, {"n2"}),
        ({"namespaces": ["team-x", "bare"]}, {"n2", "n3"}),
        ({"namespaceSelector": {}}, {"n1", "n2", "n3"}),  # every namespace
        ({"namespaceSelector": {"matchLabels": {"team": "x"}}}, {"n2"}),
        ({"namespaceSelector": {"matchLabels": {"team": "x"}}, "namespaces": ["bare"]}, {"n2", "n3"}),
        # namespaces without labels are selected by DoesNotExist
        (
            {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
            {"n1", "n3"},
        ),
        ({"namespaceSelector": {"matchLabels": {"team": "nobody"}}}, set()),
    ],
)
def test_incoming_pod_term_namespaces(extra: dict[str, Any], expected: set[str]) -> None:
    cs = ns_cluster()
    res = run_filter(cs, make_pod("p").pod_affinity(ZONE, DB, **extra))
    assert feasible(res) == expected


def test_existing_pod_namespace_selector_uses_incoming_namespace_labels() -> None:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b")]
    sel = {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}
    guard = make_pod("g", "ops").node("n1").pod_affinity(ZONE, WEB, anti=True, namespaceSelector=sel)
    cs = cluster_of(nodes, [guard], [make_namespace("team-x", team="x"), make_namespace("plain")])
    # a namespace with team label: not selected
    assert set(run_filter(cs, make_pod("p", "team-x").label("app", "web")).values()) == {"SKIP"}
    # a namespace without labels, and one with no Namespace object at all: selected
    for ns in ("plain", "ghost"):
        res = run_filter(cs, make_pod("p", ns).label("app", "web"))
        assert res["n1"] == (Code.UNSCHEDULABLE, (EXISTING,)) and res["n2"] is None
    # empty selector: every namespace
    guard2 = make_pod("g2", "ops").node("n2").pod_affinity(ZONE, WEB, anti=True, namespaceSelector={})
    cs.add(guard2.obj())
    assert feasible(run_filter(cs, make_pod("p", "team-x").label("app", "web"))) == {"n1"}
    # no namespaces and no selector: only the existing pod's own namespace
    guard3 = make_pod("g3", "ops").node("n1").pod_affinity(ZONE, WEB, anti=True)
    cs2 = cluster_of(nodes, [guard3])
    assert set(run_filter(cs2, make_pod("p").label("app", "web")).values()) == {"SKIP"}
    assert feasible(run_filter(cs2, make_pod("p", "ops").label("app", "web"))) == {"n2"}


# ---------------------------------------------------------------------------- scoring


def test_preferred_affinity_and_anti_affinity_scores() -> None:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("a"), make_node("n3").zone("b"), make_node("n4")]
    pods = [
        make_pod("d1").label("app", "db").node("n1"),
        make_pod("d2").label("app", "db").node("n3"),
        make_pod("d3").label("app", "db").node("n3").terminating(),
        make_pod("w").label("app", "web").node("n2"),
    ]
    cs = cluster_of(nodes, pods)
    pod = make_pod("p").pod_affinity(ZONE, DB, weight=10).pod_affinity(HOSTNAME, WEB, weight=7, anti=True)
    got = run_score(cs, pod)
    assert got is not None
    raw, norm = got
    assert raw == {"n1": 10, "n2": 3, "n3": 20, "n4": 0}
    # min 0, max 20: 100 * (s - 0) / 20 truncated
    assert norm == {"n1": 50, "n2": 15, "n3": 100, "n4": 0}
    # normalized over the scored nodes only
    raw2, norm2 = run_score(cs, pod, ["n1", "n2"]) or ({}, {})
    assert raw2 == {"n1": 10, "n2": 3} and norm2 == {"n1": 100, "n2": 0}


def test_normalize_truncates_with_negative_scores() -> None:
    nodes = [make_node("n1"), make_node("n2"), make_node("n3")]
    pods = [
        make_pod("w").label("app", "web").node("n1"),
        make_pod("d").label("app", "db").node("n3"),
        make_pod("d2").label("app", "db").node("n2"),
    ]
    cs = cluster_of(nodes, pods)
    pod = (
        make_pod("p")
        .pod_affinity(HOSTNAME, WEB, weight=5, anti=True)
        .pod_affinity(HOSTNAME, DB, weight=1)
        .pod_affinity(HOSTNAME, {"matchLabels": {"x": "y"}}, weight=3)
    )
    cs.add(make_pod("d3").label("app", "db").node("n3").obj())
    raw, norm = run_score(cs, pod) or ({}, {})
    assert raw == {"n1": -5, "n2": 1, "n3": 2}
    # (1 - -5) / 7 * 100 = 85.71 -> 85
    assert norm == {"n1": 0, "n2": 85, "n3": 100}


@pytest.mark.parametrize(("weight", "expected"), [(None, 1), (5, 5), (0, None)])
def test_existing_pods_required_affinity_scored_with_hard_weight(
    weight: int | None, expected: int | None
) -> None:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b")]
    fan = make_pod("fan").label("app", "x").node("n1").pod_affinity(ZONE, WEB)
    cs = cluster_of(nodes, [fan])
    plugin = InterPodAffinity(InterPodAffinityArgs(hard_pod_affinity_weight=weight))
    got = run_score(cs, make_pod("p").label("app", "web"), plugin=plugin)
    if expected is None:
        assert got is None  # nothing else contributes: PreScore skips
    else:
        assert got is not None and got[0] == {"n1": expected, "n2": 0}
        assert got[1] == {"n1": 100, "n2": 0}


def test_existing_pods_preferred_terms_both_ways() -> None:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b"), make_node("n3").zone("c")]
    pods = [
        make_pod("likes").node("n1").pod_affinity(ZONE, WEB, weight=30),
        make_pod("hates").node("n2").pod_affinity(ZONE, WEB, weight=20, anti=True),
        make_pod("hates-db").node("n3").pod_affinity(ZONE, DB, weight=50, anti=True),
    ]
    cs = cluster_of(nodes, pods)
    raw, norm = run_score(cs, make_pod("p").label("app", "web")) or ({}, {})
    assert raw == {"n1": 30, "n2": -20, "n3": 0}
    assert norm == {"n1": 100, "n2": 0, "n3": 40}


def test_ignore_preferred_terms_of_existing_pods() -> None:
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b")]
    pods = [
        make_pod("likes").node("n1").pod_affinity(ZONE, WEB, weight=30),
        make_pod("d").label("app", "db").node("n2"),
    ]
    cs = cluster_of(nodes, pods)
    plugin = InterPodAffinity(InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True))
    # the incoming pod has no preferred terms: skipped
    assert run_score(cs, make_pod("p").label("app", "web"), plugin=plugin) is None
    # with preferred terms, existing pods' preferences are still counted (as kube does)
    got = run_score(cs, make_pod("p").label("app", "web").pod_affinity(ZONE, DB, weight=10), plugin=plugin)
    assert got is not None and got[0] == {"n1": 30, "n2": 10}
    assert run_score(cs, make_pod("p").label("app", "web")) is not None  # default: not ignored


def test_prescore_skips_when_nothing_matches() -> None:
    cs = cluster_of(zoned_nodes(), [make_pod("d").label("app", "db").node("n4")])
    # preferred term matches only a pod on a node without the key
    assert run_score(cs, make_pod("p").pod_affinity(ZONE, DB, weight=10)) is None
    # terms that cancel still count as scored (all equal: 0 each)
    cs2 = cluster_of(zoned_nodes(), [make_pod("d").label("app", "db").node("n1")])
    pod = make_pod("p").pod_affinity(ZONE, DB, weight=10).pod_affinity(ZONE, DB, weight=10, anti=True)
    got = run_score(cs2, pod)
    assert got is not None and set(got[0].values()) == {0} and set(got[1].values()) == {0}


# ---------------------------------------------------------------------------- cluster changes


def test_existing_pod_index_follows_binds_and_deletes() -> None:
    cs = cluster_of(zoned_nodes())
    incoming = make_pod("p").label("app", "web")
    assert set(run_filter(cs, incoming).values()) == {"SKIP"}
    cs.add(make_pod("g").pod_affinity(HOSTNAME, WEB, anti=True).obj())  # pending: not counted yet
    assert set(run_filter(cs, incoming).values()) == {"SKIP"}
    cs.bind("default/g", "n2")
    assert feasible(run_filter(cs, incoming)) == {"n1", "n3", "n4"}
    cs.unbind("default/g")
    cs.bind("default/g", "n3")
    assert feasible(run_filter(cs, incoming)) == {"n1", "n2", "n4"}
    cs.delete("Pod", "default/g")
    assert set(run_filter(cs, incoming).values()) == {"SKIP"}


def test_affinity_counts_follow_binds() -> None:
    cs = cluster_of(zoned_nodes())
    pod = make_pod("p").pod_affinity(ZONE, DB)
    assert feasible(run_filter(cs, pod)) == set()
    cs.add(make_pod("db").label("app", "db").obj())
    cs.bind("default/db", "n3")
    assert feasible(run_filter(cs, pod)) == {"n3"}


def test_empty_namespace_selector_includes_namespaces_without_objects() -> None:
    # {} is kept as "every namespace", not unrolled into the Namespace objects that exist
    nodes = [make_node("n1").zone("a"), make_node("n2").zone("b")]
    ghost_pod = make_pod("d", "ghost").label("app", "db").node("n2")
    cs = cluster_of(nodes, [ghost_pod], [make_namespace("default")])
    assert feasible(run_filter(cs, make_pod("p").pod_affinity(ZONE, DB, namespaceSelector={}))) == {"n2"}
    sel = {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}
    assert feasible(run_filter(cs, make_pod("p").pod_affinity(ZONE, DB, namespaceSelector=sel))) == set()


def _carriers(index) -> dict[tuple[str, object], dict[str, int]]:
    return {
        (role, term): dict(c.by_node) for role, terms in index.by_role.items() for term, c in terms.items()
    }


@pytest.mark.parametrize("seed", range(5))
def test_existing_terms_index_equals_a_fresh_scan_after_random_changes(seed: int) -> None:
    """The per-term carrier counts (and their node-id vectors) kept up by events equal what
    one scan of the final state gives, through binds, unbinds, relabels, phase changes,
    updates onto a node, deletes and node deletions that move node ids."""
    import random

    from kubespread.scheduler.plugins.interpodaffinity.common import ExistingTerms, existing_terms

    rng = random.Random(seed)
    cs = cluster_of([make_node(f"n{i}").zone("ab"[i % 2]) for i in range(8)])
    live = existing_terms(cs)
    made = 0
    for _ in range(120):
        pods = list(cs.pods)
        action = rng.choice(("add", "add", "add", "bind", "unbind", "update", "move", "delete", "node"))
        if action == "add" or not pods:
            app = rng.choice(("web", "db"))
            pod = make_pod(f"p{made}").label("app", app)
            made += 1
            if rng.random() < 0.6:
                pod = pod.pod_affinity(
                    rng.choice((HOSTNAME, ZONE)),
                    rng.choice((WEB, DB)),
                    anti=rng.random() < 0.5,
                    weight=rng.choice((0, 0, 10, 30)),
                )
            if rng.random() < 0.5:
                pod = pod.node(rng.choice([str(n) for n in cs.node_names]))
            cs.add(pod.obj())
            continue
        key = rng.choice(pods)
        pod = cs.pods[key]
        if action == "bind" and not pod.spec.node_name:
            cs.bind(key, rng.choice([str(n) for n in cs.node_names]))
        elif action == "unbind" and pod.spec.node_name:
            cs.unbind(key)
        elif action == "update":
            d = pod.to_dict()
            d["status"] = {"phase": rng.choice(("Running", "Succeeded"))}
            if rng.random() < 0.5:
                d["spec"].pop("affinity", None)
            cs.update(type(pod).from_dict(d))
        elif action == "move":  # an update onto a node: UNBOUND, UPDATED, then its echo BOUND
            d = pod.to_dict()
            d["spec"]["nodeName"] = rng.choice([str(n) for n in cs.node_names])
            cs.update(type(pod).from_dict(d))
        elif action == "delete":
            cs.delete("Pod", key)
        elif action == "node":
            empty = [str(n) for n in cs.node_names if not cs.pods_on_node(str(n))]
            if empty and cs.num_nodes > 3:
                cs.delete_node(rng.choice(empty))
        for terms in live.by_role.values():  # read vectors mid-way, so later changes patch them
            for c in terms.values():
                c.per_node(cs)
    fresh = ExistingTerms(cs)
    assert _carriers(live) == _carriers(fresh)
    assert sum(len(t) for t in live.by_role.values()) > 0
    for role, terms in live.by_role.items():
        for term, c in terms.items():
            assert c.per_node(cs).tolist() == fresh.by_role[role][term].per_node(cs).tolist()
