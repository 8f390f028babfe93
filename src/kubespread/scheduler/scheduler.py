"""One scheduling cycle: PreFilter, Filter, PreScore, Score, NormalizeScore, selection, and
PostFilter when no node fits.

``schedule_one`` reads the cluster and returns a :class:`Decision` (scheduler/decision.py:
what ``explain`` and the conformance answer read); it never binds nor evicts (the caller
applies the decision: binds the pod, or deletes the victims of ``Decision.preemption``).
The FitError message carries the PostFilter plugins' part when they can tell what
kube-scheduler would say. PostFilter reaches the
profile's filters through a :class:`ProfileHandle` on the CycleState (preemption's dry run).

Which nodes, and which of the best: given a :class:`~kubespread.scheduler.selection.NodeOrder`
(a scheduler instance's node tree and nextStartNodeIndex), the cycle is kube-scheduler's
``schedulePod``: the pod's nominated node tried first, nodes visited in the tree's order from
the start index, Filter stopped once ``numFeasibleNodesToFind`` are found (the profile's
``percentageOfNodesToScore``), only those scored, and the winner the top of the score heap
(scheduler/selection.py says what of it is exact). Without one (``order=None``) the cycle is
the conformance corpus's: every node filtered and scored, ties to the smallest node name.
``rng`` draws the winner among the tied best at random instead (kube-scheduler's 16 Filter
threads make that pick a race; a seed keeps runs reproducible).
"""

from __future__ import annotations

import contextlib
import copy
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, TypeAlias

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.decision import (
    PRE_FILTER_RESULT,
    TIE_HEAP,
    TIE_SEEDED_RANDOM,
    TIE_SMALLEST_NAME,
    Decision,
    PluginScores,
    Rejection,
    fit_error_message,
    with_post_filter,
)
from kubespread.scheduler.framework import (
    PREEMPTION_RESULT,
    READS_NODE_PODS,
    SUCCESS,
    Code,
    CycleState,
    FilterPlugin,
    NodeSetCache,
    NodeStatuses,
    PreFilterResult,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.selection import (
    NodeOrder,
    Sampling,
    allowed_nodes,
    heap_top,
    next_chunk,
    num_feasible_nodes_to_find,
)
from kubespread.scheduler.timings import (
    FILTER,
    FIT_ERROR,
    NARROW,
    NOMINATED,
    NORMALIZE_SCORE,
    POST_FILTER,
    PRE_FILTER,
    PRE_SCORE,
    SCORE,
    SELECT_HOST,
    SNAPSHOT,
    VISIT,
    CycleTimings,
)

__all__ = [
    "PRE_FILTER",
    "PRE_FILTER_RESULT",
    "TIE_HEAP",
    "TIE_SEEDED_RANDOM",
    "TIE_SMALLEST_NAME",
    "Decision",
    "Nominated",
    "PluginScores",
    "ProfileHandle",
    "Rejection",
    "Scheduler",
    "fit_error_message",
    "schedule_one",
    "tie_break_rng",
    "with_post_filter",
]

_now = time.perf_counter_ns


def _run_pre_filter(
    profile: Profile, state: CycleState, pod: Pod, timings: CycleTimings | None
) -> tuple[PreFilterResult, Status | None, list[str]]:
    """RunPreFilterPlugins: (merged node set, the rejecting status or None, plugins that
    narrowed the node set). UnschedulableAndUnresolvable stops the loop at once (the later
    plugins' PreFilter never runs, which DynamicResources' PostFilter notices); Unschedulable
    lets the others run, so preemption finds their state, and the last one rejects the pod.
    An empty intersection of node sets rejects the pod as UnschedulableAndUnresolvable."""
    result = PreFilterResult()
    narrowing: list[str] = []
    rejected: Status | None = None
    spent = timings.at(PRE_FILTER) if timings is not None else None
    for pl in profile.pre_filter:
        started = _now() if spent is not None else 0
        r, st = pl.pre_filter(state, pod)
        if spent is not None:
            spent[pl.name] = spent.get(pl.name, 0) + _now() - started
            if st.code is not Code.SUCCESS and timings is not None:
                timings.worsen(PRE_FILTER, pl.name, st.code)
        if st.is_skip:
            state.skip_filter.add(pl.name)
            continue
        if st.code is Code.UNSCHEDULABLE:
            rejected = st.with_plugin(pl.name)
            continue
        if not st.is_success:
            return result, st.with_plugin(pl.name), [pl.name]
        if r is not None and not r.all_nodes:
            narrowing.append(pl.name)
            result = result.merge(r)
            if result.node_names is not None and not result.node_names:
                names = sorted(narrowing)
                if len(names) == 1:
                    text = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    text = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (text,)), narrowing
    return result, rejected, narrowing


