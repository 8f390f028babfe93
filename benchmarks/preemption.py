#!/usr/bin/env python3
"""DefaultPreemption's cost per scheduling cycle, at ``--nodes`` nodes (default 1,000).

(a) ``victims``: every node runs ``--victims`` (default 5) pods of priority 0 that fill its
CPU, spread over 10 zones, each with a zone spread constraint and a preferred anti-affinity
(so PodTopologySpread and InterPodAffinity have PreFilter state); a pod of priority 1000
asking for one victim's CPU fits nowhere and preempts. The cycle (Filter on every node, then
the dry run over the candidates kube's defaults ask for, then the choice of node) is timed.

(b) ``no lower priority``: the same nodes full of priority-1000 pods; an incoming pod of
priority 1000 fits nowhere and may preempt no one: the cycle, PostFilter included.

Each case is decided once cold (``first``: the plugins' indexes are built then) and then
``--runs`` times (default 5) on the same cluster, which the dry run leaves as it was; the
median, min and max of those are printed with the machine's 1-minute load average before
and after.

    .venv/bin/python benchmarks/preemption.py                 # --nodes 1000 --victims 5 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from kubespread.api.core import Pod
from kubespread.api.kinds import class_for
from kubespread.api.meta import KubeObject
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.scheduler import schedule_one

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(i: int, cpu: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{i % 10}"}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}},
    }


def _pod(name: str, app: str, priority: int, cpu: int, node: str | None) -> dict[str, Any]:
    labels = {"app": app}
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": str(cpu)}}}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": labels},
            }
        ],
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "podAffinityTerm": {"topologyKey": HOST, "labelSelector": {"matchLabels": labels}},
                    }
                ]
            }
        },
    }
    if node is not None:
        spec["nodeName"] = node
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels, "uid": name},
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"} if node else {},
    }
    return pod


def object_from_dict(d: dict[str, Any]) -> KubeObject:
    cls = class_for(d["apiVersion"], d["kind"])
    assert cls is not None
    return cls.from_dict(d)


def cluster(nodes: int, victims: int, priority: int) -> ClusterState:
    state = ClusterState()
    for i in range(nodes):
        n = _node(i, victims)
        state.add(object_from_dict(n))
        for j in range(victims):
            p = _pod(f"low-{i:05d}-{j}", f"low-{j}", priority, 1, n["metadata"]["name"])
            state.add(object_from_dict(p))
    return state


def _load() -> float:
    return os.getloadavg()[0]


def measure(state: ClusterState, incoming: Pod, runs: int) -> tuple[float, list[float], str]:
    profile = default_profile()
    started = time.perf_counter()
    schedule_one(incoming, state, profile, timed=False)
    first = time.perf_counter() - started
    times: list[float] = []
    outcome = ""
    for _ in range(runs):
        started = time.perf_counter()
        decision = schedule_one(incoming, state, profile, timed=False)
        times.append(time.perf_counter() - started)
        pre = decision.preemption
        outcome = (
            f"nominated {pre.nominated_node} ({len(pre.victims)} victims)"
            if pre is not None and pre.nominated_node
            else (decision.fit_error or "")[-80:]
        )
    return first, times, outcome


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--victims", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"preemption at {args.nodes:,} nodes, {args.victims} pods per node, {args.runs} runs")
    print(f"{'case':<20} {'first ms':>9} {'median ms':>10} {'min':>8} {'max':>8}  load       outcome")
    for case, low in (("victims", 0), ("no lower priority", 1000)):
        state = cluster(args.nodes, args.victims, low)
        incoming = object_from_dict(_pod("incoming", "high", 1000, 1, None))
        assert isinstance(incoming, Pod)
        before = _load()
        first, times, outcome = measure(state, incoming, args.runs)
        ms = [t * 1000 for t in times]
        print(
            f"{case:<20} {first * 1000:>9.1f} {statistics.median(ms):>10.1f} {min(ms):>8.1f} {max(ms):>8.1f}"
            f"  {before:.2f}/{_load():.2f}  {outcome}"
        )


if __name__ == "__main__":
    main()
