#!/usr/bin/env python3
"""``simulate`` and ``schedule`` end to end: pods placed per second, seconds per phase, memory.

(a) A generated cluster (``--nodes``, default 5,000, over ``--zones`` zones, default 10) and
``--deployments`` Deployments (default 20) of ``--replicas`` replicas (default 1,000), each
with a zone spread (maxSkew 1, DoNotSchedule), a hostname spread (maxSkew 1, ScheduleAnyway),
both with ``matchLabelKeys: [pod-template-hash]`` and ``nodeTaintsPolicy: Honor``, and
required hostname anti-affinity against its own pods. The scenario is run as ``kubespread
simulate`` runs one (written as a YAML file, loaded and checked, simulated with the default
controllers and admission chain, a snapshot after every step, then the ``-o json`` document
built), in three phases:

* ``create``: one ``apply`` step with every Deployment;
* ``rollout``: one ``apply`` step with every Deployment's image changed (RollingUpdate, 25%
  surge and unavailable);
* ``zone failure``: every node of the first zone fails (one ``node`` step with a
  selector; ``--fail-per-node``: one step per node, a snapshot after each, as scenarios had
  to before), then ``advance: 6m``: the taint manager evicts their pods after 300 s and the replacements land
  in the other zones.

The table shows, per phase, the wall seconds, the pods placed (Scheduled events) and pods/s;
``total`` is end to end (loading, settling, every step and the output document). Peak memory
is the process's maximum resident set (``resource.getrusage``).

(b) The bundled examples: ``schedule`` of ``examples/snapshot/`` (the kubectl dump and
``checkout.yaml``) and ``simulate`` of every scenario in ``examples/scenarios/``, each with
its wall seconds and pods placed.

(c) The per-pod cost as pods accumulate: ``--scaling`` places ``--scaling-pods`` pods
(default 1,000) into clusters already running 1,000 ... 100,000 pods on the same nodes, and
prints milliseconds per pod for ``schedule``'s path (the admission chain, the ReplicaSet
controller, the scheduler, the binder) at each size, with the resident memory after loading
and the process's peak so far (run ``--only scaling`` for figures of its own).

(d) Memory: ``--memory`` runs ``kubespread schedule`` and ``kubespread simulate`` as commands
(a fresh process each, output discarded) on ``--memory-nodes`` nodes (default 5,000) running
``--memory-running`` pods (default 100,000), adding a Deployment of ``--memory-pods``
replicas (simulate then rolls it out and fails a node), and prints each one's wall seconds
and peak resident memory.

    .venv/bin/python benchmarks/scenario.py                      # (a) at full size, then (b)
    .venv/bin/python benchmarks/scenario.py --scale 0.1          # 500 nodes, 20 x 100 replicas
    .venv/bin/python benchmarks/scenario.py --only scenario --scale 0.2 --profile 30   # per phase
    .venv/bin/python benchmarks/scenario.py --only examples
    .venv/bin/python benchmarks/scenario.py --only scaling --scaling-nodes 5000
    .venv/bin/python benchmarks/scenario.py --only memory      # (d) 5,000 nodes x 100,000 pods
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)


def peak_mib() -> float:
    """The process's peak resident set so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_mib() -> float:
    """The process's resident set now, in MiB."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except OSError:
        return float("nan")
    return pages * resource.getpagesize() / 2**20


# ------------------------------------------------------------------ the generated cluster


def node(name: str, zone: str, *, cpu: str = "32", memory: str = "128Gi", pods: str = "110") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
        },
    }


def zone_name(i: int) -> str:
    return f"zone-{i:02d}"


def nodes(count: int, zones: int) -> list[dict]:
    """``count`` nodes dealt round-robin over ``zones`` zones."""
    return [node(f"node-{i:05d}", zone_name(i % zones)) for i in range(count)]


def deployment(name: str, replicas: int, image: str) -> dict:
    labels = {"app": name}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": labels},
            "matchLabelKeys": ["pod-template-hash"],
            # a failed zone's nodes (tainted unreachable) leave the count, so its pods'
            # replacements may spread over the zones left
            "nodeTaintsPolicy": "Honor",
        }
        for key, when in ((ZONE, "DoNotSchedule"), (HOST, "ScheduleAnyway"))
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        }
                    ],
                    "topologySpreadConstraints": spread,
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": {"matchLabels": labels}, "topologyKey": HOST}
                            ]
                        }
                    },
                },
            },
        },
    }


@dataclass(frozen=True)
class Size:
    nodes: int
    zones: int
    deployments: int
    replicas: int

    @property
    def label(self) -> str:
        return f"{self.nodes:,} nodes, {self.deployments} x {self.replicas:,} replicas"


def scenario_files(size: Size, directory: Path, *, per_node: bool = False) -> Path:
    """Write the scenario (a) and its cluster into ``directory``; the scenario's path.
    ``per_node``: the zone fails by one ``node`` step per node (as before node steps took a
    selector: a snapshot after each), not by one step with a selector."""
    (directory / "nodes.yaml").write_text(yaml.safe_dump_all(nodes(size.nodes, size.zones)))
    names = [f"app-{i:02d}" for i in range(size.deployments)]
    (directory / "create.yaml").write_text(
        yaml.safe_dump_all([deployment(n, size.replicas, "app:1") for n in names])
    )
    (directory / "rollout.yaml").write_text(
        yaml.safe_dump_all([deployment(n, size.replicas, "app:2") for n in names])
    )
    fail: list[dict[str, Any]] = [{"node": {"selector": f"{ZONE}={zone_name(0)}", "action": "fail"}}]
    if per_node:
        zone = [
            n["metadata"]["name"]
            for n in nodes(size.nodes, size.zones)
            if n["metadata"]["labels"][ZONE] == zone_name(0)
        ]
        fail = [{"node": {"name": name, "action": "fail"}} for name in zone]
    steps: list[dict[str, Any]] = [
        {"apply": "create.yaml"},
        {"apply": "rollout.yaml"},
        *fail,
        {"advance": "6m"},
    ]
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "bench"},
        "seed": 1,
        "cluster": ["nodes.yaml"],
        "steps": steps,
    }
    path = directory / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


# ------------------------------------------------------------------ measuring


@dataclass
class Phase:
    name: str
    seconds: float = 0.0
    placed: int = 0
    #: this process's CPU seconds (``time.process_time``): comparable when the machine is shared
    cpu: float = 0.0

    @property
    def rate(self) -> float | None:
        return self.placed / self.seconds if self.placed and self.seconds > 0 else None


@dataclass
class Run:
    phases: list[Phase] = field(default_factory=list)
    total_seconds: float = 0.0
    #: this process's CPU seconds end to end
    total_cpu: float = 0.0
    placed: int = 0
    peak_mib: float = 0.0
    running_pods: int = 0
    #: the 1-minute load average when the run ended
    load: float = 0.0


def median_run(runs: list[Run]) -> Run:
    """Per phase and in total, the median seconds and CPU seconds of ``runs`` (of one scenario:
    the same phases, the same pods placed)."""
    first = runs[0]
    phases = [
        Phase(
            ph.name,
            statistics.median(r.phases[i].seconds for r in runs),
            ph.placed,
            statistics.median(r.phases[i].cpu for r in runs),
        )
        for i, ph in enumerate(first.phases)
    ]
    return Run(
        phases,
        statistics.median(r.total_seconds for r in runs),
        statistics.median(r.total_cpu for r in runs),
        first.placed,
        max(r.peak_mib for r in runs),
        first.running_pods,
        statistics.median(r.load for r in runs),
    )


def phase_of(action: str, index: int) -> str:
    if index == 0:
        return "create"
    if index == 1:
        return "rollout"
    return "zone failure"


def run_scenario(path: Path, profiles: dict[str, cProfile.Profile] | None = None) -> Run:
    """Load and simulate the scenario as ``kubespread simulate -o json`` does (the document
    built, not printed), timing each phase by the steps' start. With ``profiles`` (filled in
    here), each phase runs under a profiler of its own, by phase name."""
    from kubespread.controllers import default_controllers
    from kubespread.sim.run import simulate
    from kubespread.sim.scenario import load_scenario

    run = Run()
    placed = [0]
    clock: dict[str, Any] = {
        "phase": Phase("load + settle"),
        "start": time.perf_counter(),
        "cpu": time.process_time(),
        "placed": 0,
    }

    def close_phase() -> None:
        ph: Phase = clock["phase"]
        if profiles is not None:
            profiles[ph.name].disable()
        ph.seconds += time.perf_counter() - clock["start"]
        ph.cpu += time.process_time() - clock["cpu"]
        ph.placed += placed[0] - clock["placed"]
        if not run.phases or run.phases[-1] is not ph:
            run.phases.append(ph)

    def open_phase(name: str) -> None:
        close_phase()
        ph = run.phases[-1] if run.phases[-1].name == name else Phase(name)
        clock.update(phase=ph, start=time.perf_counter(), cpu=time.process_time(), placed=placed[0])
        if profiles is not None:
            profiles.setdefault(name, cProfile.Profile()).enable()

    def on_step(step: Any) -> None:
        open_phase(phase_of(step.action, step.index))

    def on_decision(decision: Any) -> None:
        if decision.selected is not None:
            placed[0] += 1

    t0, cpu0 = time.perf_counter(), time.process_time()
    if profiles is not None:
        profiles.setdefault("load + settle", cProfile.Profile()).enable()
    scenario = load_scenario(path)
    result = simulate(scenario, controllers=default_controllers(), on_step=on_step, on_decision=on_decision)
    open_phase("output")
    doc = result.to_dict()
    close_phase()
    run.total_seconds = time.perf_counter() - t0
    run.total_cpu = time.process_time() - cpu0
    run.load = os.getloadavg()[0]
    run.placed = placed[0]
    run.running_pods = sum(1 for p in doc["final"]["pods"] if p["node"])
    run.peak_mib = peak_mib()
    return run


def print_profiles(profiles: dict[str, cProfile.Profile], top: int) -> None:
    """Each phase's ``top`` functions by own time, then by cumulative time."""
    for name, prof in profiles.items():
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(order).print_stats(top)
            body = out.getvalue()
            table = body[body.find("   ncalls") :] if "   ncalls" in body else body
            console.print(f"[bold]profile of {name}, by {order}[/]", markup=True)
            print(table.rstrip())


