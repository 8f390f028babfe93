#!/usr/bin/env python3
"""``kubespread audit`` timed on one, two local processes and a Dask cluster of two local
workers, with the control measured in the same run: the bundled 30-node snapshot (every zone,
every node) and a generated cluster (every zone, the first ``--failed-nodes`` nodes).

The generated cluster: N nodes over three zones (16 CPUs, 64 Gi each), W Deployments of R
replicas (100m CPU) each spread over zones (maxSkew 1, DoNotSchedule; every other workload
with nodeTaintsPolicy Honor, so that half of them cannot place their replacements when a
zone fails) and over hostnames (maxSkew 1, ScheduleAnyway). It is settled once (``place``,
timed apart: ``settle s``); each audit then runs every failure from a fork of the settled
base (``audit_settled``). Per instance and key, ``--repeat`` rounds each time every way of
running once, in turn (medians): ``runs s`` is the wall time of the failure runs, ``total s``
the whole audit (the base rebuilt from the dump, the runs, the ranking), ``cpu s`` user +
system of this process and the children it forked (with Dask, plus every worker's and the
children each forked, read from the workers before and after), ``speed-up`` the median over
rounds of the round's 1-process total over this one (a machine whose speed drifts over
minutes slows the ways of one round alike). The Dask cluster (``LocalCluster``, 2 worker
processes of 1 thread, one per core: a thread only waits for the runs its worker's helper
forks) is started once, apart; each audit scatters the dump to it, pickled once
(``plan.audit_dask``), and the machine's helper (one for both workers) unpickles it and
rebuilds the base on the first run.

**Control**, measured right before each 2-process and Dask audit: how much faster k
CPU-bound processes at once finish k pure-Python loops than one process finishes them all,
k being how many runs the audit runs at once (2 processes run all of fewer than 4 failures
at once: ``plan.audit``; 2.00 for k = 2 on two idle cores, and k processes take a larger
share of cores shared with other work than one does, which the control shows too): the
scaling the shared machine offered at that moment. The load average is printed with every
row.

    .venv/bin/python benchmarks/audit.py                        # snapshot, then 1,000 nodes
    .venv/bin/python benchmarks/audit.py --only generated --nodes 300 --workloads 15 --replicas 200
    .venv/bin/python benchmarks/audit.py --ways 1 2             # no Dask
    .venv/bin/python benchmarks/audit.py --only generated --keys zone --ways 1 dask
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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
    "way",
    "settle s",
    "runs s",
    "total s",
    "cpu s",
    "speed-up",
    "control",
    "load",
)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


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


def _cpu() -> float:
    """User + system seconds of this process and the children it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _load() -> float:
    return os.getloadavg()[0]


def _tree_cpu() -> float:
    """User + system seconds of this process, the children it waited for, and every live
    descendant (a Dask worker's helper, ``plan.audit_dask``) with the children each waited for."""
    import psutil

    total = _cpu()
    for p in psutil.Process().children(recursive=True):
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _workers_cpu(client: Any) -> float:
    """User + system seconds of every Dask worker process and its descendants (see above)."""
    return sum(client.run(_tree_cpu).values())


def _audit(sim: Any, key: str, limit: int | None, way: str, client: Any) -> tuple[float, float, float, int]:
    """(runs s, total s, CPU s, failures) of one audit run the ``way`` given; with Dask, CPU
    is this process's and the workers' (each with the runs it forked)."""
    cpu = _cpu()
    if way == "dask":
        workers = _workers_cpu(client)
        doc = audit_settled(sim, domains=[key], limit=limit, processes=2, client=client)
        cpu -= _workers_cpu(client) - workers
    else:
        doc = audit_settled(sim, domains=[key], limit=limit, processes=int(way))
    return doc.seconds.runs, doc.seconds.total, _cpu() - cpu, len(doc.failures)


