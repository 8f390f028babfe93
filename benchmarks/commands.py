#!/usr/bin/env python3
"""Whole commands on the bundled snapshot: CPU seconds, as a user runs them.

``kubespread schedule -f examples/snapshot/cluster.yaml -f examples/snapshot/checkout.yaml``,
``kubespread explain shop/search-56795cc8ff-xkjnr -f examples/snapshot/cluster.yaml`` and
``kubespread audit -f examples/snapshot/cluster.yaml`` (its failure runs are forked children:
their CPU counts), each ``--runs`` times (default 5) in a fresh process, output discarded.
CPU is user + system time of the process and its children (``os.wait4``), which other work on
a shared machine slows much less than wall time; both are printed, with the 1-minute load
average before and after each command's runs, and the medians.

The command runs with its bytecode written (an installed kubespread has it; this checkout's
environment may say ``PYTHONDONTWRITEBYTECODE``, which would add compiling every module to
every run): a first, untimed run writes it.

    .venv/bin/python benchmarks/commands.py               # --runs N, --only schedule|explain|audit

Side by side with another tree (its own ``.venv``, its own copy of the snapshot), in the same
minutes: ``--other /path/to/tree`` runs each command there too, the two trees alternating run by
run, and prints both rows and their ratio (other over this).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dump import REPO, child_env, tree_kubespread  # one home for a tree's executable

SNAPSHOT = REPO / "examples" / "snapshot"
COMMANDS = {
    "schedule": ["schedule", "-f", str(SNAPSHOT / "cluster.yaml"), "-f", str(SNAPSHOT / "checkout.yaml")],
    "explain": ["explain", "shop/search-56795cc8ff-xkjnr", "-f", str(SNAPSHOT / "cluster.yaml")],
    "audit": ["audit", "-f", str(SNAPSHOT / "cluster.yaml")],
}


def run(args: list[str], tree: Path = REPO) -> tuple[float, float]:
    """(wall s, CPU s of the process and the children it waited for) of one run in ``tree``."""
    args = [a.replace(str(REPO), str(tree)) for a in args]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*tree_kubespread(tree), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=tree,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # audit exits 1 when some failure leaves workloads short
        raise SystemExit(f"kubespread {' '.join(args)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", choices=sorted(COMMANDS))
    ap.add_argument("--other", type=Path, help="another tree (with its .venv) run alternately")
    a = ap.parse_args(argv)
    names = [a.only] if a.only else list(COMMANDS)
    trees = [("this", REPO)] if a.other is None else [("this", REPO), ("other", a.other.resolve())]
    print(f"whole commands on examples/snapshot/, {a.runs} runs each (CPU: user + system, children too)")
    head = f"{'command':<10} {'tree':<6} {'cpu s (median)':>15} {'min':>6} {'max':>6}"
    print(f"{head} {'wall s (median)':>16}  load")
    for name in names:
        for _, tree in trees:
            run(COMMANDS[name], tree)  # bytecode written, caches warm
        before = os.getloadavg()[0]
        times: dict[str, list[tuple[float, float]]] = {which: [] for which, _ in trees}
        for _ in range(a.runs):
            for which, tree in trees:
                times[which].append(run(COMMANDS[name], tree))
        after = os.getloadavg()[0]
        medians = {}
        for which, _ in trees:
            walls, cpus = zip(*times[which], strict=True)
            medians[which] = statistics.median(cpus)
            print(
                f"{name:<10} {which:<6} {medians[which]:>15.2f} {min(cpus):>6.2f} {max(cpus):>6.2f} "
                f"{statistics.median(walls):>16.2f}  {before:.2f}/{after:.2f}"
            )
        if a.other is not None:
            print(f"{name:<10} other / this, CPU: {medians['other'] / medians['this']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