def _run_post_filter(
    profile: Profile, state: CycleState, pod: Pod, statuses: NodeStatuses, timings: CycleTimings | None
) -> Status | None:
    """RunPostFilterPlugins: Success or UnschedulableAndUnresolvable ends the loop with that
    plugin's status, any other non-rejecting code as an Error; otherwise the reasons gather
    into one Unschedulable status named after the first plugin. None when a plugin cannot say
    (the message must not carry half a PostFilter part) or when the profile has none."""
    reasons: list[str] = []
    first = ""
    for pl in profile.post_filter:
        started = _now() if timings is not None else 0
        st = pl.post_filter(state, pod, statuses)
        if timings is not None:
            timings.call(POST_FILTER, pl.name, started, st.code.value if st is not None else "Error")
        if st is None:
            return None
        if st.is_success or st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return st.with_plugin(pl.name)
        if not st.is_rejected:
            return Status(Code.ERROR, (st.message,), pl.name)
        reasons += st.reasons
        first = first or pl.name
    if not first:
        return None
    return Status(Code.UNSCHEDULABLE, tuple(reasons), first)


def _unschedulable(
    profile: Profile, state: CycleState, pod: Pod, decision: Decision, pre_filter_status: Status | None
) -> Decision:
    """Fill in the FitError message and run PostFilter (not for an empty cluster: kube-scheduler
    answers "no nodes available to schedule pods" there and runs no PostFilter)."""
    t = decision.timings
    started = _now() if t is not None else 0
    num_nodes = len(decision.nodes)
    msg = fit_error_message(num_nodes, decision.rejections, pre_filter_status)
    decision.fit_error_without_post_filter = msg
    if num_nodes:
        statuses = NodeStatuses((ids, rej.status) for ids, rej in decision.rejected)
        if t is not None:
            t.step(FIT_ERROR, started)
        started = _now() if t is not None else 0
        decision.post_filter_status = _run_post_filter(profile, state, pod, statuses, t)
        if t is not None:
            answer = decision.post_filter_status
            t.point(POST_FILTER, started, answer.code.value if answer is not None else "Error")
        with contextlib.suppress(StateNotFoundError):
            decision.preemption = state.read(PREEMPTION_RESULT)
    elif t is not None:
        t.step(FIT_ERROR, started)
    decision.fit_error = with_post_filter(msg, decision.post_filter_status)
    return decision


def _filter(profile: Profile, state: CycleState, pod: Pod, ids: np.ndarray, decision: Decision) -> np.ndarray:
    """Run the Filter plugins in profile order; a node leaves at the first rejection."""
    t = decision.timings
    point_started = _now() if t is not None else 0
    spent = t.at(FILTER) if t is not None else None
    for pl in profile.filter:
        if len(ids) == 0:
            break
        if pl.name in state.skip_filter:
            continue
        started = _now() if spent is not None else 0
        res = pl.filter_nodes(state, pod, ids)
        if spent is not None:
            spent[pl.name] = spent.get(pl.name, 0) + _now() - started
        if res.all_pass:
            continue
        rejected = res.which >= 0
        if not rejected.any():
            continue
        statuses = [st.with_plugin(pl.name) for st in res.statuses]
        for k, st in enumerate(statuses):
            if st.code is Code.ERROR:
                raise RuntimeError(f"plugin {pl.name} failed at Filter: {st.message}")
            judged = ids[res.which == k]
            decision.rejected.append((judged, Rejection(FILTER, st)))
            if t is not None and len(judged):  # the call's status: the worst it gave a node
                t.worsen(FILTER, pl.name, st.code)
        ids = ids[~rejected]
    if t is not None:
        t.point(FILTER, point_started, "Success" if len(ids) else Code.UNSCHEDULABLE.value)
    return ids


