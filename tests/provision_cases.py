"""Small provisioning questions as manifests (cluster nodes and pods, Deployments, node
templates) and the brute-force answer: every addition vector up to a bound, each judged as
``kubespread schedule`` judges it (the nodes in the cluster, the workloads created, nothing
left pending)."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from kubespread.api.core import Node
from kubespread.api.kinds import KINDS
from kubespread.io.loader import LoadedObject
from kubespread.plan.provision import NodeTemplate, new_nodes, node_template
from kubespread.sim.baseline import settle

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def node(name: str, zone: str, cpu: str = "2", taint: str | None = None, **labels: str) -> dict[str, Any]:
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: zone, **labels}},
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }
    if taint:
        d["spec"]["taints"] = [{"key": taint, "effect": "NoSchedule"}]
    return d


def template(
    name: str, zone: str, cpu: str = "2", cost: float | None = None, taint: str | None = None
) -> dict[str, Any]:
    d = node(name, zone, cpu, taint)
    del d["metadata"]["labels"][HOSTNAME]
    if cost is not None:
        d["metadata"]["annotations"] = {"kubespread.io/cost": str(cost)}
    return d


def pod(name: str, node_name: str, app: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def spread(key: str, max_skew: int = 1, app: str = "web", **more: Any) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
        **more,
    }


def deployment(
    name: str,
    replicas: int,
    cpu: str = "1",
    spreads: list[dict[str, Any]] = (),  # type: ignore[assignment]
    anti: str | None = None,
    tolerate: str | None = None,
    selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    if spreads:
        spec["topologySpreadConstraints"] = list(spreads)
    if anti:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": anti, "labelSelector": {"matchLabels": {"app": name}}}
                ]
            }
        }
    if tolerate:
        spec["tolerations"] = [{"key": tolerate, "operator": "Exists"}]
    if selector:
        spec["nodeSelector"] = dict(selector)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


@dataclass
class Case:
    """The cluster and workload manifests, in order, and the node templates."""

    objects: list[dict[str, Any]]
    templates: list[dict[str, Any]]

    def loaded(self) -> tuple[LoadedObject, ...]:
        return tuple(LoadedObject(KINDS[d["kind"]].from_dict(d), "case") for d in self.objects)

    def node_templates(self) -> tuple[NodeTemplate, ...]:
        return tuple(node_template(LoadedObject(Node.from_dict(d), "template")) for d in self.templates)


def judged(case: Case, vector: tuple[int, ...]) -> int:
    """Pods pending when ``schedule`` runs the case with the vector's nodes in the cluster."""
    templates = case.node_templates()
    taken = {d["metadata"]["name"] for d in case.objects if d["kind"] == "Node"}
    nodes: list[LoadedObject] = []
    for t, k in zip(templates, vector, strict=True):
        made = new_nodes(t, k, taken)
        taken |= {n.metadata.name for n in made}
        nodes += [LoadedObject(n, "added") for n in made]
    objects = list(case.loaded())
    existing = [lo for lo in objects if lo.obj.kind in ("Node", "Pod")]
    rest = [lo for lo in objects if lo.obj.kind not in ("Node", "Pod")]
    baseline = settle([*existing, *nodes, *rest])
    cluster = baseline.cluster
    return sum(1 for p in cluster.unbound_pods.values() if not p.is_terminating)


def brute_force(case: Case, bound: int) -> tuple[int, float] | None:
    """The fewest nodes (then the least cost) of any vector up to ``bound`` per template that
    leaves nothing pending; None when none does."""
    templates = case.node_templates()
    best: tuple[int, float] | None = None
    vectors = sorted(itertools.product(range(bound + 1), repeat=len(templates)), key=sum)
    for vector in vectors:
        total = sum(vector)
        if best is not None and total > best[0]:
            break
        if judged(case, vector) == 0:
            cost = sum(t.cost * k for t, k in zip(templates, vector, strict=True))
            if best is None or cost < best[1]:
                best = (total, cost)
    return best


def random_case(seed: int) -> Case:
    """A small random question: 2-3 zones, 1-3 nodes, maybe existing pods, one or two
    Deployments with zone/hostname spread (minDomains sometimes) or hostname anti-affinity,
    2-3 templates (a zone the cluster lacks sometimes, a tainted one sometimes)."""
    rnd = random.Random(seed)
    zones = ["a", "b", "c"][: rnd.randint(2, 3)]
    objects: list[dict[str, Any]] = []
    nodes = []
    for i in range(rnd.randint(1, 3)):
        zone = rnd.choice(zones[:2])
        name = f"n{i}"
        nodes.append(name)
        objects.append(node(name, zone, cpu=rnd.choice(["1", "2", "3"])))
    for j in range(rnd.randint(0, 2)):
        objects.append(pod(f"old{j}", rnd.choice(nodes), "web"))
    kinds = ["zone", "hostname", "anti", "zone+hostname", "minDomains"]
    for name in ["web", "api"][: rnd.randint(1, 2)]:
        kind = rnd.choice(kinds)
        replicas = rnd.randint(2, 7)
        if kind == "zone":
            d = deployment(name, replicas, spreads=[spread(ZONE, rnd.randint(1, 2), app=name)])
        elif kind == "hostname":
            d = deployment(name, replicas, spreads=[spread(HOSTNAME, 1, app=name)])
        elif kind == "anti":
            d = deployment(name, replicas, anti=HOSTNAME)
        elif kind == "zone+hostname":
            d = deployment(name, replicas, spreads=[spread(ZONE, 1, app=name), spread(HOSTNAME, 1, app=name)])
        else:
            d = deployment(name, replicas, spreads=[spread(ZONE, 1, app=name, minDomains=3)])
        objects.append(d)
    templates = []
    for k, zone in enumerate(rnd.sample(["a", "b", "c"], rnd.randint(2, 3))):
        taint = "gpu" if rnd.random() < 0.2 else None
        templates.append(
            template(f"t{k}-{zone}", zone, cpu=rnd.choice(["1", "2"]), cost=rnd.choice([1, 2]), taint=taint)
        )
    return Case(objects, templates)
