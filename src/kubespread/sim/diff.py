"""``kubespread diff``: how placements and spread change between two versions of the same
manifests (or two scheduler configurations).

Both versions are scheduled by ``schedule``'s own use case (:func:`~kubespread.sim.placement.schedule`)
with the same seed, and their spread rows are ``schedule``'s (``PlacementResult.spread``,
``scheduler.views``): this module only pairs them. Pods are paired by name, then, within a
workload, in the order they were placed (a changed pod template renames a Deployment's pods:
its ReplicaSet's hash changes). A pod left pending by both versions is changed when its last
FailedScheduling message differs (``message``): what an upgrade changes in what users read
(v1.37's preemption part, kubernetes#140180, for one)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from kubespread.api.keys import zone_of
from kubespread.cluster.workloads import ownership, short_kind
from kubespread.scheduler.views import SpreadRow
from kubespread.sim.placement import PlacementResult, ScheduleRequest, schedule
from kubespread.sim.rows import JsonDoc

__all__ = [
    "DiffRequest",
    "PlacementDiff",
    "PodAt",
    "PodMove",
    "SpreadChange",
    "Totals",
    "diff",
    "diff_placements",
]

Change = Literal["added", "removed", "same", "placed", "pending", "moved", "reshuffled", "message"]

#: a spread row's fields whose difference makes the row changed
_SPREAD_FIELDS: Final = ("domains", "skew", "leftOutDomains", "rawDomains", "maxSkew", "whenUnsatisfiable")


@dataclass(frozen=True, slots=True)
class PodAt:
    """Where one version left a pod: its node and zone (None: pending); a pending pod's last
    FailedScheduling message ("" when the scheduler never tried it)."""

    name: str
    node: str | None
    zone: str | None
    message: str | None = None

    def to_dict(self) -> JsonDoc:
        d: JsonDoc = {"name": self.name, "node": self.node, "zone": self.zone}
        if self.node is None:
            d["message"] = self.message or ""
        return d


@dataclass(frozen=True, slots=True)
class _Pod:
    namespace: str
    owner: str
    at: PodAt


@dataclass(frozen=True, slots=True)
class PodMove:
    """One pod paired across the versions (``pods[]``): its owner label (the top owner, as
    ``deploy/web``; ``pod/NAME`` for a bare pod), where each version left it (None: absent
    from that version) and the change."""

    namespace: str
    owner: str
    before: PodAt | None
    after: PodAt | None
    change: Change

    @property
    def name(self) -> str:
        """The pod's name in the after version, else in the before one."""
        at = self.after or self.before
        assert at is not None
        return at.name

    def to_dict(self) -> JsonDoc:
        return {
            "namespace": self.namespace,
            "owner": self.owner,
            "before": None if self.before is None else self.before.to_dict(),
            "after": None if self.after is None else self.after.to_dict(),
            "change": self.change,
        }