def _score(profile: Profile, state: CycleState, pod: Pod, ids: np.ndarray, decision: Decision) -> np.ndarray:
    totals = np.zeros(len(ids), dtype=np.int64)
    t = decision.timings
    point_started = _now() if t is not None else 0
    spent = t.at(PRE_SCORE) if t is not None else None
    for pre in profile.pre_score:
        started = _now() if spent is not None else 0
        st = pre.pre_score(state, pod, ids)
        if spent is not None:
            spent[pre.name] = spent.get(pre.name, 0) + _now() - started
            if st.code is not Code.SUCCESS and t is not None:
                t.worsen(PRE_SCORE, pre.name, st.code)
        if st.is_skip:
            state.skip_score.add(pre.name)
        elif not st.is_success:
            raise RuntimeError(f"plugin {pre.name} failed at PreScore: {st.message}")
    if t is not None:
        t.point(PRE_SCORE, point_started)
        scoring, normalizing = t.at(SCORE), t.at(NORMALIZE_SCORE)
        point_started = _now()
    for pl in profile.score:
        if pl.name in state.skip_score:
            decision.skipped_score_plugins.append(pl.name)
            continue
        if t is None:
            raw = np.asarray(pl.score_nodes(state, pod, ids), dtype=np.int64)
            normalized = np.asarray(pl.normalize_scores(state, pod, ids, raw.copy()), dtype=np.int64)
        else:
            started = _now()
            raw = np.asarray(pl.score_nodes(state, pod, ids), dtype=np.int64)
            scored = _now()
            normalized = np.asarray(pl.normalize_scores(state, pod, ids, raw.copy()), dtype=np.int64)
            done = _now()
            name = pl.name
            scoring[name] = scoring.get(name, 0) + scored - started
            normalizing[name] = normalizing.get(name, 0) + done - scored
        ps = PluginScores(raw, normalized, profile.weight(pl.name))
        decision.scores[pl.name] = ps
        totals += ps.weighted
    if t is not None:
        t.point(SCORE, point_started)
    return totals


def _name_ranks(cluster: ClusterState) -> np.ndarray:
    """Per node id, the node's position in name order: ties go to the smallest name without
    comparing strings each cycle."""
    ranks = np.empty(cluster.num_nodes, dtype=np.int64)
    ranks[np.argsort(cluster.node_names.astype(str), kind="stable")] = np.arange(cluster.num_nodes)
    return ranks


_NAME_RANKS: Final = NodeSetCache(_name_ranks)


def _node_names(cluster: ClusterState) -> np.ndarray:
    """The node names as they are now, read-only: one copy per node set, which every decision
    made on it shares (cluster.node_names is a live view that changes with the nodes)."""
    names = cluster.node_names.copy()
    names.flags.writeable = False
    return names


_NODE_NAMES: Final = NodeSetCache(_node_names)


#: node name -> the pods nominated to run there (kube-scheduler's PodNominator), as a cycle
#: reads it: pods that preempted and wait for their victims to go
Nominated: TypeAlias = Mapping[str, Sequence[Pod]]


def _nominated_ge(nominated: Nominated, node_name: str, pod: Pod) -> list[Pod]:
    """addGENominatedPods' choice: the other pods nominated to the node with a priority at
    least the pod's (they are counted as if already there)."""
    priority = pod.spec.priority or 0
    return [
        p for p in nominated.get(node_name, ()) if p.key != pod.key and (p.spec.priority or 0) >= priority
    ]


