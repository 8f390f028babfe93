#!/usr/bin/env python3
"""``kubespread provision`` on generated clusters: plan + replay time, nodes, proof or gap.

A seeded generator writes a cluster of N nodes over three zones (4 CPU each, other apps'
pods already bound using 3.2 to 3.6 CPU of each, so no new replica fits), 20 pending
Deployments of 50 replicas (1 CPU, 1Gi) each with two DoNotSchedule spread constraints,
maxSkew 1: by zone and by hostname, and 5 node templates: ``m5`` (4 CPU, cost 1) in each
zone, ``c5`` (8 CPU, cost 1.9) in zone a, and ``spot`` (4 CPU, cost 0.3) in zone b,
tainted so that no replica tolerates it. The hostname spread counts every node (its
global minimum is 0 on the full existing nodes), so a new node holds at most one replica of
each Deployment: the answer is how many new nodes, in which zones, of which template.

For each size the script runs the plan in this process (``plan.provision.provision`` on the
generated objects, settling included) and prints: nodes, pods pending before, nodes added,
cost, proven (or the lower bound: the gap), replays, the solver's seconds, plan + replay wall
seconds, and the machine's load average. Sizes: 1,000 nodes (the issue's budget: 30 s) and
5,000 nodes (2 min).

    .venv/bin/python benchmarks/provision.py                  # 1000 and 5000 nodes
    .venv/bin/python benchmarks/provision.py --nodes 60 --deployments 4 --replicas 10
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from kubespread.api.kinds import KINDS
from kubespread.io.loader import LoadedObject
from kubespread.plan.nodegroups import node_template
from kubespread.plan.provision import ProvisionRequest, provision

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
ITYPE = "node.kubernetes.io/instance-type"
ZONES = ("a", "b", "c")

console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def _node(
    name: str, zone: str, cpu: int, itype: str, cost: float | None = None, taint: str = ""
) -> dict[str, Any]:
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone, ITYPE: itype}},
        "spec": {},
        "status": {"allocatable": {"cpu": str(cpu), "memory": f"{4 * cpu}Gi", "pods": "110"}},
    }
    if cost is not None:
        d["metadata"]["annotations"] = {"kubespread.io/cost": str(cost)}
    if taint:
        d["spec"]["taints"] = [{"key": taint, "value": "true", "effect": "NoSchedule"}]
    return d


def generate(
    nodes: int, deployments: int = 20, replicas: int = 50, seed: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The cluster and workload manifests (in order) and the 5 node templates."""
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:05d}"
        objects.append(_node(name, ZONES[i % 3], 4, "m5"))
        used = rng.choice((3200, 3500, 3600))
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"other-{i:05d}", "namespace": "default", "labels": {"app": "other"}},
                "spec": {
                    "nodeName": name,
                    "containers": [
                        {
                            "name": "c",
                            "image": "other",
                            "resources": {"requests": {"cpu": f"{used}m", "memory": "1Gi"}},
                        }
                    ],
                },
                "status": {"phase": "Running"},
            }
        )
    for d in range(deployments):
        app = f"app-{d:02d}"
        selector = {"matchLabels": {"app": app}}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app, "namespace": "default"},
                "spec": {
                    "replicas": replicas,
                    "selector": selector,
                    "template": {
                        "metadata": {"labels": {"app": app}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": app,
                                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                                }
                            ],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": key,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": selector,
                                }
                                for key in (ZONE, HOST)
                            ],
                        },
                    },
                },
            }
        )
    templates = [_node(f"m5-{z}", z, 4, "m5", 1) for z in ZONES]
    templates.append(_node("c5-a", "a", 8, "c5", 1.9))
    templates.append(_node("spot-b", "b", 4, "m5", 0.3, taint="spot"))
    for t in templates:
        del t["metadata"]["labels"][HOST]
    return objects, templates


def run(
    nodes: int, deployments: int, replicas: int, max_per_template: int, time_limit: float
) -> dict[str, Any]:
    objects, templates = generate(nodes, deployments, replicas)
    loaded = tuple(LoadedObject(KINDS[d["kind"]].from_dict(d), "bench") for d in objects)
    node_templates = tuple(
        node_template(LoadedObject(KINDS["Node"].from_dict(t), "bench")) for t in templates
    )
    request = ProvisionRequest(
        loaded, node_templates, max_per_template=max_per_template, time_limit=time_limit
    )
    load = os.getloadavg()[0]
    started = time.perf_counter()
    result = provision(request)
    wall = time.perf_counter() - started
    return {
        "nodes": nodes,
        "pending": len(result.pending_before),
        "added": result.nodes,
        "cost": result.cost,
        "by": ", ".join(f"{a.template} {a.count}" for a in result.additions),
        "proven": result.proven,
        "bound": result.lower_bound,
        "replays": result.replays,
        "left": len(result.pending_after),
        "solve": result.seconds,
        "wall": wall,
        "load": load,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--nodes", type=int, action="append", help="cluster size (repeatable; default 1000, 5000)"
    )
    parser.add_argument("--deployments", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=50)
    parser.add_argument("--max-per-template", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args(argv)
    table = Table(title=f"kubespread provision ({os.cpu_count()} cores)")
    for column in (
        "nodes",
        "pending",
        "added",
        "by template",
        "cost",
        "proven",
        "replays",
        "left pending",
        "solve s",
        "plan+replay s",
        "load",
    ):
        table.add_column(column, justify="left" if column == "by template" else "right")
    for n in args.nodes or [1000, 5000]:
        r = run(n, args.deployments, args.replicas, args.max_per_template, args.time_limit)
        proven = "yes" if r["proven"] else f"no (>= {r['bound']})"
        table.add_row(
            str(r["nodes"]),
            str(r["pending"]),
            str(r["added"]),
            r["by"],
            f"{r['cost']:g}",
            proven,
            str(r["replays"]),
            str(r["left"]),
            f"{r['solve']:.2f}",
            f"{r['wall']:.2f}",
            f"{r['load']:.2f}",
        )
        console.print(table) if n == (args.nodes or [1000, 5000])[-1] else None
    return 0


if __name__ == "__main__":
    sys.exit(main())