def _time(
    table: Table,
    name: str,
    sim: Any,
    settle: float,
    node_limit: int | None,
    ways: list[str],
    repeat: int,
    client: Any,
    keys: tuple[str, ...] = ("zone", "hostname"),
) -> None:
    """One row per key (zones, then nodes) and way of running, medians of ``repeat`` rounds.
    A round runs every way once, in turn (1 process, 2, Dask), so that a machine whose speed
    drifts over minutes slows every way alike; a way's speed-up is the median over rounds of
    that round's 1-process total over its own."""
    pods = sum(1 for p in sim.cluster.pods.values() if sim.cluster.node_of(p.key))
    for key, limit in ((ZONE, None), (HOST, node_limit)):
        if key.rsplit("/", 1)[-1] not in keys:
            continue
        failing = limit if key == HOST and limit is not None else _domains(sim, key)
        seen: dict[str, dict[str, list[float]]] = {
            way: {"runs": [], "totals": [], "cpus": [], "controls": [], "loads": []} for way in ways
        }
        failures = 0
        for _ in range(repeat):
            for way in ways:
                got = seen[way]
                if way != "1":
                    got["controls"].append(machine_scaling(_at_once(way, failing)))
                got["loads"].append(_load())
                r, t, c, failures = _audit(sim, key, limit, way, client)
                got["runs"].append(r)
                got["totals"].append(t)
                got["cpus"].append(c)
        for way in ways:
            got = seen[way]
            total = statistics.median(got["totals"])
            ratios = [o / t for o, t in zip(seen["1"]["totals"], got["totals"], strict=True)]
            table.add_row(
                f"{name} {key.rsplit('/', 1)[-1]}s",
                str(len(sim.cluster.nodes)),
                str(pods),
                str(failures),
                "Dask, 2 workers" if way == "dask" else f"{way} process{'es' if way != '1' else ''}",
                f"{settle:.2f}",
                f"{statistics.median(got['runs']):.2f}",
                f"{total:.2f}",
                f"{statistics.median(got['cpus']):.2f}",
                f"{statistics.median(ratios):.2f}x" if way != "1" else "",
                f"{statistics.median(got['controls']):.2f}x" if got["controls"] else "",
                f"{min(got['loads']):.1f}-{max(got['loads']):.1f}",
            )
            console.print(
                f"[dim]  {name}, {failures} {key} failures, {way}: total {total:.2f} s "
                f"(rounds {', '.join(f'{x:.2f}' for x in got['totals'])}), load {got['loads'][-1]:.1f}[/]"
            )


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_scaling(k: int = 2, n: int = 3_000_000) -> float:
    """How much faster ``k`` CPU-bound processes at once finish ``k`` loops than one process
    does, now: the scaling the machine offers to ``k`` runs at once (other work on shared
    cores takes its part; ``k`` processes also take a larger share from it than one)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(k) as pool:
        list(pool.map(_spin, [1] * k))  # the workers started
        started = time.perf_counter()
        for _ in range(k):
            _spin(n)
        serial = time.perf_counter() - started
        started = time.perf_counter()
        list(pool.map(_spin, [n] * k))
        parallel = time.perf_counter() - started
    return serial / parallel


def _domains(sim: Any, key: str) -> int:
    return len({n.metadata.labels[key] for n in sim.cluster.nodes.values() if key in n.metadata.labels})


def _at_once(way: str, failures: int) -> int:
    """How many runs an audit runs at once: 2 local processes run all of fewer than 4 runs
    at once, else 2 (``plan.audit._fork_all``), and so do 2 Dask workers of 1 thread
    (``plan.audit_dask.chunks``)."""
    processes = 2 if way == "dask" else int(way)
    return failures if failures < 2 * processes else processes


def _dask(ways: list[str]) -> tuple[Any, Any]:
    """A LocalCluster of 2 worker processes and its Client, when a way is ``dask``."""
    if "dask" not in ways:
        return None, None
    from distributed import Client, LocalCluster

    started = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    console.print(f"[dim]Dask LocalCluster of 2 workers started in {time.perf_counter() - started:.1f} s[/]")
    return cluster, client


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1_000)
    ap.add_argument("--workloads", type=int, default=50)
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--failed-nodes", type=int, default=100, help="node failures of the generated cluster")
    ap.add_argument("--ways", nargs="+", default=["1", "2", "dask"], choices=("1", "2", "dask"))
    ap.add_argument("--repeat", type=int, default=3, help="audits per row (the median is shown)")
    ap.add_argument("--only", choices=("snapshot", "generated"))
    ap.add_argument(
        "--keys", nargs="+", default=["zone", "hostname"], choices=("zone", "hostname"), help="domains"
    )
    args = ap.parse_args(argv)
    from kubespread.api.model import collect_less

    collect_less()  # as the executables do
    ways = ["1", *[w for w in args.ways if w != "1"]]  # the 1-process time is the reference
    table = Table(title="kubespread audit (600 s per failure; medians)")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("instance", "way") else "right")
    cluster, client = _dask(ways)
    try:
        if args.only in (None, "snapshot"):
            sim, settle = _settle(load([str(SNAPSHOT)]).objects)
            _time(table, "snapshot", sim, settle, None, ways, args.repeat, client, tuple(args.keys))
        if args.only in (None, "generated"):
            console.print(f"[dim]settling {args.nodes} nodes, {args.workloads} x {args.replicas} pods ...[/]")
            manifests = load_data(generate(args.nodes, args.workloads, args.replicas), "<generated>")
            sim, settle = _settle(manifests.objects)
            name = f"{args.nodes}x{args.workloads * args.replicas}"
            _time(table, name, sim, settle, args.failed_nodes, ways, args.repeat, client, tuple(args.keys))
    finally:
        if client is not None:
            client.close()
            cluster.close()
    console.print(table)
    console.print(
        "control: k CPU-bound processes at once against one, k the runs the audit runs at once, "
        "measured before each audit of the row (2.00x for k = 2 on two idle cores); "
        "speed-up: the median over rounds of the round's 1-process total over the row's"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
