#!/usr/bin/env python3
"""``kubespread simulate -o json``: the size of the document in its delta form (the default)
and its full form (``--output-form full``: every pod at every step), on a generated run.

The run is ``benchmarks/scenario.py``'s scenario (a) with the zone failed one node per step
(``--fail-per-node``): by default 300 nodes over 3 zones, 10 Deployments of 300 replicas
(3,000 pods, one per node each: required hostname anti-affinity), created, rolled out, then
the 100 nodes of the first zone failed one step each and ``advance: 6m`` (103 steps; the
evicted pods' replacements stay pending, every node left holding one of each Deployment).
Each form is written by the command itself (a fresh process, stdout counted, not kept).

    .venv/bin/python benchmarks/simulate_output.py [--nodes 300 --deployments 10 --replicas 300]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scenario import Size, kubespread_command, scenario_files


def measure(cmd: list[str]) -> tuple[int, float]:
    """(bytes written to stdout, wall seconds) of ``cmd``."""
    t0 = time.perf_counter()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        size = 0
        while chunk := proc.stdout.read(1 << 20):
            size += len(chunk)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}")
    return size, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--deployments", type=int, default=10)
    ap.add_argument("--replicas", type=int, default=300)
    args = ap.parse_args(argv)
    size = Size(args.nodes, args.zones, args.deployments, args.replicas)
    with tempfile.TemporaryDirectory() as tmp:
        path = scenario_files(size, Path(tmp), per_node=True)
        base = [*kubespread_command(), "simulate", str(path), "--no-progress", "-o", "json"]
        steps = 3 + len([n for n in range(args.nodes) if n % args.zones == 0])
        print(f"{size.label}, {steps} steps")
        rows = [("delta", measure(base)), ("full", measure([*base, "--output-form", "full"]))]
    for form, (n, seconds) in rows:
        print(f"{form:>5}: {n / 1e6:9.1f} MB  ({n:,} bytes, {seconds:.0f} s)")
    delta, full = rows[0][1][0], rows[1][1][0]
    print(f"full / delta: {full / delta:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