def phase_table(title: str, run: Run) -> Table:
    """Per phase: wall seconds, pods placed, pods per wall second, CPU seconds and pods per CPU
    second (the figure a shared machine's load disturbs least); ``total`` is end to end."""
    t = Table(title=title)
    for col in ("phase", "seconds", "pods placed", "pods/s", "CPU s", "pods/s CPU"):
        t.add_column(col, justify="left" if col == "phase" else "right")

    def per(placed: int, seconds: float) -> str:
        return f"{placed / seconds:.0f}" if placed and seconds > 0 else "-"

    for ph in run.phases:
        t.add_row(
            ph.name,
            f"{ph.seconds:.2f}",
            f"{ph.placed:,}",
            per(ph.placed, ph.seconds),
            f"{ph.cpu:.2f}",
            per(ph.placed, ph.cpu),
        )
    t.add_row(
        "total",
        f"{run.total_seconds:.2f}",
        f"{run.placed:,}",
        per(run.placed, run.total_seconds),
        f"{run.total_cpu:.2f}",
        per(run.placed, run.total_cpu),
        style="bold",
    )
    return t


# ------------------------------------------------------------------ (b) the examples


@dataclass
class ExampleRun:
    name: str
    command: str
    seconds: float
    placed: int


def run_examples() -> list[ExampleRun]:
    from kubespread.controllers import default_controllers
    from kubespread.io.loader import load
    from kubespread.sim.placement import place
    from kubespread.sim.run import simulate
    from kubespread.sim.scenario import load_scenario

    runs = []
    t0 = time.perf_counter()
    snapshot = EXAMPLES / "snapshot"
    manifests = load([snapshot / "cluster.yaml", snapshot / "checkout.yaml"])
    result = place(manifests)
    placed = sum(1 for p in result.placements if p.node)
    runs.append(ExampleRun("snapshot + checkout", "schedule", time.perf_counter() - t0, placed))
    for path in sorted((EXAMPLES / "scenarios").glob("*.yaml")):
        if "kind: Scenario" not in path.read_text():
            continue
        count = [0]

        def on_decision(decision: Any, count: list[int] = count) -> None:
            if decision.selected is not None:
                count[0] += 1

        t0 = time.perf_counter()
        res = simulate(load_scenario(path), controllers=default_controllers(), on_decision=on_decision)
        res.to_dict()
        runs.append(ExampleRun(path.stem, "simulate", time.perf_counter() - t0, count[0]))
    return runs


