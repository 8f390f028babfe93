"""The planning commands' results as frozen dataclasses: what ``plan.audit`` returns, and
the rebalance plan's skew rows and their keys, read by cli and report by attribute.
``to_dict`` gives the ``-o json`` document, member for member as it was when these were
dicts (``tests/cli/test_json_goldens.py``), and is called only where JSON, YAML or the
report is written. They pickle: failure runs send records back from forked children and
Dask workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubespread.sim.rows import JsonDoc

__all__ = [
    "AuditResult",
    "AuditSeconds",
    "BudgetHealth",
    "ConstraintKey",
    "ConstraintSkew",
    "FailureRecord",
    "Harm",
    "PendingReason",
    "SkewRow",
    "Variant",
    "VaryResult",
    "WorkloadCount",
    "WorkloadOutcome",
]


@dataclass(frozen=True, slots=True)
class PendingReason:
    """Pods of one workload pending with one kube-scheduler message, ``explain``'s hints for
    the first of them."""

    message: str
    pods: tuple[str, ...]
    hints: tuple[str, ...]

    def to_dict(self) -> JsonDoc:
        return {"message": self.message, "pods": list(self.pods), "hints": list(self.hints)}


@dataclass(frozen=True, slots=True)
class SkewRow:
    """One spread constraint of a workload after a failure: what a record keeps of
    ``views.ConstraintView`` (its other members are in ``schedule``'s spread rows)."""

    topology_key: str
    when_unsatisfiable: str
    max_skew: int
    min_domains: int
    node_taints_policy: str
    skew: int
    within_max_skew: bool
    domains: Mapping[str, int]

    def to_dict(self) -> JsonDoc:
        return {
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "maxSkew": self.max_skew,
            "minDomains": self.min_domains,
            "nodeTaintsPolicy": self.node_taints_policy,
            "skew": self.skew,
            "withinMaxSkew": self.within_max_skew,
            "domains": dict(self.domains),
        }


@dataclass(frozen=True, slots=True)
class WorkloadOutcome:
    """One workload after one failure (``owner``: its top owner, ``namespace/Kind/name``: a
    Deployment's availability spans its ReplicaSets).
    ``recovery_seconds``: virtual seconds until its last replacement was bound, None when it
    is still short. ``unavailable``: replicas short of desired after the failure; ``lost``:
    only those the failure took (replicas that ran before, up to desired, and do not now),
    so a workload already short is not counted against the failure."""

    owner: str
    desired: int
    running_before: int
    running: int
    unavailable: int
    pending: int
    pending_reasons: tuple[PendingReason, ...]
    pdbs_broken: tuple[str, ...]
    recovery_seconds: float | None
    skew: tuple[SkewRow, ...]
    lost: int = 0

    def to_dict(self) -> JsonDoc:
        return {
            "owner": self.owner,
            "desired": self.desired,
            "runningBefore": self.running_before,
            "running": self.running,
            "unavailable": self.unavailable,
            "lost": self.lost,
            "pending": self.pending,
            "pendingReasons": [r.to_dict() for r in self.pending_reasons],
            "pdbsBroken": list(self.pdbs_broken),
            "recoverySeconds": self.recovery_seconds,
            "skew": [s.to_dict() for s in self.skew],
        }


@dataclass(frozen=True, slots=True)
class BudgetHealth:
    """A PodDisruptionBudget (``namespace/name``) as the disruption controller last wrote it."""

    name: str
    current_healthy: int
    desired_healthy: int
    broken: bool

    def to_dict(self) -> JsonDoc:
        return {
            "name": self.name,
            "currentHealthy": self.current_healthy,
            "desiredHealthy": self.desired_healthy,
            "broken": self.broken,
        }


@dataclass(frozen=True, slots=True)
class Harm:
    """What a failure costs, in ranking order: replicas lost (those it took), replicas
    unavailable, pods pending, budgets broken, workloads not whole again."""

    unavailable: int
    pending: int
    pdbs_broken: int
    unrecovered: int
    lost: int = 0

    def to_dict(self) -> JsonDoc:
        return {
            "lost": self.lost,
            "unavailable": self.unavailable,
            "pending": self.pending,
            "pdbsBroken": self.pdbs_broken,
            "unrecovered": self.unrecovered,
        }


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One failure domain failed and the clock advanced: the JSON's ``failures[]`` entry.
    ``rank`` is None until the audit ranks the records by harm."""

    domain: str
    key: str
    value: str
    nodes: tuple[str, ...]
    harm: Harm
    pdbs_broken: tuple[BudgetHealth, ...]
    workloads: tuple[WorkloadOutcome, ...]
    rank: int | None = None

    def to_dict(self) -> JsonDoc:
        head: dict[str, Any] = {} if self.rank is None else {"rank": self.rank}
        return {
            **head,
            "domain": self.domain,
            "key": self.key,
            "value": self.value,
            "nodes": list(self.nodes),
            "harm": self.harm.to_dict(),
            "pdbsBroken": [b.to_dict() for b in self.pdbs_broken],
            "workloads": [w.to_dict() for w in self.workloads],
        }


@dataclass(frozen=True, slots=True)
class WorkloadCount:
    """A workload of the settled cluster before any failure (``owner``: its top owner,
    ``namespace/Kind/name``)."""

    owner: str
    desired: int
    running: int

    def to_dict(self) -> JsonDoc:
        return {"owner": self.owner, "desired": self.desired, "running": self.running}


@dataclass(frozen=True, slots=True)
class AuditSeconds:
    """Wall time of the failure runs and of the whole audit."""

    runs: float
    total: float

    def to_dict(self) -> JsonDoc:
        return {"runs": self.runs, "total": self.total}


@dataclass(frozen=True, slots=True)
class AuditResult:
    """An audit: ``failures`` ranked by harm, most harmful first."""

    domains: tuple[str, ...]
    after: float
    seed: int
    workloads: tuple[WorkloadCount, ...]
    failures: tuple[FailureRecord, ...]
    seconds: AuditSeconds

    def to_dict(self) -> JsonDoc:
        return {
            "domains": list(self.domains),
            "after": self.after,
            "seed": self.seed,
            "workloads": [w.to_dict() for w in self.workloads],
            "failures": [f.to_dict() for f in self.failures],
            "seconds": self.seconds.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Variant:
    """One ``--vary`` combination audited (``audit``), or refused by the API server
    (``error``; then ``audit`` is None and the counts are 0). ``survives``: every failure of
    the first key leaves every workload whole again; ``failed``: how many do not."""

    changes: Mapping[str, Any]
    survives: bool
    failed: int = 0
    pending: int = 0
    unavailable: int = 0
    audit: AuditResult | None = None
    error: str | None = None
    rank: int | None = None

    def to_dict(self) -> JsonDoc:
        head: dict[str, Any] = {} if self.rank is None else {"rank": self.rank}
        if self.error is not None:
            return {**head, "changes": dict(self.changes), "error": self.error, "survives": False}
        return {
            **head,
            "changes": dict(self.changes),
            "survives": self.survives,
            "failed": self.failed,
            "pending": self.pending,
            "unavailable": self.unavailable,
            "audit": None if self.audit is None else self.audit.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class VaryResult:
    """Every combination audited, ranked; ``best``: the first one that could be audited."""

    domains: tuple[str, ...]
    after: float
    variants: tuple[Variant, ...]
    best: Mapping[str, Any] | None

    def to_dict(self) -> JsonDoc:
        return {
            "domains": list(self.domains),
            "after": self.after,
            "variants": [v.to_dict() for v in self.variants],
            "best": None if self.best is None else dict(self.best),
        }


@dataclass(frozen=True, slots=True)
class ConstraintKey:
    """One workload's spread constraint on one topology key (a bare pod's workload is
    ``Pod/name``): the key of a rebalance plan's skew rows. ``str()`` is the JSON's member
    name, ``namespace/Kind/name topologyKey``, so no reader has to split it again."""

    namespace: str
    kind: str
    name: str
    topology_key: str

    @property
    def workload(self) -> str:
        """``namespace/Kind/name``."""
        return f"{self.namespace}/{self.kind}/{self.name}"

    def __str__(self) -> str:
        return f"{self.workload} {self.topology_key}"


@dataclass(frozen=True, slots=True)
class ConstraintSkew:
    """A constraint's skew as the scheduler counts it (``views.ConstraintView``): matching
    pods per eligible domain, the global minimum, and whether it is within maxSkew."""

    max_skew: int
    when_unsatisfiable: str
    skew: int
    within: bool
    domains: Mapping[str, int]
    global_minimum: int

    def to_dict(self) -> JsonDoc:
        return {
            "maxSkew": self.max_skew,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "skew": self.skew,
            "within": self.within,
            "domains": dict(self.domains),
            "globalMinimum": self.global_minimum,
        }
