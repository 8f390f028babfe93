#!/usr/bin/env python3
"""kubespread's scheduling throughput against kube-scheduler's reference figures.

Generates the inputs of ../shared/bench with its gen.py into a cache folder (never the
repository), runs ``kubespread bench`` on each in a fresh process ``--runs`` times, takes the
median pods/s, checks every placement against ../shared/bench/expected/, and prints:

* the workload table: median pods/s, kube-scheduler's figure, ratio, placements identical;
* the timing overhead table: every workload run ``--runs`` times timed (the default, per-plugin
  timings kept) and as many times ``--no-timings``, alternating which goes first; median pods/s
  of each, their range, and the overhead (how much longer a timed cycle takes) as the median of
  the pairs' overheads with their range, since the machine is shared and noisy; then one
  ``bench --overhead`` run, each cycle run twice on the same state (timed and untimed, which
  first alternating): the median per cycle of how much longer the timed one took, and the
  same over the sums, figures that other processes' noise sways far less than whole runs;
* where the time goes: per extension point and plugin, the share of the cycles' time on each
  workload (``bench --by-plugin`` of its median timed run);
* two scaling tables for ``spread``: 0, 10k, 50k and 100k existing pods at 5,000 nodes, and
  500, 1,000, 5,000 and 10,000 nodes with none, so the cost curve is visible.

    .venv/bin/python benchmarks/run.py                  # everything
    .venv/bin/python benchmarks/run.py --only workloads --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
SHARED_BENCH = REPO.parent / "shared" / "bench"
EXISTING_STEPS = (0, 10_000, 50_000, 100_000)
NODE_STEPS = (500, 1_000, 5_000, 10_000)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)


@dataclass(frozen=True)
class Workload:
    name: str
    gen_args: tuple[str, ...]  # gen.py's arguments, without -o
    kube_pods_per_second: float | None  # None: no reference figure
    expected: Path | None


def reference_workloads(bench_dir: Path) -> list[Workload]:
    """The table of ../shared/bench/README.md: name, gen.py command, kube-scheduler's pods/s."""
    text = (bench_dir / "README.md").read_text()
    row = re.compile(r"^\|\s*(\w+)\s*\|\s*`python gen\.py ([^`]+?) -o \S+`\s*\|\s*([\d.]+)", re.M)
    found = []
    for name, args, figure in row.findall(text):
        expected = bench_dir / "expected" / f"{name}.placements.json"
        found.append(
            Workload(name, tuple(shlex.split(args)), float(figure), expected if expected.exists() else None)
        )
    if not found:
        sys.exit(f"error: no workload table found in {bench_dir / 'README.md'}")
    return found


def cache_dir(arg: str | None) -> Path:
    base = (
        Path(arg)
        if arg
        else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubespread-bench"
    )
    base.mkdir(parents=True, exist_ok=True)
    return base


def generate(bench_dir: Path, cache: Path, args: tuple[str, ...]) -> Path:
    """The input file, generated once per distinct argument list."""
    out = cache / ("_".join(a.lstrip("-") for a in args) + ".json")
    if not out.exists():
        console.print(f"[dim]generating {out.name}[/]")
        tmp = out.with_suffix(".tmp")
        subprocess.run([sys.executable, str(bench_dir / "gen.py"), *args, "-o", str(tmp)], check=True)
        tmp.rename(out)
    return out


def kubespread_command() -> list[str]:
    exe = Path(sys.executable).with_name("kubespread")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kubespread"]


def bench_once(input_path: Path, placements: Path | None, *extra: str) -> dict:
    cmd = [*kubespread_command(), "bench", str(input_path), *extra]
    if placements is not None:
        cmd += ["--placements", str(placements)]
    # with its bytecode written, as an installed kubespread has it: a module the first cycles
    # import would otherwise be compiled inside the timed loop on every run (a third of the
    # pods/s at the default configuration, where a run lasts under a second)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


