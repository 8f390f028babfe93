"""ImageLocality against hand-computed kube-scheduler v1.35 answers (image_locality.go)."""

from __future__ import annotations

import numpy as np

from builders import PodBuilder, cluster_of, make_node, make_pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import CycleState
from kubespread.scheduler.plugins.imagelocality import ImageLocality, normalized_image_name

MB = 1024 * 1024


def scores(cluster: ClusterState, pod: PodBuilder, plugin: ImageLocality | None = None) -> dict[str, int]:
    """node name → score over all nodes; checks the per-node form agrees."""
    plugin = plugin or ImageLocality()
    state, p = CycleState(cluster), pod.obj()
    raw = plugin.score_nodes(state, p, np.arange(cluster.num_nodes))
    out = {name: int(raw[i]) for i, name in enumerate(cluster.node_names)}
    for i, name in enumerate(cluster.node_names):
        assert plugin.score(state, p, cluster.node_info_at(i)) == out[name]
    return out


def test_normalized_image_name() -> None:
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("nginx:1.25") == "nginx:1.25"
    assert normalized_image_name("registry:5000/app") == "registry:5000/app:latest"
    assert normalized_image_name("registry:5000/app:v1") == "registry:5000/app:v1"


def test_spread_scales_the_size() -> None:
    cluster = cluster_of(
        [
            make_node("a").image(["nginx:1.25"], 500_000_000),
            make_node("b").image(["nginx:1.25"], 500_000_000),
            make_node("c"),
        ]
    )
    # on 2 of 3 nodes: int(500e6 * 2/3) = 333333333 -> 100*(333333333-23Mi)//(1000Mi-23Mi) = 30
    assert scores(cluster, make_pod("p").image("nginx:1.25")) == {"a": 30, "b": 30, "c": 0}
    assert scores(cluster, make_pod("q").image("nginx:1.26")) == {"a": 0, "b": 0, "c": 0}


def test_latest_is_added_to_the_pod_image_only() -> None:
    cluster = cluster_of(
        [
            make_node("a").image(["redis:latest"], 2000 * MB),
            make_node("b").image(["redis"], 2000 * MB),
        ]
    )
    # "redis" in the pod means redis:latest; the node's bare "redis" name is not normalized
    # a: int(2000Mi * 1/2) = 1000Mi, the 1-container ceiling -> 100
    assert scores(cluster, make_pod("p").image("redis")) == {"a": 100, "b": 0}
    assert scores(cluster, make_pod("q").image("redis:7")) == {"a": 0, "b": 0}


def test_thresholds() -> None:
    cluster = cluster_of(
        [
            make_node("small").image(["tiny:1"], 20 * MB),
            make_node("huge").image(["big:1"], 5000 * MB),
        ]
    )
    # below 23Mi -> 0 (spread 1/2 makes 10Mi); above 1000Mi per container -> 100
    assert scores(cluster, make_pod("p").image("tiny:1")) == {"small": 0, "huge": 0}
    assert scores(cluster, make_pod("q").image("big:1")) == {"small": 0, "huge": 100}


def test_init_containers_count_in_sum_and_in_threshold() -> None:
    cluster = cluster_of(
        [
            make_node("a").image(["app:1"], 500_000_000).image(["init:1"], 300_000_000),
            make_node("b"),
            make_node("c"),
        ]
    )
    pod = make_pod("p").image("app:1").container("setup", image="init:1", init=True)
    # int(500e6/3) + int(300e6/3) = 266666666; 2 containers -> 100*(266666666-23Mi)//(2000Mi-23Mi) = 11
    assert scores(cluster, pod) == {"a": 11, "b": 0, "c": 0}
    # the app image alone, against a 1-container threshold: int(500e6/3) = 166666666 -> 13
    assert scores(cluster, make_pod("q").image("app:1")) == {"a": 13, "b": 0, "c": 0}


def test_size_of_an_image_name_is_the_first_node_s() -> None:
    cluster = cluster_of([make_node("a").image(["x:1"], 2000 * MB), make_node("b").image(["x:1"], 100 * MB)])
    # one ImageStateSummary per name: both nodes score with a's 2000Mi (spread 2/2) -> 100
    assert scores(cluster, make_pod("p").image("x:1")) == {"a": 100, "b": 100}


def test_index_follows_node_changes() -> None:
    cluster = cluster_of([make_node("a").image(["x:1"], 2000 * MB), make_node("b")])
    plugin = ImageLocality()
    assert scores(cluster, make_pod("p").image("x:1"), plugin) == {"a": 100, "b": 0}
    cluster.update(make_node("b").image(["x:1"], 2000 * MB).obj())
    assert scores(cluster, make_pod("p").image("x:1"), plugin) == {"a": 100, "b": 100}
