#!/usr/bin/env python3
"""Issues 18 and 36's fuzz run, longer than the test suite's: N hostile inputs over every entry point.

Takes the bundled manifests under examples/, mutates them with tests/fuzz/mutate.py (seeded:
the same --seed gives the same inputs), runs each through admit, validate, schedule, explain
and simulate (scenario files) in process with a time limit; a share of the inputs
(--webhook-share) goes instead to the admission webhook over HTTPS on loopback
(tests/fuzz/webhook.py: mutated AdmissionReviews, bad JSON, bodies past 3 MiB, bad headers,
slow-loris connections). Prints per entry point: inputs tried, accepted (a well-formed review
for the webhook), clean errors (exit 1/2 with a message, or a 4xx), closed (a stalled request
cut by the server), crashes, hangs, the slowest input and the RSS growth over its inputs, then
the process's RSS after the first tenth of the run and at its end. Every crash or hang is saved
under a fresh temporary folder (input, command line or request, traceback), printed at the
end; the exit status is 1 if there was any.

    .venv/bin/python benchmarks/fuzz.py --n 2000 --seed 1
    .venv/bin/python benchmarks/fuzz.py --n 20000 --webhook-share 1   # the webhook alone
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fuzz.harness import TIME_LIMIT, Outcome, commands_for, run_mutant  # noqa: E402
from fuzz.mutate import Mutant, mutate, sources  # noqa: E402
from fuzz.webhook import WebhookCase, WebhookOutcome, case_for, run_case, serving  # noqa: E402
from live.tls import make_certificate  # noqa: E402

console = Console(highlight=False, width=None if sys.stdout.isatty() else 130)
KINDS = ("clean", "accepted", "closed", "crash", "hang")
#: the webhook's outcome classes in the table's columns
WEBHOOK_KINDS = {"4xx": "clean", "review": "accepted", "closed": "closed", "crash": "crash", "hang": "hang"}


def rss_mib() -> float:
    """This process's resident set (the webhook server runs in it, on threads)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def save_webhook(folder: Path, n: int, case: WebhookCase, outcome: WebhookOutcome) -> Path:
    """One webhook reproduction: the body sent, the request line and headers, what came back."""
    folder = folder / f"{n:03d}-webhook-{outcome.kind}"
    folder.mkdir(parents=True)
    (folder / "body").write_bytes(case.body)
    (folder / "case.json").write_text(
        json.dumps(
            {
                "seed": case.seed,
                "kind": case.kind,
                "request": f"{case.method} {case.path}",
                "headers": [list(h) for h in case.headers],
                "mutations": list(case.steps),
                "status": outcome.status,
                "seconds": round(outcome.seconds, 3),
                "detail": outcome.detail,
            },
            indent=1,
        )
    )
    return folder


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


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="inputs to try, over all entry points")
    parser.add_argument("--seed", type=int, default=0, help="the first mutation seed")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per input")
    parser.add_argument(
        "--webhook-share",
        type=float,
        default=0.25,
        help="the fraction of inputs sent to the webhook (0 to 1)",
    )
    parser.add_argument("--show", type=int, default=5, help="crashes to print in full")
    args = parser.parse_args(argv)

    pool = sources()
    # every (source, command) pair in turn, so that N inputs spread over the command paths
    pairs = [(s, c) for s in pool for c in commands_for(s)]
    counts: dict[str, Counter[str]] = {}
    latency: Counter[str] = Counter()
    growth: Counter[str] = Counter()
    folder: Path | None = None
    bad: list[tuple[str, str, Path]] = []
    slowest: tuple[float, str] = (0.0, "")
    share = min(max(args.webhook_share, 0.0), 1.0)
    if share and shutil.which("openssl") is None:
        console.print("[yellow]no openssl command: the webhook is left out[/]")
        share = 0.0
    tls = Path(tempfile.mkdtemp(prefix="kubespread-fuzz-tls-"))
    rss_start = rss_mib()
    rss_warm = rss_start
    start = time.perf_counter()
    with serving(*make_certificate(tls)) if share else _nothing() as srv:
        cli_done = 0
        for i in range(args.n):
            before = rss_mib()
            # the webhook's inputs spread evenly among the CLI's: input i goes there when the
            # running share crosses an integer
            if int((i + 1) * share) > int(i * share):
                entry = "webhook"
                case = case_for(args.seed + i)
                w = run_case(srv, case)
                kind, seconds, label = (
                    WEBHOOK_KINDS[w.kind],
                    w.seconds,
                    f"webhook {case.kind} seed {case.seed}",
                )
                if w.bad:
                    folder = folder or Path(tempfile.mkdtemp(prefix="kubespread-fuzz-"))
                    where = save_webhook(folder, len(bad), case, w)
                    bad.append(
                        (
                            f"{w.kind} webhook {case.method} {case.path[:80]}",
                            f"{'; '.join(case.steps)}: {w.detail}",
                            where,
                        )
                    )
            else:
                source, entry = pairs[cli_done % len(pairs)]
                mutant = mutate(source, args.seed + cli_done // len(pairs))
                cli_done += 1
                outcome = run_mutant(entry, mutant, args.time_limit)
                kind, seconds, label = (
                    outcome.kind,
                    outcome.seconds,
                    f"{entry} {source.name} seed {mutant.seed}",
                )
                if outcome.bad:
                    folder = folder or Path(tempfile.mkdtemp(prefix="kubespread-fuzz-"))
                    where = save(folder, len(bad), mutant, outcome)
                    detail = (
                        outcome.detail.strip().splitlines()[-1]
                        if outcome.detail.strip()
                        else outcome.output[-300:]
                    )
                    bad.append(
                        (
                            f"{outcome.kind} {' '.join(outcome.args)}",
                            f"{source.name} seed {mutant.seed}: {'; '.join(mutant.steps)}: {detail}",
                            where,
                        )
                    )
            counts.setdefault(entry, Counter())[kind] += 1
            latency[entry] = max(latency[entry], seconds)
            growth[entry] += rss_mib() - before
            slowest = max(slowest, (seconds, label))
            if kind in ("crash", "hang"):
                console.print(f"[red]{kind}[/]: {label}")
            if i + 1 == max(args.n // 10, 1):
                rss_warm = rss_mib()
            if (i + 1) % 100 == 0:
                seconds = time.perf_counter() - start
                print(
                    f"{i + 1}/{args.n} inputs, {seconds:.0f} s, RSS {rss_mib():.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
    elapsed = time.perf_counter() - start
    rss_end = rss_mib()
    shutil.rmtree(tls, ignore_errors=True)

    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    table = Table(title=f"{args.n} mutated inputs, seed {args.seed}, {elapsed:.0f} s, load {load}")
    columns = ("entry point", "inputs tried", "clean errors", "accepted", "closed", "crashes", "hangs")
    for column in (*columns, "max latency", "RSS growth"):
        table.add_column(column, justify="left" if column == "entry point" else "right")
    total: Counter[str] = Counter()
    for entry, c in counts.items():
        total += c
        table.add_row(
            entry,
            str(sum(c.values())),
            *(str(c[k]) for k in KINDS),
            f"{latency[entry]:.2f} s",
            f"{growth[entry]:+.1f} MiB",
        )
    table.add_row(
        "all",
        str(sum(total.values())),
        *(str(total[k]) for k in KINDS),
        f"{max(latency.values(), default=0):.2f} s",
        f"{rss_end - rss_start:+.1f} MiB",
        style="bold",
    )
    console.print(table)
    console.print(
        f"RSS: {rss_start:.0f} MiB at start, {rss_warm:.0f} MiB after the first tenth,"
        f" {rss_end:.0f} MiB at the end"
    )
    console.print(f"slowest input: {slowest[0]:.2f} s ({slowest[1]})")
    for what, detail, case in bad[: args.show]:
        console.print(f"\n[bold]{what}[/]  ({case})")
        console.print(f"  {detail}")
    if folder is not None:
        console.print(f"\nreproductions: {folder}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
