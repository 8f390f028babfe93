"""Small capacity instances, and an optimum found without the solver: every vector of new
pods per node is tried, and the scheduler's own Filter judges each final state."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from builders import cluster_of, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler import Profile
from kubespread.solve import VerificationError, verify, verify_groups

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"matchLabels": {"app": "web"}}


def web() -> Pod:
    return make_pod("web").labels(app="web").req(cpu="1").obj()


def two_spreads() -> tuple[ClusterState, Pod]:
    """Zone and hostname spread: the scheduler fills zone c's one node last and strands it
    (5 placed); 2+2 in zone b and 3 in zone c hold 7."""
    nodes = [
        make_node("n0").zone("b").capacity(cpu="3"),
        make_node("n1").zone("c").capacity(cpu="3"),
        make_node("n2").zone("b").capacity(cpu="3"),
    ]
    pod = make_pod("web").labels(app="web").req(cpu="1")
    pod = pod.spread(1, ZONE, selector=WEB).spread(1, HOST, selector=WEB)
    return cluster_of(nodes), pod.obj()


def anti_and_existing() -> tuple[ClusterState, Pod]:
    """Hostname anti-affinity among replicas; an existing replica and a pod whose own
    anti-affinity keeps web off its node (symmetry); a node too small for one."""
    nodes = [
        make_node("a1").zone("a").capacity(cpu="2"),
        make_node("a2").zone("a").capacity(cpu="2"),
        make_node("b1").zone("b").capacity(cpu="500m"),
        make_node("b2").zone("b").capacity(cpu="2"),
        make_node("c1").zone("c").capacity(cpu="2"),
    ]
    pods = [
        make_pod("web-old").labels(app="web").req(cpu="1").node("a1"),
        make_pod("db").labels(app="db").node("b2").pod_affinity(HOST, WEB, anti=True),
    ]
    pod = make_pod("web").labels(app="web").req(cpu="1")
    pod = pod.pod_affinity(HOST, WEB, anti=True).spread(1, ZONE, selector=WEB)
    return cluster_of(nodes, pods), pod.obj()


def min_domains() -> tuple[ClusterState, Pod]:
    """minDomains 3 over two zones: the global minimum is 0, so each zone holds maxSkew."""
    nodes = [make_node("a1").zone("a"), make_node("b1").zone("b")]
    pod = make_pod("web").labels(app="web").req(cpu="1").spread(2, ZONE, selector=WEB, minDomains=3)
    return cluster_of(nodes), pod.obj()


def tainted_zone() -> tuple[ClusterState, Pod]:
    """A tainted zone still counts (nodeTaintsPolicy Ignore): its 0 pins the minimum."""
    nodes = [
        make_node("a1").zone("a"),
        make_node("b1").zone("b"),
        make_node("c1").zone("c").taint("gpu"),
    ]
    pod = make_pod("web").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB)
    return cluster_of(nodes), pod.obj()


def tainted_zone_honored() -> tuple[ClusterState, Pod]:
    """nodeTaintsPolicy Honor leaves the tainted zone out: only resources bind."""
    cluster, _ = tainted_zone()
    pod = (
        make_pod("web").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor")
    )
    return cluster, pod.obj()


def node_selector_ignored() -> tuple[ClusterState, Pod]:
    """A pod held to zone a by its nodeSelector; nodeAffinityPolicy Ignore counts zone b
    (empty) anyway, so zone a holds maxSkew."""
    nodes = [make_node("a1").zone("a"), make_node("a2").zone("a"), make_node("b1").zone("b")]
    pod = make_pod("web").labels(app="web").req(cpu="1").node_selector(**{ZONE: "a"})
    pod = pod.spread(2, ZONE, selector=WEB, nodeAffinityPolicy="Ignore")
    return cluster_of(nodes), pod.obj()


def affinity_to_existing() -> tuple[ClusterState, Pod]:
    """Required zone affinity to a db pod in zone a: only zone a's nodes take web."""
    nodes = [
        make_node("a1").zone("a").capacity(cpu="2"),
        make_node("a2").zone("a").capacity(cpu="1"),
        make_node("b1").zone("b").capacity(cpu="3"),
    ]
    pods = [make_pod("db").labels(app="db").node("a2")]
    pod = make_pod("web").labels(app="web").req(cpu="1").pod_affinity(ZONE, {"matchLabels": {"app": "db"}})
    return cluster_of(nodes, pods), pod.obj()


def self_affinity() -> tuple[ClusterState, Pod]:
    """Web's zone affinity to web itself and nothing running: the first pod may go anywhere;
    in the final state every zone holding web holds two, so zone c's lone slot stays empty
    (kube's first-pod rule applies only while no web pod exists)."""
    nodes = [
        make_node("a1").zone("a").capacity(cpu="2"),
        make_node("b1").zone("b").capacity(cpu="3"),
        make_node("c1").zone("c").capacity(cpu="1"),
    ]
    pod = make_pod("web").labels(app="web").req(cpu="1").pod_affinity(ZONE, WEB)
    return cluster_of(nodes), pod.obj()


def self_affinity_and_spread() -> tuple[ClusterState, Pod]:
    """Hostname affinity to itself with a hostname spread of maxSkew 1: pairs per node."""
    nodes = [make_node(f"n{i}").zone("a").capacity(cpu="3") for i in range(3)]
    pod = make_pod("web").labels(app="web").req(cpu="1").pod_affinity(HOST, WEB).spread(1, HOST, selector=WEB)
    return cluster_of(nodes), pod.obj()


CASES: dict[str, Callable[[], tuple[ClusterState, Pod]]] = {
    "affinity to an existing pod": affinity_to_existing,
    "affinity to itself": self_affinity,
    "affinity to itself and hostname spread": self_affinity_and_spread,
    "tainted zone honored": tainted_zone_honored,
    "nodeAffinityPolicy Ignore": node_selector_ignored,
    "two spreads": two_spreads,
    "anti-affinity and existing pods": anti_and_existing,
    "minDomains": min_domains,
    "tainted zone": tainted_zone,
}


def brute_force(cluster: ClusterState, template: Pod, profile: Profile, per_node: int) -> int:
    """The largest number of new pods over every vector of 0..per_node pods per node that
    the scheduler's Filter accepts for each pod against all the others."""
    names = [str(n) for n in cluster.node_names]
    best = 0
    for vector in itertools.product(range(per_node + 1), repeat=len(names)):
        total = sum(vector)
        if total <= best:
            continue
        counts = {n: k for n, k in zip(names, vector, strict=True) if k}
        try:
            verify(cluster, template, profile, counts)
        except VerificationError:
            continue
        best = total
    return best


def brute_force_groups(
    cluster: ClusterState, templates: list[Pod], profile: Profile, per_node: int, counts: list[int]
) -> int:
    """:func:`brute_force` for several templates at once: the largest total over every
    vector of 0..per_node pods per (template, node), at most ``counts[i]`` of template i,
    that the Filter accepts pod by pod (largest totals first: the first accepted wins)."""
    names = [str(n) for n in cluster.node_names]
    per_group = [
        [v for v in itertools.product(range(per_node + 1), repeat=len(names)) if sum(v) <= limit]
        for limit in counts
    ]
    states = sorted(itertools.product(*per_group), key=lambda s: -sum(sum(v) for v in s))
    for state in states:
        total = sum(sum(v) for v in state)
        by_group = [{n: k for n, k in zip(names, v, strict=True) if k} for v in state]
        try:
            verify_groups(cluster, templates, profile, by_group)
        except VerificationError:
            continue
        return total
    return 0
