"""Where a scheduling cycle's time goes, kept in its Decision (never in global state).

kube-scheduler samples plugin durations in 10% of cycles; kubespread times every plugin call
of every cycle it is asked to time (``schedule_one(..., timed=True)``, the default) with
``time.perf_counter_ns``:

- ``plugins``: point -> plugin -> nanoseconds, summed over the plugin's calls at that point;
- ``statuses``: point -> plugin -> the status code of its call when not ``Success``,
  kube-scheduler's label (``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Skip``,
  ``Error``); read one with ``status(point, plugin)``, which answers ``Success`` for the rest
  (most calls: not storing them keeps timing cheap). A Filter call judges every node at once:
  its status is the most severe it gave a node (not the worst code it could have given);
- ``points``: point -> nanoseconds of the whole extension point, the framework's own work
  (merging node sets, dropping rejected nodes, weighting scores) included;
- ``point_status``: the extension point's status (PreFilter's rejection, PostFilter's answer);
- ``steps``: the framework's own work outside the extension points, each step timed by its
  own clock reads (``FRAMEWORK_STEPS``), so that a cycle's rows add up to its time and what is
  left (``other_ns``: the calls between them, the clock reads) is measured, not assumed;
- ``cycle_ns``: the whole ``schedule_one`` call.

``rows()`` is the one breakdown every view shows (``explain --timings``, ``bench
--by-plugin``, the report's chart): per extension point its plugins, then the framework's
work inside the point (the point's time minus its plugins'), then the framework steps.

The extension points are kube-scheduler's metric labels; ``NormalizeScore`` is timed per
plugin (as kube-scheduler's plugin metric does) and counted inside the ``Score`` point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "FILTER",
    "FIT_ERROR",
    "FRAMEWORK",
    "FRAMEWORK_STEPS",
    "NARROW",
    "NOMINATED",
    "NORMALIZE_SCORE",
    "POINTS",
    "POST_FILTER",
    "PRE_FILTER",
    "PRE_SCORE",
    "SCORE",
    "SELECT_HOST",
    "SNAPSHOT",
    "VISIT",
    "CycleTimings",
    "TimingRow",
]

PRE_FILTER: Final = "PreFilter"
FILTER: Final = "Filter"
POST_FILTER: Final = "PostFilter"
PRE_SCORE: Final = "PreScore"
SCORE: Final = "Score"
NORMALIZE_SCORE: Final = "NormalizeScore"
#: the extension points a cycle runs, in order (NormalizeScore belongs to Score)
POINTS: Final = (PRE_FILTER, FILTER, POST_FILTER, PRE_SCORE, SCORE)

#: the row name of the framework's own work (inside a point, and the steps outside them)
FRAMEWORK: Final = "(framework)"
#: framework steps outside the extension points, in cycle order: the cycle's copy of the node
#: names and its Decision and CycleState; PreFilterResult narrowing the node set; filtering again
#: the nodes with nominated pods; the feasible nodes, the best total and the tie-break; for an
#: unschedulable pod, the FitError message and the node statuses PostFilter reads; with node
#: sampling, the visiting order and the cut where the search stopped (VISIT)
SNAPSHOT: Final = "Snapshot"
NARROW: Final = "PreFilterResult"
NOMINATED: Final = "NominatedPods"
SELECT_HOST: Final = "SelectHost"
FIT_ERROR: Final = "FitError"
#: the visiting order, where the search stopped and which nodes it found (node sampling)
VISIT: Final = "NodeOrder"
FRAMEWORK_STEPS: Final = (SNAPSHOT, NARROW, VISIT, NOMINATED, SELECT_HOST, FIT_ERROR)

_now = time.perf_counter_ns

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
    steps: dict[str, int] = field(default_factory=dict)
    cycle_ns: int = 0

    def call(self, point: str, plugin: str, started: int, status: str = "Success") -> None:
        """Add the time since ``started`` (perf_counter_ns) to the plugin's at the point.

        Runs some 30 times a cycle, so it does the least it can: the clock first, then one
        dict update; a status is kept only when it is not Success."""
        spent = _now() - started
        per_plugin = self.plugins.get(point)
        if per_plugin is None:
            self.plugins[point] = {plugin: spent}
        else:
            per_plugin[plugin] = per_plugin.get(plugin, 0) + spent
        if status != "Success":
            self.worsen(point, plugin, status)

    def at(self, point: str) -> dict[str, int]:
        """The point's plugin -> ns table, for a loop to add to inline: the scheduler's hot
        loops take it once per point instead of a method call per plugin."""
        per_plugin = self.plugins.get(point)
        if per_plugin is None:
            per_plugin = self.plugins[point] = {}
        return per_plugin

    def worsen(self, point: str, plugin: str, status: str) -> None:
        """Keep ``status`` for the plugin at the point unless a more severe one is kept (a
        Filter call's status is the worst it gave any node, known after the call). A Code
        (a str enum) is kept as its plain string, so the timings dump as JSON and YAML."""
        status = str(status)
        seen = self.statuses.setdefault(point, {})
        before = seen.get(plugin)
        if before is None or _SEVERITY.get(status, 3) > _SEVERITY.get(before, 3):
            seen[plugin] = status

    def status(self, point: str, plugin: str) -> str:
        """The plugin's status code at the point (``Success`` unless another was kept)."""
        return self.statuses.get(point, {}).get(plugin, "Success")

    def point(self, point: str, started: int, status: str = "Success") -> None:
        """Add the time since ``started`` to the extension point's."""
        self.points[point] = self.points.get(point, 0) + _now() - started
        self.point_status[point] = status

    def step(self, name: str, started: int) -> None:
        """Add the time since ``started`` to the framework step's (``FRAMEWORK_STEPS``)."""
        self.steps[name] = self.steps.get(name, 0) + _now() - started

    def add(self, other: CycleTimings) -> None:
        """Sum ``other`` into this one (many cycles as one, for ``bench --by-plugin``); a
        status is the most severe seen."""
        for point, per in other.plugins.items():
            mine = self.plugins.setdefault(point, {})
            for name, ns in per.items():
                mine[name] = mine.get(name, 0) + ns
        for point, seen in other.statuses.items():
            for name, status in seen.items():
                self.worsen(point, name, status)
        for point, ns in other.points.items():
            self.points[point] = self.points.get(point, 0) + ns
        for point, status in other.point_status.items():
            if _SEVERITY.get(status, 3) >= _SEVERITY.get(self.point_status.get(point, "Success"), 3):
                self.point_status[point] = status
        for name, ns in other.steps.items():
            self.steps[name] = self.steps.get(name, 0) + ns
        self.cycle_ns += other.cycle_ns

    @property
    def plugin_ns(self) -> int:
        """The plugins' time, every point together."""
        return sum(ns for per in self.plugins.values() for ns in per.values())

    @property
    def framework_ns(self) -> int:
        """The framework's own measured work: inside the points, outside the plugins, and
        the steps outside the points."""
        return sum(self.points.values()) - self.plugin_ns + sum(self.steps.values())

    @property
    def other_ns(self) -> int:
        """The cycle's time in no row: the glue between the timed parts and the clock reads."""
        return self.cycle_ns - sum(self.points.values()) - sum(self.steps.values())

    def _point_plugins_ns(self, point: str) -> int:
        """The plugins' time at a point (NormalizeScore's counted in Score's)."""
        names = (point, NORMALIZE_SCORE) if point == SCORE else (point,)
        return sum(ns for q in names for ns in self.plugins.get(q, {}).values())

    def rows(self) -> list[TimingRow]:
        """Every timed part of the cycle(s), in cycle order (see the module notes)."""
        out: list[TimingRow] = []
        for p in POINTS:
            if p not in self.points and p not in self.plugins:
                continue
            spent = 0
            for q in (p, NORMALIZE_SCORE) if p == SCORE else (p,):
                for name, ns in self.plugins.get(q, {}).items():
                    out.append(TimingRow(q, name, ns, self.status(q, name)))
                    spent += ns
            if p in self.points:
                out.append(TimingRow(p, FRAMEWORK, max(self.points[p] - spent, 0), "", framework=True))
        for name in FRAMEWORK_STEPS:
            if name in self.steps:
                out.append(TimingRow(name, FRAMEWORK, self.steps[name], "", framework=True))
        return out

    def to_dict(self) -> dict[str, object]:
        """Microseconds, for ``-o json`` and the report (rounded to 0.1 µs)."""

        def us(ns: int) -> float:
            return round(ns / 1000, 1)

        return {
            "cycleMicroseconds": us(self.cycle_ns),
            "pluginMicroseconds": us(self.plugin_ns),
            "frameworkMicroseconds": us(self.framework_ns),
            "otherMicroseconds": us(self.other_ns),
            "extensionPoints": [
                {
                    "name": p,
                    "status": self.point_status.get(p, "Success"),
                    "microseconds": us(self.points.get(p, 0)),
                    "frameworkMicroseconds": us(max(self.points.get(p, 0) - self._point_plugins_ns(p), 0)),
                    "plugins": [
                        {
                            "name": name,
                            "extensionPoint": q,
                            "status": self.status(q, name),
                            "microseconds": us(ns),
                        }
                        for q in ((p, NORMALIZE_SCORE) if p == SCORE else (p,))
                        for name, ns in self.plugins.get(q, {}).items()
                    ],
                }
                for p in POINTS
                if p in self.points or p in self.plugins
            ],
            "frameworkSteps": [
                {"name": name, "microseconds": us(self.steps[name])}
                for name in FRAMEWORK_STEPS
                if name in self.steps
            ],
        }


@dataclass(frozen=True, slots=True)
class TimingRow:
    """One row of a timing breakdown: a plugin at an extension point (``NormalizeScore`` for
    its normalization), or the framework's work in a point or a framework step."""

    point: str
    name: str
    ns: int
    status: str
    framework: bool = False
