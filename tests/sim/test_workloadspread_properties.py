"""WorkloadSpread invariants over random histories (Hypothesis): a workload (Deployment,
ReplicaSet or CloneSet) under a WorkloadSpread is scaled, and its pods deleted or evicted, at
random; after every step, once the cluster is quiet:

- no bounded subset holds more active pods than its maxReplicas (the last subset is unbounded
  and has room, so there is always somewhere else to go);
- each subset's status has ``replicas`` = its active pods and ``missingReplicas`` =
  maxReplicas - active pods (never below 0; -1 unbounded), with no creatingPods left over.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubespread.api.kinds import class_for
from kubespread.api.kruise import WorkloadSpread
from kubespread.cluster.state import ClusterState
from kubespread.controllers.pods import is_active
from kubespread.controllers.workloadspread import matched_subset
from kubespread.controllers.workloadspread.subsets import subset_max, workload_of, workload_replicas
from kubespread.sim.engine import Simulation

pytestmark = pytest.mark.slow

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
ZONES = ("zone-a", "zone-b", "zone-c")


def manifest(d: dict[str, Any]) -> Any:
    return class_for(d["apiVersion"], d["kind"]).from_dict(d)


def cluster() -> ClusterState:
    c = ClusterState()
    for zone in ZONES:
        for i in (1, 2):
            name = f"{zone[-1]}{i}"
            c.add(
                manifest(
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
                        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "50"}},
                    }
                )
            )
    return c


WORKLOADS = {
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "CloneSet": "apps.kruise.io/v1alpha1",
}


def workload(kind: str, replicas: int) -> Any:
    return manifest(
        {
            "apiVersion": WORKLOADS[kind],
            "kind": kind,
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}
                        ]
                    },
                },
            },
        }
    )


def spread(kind: str, bounds: list[int]) -> WorkloadSpread:
    subsets = [
        {
            "name": f"s{i}",
            "requiredNodeSelectorTerm": {
                "matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]
            },
            **({"maxReplicas": bounds[i]} if i < len(bounds) else {}),
        }
        for i, zone in enumerate(ZONES[: len(bounds) + 1])
    ]
    return manifest(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": WORKLOADS[kind], "kind": kind, "name": "web"},
                "subsets": subsets,
            },
        }
    )


def check(sim: Simulation) -> None:
    ws = sim.cluster.get(WorkloadSpread.KIND, "default/ws")
    assert isinstance(ws, WorkloadSpread)
    replicas = workload_replicas(workload_of(ws, sim.cluster.get))
    active: dict[str, int] = {s.name: 0 for s in ws.spec.subsets}
    for pod in sim.cluster.pods.values():
        m = matched_subset(pod)
        if m is not None and is_active(pod):
            active[m.subset] += 1
    status = {s.name: s for s in ws.status.subset_statuses}
    for subset in ws.spec.subsets:
        bound = subset_max(subset, replicas)
        st_ = status[subset.name]
        assert st_.replicas == active[subset.name], (subset.name, st_, active)
        assert not st_.creating_pods
        if bound is None:
            assert st_.missing_replicas == -1
            continue
        assert active[subset.name] <= bound, (subset.name, active, bound)
        assert st_.missing_replicas == max(bound - active[subset.name], 0), (subset.name, st_, active)
    # every active pod of the workload is in a subset (the last one is unbounded)
    assert sum(active.values()) == sum(1 for p in sim.cluster.pods.values() if is_active(p))


def scale(sim: Simulation, kind: str, replicas: int) -> None:
    obj = sim.cluster.get(kind, "default/web")
    assert obj is not None
    updated = obj.copy()
    updated.spec.replicas = replicas  # type: ignore[attr-defined]
    sim.update(updated)


OPS = st.one_of(
    st.tuples(st.just("scale"), st.integers(0, 14)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("evict"), st.integers(0, 50)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(sorted(WORKLOADS)),
    bounds=st.lists(st.integers(0, 5), min_size=1, max_size=2),
    replicas=st.integers(0, 10),
    ops=st.lists(OPS, max_size=6),
    seed=st.integers(0, 3),
)
def test_bounded_subsets_never_overflow_and_status_matches_pods(
    kind: str, bounds: list[int], replicas: int, ops: list[tuple[str, int]], seed: int
) -> None:
    sim = Simulation(cluster(), seed=seed)
    sim.create(spread(kind, bounds))
    sim.create(workload(kind, replicas))
    sim.run_until_quiet()
    check(sim)
    for op, arg in ops:
        if op == "scale":
            scale(sim, kind, arg)
        else:
            live = sorted(k for k, p in sim.cluster.pods.items() if is_active(p))
            if not live:
                continue
            key = live[arg % len(live)]
            if op == "delete":
                sim.delete_pod(key)
            else:
                sim.evict(key, reason="Evicted", message="test eviction")
        sim.run_until_quiet()
        check(sim)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    percents=st.lists(st.integers(0, 50), min_size=1, max_size=2),
    sizes=st.lists(st.integers(0, 14), min_size=1, max_size=4),
)
def test_percent_bounds_status_tracks_the_workload_replicas(percents: list[int], sizes: list[int]) -> None:
    """Percentages of a Deployment scaled up and down: missingReplicas always follows the bound
    for the current replicas (a scale-down can leave a subset over its new, smaller bound:
    pods are not recreated, only ranked, as the proposal's Caution says)."""
    sim = Simulation(cluster())
    ws = spread("Deployment", [0] * len(percents))
    for subset, p in zip(ws.spec.subsets, percents, strict=False):
        subset.max_replicas = f"{p}%"
    sim.create(ws)
    sim.create(workload("Deployment", 0))
    for size in sizes:
        scale(sim, "Deployment", size)
        sim.run_until_quiet()
        current = sim.cluster.get(WorkloadSpread.KIND, "default/ws")
        assert isinstance(current, WorkloadSpread)
        active: dict[str, int] = {}
        for pod in sim.cluster.pods.values():
            m = matched_subset(pod)
            if m is not None and is_active(pod):
                active[m.subset] = active.get(m.subset, 0) + 1
        for subset, status in zip(current.spec.subsets, current.status.subset_statuses, strict=True):
            bound = subset_max(subset, size)
            expected = -1 if bound is None else max(bound - active.get(subset.name, 0), 0)
            assert status.missing_replicas == expected
            if bound is not None and sizes[0] == size and size == max(sizes[: sizes.index(size) + 1]):
                assert active.get(subset.name, 0) <= bound  # growing: never over the bound
