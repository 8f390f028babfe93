"""sim.baseline: settle is schedule's settling, simulate's cluster settles alike, fork is an
independent copy, trial undoes itself unheard, and explaining a bound pod is a trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubespread.cluster.events import ClusterEvent
from kubespread.io import load
from kubespread.sim.baseline import Baseline, SettleError, settle
from kubespread.sim.placement import explain_key, place
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario
from placement_inputs import node, pod, write


def deployment(name: str, replicas: int, cpu: str = "100m") -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]
                },
            },
        },
    }


def running(baseline: Baseline) -> list[str]:
    return sorted(k for k, p in baseline.cluster.pods.items() if p.spec.node_name)


def placement_of(cluster: Any) -> dict[str, str]:
    return {k: p.spec.node_name for k, p in cluster.pods.items()}


@pytest.fixture
def cluster_file(tmp_path: Path) -> Path:
    """Two nodes, a pending dumped pod, a bound pod and a Deployment of 3 to create."""
    dumped = pod("dumped", {"app": "old"})
    dumped["metadata"]["uid"] = "u-dumped"
    bound = pod("bound", {"app": "old"}, node_name="n1")
    return write(
        tmp_path / "cluster.yaml", [node("n1", "a"), node("n2", "b"), dumped, bound, deployment("web", 3)]
    )


def test_settle_is_what_schedule_settles(cluster_file: Path) -> None:
    baseline = settle(load([str(cluster_file)]), seed=3)
    placed = place(load([str(cluster_file)]), seed=3)
    assert placement_of(baseline.cluster) == placement_of(placed.sim.cluster)
    assert len([k for k in running(baseline) if k.startswith("default/web-")]) == 3
    assert "default/dumped" in running(baseline)  # the dump's pending pod is placed
    assert placed.baseline.sim is placed.sim
    assert baseline.seed == 3 and "default-scheduler" in baseline.profiles


def test_settle_collects_every_problem_before_running(tmp_path: Path) -> None:
    orphan = pod("orphan", {}, node_name="nowhere")
    path = write(tmp_path / "bad.yaml", [node("n1", "a"), orphan])
    with pytest.raises(SettleError) as e:
        settle(load([str(path)]))
    assert "nowhere" in str(e.value)


def test_fork_is_an_independent_copy(cluster_file: Path) -> None:
    baseline = settle(load([str(cluster_file)]))
    copy = baseline.fork()
    assert copy.sim is not baseline.sim and copy.cluster is not baseline.cluster
    assert placement_of(copy.cluster) == placement_of(baseline.cluster)
    assert [e.to_dict() for e in copy.sim.events] == [e.to_dict() for e in baseline.sim.events]
    assert copy.sim.now == baseline.sim.now
    before = placement_of(baseline.cluster)
    copy.sim.delete("Deployment", "default/web")
    copy.sim.advance(120)  # its ReplicaSet and pods go with it, gracefully
    assert not [k for k in copy.cluster.pods if k.startswith("default/web-")]
    assert placement_of(baseline.cluster) == before
    assert baseline.cluster.get("Deployment", "default/web") is not None


def test_a_trial_undoes_itself_and_ordinary_listeners_never_hear(cluster_file: Path) -> None:
    baseline = settle(load([str(cluster_file)]))
    heard: list[ClusterEvent] = []
    baseline.cluster.subscribe(heard.append)
    before = dict(baseline.cluster.pods)
    requested = repr(baseline.cluster.node_info("n1").requested)
    web = next(k for k in running(baseline) if k.startswith("default/web-"))
    with baseline.trial() as cluster:
        cluster.unbind(web)
        cluster.delete_pod("default/bound")
        extra = baseline.cluster.pods[web]
        cluster.add_pod(pod_copy(extra, "extra"))
        cluster.bind("default/extra", "n1")
        assert "default/extra" in cluster.pods
    assert heard == []
    assert dict(baseline.cluster.pods) == before  # the same objects, every one
    assert all(baseline.cluster.pods[k] is p for k, p in before.items())
    assert repr(baseline.cluster.node_info("n1").requested) == requested


def test_a_trial_undoes_itself_on_an_exception(cluster_file: Path) -> None:
    baseline = settle(load([str(cluster_file)]))
    before = placement_of(baseline.cluster)
    with pytest.raises(RuntimeError), baseline.trial() as cluster:
        cluster.delete_pod("default/bound")
        raise RuntimeError
    assert placement_of(baseline.cluster) == before


def pod_copy(template: Any, name: str) -> Any:
    data = template.to_dict()
    data["metadata"] = {
        "name": name,
        "namespace": template.namespace,
        "labels": dict(template.metadata.labels),
    }
    data["spec"]["nodeName"] = ""
    data.pop("status", None)
    return type(template).from_dict(data)


def test_explaining_a_bound_pod_is_heard_by_no_ordinary_listener(cluster_file: Path) -> None:
    """It used to be 4 events (unbound, updated; updated, bound) that the queue and the
    controllers took for real changes."""
    baseline = settle(load([str(cluster_file)]))
    heard: list[ClusterEvent] = []
    baseline.cluster.subscribe(heard.append)
    before = placement_of(baseline.cluster)
    changes = baseline.sim._changes
    explanation = explain_key(baseline.sim, "default/bound")
    assert explanation.to_dict()["pod"]
    assert heard == []
    assert placement_of(baseline.cluster) == before
    assert baseline.sim._changes == changes  # the simulation saw nothing happen


def test_a_deployment_in_a_scenarios_cluster_runs_its_pods(tmp_path: Path) -> None:
    """It used to go into the cluster as it was written, without a uid, and its controller
    could not create a ReplicaSet: 0 pods running a minute later while schedule ran 3."""
    write(tmp_path / "nodes.yaml", [node("n1", "a"), node("n2", "b")])
    write(tmp_path / "web.yaml", [deployment("web", 3)])
    scenario = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "web"},
        "cluster": ["nodes.yaml", "web.yaml"],
        "steps": [{"advance": "60s"}],
    }
    (tmp_path / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    result = simulate(load_scenario(tmp_path / "scenario.yaml"))
    pods = [p for p in result.final.pods if p.node]
    assert len(pods) == 3
    assert {p.owner.name for p in pods if p.owner} == {"web"}
    assert not [e for e in result.events if e.type == "Warning"]
    scheduled = place(load([str(tmp_path / "nodes.yaml"), str(tmp_path / "web.yaml")]))
    assert sorted(p.node for p in pods) == sorted(p.node for p in scheduled.placements)