@dataclass
class Measured:
    runs: list[dict]
    identical: bool | None
    #: the --no-timings runs, each alternating with the timed run of the same index
    untimed: list[dict] = field(default_factory=list)
    #: one ``bench --overhead`` run (each cycle timed and untimed in turn)
    paired: dict | None = None

    @property
    def median(self) -> float:
        return statistics.median(r["podsPerSecond"] for r in self.runs)

    def spread(self) -> str:
        values = [r["podsPerSecond"] for r in self.runs]
        return f"{min(values):.0f}-{max(values):.0f}" if len(values) > 1 else ""

    def median_of(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs)

    def overheads(self) -> list[float]:
        """Per alternating pair, how much longer the timed run's cycles took, in %."""
        return [
            100 * (off["podsPerSecond"] / on["podsPerSecond"] - 1)
            for on, off in zip(self.runs, self.untimed, strict=True)
        ]

    def median_run(self) -> dict:
        """The timed run with the median pods/s (the lower middle one for an even count)."""
        ranked = sorted(self.runs, key=lambda r: r["podsPerSecond"])
        return ranked[(len(ranked) - 1) // 2]


def measure(
    input_path: Path, runs: int, expected: Path | None, cache: Path, *, untimed: bool = False
) -> Measured:
    """``runs`` runs of ``bench`` (timed, --by-plugin when ``untimed``); with ``untimed``, as many
    --no-timings runs, alternating which of the pair goes first."""
    results: list[dict] = []
    plain: list[dict] = []
    identical: bool | None = None if expected is None else True
    for i in range(runs):
        modes = [("on", ("--by-plugin",)), ("off", ("--no-timings",))] if untimed else [("on", ())]
        for mode, extra in modes if i % 2 == 0 else modes[::-1]:
            placements = cache / f"{input_path.stem}.run{i}.{mode}.placements.json"
            got = bench_once(input_path, placements if expected is not None else None, *extra)
            (results if mode == "on" else plain).append(got)
            if expected is not None:
                same = json.loads(placements.read_text()) == json.loads(expected.read_text())
                identical = identical and same
            label = f" timings {mode}" if untimed else ""
            console.print(f"[dim]  {input_path.stem} run {i + 1}{label}: {got['podsPerSecond']} pods/s[/]")
    paired = None
    if untimed:
        paired = bench_once(input_path, None, "--overhead")
        console.print(f"[dim]  {input_path.stem} paired cycles: {paired['overhead']}[/]")
    return Measured(results, identical, plain, paired)


def workload_table(workloads: list[Workload], measured: dict[str, Measured], runs: int) -> Table:
    t = Table(title=f"kubespread bench, 5,000 nodes, 2,000 pods in sequence (median of {runs})")
    for col in ("workload", "pods/s", "range", "kube-scheduler", "ratio", "identical", "load s", "peak MiB"):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for w in workloads:
        m = measured[w.name]
        ratio = f"{m.median / w.kube_pods_per_second:.1f}x" if w.kube_pods_per_second else "-"
        ident = "-" if m.identical is None else ("yes" if m.identical else "[red]NO[/]")
        t.add_row(
            w.name,
            f"{m.median:.0f}",
            m.spread(),
            f"{w.kube_pods_per_second:.0f}",
            ratio,
            ident,
            f"{m.median_of('loadSeconds'):.2f}",
            f"{m.median_of('peakMemoryMiB'):.0f}",
        )
    return t


def overhead_table(workloads: list[Workload], measured: dict[str, Measured], runs: int) -> Table:
    t = Table(
        title=f"timing overhead: {runs} timed (on) and {runs} untimed (off) runs alternating, medians; "
        "runs: the median of each pair's overhead, pairs: their range; cycles: each cycle timed and "
        "untimed in turn (bench --overhead), the median per cycle, sums: over all cycles",
        title_justify="left",
    )
    columns = ("workload", "on pods/s", "range", "off pods/s", "range", "runs", "pairs", "cycles", "sums")
    for col in columns:
        t.add_column(col, justify="left" if col == "workload" else "right")
    for w in workloads:
        m = measured[w.name]
        pairs = m.overheads()
        off = statistics.median(r["podsPerSecond"] for r in m.untimed)
        values = [r["podsPerSecond"] for r in m.untimed]
        t.add_row(
            w.name,
            f"{m.median:.0f}",
            m.spread(),
            f"{off:.0f}",
            f"{min(values):.0f}-{max(values):.0f}" if len(values) > 1 else "",
            f"{statistics.median(pairs):+.1f}%",
            f"{min(pairs):+.0f}..{max(pairs):+.0f}%" if len(pairs) > 1 else "",
            f"{m.paired['overhead']['medianPercent']:+.1f}%" if m.paired else "",
            f"{m.paired['overhead']['percent']:+.1f}%" if m.paired else "",
        )
    return t


def by_plugin_table(workloads: list[Workload], measured: dict[str, Measured]) -> Table:
    """Share of the cycles' time per extension point and plugin (and the framework's rows),
    one column per workload, from each workload's median timed run."""
    per = {w.name: measured[w.name].median_run()["byPlugin"] for w in workloads}
    keys: list[tuple[str, str]] = []
    for by in per.values():
        for r in by["rows"]:
            if (r["extensionPoint"], r["plugin"]) not in keys:
                keys.append((r["extensionPoint"], r["plugin"]))
    t = Table(title="where the cycles' time goes: share of the cycles' time (median timed run)")
    t.add_column("extension point")
    t.add_column("plugin")
    for w in workloads:
        t.add_column(w.name, justify="right")
    shares = {
        name: {(r["extensionPoint"], r["plugin"]): r["share"] for r in by["rows"]} for name, by in per.items()
    }
    for key in keys:
        cells = [shares[w.name].get(key) for w in workloads]
        t.add_row(*key, *("-" if c is None else f"{100 * c:.1f}%" for c in cells))
    for label, part in (
        ("plugins", "pluginMicroseconds"),
        ("framework", "frameworkMicroseconds"),
        ("in no row", "otherMicroseconds"),
    ):
        shares_ = [100 * per[w.name][part] / per[w.name]["cycleMicroseconds"] for w in workloads]
        t.add_row(f"[bold]{label}[/]", "", *(f"{v:.1f}%" for v in shares_))
    pods = [measured[w.name].median_run() for w in workloads]
    per_pod = [
        per[w.name]["cycleMicroseconds"] / max(r["scheduled"] + r["unschedulable"], 1)
        for w, r in zip(workloads, pods, strict=True)
    ]
    t.add_row("[bold]cycle µs per pod[/]", "", *(f"{v:.0f}" for v in per_pod))
    return t


def scaling_table(title: str, label: str, rows: list[tuple[int, Measured]]) -> Table:
    t = Table(title=title)
    for col in (label, "pods/s", "ms/pod", "load s", "peak MiB"):
        t.add_column(col, justify="right")
    for value, m in rows:
        t.add_row(
            f"{value:,}",
            f"{m.median:.0f}",
            f"{1000 / m.median:.2f}",
            f"{m.median_of('loadSeconds'):.2f}",
            f"{m.median_of('peakMemoryMiB'):.0f}",
        )
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs per workload (median); default 3")
    ap.add_argument("--scaling-runs", type=int, default=3, help="runs per scaling point; default 3")
    ap.add_argument("--only", choices=("workloads", "scaling"), help="run one part only")
    ap.add_argument("--cache", help="where inputs go (default: $XDG_CACHE_HOME/kubespread-bench)")
    ap.add_argument("--bench-dir", default=str(SHARED_BENCH), help="../shared/bench")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    a = ap.parse_args()
    bench_dir, cache = Path(a.bench_dir), cache_dir(a.cache)
    report: dict = {}
    failed = False

    if a.only in (None, "workloads"):
        workloads = reference_workloads(bench_dir)
        measured = {}
        for w in workloads:
            path = generate(bench_dir, cache, w.gen_args)
            measured[w.name] = measure(path, a.runs, w.expected, cache, untimed=True)
        console.print(workload_table(workloads, measured, a.runs))
        console.print(overhead_table(workloads, measured, a.runs))
        console.print(by_plugin_table(workloads, measured))
        report["workloads"] = {
            n: {"runs": m.runs, "untimedRuns": m.untimed, "paired": m.paired, "identical": m.identical}
            for n, m in measured.items()
        }
        failed = any(m.identical is False for m in measured.values())

    if a.only in (None, "scaling"):
        by_existing = []
        for existing in EXISTING_STEPS:
            path = generate(bench_dir, cache, ("spread", "--existing", str(existing)))
            by_existing.append((existing, measure(path, a.scaling_runs, None, cache)))
        by_nodes = []
        for nodes in NODE_STEPS:
            path = generate(bench_dir, cache, ("spread", "--nodes", str(nodes)))
            by_nodes.append((nodes, measure(path, a.scaling_runs, None, cache)))
        console.print(
            scaling_table("spread at 5,000 nodes, by pods already running", "existing pods", by_existing)
        )
        console.print(scaling_table("spread with no pods running, by cluster size", "nodes", by_nodes))
        report["scaling"] = {
            "existing": {str(v): m.runs for v, m in by_existing},
            "nodes": {str(v): m.runs for v, m in by_nodes},
        }

    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    if failed:
        console.print("[red]placements differ from ../shared/bench/expected/[/]")
        sys.exit(1)


if __name__ == "__main__":
    main()
