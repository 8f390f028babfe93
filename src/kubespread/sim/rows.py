"""The typed rows of a simulation's results: what readers (cli, report, plan) use by
attribute, each with the ``to_dict()`` that writes it into the ``-o json|yaml`` document.

Each ``to_dict`` gives exactly the document's object, fields in the documented order
(the JSON goldens hold them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubespread.cluster.workloads import WorkloadRef

__all__ = [
    "BudgetRow",
    "FailedCreate",
    "JsonDoc",
    "NodeState",
    "PodRow",
    "RefusedObject",
    "SubsetRow",
    "WorkloadSpreadRow",
]


#: a JSON/YAML document (or a part of one) as written: what a function returns whose job is
#: to build the output document itself (``sim.delta``'s delta/full forms, a rebalance plan's
#: Scenario), not a result that readers use by attribute
JsonDoc = dict[str, Any]


def _kind_name(ref: WorkloadRef | None) -> dict[str, str] | None:
    return {"kind": ref.kind, "name": ref.name} if ref is not None else None


@dataclass(frozen=True, slots=True)
class RefusedObject:
    """An object the API server refused (``rejections[]``): ``object`` is its ref
    ("Kind ns/name"); ``source`` where the input had it, None for a scenario step's object
    (the step says where), and then left out of the JSON."""

    object: str
    message: str
    source: str | None = None

    def to_dict(self) -> dict[str, str]:
        if self.source is None:
            return {"object": self.object, "message": self.message}
        return {"object": self.object, "source": self.source, "message": self.message}


@dataclass(frozen=True, slots=True)
class FailedCreate:
    """What a controller could not create (``failedCreates[]``): its workload's ref and the
    FailedCreate event's message."""

    object: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"object": self.object, "message": self.message}


@dataclass(frozen=True, slots=True)
class PodRow:
    """One pod of a snapshot (``pods[]``). ``owner`` is the top owner, ``workload`` the
    controller (as in the spread rows); ``workload_spread`` the (WorkloadSpread, subset)
    the pod is booked in."""

    namespace: str
    name: str
    node: str | None
    phase: str
    terminating: bool
    labels: dict[str, str]
    owner: WorkloadRef | None
    workload: WorkloadRef | None
    workload_spread: tuple[str, str] | None
    deletion_cost: str | None

    def to_dict(self) -> JsonDoc:
        ws = self.workload_spread
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "phase": self.phase,
            "terminating": self.terminating,
            "labels": dict(self.labels),
            "owner": _kind_name(self.owner),
            "workload": _kind_name(self.workload),
            "workloadSpread": {"name": ws[0], "subset": ws[1]} if ws is not None else None,
            "deletionCost": self.deletion_cost,
        }


@dataclass(frozen=True, slots=True)
class NodeState:
    """A node that is not plainly up (``nodes[]``): what the report marks on its charts."""

    name: str
    zone: str
    failed: bool
    cordoned: bool
    taints: tuple[str, ...]

    def to_dict(self) -> JsonDoc:
        return {
            "name": self.name,
            "zone": self.zone,
            "failed": self.failed,
            "cordoned": self.cordoned,
            "taints": list(self.taints),
        }


@dataclass(frozen=True, slots=True)
class BudgetRow:
    """A PodDisruptionBudget's status as the disruption controller last wrote it
    (``podDisruptionBudgets[]``)."""

    namespace: str
    name: str
    expected_pods: int
    desired_healthy: int
    current_healthy: int
    disruptions_allowed: int
    disrupted_pods: tuple[str, ...]

    def to_dict(self) -> JsonDoc:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "expectedPods": self.expected_pods,
            "desiredHealthy": self.desired_healthy,
            "currentHealthy": self.current_healthy,
            "disruptionsAllowed": self.disruptions_allowed,
            "disruptedPods": list(self.disrupted_pods),
        }


@dataclass(frozen=True, slots=True)
class SubsetRow:
    """One subset of a WorkloadSpread row: its bound (``limit``, resolved against the
    workload's replicas now) beside what its status says."""

    name: str
    max_replicas: int | str | None  # as the spec has it: N or "N%"
    limit: int | None
    replicas: int
    missing_replicas: int | None
    creating_pods: int
    deleting_pods: int
    unschedulable: bool
    unscheduled_time: str | None
    failed_count: int

    def to_dict(self) -> JsonDoc:
        return {
            "name": self.name,
            "maxReplicas": self.max_replicas,
            "limit": self.limit,
            "replicas": self.replicas,
            "missingReplicas": self.missing_replicas,
            "creatingPods": self.creating_pods,
            "deletingPods": self.deleting_pods,
            "unschedulable": self.unschedulable,
            "unscheduledTime": self.unscheduled_time,
            "failedCount": self.failed_count,
        }


@dataclass(frozen=True, slots=True)
class WorkloadSpreadRow:
    """A WorkloadSpread (``workloadSpreads[]``): its target (kind, name), the workload's
    replicas, its subsets, and the raw status as stored."""

    namespace: str
    name: str
    target: tuple[str, str] | None
    workload_replicas: int
    subsets: tuple[SubsetRow, ...]
    status: dict[str, Any]

    def to_dict(self) -> JsonDoc:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "target": {"kind": self.target[0], "name": self.target[1]} if self.target else None,
            "workloadReplicas": self.workload_replicas,
            "subsets": [s.to_dict() for s in self.subsets],
            "status": self.status,
        }
