"""One scheduling cycle: PreFilter, Filter, PreScore, Score, NormalizeScore, selection.

``schedule_one`` reads the cluster and returns a :class:`Decision`; it never binds (the
caller applies the decision). The decision keeps what ``explain`` needs: per node the
stage and plugin that rejected it with kube-scheduler's reasons, per plugin the raw,
normalized and weighted scores, and the FitError message for an unschedulable pod.

Selection: highest total score; ties go to the lexicographically smallest node name, or to
a seeded random choice among the tied nodes when ``rng`` is given (kube-scheduler picks at
random; a seed keeps runs reproducible).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Code, CycleState, NodeSetCache, PreFilterResult, Status
from kubespread.scheduler.profile import Profile

__all__ = [
    "PRE_FILTER",
    "PRE_FILTER_RESULT",
    "Decision",
    "PluginScores",
    "Rejection",
    "Scheduler",
    "fit_error_message",
    "schedule_one",
    "tie_break_rng",
]

PRE_FILTER: Final = "PreFilter"
PRE_FILTER_RESULT: Final = "PreFilterResult"
FILTER: Final = "Filter"
NO_NODE_AVAILABLE: Final = "0/{} nodes are available"


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why one node is out: the stage (PreFilter, PreFilterResult, Filter) and the status."""

    stage: str
    status: Status


@dataclass(slots=True)
class PluginScores:
    """One score plugin's scores over the scored nodes (aligned with Decision.scored)."""

    raw: np.ndarray
    normalized: np.ndarray
    weight: int

    @property
    def weighted(self) -> np.ndarray:
        return self.normalized * self.weight


@dataclass(slots=True)
class Decision:
    pod: Pod
    #: every node's name in node id order at decision time (a copy: the state may change)
    nodes: np.ndarray
    feasible: list[str] = field(default_factory=list)
    #: (node ids, why) per rejecting step, in the order they rejected; see ``rejections``
    rejected: list[tuple[np.ndarray, Rejection]] = field(default_factory=list)
    pre_filter_status: Status | None = None
    #: nodes that were scored (the feasible ones when more than one), in node id order
    scored: list[str] = field(default_factory=list)
    scores: dict[str, PluginScores] = field(default_factory=dict)
    skipped_score_plugins: list[str] = field(default_factory=list)
    totals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    selected: str | None = None
    #: "scored", "onlyFeasibleNode" or "" (unschedulable)
    selection_reason: str = ""
    fit_error: str = ""
    _rejections: dict[str, Rejection] | None = None
    _scored_index: dict[str, int] | None = None

    @property
    def rejections(self) -> dict[str, Rejection]:
        """Node name → why it was rejected; built on first use (most cycles never ask, and a
        dict over thousands of rejected nodes would cost more than the filters did)."""
        if self._rejections is None:
            out: dict[str, Rejection] = {}
            for ids, rejection in self.rejected:
                out.update(dict.fromkeys(self.nodes[ids].tolist(), rejection))
            self._rejections = out
        return self._rejections

    @property
    def scored_index(self) -> dict[str, int]:
        """Scored node name -> its position in ``scored`` and the score arrays; built once, so
        reading every node's scores (explain, to_dict) is linear, not quadratic."""
        if self._scored_index is None:
            self._scored_index = {n: i for i, n in enumerate(self.scored)}
        return self._scored_index

    @property
    def scheduled(self) -> bool:
        return self.selected is not None

    @property
    def pod_key(self) -> str:
        meta = self.pod.metadata
        return f"{meta.namespace or 'default'}/{meta.name}"

    def node_scores(self, name: str) -> dict[str, dict[str, int]]:
        """{plugin: {raw, normalized, weight, weighted}} for one scored node."""
        i = self.scored_index[name]
        return {
            plugin: {
                "raw": int(s.raw[i]),
                "normalized": int(s.normalized[i]),
                "weight": s.weight,
                "weighted": int(s.normalized[i]) * s.weight,
            }
            for plugin, s in self.scores.items()
        }

    def total(self, name: str) -> int:
        return int(self.totals[self.scored_index[name]])

    def to_dict(self) -> dict[str, Any]:
        """The conformance answer format (../shared/conformance/README.md)."""
        scored = self.scored_index
        feasible = set(self.feasible)
        nodes = []
        for name in self.nodes.tolist():
            entry: dict[str, Any] = {"name": name, "feasible": name in feasible}
            rej = self.rejections.get(name)
            if rej is not None:
                entry["rejectedAt"] = rej.stage
                entry["filter"] = rej.status.to_dict()
            elif name in scored:
                entry["scores"] = self.node_scores(name)
                entry["totalScore"] = int(self.totals[scored[name]])
            nodes.append(entry)
        out: dict[str, Any] = {
            "pod": self.pod_key,
            "nodes": nodes,
            "feasibleNodes": list(self.feasible),
            "scheduled": self.scheduled,
        }
        if self.pre_filter_status is not None:
            out["preFilter"] = {"status": self.pre_filter_status.to_dict()}
        if self.scheduled:
            out["selectedNode"] = self.selected
            out["selectionReason"] = self.selection_reason
            if self.skipped_score_plugins:
                out["skippedScorePlugins"] = list(self.skipped_score_plugins)
        else:
            out["fitError"] = self.fit_error
        return out


