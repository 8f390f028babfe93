"""Scheduling throughput on a benchmark input (../shared/bench): the incoming pods scheduled
and bound one after another, timing only the scheduling cycles, as kube-scheduler's
reference figures do (snapshot, PreFilter … selection, assume), not parsing.

Every cycle is timed per plugin (scheduler.timings) unless ``timed=False``; the timings of all
cycles are summed into one CycleTimings, the ``byPlugin`` breakdown. Timing costs a few
clock reads per plugin call. Two ways to measure that: whole runs with and without timing
(``benchmarks/run.py`` alternates them), which a shared machine's noise blurs at seconds'
scale; and ``paired``: each cycle run twice on the same state, timed and untimed, which first
alternating, so drift and noise hit both alike (the untimed decision is dropped; it is the
same decision, as the scheduling never depends on the clock). The first pair is left out of
the sums: its first run builds the plugins' caches (72 ms against 1 ms on ``pref``), a cost
the timed run paid alone and that made the sums read 9.5% instead of 4.3%.
"""

from __future__ import annotations

import cProfile
import gc
import json
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates
from kubespread.cluster.state import ClusterState
from kubespread.harness.evaluate import (
    EvaluateError,
    build_cluster,
    incoming_pods,
    input_mode,
    kube_version_of,
    parallelism_note,
    profile_for,
    sampling_of,
    schedule_in_turn,
)
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision, schedule_one
from kubespread.scheduler.selection import NodeOrder
from kubespread.scheduler.timings import CycleTimings, TimingRow

__all__ = ["BenchResult", "peak_rss_kib", "run_bench"]


@dataclass(slots=True)
class BenchResult:
    pods: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    wall_seconds: float = 0.0
    load_seconds: float = 0.0
    nodes: int = 0
    existing_pods: int = 0
    #: pod key → node, None when unschedulable
    placements: dict[str, str | None] = field(default_factory=dict)
    #: every cycle's timings summed; None when the cycles were not timed
    timings: CycleTimings | None = None
    #: with ``paired``: the timed and the untimed runs' cycles, in nanoseconds
    paired_ns: tuple[int, int] | None = None
    #: with ``paired``: the median over cycles of (timed / untimed - 1), in %: what one
    #: preempted cycle (a shared machine) cannot sway as it sways the sums
    paired_median_percent: float | None = None
    #: (percentageOfNodesToScore, parallelism) when the input asked for the real scheduler's
    #: node selection; None: every node scored, smallest-name ties
    sampling: tuple[int, int] | None = None
    #: nodes examined (filtered) and feasible nodes found, summed over scheduled pods
    evaluated_nodes: int = 0
    feasible_nodes: int = 0

    @property
    def pods_per_second(self) -> float:
        return self.pods / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def to_dict(self, *, by_plugin: bool = False) -> dict[str, Any]:
        """The bench's JSON object; ``by_plugin`` adds ``byPlugin`` (``by_plugin_rows``)."""
        rss = peak_rss_kib()
        out: dict[str, Any] = {
            "podsPerSecond": round(self.pods_per_second, 1),
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "wallSeconds": round(self.wall_seconds, 4),
            "loadSeconds": round(self.load_seconds, 4),
            "nodes": self.nodes,
            "existingPods": self.existing_pods,
            "ruMaxrssKiB": rss,
            "peakMemoryMiB": round(rss / 1024, 1),
            "timed": self.timings is not None,
        }
        if self.sampling is None:
            out["pct"], out["selection"] = 100, "every node, ties to the smallest name (the corpus's cycle)"
        else:
            pct, parallelism = self.sampling
            out["pct"] = pct if pct else "default (adaptive)"
            out["parallelism"] = parallelism
            out["selection"] = "kube-scheduler's: node tree order, rotating start, sampling, score heap"
            if parallelism != 1:
                out["note"] = parallelism_note(parallelism)
        if self.scheduled:
            out["meanEvaluatedNodes"] = round(self.evaluated_nodes / self.scheduled, 2)
            out["meanFeasibleNodes"] = round(self.feasible_nodes / self.scheduled, 2)
        if self.paired_ns is not None:
            on, off = self.paired_ns
            out["overhead"] = {
                "timedSeconds": round(on / 1e9, 4),
                "untimedSeconds": round(off / 1e9, 4),
                "percent": round(100 * (on / off - 1), 2) if off else 0.0,
                "medianPercent": self.paired_median_percent,
            }
        if by_plugin and self.timings is not None:
            out["byPlugin"] = self.by_plugin()
        return out

    def by_plugin(self) -> dict[str, Any]:
        """Where the cycles' time went: per extension point and plugin (and the framework's
        own work) the total µs, µs per pod and share of the cycles' time."""
        t = self.timings
        assert t is not None
        return {
            "cycleMicroseconds": _us(t.cycle_ns),
            "pluginMicroseconds": _us(t.plugin_ns),
            "frameworkMicroseconds": _us(t.framework_ns),
            "otherMicroseconds": _us(t.other_ns),
            "rows": [self._row(r, t.cycle_ns) for r in t.rows()],
        }

    def _row(self, r: TimingRow, cycle_ns: int) -> dict[str, Any]:
        return {
            "extensionPoint": r.point,
            "plugin": r.name,
            "framework": r.framework,
            "microseconds": _us(r.ns),
            "microsecondsPerPod": round(r.ns / 1000 / max(self.pods, 1), 2),
            "share": round(r.ns / cycle_ns, 4) if cycle_ns else 0.0,
        }