def examples_table(runs: list[ExampleRun]) -> Table:
    t = Table(title="the bundled examples, end to end")
    for col in ("example", "command", "seconds", "pods placed"):
        t.add_column(col, justify="left" if col in ("example", "command") else "right")
    for r in runs:
        t.add_row(r.name, r.command, f"{r.seconds:.3f}", f"{r.placed:,}")
    return t


# ------------------------------------------------------------------ (c) per-pod cost by pods running


def running_pod(i: int, node_name: str, app: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{app}-{i:06d}", "namespace": "default", "labels": {"app": app}},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "10m"}}}],
        },
        "status": {"phase": "Running"},
    }


def scaling_point(node_count: int, zones: int, running: int, new_pods: int) -> dict[str, float]:
    """``schedule`` of a Deployment of ``new_pods`` replicas onto ``node_count`` nodes already
    running ``running`` pods (of 20 apps): ms per new pod from its first placement to the last
    (admission, controllers, scheduler, binder), the whole command's seconds (loading the
    cluster, settling, snapshots), resident MiB once the input is loaded, and the peak."""
    from kubespread.io.loader import load_data
    from kubespread.sim.placement import place

    objs = nodes(node_count, zones)
    names = [n["metadata"]["name"] for n in objs]
    objs += [running_pod(i, names[i % node_count], f"run-{i % 20:02d}") for i in range(running)]
    objs.append(deployment("new", new_pods, "app:1"))
    manifests = load_data(objs, "<generated>")
    del objs
    gc.collect()
    loaded_mib = current_mib()
    stamps: list[tuple[float, int]] = []  # (when, pods placed): every 100 pods placed

    def on_step(done: int, total: int, what: str) -> None:
        if what.endswith(" pods placed"):
            stamps.append((time.perf_counter(), int(what.rsplit(": ", 1)[1].split()[0].replace(",", ""))))

    t0 = time.perf_counter()
    result = place(manifests, on_step=on_step)
    seconds = time.perf_counter() - t0
    placed = sum(1 for p in result.placements if p.node)
    if len(stamps) >= 2:
        (first, n0), (last, n1) = stamps[0], stamps[-1]
        ms_per_pod = 1000 * (last - first) / (n1 - n0)
    else:
        ms_per_pod = 1000 * seconds / max(placed, 1)
    return {
        "running": running,
        "msPerPod": ms_per_pod,
        "commandSeconds": seconds,
        "loadedMiB": loaded_mib,
        "peakMiB": peak_mib(),
    }


