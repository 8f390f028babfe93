"""The small plugins: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
SchedulingGates and PrioritySort — kube-scheduler's rules beyond what the corpus exercises."""

from __future__ import annotations

import random

import numpy as np
import pytest

from builders import HOSTNAME, ZONE, cluster_of, make_node, make_pod
from kubespread.api.schedconfig import NodeAffinityArgs
from kubespread.scheduler.framework import SKIP, Code, CycleState, FilterPlugin, QueuedPod, ScorePlugin
from kubespread.scheduler.plugins.nodeaffinity import NodeAffinity
from kubespread.scheduler.plugins.nodename import NodeName
from kubespread.scheduler.plugins.nodeports import NodePorts, port_conflicts
from kubespread.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from kubespread.scheduler.plugins.queuesort import PrioritySort
from kubespread.scheduler.plugins.schedulinggates import SchedulingGates
from kubespread.scheduler.plugins.tainttoleration import TaintToleration


def run_filter(plugin, pod, cluster) -> dict[str, str]:
    """node name → "" when it passes, else "Code: reason"."""
    state = CycleState(cluster)
    if hasattr(plugin, "pre_filter"):
        _, st = plugin.pre_filter(state, pod)
        if st.is_skip:
            return dict.fromkeys(cluster.node_names, "skip")
    res = plugin.filter_nodes(state, pod, np.arange(cluster.num_nodes))
    return {
        str(n): "" if w < 0 else f"{res.statuses[w].code}: {res.statuses[w].message}"
        for n, w in zip(cluster.node_names, res.which, strict=True)
    }


def run_score(plugin, pod, cluster) -> list[int]:
    state = CycleState(cluster)
    ids = np.arange(cluster.num_nodes)
    if plugin.pre_score(state, pod, ids).is_skip:
        return []
    raw = plugin.score_nodes(state, pod, ids)
    return [int(x) for x in plugin.normalize_scores(state, pod, ids, raw)]


UNRESOLVABLE = "UnschedulableAndUnresolvable"


# ---------------------------------------------------------------- NodeUnschedulable, NodeName
def test_unschedulable_node_only_for_pods_tolerating_its_taint() -> None:
    cluster = cluster_of([make_node("a").unschedulable(), make_node("b")])
    assert run_filter(NodeUnschedulable(), make_pod("p").obj(), cluster) == {
        "a": f"{UNRESOLVABLE}: node(s) were unschedulable",
        "b": "",
    }
    tolerant = make_pod("p").toleration(
        "node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"
    )
    assert run_filter(NodeUnschedulable(), tolerant.obj(), cluster) == {"a": "", "b": ""}
    # a toleration for a different effect does not cover it
    wrong = make_pod("p").toleration(
        "node.kubernetes.io/unschedulable", operator="Exists", effect="NoExecute"
    )
    assert run_filter(NodeUnschedulable(), wrong.obj(), cluster)["a"] != ""


def test_node_name_fits_only_the_named_node() -> None:
    cluster = cluster_of([make_node("a"), make_node("b")])
    assert run_filter(NodeName(), make_pod("p").set("spec.nodeName", "b").obj(), cluster) == {
        "a": f"{UNRESOLVABLE}: node(s) didn't match the requested node name",
        "b": "",
    }
    assert run_filter(NodeName(), make_pod("p").obj(), cluster) == {"a": "", "b": ""}


# ---------------------------------------------------------------- TaintToleration
def test_taints_filter_no_schedule_and_no_execute_but_not_prefer() -> None:
    cluster = cluster_of(
        [
            make_node("a").taint("k", "v", "NoSchedule"),
            make_node("b").taint("k", "v", "NoExecute"),
            make_node("c").taint("k", "v", "PreferNoSchedule"),
        ]
    )
    got = run_filter(TaintToleration(), make_pod("p").obj(), cluster)
    assert got == {
        "a": f"{UNRESOLVABLE}: node(s) had untolerated taint(s)",
        "b": f"{UNRESOLVABLE}: node(s) had untolerated taint(s)",
        "c": "",
    }
    equal = make_pod("p").toleration("k", "v")  # empty effect tolerates every effect
    assert set(run_filter(TaintToleration(), equal.obj(), cluster).values()) == {""}
    other_value = make_pod("p").toleration("k", "w")
    assert run_filter(TaintToleration(), other_value.obj(), cluster)["a"] != ""