def _on_node(pod: Pod, node_name: str) -> Pod:
    new = copy.copy(pod)
    spec = copy.copy(pod.spec)
    spec.node_name = node_name
    new.spec = spec
    return new


@contextlib.contextmanager
def _placed(cluster: ClusterState, pods: Sequence[Pod], node_name: str) -> Iterator[None]:
    """The pods put on the node for a while (inside ``cluster.hypothetical``): added, or, for
    one the cluster holds as pending, bound, and put back as they were on the way out."""
    undo: list[tuple[str, Pod | None]] = []
    with cluster.hypothetical():
        try:
            for p in pods:
                held = cluster.pods.get(p.key)
                if held is None:
                    cluster.add_pod(_on_node(p, node_name))
                else:
                    cluster.update_pod(_on_node(held, node_name))
                undo.append((p.key, held))
            yield
        finally:
            for key, held in reversed(undo):
                if held is None:
                    cluster.delete_pod(key)
                else:
                    cluster.update_pod(held)


class ProfileHandle:
    """The framework handle a cycle gives its plugins (FrameworkHandle): the profile's filters
    on one node, the pods nominated to nodes, and where preemption's dry run starts (0, or a
    seeded random offset as kube-scheduler picks a random one)."""

    __slots__ = ("cluster", "nominated", "offset_rng", "profile")

    def __init__(
        self,
        profile: Profile,
        cluster: ClusterState,
        offset_rng: random.Random | None = None,
        nominated: Nominated | None = None,
    ) -> None:
        self.profile = profile
        self.cluster = cluster
        self.offset_rng = offset_rng
        self.nominated = nominated

    def run_filters(self, pod: Pod, node_index: int) -> Status:
        """RunFilterPluginsWithNominatedPods on one node: with the nominated pods of at least
        the pod's priority counted as there, then (if that passed) without them, so that the
        pod fits either way; the first rejecting status."""
        if self.nominated:
            name = self.cluster.node_info_at(node_index).name
            extra = _nominated_ge(self.nominated, name, pod)
            if extra:
                with _placed(self.cluster, extra, name):
                    status = self._run_filters(pod, node_index)
                if not status.is_success:
                    return status
        return self._run_filters(pod, node_index)

    def _run_filters(self, pod: Pod, node_index: int) -> Status:
        """RunFilterPlugins on one node, the plugins' PreFilter state computed afresh over the
        cluster as it is now (what kube-scheduler's PreFilter AddPod/RemovePod extensions
        keep up to date). A PreFilter rejection does not stop the filters: kube-scheduler
        runs only them here."""
        state = CycleState(self.cluster, self)
        _, rejected, _ = _run_pre_filter(self.profile, state, pod, None)  # inside PostFilter's time
        if rejected is not None and rejected.code is Code.ERROR:
            return rejected
        ids = np.array([node_index], dtype=np.int64)
        for pl in self.profile.filter:
            if pl.name in state.skip_filter:
                continue
            res = pl.filter_nodes(state, pod, ids)
            k = int(res.which[0])
            if k >= 0:
                return res.statuses[k].with_plugin(pl.name)
        return SUCCESS

    def candidate_offset(self, num_nodes: int) -> int:
        if self.offset_rng is None or num_nodes <= 1:
            return 0
        return self.offset_rng.randrange(num_nodes)

    def removal_filters(self, pod: Pod) -> _RemovalFilters | None:
        state = CycleState(self.cluster, self)
        _, rejected, _ = _run_pre_filter(self.profile, state, pod, None)
        if rejected is not None and rejected.code is Code.ERROR:
            return None
        plugins = [pl for pl in self.profile.filter if pl.name not in state.skip_filter]
        return _RemovalFilters(self, pod, state, plugins)


