#!/usr/bin/env python3
"""kubespread at kube-scheduler's default configuration against the real scheduler, in one run.

For each workload of ../shared/bench (5,000 nodes, 2,000 pods in sequence), the input is
generated into the cache (never the repository) with a copy whose ``config`` asks for the
real node selection (``percentageOfNodesToScore: 0`` = adaptive, ``parallelism: 1``). Then:

* ``kubespread bench`` on the copy (sampling, node tree order, rotating start, score heap)
  and on the original (every node scored, ties to the smallest name), ``--runs`` times each;
* with ``--k8sreal PATH`` (../shared/oracle/README.md builds it): the real ``SchedulePod`` of
  kube-scheduler v1.35.4 at its default configuration with ``-parallelism 1`` and with kube's
  default ``-parallelism 16``, and with ``-pct 100 -parallelism 16``, as many times;
* placements compared: ours at the default configuration against k8sreal at parallelism 1
  (must be identical, pod for pod) and at parallelism 16 (the same node, the same zone: that
  pick is a race between threads, so only a share agrees).

``--cases large`` does the same for scripts/make_realsched_cases.py's large suite (1,000 to
6,000 shuffled nodes). Figures are medians with their range; the load average is printed,
since the machine is shared.

    .venv/bin/python benchmarks/sampling.py --k8sreal /path/to/k8sreal [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.table import Table
from run import SHARED_BENCH, bench_once, cache_dir, console, generate, reference_workloads

REPO = Path(__file__).resolve().parent.parent
SAMPLED = {"percentageOfNodesToScore": 0, "parallelism": 1}


def sampled_copy(path: Path) -> Path:
    """The input with config asking for kube-scheduler's own node selection."""
    out = path.with_name(path.stem + ".sampled.json")
    if not out.exists():
        doc = json.loads(path.read_text())
        doc["config"] = {**(doc.get("config") or {}), **SAMPLED}
        out.write_text(json.dumps(doc))
    return out


def large_cases(cache: Path) -> list[tuple[str, Path]]:
    """The generator's large suite, written once into the cache."""
    folder = cache / "realsched-large"
    gen = REPO / "scripts" / "make_realsched_cases.py"
    listed = subprocess.run(
        [sys.executable, str(gen), "--list", "--suite", "large"], capture_output=True, text=True, check=True
    )
    names = [json.loads(line)["name"] for line in listed.stdout.splitlines()]
    if not all((folder / f"{n}.input.json").exists() for n in names):
        console.print("[dim]generating the large suite[/]")
        subprocess.run([sys.executable, str(gen), "--suite", "large", "-o", str(folder)], check=True)
    return [(n, folder / f"{n}.input.json") for n in names]


