#!/usr/bin/env python3
"""``kubespread rebalance`` at scale, and against the descheduler on every example.

**Scale.** A seeded generator writes a scenario: N nodes over three zones (16 CPUs each),
zone ``c``'s nodes tainted NoSchedule; W Deployments of R replicas (100m CPU), each with a
zone spread (maxSkew 1, DoNotSchedule, nodeTaintsPolicy Honor: the tainted zone does not
count) and a ScheduleAnyway hostname spread; then one step that takes the taint off zone
``c``. The pods sit half in ``a``, half in ``b``: every workload is past maxSkew. The
benchmark runs ``kubespread simulate --dump`` to get that state, then times
``kubespread rebalance -f STATE -o json`` and prints nodes, pods, workloads, evictions,
proven, balanced, the plan's seconds (solve and replay of every wave, the JSON's
``seconds``) and the whole command's (loading and settling the dump too).

**Examples.** For each scenario of ``examples/rebalance/``: its state, then
``rebalance --strategy compare``; prints the evictions of each, whether each end state is
balanced, and whether the descheduler loops.

    .venv/bin/python benchmarks/rebalance.py                       # 1,000 nodes / 10,000 pods / 50 workloads
    .venv/bin/python benchmarks/rebalance.py --nodes 90 --workloads 3 --replicas 30 --only scale
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
KUBESPREAD = [str(Path(sys.executable).with_name("kubespread"))]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
TAINT = {"key": "example.com/maintenance", "value": "true", "effect": "NoSchedule"}

console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)


def _node(i: int, zone: str, tainted: bool) -> dict[str, Any]:
    name = f"{zone}-{i:04d}"
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{zone}"}},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
        },
    }
    if tainted:
        node["spec"] = {"taints": [dict(TAINT)]}
    return node


def _deployment(i: int, replicas: int) -> dict[str, Any]:
    app = f"app-{i:02d}"
    sel = {"matchLabels": {"app": app}}
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
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": sel,
                            "nodeTaintsPolicy": "Honor",
                        },
                        {
                            "maxSkew": 1,
                            "topologyKey": HOST,
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": sel,
                        },
                    ],
                },
            },
        },
    }


def write_scale(folder: Path, nodes: int, workloads: int, replicas: int) -> Path:
    """The scenario (and its node file) described in the module notes."""
    zones = ["a", "b", "c"]
    per = [nodes // 3 + (1 if z < nodes % 3 else 0) for z in range(3)]
    all_nodes = [_node(i, zone, zone == "c") for zone, n in zip(zones, per, strict=True) for i in range(n)]
    (folder / "nodes.yaml").write_text(yaml.safe_dump_all(all_nodes, sort_keys=False))
    untainted = [_node(i, "c", False) for i in range(per[2])]
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "rebalance-scale"},
        "seed": 1,
        "cluster": ["nodes.yaml"],
        "steps": [{"apply": [_deployment(i, replicas) for i in range(workloads)]}, {"apply": untainted}],
    }
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _run(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    r = subprocess.run([*KUBESPREAD, *args], capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - started
    if r.returncode not in (0, 3):
        raise SystemExit(f"kubespread {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
    return seconds, r.stdout


def state_of(scenario: Path, folder: Path) -> Path:
    state = folder / f"{scenario.stem}-state.yaml"
    _run(["simulate", str(scenario), "--no-progress", "--dump", str(state), "-o", "json"])
    return state


def scale(nodes: int, workloads: int, replicas: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kubespread-rebalance-") as tmp:
        folder = Path(tmp)
        console.print(f"[dim]generating {nodes} nodes, {workloads} x {replicas} pods ...[/]")
        started = time.perf_counter()
        state = state_of(write_scale(folder, nodes, workloads, replicas), folder)
        console.print(f"[dim]  state in {time.perf_counter() - started:.1f} s[/]")
        seconds, stdout = _run(["rebalance", "-f", str(state), "-o", "json", "--time-limit", "60"])
        doc = json.loads(stdout)
    t = Table(title="kubespread rebalance at scale (one run, two cores)")
    for col in (
        "nodes",
        "pods",
        "workloads",
        "evictions",
        "waves",
        "proven",
        "balanced",
        "plan s",
        "command s",
    ):
        t.add_column(col, justify="right")
    t.add_row(
        str(nodes),
        str(workloads * replicas),
        str(workloads),
        str(doc["evictions"]),
        str(len(doc["waves"])),
        "yes" if doc["proven"] else "no",
        "yes" if doc["balanced"] else "no",
        f"{doc['seconds']:.1f}",
        f"{seconds:.1f}",
    )
    console.print(t)


def examples() -> None:
    t = Table(title="rebalance vs the descheduler on examples/rebalance")
    for col in (
        "example",
        "kubespread evictions",
        "balanced",
        "descheduler evictions",
        "balanced",
        "loops",
        "note",
    ):
        t.add_column(col)
    with tempfile.TemporaryDirectory(prefix="kubespread-rebalance-") as tmp:
        folder = Path(tmp)
        for scenario in sorted((REPO / "examples" / "rebalance").glob("*.yaml")):
            state = state_of(scenario, folder)
            _, stdout = _run(["rebalance", "-f", str(state), "-o", "json", "--strategy", "compare"])
            doc = json.loads(stdout)
            ours, theirs = doc["kubespread"], doc["descheduler"]
            t.add_row(
                scenario.stem,
                str(ours["evictions"]),
                "yes" if ours["balanced"] else "no",
                str(theirs["evictions"]),
                "yes" if theirs["balanced"] else "no",
                "yes" if theirs.get("loop") else "no",
                ours.get("cannot", "").removeprefix("cannot be balanced: "),
            )
    console.print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1_000)
    ap.add_argument("--workloads", type=int, default=50)
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--only", choices=("scale", "examples"))
    args = ap.parse_args(argv)
    if args.only in (None, "examples"):
        examples()
    if args.only in (None, "scale"):
        scale(args.nodes, args.workloads, args.replicas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