class _RemovalFilters:
    """ProfileHandle.removal_filters' answer: PreFilter's state computed once, and the
    Filter plugins run on copies of a node's NodeInfo with pods taken off
    (``ClusterState.node_info_without``), when each plugin says that gives the verdict
    (``FilterPlugin.judges_without``). A plugin that reads more than the pods on the node
    answers the same for every subset then: its verdict is computed once per node."""

    __slots__ = ("handle", "plugins", "pod", "state")

    def __init__(
        self, handle: ProfileHandle, pod: Pod, state: CycleState, plugins: list[FilterPlugin]
    ) -> None:
        self.handle, self.pod, self.state, self.plugins = handle, pod, state, plugins

    def on_node(self, node_index: int, gone: Sequence[Pod]) -> Callable[[Sequence[Pod]], Status] | None:
        handle, pod, state = self.handle, self.pod, self.state
        cluster = handle.cluster
        info = cluster.node_info_at(node_index)
        if handle.nominated and _nominated_ge(handle.nominated, info.name, pod):
            return None
        if not all(pl.judges_without(state, pod, gone) for pl in self.plugins):
            return None
        # (plugin, its verdict when it does not depend on which pods are gone)
        steps: list[tuple[FilterPlugin, Status | None]] = []
        for pl in self.plugins:
            if pl.reads == READS_NODE_PODS:
                steps.append((pl, None))
                continue
            st = pl.filter(state, pod, info)
            if not st.is_success:  # whatever goes, the answer is this one or an earlier one's
                steps.append((pl, st.with_plugin(pl.name)))
                break
        if not steps:
            return lambda off: SUCCESS

        def verdict(off: Sequence[Pod]) -> Status:
            node = cluster.node_info_without(node_index, off)
            for pl, fixed in steps:
                st = fixed if fixed is not None else pl.filter(state, pod, node).with_plugin(pl.name)
                if not st.is_success:
                    return st
            return SUCCESS

        return verdict


def _with_nominated(
    handle: ProfileHandle, pod: Pod, reached: np.ndarray, ids: np.ndarray, decision: Decision
) -> np.ndarray:
    """Filter again, one by one, the nodes of ``reached`` (those that went through Filter;
    ``ids`` the ones that passed) that have nominated pods of at least the pod's priority:
    their verdict is RunFilterPluginsWithNominatedPods' (see ProfileHandle.run_filters).
    Returns the feasible node ids among ``reached``."""
    nominated = handle.nominated
    assert nominated is not None
    cluster = handle.cluster
    redo = []
    for name in nominated:
        if name in cluster.nodes and _nominated_ge(nominated, name, pod):
            redo.append(cluster.node_index(name))
    if not redo:
        return ids
    again = np.intersect1d(np.asarray(redo, dtype=np.int64), reached)
    if not len(again):
        return ids
    decision.rejected = [
        (np.setdiff1d(i_ids, again) if rej.stage == FILTER else i_ids, rej)
        for i_ids, rej in decision.rejected
    ]
    decision.rejected = [(i_ids, rej) for i_ids, rej in decision.rejected if len(i_ids)]
    passed = []
    for i in again.tolist():
        status = handle.run_filters(pod, i)
        if status.is_success:
            passed.append(i)
        else:
            decision.rejected.append((np.array([i], dtype=np.int64), Rejection(FILTER, status)))
    return np.union1d(np.setdiff1d(ids, again), np.asarray(passed, dtype=np.int64)).astype(np.int64)


def schedule_one(
    pod: Pod,
    cluster: ClusterState,
    profile: Profile,
    *,
    rng: random.Random | None = None,
    offset_rng: random.Random | None = None,
    nominated: Nominated | None = None,
    order: NodeOrder | None = None,
    timed: bool = True,
) -> Decision:
    """Decide where ``pod`` goes on ``cluster`` under ``profile`` (see the module notes).
    ``order``: the scheduler instance's node tree and start index, to visit, sample and pick
    as kube-scheduler does (it advances the start index); None: every node, smallest-name ties.
    ``rng``: draw the winner among the tied best at random. ``offset_rng`` picks where
    preemption's dry run starts among the potential nodes (their first when None).
    ``nominated``: pods nominated to nodes by earlier preemptions; on a node, those of at
    least the pod's priority count as there (the filters run with and without them).
    ``timed``: keep the cycle's timings in ``Decision.timings``."""
    if not timed:
        return _schedule_one(pod, cluster, profile, rng, offset_rng, nominated, order, None)
    t = CycleTimings()
    started = _now()
    decision = _schedule_one(pod, cluster, profile, rng, offset_rng, nominated, order, t)
    t.cycle_ns = _now() - started
    return decision