@dataclass(frozen=True, slots=True)
class SpreadChange:
    """One workload and topology key paired across the versions (``spread[]``): each version's
    spread row (None: not in that version; a workload mid-rollout: its first controller's)."""

    namespace: str
    owner: str
    topology_key: str
    before: SpreadRow | None
    after: SpreadRow | None

    @property
    def changed(self) -> bool:
        """Whether the counts, skew or constraint differ (or one version has no row)."""
        if self.before is None or self.after is None:
            return True
        b, a = self.before.to_dict(), self.after.to_dict()
        return any(b.get(f) != a.get(f) for f in _SPREAD_FIELDS)

    def to_dict(self) -> JsonDoc:
        return {
            "namespace": self.namespace,
            "owner": self.owner,
            "topologyKey": self.topology_key,
            "before": None if self.before is None else self.before.to_dict(),
            "after": None if self.after is None else self.after.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Totals:
    """One version's pods placed during its run and pods left pending."""

    placed: int
    pending: int

    @classmethod
    def of(cls, result: PlacementResult) -> Totals:
        return cls(len(result.placements), len(result.final.pending))

    def to_dict(self) -> JsonDoc:
        return {"placed": self.placed, "pending": self.pending}


@dataclass(frozen=True)
class PlacementDiff:
    """The ``diff`` result: every pod paired with its change, the spread per workload and
    constraint before and after, the totals, and the two placements it compares."""

    pods: tuple[PodMove, ...]
    spread: tuple[SpreadChange, ...]
    before: Totals
    after: Totals
    results: tuple[PlacementResult, PlacementResult]

    @property
    def changed(self) -> list[PodMove]:
        return [p for p in self.pods if p.change != "same"]

    @property
    def node_names(self) -> list[str]:
        """Every node of either version, the before version's first."""
        b, a = self.results
        return list(dict.fromkeys([*b.sim.cluster.nodes, *a.sim.cluster.nodes]))

    def to_dict(self) -> JsonDoc:
        """The ``-o json|yaml`` document."""
        return {
            "pods": [p.to_dict() for p in self.pods],
            "spread": [s.to_dict() for s in self.spread],
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class DiffRequest:
    """What ``kubespread diff`` is asked, once loaded: the two versions to schedule (the same
    cluster and seed, the changed manifests or scheduler configuration)."""

    before: ScheduleRequest
    after: ScheduleRequest


def diff(request: DiffRequest, *, on_step: Callable[[int, int, str], None] | None = None) -> PlacementDiff:
    """The ``diff`` use case: schedule both versions, then pair them (:func:`diff_placements`).
    PlacementError when either version cannot be placed."""
    before = schedule(request.before, on_step=on_step)
    after = schedule(request.after, on_step=on_step)
    return diff_placements(before, after)


def diff_placements(before: PlacementResult, after: PlacementResult) -> PlacementDiff:
    """Two placements paired: pods by name then within their owner, spread rows by owner and
    topology key."""
    return PlacementDiff(
        tuple(_pair(_pods(before), _pods(after))),
        tuple(_pair_spread(before.spread(), after.spread())),
        Totals.of(before),
        Totals.of(after),
        (before, after),
    )


def _pods(result: PlacementResult) -> list[_Pod]:
    """The pods the run placed or left pending, as they ended, with their top owner's label."""
    cluster = result.sim.cluster
    messages = {p.key: p.message for p in result.final.pending}
    rows = []
    for pod in result.involved_pods():
        top = ownership(cluster, pod).top
        node = pod.spec.node_name or None
        zone = zone_of(cluster.nodes[node].metadata.labels) if node and node in cluster.nodes else None
        owner = f"{short_kind(top.kind)}/{top.name}" if top else f"pod/{pod.metadata.name}"
        message = None if node else messages.get(pod.key, "")
        rows.append(_Pod(pod.namespace, owner, PodAt(pod.metadata.name, node, zone, message)))
    return rows


def _change(before: _Pod | None, after: _Pod | None) -> Change:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    if before.at.node == after.at.node:
        if before.at.node is None and before.at.message != after.at.message:
            return "message"
        return "same"
    if before.at.node is None:
        return "placed"
    return "pending" if after.at.node is None else "moved"


def _pair(before: Sequence[_Pod], after: Sequence[_Pod]) -> list[PodMove]:
    """Same namespace and name first; the rest within their owner, in placement order."""
    by_name = {(p.namespace, p.at.name): p for p in after}
    pairs: list[tuple[_Pod | None, _Pod | None]] = []
    left_before = []
    for p in before:
        q = by_name.pop((p.namespace, p.at.name), None)
        if q is None:
            left_before.append(p)
        else:
            pairs.append((p, q))
    left_after: dict[tuple[str, str], list[_Pod]] = {}
    for q in by_name.values():
        left_after.setdefault((q.namespace, q.owner), []).append(q)
    for p in left_before:
        rest = left_after.get((p.namespace, p.owner))
        pairs.append((p, rest.pop(0) if rest else None))
    pairs += [(None, q) for rest in left_after.values() for q in rest]
    moves = []
    for b, a in pairs:
        either = b or a
        assert either is not None
        moves.append(
            PodMove(
                either.namespace,
                either.owner,
                None if b is None else b.at,
                None if a is None else a.at,
                _change(b, a),
            )
        )
    return _reshuffles(moves)


def _reshuffles(moves: list[PodMove]) -> list[PodMove]:
    """Moves that cancel out, said apart: within one workload, pods that only traded nodes (a
    tie among equally good nodes broken the other way, another pod name drawn first) leave
    every node with as many of its pods as before; only the net change per node is a real
    move. Per workload, the moved pods whose new node gained pods (those whose old node lost
    some first) stay ``moved``, up to the gain; the others are ``reshuffled``."""
    delta: dict[tuple[str, str], dict[str, int]] = {}
    for m in moves:
        if m.change == "moved":
            assert m.before is not None and m.after is not None and m.before.node and m.after.node
            d = delta.setdefault((m.namespace, m.owner), {})
            d[m.before.node] = d.get(m.before.node, 0) - 1
            d[m.after.node] = d.get(m.after.node, 0) + 1
    real: set[int] = set()
    for strict in (True, False):
        for i, m in enumerate(moves):
            if m.change != "moved" or i in real:
                continue
            assert m.before is not None and m.after is not None
            d = delta[(m.namespace, m.owner)]
            src, dst = str(m.before.node), str(m.after.node)
            if d[dst] > 0 and (d[src] < 0 or not strict):
                d[dst] -= 1
                d[src] += 1
                real.add(i)
    return [
        m if m.change != "moved" or i in real else replace(m, change="reshuffled")
        for i, m in enumerate(moves)
    ]


def _spread_key(row: SpreadRow) -> tuple[str, str, str]:
    """A spread row's owner label and key: its top owner (a Deployment's ReplicaSets differ
    between versions when the template changed), else its controller, else its pod."""
    ref = row.top or row.controller
    label = f"{short_kind(ref.kind)}/{ref.name}" if ref else f"pod/{row.pod}"
    return row.namespace, label, row.topology_key


def _pair_spread(before: Iterable[SpreadRow], after: Iterable[SpreadRow]) -> list[SpreadChange]:
    sides: dict[tuple[str, str, str], list[SpreadRow | None]] = {}
    for i, version in enumerate((before, after)):
        for r in version:
            entry = sides.setdefault(_spread_key(r), [None, None])
            entry[i] = entry[i] or r  # a workload mid-rollout: its first controller's row
    return [SpreadChange(ns, label, key, b, a) for (ns, label, key), (b, a) in sides.items()]