def test_prefer_no_schedule_taints_score_in_reverse() -> None:
    cluster = cluster_of(
        [
            make_node("a"),
            make_node("b").taint("x", effect="PreferNoSchedule"),
            make_node("c").taint("x", effect="PreferNoSchedule").taint("y", effect="PreferNoSchedule"),
            make_node("d").taint("z", effect="NoSchedule"),
        ]
    )
    assert run_score(TaintToleration(), make_pod("p").obj(), cluster) == [100, 50, 0, 100]
    # a NoSchedule toleration does not help with PreferNoSchedule taints
    pod = make_pod("p").toleration("x", operator="Exists", effect="NoSchedule")
    assert run_score(TaintToleration(), pod.obj(), cluster) == [100, 50, 0, 100]
    pod = make_pod("p").toleration("x", operator="Exists")
    assert run_score(TaintToleration(), pod.obj(), cluster) == [100, 100, 0, 100]


# ---------------------------------------------------------------- NodeAffinity
def _required(*exprs: dict) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}


NA_REQUIRED = "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
NA_PREFERRED = "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"


@pytest.mark.parametrize(
    ("op", "value", "fits"),
    [
        ("Gt", "4", {"n2": False, "n8": True, "none": False, "text": False}),
        ("Lt", "4", {"n2": True, "n8": False, "none": False, "text": False}),
        # "-1" is no valid label value, so labels.NewRequirement refuses the term: it matches nothing
        ("Gt", "-1", {"n2": False, "n8": False, "none": False, "text": False}),
        ("Gt", "x", {"n2": False, "n8": False, "none": False, "text": False}),  # not an integer: term fails
    ],
)
def test_gt_lt_compare_integers(op: str, value: str, fits: dict[str, bool]) -> None:
    cluster = cluster_of(
        [
            make_node("n2").label("cores", "2"),
            make_node("n8").label("cores", "8"),
            make_node("none"),
            make_node("text").label("cores", "many"),
        ]
    )
    pod = make_pod("p").affinity(NA_REQUIRED, _required({"key": "cores", "operator": op, "values": [value]}))
    got = run_filter(NodeAffinity(), pod.obj(), cluster)
    assert {n: v == "" for n, v in got.items()} == fits


def test_terms_are_ored_expressions_anded_and_node_selector_anded_with_them() -> None:
    cluster = cluster_of(
        [
            make_node("a").zone("z1").label("disk", "ssd"),
            make_node("b").zone("z2"),
            make_node("c").zone("z3").label("disk", "ssd"),
        ]
    )
    terms = {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": ZONE, "operator": "In", "values": ["z1", "z3"]},
                    {"key": "disk", "operator": "Exists"},
                ]
            },
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]},
        ]
    }
    pod = make_pod("p").affinity(NA_REQUIRED, terms)
    assert {n for n, v in run_filter(NodeAffinity(), pod.obj(), cluster).items() if not v} == {"a", "b", "c"}
    pod = pod.node_selector(disk="ssd")
    got = run_filter(NodeAffinity(), pod.obj(), cluster)
    assert got["b"] == f"{UNRESOLVABLE}: node(s) didn't match Pod's node affinity/selector"
    assert got["a"] == got["c"] == ""


def test_empty_term_list_matches_no_node() -> None:
    cluster = cluster_of([make_node("a")])
    pod = make_pod("p").affinity(NA_REQUIRED, {"nodeSelectorTerms": []})
    assert run_filter(NodeAffinity(), pod.obj(), cluster)["a"] != ""