def fit_error_message(
    num_nodes: int, rejections: dict[str, Rejection], pre_filter_status: Status | None
) -> str:
    """FitError.Error() without the PostFilter (preemption) part: the PreFilter message, or
    the reasons counted over nodes as "N reason", sorted as strings."""
    msg = NO_NODE_AVAILABLE.format(num_nodes) + ":"
    if pre_filter_status is not None and pre_filter_status.is_rejected:
        return msg + f" {pre_filter_status.message}."
    counts: Counter[str] = Counter()
    for rej in rejections.values():
        counts.update(rej.status.reasons)
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg


def _run_pre_filter(
    profile: Profile, state: CycleState, pod: Pod
) -> tuple[PreFilterResult, Status | None, list[str]]:
    """RunPreFilterPlugins: (merged node set, the rejecting status or None, plugins that
    narrowed the node set). An empty intersection of node sets rejects the pod."""
    result = PreFilterResult()
    narrowing: list[str] = []
    for pl in profile.pre_filter:
        r, st = pl.pre_filter(state, pod)
        if st.is_skip:
            state.skip_filter.add(pl.name)
            continue
        if not st.is_success:
            return result, st.with_plugin(pl.name), [pl.name]
        if r is not None and not r.all_nodes:
            narrowing.append(pl.name)
            result = result.merge(r)
            if result.node_names is not None and not result.node_names:
                if len(narrowing) == 1:
                    text = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    text = f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE, (text,)), narrowing
    return result, None, narrowing


def _filter(profile: Profile, state: CycleState, pod: Pod, ids: np.ndarray, decision: Decision) -> np.ndarray:
    """Run the Filter plugins in profile order; a node leaves at the first rejection."""
    for pl in profile.filter:
        if len(ids) == 0:
            break
        if pl.name in state.skip_filter:
            continue
        res = pl.filter_nodes(state, pod, ids)
        rejected = res.which >= 0
        if not rejected.any():
            continue
        statuses = [st.with_plugin(pl.name) for st in res.statuses]
        for k, st in enumerate(statuses):
            if st.code is Code.ERROR:
                raise RuntimeError(f"plugin {pl.name} failed at Filter: {st.message}")
            decision.rejected.append((ids[res.which == k], Rejection(FILTER, st)))
        ids = ids[~rejected]
    return ids


