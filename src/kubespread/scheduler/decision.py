"""What one scheduling cycle decided (:class:`Decision`), and the words it is told in.

A Decision keeps what ``explain`` and the conformance answer need: per node the stage and
plugin that rejected it with kube-scheduler's reasons, per plugin the raw, normalized and
weighted scores, the winner and how a tie was broken, how the nodes were sampled, and for an
unschedulable pod the FitError message and DefaultPreemption's PreemptionResult. The cycle
that makes it is scheduler/scheduler.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.scheduler.framework import PreemptionResult, Status, fit_error_text
from kubespread.scheduler.selection import Sampling
from kubespread.scheduler.timings import CycleTimings

__all__ = [
    "PRE_FILTER_RESULT",
    "TIE_HEAP",
    "TIE_SEEDED_RANDOM",
    "TIE_SMALLEST_NAME",
    "Decision",
    "PluginScores",
    "Rejection",
    "fit_error_message",
    "sampling_dict",
    "with_post_filter",
]

#: Decision.tie_break: the rule that broke a tie of best totals: the score heap's top over
#: the found order (kube-scheduler at parallelism 1), the smallest name (the corpus's
#: convention), or a seeded draw (a stand-in for the race of kube's 16 Filter threads)
TIE_HEAP: Final = "heap"
TIE_SMALLEST_NAME: Final = "smallestName"
TIE_SEEDED_RANDOM: Final = "seededRandom"


PRE_FILTER_RESULT: Final = "PreFilterResult"


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
    #: every node's name in node id order at decision time (a read-only copy, shared by the
    #: decisions made on the same node set: the state may change)
    nodes: np.ndarray
    #: the ids (positions in ``nodes``) of the nodes that passed every filter, in id order
    feasible_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: (node ids, why) per rejecting step, in the order they rejected; see ``rejections``
    rejected: list[tuple[np.ndarray, Rejection]] = field(default_factory=list)
    pre_filter_status: Status | None = None
    #: the PostFilter plugins' combined answer; None when none ran or one could not say
    post_filter_status: Status | None = None
    #: whether the feasible nodes were scored (there were more than one); see ``scored``
    was_scored: bool = False
    scores: dict[str, PluginScores] = field(default_factory=dict)
    skipped_score_plugins: list[str] = field(default_factory=list)
    totals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    selected: str | None = None
    #: "scored", "onlyFeasibleNode" or "" (unschedulable)
    selection_reason: str = ""
    #: how a tie among the best totals was broken (TIE_HEAP, TIE_SMALLEST_NAME,
    #: TIE_SEEDED_RANDOM), or "" when one node scored highest
    tie_break: str = ""
    #: the node ids that share the best total (the winner among them), in id order; empty when
    #: nothing was scored
    tied_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: how the nodes were visited and sampled, when the cycle ran as kube-scheduler's
    #: (``order`` given); None for the every-node cycle
    sampling: Sampling | None = None
    #: kube-scheduler's FitError message, the PostFilter part included when known
    fit_error: str = ""
    #: the same without the PostFilter part (what the filters alone say)
    fit_error_without_post_filter: str = ""
    #: DefaultPreemption's answer for an unschedulable pod: the nominated node (None when
    #: preemption cannot help) and the victims to evict; None when it did not run
    preemption: PreemptionResult | None = None
    #: the PreFilter plugins whose node sets (PreFilterResult) left nodes out or intersected
    #: to none: the "unschedulable plugins" of those rejections, which name no plugin
    narrowing_plugins: list[str] = field(default_factory=list)
    #: where the cycle's time went, per extension point and plugin (PostFilter's includes
    #: preemption's dry run); None when the cycle was not timed (``schedule_one(timed=False)``)
    timings: CycleTimings | None = None
    _rejections: dict[str, Rejection] | None = None
    _scored_index: dict[str, int] | None = None
    _feasible: list[str] | None = None

    @property
    def feasible(self) -> list[str]:
        """The feasible nodes' names, in node id order; built on first use (a cycle needs only
        the winner's name, and thousands of names cost more than the selection did)."""
        if self._feasible is None:
            self._feasible = self.nodes[self.feasible_ids].tolist()
        return self._feasible

    @property
    def scored(self) -> list[str]:
        """Nodes that were scored (the feasible ones when more than one), in node id order."""
        return self.feasible if self.was_scored else []

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
    def tied(self) -> list[str]:
        """The nodes that shared the best total, by name (the winner is one of them)."""
        return sorted(self.nodes[self.tied_ids].tolist())

    @property
    def pod_key(self) -> str:
        return self.pod.key

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
        sm = self.sampling
        unexamined = set(self.nodes[sm.unexamined_ids].tolist()) if sm is not None else set()
        nodes = []
        for name in self.nodes.tolist():
            entry: dict[str, Any] = {"name": name, "feasible": name in feasible}
            if name in unexamined:
                entry["examined"] = False
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
        if self.sampling is not None:
            out["sampling"] = sampling_dict(self)
        if self.scheduled:
            out["selectedNode"] = self.selected
            out["selectionReason"] = self.selection_reason
            if len(self.tied_ids) > 1:
                out["tiedNodes"] = len(self.tied_ids)
            if self.skipped_score_plugins:
                out["skippedScorePlugins"] = list(self.skipped_score_plugins)
        else:
            out["fitError"] = self.fit_error
            out["fitErrorWithoutPostFilter"] = self.fit_error_without_post_filter
            if self.post_filter_status is not None:
                out["postFilter"] = {"status": self.post_filter_status.to_dict()}
            out["preemption"] = (self.preemption or PreemptionResult()).to_dict()
        return out


def sampling_dict(decision: Decision) -> dict[str, Any]:
    """What the sampling of a kube-scheduler cycle did, for answers and reports."""
    sm = decision.sampling
    assert sm is not None
    names = decision.nodes
    out: dict[str, Any] = {
        "percentageOfNodesToScore": sm.percentage,
        "numFeasibleNodesToFind": sm.to_find,
        "startIndex": sm.start,
        "visited": len(sm.visit),
        "examined": sm.examined,
        "unexamined": sm.unexamined,
        "processed": sm.processed,
    }
    if len(sm.visit):
        out["firstExamined"] = str(names[sm.visit[0]])
    if sm.stopped_at >= 0:
        out["stoppedAt"] = str(names[sm.stopped_at])
    if sm.nominated_first:
        out["nominatedNodeFirst"] = True
    if sm.narrowed:
        out["preFilterResultOrder"] = (
            "random in kube-scheduler (Go map order); kubespread visits the node tree's order"
        )
    return out


def fit_error_message(
    num_nodes: int, rejections: dict[str, Rejection], pre_filter_status: Status | None
) -> str:
    """FitError.Error() without the PostFilter (preemption) part: the PreFilter message, or
    the reasons counted over nodes as "N reason", sorted as strings."""
    if pre_filter_status is not None and pre_filter_status.is_rejected:
        return fit_error_text(num_nodes, {}) + f" {pre_filter_status.message}."
    # nodes rejected alike share their reasons: counted per distinct reasons, then per reason
    per_reasons = Counter(rej.status.reasons for rej in rejections.values())
    counts: Counter[str] = Counter()
    for reasons, nodes in per_reasons.items():
        for reason in reasons:
            counts[reason] += nodes
    return fit_error_text(num_nodes, counts)


def with_post_filter(message: str, post_filter_status: Status | None) -> str:
    """FitError.Error(): the PostFilter message, when there is one, follows after a space."""
    if post_filter_status is None or not post_filter_status.message:
        return message
    return f"{message} {post_filter_status.message}"