def test_nothing_to_check_skips_the_filter() -> None:
    cluster = cluster_of([make_node("a")])
    assert run_filter(NodeAffinity(), make_pod("p").obj(), cluster) == {"a": "skip"}
    assert NodeAffinity().pre_filter(CycleState(cluster), make_pod("p").obj())[1] == SKIP


def test_added_affinity_is_enforced_first_and_its_preferences_score() -> None:
    cluster = cluster_of([make_node("a").label("pool", "batch"), make_node("b").label("pool", "web")])
    args = NodeAffinityArgs.from_dict(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": _required(
                    {"key": "pool", "operator": "In", "values": ["batch", "web"]}
                ),
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 3,
                        "preference": {
                            "matchExpressions": [{"key": "pool", "operator": "In", "values": ["web"]}]
                        },
                    }
                ],
            }
        }
    )
    plugin = NodeAffinity(args)
    cluster2 = cluster_of([make_node("c").label("pool", "gpu")])
    assert run_filter(plugin, make_pod("p").obj(), cluster2) == {
        "c": f"{UNRESOLVABLE}: node(s) didn't match scheduler-enforced node affinity"
    }
    assert run_score(plugin, make_pod("p").obj(), cluster) == [0, 100]


def test_preferred_terms_sum_weights_then_scale_to_the_best() -> None:
    cluster = cluster_of(
        [make_node("a").zone("z1").label("disk", "ssd"), make_node("b").zone("z1"), make_node("c")]
    )
    pod = (
        make_pod("p")
        .affinity(
            NA_PREFERRED,
            {
                "weight": 30,
                "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]},
            },
        )
        .affinity(
            NA_PREFERRED,
            {
                "weight": 20,
                "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
            },
        )
    )
    assert run_score(NodeAffinity(), pod.obj(), cluster) == [100, 60, 0]


# ---------------------------------------------------------------- NodePorts
def test_host_port_conflicts_follow_the_wildcard_ip_rule() -> None:
    used = {("10.0.0.1", "TCP", 80): 1}
    assert port_conflicts(("0.0.0.0", "TCP", 80), used)
    assert port_conflicts(("10.0.0.1", "TCP", 80), used)
    assert not port_conflicts(("10.0.0.2", "TCP", 80), used)
    assert not port_conflicts(("0.0.0.0", "UDP", 80), used)
    assert port_conflicts(("10.0.0.2", "TCP", 80), {("0.0.0.0", "TCP", 80): 1})


def test_node_ports_filter_and_skip() -> None:
    cluster = cluster_of([make_node("a"), make_node("b")], [make_pod("web").node("a").host_port(8080)])
    assert run_filter(NodePorts(), make_pod("p").host_port(8080).obj(), cluster) == {
        "a": "Unschedulable: node(s) didn't have free ports for the requested pod ports",
        "b": "",
    }
    assert run_filter(NodePorts(), make_pod("p").host_port(8080, "UDP").obj(), cluster) == {"a": "", "b": ""}
    assert run_filter(NodePorts(), make_pod("p").obj(), cluster) == {"a": "skip", "b": "skip"}


def test_terminating_pods_still_hold_their_ports_but_finished_ones_do_not() -> None:
    cluster = cluster_of(
        [make_node("a"), make_node("b")],
        [
            make_pod("old").node("a").host_port(80).terminating(),
            make_pod("done").node("b").host_port(80).phase("Succeeded"),
        ],
    )
    assert run_filter(NodePorts(), make_pod("p").host_port(80).obj(), cluster) == {
        "a": "Unschedulable: node(s) didn't have free ports for the requested pod ports",
        "b": "",
    }


