#!/usr/bin/env python3
"""Issue 18's fuzz run, longer than the test suite's: N mutated manifests over the command paths.

Takes the bundled manifests under examples/, mutates them with tests/fuzz/mutate.py (seeded:
the same --seed gives the same inputs), runs each through admit, validate, schedule, explain
and simulate in process with a time limit, and prints per command: inputs tried, clean errors,
accepted, crashes, hangs. Every crash or hang is saved under a fresh temporary folder (input,
command line, traceback), printed at the end; the exit status is 1 if there was any.

    .venv/bin/python benchmarks/fuzz.py --n 2000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fuzz.harness import TIME_LIMIT, Outcome, commands_for, run_mutant  # noqa: E402
from fuzz.mutate import Mutant, mutate, sources  # noqa: E402

console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)
KINDS = ("clean", "accepted", "crash", "hang")


def save(folder: Path, n: int, mutant: Mutant, outcome: Outcome) -> Path:
    """One reproduction: the input as the command read it, the command line and the trace."""
    case = folder / f"{n:03d}-{outcome.command}-{outcome.kind}"
    case.mkdir(parents=True)
    (case / mutant.source.path.name).write_text(mutant.text)
    (case / "case.json").write_text(
        json.dumps(
            {
                "command": outcome.command,
                "args": list(outcome.args),
                "source": mutant.source.name,
                "seed": mutant.seed,
                "mutations": list(mutant.steps),
                "exit_code": outcome.exit_code,
                "seconds": round(outcome.seconds, 3),
            },
            indent=1,
        )
    )
    (case / "trace.txt").write_text(outcome.detail + "\n--- output ---\n" + outcome.output)
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="inputs to try, over all command paths")
    parser.add_argument("--seed", type=int, default=0, help="the first mutation seed")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per input")
    parser.add_argument("--show", type=int, default=5, help="crashes to print in full")
    args = parser.parse_args(argv)

    pool = sources()
    # every (source, command) pair in turn, so that N inputs spread over the command paths
    pairs = [(s, c) for s in pool for c in commands_for(s)]
    counts: dict[str, Counter[str]] = {}
    folder: Path | None = None
    bad: list[tuple[Mutant, Outcome, Path]] = []
    slowest: tuple[float, str] = (0.0, "")
    start = time.perf_counter()
    for i in range(args.n):
        source, command = pairs[i % len(pairs)]
        mutant = mutate(source, args.seed + i // len(pairs))
        outcome = run_mutant(command, mutant, args.time_limit)
        counts.setdefault(command, Counter())[outcome.kind] += 1
        slowest = max(slowest, (outcome.seconds, f"{command} {source.name} seed {mutant.seed}"))
        if outcome.bad:
            folder = folder or Path(tempfile.mkdtemp(prefix="kubespread-fuzz-"))
            bad.append((mutant, outcome, save(folder, len(bad), mutant, outcome)))
            console.print(f"[red]{outcome.kind}[/]: {command} {source.name} seed {mutant.seed}")
        if (i + 1) % 100 == 0:
            seconds = time.perf_counter() - start
            print(f"{i + 1}/{args.n} inputs, {seconds:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start

    table = Table(title=f"{args.n} mutated inputs, seed {args.seed}, {elapsed:.0f} s")
    for column in ("command", "inputs tried", "clean errors", "accepted", "crashes", "hangs"):
        table.add_column(column, justify="left" if column == "command" else "right")
    total: Counter[str] = Counter()
    for command, c in counts.items():
        total += c
        table.add_row(command, str(sum(c.values())), *(str(c[k]) for k in KINDS))
    table.add_row("all", str(sum(total.values())), *(str(total[k]) for k in KINDS), style="bold")
    console.print(table)
    console.print(f"slowest input: {slowest[0]:.2f} s ({slowest[1]})")
    for mutant, outcome, case in bad[: args.show]:
        console.print(f"\n[bold]{outcome.kind}[/] {' '.join(outcome.args)}  ({case})")
        console.print(f"  {mutant.source.name} seed {mutant.seed}: {'; '.join(mutant.steps)}")
        console.print(
            outcome.detail.strip().splitlines()[-1] if outcome.detail.strip() else outcome.output[-300:]
        )
    if folder is not None:
        console.print(f"\nreproductions: {folder}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
