"""NodeResourcesFit and NodeResourcesBalancedAllocation against hand-computed kube-scheduler
v1.35 answers (fit.go, resource_allocation.go, the three strategies, balanced_allocation.go)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from builders import NodeBuilder, PodBuilder, cluster_of, make_node, make_pod
from kubespread.api.schedconfig import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.defaults import LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO
from kubespread.scheduler.framework import Code, CycleState, Status
from kubespread.scheduler.plugins.noderesources import (
    REASON_CPU,
    REASON_EPHEMERAL_STORAGE,
    REASON_MEMORY,
    REASON_TOO_MANY_PODS,
    NodeResourcesBalancedAllocation,
    NodeResourcesFit,
)
from kubespread.scheduler.plugins.noderesources.requested_to_capacity_ratio import broken_linear

GPU = "example.com/gpu"


# --------------------------------------------------------------------------- helpers
def run_filter(
    cluster: ClusterState, pod: PodBuilder, plugin: NodeResourcesFit | None = None
) -> dict[str, Any]:
    """node name → None (passes) or the rejecting Status, through the batch form; checks that
    the per-node form agrees."""
    plugin = plugin or NodeResourcesFit()
    state, p = CycleState(cluster), pod.obj()
    _, status = plugin.pre_filter(state, p)
    assert status.is_success
    result = plugin.filter_nodes(state, p, np.arange(cluster.num_nodes))
    out: dict[str, Any] = {}
    for i, name in enumerate(cluster.node_names):
        w = int(result.which[i])
        out[name] = None if w < 0 else result.statuses[w]
        single = plugin.filter(state, p, cluster.node_info_at(i))
        assert (None if single.is_success else single) == out[name], name
    return out


def run_score(cluster: ClusterState, pod: PodBuilder, plugin: Any) -> dict[str, int] | None:
    """node name → raw score over all nodes; None when PreScore skips. Checks the per-node form."""
    state, p = CycleState(cluster), pod.obj()
    nodes = np.arange(cluster.num_nodes)
    if plugin.pre_score(state, p, nodes).is_skip:
        return None
    raw = plugin.score_nodes(state, p, nodes)
    assert raw.dtype == np.int64
    out = {name: int(raw[i]) for i, name in enumerate(cluster.node_names)}
    for i, name in enumerate(cluster.node_names):
        assert plugin.score(state, p, cluster.node_info_at(i)) == out[name]
    return out


def fit_args(
    kind: str,
    resources: list[tuple[str, int]] | None = None,
    shape: list[tuple[int, int]] | None = None,
    **extra: Any,
) -> NodeResourcesFitArgs:
    specs = [ResourceSpec(name=n, weight=w) for n, w in resources or []]
    strategy = ScoringStrategy(type=kind, resources=specs)
    if shape is not None:
        strategy.requested_to_capacity_ratio = RequestedToCapacityRatioParam(
            shape=[UtilizationShapePoint(utilization=u, score=s) for u, s in shape]
        )
    return NodeResourcesFitArgs(scoring_strategy=strategy, **extra)


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **other: str) -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu, memory=memory, pods=pods, **other)


# --------------------------------------------------------------------------- Filter
def test_fits_and_exact_fit_passes() -> None:
    cluster = cluster_of([node("a"), node("b")], [make_pod("x").req(cpu="3", memory="6Gi").node("b")])
    got = run_filter(cluster, make_pod("p").req(cpu="1", memory="2Gi"))
    assert got == {"a": None, "b": None}  # b: exactly 1 cpu and 2Gi left


def test_insufficient_reasons_all_listed_in_order() -> None:
    cluster = cluster_of(
        [node("a"), node("b")],
        [make_pod("x").req(cpu="3500m", memory="7Gi").node("a"), make_pod("y").req(cpu="3500m").node("b")],
    )
    got = run_filter(cluster, make_pod("p").req(cpu="1", memory="2Gi"))
    assert got["a"] == Status.unschedulable(REASON_CPU, REASON_MEMORY)
    assert got["b"] == Status.unschedulable(REASON_CPU)


def test_request_above_whole_allocatable_is_unresolvable() -> None:
    cluster = cluster_of(
        [node("small", cpu="2"), node("big", cpu="8")], [make_pod("x").req(memory="7Gi").node("small")]
    )
    got = run_filter(cluster, make_pod("p").req(cpu="3", memory="2Gi"))
    # cpu can never fit on "small" (3 > 2): the whole status becomes unresolvable, memory
    # (which preemption could free) is still listed
    assert got["small"] == Status.unresolvable(REASON_CPU, REASON_MEMORY)
    assert got["small"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got["big"] is None


def test_too_many_pods_even_for_a_pod_requesting_nothing() -> None:
    cluster = cluster_of(
        [node("a", pods="1"), node("b", pods="2")], [make_pod("x").node("a"), make_pod("y").node("b")]
    )
    assert run_filter(cluster, make_pod("p")) == {"a": Status.unschedulable(REASON_TOO_MANY_PODS), "b": None}
    got = run_filter(cluster, make_pod("q").req(cpu="5"))
    assert got["a"] == Status.unresolvable(REASON_TOO_MANY_PODS, REASON_CPU)
    assert got["b"] == Status.unresolvable(REASON_CPU)


def test_zero_request_never_fails_on_overcommitted_node() -> None:
    # bound by nodeName past the node's size: 6 cpu requested on a 4-cpu node
    cluster = cluster_of([node("a")], [make_pod("x").req(cpu="6").node("a")])
    assert run_filter(cluster, make_pod("none")) == {"a": None}
    assert run_filter(cluster, make_pod("mem").req(memory="1Gi")) == {"a": None}
    assert run_filter(cluster, make_pod("cpu").req(cpu="1m")) == {"a": Status.unschedulable(REASON_CPU)}


def test_init_containers_take_the_max() -> None:
    cluster = cluster_of(
        [node("a"), node("b")],
        [make_pod("x").req(cpu="1500m").node("a"), make_pod("y").req(cpu="1").node("b")],
    )
    pod = make_pod("p").req(cpu="1").container("init", cpu="3", init=True)  # max(1, 3) = 3 cpu
    assert run_filter(cluster, pod) == {"a": Status.unschedulable(REASON_CPU), "b": None}


def test_sidecars_add_to_the_steady_state_and_to_later_inits() -> None:
    # sidecar 1 cpu runs beside the 2-cpu container (3), and beside the later 2500m init (3500m)
    pod = (
        make_pod("p")
        .req(cpu="2")
        .container("side", cpu="1", sidecar=True)
        .container("init", cpu="2500m", init=True)
    )
    cluster = cluster_of([node("a", cpu="3400m"), node("b", cpu="3500m")])
    assert run_filter(cluster, pod) == {"a": Status.unresolvable(REASON_CPU), "b": None}


def test_overhead_is_added() -> None:
    pod = make_pod("p").req(cpu="1", memory="1Gi").set("spec.overhead", {"cpu": "250m", "memory": "128Mi"})
    cluster = cluster_of([node("a", cpu="1250m"), node("b", cpu="1249m")])
    assert run_filter(cluster, pod) == {"a": None, "b": Status.unresolvable(REASON_CPU)}


def test_ephemeral_storage() -> None:
    cluster = cluster_of(
        [node("a", ephemeral_storage="10Gi"), node("b", ephemeral_storage="10Gi"), node("c")],
        [make_pod("x").req(ephemeral_storage="9Gi").node("a")],
    )
    got = run_filter(cluster, make_pod("p").req(ephemeral_storage="2Gi"))
    assert got == {
        "a": Status.unschedulable(REASON_EPHEMERAL_STORAGE),
        "b": None,
        "c": Status.unresolvable(REASON_EPHEMERAL_STORAGE),
    }


def test_extended_resources() -> None:
    cluster = cluster_of(
        [node("a", **{GPU: "2"}), node("b", **{GPU: "2"}), node("c")],
        [make_pod("x").req(**{GPU: "1"}).node("a")],
    )
    got = run_filter(cluster, make_pod("p").req(cpu="5", **{GPU: "2"}))
    assert got["a"] == Status.unresolvable(REASON_CPU, "Insufficient example.com/gpu")
    got = run_filter(cluster, make_pod("q").req(**{GPU: "2"}))
    assert got == {
        "a": Status.unschedulable("Insufficient example.com/gpu"),
        "b": None,
        "c": Status.unresolvable("Insufficient example.com/gpu"),
    }
    ignored = NodeResourcesFit(NodeResourcesFitArgs(ignored_resources=[GPU]))
    assert run_filter(cluster, make_pod("r").req(**{GPU: "2"}), ignored) == {"a": None, "b": None, "c": None}
    by_group = NodeResourcesFit(NodeResourcesFitArgs(ignored_resource_groups=["example.com"]))
    assert run_filter(cluster, make_pod("s").req(**{GPU: "2"}), by_group) == {"a": None, "b": None, "c": None}


def test_filter_batch_matches_per_node_on_random_clusters() -> None:
    rng = random.Random(7)
    for _ in range(20):
        nodes = [
            node(
                f"n{i}",
                cpu=f"{rng.randint(1, 8)}",
                memory=f"{rng.randint(1, 8)}Gi",
                pods=str(rng.randint(1, 4)),
                **{GPU: str(rng.randint(0, 2))},
            )
            for i in range(6)
        ]
        pods = [
            make_pod(f"x{j}")
            .req(cpu=f"{rng.randint(0, 3000)}m", memory=f"{rng.randint(0, 3)}Gi")
            .node(f"n{rng.randint(0, 5)}")
            for j in range(8)
        ]
        cluster = cluster_of(nodes, pods)
        pod = make_pod("p").req(cpu=f"{rng.randint(0, 4000)}m", memory=f"{rng.randint(0, 4)}Gi")
        if rng.random() < 0.5:
            pod.req(**{GPU: "1"})
        run_filter(cluster, pod)  # asserts batch == per node


# --------------------------------------------------------------------------- Fit scores
def test_least_allocated_uses_non_zero_requests() -> None:
    cluster = cluster_of(
        [node("a", cpu="3"), node("b"), node("c")],
        [make_pod("x").node("c")],  # no requests: counts 100m / 200Mi when scoring
    )
    got = run_score(cluster, make_pod("p").req(cpu="1", memory="1Gi"), NodeResourcesFit())
    # a: cpu (3000-1000)*100//3000 = 66, memory (8-1)*100//8 = 87 -> 153//2 = 76
    # b: cpu 75, memory 87 -> 81
    # c: cpu (4000-1100)*100//4000 = 72, memory (8Gi-1Gi-200Mi)*100//8Gi = 85 -> 78
    assert got == {"a": 76, "b": 81, "c": 78}


def test_incoming_pod_without_requests_counts_defaults() -> None:
    cluster = cluster_of([node("a", cpu="1", memory="1Gi")])
    # 100m of 1000m -> 90; 200Mi of 1Gi -> (1024-200)*100//1024 = 80 -> 85
    assert run_score(cluster, make_pod("p"), NodeResourcesFit()) == {"a": 85}


def test_least_allocated_weights_and_over_capacity() -> None:
    args = fit_args(LEAST_ALLOCATED, [("cpu", 3), ("memory", 1)])
    cluster = cluster_of([node("a", cpu="3"), node("b", cpu="1")])
    got = run_score(cluster, make_pod("p").req(cpu="1", memory="1Gi"), NodeResourcesFit(args))
    # a: (66*3 + 87) // 4 = 71; b: cpu 1000 of 1000 -> 0 -> (0 + 87) // 4 = 21
    assert got == {"a": 71, "b": 21}
    over = run_score(cluster, make_pod("q").req(cpu="2", memory="1Gi"), NodeResourcesFit(args))
    assert over == {"a": (33 * 3 + 87) // 4, "b": 87 // 4}


def test_most_allocated() -> None:
    args = fit_args(MOST_ALLOCATED, [("cpu", 1), ("memory", 1)])
    cluster = cluster_of([node("a", cpu="3"), node("b", cpu="1")])
    got = run_score(cluster, make_pod("p").req(cpu="2", memory="1Gi"), NodeResourcesFit(args))
    # a: cpu 2000*100//3000 = 66, memory 12 -> 39; b: cpu capped at 100 -> (100 + 12)//2 = 56
    assert got == {"a": 39, "b": 56}


def test_requested_to_capacity_ratio_two_points_rounds_half_up() -> None:
    args = fit_args(REQUESTED_TO_CAPACITY_RATIO, [("cpu", 1), ("memory", 1)], shape=[(0, 0), (100, 10)])
    cluster = cluster_of([node("a", cpu="3")])
    got = run_score(cluster, make_pod("p").req(cpu="1", memory="1Gi"), NodeResourcesFit(args))
    # utilization cpu 33, memory 12; f(u) = u -> round((33 + 12) / 2) = round(22.5) = 23
    assert got == {"a": 23}


def test_requested_to_capacity_ratio_three_points_and_weights() -> None:
    shape = [(0, 10), (30, 0), (100, 10)]
    f = broken_linear([(u, s * 10) for u, s in shape])
    assert [f(0), f(13), f(30), f(33), f(100), f(120)] == [100, 57, 0, 4, 100, 100]  # 57: Go truncation
    args = fit_args(REQUESTED_TO_CAPACITY_RATIO, [("cpu", 2), ("memory", 1)], shape=shape)
    cluster = cluster_of([node("a", cpu="10", memory="10Gi"), node("b", cpu="1")])
    got = run_score(cluster, make_pod("p").req(cpu="1300m", memory="3Gi"), NodeResourcesFit(args))
    # a: cpu u=13 -> 57, memory u=30 -> 0 (not counted, nor its weight) -> round(57*2/2) = 57
    # b: cpu over capacity -> f(100) = 100; memory 3Gi of 8Gi u=37 -> 0 + 100*7//70 = 10
    #    -> round((200 + 10) / 3) = 70
    assert got == {"a": 57, "b": 70}


def test_fit_scores_scalar_only_when_requested_and_allocatable() -> None:
    args = fit_args(LEAST_ALLOCATED, [("cpu", 1), (GPU, 3)])
    cluster = cluster_of([node("a", **{GPU: "4"}), node("b")])
    plain = run_score(cluster, make_pod("p").req(cpu="1"), NodeResourcesFit(args))
    assert plain == {"a": 75, "b": 75}  # the GPU is left out: the pod does not ask for one
    gpu = run_score(cluster, make_pod("q").req(cpu="1", **{GPU: "1"}), NodeResourcesFit(args))
    assert gpu == {"a": (75 + 75 * 3) // 4, "b": 75}  # b has none: left out, weight and all


# --------------------------------------------------------------------------- BalancedAllocation
def test_balanced_allocation_two_resources() -> None:
    cluster = cluster_of([node("a"), node("b")], [make_pod("x").req(cpu="2").node("b")])
    got = run_score(cluster, make_pod("p").req(cpu="1", memory="1Gi"), NodeResourcesBalancedAllocation())
    # a: fractions 0.25, 0.125 -> std 0.0625 -> 93; b: 0.75, 0.125 -> std 0.3125 -> 68
    assert got == {"a": 93, "b": 68}


def test_balanced_allocation_uses_real_requests_and_caps_fractions() -> None:
    cluster = cluster_of(
        [node("a"), node("b"), node("c")],
        [make_pod("x").node("b"), make_pod("y").req(cpu="6").node("c")],  # x: no requests
    )
    got = run_score(cluster, make_pod("p").req(cpu="1", memory="1Gi"), NodeResourcesBalancedAllocation())
    # b counts x as nothing (same as a); c: cpu fraction 7/4 capped to 1 -> std (1-0.125)/2 -> 56
    assert got == {"a": 93, "b": 93, "c": 56}


def test_balanced_allocation_skips_best_effort_pods() -> None:
    cluster = cluster_of([node("a")])
    plugin = NodeResourcesBalancedAllocation()
    assert run_score(cluster, make_pod("p"), plugin) is None
    # requesting only one of its resources is enough to be scored
    assert run_score(cluster, make_pod("q").req(memory="4Gi"), plugin) == {"a": 75}


def test_balanced_allocation_three_resources() -> None:
    args = NodeResourcesBalancedAllocationArgs(
        resources=[ResourceSpec(name=n, weight=1) for n in ("cpu", "memory", "ephemeral-storage")]
    )
    cluster = cluster_of([node("a", ephemeral_storage="100Gi"), node("b")])
    pod = make_pod("p").req(cpu="1", memory="1Gi", ephemeral_storage="10Gi")
    got = run_score(cluster, pod, NodeResourcesBalancedAllocation(args))
    # a: fractions 0.25, 0.125, 0.1 -> population std 0.0656 -> 93
    # b: no ephemeral storage allocatable -> left out -> two fractions -> 93
    assert got == {"a": 93, "b": 93}
    cluster = cluster_of([node("a", ephemeral_storage="10Gi")])
    # 0.25, 0.125, 1.0 -> mean 0.4583, std 0.3865 -> 61
    assert run_score(cluster, pod, NodeResourcesBalancedAllocation(args)) == {"a": 61}


@pytest.mark.parametrize("plugin", [NodeResourcesFit(), NodeResourcesBalancedAllocation()])
def test_scores_over_a_subset_of_nodes(plugin: Any) -> None:
    cluster = cluster_of([node("a"), node("b", cpu="2"), node("c", cpu="8")])
    state, p = CycleState(cluster), make_pod("p").req(cpu="1", memory="1Gi").obj()
    assert not plugin.pre_score(state, p, np.arange(3)).is_skip
    full = plugin.score_nodes(state, p, np.arange(3))
    part = plugin.score_nodes(state, p, np.array([2, 0]))
    assert list(part) == [full[2], full[0]]
    assert len(set(full.tolist())) == 3


def test_balanced_scores_of_two_resources_match_the_general_path() -> None:
    """balanced_resource_scorer's shortcut for (cpu, memory) on nodes that have both gives the
    scores the general path gives: a node without memory sends the same nodes down that path."""
    import numpy as np

    from kubespread.scheduler.plugins.noderesources.balanced_allocation import balanced_resource_scorer

    rng = np.random.default_rng(3)
    alloc = rng.integers(1, 64_000, size=(2, 500)).astype(np.int64)
    req = (alloc * rng.random((2, 500)) * 1.2).astype(np.int64)  # some above allocatable
    req[:, :5] = alloc[:, :5]  # full nodes
    shortcut = balanced_resource_scorer(req, alloc)
    alloc_general = np.concatenate([alloc, np.array([[1000], [0]])], axis=1)
    req_general = np.concatenate([req, np.array([[500], [0]])], axis=1)
    general = balanced_resource_scorer(req_general, alloc_general)
    assert shortcut.tolist() == general[:-1].tolist()
    assert general[-1] == 100  # one resource left: nothing to balance
    assert len(set(shortcut.tolist())) > 10
