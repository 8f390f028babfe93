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
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fuzz.harness import COMMANDS, TIME_LIMIT, Outcome, commands_for, forked, run_mutant  # noqa: E402
from fuzz.mutate import Mutant, mutate, sources  # noqa: E402
from fuzz.webhook import WebhookCase, WebhookOutcome, case_for, run_case, serving  # noqa: E402
from live.tls import make_certificate  # noqa: E402

console = Console(highlight=False, width=None if sys.stdout.isatty() else 130)
KINDS = ("clean", "accepted", "closed", "crash", "hang")
#: the webhook's outcome classes in the table's columns
WEBHOOK_KINDS = {"4xx": "clean", "review": "accepted", "closed": "closed", "crash": "crash", "hang": "hang"}
#: every (source, command) pair, taken in turn so that N inputs spread over the command paths
PAIRS = [(s, c) for s in sources() for c in commands_for(s)]


#: set by SIGTERM/SIGINT or --minutes: no new input starts, the table covers what was run
STOP: list[bool] = []


def _stop(signum: int, frame: object) -> None:
    STOP.append(True)


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


def _cli_input(index: int, seed: int, time_limit: float) -> tuple[Outcome, str]:
    """One CLI input, in a forked child: the pair's command on its mutant (made in the child,
    so that mutating is shared among the jobs too); the mutant's text comes back only when bad."""
    source, entry = PAIRS[index]
    mutant = mutate(source, seed)
    outcome = run_mutant(entry, mutant, time_limit, cpu=True)
    return outcome, mutant.text if outcome.bad else ""