def _score(profile: Profile, state: CycleState, pod: Pod, ids: np.ndarray, decision: Decision) -> np.ndarray:
    totals = np.zeros(len(ids), dtype=np.int64)
    for pl in profile.pre_score:
        st = pl.pre_score(state, pod, ids)
        if st.is_skip:
            state.skip_score.add(pl.name)
        elif not st.is_success:
            raise RuntimeError(f"plugin {pl.name} failed at PreScore: {st.message}")
    for pl in profile.score:
        if pl.name in state.skip_score:
            decision.skipped_score_plugins.append(pl.name)
            continue
        raw = np.asarray(pl.score_nodes(state, pod, ids), dtype=np.int64)
        normalized = np.asarray(pl.normalize_scores(state, pod, ids, raw.copy()), dtype=np.int64)
        ps = PluginScores(raw, normalized, profile.weight(pl.name))
        decision.scores[pl.name] = ps
        totals += ps.weighted
    return totals


def _name_ranks(cluster: ClusterState) -> np.ndarray:
    """Per node id, the node's position in name order: ties go to the smallest name without
    comparing strings each cycle."""
    ranks = np.empty(cluster.num_nodes, dtype=np.int64)
    ranks[np.argsort(cluster.node_names.astype(str), kind="stable")] = np.arange(cluster.num_nodes)
    return ranks


_NAME_RANKS: Final = NodeSetCache(_name_ranks)


def schedule_one(
    pod: Pod, cluster: ClusterState, profile: Profile, *, rng: random.Random | None = None
) -> Decision:
    """Decide where ``pod`` goes on ``cluster`` under ``profile`` (see the module notes)."""
    names = cluster.node_names
    decision = Decision(pod=pod, nodes=names.copy())
    state = CycleState(cluster)
    pre, rejected_by, narrowing = _run_pre_filter(profile, state, pod)
    if rejected_by is not None:
        if rejected_by.code is Code.ERROR:
            raise RuntimeError(f"plugin {rejected_by.plugin} failed at PreFilter: {rejected_by.message}")
        decision.pre_filter_status = rejected_by
        decision.rejected.append((np.arange(len(names)), Rejection(PRE_FILTER, rejected_by)))
        decision.fit_error = fit_error_message(len(names), decision.rejections, rejected_by)
        return decision
    ids = np.arange(len(names), dtype=np.int64)
    if pre.node_names is not None:
        keep = np.fromiter((str(n) in pre.node_names for n in names), dtype=bool, count=len(names))
        status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
        )
        decision.rejected.append((ids[~keep], Rejection(PRE_FILTER_RESULT, status)))
        ids = ids[keep]
    ids = _filter(profile, state, pod, ids, decision)
    decision.feasible = names[ids].tolist()
    if len(ids) == 0:
        decision.fit_error = fit_error_message(len(names), decision.rejections, None)
        return decision
    if len(ids) == 1:
        decision.selected = decision.feasible[0]
        decision.selection_reason = "onlyFeasibleNode"
        return decision
    decision.scored = list(decision.feasible)
    decision.totals = _score(profile, state, pod, ids, decision)
    best = ids[decision.totals == decision.totals.max()]
    best = best[np.argsort(_NAME_RANKS.get(cluster)[best])]  # by name
    decision.selected = str(names[best[0] if rng is None else rng.choice(best.tolist())])
    decision.selection_reason = "scored"
    return decision


def tie_break_rng(seed: int) -> random.Random:
    """The generator a scheduler breaks ties with: the simulation and the live scheduler use
    the same one, so the same seed and the same sequence of pods give the same placements."""
    return random.Random(f"kubespread-scheduler-{seed}")


class Scheduler:
    """A profile bound to a tie-break policy: ``Scheduler().schedule(pod, cluster)``.

    ``seed`` set: ties among the best nodes are broken by a seeded random choice (like
    kube-scheduler's random pick, but reproducible); unset: the smallest node name wins.
    """

    def __init__(self, profile: Profile | None = None, *, seed: int | None = None) -> None:
        if profile is None:
            from kubespread.scheduler.config import default_profile

            profile = default_profile()
        self.profile = profile
        self._rng = random.Random(seed) if seed is not None else None

    def schedule(self, pod: Pod, cluster: ClusterState) -> Decision:
        return schedule_one(pod, cluster, self.profile, rng=self._rng)