def k8sreal_once(binary: str, path: Path, placements: Path, *flags: str) -> dict[str, Any]:
    cmd = [binary, "-i", str(path), *flags, "-placements", str(placements)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def pct_flags(doc_config: dict[str, Any]) -> tuple[str, ...]:
    pct = doc_config.get("percentageOfNodesToScore", 0)
    return () if not pct else ("-pct", str(pct))


def zones_of(path: Path) -> dict[str, str]:
    doc = json.loads(path.read_text())
    return {
        n["metadata"]["name"]: n["metadata"].get("labels", {}).get("topology.kubernetes.io/zone", "")
        for n in doc["nodes"]
    }


def agreement(
    ours: dict[str, str | None], theirs: dict[str, str | None], zones: dict[str, str]
) -> tuple[int, int, int]:
    """(pods, on the same node, in the same zone)."""
    same_node = sum(1 for k, v in theirs.items() if ours.get(k) == v)
    same_zone = sum(
        1
        for k, v in theirs.items()
        if zones.get(ours.get(k) or "", "?") == zones.get(v or "", "!") or ours.get(k) == v
    )
    return len(theirs), same_node, same_zone


def med(values: list[float]) -> str:
    if not values:
        return "-"
    text = f"{statistics.median(values):.0f}"
    return text + (f" ({min(values):.0f}-{max(values):.0f})" if len(values) > 1 else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each command (median); default 3")
    ap.add_argument(
        "--k8sreal", help="the k8sreal binary (../shared/oracle/README.md); without it, ours only"
    )
    ap.add_argument(
        "--cases", choices=("bench", "large"), default="bench", help="which inputs; default bench"
    )
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--cache", help="where inputs go (default: $XDG_CACHE_HOME/kubespread-bench)")
    ap.add_argument("--bench-dir", default=str(SHARED_BENCH))
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    a = ap.parse_args()
    cache = cache_dir(a.cache)
    if a.cases == "bench":
        inputs = [
            (w.name, generate(Path(a.bench_dir), cache, w.gen_args))
            for w in reference_workloads(Path(a.bench_dir))
        ]
        inputs = [(name, sampled_copy(path)) for name, path in inputs]
    else:
        inputs = large_cases(cache)
    if a.only:
        wanted = set(a.only.split(","))
        inputs = [(n, p) for n, p in inputs if n in wanted]
    load_before = os.getloadavg()
    figures: dict[str, dict[str, Any]] = {}
    for name, path in inputs:
        doc_config = json.loads(path.read_text()).get("config") or {}
        full = path.with_name(path.name.replace(".sampled.json", ".json"))
        row: dict[str, Any] = {"ours": [], "ours100": [], "p1": [], "p16": [], "p16pct100": []}
        ours_pl = cache / f"{name}.ours.placements.json"
        for i in range(a.runs):
            got = bench_once(path, ours_pl, "--no-timings")
            row["ours"].append(got["podsPerSecond"])
            row["evaluated"] = got.get("meanEvaluatedNodes")
            if a.cases == "bench":
                row["ours100"].append(bench_once(full, None, "--no-timings")["podsPerSecond"])
            console.print(f"[dim]  {name} run {i + 1}: ours {got['podsPerSecond']} pods/s[/]")
        ours = json.loads(ours_pl.read_text())
        if a.k8sreal:
            zones = zones_of(path)
            p1_pl, p16_pl = cache / f"{name}.p1.placements.json", cache / f"{name}.p16.placements.json"
            same16: list[tuple[int, int, int]] = []
            for i in range(a.runs):
                r1 = k8sreal_once(a.k8sreal, path, p1_pl, "-parallelism", "1", *pct_flags(doc_config))
                row["p1"].append(r1["podsPerSecond"])
                r16 = k8sreal_once(a.k8sreal, path, p16_pl, "-parallelism", "16", *pct_flags(doc_config))
                row["p16"].append(r16["podsPerSecond"])
                same16.append(agreement(ours, json.loads(p16_pl.read_text()), zones))
                if a.cases == "bench":
                    r100 = k8sreal_once(a.k8sreal, path, cache / f"{name}.p16pct100.json", "-pct", "100")
                    row["p16pct100"].append(r100["podsPerSecond"])
                console.print(
                    f"[dim]  {name} run {i + 1}: k8sreal p1 {r1['podsPerSecond']:.0f}, "
                    f"p16 {r16['podsPerSecond']:.0f}[/]"
                )
            pods, node1, _ = agreement(ours, json.loads(p1_pl.read_text()), zones)
            row["identicalP1"] = f"{node1}/{pods}"
            row["sameNodeP16"] = [round(100 * s[1] / s[0], 1) for s in same16]
            row["sameZoneP16"] = [round(100 * s[2] / s[0], 1) for s in same16]
        figures[name] = row
    load_after = os.getloadavg()

    t = Table(title=f"kube-scheduler's default configuration (adaptive sampling), pods/s, median of {a.runs}")
    for col in (
        "workload",
        "kubespread",
        "k8sreal p1",
        "k8sreal p16",
        "ratio p16",
        "identical p1",
        "same node p16",
        "same zone p16",
    ):
        t.add_column(col, justify="left" if col == "workload" else "right")
    for name, row in figures.items():
        ratio = (
            f"{statistics.median(row['ours']) / statistics.median(row['p16']):.1f}x" if row["p16"] else "-"
        )
        t.add_row(
            name,
            med(row["ours"]),
            med(row["p1"]),
            med(row["p16"]),
            ratio,
            row.get("identicalP1", "-"),
            med(row.get("sameNodeP16", [])) + ("%" if row.get("sameNodeP16") else ""),
            med(row.get("sameZoneP16", [])) + ("%" if row.get("sameZoneP16") else ""),
        )
    console.print(t)
    if a.cases == "bench":
        t100 = Table(title="every node scored (percentageOfNodesToScore 100), pods/s")
        for col in ("workload", "kubespread", "k8sreal pct100 p16", "ratio"):
            t100.add_column(col, justify="left" if col == "workload" else "right")
        for name, row in figures.items():
            ratio = (
                f"{statistics.median(row['ours100']) / statistics.median(row['p16pct100']):.1f}x"
                if row["p16pct100"]
                else "-"
            )
            t100.add_row(name, med(row["ours100"]), med(row["p16pct100"]), ratio)
        console.print(t100)
    console.print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {os.cpu_count()} cores"
    )
    if a.json:
        Path(a.json).write_text(json.dumps({"load": [load_before, load_after], "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