# ------------------------------------------------------------------ (d) the commands' memory


def kubespread_command() -> list[str]:
    exe = Path(sys.executable).with_name("kubespread")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "kubespread"]


#: runs a command and reports its peak resident set: a fresh, small process in between, since
#: Linux carries the peak of a process's memory at fork into its child's ru_maxrss across exec
_PEAK_WRAPPER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(usage.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def child_run(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, the command's own peak resident MiB, exit code), its output discarded."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PEAK_WRAPPER, *cmd], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    lines = proc.stderr.strip().splitlines()
    if proc.returncode != 0 or not lines or not lines[-1].isdigit():
        console.print(f"[red]{' '.join(cmd[-4:])} failed:[/] {proc.stderr[-2000:]}")
        return seconds, float("nan"), proc.returncode or 1
    return seconds, int(lines[-1]) / 1024, proc.returncode


def memory_rows(node_count: int, zones: int, running: int, new_pods: int, output: str) -> list[dict]:
    """``kubespread schedule`` and ``kubespread simulate`` on ``node_count`` nodes already
    running ``running`` pods, each adding a Deployment of ``new_pods`` (simulate then rolls it
    out and fails one node), in a fresh process each: wall seconds and peak resident memory."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="kubespread-memory-") as tmp:
        d = Path(tmp)
        objs = nodes(node_count, zones)
        names = [n["metadata"]["name"] for n in objs]
        objs += [running_pod(i, names[i % node_count], f"run-{i % 20:02d}") for i in range(running)]
        (d / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
        del objs
        (d / "new.yaml").write_text(yaml.safe_dump(deployment("new", new_pods, "app:1")))
        (d / "rollout.yaml").write_text(yaml.safe_dump(deployment("new", new_pods, "app:2")))
        scenario = {
            "apiVersion": "kubespread.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "memory"},
            "seed": 1,
            "cluster": ["cluster.json"],
            "steps": [
                {"apply": "new.yaml"},
                {"apply": "rollout.yaml"},
                {"node": {"name": names[0], "action": "fail"}},
            ],
        }
        (d / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
        ks = kubespread_command()
        for command, cmd in (
            ("schedule", [*ks, "schedule", "-f", str(d / "cluster.json"), "-f", str(d / "new.yaml")]),
            ("simulate", [*ks, "simulate", str(d / "scenario.yaml"), "--no-progress"]),
        ):
            seconds, peak, code = child_run([*cmd, "-o", output])
            rows.append({"command": command, "seconds": seconds, "peakMiB": peak, "exitCode": code})
    return rows


# ------------------------------------------------------------------ main


@contextmanager
def timed(label: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    console.print(f"[dim]{label}: {time.perf_counter() - t0:.1f}s[/]")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply nodes and replicas (default 1)")
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--zones", type=int, default=10)
    ap.add_argument("--deployments", type=int, default=20)
    ap.add_argument("--replicas", type=int, default=1_000)
    ap.add_argument(
        "--fail-per-node",
        action="store_true",
        help="fail the zone with one node step per node (a snapshot after each) instead of one selector step",
    )
    ap.add_argument("--runs", type=int, default=1, help="run (a) this many times: medians (default 1)")
    ap.add_argument("--only", choices=("scenario", "examples", "scaling", "memory"), help="run one part only")
    ap.add_argument(
        "--memory",
        action="store_true",
        help="also run (d): schedule and simulate as commands on --memory-nodes nodes running "
        "--memory-running pods, with their peak memory",
    )
    ap.add_argument("--memory-nodes", type=int, default=5_000)
    ap.add_argument("--memory-running", type=int, default=100_000)
    ap.add_argument("--memory-pods", type=int, default=1_000, help="the new Deployment's replicas")
    ap.add_argument("--memory-output", default="table", choices=("table", "json", "yaml"))
    ap.add_argument("--scaling", action="store_true", help="also run (c), the per-pod cost by pods running")
    ap.add_argument("--scaling-nodes", type=int, default=5_000)
    ap.add_argument("--scaling-pods", type=int, default=1_000)
    ap.add_argument(
        "--scaling-running",
        default="1000,10000,100000",
        help="comma-separated pods already running (default 1000,10000,100000)",
    )
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    ap.add_argument(
        "--profile",
        type=int,
        metavar="N",
        help="run (a) under cProfile, a profiler per phase, and print each phase's N costliest "
        "functions by own time (profiling slows the run: its figures are not comparable)",
    )
    a = ap.parse_args(argv)
    from kubespread.api.model import collect_less

    collect_less()  # as the executables do
    report: dict[str, Any] = {}

    if a.only in (None, "scenario"):
        size = Size(
            max(a.zones, round(a.nodes * a.scale)),
            a.zones,
            a.deployments,
            max(1, round(a.replicas * a.scale)),
        )
        runs = []
        for i in range(a.runs):
            with tempfile.TemporaryDirectory(prefix="kubespread-scenario-") as tmp:
                path = scenario_files(size, Path(tmp), per_node=a.fail_per_node)
                profiles: dict[str, cProfile.Profile] | None = {} if a.profile else None
                runs.append(run_scenario(path, profiles))
                if profiles and a.profile:
                    print_profiles(profiles, a.profile)
            # as if each run were its own executable: what this one froze (gc_paused, in a
            # command's process) collectable again, or every run's peak memory grows by the last
            gc.unfreeze()
            gc.collect()
            r = runs[-1]
            console.print(
                f"run {i + 1}: {r.total_seconds:.1f} s wall / {r.total_cpu:.1f} s CPU, "
                + ", ".join(f"{ph.name} {ph.seconds:.1f} / {ph.cpu:.1f}" for ph in r.phases)
                + f" (load {r.load:.1f})"
            )
        run = median_run(runs)
        title = f"(a) simulate: {size.label}, {size.zones} zones" + (
            f", medians of {a.runs}" if a.runs > 1 else ""
        )
        console.print(phase_table(title, run))
        console.print(
            f"end to end {run.placed / run.total_seconds:.0f} pods/s, "
            f"{run.placed / run.total_cpu:.0f} per CPU second; {run.running_pods:,} pods running at "
            f"the end; peak memory {run.peak_mib:.0f} MiB "
            f"(load {run.load:.1f})"
        )
        report["scenario"] = {
            "size": size.__dict__,
            "phases": [ph.__dict__ for ph in run.phases],
            "totalSeconds": run.total_seconds,
            "totalCpu": run.total_cpu,
            "runs": a.runs,
            "load": [r.load for r in runs],
            "placed": run.placed,
            "peakMiB": run.peak_mib,
        }

    if a.only in (None, "examples"):
        runs = run_examples()
        console.print(examples_table(runs))
        report["examples"] = [r.__dict__ for r in runs]

    if a.only == "scaling" or a.scaling:
        t = Table(
            title=f"(c) schedule: {a.scaling_pods:,} new pods on {a.scaling_nodes:,} nodes, by pods running"
        )
        for col in ("running pods", "ms/pod", "command s", "MiB after load", "peak MiB"):
            t.add_column(col, justify="right")
        rows = []
        for running in (int(x) for x in a.scaling_running.split(",")):
            row = scaling_point(a.scaling_nodes, a.zones, running, a.scaling_pods)
            t.add_row(
                f"{running:,}",
                f"{row['msPerPod']:.2f}",
                f"{row['commandSeconds']:.2f}",
                f"{row['loadedMiB']:.0f}",
                f"{row['peakMiB']:.0f}",
            )
            rows.append(row)
        console.print(t)
        report["scaling"] = rows

    if a.only == "memory" or a.memory:
        rows = memory_rows(a.memory_nodes, a.zones, a.memory_running, a.memory_pods, a.memory_output)
        title = (
            f"(d) the commands, -o {a.memory_output}: {a.memory_nodes:,} nodes, "
            f"{a.memory_running:,} pods running, {a.memory_pods:,} new"
        )
        t = Table(title=title)
        for col in ("command", "seconds", "peak MiB", "exit"):
            t.add_column(col, justify="left" if col == "command" else "right")
        for row in rows:
            t.add_row(row["command"], f"{row['seconds']:.1f}", f"{row['peakMiB']:.0f}", str(row["exitCode"]))
        console.print(t)
        report["memory"] = rows

    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
