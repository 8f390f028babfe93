"""plan.capacity.capacity: the ``capacity`` command as one function, a CapacityRequest in and
a CapacityAnswer out (or a CapacityError carrying the located message), without the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubespread.io import Manifests, load
from kubespread.io.loader import load_data
from kubespread.plan.capacity import CapacityAnswer, CapacityError, CapacityRequest, capacity
from kubespread.scheduler import default_profile

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"matchLabels": {"app": "web"}}


def node(name: str, zone: str, cpu: str = "3") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod_spec(cpu: str = "1", spread: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "web", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
    }
    if spread:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": WEB}
            for key in (ZONE, HOST)
        ]
    return spec


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": pod_spec() | spec,
    }


def workload(kind: str, name: str, replicas: int, cpu: str, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(cpu, spread=False) | spec},
        },
    }


def objects(*docs: dict[str, Any], source: str = "cluster.yaml") -> Manifests:
    loaded = load_data(list(docs), source)
    assert not loaded.errors, loaded.errors
    return loaded


def three_nodes(*more: dict[str, Any]) -> Manifests:
    return objects(node("n0", "b"), node("n1", "c"), node("n2", "b"), *more)


def request(cluster: Manifests, *template: dict[str, Any], **options: Any) -> CapacityRequest:
    return CapacityRequest(
        cluster=cluster.objects,
        template=objects(*template, source="template.yaml").objects,
        template_file="template.yaml",
        **options,
    )


def test_a_pod_template_gives_both_answers_and_the_documented_json() -> None:
    answer = capacity(request(three_nodes(), pod()))
    assert isinstance(answer, CapacityAnswer)
    assert (answer.template, answer.greedy, answer.maximum, answer.proven) == ("Pod default/web", 5, 7, True)
    assert answer.per_domain == {ZONE: {"b": 4, "c": 3}}
    assert answer.limited_by == (f"topology spread {ZONE} maxSkew 1",)
    assert sum(answer.placement.values()) == 7
    doc = answer.to_dict()
    assert list(doc) == [
        "template",
        "greedy",
        "maximum",
        "proven",
        "limitedBy",
        "perDomain",
        "placement",
        "solveSeconds",
    ]
    assert doc["limitedBy"] == [f"topology spread {ZONE} maxSkew 1"]


def test_a_workload_template_counts_its_running_replicas() -> None:
    running = pod("web-0", nodeName="n1")
    deployment = workload("Deployment", "web", 1, "1") | {}
    deployment["spec"]["selector"] = WEB
    deployment["spec"]["template"] = {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec()}
    answer = capacity(request(three_nodes(running), deployment))
    assert answer.template == "Deployment default/web"
    assert answer.maximum == 6  # 7 in all, one of them already running


def test_the_cluster_files_workloads_run_their_pods_first() -> None:
    """The issue's numbers: 9 nodes of 4 CPU, 33 CPU requested by two Deployments and a
    StatefulSet of the cluster files; a 1-CPU template fits 3 more times, not 36."""
    cluster = objects(
        *(node(f"n{i}", "abc"[i % 3], cpu="4") for i in range(9)),
        workload("Deployment", "big", 9, "3"),
        workload("Deployment", "small", 3, "1"),
        workload("StatefulSet", "db", 3, "1"),
    )
    one = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "one"}, "spec": pod_spec(spread=False)}
    answer = capacity(request(cluster, one, max_count=50))
    assert (answer.greedy, answer.maximum, answer.proven) == (3, 3, True)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ([pod("a"), pod("b")], "template.yaml: TEMPLATE must hold exactly one Pod"),
        ([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}], "TEMPLATE is a Namespace"),
        (
            [pod(schedulerName="other")],
            'the template asks for scheduler "other": give its --scheduler-config',
        ),
    ],
)
def test_a_template_it_cannot_count_is_a_capacity_error(template: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(CapacityError) as e:
        capacity(request(three_nodes(), *template))
    assert message in e.value.message and not e.value.problems


def test_a_profile_the_configuration_lacks_is_named() -> None:
    with pytest.raises(CapacityError, match=r"which --scheduler-config lacks \(default-scheduler\)"):
        capacity(
            request(
                three_nodes(), pod(schedulerName="other"), profiles={"default-scheduler": default_profile()}
            )
        )


def test_a_refused_template_is_a_capacity_error_naming_the_object() -> None:
    deployment = workload("Deployment", "web", 1, "1", priorityClassName="no-such-class")
    with pytest.raises(CapacityError) as e:
        capacity(request(three_nodes(), deployment))
    assert e.value.message.startswith("template.yaml: Deployment default/web: the API server would refuse")
    assert "no PriorityClass with name no-such-class" in e.value.message


def test_a_refused_field_is_located_in_the_template_file(tmp_path: Path) -> None:
    """The line of the refused field under the workload's spec.template, in the file read."""
    spread = {"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": WEB}
    deployment = workload("Deployment", "web", 1, "1", topologySpreadConstraints=[spread])
    path = tmp_path / "deploy.yaml"
    path.write_text(yaml.safe_dump(deployment, sort_keys=False))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "maxSkew: 0" in text)
    req = CapacityRequest(
        cluster=three_nodes().objects, template=load([path]).objects, template_file=str(path)
    )
    with pytest.raises(CapacityError) as e:
        capacity(req)
    assert e.value.message.startswith(f"{path}:{line}: Deployment default/web:"), e.value.message
    assert "maxSkew: Invalid value: 0" in e.value.message


def test_a_cluster_that_does_not_settle_carries_every_problem() -> None:
    with pytest.raises(CapacityError) as e:
        capacity(request(objects(node("n0", "b"), pod("orphan", nodeName="nowhere")), pod()))
    assert e.value.message == "in the cluster files; nothing was counted"
    assert any("nowhere" in p for p in e.value.problems)