# ---------------------------------------------------------------- vectorized == per-node
# NodeUnschedulable, NodeName, TaintToleration and NodePorts override filter_nodes / score_nodes
# with vector forms (per-node facts cached per node generation); the base classes' per-node
# loops over filter / score are the reference.
_TAINT_KEYS = ("a", "b", "node.kubernetes.io/unschedulable")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _random_node(rng: random.Random, name: str):
    node = make_node(name)
    if rng.random() < 0.3:
        node = node.unschedulable()
    for _ in range(rng.choice((0, 0, 1, 2, 3))):  # duplicates allowed: the score counts them
        node = node.taint(rng.choice(_TAINT_KEYS), rng.choice(("", "x", "y")), rng.choice(_EFFECTS))
    return node


def _random_pod(rng: random.Random, name: str, node_names: list[str]):
    pod = make_pod(name)
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        op = rng.choice(("", "Equal", "Exists"))
        key = rng.choice(("", *_TAINT_KEYS)) if op == "Exists" else rng.choice(_TAINT_KEYS)
        value = "" if op == "Exists" else rng.choice(("", "x", "y"))
        pod = pod.toleration(key, value, rng.choice(("", *_EFFECTS)), op)
    if rng.random() < 0.4:
        pod = pod.set("spec.nodeName", rng.choice([*node_names, "missing"]))
    if rng.random() < 0.5:
        pod = pod.host_port(rng.choice((80, 443)), rng.choice(("TCP", "UDP")), rng.choice(("", "10.0.0.1")))
    return pod


