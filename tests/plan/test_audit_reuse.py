"""A failure run that reuses its base's reading (``plan.audit_reuse``: only the workloads the
run may have changed read again) gives the record that reading every workload gives, on
random clusters: zones and hostnames failed, workloads whose selectors match each other's
pods, constraints that honor taints or not, pending pods, budgets."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubespread.io.dump import cluster_objects
from kubespread.io.loader import load_data
from kubespread.plan.audit import AuditInput, _base_facts, build_base, failure_record, failures_of
from kubespread.plan.audit_reuse import Heard
from kubespread.sim.baseline import settle

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(i: int, zone: int, cpu: int, tainted: bool) -> dict[str, Any]:
    name = f"n{i}"
    spec = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]} if tainted else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"z{zone}"}},
        "spec": spec,
        "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "110"}},
    }


def _deployment(
    name: str, tier: str, replicas: int, constraints: list[dict[str, Any]], namespace: str = "default"
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": tier}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "500m"}}}
                    ],
                    "topologySpreadConstraints": constraints,
                },
            },
        },
    }


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    zones = draw(st.integers(1, 3))
    docs = [
        _node(i, draw(st.integers(0, zones - 1)), draw(st.integers(1, 3)), draw(st.booleans()))
        for i in range(draw(st.integers(2, 8)))
    ]
    for j in range(draw(st.integers(1, 5))):
        name = f"w{j}"
        # tier is shared by some workloads: a selector on it counts another workload's pods
        tier = f"t{draw(st.integers(0, 1))}"
        pairs = draw(
            st.lists(
                st.sampled_from([(k, w) for k in (ZONE, HOST) for w in ("DoNotSchedule", "ScheduleAnyway")]),
                max_size=2,
                unique=True,
            )
        )
        constraints = [
            {
                "maxSkew": draw(st.integers(1, 2)),
                "topologyKey": key,
                "whenUnsatisfiable": when,
                "nodeTaintsPolicy": draw(st.sampled_from(["Honor", "Ignore"])),
                "labelSelector": {"matchLabels": draw(st.sampled_from([{"app": name}, {"tier": tier}]))},
            }
            for key, when in pairs
        ]
        namespace = draw(st.sampled_from(["default", "other"]))
        docs.append(_deployment(name, tier, draw(st.integers(1, 6)), constraints, namespace))
        if draw(st.booleans()):
            docs.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"{name}-pdb", "namespace": namespace},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": name}}},
                }
            )
    return docs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.sampled_from([120.0, 600.0]))
def test_a_run_that_reuses_the_bases_reading_gives_the_record_read_whole(
    docs: list[dict[str, Any]], after: float
) -> None:
    manifests = load_data(docs, "<test>")
    assert not manifests.errors, manifests.errors
    baseline = settle(manifests.objects)
    inp = AuditInput(tuple(cluster_objects(baseline.sim.cluster)))
    for failure in failures_of(baseline.sim, [ZONE, HOST]):
        base = _base_facts(build_base(inp))
        reused = failure_record(
            base.sim, failure, after, before=base.before, owners=base.owners, reading=base.reading
        )
        whole = failure_record(build_base(inp), failure, after)
        assert reused == whole, failure.name


def test_heard_notes_every_version_of_a_pod_and_a_relabelled_node() -> None:
    """The listener a reusing run reads: a pod's versions before and after, and a node whose
    labels change reshapes the cluster (every workload is read again)."""
    docs = [_node(0, 0, 2, False), _node(1, 1, 2, False)]
    baseline = settle(load_data(docs, "<test>").objects)
    sim = build_base(AuditInput(tuple(cluster_objects(baseline.sim.cluster))))
    heard = Heard(sim.cluster)
    node = sim.cluster.nodes["n0"]
    tainted = type(node).from_dict({**node.to_dict(), "spec": {"unschedulable": True}})
    sim.cluster.update_node(tainted)
    assert heard.nodes == {"n0"} and not heard.reshaped
    relabelled = node.to_dict()
    relabelled["metadata"]["labels"][ZONE] = "elsewhere"
    sim.cluster.update_node(type(node).from_dict(relabelled))
    heard.stop()
    assert heard.reshaped


def test_a_one_node_failure_reads_again_only_what_it_may_have_changed(monkeypatch: Any) -> None:
    """On the bundled snapshot (30 nodes, 18 workloads), failing one node reads again the pods
    of the workloads it ran (and those pending), not every pod."""
    from pathlib import Path

    from kubespread.io.loader import load
    from kubespread.plan import audit_reuse

    m = load([str(Path(__file__).resolve().parents[2] / "examples" / "snapshot" / "cluster.yaml")])
    baseline = settle(m.objects)
    inp = AuditInput(tuple(cluster_objects(baseline.sim.cluster)))
    base = _base_facts(build_base(inp))
    read: list[list[str]] = []
    real = audit_reuse.read_pods

    def spy(sim: Any, keys: list[str], *args: Any) -> Any:
        read.append(list(keys))
        return real(sim, keys, *args)

    monkeypatch.setattr(audit_reuse, "read_pods", spy)
    failure = next(f for f in failures_of(base.sim, [HOST]) if base.sim.cluster.pods_on_node(f.nodes[0]))
    pods = len(base.sim.cluster.pods)
    failure_record(base.sim, failure, 600.0, before=base.before, owners=base.owners, reading=base.reading)
    assert len(read) == 1
    assert 0 < len(read[0]) < pods / 2


def test_a_workload_counting_another_workloads_pods_is_counted_again() -> None:
    """w0's constraint counts every tier=t0 pod, w1's too: failing a node that runs only w1's
    pods changes w0's skew, and the reusing run counts it again."""
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}
    docs = [
        _node(0, 0, 1, False),
        _node(1, 1, 3, False),
        _node(2, 2, 3, False),
        _deployment("w0", "t0", 1, [{**spread, "labelSelector": {"matchLabels": {"tier": "t0"}}}]),
        _deployment("w1", "t0", 4, []),
    ]
    baseline = settle(load_data(docs, "<test>").objects)
    inp = AuditInput(tuple(cluster_objects(baseline.sim.cluster)))
    w0 = next(
        p.spec.node_name for p in baseline.sim.cluster.pods.values() if p.metadata.labels["app"] == "w0"
    )
    changed = 0
    for failure in failures_of(baseline.sim, [ZONE, HOST]):
        base = _base_facts(build_base(inp))
        before = base.reading.skews["default/Deployment/w0"]
        reused = failure_record(
            base.sim, failure, 600.0, before=base.before, owners=base.owners, reading=base.reading
        )
        assert reused == failure_record(build_base(inp), failure, 600.0), failure.name
        changed += w0 not in failure.nodes and reused.workloads[0].skew != before
    assert changed  # the case this test is for happened