def _webhook_run(seeds: list[int], out: Path, folder: Path) -> None:
    """The webhook's share, in a process of its own (forked before any thread exists): a
    ``WebhookServer`` on loopback and one JSON line per case in ``out``; bad cases are saved
    under ``folder``. Its RSS is measured here, where the server's memory is."""
    tls = Path(tempfile.mkdtemp(prefix="kubespread-fuzz-tls-"))
    with open(out, "w") as f, serving(*make_certificate(tls)) as srv:
        f.write(json.dumps({"rss": rss_mib()}) + "\n")
        for n, seed in enumerate(seeds):
            if STOP:
                break
            try:
                case = case_for(seed)
            except Exception as e:  # the harness's own fault: said, and the run goes on
                f.write(json.dumps({"unbuilt": seed, "error": f"{type(e).__name__}: {e}"}) + "\n")
                continue
            before = rss_mib()
            w = run_case(srv, case)
            line: dict[str, object] = {
                "seed": seed,
                "kind": WEBHOOK_KINDS[w.kind],
                "seconds": w.seconds,
                "growth": rss_mib() - before,
                "label": f"webhook {case.kind} seed {case.seed}",
            }
            if w.bad:
                where = save_webhook(folder, seed, case, w)
                line["bad"] = [
                    f"{w.kind} webhook {case.method} {case.path[:80]}",
                    f"{'; '.join(case.steps)}: {w.detail}",
                    str(where),
                ]
            if n + 1 == max(len(seeds) // 10, 1):
                line["rss_warm"] = rss_mib()
            f.write(json.dumps(line) + "\n")
            f.flush()
        f.write(json.dumps({"rss_end": rss_mib()}) + "\n")
    shutil.rmtree(tls, ignore_errors=True)


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="inputs to try, over all entry points")
    parser.add_argument("--seed", type=int, default=0, help="the first mutation seed")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=TIME_LIMIT,
        help="seconds per input: of CPU time for a CLI input (a forked child is also killed after"
        " this plus a minute of wall time without an answer), of wall time for a webhook request",
    )
    parser.add_argument(
        "--webhook-share",
        type=float,
        default=0.25,
        help="the fraction of inputs sent to the webhook (0 to 1)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="CLI inputs run at once, each in a forked child")
    parser.add_argument(
        "--batch",
        type=int,
        default=1,
        help="CLI inputs per forked child (1: each input in a fresh copy of the warm process)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run every input in this one process instead (no isolation: shows memory that "
        "grows from input to input)",
    )
    parser.add_argument("--show", type=int, default=5, help="crashes to print in full")
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop starting inputs after this long and print the table of those run (so does SIGTERM)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    share = min(max(args.webhook_share, 0.0), 1.0)
    if share and shutil.which("openssl") is None:
        console.print("[yellow]no openssl command: the webhook is left out[/]")
        share = 0.0
    # the webhook's inputs spread evenly among the CLI's: input i goes there when the running
    # share crosses an integer; the CLI's take every (source, command) pair in turn
    plan: list[tuple[str, int, int]] = []  # (entry, pair index or -1, seed)
    cli_done = 0
    for i in range(args.n):
        if int((i + 1) * share) > int(i * share):
            plan.append(("webhook", -1, args.seed + i))
        else:
            index = cli_done % len(PAIRS)
            plan.append((PAIRS[index][1], index, args.seed + cli_done // len(PAIRS)))
            cli_done += 1
    folder = Path(tempfile.mkdtemp(prefix="kubespread-fuzz-"))
    counts: dict[str, Counter[str]] = {}
    latency: Counter[str] = Counter()
    growth: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    bad: list[tuple[str, str, Path]] = []
    slowest: tuple[float, str] = (0.0, "")
    unbuilt: list[str] = []  # webhook cases the harness could not build

    def record(entry: str, kind: str, seconds: float, label: str) -> None:
        nonlocal slowest
        counts.setdefault(entry, Counter())[kind] += 1
        latency[entry] = max(latency[entry], seconds)
        slowest = max(slowest, (seconds, label))
        if kind in ("crash", "hang"):
            console.print(f"[red]{kind}[/]: {label}")

    def record_cli(index: int, seed: int, outcome: Outcome, text: str) -> None:
        source, entry = PAIRS[index]
        record(entry, outcome.kind, outcome.seconds, f"{entry} {source.name} seed {seed}")
        if outcome.bad:
            mutant = mutate(source, seed)
            where = save(folder, len(bad), mutant if not text else replace(mutant, text=text), outcome)
            detail = (
                outcome.detail.strip().splitlines()[-1] if outcome.detail.strip() else outcome.output[-300:]
            )
            bad.append(
                (
                    f"{outcome.kind} {' '.join(outcome.args)}",
                    f"{source.name} seed {seed}: {'; '.join(mutant.steps)}: {detail}",
                    where,
                )
            )

    def stopping() -> bool:
        if args.minutes is not None and time.perf_counter() - start > args.minutes * 60:
            STOP.append(True)
        return bool(STOP)

    def progress(done: int) -> None:
        if done % 100 == 0:
            print(f"{done}/{args.n} inputs, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

    rss_start = rss_warm = rss_end = rss_mib()
    start = time.perf_counter()
    cpu_start = os.times()
    if args.in_process:
        tls = Path(tempfile.mkdtemp(prefix="kubespread-fuzz-tls-"))
        with serving(*make_certificate(tls)) if share else _nothing() as srv:
            for i, (entry, index, seed) in enumerate(plan):
                if stopping():
                    break
                before = rss_mib()
                if entry == "webhook":
                    case = case_for(seed)
                    w = run_case(srv, case)
                    record(entry, WEBHOOK_KINDS[w.kind], w.seconds, f"webhook {case.kind} seed {seed}")
                    if w.bad:
                        where = save_webhook(folder, seed, case, w)
                        bad.append((f"{w.kind} webhook {case.path[:80]}", w.detail, where))
                else:
                    mutant = mutate(PAIRS[index][0], seed)
                    record_cli(index, seed, run_mutant(entry, mutant, args.time_limit, cpu=True), "")
                growth[entry] += rss_mib() - before
                if i + 1 == max(args.n // 10, 1):
                    rss_warm = rss_mib()
                progress(i + 1)
        shutil.rmtree(tls, ignore_errors=True)
        rss_end = rss_mib()
    else:
        seeds = [seed for entry, _, seed in plan if entry == "webhook"]
        lines = folder / "webhook.jsonl"
        webhook_pid = 0
        if seeds:
            webhook_pid = os.fork()
            if webhook_pid == 0:
                code = 0
                try:
                    _webhook_run(seeds, lines, folder)
                except BaseException:  # reported by the parent
                    traceback.print_exc()
                    code = 1
                os._exit(code)
        # warm the parent before the first fork: each command once (its lazy imports, Typer's
        # Click command, caches), so that no child repeats that work
        for command in COMMANDS:
            index = next(i for i, (_, c) in enumerate(PAIRS) if c == command)
            _cli_input(index, args.seed, args.time_limit)
        calls = (
            ((index, seed), _cli_input, (index, seed, args.time_limit))
            for entry, index, seed in plan
            if entry != "webhook"
        )
        for done, f in enumerate(
            forked(
                calls,
                jobs=args.jobs,
                batch=args.batch,
                time_limit_s=args.time_limit,
                grace=max(60.0, 5 * args.time_limit),
                stop=stopping,
            ),
            1,
        ):
            index, seed = f.key
            entry = PAIRS[index][1]
            peak[entry] = max(peak[entry], f.peak_mib)
            if f.kind == "done":
                outcome, text = f.value
            else:  # killed past the time limit, or died without an answer: both are bad
                args_, _ = ((entry,), None)
                outcome = Outcome(
                    entry, "hang" if f.kind == "hang" else "crash", None, f.seconds, args_, "", f.detail
                )
                text = ""
            record_cli(index, seed, outcome, text)
            progress(done)
        if webhook_pid:
            # the webhook's share may outlast the CLI's: --minutes and SIGTERM reach it from here
            while True:
                pid, status = os.waitpid(webhook_pid, os.WNOHANG)
                if pid:
                    break
                if stopping():
                    os.kill(webhook_pid, signal.SIGTERM)
                    _, status = os.waitpid(webhook_pid, 0)
                    break
                time.sleep(0.5)
            if status:
                console.print(f"[red]the webhook's process ended with wait status {status}[/]")
            for raw in lines.read_text().splitlines():
                line = json.loads(raw)
                if "rss" in line:
                    rss_start = rss_warm = line["rss"]
                if "rss_end" in line:
                    rss_end = line["rss_end"]
                if "unbuilt" in line:
                    unbuilt.append(f"seed {line['unbuilt']}: {line['error']}")
                if "seed" not in line:
                    continue
                record("webhook", line["kind"], line["seconds"], line["label"])
                growth["webhook"] += line["growth"]
                if "rss_warm" in line:
                    rss_warm = line["rss_warm"]
                if "bad" in line:
                    what, detail, where = line["bad"]
                    bad.append((what, detail, Path(where)))
    elapsed = time.perf_counter() - start
    cpu = os.times()
    cpu_s = sum(
        getattr(cpu, k) - getattr(cpu_start, k)
        for k in ("user", "system", "children_user", "children_system")
    )

    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    ran = sum(sum(c.values()) for c in counts.values())
    stopped = f" (stopped early: {ran:,} of {args.n:,})" if ran < args.n else ""
    title = (
        f"{ran} mutated inputs{stopped}, seed {args.seed}, {elapsed:.0f} s ({ran / elapsed:.1f} inputs/s),"
        f" CPU {cpu_s:.0f} s, load {load}"
    )
    table = Table(title=title)
    columns = ("entry point", "inputs tried", "clean errors", "accepted", "closed", "crashes", "hangs")
    memory = "RSS growth" if args.in_process else "RSS growth / child's peak"
    for column in (*columns, "max latency", memory):
        table.add_column(column, justify="left" if column == "entry point" else "right")
    total: Counter[str] = Counter()
    for entry, c in counts.items():
        total += c
        mem = (
            f"{growth[entry]:+.1f} MiB"
            if args.in_process or entry == "webhook"
            else f"peak +{peak[entry]:.0f} MiB"
        )
        table.add_row(
            entry,
            str(sum(c.values())),
            *(str(c[k]) for k in KINDS),
            f"{latency[entry]:.2f} s",
            mem,
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
    where = "" if args.in_process else " (the webhook's process)"
    console.print(
        f"RSS{where}: {rss_start:.0f} MiB at start, {rss_warm:.0f} MiB after the first tenth,"
        f" {rss_end:.0f} MiB at the end"
    )
    console.print(f"slowest input: {slowest[0]:.2f} s ({slowest[1]})")
    if unbuilt:
        console.print(f"[yellow]{len(unbuilt)} webhook cases the harness could not build[/]: {unbuilt[:3]}")
    for what, detail, case in bad[: args.show]:
        console.print(f"\n[bold]{what}[/]  ({case})")
        console.print(f"  {detail}")
    if bad:
        console.print(f"\nreproductions: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
