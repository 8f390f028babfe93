"""The placement model's data: groups of interchangeable new pods, the nodes each may use
and the rules among them, as plain data (:class:`PlacementModel`, so tests can brute-force
it), and the solver's answer (:class:`Placement`).

The pods come in **groups** of interchangeable copies (one pod template: the replicas of a
ReplicaSet, a rollout's two ReplicaSets as two groups, each StatefulSet pod a group of its
own), so the model has one integer per (group, feasible node), how many of the group's pods
the node gets, rather than a boolean per (pod, node): no symmetric solutions to explore.
``kubespread.solve.build`` makes a model from a cluster, ``encode`` solves it with CP-SAT,
``parts`` solves it one linked set of groups at a time, ``verification`` re-checks an answer
with the scheduler's Filter and ``conflicts`` names the constraints that forbid an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from kubespread.api.core import Pod

__all__ = [
    "AFFINITY",
    "ANTI_AFFINITY",
    "FAMILIES",
    "RESOURCES",
    "SPREAD",
    "AffinityRule",
    "AntiTerm",
    "Group",
    "NodeSlot",
    "Offer",
    "Placement",
    "PlacementModel",
    "SolveError",
    "Spread",
    "VerificationError",
    "guards",
    "relaxed",
    "slot_capacity",
]

#: the constraint families a model can leave out (to see which of them binds)
RESOURCES: Final = "resources"
SPREAD: Final = "spread"
ANTI_AFFINITY: Final = "antiAffinity"
AFFINITY: Final = "affinity"
FAMILIES: Final = (RESOURCES, SPREAD, ANTI_AFFINITY, AFFINITY)


class SolveError(Exception):
    """The input asks for something the model does not express (one line)."""


class VerificationError(SolveError):
    """The solver's arrangement fails the scheduler's own Filter: the model is wrong."""


@dataclass(frozen=True, slots=True)
class Spread:
    """One DoNotSchedule constraint of a group in final-state form: existing matching pods per
    eligible domain, the nodes whose pods count, and the groups whose pods it matches."""

    topology_key: str
    max_skew: int
    min_domains: int
    existing: dict[str, int]
    self_match: int
    counted: frozenset[str] = frozenset()
    members: tuple[int, ...] = ()
    #: domains only offered nodes give (provisioning): domain -> those counted nodes; such a
    #: domain counts (global minimum, minDomains) only when one of them is added
    offered: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        more = f" minDomains {self.min_domains}" if self.min_domains > 1 else ""
        return f"topology spread {self.topology_key} maxSkew {self.max_skew}{more}"


@dataclass(frozen=True, slots=True)
class AntiTerm:
    """A required anti-affinity term of a group and the groups whose pods it selects."""

    topology_key: str
    members: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"pod anti-affinity {self.topology_key}"


@dataclass(frozen=True, slots=True)
class AffinityRule:
    """A group's required pod affinity terms together: per term key, existing pods matching
    all terms per domain; the groups whose pods match all terms; whether any such pod exists
    (else the first-pod rule may apply) and whether the group matches its own terms."""

    keys: tuple[str, ...]
    existing: dict[str, dict[str, int]]
    members: tuple[int, ...]
    any_existing: bool
    self_match: bool

    @property
    def name(self) -> str:
        return f"pod affinity {','.join(dict.fromkeys(self.keys))}"


@dataclass(frozen=True, slots=True)
class NodeSlot:
    """A node a group may use: how many of its pods the free resources admit alone, and
    what limits that."""

    name: str
    labels: dict[str, str]
    capacity: int
    limited_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Group:
    """Interchangeable new pods: a template, how many, where they may go, their rules."""

    name: str
    template: Pod
    count: int
    nodes: list[NodeSlot]
    spreads: list[Spread] = field(default_factory=list)
    anti: list[AntiTerm] = field(default_factory=list)
    affinity: AffinityRule | None = None
    request: dict[str, int] = field(default_factory=dict)
    ports: frozenset[tuple[str, str, int]] = frozenset()
    #: pods of the group running now, per node, that may stay (not in the cluster the model
    #: was built on): a node keeps them whatever the filters say now (IgnoredDuringExecution)
    keep: dict[str, int] = field(default_factory=dict)

    @property
    def kept_now(self) -> int:
        return sum(self.keep.values())

    @property
    def anti_keys(self) -> list[str]:
        return sorted({t.topology_key for t in self.anti})


@dataclass(frozen=True, slots=True)
class Offer:
    """Nodes that may be added (provisioning): identical copies of one node template, in
    order (the k-th is added only when the (k-1)-th is), each costing ``cost``."""

    template: str
    nodes: tuple[str, ...]
    cost: int


@dataclass(slots=True)
class PlacementModel:
    """What the CP-SAT model is built from (plain data, so tests can brute-force it).
    ``room``: free resources per node (only read when groups share a node)."""

    groups: list[Group]
    room: dict[str, dict[str, int]] = field(default_factory=dict)
    relaxed: frozenset[str] = frozenset()
    #: every spread constraint within maxSkew over every eligible domain (the skew a table
    #: shows), not only at the pods' own domains (the Filter's condition): rebalancing
    balance: bool = False
    #: nodes that exist only if added (provisioning); every other node exists
    offers: tuple[Offer, ...] = ()

    @property
    def count(self) -> int:
        return sum(g.count for g in self.groups)

    def constraint_names(self) -> list[str]:
        """The constraints :func:`conflict` can name, in its numbering (resources first)."""
        return [name for name, _ in guards(self)]


@dataclass(frozen=True, slots=True)
class Placement:
    """The solver's answer: new pods per node for each group (nodes with none left out),
    whether the count is proven maximal (CP-SAT OPTIMAL), and the solve time."""

    by_group: list[dict[str, int]]
    proven: bool
    seconds: float
    status: str
    saturated: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """New pods per node, all groups together."""
        out: dict[str, int] = {}
        for counts in self.by_group:
            for node, k in counts.items():
                out[node] = out.get(node, 0) + k
        return out

    @property
    def placed(self) -> int:
        return sum(sum(c.values()) for c in self.by_group)


def guards(model: PlacementModel) -> list[tuple[str, tuple[str, int, int]]]:
    """Every constraint one assumption can switch: (name, (kind, group, index))."""
    many = len(model.groups) > 1
    out: list[tuple[str, tuple[str, int, int]]] = []
    if RESOURCES not in model.relaxed:
        out.append((RESOURCES, (RESOURCES, -1, 0)))
    for gi, g in enumerate(model.groups):
        prefix = f"{g.name}: " if many else ""
        out += [(prefix + s.name, (SPREAD, gi, i)) for i, s in enumerate(g.spreads)]
        out += [(prefix + t.name, (ANTI_AFFINITY, gi, i)) for i, t in enumerate(g.anti)]
        if g.affinity is not None:
            out.append((prefix + g.affinity.name, (AFFINITY, gi, 0)))
    return out


def slot_capacity(
    free: Mapping[str, int], request: Mapping[str, int], ports: bool, count: int
) -> tuple[int, tuple[str, ...]]:
    """How many copies fit the node's free resources alone, and the resources that stop it
    there (NodeResourcesFit's comparison, repeated ``k`` times)."""
    limits = {name: free.get(name, 0) // want for name, want in request.items()}
    if ports:
        limits["hostPort"] = 1
    cap = max(0, min(min(limits.values()), count))
    binding = tuple(sorted(n for n, v in limits.items() if v == cap))
    return cap, binding


def relaxed(model: PlacementModel, family: str) -> PlacementModel:
    """The model without one constraint family (resources: every node takes them all)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown constraint family {family!r}")
    groups = []
    for g in model.groups:
        if family == RESOURCES:
            g = replace(
                g, nodes=[NodeSlot(n.name, n.labels, g.count, ()) for n in g.nodes], ports=frozenset()
            )
        elif family == SPREAD:
            g = replace(g, spreads=[])
        elif family == ANTI_AFFINITY:
            g = replace(g, anti=[])
        else:
            g = replace(g, affinity=None)
        groups.append(g)
    return PlacementModel(groups, model.room, model.relaxed | {family}, model.balance, model.offers)