def _us(ns: int) -> float:
    return round(ns / 1000, 1)


class _Paired:
    """schedule_one run twice per pod, timed and untimed, the first of the pair alternating;
    returns the timed decision and sums each side's time."""

    def __init__(self) -> None:
        self.timed_ns = 0
        self.untimed_ns = 0
        self.ratios: list[float] = []
        #: the untimed half of the first pair, left out of the sums (see __call__)
        self.warmup_untimed_ns = 0
        self._count = 0

    def __call__(self, pod: Pod, cluster: ClusterState, profile: Profile, **kwargs: Any) -> Decision:
        kwargs.pop("timed", None)
        node_order = kwargs.pop("order", None)
        # the untimed twin starts where the timed run starts and leaves the start index alone
        twin_order = node_order.fork() if node_order is not None else None
        order = (True, False) if self._count % 2 == 0 else (False, True)
        self._count += 1
        kept: Decision | None = None
        spent = {}
        for timed in order:
            started = time.perf_counter_ns()
            decision = schedule_one(
                pod, cluster, profile, timed=timed, order=node_order if timed else twin_order, **kwargs
            )
            spent[timed] = time.perf_counter_ns() - started
            if timed:
                kept = decision
        assert kept is not None
        if self._count == 1:  # the very first cycle builds the plugins' caches: tens of ms, once,
            self.warmup_untimed_ns = spent[False]  # paid by whichever ran first
            return kept
        self.timed_ns += spent[True]
        self.untimed_ns += spent[False]
        self.ratios.append(spent[True] / max(spent[False], 1))
        return kept


def _evaluated(decision: Decision) -> int:
    """ScheduleResult.EvaluatedNodes: feasible nodes found plus rejections recorded."""
    sm = decision.sampling
    if sm is not None:
        return 1 if sm.nominated_first else sm.processed
    return len(decision.nodes)


def peak_rss_kib() -> int:
    """The process's peak resident set size (getrusage's ru_maxrss, KiB on Linux)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def run_bench(
    path: Path,
    *,
    on_pod: Callable[[int, int], None] | None = None,
    profiler: cProfile.Profile | None = None,
    timed: bool = True,
    paired: bool = False,
    features: FeatureGates | None = None,
) -> BenchResult:
    """Load ``path`` (timed as loadSeconds), then schedule its incoming pods in turn, binding
    each scheduled one; ``on_pod(done, total)`` after each pod is outside the timing, and
    ``profiler`` (if given) runs during the cycles only. ``timed``: time every cycle per plugin
    (``BenchResult.timings``); False reads no clock inside the cycles. ``paired``: also run
    each cycle untimed (see the module notes; needs ``timed``); wallSeconds then leaves the
    untimed runs out, so pods/s stays the timed cycles'. ``features``: the version to answer
    as when the input names none (its ``kubeVersion`` wins)."""
    if paired and not timed:
        raise ValueError("paired runs need timed cycles")
    result = BenchResult()
    start = time.perf_counter()
    try:
        with path.open("rb") as f:
            doc = json.load(f)
    except OSError as e:
        raise EvaluateError(f"{e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise EvaluateError(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    input_mode(doc)
    gates = kube_version_of(doc, features)
    profile = profile_for(doc.get("config"), gates)
    result.sampling = sampling_of(doc.get("config"))
    cluster = build_cluster(doc, consume=True, features=gates)
    pods = incoming_pods(doc, gates)
    del doc
    # what is loaded lives to the end: keep the collector from rescanning it during the cycles
    gc.collect()
    gc.freeze()
    result.load_seconds = time.perf_counter() - start
    result.nodes, result.existing_pods, result.pods = cluster.num_nodes, len(cluster.pods), len(pods)

    pair = _Paired() if paired else None
    order = NodeOrder.of(cluster) if result.sampling is not None else None
    decisions = schedule_in_turn(
        cluster, profile, pods, bind=True, timed=timed, schedule=pair or schedule_one, order=order
    )
    total = CycleTimings() if timed else None
    clock = time.perf_counter
    for done in range(1, len(pods) + 1):
        if profiler is not None:
            profiler.enable()
        t0 = clock()
        decision = next(decisions)
        result.wall_seconds += clock() - t0
        if profiler is not None:
            profiler.disable()
        if total is not None and decision.timings is not None:
            total.add(decision.timings)
        if decision.selected is None:
            result.unschedulable += 1
        else:
            result.scheduled += 1
            result.evaluated_nodes += _evaluated(decision)
            result.feasible_nodes += len(decision.feasible_ids)
        result.placements[decision.pod.key] = decision.selected
        if on_pod is not None:
            on_pod(done, len(pods))
    result.timings = total
    if pair is not None:
        result.paired_ns = (pair.timed_ns, pair.untimed_ns)
        if pair.ratios:
            result.paired_median_percent = round(100 * (statistics.median(pair.ratios) - 1), 2)
        result.wall_seconds -= (pair.untimed_ns + pair.warmup_untimed_ns) / 1e9
    return result
