#!/usr/bin/env python3
"""A Deployment rollout's cost as replicas grow: is it linear?

Runs ``scenario.py``'s scenario (a) (the same Deployments: zone and hostname spreads, required
hostname anti-affinity; created, then every one rolled out with 25% surge and unavailable,
then a zone failure) on a fixed cluster of ``--nodes`` nodes (default 3,000, enough for
2,000 replicas plus the surge under the anti-affinity) with ``--deployments`` Deployments
(default 3) of each of ``--replicas`` sizes (default 500, 1,000, 2,000), ``--runs`` times each
(default 3), and prints per size the medians of the ``create``, ``rollout`` and ``zone
failure`` phases and of the whole run (``end to end``: loading, settling, every phase and the
output document): wall seconds, CPU seconds of this process, pods placed per wall second and
per CPU second, and the CPU microseconds per pod (flat when the phase is linear in replicas).
Issue 38's scenario (5,000 nodes, 20 Deployments of 1,000) is ``--nodes 5000 --deployments
20 --replicas 1000``. The 1-minute load average is printed with each run: the machine may be
shared, so CPU seconds are the figure to compare.

    .venv/bin/python benchmarks/rollout.py
    .venv/bin/python benchmarks/rollout.py --nodes 1500 --replicas 250 500 1000 --runs 1
    .venv/bin/python benchmarks/rollout.py --nodes 5000 --deployments 20 --replicas 1000
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenario import Phase, Size, run_scenario, scenario_files

console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
PHASES = ("create", "rollout", "zone failure")
#: the whole run (loading, settling, every phase, the output document) as one more row
END_TO_END = "end to end"


def one_run(size: Size) -> dict[str, Phase]:
    with tempfile.TemporaryDirectory() as tmp:
        run = run_scenario(scenario_files(size, Path(tmp)))
    gc.collect()
    phases = {ph.name: ph for ph in run.phases if ph.name in PHASES}
    phases[END_TO_END] = Phase(END_TO_END, run.total_seconds, run.placed, run.total_cpu)
    return phases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=3_000)
    ap.add_argument("--zones", type=int, default=10)
    ap.add_argument("--deployments", type=int, default=3)
    ap.add_argument("--replicas", type=int, nargs="+", default=[500, 1_000, 2_000])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from kubespread.api.model import collect_less

    collect_less()  # as the executables do

    table = Table(title=f"create and rollout, {args.nodes:,} nodes, {args.deployments} Deployments (medians)")
    columns = ("replicas each", "phase", "pods", "wall s", "CPU s", "pods/s wall", "pods/s CPU", "CPU µs/pod")
    for col in columns:
        table.add_column(col, justify="right")
    for replicas in args.replicas:
        size = Size(args.nodes, args.zones, args.deployments, replicas)
        runs: list[dict[str, Phase]] = []
        for i in range(args.runs):
            runs.append(one_run(size))
            r = runs[-1]
            console.print(
                f"{size.label} run {i + 1}: "
                + ", ".join(f"{n} {r[n].seconds:.1f} s wall / {r[n].cpu:.1f} s CPU" for n in r)
                + f" (load {os.getloadavg()[0]:.1f})"
            )
        for name in (*PHASES, END_TO_END):
            wall = statistics.median(r[name].seconds for r in runs)
            cpu = statistics.median(r[name].cpu for r in runs)
            placed = runs[0][name].placed
            table.add_row(
                f"{replicas:,}",
                name,
                f"{placed:,}",
                f"{wall:.1f}",
                f"{cpu:.1f}",
                f"{placed / wall:.0f}",
                f"{placed / cpu:.0f}",
                f"{cpu / placed * 1e6:.0f}",
            )
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
