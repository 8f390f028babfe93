"""What ``kubespread check`` finds: the names of its checks and severities, and the typed
results (:class:`Finding` s grouped into one :class:`Case` per check and object, in a
:class:`CheckResult`) that the CLI renders and ``report.junit`` writes.

Kept apart from the checks themselves (:mod:`kubespread.plan.check`) so that what reads a
result needs none of the simulation that produced it; imports nothing of plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubespread.sim.rows import JsonDoc

__all__ = [
    "ADMISSION",
    "CAPACITY",
    "CHECKS",
    "ERROR",
    "FAILURE",
    "PLACEMENT",
    "ROLLOUT",
    "WARNING",
    "Case",
    "CheckResult",
    "Finding",
    "Suggestion",
]

ADMISSION: Final = "admission"
PLACEMENT: Final = "placement"
ROLLOUT: Final = "rollout"
FAILURE: Final = "failureSurvival"
CAPACITY: Final = "capacity"
CHECKS: Final = (ADMISSION, PLACEMENT, ROLLOUT, FAILURE, CAPACITY)
ERROR: Final = "error"
WARNING: Final = "warning"


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A rollout strategy that completes, proven by its own simulation: ``max_surge`` (None for
    a StatefulSet, which has none) and ``max_unavailable`` as replica counts, the virtual
    seconds that rollout took, and how many strategies were simulated to find it."""

    max_surge: int | None
    max_unavailable: int
    seconds: float
    trials: int

    def describe(self) -> str:
        surge = "" if self.max_surge is None else f"maxSurge {self.max_surge}, "
        return f"{surge}maxUnavailable {self.max_unavailable}"

    def to_dict(self) -> JsonDoc:
        return {
            "maxSurge": self.max_surge,
            "maxUnavailable": self.max_unavailable,
            "seconds": self.seconds,
            "trials": self.trials,
        }


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found about one object (``Kind namespace/name``), located at the
    changed object's file and line (the cluster's, for an object only the cluster has)."""

    check: str
    severity: str
    object: str
    file: str | None
    line: int | None
    message: str
    suggestion: Suggestion | None = None

    @property
    def where(self) -> str:
        if self.file is None:
            return "-"
        return self.file if self.line is None else f"{self.file}:{self.line}"

    def to_dict(self) -> JsonDoc:
        return {
            "check": self.check,
            "severity": self.severity,
            "object": self.object,
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "suggestion": None if self.suggestion is None else self.suggestion.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Case:
    """One check of one object (a JUnit test case) and what it found (nothing: it passed)."""

    check: str
    object: str
    file: str | None
    line: int | None
    findings: tuple[Finding, ...] = ()

    def to_dict(self) -> JsonDoc:
        return {
            "check": self.check,
            "object": self.object,
            "file": self.file,
            "line": self.line,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True)
class CheckResult:
    """Every check of every object, in the order they ran. ``strict``: warnings fail too."""

    cases: tuple[Case, ...]
    strict: bool
    domains: str
    seconds: float

    @property
    def findings(self) -> list[Finding]:
        return [f for c in self.cases for f in c.findings]

    def fails(self, finding: Finding) -> bool:
        """Whether ``finding`` fails the gate."""
        return finding.severity == ERROR or (self.strict and finding.severity == WARNING)

    def case_failed(self, case: Case) -> bool:
        return any(self.fails(f) for f in case.findings)

    @property
    def failed(self) -> bool:
        return any(self.fails(f) for f in self.findings)

    def to_dict(self) -> JsonDoc:
        failing = [c for c in self.cases if self.case_failed(c)]
        return {
            "passed": not self.failed,
            "strict": self.strict,
            "domains": self.domains,
            "summary": {
                "cases": len(self.cases),
                "failed": len(failing),
                "errors": sum(1 for f in self.findings if f.severity == ERROR),
                "warnings": sum(1 for f in self.findings if f.severity == WARNING),
            },
            "findings": [f.to_dict() for f in self.findings],
            "cases": [c.to_dict() for c in self.cases],
        }