def _random_cluster(rng: random.Random, n: int):
    nodes = [_random_node(rng, f"n{i}") for i in range(n)]
    bound = [
        make_pod(f"bound{i}")
        .node(f"n{rng.randrange(n)}")
        .host_port(rng.choice((80, 443)), rng.choice(("TCP", "UDP")), rng.choice(("", "10.0.0.1")))
        for i in range(n // 3)
    ]
    return cluster_of(nodes, bound)


_VECTORIZED = (NodeUnschedulable, NodeName, TaintToleration, NodePorts)


def _verdicts(res, nodes: np.ndarray) -> list[tuple[int, str]]:
    """(node id, "code: reasons") for every rejected node of a FilterResult."""
    assert res.which.shape == nodes.shape
    return [
        (int(i), f"{res.statuses[w].code}: {res.statuses[w].message}")
        for i, w in zip(nodes, res.which, strict=True)
        if w >= 0
    ]


def _assert_same_as_per_node(cluster, pods, rng: random.Random) -> int:
    """Vector and per-node forms agree on every pod, for all nodes and a shuffled subset;
    returns how many (plugin, pod, node set) verdicts rejected something."""
    rejecting = 0
    all_ids = np.arange(cluster.num_nodes)
    subset = np.asarray(rng.sample(range(cluster.num_nodes), cluster.num_nodes // 2), dtype=np.int64)
    for pod in pods:
        for cls in _VECTORIZED:
            plugin = cls()
            state = CycleState(cluster)
            if hasattr(plugin, "pre_filter") and plugin.pre_filter(state, pod)[1].is_skip:
                continue
            for nodes in (all_ids, subset):
                want = _verdicts(FilterPlugin.filter_nodes(plugin, state, pod, nodes), nodes)
                got = _verdicts(plugin.filter_nodes(state, pod, nodes), nodes)
                assert got == want, (cls.__name__, pod.spec.to_dict())
                rejecting += bool(want)
        plugin = TaintToleration()
        state = CycleState(cluster)
        plugin.pre_score(state, pod, all_ids)
        for nodes in (all_ids, subset):
            want = ScorePlugin.score_nodes(plugin, state, pod, nodes)
            got = plugin.score_nodes(state, pod, nodes)
            assert got.dtype == np.int64
            assert got.tolist() == want.tolist(), pod.spec.to_dict()
        # and without PreScore (score reads the tolerations itself)
        bare = CycleState(cluster)
        assert (
            plugin.score_nodes(bare, pod, all_ids).tolist()
            == ScorePlugin.score_nodes(plugin, bare, pod, all_ids).tolist()
        )
    return rejecting


@pytest.mark.parametrize("seed", range(6))
def test_vectorized_filters_and_score_match_the_per_node_forms(seed: int) -> None:
    rng = random.Random(seed)
    cluster = _random_cluster(rng, rng.choice((7, 20, 40)))
    names = [str(n) for n in cluster.node_names]
    pods = [_random_pod(rng, f"p{i}", names).obj() for i in range(40)]
    rejecting = _assert_same_as_per_node(cluster, pods, rng)
    assert rejecting > 0  # the random clusters do exercise rejections
    # node ids move when a node is deleted (the last takes the freed slot): still the same
    cluster.delete_node(next(n for n in names if not cluster.pods_on_node(n)))
    _assert_same_as_per_node(cluster, pods, rng)


def test_vectorized_forms_see_node_updates() -> None:
    cluster = cluster_of([make_node("a"), make_node("b"), make_node("c")])
    pod = make_pod("p").obj()
    taints, unsched = TaintToleration(), NodeUnschedulable()
    assert set(run_filter(taints, pod, cluster).values()) == {""}
    assert set(run_filter(unsched, pod, cluster).values()) == {""}
    assert run_score(taints, pod, cluster) == [100, 100, 100]

    cluster.update_node(make_node("b").taint("k", "v", "NoSchedule").obj())
    cluster.update_node(make_node("c").taint("k", "v", "PreferNoSchedule").unschedulable().obj())
    assert run_filter(taints, pod, cluster) == {
        "a": "",
        "b": f"{UNRESOLVABLE}: node(s) had untolerated taint(s)",
        "c": "",
    }
    assert run_filter(unsched, pod, cluster) == {
        "a": "",
        "b": "",
        "c": f"{UNRESOLVABLE}: node(s) were unschedulable",
    }
    assert run_score(taints, pod, cluster) == [100, 100, 0]

    cluster.add_node(make_node("d").taint("k", "v", "NoExecute").obj())
    assert run_filter(taints, pod, cluster)["d"] == f"{UNRESOLVABLE}: node(s) had untolerated taint(s)"
    cluster.update_node(make_node("b").obj())  # taint removed again
    assert run_filter(taints, pod, cluster)["b"] == ""
    # a second cluster does not see the first one's facts
    other = cluster_of([make_node("a").taint("k", "v", "NoSchedule")])
    assert run_filter(taints, pod, other) == {"a": f"{UNRESOLVABLE}: node(s) had untolerated taint(s)"}
    assert run_filter(taints, pod, cluster)["a"] == ""


# NodeAffinity decides each requirement once per distinct label value and caches the node
# masks by the terms' content; the per-node matchers are the reference.
_NA_KEYS = ("disk", "num", ZONE)
_NA_VALUES = ("ssd", "hdd", "3", "10", "-1", "z1", "z2", "not valid!")


def _random_requirement(rng: random.Random) -> dict:
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"))
    values = rng.sample(_NA_VALUES, rng.choice((0, 1, 1, 2)))
    if op in ("Exists", "DoesNotExist") and rng.random() < 0.8:
        values = []
    return {"key": rng.choice(_NA_KEYS), "operator": op, "values": values}


def _random_term(rng: random.Random, names: list[str]) -> dict:
    term: dict = {}
    if rng.random() < 0.9:
        term["matchExpressions"] = [_random_requirement(rng) for _ in range(rng.choice((1, 1, 2)))]
    if rng.random() < 0.2:
        field = {
            "key": rng.choice(("metadata.name", "metadata.uid")),
            "operator": rng.choice(("In", "NotIn", "Exists")),
            "values": rng.sample([*names, "missing"], rng.choice((1, 1, 2))),
        }
        term["matchFields"] = [field]
    return term


def _random_na_pod(rng: random.Random, name: str, names: list[str]):
    pod = make_pod(name)
    if rng.random() < 0.3:
        pod = pod.node_selector(**{rng.choice(_NA_KEYS): rng.choice(_NA_VALUES)})
    if rng.random() < 0.7:
        terms = [_random_term(rng, names) for _ in range(rng.choice((0, 1, 2, 3)))]
        pod = pod.affinity(NA_REQUIRED, {"nodeSelectorTerms": terms})
    for _ in range(rng.choice((0, 1, 2))):
        pod = pod.affinity(
            NA_PREFERRED, {"weight": rng.choice((0, 1, 50)), "preference": _random_term(rng, names)}
        )
    return pod.obj()


@pytest.mark.parametrize("seed", range(8))
def test_node_affinity_vector_forms_match_the_per_node_forms(seed: int) -> None:
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.choice((5, 12, 30))):
        node = make_node(f"n{i}")
        for key in _NA_KEYS:
            if rng.random() < 0.7:
                node = node.label(key, rng.choice(_NA_VALUES[:-1]))
        nodes.append(node)
    cluster = cluster_of(nodes)
    names = [str(n) for n in cluster.node_names]
    added = NodeAffinityArgs.from_dict(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [_random_term(rng, names)]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 7, "preference": _random_term(rng, names)}
                ],
            }
        }
    )
    rejected = scored = 0
    for _ in range(2):
        all_ids = np.arange(cluster.num_nodes)
        subset = np.asarray(rng.sample(range(cluster.num_nodes), cluster.num_nodes // 2), dtype=np.int64)
        for i in range(30):
            pod = _random_na_pod(rng, f"p{i}", names)
            for plugin in (NodeAffinity(), NodeAffinity(added)):
                state = CycleState(cluster)
                if not plugin.pre_filter(state, pod)[1].is_skip:
                    for nodes in (all_ids, subset):
                        want = _verdicts(FilterPlugin.filter_nodes(plugin, state, pod, nodes), nodes)
                        assert _verdicts(plugin.filter_nodes(state, pod, nodes), nodes) == want, (
                            pod.spec.to_dict()
                        )
                        rejected += bool(want)
                if not plugin.pre_score(state, pod, all_ids).is_skip:
                    for nodes in (all_ids, subset):
                        want = ScorePlugin.score_nodes(plugin, state, pod, nodes)
                        assert plugin.score_nodes(state, pod, nodes).tolist() == want.tolist(), (
                            pod.spec.to_dict()
                        )
                        scored += bool(want.any())
        # node ids move and labels change: the cached masks must follow
        cluster.delete_node(names.pop(0))
        cluster.update_node(make_node(names[0]).label("disk", "ssd").label("num", "10").obj())
    assert rejected > 0 and scored > 0


# ---------------------------------------------------------------- queueing
def test_scheduling_gates_hold_the_pod() -> None:
    gated = make_pod("p").set("spec.schedulingGates", [{"name": "a"}, {"name": "b"}]).obj()
    st = SchedulingGates().pre_enqueue(gated)
    assert st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ("waiting for scheduling gates: [a b]",)
    assert SchedulingGates().pre_enqueue(make_pod("p").obj()).is_success


def test_priority_sort_orders_by_priority_then_arrival() -> None:
    high = QueuedPod(make_pod("h").set("spec.priority", 100).obj(), timestamp=5)
    low_early = QueuedPod(make_pod("l1").set("spec.priority", 1).obj(), timestamp=1)
    low_late = QueuedPod(make_pod("l2").set("spec.priority", 1).obj(), timestamp=2)
    unset = QueuedPod(make_pod("u").obj(), timestamp=0)
    less = PrioritySort().less
    assert less(high, low_early) and not less(low_early, high)
    assert less(low_early, low_late) and not less(low_late, low_early)
    assert less(low_late, unset)
    assert HOSTNAME  # the builders label every node with its hostname