def _schedule_one(
    pod: Pod,
    cluster: ClusterState,
    profile: Profile,
    rng: random.Random | None,
    offset_rng: random.Random | None,
    nominated: Nominated | None,
    order: NodeOrder | None,
    t: CycleTimings | None,
) -> Decision:
    started = _now() if t is not None else 0
    names = cluster.node_names
    decision = Decision(pod=pod, nodes=_NODE_NAMES.get(cluster), timings=t)
    handle = ProfileHandle(profile, cluster, offset_rng, nominated)
    state = CycleState(cluster, handle)
    if t is not None:
        t.step(SNAPSHOT, started)
        started = _now()
    pre, rejected_by, narrowing = _run_pre_filter(profile, state, pod, t)
    if t is not None:
        t.point(PRE_FILTER, started, rejected_by.code.value if rejected_by is not None else "Success")
    if narrowing and (rejected_by is None or not rejected_by.plugin):
        decision.narrowing_plugins = sorted(narrowing)
    if rejected_by is not None:
        if rejected_by.code is Code.ERROR:
            raise RuntimeError(f"plugin {rejected_by.plugin} failed at PreFilter: {rejected_by.message}")
        decision.pre_filter_status = rejected_by
        decision.rejected.append((np.arange(len(names)), Rejection(PRE_FILTER, rejected_by)))
        return _unschedulable(profile, state, pod, decision, rejected_by)
    if order is not None:
        if _nominated_node_fits(handle, state, pod, order, decision):
            return decision
        ids = _sampled_feasible(handle, state, pod, pre, narrowing, order, decision)
    else:
        ids = np.arange(len(names), dtype=np.int64)
        if pre.node_names is not None:
            ids = _narrow(cluster, pre.node_names, narrowing, ids, decision)
        reached = ids
        ids = _filter(profile, state, pod, ids, decision)
        if nominated:
            started = _now() if t is not None else 0
            ids = _with_nominated(handle, pod, reached, ids, decision)
            if t is not None:
                t.step(NOMINATED, started)
    decision.feasible_ids = np.sort(ids) if order is not None else ids
    if len(ids) == 0:
        return _unschedulable(profile, state, pod, decision, None)
    if len(ids) == 1:
        decision.selected = str(names[ids[0]])
        decision.selection_reason = "onlyFeasibleNode"
        decision.tied_ids = decision.feasible_ids
        return decision
    decision.was_scored = True
    decision.totals = _score(profile, state, pod, decision.feasible_ids, decision)
    started = _now() if t is not None else 0
    best_mask = decision.totals == decision.totals.max()
    best = decision.feasible_ids[best_mask]
    decision.tied_ids = best
    if rng is not None:  # the seeded pick among the tied, in name order
        ranks = _NAME_RANKS.get(cluster)[best]
        decision.selected = str(names[rng.choice(best[np.argsort(ranks)].tolist())])
    elif order is not None:  # the heap's top over the found order
        found = ids  # in the order Filter found them
        totals_found = decision.totals[np.searchsorted(decision.feasible_ids, found)]
        decision.selected = str(names[found[heap_top(totals_found)]])
    else:  # the smallest name: one pass, no sort of the tied nodes
        decision.selected = str(names[best[np.argmin(_NAME_RANKS.get(cluster)[best])]])
    if len(best) > 1:
        decision.tie_break = (
            TIE_SEEDED_RANDOM if rng is not None else TIE_HEAP if order is not None else TIE_SMALLEST_NAME
        )
    decision.selection_reason = "scored"
    if t is not None:
        t.step(SELECT_HOST, started)
    return decision


