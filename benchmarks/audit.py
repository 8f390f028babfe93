#!/usr/bin/env python3
"""``kubespread audit`` timed: the bundled 30-node snapshot (every zone and every node) and a
generated cluster (1,000 nodes, 10,000 pods: every zone and the first 100 nodes), with 1 and
2 local processes.

The generated cluster: N nodes over three zones (16 CPUs, 64 Gi each), W Deployments of R
replicas (100m CPU) each spread over zones (maxSkew 1, DoNotSchedule; every other workload
with nodeTaintsPolicy Honor, so that half of them cannot place their replacements when a
zone fails) and over hostnames (maxSkew 1, ScheduleAnyway). It is settled once (``place``,
timed apart: ``settle s``); each audit then runs every failure from a fork of the settled
base. Columns: the instance, nodes, pods, the failures run, processes, the failures' seconds
(``runs s``: the pool's wall time over the failures), seconds per failure (the same divided
by the failures) and the audit's total (the runs plus rebuilding the base from the dump and
reading the records).

    .venv/bin/python benchmarks/audit.py                        # snapshot, then 1,000 nodes
    .venv/bin/python benchmarks/audit.py --only generated --nodes 30 --workloads 3 --replicas 30
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from kubespread.io.loader import LoadedObject, load, load_data
from kubespread.plan.audit import audit_settled
from kubespread.sim.engine import DEFAULT_MAX_PODS
from kubespread.sim.placement import place

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = REPO / "examples" / "snapshot" / "cluster.yaml"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
COLUMNS = (
    "instance",
    "nodes",
    "pods",
    "failures",
    "processes",
    "settle s",
    "runs s",
    "s per failure",
    "total s",
)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def _node(i: int, zone: str) -> dict[str, Any]:
    name = f"{zone}-{i:04d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{zone}"}},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
        },
    }


def _deployment(i: int, replicas: int) -> dict[str, Any]:
    app = f"app-{i:02d}"
    sel = {"matchLabels": {"app": app}}
    zone: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": sel,
    }
    if i % 2:
        zone["nodeTaintsPolicy"] = "Honor"
    host = {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": sel,
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                    "topologySpreadConstraints": [zone, host],
                },
            },
        },
    }


def generate(nodes: int, workloads: int, replicas: int) -> list[dict[str, Any]]:
    """The generated cluster's manifests (deterministic): nodes, then Deployments."""
    per = [nodes // 3 + (1 if z < nodes % 3 else 0) for z in range(3)]
    docs = [_node(i, zone) for zone, n in zip("abc", per, strict=True) for i in range(n)]
    return docs + [_deployment(i, replicas) for i in range(workloads)]


def _settle(objects: list[LoadedObject]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = place(objects, max_pods=max(DEFAULT_MAX_PODS, 2 * len(objects) * 10))
    return result.sim, time.perf_counter() - started


def _time(
    table: Table, name: str, sim: Any, settle: float, node_limit: int | None, processes: list[int]
) -> None:
    """One row per key (zones, then nodes) and process count."""
    pods = sum(1 for p in sim.cluster.pods.values() if sim.cluster.node_of(p.key))
    for key, limit in ((ZONE, None), (HOST, node_limit)):
        for n in processes:
            doc = audit_settled(sim, domains=[key], limit=limit, processes=n)
            runs, failures = doc.seconds.runs, len(doc.failures)
            table.add_row(
                f"{name} {key.rsplit('/', 1)[-1]}s",
                str(len(sim.cluster.nodes)),
                str(pods),
                str(failures),
                str(n),
                f"{settle:.2f}",
                f"{runs:.2f}",
                f"{runs / max(failures, 1):.2f}",
                f"{doc.seconds.total:.2f}",
            )
            console.print(f"[dim]  {name}, {failures} {key} failures, {n} process(es): {runs:.1f} s[/]")


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_scaling(n: int = 5_000_000) -> float:
    """How much faster two CPU-bound processes finish two loops than one process does, now:
    the scaling the machine offers (other work on shared cores takes its part)."""
    from concurrent.futures import ProcessPoolExecutor

    started = time.perf_counter()
    _spin(n), _spin(n)
    serial = time.perf_counter() - started
    with ProcessPoolExecutor(2) as pool:
        started = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        parallel = time.perf_counter() - started
    return serial / parallel


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1_000)
    ap.add_argument("--workloads", type=int, default=50)
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--failed-nodes", type=int, default=100, help="node failures of the generated cluster")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--only", choices=("snapshot", "generated"))
    args = ap.parse_args(argv)
    table = Table(title="kubespread audit (zone and node failures, 600 s each)")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col == "instance" else "right")
    if args.only in (None, "snapshot"):
        sim, settle = _settle(load([str(SNAPSHOT)]).objects)
        _time(table, "snapshot", sim, settle, None, args.processes)
    if args.only in (None, "generated"):
        console.print(f"[dim]settling {args.nodes} nodes, {args.workloads} x {args.replicas} pods ...[/]")
        manifests = load_data(generate(args.nodes, args.workloads, args.replicas), "<generated>")
        sim, settle = _settle(manifests.objects)
        name = f"{args.nodes}x{args.workloads * args.replicas}"
        _time(table, name, sim, settle, args.failed_nodes, args.processes)
    console.print(table)
    console.print(
        f"two CPU-bound processes ran {machine_scaling():.2f}x as fast as one on this machine just now "
        "(2.00 on two idle cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
