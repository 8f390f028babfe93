"""The CP-SAT placement model: its optimum equals the brute-force one, and every
arrangement it returns passes the scheduler's Filter."""

from __future__ import annotations

import random

import pytest

from builders import cluster_of, make_node, make_pod
from capacity_cases import CASES, HOST, WEB, ZONE, brute_force
from kubespread.api.core import Pod, Service
from kubespread.cluster.state import ClusterState
from kubespread.scheduler import default_profile
from kubespread.solve import VerificationError, build_model, solve, verify


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimum_matches_brute_force_and_passes_the_filter(name: str) -> None:
    cluster, template = CASES[name]()
    profile = default_profile()
    placement = solve(build_model(cluster, template, profile, 20), time_limit=5)
    assert placement.proven
    verify(cluster, template, profile, placement.counts)  # raises on a mismatch
    per_node = 4 if len(cluster.nodes) <= 3 else 2  # 5^5 final states would take seconds
    assert placement.placed == brute_force(cluster, template, profile, per_node=per_node)


def test_identical_replicas_are_one_integer_per_feasible_node() -> None:
    cluster, template = CASES["anti-affinity and existing pods"]()
    model = build_model(cluster, template, default_profile(), 10)
    # a1 holds a replica (anti-affinity), b2 runs a pod that repels web; b1 is too small:
    # in the model with no room (relaxing resources may use it), for cpu
    slots = {n.name: (n.capacity, n.limited_by) for n in model.groups[0].nodes}
    assert slots == {"a2": (2, ("cpu",)), "b1": (0, ("cpu",)), "c1": (2, ("cpu",))}
    assert model.groups[0].anti_keys == [HOST]
    assert [s.topology_key for s in model.groups[0].spreads] == [ZONE]


def test_resources_cap_each_node() -> None:
    cluster = cluster_of([make_node("a").capacity(cpu="2500m", pods="2"), make_node("b").capacity(cpu="3")])
    template = make_pod("web").labels(app="web").req(cpu="1").obj()
    model = build_model(cluster, template, default_profile(), 10)
    caps = {n.name: (n.capacity, n.limited_by) for n in model.groups[0].nodes}
    assert caps == {"a": (2, ("cpu", "pods")), "b": (3, ("cpu",))}
    assert solve(model).placed == 5


def test_the_filter_rejects_an_arrangement_that_breaks_spread() -> None:
    cluster = cluster_of([make_node("a1").zone("a"), make_node("b1").zone("b")])
    template = make_pod("web").labels(app="web").spread(1, ZONE, selector=WEB).obj()
    with pytest.raises(VerificationError, match="PodTopologySpread"):
        verify(cluster, template, default_profile(), {"a1": 3})
    assert not cluster.pods  # the hypothetical pods are gone again


def test_required_pod_affinity_is_modelled_with_the_first_pod_rule() -> None:
    """Zone affinity to itself: 5 fit (a: 2, b: 3); zone c's single slot would hold a web
    pod alone in its zone. On a cluster of one-slot zones only the first pod fits."""
    cluster, template = CASES["affinity to itself"]()
    placement = solve(build_model(cluster, template, default_profile(), 10))
    assert placement.counts == {"a1": 2, "b1": 3} and placement.proven
    lonely = cluster_of([make_node(f"{z}1").zone(z).capacity(cpu="1") for z in "abc"])
    assert solve(build_model(lonely, template, default_profile(), 10)).placed == 1


def random_instance(seed: int) -> tuple[ClusterState, Pod]:
    """Three nodes over two or three zones with 1-3 CPUs, maybe an existing replica, and a
    template with some of: zone spread (maxSkew 1-2, maybe minDomains), hostname spread,
    hostname anti-affinity."""
    rng = random.Random(seed)
    nodes = [
        make_node(f"n{i}").zone(rng.choice("abc")).capacity(cpu=str(rng.randint(1, 3))) for i in range(3)
    ]
    pods = [make_pod("old").labels(app="web").req(cpu="1").node("n0")] if rng.random() < 0.4 else []
    pod = make_pod("web").labels(app="web").req(cpu="1")
    if rng.random() < 0.8:
        extra = {"minDomains": 3} if rng.random() < 0.3 else {}
        pod = pod.spread(rng.randint(1, 2), ZONE, selector=WEB, **extra)
    if rng.random() < 0.4:
        pod = pod.spread(1, HOST, selector=WEB)
    if rng.random() < 0.2:
        pod = pod.pod_affinity(HOST, WEB, anti=True)
    return cluster_of(nodes, pods), pod.obj()


@pytest.mark.parametrize("seed", range(12))
def test_random_small_instances_match_brute_force(seed: int) -> None:
    cluster, template = random_instance(seed)
    profile = default_profile()
    placement = solve(build_model(cluster, template, profile, 20), time_limit=5)
    assert placement.proven
    verify(cluster, template, profile, placement.counts)
    assert placement.placed == brute_force(cluster, template, profile, per_node=3)


def test_default_constraints_are_modelled_in_their_final_state() -> None:
    """A List-defaulted hostname constraint (DoNotSchedule) spreads a pod a Service selects.
    n0 already runs one: judged as the cluster is, it is over the skew, yet once n1 and n2
    have theirs it takes a second one: 2+2+1, not 2+2."""
    hostname = {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule"}
    profile = default_profile(
        {"PodTopologySpread": {"defaultingType": "List", "defaultConstraints": [hostname]}}
    )
    service = Service.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}},
        }
    )
    nodes = [make_node(f"n{i}").capacity(cpu="2") for i in range(3)]
    cluster = cluster_of(
        nodes, [make_pod("old").labels(app="web").req(cpu="1").node("n0")], objects=[service]
    )
    template = make_pod("web").labels(app="web").req(cpu="1").obj()
    model = build_model(cluster, template, profile, 10)
    assert [(s.topology_key, s.max_skew) for s in model.groups[0].spreads] == [(HOST, 1)]
    placement = solve(model)
    verify(cluster, template, profile, placement.counts)
    assert placement.placed == 5 == brute_force(cluster, template, profile, per_node=2)
