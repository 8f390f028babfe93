#!/usr/bin/env python3
"""``kubespread capacity`` on generated clusters where the scheduler strands replicas.

A seeded generator writes a cluster (nodes over three zones with uneven CPU and memory
allocatable; other apps' pods already bound, using up to half of each node) and a template
pod (1 CPU, 2Gi) held by its nodeSelector to the ``bench`` pool, half the nodes, where zone
``c`` has half as many nodes as ``a`` and ``b``. It has two DoNotSchedule topology spread
constraints, maxSkew 1 each: by zone and by hostname. Every node holds at least two replicas.
(The pool keeps the better arrangement, every pool node at 1 or 2, under ``--max`` = nodes.)

Why greedy strands pods: the zone spread makes the scheduler keep the three zones within
one replica of each other at every step, so zone ``c`` gets its second round of replicas
while most nodes of ``a`` and ``b`` still have none; the hostname spread then forbids a
second replica on any node of ``c`` (2 against a global minimum of 0). Zone ``c`` stops at
one replica per node and the others at one more: about 3 x |c| + 2. The final state the
solver finds has every node at 1 or 2 replicas, about twice as many (or ``--max``).

For each instance the script runs ``kubespread capacity -o json`` in a fresh process
``--runs`` times and prints: instance, nodes, greedy placed, optimal placed, proven, the
solver's seconds and the command's wall seconds (medians). Instances: 100 nodes x 100 new
pods, 1,000 x 1,000, and a 5,000-node capacity at the command's default ``--max`` 1,000
(there greedy reaches the bound too: zone ``c`` of the pool has 500 nodes).

    .venv/bin/python benchmarks/capacity.py                # all three, median of 3
    .venv/bin/python benchmarks/capacity.py --runs 1 --only 100x100
    .venv/bin/python benchmarks/capacity.py --nodes 20 --max 20 --runs 1   # one custom size
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ZONE = "topology.kubernetes.io/zone"
POOL = "example.com/pool"
HOST = "kubernetes.io/hostname"
APP = "bench"
#: zone a : b : c node counts
ZONE_WEIGHTS = (("a", 2), ("b", 2), ("c", 1))
CPUS = (4, 6, 8, 16)
MEMORY_GI = (8, 12, 16, 32, 64)
TEMPLATE_CPU_M = 1000
TEMPLATE_MEM_GI = 2

console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)


@dataclass(frozen=True)
class Instance:
    name: str
    nodes: int
    max_count: int


INSTANCES = (
    Instance("100x100", 100, 100),
    Instance("1000x1000", 1_000, 1_000),
    Instance("capacity-5000", 5_000, 1_000),
)


def _zones(n: int) -> list[str]:
    total = sum(w for _, w in ZONE_WEIGHTS)
    out: list[str] = []
    for zone, w in ZONE_WEIGHTS:
        out += [zone] * (n * w // total)
    out += ["a"] * (n - len(out))
    return out


def generate(nodes: int, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cluster (a v1 List of Nodes and bound Pods) and the template Pod."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    pool = nodes // 2
    zones = _zones(pool) + [ZONE_WEIGHTS[i % 3][0] for i in range(nodes - pool)]
    for i, zone in enumerate(zones):
        name = f"node-{i:05d}"
        cpu, mem = rng.choice(CPUS), rng.choice(MEMORY_GI)
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {HOST: name, ZONE: zone, POOL: "bench" if i < pool else "general"},
                },
                "status": {
                    "allocatable": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"},
                    "capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"},
                },
            }
        )
        # other apps use up to half of the node, leaving room for at least two replicas
        spare_cpu, spare_mem = cpu * 1000 // 2, mem // 2
        for j in range(rng.randint(0, 2)):
            used_cpu = rng.randrange(0, spare_cpu // 2 + 1, 100)
            used_mem = rng.randint(0, spare_mem // 2)
            items.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"other-{i:05d}-{j}",
                        "namespace": "default",
                        "labels": {"app": "other"},
                    },
                    "spec": {
                        "nodeName": name,
                        "containers": [
                            {
                                "name": "c",
                                "image": "other",
                                "resources": {"requests": {"cpu": f"{used_cpu}m", "memory": f"{used_mem}Gi"}},
                            }
                        ],
                    },
                    "status": {"phase": "Running"},
                }
            )
    selector = {"matchLabels": {"app": APP}}
    template = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": APP, "namespace": "default", "labels": {"app": APP}},
        "spec": {
            "nodeSelector": {POOL: "bench"},
            "containers": [
                {
                    "name": "app",
                    "image": APP,
                    "resources": {
                        "requests": {"cpu": f"{TEMPLATE_CPU_M}m", "memory": f"{TEMPLATE_MEM_GI}Gi"}
                    },
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
    }
    return {"apiVersion": "v1", "kind": "List", "items": items}, template


def kubespread_command() -> list[str]:
    exe = Path(sys.executable).with_name("kubespread")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kubespread"]


@dataclass
class Run:
    greedy: int
    maximum: int
    proven: bool
    solve_seconds: float
    total_seconds: float


def run_once(folder: Path, max_count: int, time_limit: float) -> Run:
    cmd = [
        *kubespread_command(),
        "capacity",
        "-f",
        str(folder / "cluster.json"),
        "-f",
        str(folder / "template.json"),
        "-o",
        "json",
        "--max",
        str(max_count),
        "--time-limit",
        str(time_limit),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    return Run(doc["greedy"], doc["maximum"], doc["proven"], doc["solveSeconds"], total)


def measure(instance: Instance, seed: int, runs: int, time_limit: float) -> list[Run]:
    cluster, template = generate(instance.nodes, seed)
    with tempfile.TemporaryDirectory(prefix="kubespread-capacity-") as tmp:
        folder = Path(tmp)
        (folder / "cluster.json").write_text(json.dumps(cluster))
        (folder / "template.json").write_text(json.dumps(template))
        out = []
        for i in range(runs):
            out.append(run_once(folder, instance.max_count, time_limit))
            r = out[-1]
            console.print(
                f"[dim]  {instance.name} run {i + 1}: greedy {r.greedy}, optimal {r.maximum}, "
                f"solve {r.solve_seconds:.2f} s, total {r.total_seconds:.2f} s[/]"
            )
    return out


def table(results: dict[Instance, list[Run]], runs: int) -> Table:
    t = Table(title=f"kubespread capacity, greedy vs. optimal (median of {runs})")
    columns = ("instance", "nodes", "greedy placed", "optimal placed", "proven", "solve s", "total s")
    for col in columns:
        t.add_column(col, justify="left" if col == "instance" else "right")
    for inst, rs in results.items():
        first = rs[0]
        t.add_row(
            inst.name,
            str(inst.nodes),
            str(first.greedy),
            str(first.maximum),
            "yes" if all(r.proven for r in rs) else "no",
            f"{statistics.median(r.solve_seconds for r in rs):.2f}",
            f"{statistics.median(r.total_seconds for r in rs):.2f}",
        )
    return t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="runs per instance (median seconds)")
    p.add_argument("--seed", type=int, default=20)
    p.add_argument("--only", choices=[i.name for i in INSTANCES], action="append")
    p.add_argument("--nodes", type=int, help="one custom instance of this many nodes instead")
    p.add_argument(
        "--max", type=int, dest="max_count", help="new pods of the custom instance (default: --nodes)"
    )
    p.add_argument("--time-limit", type=float, default=10.0, help="the solver's limit (kubespread's default)")
    args = p.parse_args(argv)
    if args.nodes:
        chosen = [
            Instance(f"{args.nodes}x{args.max_count or args.nodes}", args.nodes, args.max_count or args.nodes)
        ]
    else:
        chosen = [i for i in INSTANCES if not args.only or i.name in args.only]
    results = {inst: measure(inst, args.seed, args.runs, args.time_limit) for inst in chosen}
    console.print(table(results, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