def _narrow(
    cluster: ClusterState,
    node_names: frozenset[str],
    narrowing: list[str],
    ids: np.ndarray,
    decision: Decision,
) -> np.ndarray:
    """Leave out the nodes a PreFilterResult does not hold (rejected as kube-scheduler's
    absent-node status says), returning the rest of ``ids`` in their order."""
    t = decision.timings
    started = _now() if t is not None else 0
    keep = allowed_nodes(cluster, node_names)
    status = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",),
    )
    left_out = np.flatnonzero(~keep)
    decision.rejected.append((left_out, Rejection(PRE_FILTER_RESULT, status)))
    if t is not None:
        t.step(NARROW, started)
    kept: np.ndarray = ids[keep[ids]]
    return kept


def _nominated_node_fits(
    handle: ProfileHandle, state: CycleState, pod: Pod, order: NodeOrder, decision: Decision
) -> bool:
    """evaluateNominatedNode: a pod nominated by an earlier preemption tries that node first,
    and takes it, unscored, when it passes every filter (the start index does not move).
    When it does not, its rejection stays (kube's NodeToStatus keeps it, and counts it as
    processed) and the search goes on over every node."""
    cluster = handle.cluster
    name = pod.status.nominated_node_name
    if not name or name not in cluster.nodes:
        return False
    node = np.array([cluster.node_index(name)], dtype=np.int64)
    ids = _filter(handle.profile, state, pod, node, decision)
    if handle.nominated:
        ids = _with_nominated(handle, pod, node, ids, decision)
    if not len(ids):
        return False
    decision.feasible_ids = ids
    decision.tied_ids = ids
    decision.selected = name
    decision.selection_reason = "nominatedNode"
    decision.sampling = Sampling(
        start=order.next_start,
        visit=node,
        to_find=1,
        examined=1,
        nominated_first=True,
        percentage=handle.profile.percentage_of_nodes_to_score,
    )
    return True


#: the first chunk filtered is this many times numFeasibleNodesToFind (then the rest)
_CHUNK_FACTOR: Final = 2


