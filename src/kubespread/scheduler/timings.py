"""Where a scheduling cycle's time goes, kept in its Decision (never in global state).

kube-scheduler samples plugin durations in 10% of cycles; kubespread times every plugin call
of every cycle it is asked to time (``schedule_one(..., timed=True)``, the default) with
``time.perf_counter_ns``:

- ``plugins``: point -> plugin -> nanoseconds, summed over the plugin's calls at that point;
- ``statuses``: point -> plugin -> the status code of its call, kube-scheduler's label
  (``Success``, ``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Skip``, ``Error``). A
  Filter call judges every node at once: its status is the most severe it gave any node;
- ``points``: point -> nanoseconds of the whole extension point, the framework's own work
  (merging node sets, dropping rejected nodes, weighting scores) included;
- ``point_status``: the extension point's status (PreFilter's rejection, PostFilter's answer);
- ``cycle_ns``: the whole ``schedule_one`` call.

The extension points are kube-scheduler's metric labels; ``NormalizeScore`` is timed per
plugin (as kube-scheduler's plugin metric does) and counted inside the ``Score`` point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "FILTER",
    "NORMALIZE_SCORE",
    "POINTS",
    "POST_FILTER",
    "PRE_FILTER",
    "PRE_SCORE",
    "SCORE",
    "CycleTimings",
]

PRE_FILTER: Final = "PreFilter"
FILTER: Final = "Filter"
POST_FILTER: Final = "PostFilter"
PRE_SCORE: Final = "PreScore"
SCORE: Final = "Score"
NORMALIZE_SCORE: Final = "NormalizeScore"
#: the extension points a cycle runs, in order (NormalizeScore belongs to Score)
POINTS: Final = (PRE_FILTER, FILTER, POST_FILTER, PRE_SCORE, SCORE)

#: status codes by severity, for a Filter call that judged many nodes
_SEVERITY: Final = {
    "Success": 0,
    "Skip": 0,
    "Unschedulable": 1,
    "UnschedulableAndUnresolvable": 2,
    "Error": 3,
}


@dataclass(slots=True)
class CycleTimings:
    """One cycle's timings (see the module notes); all figures in nanoseconds."""

    plugins: dict[str, dict[str, int]] = field(default_factory=dict)
    statuses: dict[str, dict[str, str]] = field(default_factory=dict)
    points: dict[str, int] = field(default_factory=dict)
    point_status: dict[str, str] = field(default_factory=dict)
    cycle_ns: int = 0

    def call(self, point: str, plugin: str, started: int, status: str = "Success") -> None:
        """Add the time since ``started`` (perf_counter_ns) to the plugin's at the point."""
        spent = time.perf_counter_ns() - started
        per_plugin = self.plugins.setdefault(point, {})
        per_plugin[plugin] = per_plugin.get(plugin, 0) + spent
        seen = self.statuses.setdefault(point, {})
        before = seen.get(plugin)
        if before is None or _SEVERITY.get(status, 3) > _SEVERITY.get(before, 3):
            seen[plugin] = status

    def point(self, point: str, started: int, status: str = "Success") -> None:
        """Add the time since ``started`` to the extension point's."""
        self.points[point] = self.points.get(point, 0) + time.perf_counter_ns() - started
        self.point_status[point] = status

    @property
    def plugin_ns(self) -> int:
        """The plugins' time, every point together."""
        return sum(ns for per in self.plugins.values() for ns in per.values())

    def by_plugin(self) -> dict[str, int]:
        """Plugin -> nanoseconds over every extension point."""
        out: dict[str, int] = {}
        for per in self.plugins.values():
            for name, ns in per.items():
                out[name] = out.get(name, 0) + ns
        return out

    def to_dict(self) -> dict[str, object]:
        """Microseconds, for ``-o json`` and the report (rounded to 0.1 µs)."""

        def us(ns: int) -> float:
            return round(ns / 1000, 1)

        return {
            "cycleMicroseconds": us(self.cycle_ns),
            "pluginMicroseconds": us(self.plugin_ns),
            "extensionPoints": [
                {
                    "name": p,
                    "status": self.point_status.get(p, "Success"),
                    "microseconds": us(self.points.get(p, 0)),
                    "plugins": [
                        {
                            "name": name,
                            "extensionPoint": q,
                            "status": self.statuses.get(q, {}).get(name, "Success"),
                            "microseconds": us(ns),
                        }
                        for q in ((p, NORMALIZE_SCORE) if p == SCORE else (p,))
                        for name, ns in self.plugins.get(q, {}).items()
                    ],
                }
                for p in POINTS
                if p in self.points or p in self.plugins
            ],
        }
