"""How kube-scheduler counts a pod's and a node's resources (api/resources.py).

Test names cite the rule they check: resourcehelper.PodRequests (KEP-753 sidecars, pod-level
resources, overhead), calculateResource's non-zero defaults, Resource.Add's rounding.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.api.core import Node, Pod
from kubespread.api.quantity import Quantity
from kubespread.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resources,
    is_scalar_resource_name,
    node_allocatable,
    pod_non_zero_requests,
    pod_requests,
    pod_requests_and_non_zero,
    sum_resources,
)

Mi = 1024 * 1024
Gi = 1024 * Mi


def container(name: str = "c", sidecar: bool = False, **requests: str) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x"}
    if requests:
        c["resources"] = {"requests": {k.replace("_", "-"): v for k, v in requests.items()}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def make_pod(
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]] | None = None,
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
) -> Pod:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    return Pod.from_dict({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})


# --- PodRequests -------------------------------------------------------------------------------


def test_containers_are_summed():
    pod = make_pod([container("a", cpu="250m", memory="1Gi"), container("b", cpu="500m", memory="512Mi")])
    assert pod_requests(pod) == Resources(milli_cpu=750, memory=Gi + 512 * Mi)


def test_no_requests_is_zero():
    assert pod_requests(make_pod([container()])).is_zero()


def test_resource_add_rounds_the_pod_total_up_not_each_container():
    # 3 x 100u CPU = 300u: MilliValue of the sum is 1m; rounding each container would give 3m
    pod = make_pod([container(str(i), cpu="100u") for i in range(3)])
    assert pod_requests(pod).milli_cpu == 1
    # memory in bytes rounds up too: 1.5 bytes → 2
    assert pod_requests(make_pod([container(memory="1500m")])).memory == 2


def test_init_containers_take_the_max_not_the_sum():
    pod = make_pod(
        [container(cpu="100m", memory="100Mi")],
        init=[container("i1", cpu="300m", memory="10Mi"), container("i2", cpu="200m", memory="50Mi")],
    )
    # per resource: cpu max(100, 300, 200) = 300; memory max(100Mi, 10Mi, 50Mi) = 100Mi
    assert pod_requests(pod) == Resources(milli_cpu=300, memory=100 * Mi)


def test_kep753_sidecar_counts_in_steady_state_and_under_later_init_containers():
    # KEP-753: InitUse(i) = sum(sidecars before i) + init i; steady = containers + sidecars
    pod = make_pod(
        [container(cpu="1")],
        init=[
            container("init1", cpu="1"),  # InitUse = 1
            container("sidecar", sidecar=True, cpu="2"),  # InitUse = 2
            container("init2", cpu="3"),  # InitUse = 2 + 3 = 5
        ],
    )
    # max(steady 1 + 2 = 3, max InitUse 5) = 5
    assert pod_requests(pod).milli_cpu == 5000


def test_kep753_sidecar_declared_after_an_init_container_does_not_add_to_it():
    pod = make_pod(
        [container(cpu="1")],
        init=[container("init1", cpu="2500m"), container("sidecar", sidecar=True, cpu="1")],
    )
    # init1 runs alone: 2.5; the sidecar then runs with the app: 1 + 1 = 2
    assert pod_requests(pod).milli_cpu == 2500


def test_kep753_sidecars_accumulate():
    pod = make_pod(
        [container(memory="1Gi")],
        init=[
            container("s1", sidecar=True, memory="1Gi"),
            container("s2", sidecar=True, memory="1Gi"),
            container("init", memory="2Gi"),  # 1 + 1 + 2 = 4Gi while it runs
        ],
    )
    assert pod_requests(pod).memory == 4 * Gi
    steady = make_pod([container(memory="1Gi")], init=[container("s1", sidecar=True, memory="1Gi")] * 3)
    assert pod_requests(steady).memory == 4 * Gi


def test_overhead_is_added_after_the_init_max():
    pod = make_pod(
        [container(cpu="100m")],
        init=[container("i", cpu="1")],
        overhead={"cpu": "250m", "memory": "120Mi"},
    )
    assert pod_requests(pod) == Resources(milli_cpu=1250, memory=120 * Mi)


def test_pod_level_requests_replace_container_totals_for_cpu_and_memory():
    pod = make_pod(
        [container(cpu="100m", memory="1Gi", ephemeral_storage="1Gi")],
        pod_level={"cpu": "2", "example.com/gpu": "1"},
        overhead={"cpu": "10m"},
    )
    # cpu from the pod level (+ overhead); memory still from containers; gpu not pod-level-capable
    assert pod_requests(pod) == Resources(milli_cpu=2010, memory=Gi, ephemeral_storage=Gi)


def test_scalar_resources_extended_and_hugepages_counted_unknown_ignored():
    pod = make_pod(
        [
            container(**{"example.com/gpu": "2", "hugepages-2Mi": "4Mi"}),
            container("b", **{"example.com/gpu": "1", "storage": "1Gi"}),
        ]
    )
    r = pod_requests(pod)
    assert r.scalar == {"example.com/gpu": 3, "hugepages-2Mi": 4 * Mi}
    assert r.get("example.com/gpu") == 3 and r.get("storage") == 0


# --- non-zero requests -----------------------------------------------------------------------


def test_non_zero_default_applies_per_container_that_names_nothing():
    pod = make_pod([container("a"), container("b")])
    nz = pod_non_zero_requests(pod)
    assert (nz.milli_cpu, nz.memory) == (2 * DEFAULT_MILLI_CPU_REQUEST, 2 * DEFAULT_MEMORY_REQUEST)
    assert 200 * Mi == DEFAULT_MEMORY_REQUEST


def test_non_zero_default_only_for_the_missing_resource():
    nz = pod_non_zero_requests(make_pod([container(cpu="1")]))
    assert (nz.milli_cpu, nz.memory) == (1000, 200 * Mi)


def test_non_zero_explicit_zero_request_stays_zero():
    nz = pod_non_zero_requests(make_pod([container(cpu="0", memory="0")]))
    assert (nz.milli_cpu, nz.memory) == (0, 0)


def test_non_zero_default_applies_to_init_containers_before_the_max():
    # app asks 50m; the init container names no cpu so it counts as 100m: max(50, 100) = 100
    pod = make_pod([container(cpu="50m", memory="1Gi")], init=[container("i", memory="1Mi")])
    nz = pod_non_zero_requests(pod)
    assert (nz.milli_cpu, nz.memory) == (100, Gi)
    assert pod_requests(pod).milli_cpu == 50


def test_non_zero_default_applies_to_sidecars_in_the_steady_state():
    pod = make_pod([container(cpu="1", memory="1Gi")], init=[container("s", sidecar=True)])
    nz = pod_non_zero_requests(pod)
    assert (nz.milli_cpu, nz.memory) == (1100, Gi + 200 * Mi)


def test_non_zero_includes_overhead():
    pod = make_pod([container()], overhead={"cpu": "50m", "memory": "10Mi"})
    nz = pod_non_zero_requests(pod)
    assert (nz.milli_cpu, nz.memory) == (150, 210 * Mi)


def test_non_zero_with_pod_level_requests_defaults_only_what_the_pod_misses():
    # pod level names cpu; memory is named by one container: no memory default anywhere
    pod = make_pod([container("a", memory="1Gi"), container("b")], pod_level={"cpu": "1"})
    nz = pod_non_zero_requests(pod)
    assert (nz.milli_cpu, nz.memory) == (1000, Gi)
    # nobody names memory: the default applies per container
    pod = make_pod([container("a"), container("b")], pod_level={"cpu": "1"})
    assert pod_non_zero_requests(pod).memory == 2 * 200 * Mi
    # the scorer's rule (container defaults always) differs in the first case
    pod = make_pod([container("a", memory="1Gi"), container("b")], pod_level={"cpu": "1"})
    assert pod_requests(pod, container_defaults=True).memory == Gi + 200 * Mi


def test_pod_requests_with_container_defaults_is_the_scorers_rule():
    pod = make_pod([container("a", cpu="1"), container("b")])
    assert pod_requests(pod, container_defaults=True) == Resources(milli_cpu=1100, memory=400 * Mi)


# --- Resources, nodes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("cpu", False),
        ("storage", False),
        ("example.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("hugepages-1Gi", True),
        ("attachable-volumes-aws-ebs", True),
        ("kubernetes.io/something", True),
        ("requests.example.com/x", False),
        ("example.com/bad name", False),
        ("a/b/c", False),
    ],
)
def test_is_scalar_resource_name(name: str, scalar: bool):
    assert is_scalar_resource_name(name) is scalar


def test_node_allocatable_counts_pods_and_falls_back_to_capacity():
    node = Node.from_dict(
        {
            "metadata": {"name": "n"},
            "status": {
                "allocatable": {"cpu": "3500m", "memory": "7Gi", "pods": "110", "example.com/gpu": "4"},
                "capacity": {"cpu": "4"},
            },
        }
    )
    assert node_allocatable(node) == Resources(3500, 7 * Gi, 0, 110, {"example.com/gpu": 4})
    only_capacity = Node.from_dict(
        {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "pods": "8"}}}
    )
    assert node_allocatable(only_capacity) == Resources(milli_cpu=4000, allowed_pod_number=8)


def test_resources_arithmetic_and_zero_scalars():
    a = Resources(100, 10, 1, 0, {"x.io/a": 2})
    b = Resources(50, 5, 0, 0, {"x.io/a": 2, "x.io/b": 1})
    assert a + b == Resources(150, 15, 1, 0, {"x.io/a": 4, "x.io/b": 1})
    d = (a + b) - b
    assert d == a and d.scalar == {"x.io/a": 2}
    assert (a - a).scalar == {} and (a - a).is_zero()
    assert Resources(scalar={"x.io/a": 0}) == Resources()
    assert sum_resources([a, b, a]) == a + b + a
    assert a == Resources(100, 10, 1, 0, {"x.io/a": 2})  # unchanged by the operators


def test_resource_list_conversion_rounds_each_amount_up():
    r = Resources.from_resource_list({"cpu": Quantity.parse("1.0005"), "memory": Quantity.parse("0.5")})
    assert (r.milli_cpu, r.memory) == (1001, 1)


# --- the one-pass helper agrees with the general functions --------------------------------------

_cpu = st.sampled_from([None, "0", "100u", "50m", "250m", "1", "1.5"])
_mem = st.sampled_from([None, "0", "1500m", "128Mi", "1Gi", "100M"])


@st.composite
def _containers(draw: st.DrawFn, prefix: str, max_size: int, sidecars: bool) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, max_size))):
        req = {}
        cpu, mem = draw(_cpu), draw(_mem)
        if cpu is not None:
            req["cpu"] = cpu
        if mem is not None:
            req["memory"] = mem
        if draw(st.booleans()):
            req["example.com/gpu"] = draw(st.sampled_from(["0", "1", "2"]))
        out.append(container(f"{prefix}{i}", sidecar=sidecars and draw(st.booleans()), **req))
    return out


@st.composite
def _pods(draw: st.DrawFn) -> Pod:
    overhead = draw(st.sampled_from([None, {"cpu": "10m"}, {"memory": "1Mi", "cpu": "1m"}]))
    pod_level = draw(st.sampled_from([None, None, {"cpu": "2"}, {"memory": "1Gi"}]))
    return make_pod(
        draw(_containers("c", 3, False)) or [container("c")],
        init=draw(_containers("i", 3, True)),
        overhead=overhead,
        pod_level=pod_level,
    )


def _reference_cpu_nanos(pod: Pod, default: int | None) -> int:
    """The KEP-753 formula for one resource, written out directly."""

    def req(c: Any) -> int:
        q = c.resources.requests.get("cpu")
        return q.nanos if q is not None else (default or 0)

    steady = sum(req(c) for c in pod.spec.containers)
    sidecars_before, init_peak = 0, 0
    for c in pod.spec.init_containers:
        if c.is_sidecar:
            sidecars_before += req(c)
            steady += req(c)
            init_peak = max(init_peak, sidecars_before)
        else:
            init_peak = max(init_peak, sidecars_before + req(c))
    return max(steady, init_peak)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_pods())
def test_one_pass_helper_matches_and_cpu_follows_kep753_formula(pod: Pod):
    requests, non_zero = pod_requests_and_non_zero(pod)
    assert requests == pod_requests(pod)
    assert non_zero == pod_non_zero_requests(pod)
    overhead = pod.spec.overhead.get("cpu")
    extra = overhead.nanos if overhead is not None else 0
    pod_level = pod.spec.resources.requests if pod.spec.resources is not None else {}
    if "cpu" not in pod_level:
        expected = _reference_cpu_nanos(pod, None) + extra
        assert requests.milli_cpu == -(-expected // 10**6)
        expected_nz = _reference_cpu_nanos(pod, DEFAULT_MILLI_CPU_REQUEST * 10**6) + extra
        if not pod_level:
            assert non_zero.milli_cpu == -(-expected_nz // 10**6)