def _sampled_feasible(
    handle: ProfileHandle,
    state: CycleState,
    pod: Pod,
    pre: PreFilterResult,
    narrowing: list[str],
    order: NodeOrder,
    decision: Decision,
) -> np.ndarray:
    """findNodesThatFitPod past PreFilter, at parallelism 1: visit the nodes in the tree's
    order from nextStartNodeIndex, stop at the first feasible node beyond
    numFeasibleNodesToFind (it is neither kept nor counted; the rejections before it are),
    advance the start index by the nodes processed. Returns the feasible node ids in the
    order they were found.

    The filters judge many nodes per call, so the visit is filtered in chunks (the first a few
    times what is needed, then the rest) and cut where a one-node-at-a-time search stops: the
    verdicts, the nodes found and the rejections kept are the same."""
    cluster = handle.cluster
    profile = handle.profile
    t = decision.timings
    started = _now() if t is not None else 0
    visit_all = order.visit_ids(cluster)
    if t is not None:
        t.step(VISIT, started)
    # a nominated node tried first and rejected: kept where the visit does not judge it again
    tried_first, decision.rejected = decision.rejected, []
    candidates = visit_all
    if pre.node_names is not None:  # in the tree's order (kube's: Go's map order)
        candidates = _narrow(cluster, pre.node_names, narrowing, visit_all, decision)
    started = _now() if t is not None else 0
    m = len(candidates)
    to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, m)
    if not profile.score:
        to_find = min(1, m)
    start = order.next_start % m if m else 0
    visit = np.concatenate((candidates[start:], candidates[:start])) if start else candidates
    if t is not None:
        t.step(VISIT, started)
    feasible = np.zeros(cluster.num_nodes, dtype=bool)
    done = found_count = 0
    chunk = max(_CHUNK_FACTOR * to_find + 1, 64)
    while done < m and found_count <= to_find:
        reached = visit[done : done + chunk]  # in visiting order; rejections sorted below
        ok = _filter(profile, state, pod, reached, decision)
        if handle.nominated:
            started = _now() if t is not None else 0
            ok = _with_nominated(handle, pod, reached, ok, decision)
            if t is not None:
                t.step(NOMINATED, started)
        feasible[ok] = True
        found_count += len(ok)
        done += len(reached)
        chunk = next_chunk(to_find + 1 - found_count, found_count, done)
    started = _now() if t is not None else 0
    positions = np.flatnonzero(feasible[visit[:done]])
    if len(positions) > to_find:
        examined = int(positions[to_find])
        stopped_at = int(visit[examined])
        found = visit[positions[:to_find]]
    else:
        examined, stopped_at, found = done, -1, visit[positions]
    seen = np.zeros(cluster.num_nodes, dtype=bool)
    seen[visit[:examined]] = True
    kept: list[tuple[np.ndarray, Rejection]] = []
    rejected_count = 0
    for i_ids, rej in decision.rejected:
        if rej.stage == FILTER:
            i_ids = np.sort(i_ids[seen[i_ids]])  # in node id order, as the every-node cycle has them
            rejected_count += len(i_ids)
        if len(i_ids):
            kept.append((i_ids, rej))
    for i_ids, rej in tried_first:  # one node: the nominated one
        if not seen[i_ids].all():
            kept = [(np.setdiff1d(k_ids, i_ids), k_rej) for k_ids, k_rej in kept]
            kept = [(k_ids, k_rej) for k_ids, k_rej in kept if len(k_ids)]
            kept.append((i_ids, rej))
            rejected_count += len(i_ids)
    decision.rejected = kept
    processed = len(found) + rejected_count
    order.advance(processed, len(visit_all))
    decision.sampling = Sampling(
        start=start,
        visit=visit,
        to_find=to_find,
        examined=examined,
        stopped_at=stopped_at,
        processed=processed,
        percentage=profile.percentage_of_nodes_to_score,
        narrowed=pre.node_names is not None and m > 1,
    )
    if t is not None:
        t.step(VISIT, started)
    return found


def tie_break_rng(seed: int) -> random.Random:
    """The generator a scheduler breaks ties with: the simulation and the live scheduler use
    the same one, so the same seed and the same sequence of pods give the same placements."""
    return random.Random(f"kubespread-scheduler-{seed}")


class Scheduler:
    """A profile and a scheduler instance's state: ``Scheduler().schedule(pod, cluster)``.

    By default each decision is kube-scheduler's: nodes visited in its node tree's order
    (built from the cluster's nodes at the first decision; a cluster whose nodes then change
    is reconciled), sampled per the profile's percentageOfNodesToScore, the score heap's top
    among ties. ``every_node``: the conformance corpus's cycle instead (every node, the
    smallest name). ``seed`` set: ties drawn at random, reproducibly.
    """

    def __init__(
        self,
        profile: Profile | None = None,
        *,
        seed: int | None = None,
        timed: bool = True,
        every_node: bool = False,
    ) -> None:
        if profile is None:
            from kubespread.scheduler.config import default_profile

            profile = default_profile()
        self.profile = profile
        self.timed = timed
        self.every_node = every_node
        self.order: NodeOrder | None = None
        self._rng = random.Random(seed) if seed is not None else None
        self._offset_rng = random.Random(f"kubespread-preemption-{seed}") if seed is not None else None

    def schedule(self, pod: Pod, cluster: ClusterState) -> Decision:
        if not self.every_node and self.order is None:
            self.order = NodeOrder.of(cluster)
        return schedule_one(
            pod,
            cluster,
            self.profile,
            rng=self._rng,
            offset_rng=self._offset_rng,
            order=self.order,
            timed=self.timed,
        )
