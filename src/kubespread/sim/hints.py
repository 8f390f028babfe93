"""``kubespread explain``'s hints for the pods a simulation leaves pending, at each step.

A pod pending after a zone failure needs its hint (``nodeTaintsPolicy: Honor``) at the step
where it is pending: at the end of the run the zone may have recovered. Explaining a pod
runs a scheduling cycle over every node, so it is done once per distinct (workload, FitError
message) of a step, and the pods sharing them share the hints.
"""

from __future__ import annotations

from typing import Any

from kubespread.cluster.workloads import ownership
from kubespread.scheduler.explain import Explanation
from kubespread.sim.engine import Simulation
from kubespread.sim.placement import NoProfile, explain_pod
from kubespread.sim.run import StepResult

__all__ = ["PendingHints"]


class PendingHints:
    """Pass as ``simulate(after_step=...)``; then :meth:`decorate` adds ``hints`` to each
    pending pod of a step's dict (``[]`` when there is none). The final snapshot is the last
    step's state, and gets its hints. ``first`` keeps the first of these explanations, at the
    step it was made: what a report shows of the pod (the scheduler's view then, not at the
    end, when the zone may have recovered)."""

    def __init__(self) -> None:
        #: step index (-1: the initial settling) → pod key → hints
        self.by_step: dict[int, dict[str, list[str]]] = {}
        #: (step index, the explanation as a dict) of the first pod explained that stays pending
        self.first: tuple[int, dict[str, Any]] | None = None
        self._last = -1

    def __call__(self, sim: Simulation, step: StepResult) -> None:
        found: dict[str, list[str]] = {}
        asked: dict[tuple[str, str, str, str], list[str]] = {}
        cluster = sim.cluster
        for row in step.snapshot.pending:
            key = row.key
            pod = cluster.pods.get(key)
            if not row.message or pod is None:
                continue
            top = ownership(cluster, pod).top
            kind, name = (top.kind, top.name) if top else ("", pod.metadata.name)
            mark = (pod.namespace, kind, name, row.message)
            hints = asked.get(mark)
            if hints is None:
                explained = self._explain(sim, pod)
                hints = asked[mark] = [] if explained is None else list(explained.hints)
                if explained is not None and self.first is None:
                    self.first = (step.index, explained.to_dict())
            if hints:
                found[key] = hints
        self.by_step[step.index] = found
        self._last = step.index

    @staticmethod
    def _explain(sim: Simulation, pod: Any) -> Explanation | None:
        """``pod`` explained as the scheduler would decide it now; None when it would now fit
        (a retry will place it) or its scheduler is not simulated."""
        try:
            e = explain_pod(sim, pod)
        except NoProfile:
            return None
        return None if e.decision.scheduled else e

    def decorate(self, step: dict[str, Any]) -> None:
        """``hints`` on each of the step dict's pending pods (the final snapshot: the last step's)."""
        found = self.by_step.get(step.get("index", self._last), {})
        # new rows: the snapshot's own (shared with the result's to_dict) stay as they were
        step["pending"] = [
            {**row, "hints": found.get(f"{row['namespace']}/{row['name']}", [])} for row in step["pending"]
        ]
