"""NodeResourcesFit: PreFilter, Filter, PreScore, Score (fit.go).

Filter: the pod must fit in what the node has left (allocatable - NodeInfo.Requested) for
every resource it requests, and in one more pod slot. Every shortfall is reported, in
kube's order (pods, cpu, memory, ephemeral-storage, then scalar resources); the code is
UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable, since
evicting pods there cannot help (preemption skips such nodes): from v1.34 (kubernetes#131345),
Unschedulable before.

Score: the configured strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio)
over NonZeroRequested, with the pod's request counted with the 100m / 200Mi defaults.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from kubespread.api.core import Node, Pod
from kubespread.api.features import FIT_UNRESOLVABLE_BEYOND_ALLOCATABLE, FeatureGates
from kubespread.api.resources import Resources, is_scalar_resource_name, node_allocatable, pod_requests
from kubespread.api.schedconfig import NodeResourcesFitArgs
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.defaults import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    default_node_resources_fit_args,
)
from kubespread.scheduler.framework import (
    READS_NODE_PODS,
    SUCCESS,
    CycleState,
    FilterPlugin,
    FilterResult,
    NodeIds,
    NodeScores,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    StateKey,
    StateNotFoundError,
    Status,
)
from kubespread.scheduler.node_memo import NodeMemo
from kubespread.scheduler.plugins.noderesources.least_allocated import least_allocated_scorer
from kubespread.scheduler.plugins.noderesources.most_allocated import most_allocated_scorer
from kubespread.scheduler.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from kubespread.scheduler.plugins.noderesources.resource_allocation import ResourceAllocationScorer, Strategy
from kubespread.scheduler.queueing import (
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    QueueingHint,
    scaled_down,
)

__all__ = [
    "REASON_CPU",
    "REASON_EPHEMERAL_STORAGE",
    "REASON_MEMORY",
    "REASON_TOO_MANY_PODS",
    "NodeResourcesFit",
    "insufficient_resources",
    "insufficient_scalar_reason",
]

NAME: Final = "NodeResourcesFit"
REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_CPU: Final = "Insufficient cpu"
REASON_MEMORY: Final = "Insufficient memory"
REASON_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"
_PRE_FILTER_KEY: Final = StateKey("PreFilter" + NAME, Resources)
_PRE_SCORE_KEY: Final[StateKey[list[int]]] = StateKey("PreScore" + NAME, list)

# Filter verdict bits for the vectorized path, in reason order
_PODS, _CPU, _MEMORY, _EPHEMERAL, _UNRESOLVABLE = 1, 2, 4, 8, 16
_BIT_REASONS: Final = (
    (_PODS, REASON_TOO_MANY_PODS),
    (_CPU, REASON_CPU),
    (_MEMORY, REASON_MEMORY),
    (_EPHEMERAL, REASON_EPHEMERAL_STORAGE),
)


def insufficient_scalar_reason(name: str) -> str:
    return f"Insufficient {name}"


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a qualified name outside the kubernetes.io domain."""
    return "/" in name and "kubernetes.io/" not in name and is_scalar_resource_name(name)


class _Ignored:
    """ignoredResources / ignoredResourceGroups: extended resources Filter does not check."""

    __slots__ = ("groups", "names")

    def __init__(self, names: list[str], groups: list[str]) -> None:
        self.names = frozenset(names)
        self.groups = frozenset(groups)

    def __call__(self, name: str) -> bool:
        if not (self.names or self.groups) or not _is_extended_resource_name(name):
            return False
        return name in self.names or name.split("/", 1)[0] in self.groups


def _scalar_shortfalls(request: Resources, node: NodeInfo, ignored: _Ignored) -> list[tuple[str, bool]]:
    """(reason, unresolvable) for each scalar resource the node cannot fit, by name.

    kube walks a Go map here (no fixed order); sorting by name makes ours deterministic."""
    out = []
    alloc, used = node.allocatable.scalar, node.requested.scalar
    for name in sorted(request.scalar):
        want = request.scalar[name]
        if want == 0 or ignored(name):
            continue
        have = alloc.get(name, 0)
        if want > have - used.get(name, 0):
            out.append((insufficient_scalar_reason(name), want > have))
    return out


def insufficient_resources(
    request: Resources, node: NodeInfo, ignored: _Ignored | None = None
) -> list[tuple[str, bool]]:
    """fitsRequest: (reason, unresolvable) for every resource the node is short of.

    A zero request never fails (a pod asking for no cpu fits an over-committed node), and
    the pod-count check applies even to a pod that requests nothing.
    """
    out: list[tuple[str, bool]] = []
    alloc, used = node.allocatable, node.requested
    if node.pod_count + 1 > alloc.allowed_pod_number:
        out.append((REASON_TOO_MANY_PODS, False))
    if not (request.milli_cpu or request.memory or request.ephemeral_storage or request.scalar):
        return out
    for want, have, taken, reason in (
        (request.milli_cpu, alloc.milli_cpu, used.milli_cpu, REASON_CPU),
        (request.memory, alloc.memory, used.memory, REASON_MEMORY),
        (
            request.ephemeral_storage,
            alloc.ephemeral_storage,
            used.ephemeral_storage,
            REASON_EPHEMERAL_STORAGE,
        ),
    ):
        if want > 0 and want > have - taken:
            out.append((reason, want > have))
    if request.scalar:
        out.extend(_scalar_shortfalls(request, node, ignored or _Ignored([], [])))
    return out


def _status(shortfalls: list[tuple[str, bool]]) -> Status:
    reasons = tuple(r for r, _ in shortfalls)
    if any(u for _, u in shortfalls):
        return Status.unresolvable(*reasons)
    return Status.unschedulable(*reasons)


def _strategy(args: NodeResourcesFitArgs) -> Strategy:
    strategy = args.scoring_strategy
    assert strategy is not None  # defaulted
    if strategy.type == LEAST_ALLOCATED:
        return least_allocated_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_scorer(strategy.resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
        return requested_to_capacity_ratio_scorer(strategy.resources, shape)
    raise ValueError(f"scoring strategy {strategy.type} is not supported")


class NodeResourcesFit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    reads = READS_NODE_PODS  # what the pods on the node use
    name = NAME

    def __init__(
        self, args: NodeResourcesFitArgs | None = None, *, features: FeatureGates | None = None
    ) -> None:
        args = default_node_resources_fit_args(args)
        super().__init__(args, features=features)
        assert args.scoring_strategy is not None
        #: v1.34 (kubernetes#131345): a request beyond the whole allocatable is unresolvable
        self.unresolvable_beyond = self.features.enabled(FIT_UNRESOLVABLE_BEYOND_ALLOCATABLE)
        self.ignored = _Ignored(args.ignored_resources, args.ignored_resource_groups)
        self.scorer = ResourceAllocationScorer(
            args.scoring_strategy.resources, _strategy(args), use_requested=False, skip_pod_level=True
        )
        #: per (cpu, memory, ephemeral storage) request: each node's verdict bits, and per
        #: scoring request list each node's raw score, kept between cycles
        self._verdicts: NodeMemo[tuple[int, int, int]] = NodeMemo(self._bits_of)
        self._scores: NodeMemo[tuple[int, ...]] = NodeMemo(self._scores_of)

    def _bits_of(self, cluster: ClusterState, nodes: np.ndarray, wants: tuple[int, int, int]) -> np.ndarray:
        return self._bits(cluster, nodes, wants)

    def _scores_of(self, cluster: ClusterState, nodes: np.ndarray, requests: tuple[int, ...]) -> np.ndarray:
        return self.scorer.score_nodes(cluster, nodes, list(requests))

    # ---------------------------------------------------------------- queueing hints
    def events_to_register(self) -> list[EventRegistration]:
        """A bound pod deleted or scaled down frees room; a new node, or more allocatable on
        one, adds room. (With hints, kube registers no label or taint update here.)"""
        return [
            EventRegistration(
                EventKind(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self.hint_after_pod_event,
            ),
            EventRegistration(
                EventKind(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.hint_after_node_change,
            ),
        ]

    @staticmethod
    def hint_after_pod_event(pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterPodEvent: a deleted pod that was bound (or nominated: it kept room)
        frees room; an update helps when a bound pod now requests less of something this pod
        requests."""
        old: Pod = event.old
        new: Pod | None = event.new
        if new is None:
            return QUEUE if old.spec.node_name or old.status.nominated_node_name else QUEUE_SKIP
        if not new.spec.node_name or new.key == pod.key or not scaled_down(old, new):
            return QUEUE_SKIP
        want, before, after = pod_requests(pod), pod_requests(old), pod_requests(new)
        for asked, had, has in (
            (want.milli_cpu, before.milli_cpu, after.milli_cpu),
            (want.memory, before.memory, after.memory),
            (want.ephemeral_storage, before.ephemeral_storage, after.ephemeral_storage),
        ):
            if asked > 0 and has < had:
                return QUEUE
        for name in want.scalar:
            if after.scalar.get(name, 0) < before.scalar.get(name, 0):
                return QUEUE
        return QUEUE_SKIP

    def hint_after_node_change(self, pod: Pod, event: QueueingEvent) -> QueueingHint:
        """isSchedulableAfterNodeChange: Queue when the pod would fit the empty node, and the
        node is new or some allocatable the pod needs (or its pod count) grew."""
        new: Node = event.new
        want = pod_requests(pod)
        if insufficient_resources(want, NodeInfo(new, -1), self.ignored):
            return QUEUE_SKIP
        old: Node | None = event.old
        if old is None:
            return QUEUE
        had, has = node_allocatable(old), node_allocatable(new)
        if has.allowed_pod_number > had.allowed_pod_number:
            return QUEUE
        for asked, before, after in (
            (want.milli_cpu, had.milli_cpu, has.milli_cpu),
            (want.memory, had.memory, has.memory),
            (want.ephemeral_storage, had.ephemeral_storage, has.ephemeral_storage),
        ):
            if asked > 0 and after > before:
                return QUEUE
        for name, asked in want.scalar.items():
            if asked > 0 and has.scalar.get(name, 0) > had.scalar.get(name, 0):
                return QUEUE
        return QUEUE_SKIP

    # ---------------------------------------------------------------- PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        state.write(_PRE_FILTER_KEY, pod_requests(pod))
        return None, SUCCESS

    def _request(self, state: CycleState, pod: Pod) -> Resources:
        try:
            return state.read(_PRE_FILTER_KEY)
        except StateNotFoundError:  # Filter without PreFilter (direct calls)
            return pod_requests(pod)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        shortfalls = insufficient_resources(self._request(state, pod), node, self.ignored)
        if not shortfalls:
            return SUCCESS
        return _status(shortfalls if self.unresolvable_beyond else [(r, False) for r, _ in shortfalls])

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        """Pods, cpu, memory and ephemeral storage over the node vectors; scalar resources
        (rare) per node."""
        request = self._request(state, pod)
        cluster = state.cluster
        nodes = np.asarray(nodes, dtype=np.int64)
        if not request.scalar:  # the usual request: the verdicts kept between cycles
            wants = (request.milli_cpu, request.memory, request.ephemeral_storage)
            return self._from_bits(self._verdicts.values(cluster, wants, nodes))
        bits = self._bits(cluster, nodes, (request.milli_cpu, request.memory, request.ephemeral_storage))
        info_at = cluster.node_info_at
        keys = [
            (
                int(b),
                tuple(
                    (r, u and self.unresolvable_beyond)
                    for r, u in _scalar_shortfalls(request, info_at(int(i)), self.ignored)
                ),
            )
            for b, i in zip(bits, nodes, strict=True)
        ]
        statuses: dict[tuple[int, tuple[tuple[str, bool], ...]], int] = {}
        which = np.full(len(nodes), -1, dtype=np.int32)
        for j, key in enumerate(keys):
            if key[0] == 0 and not key[1]:
                continue
            which[j] = statuses.setdefault(key, len(statuses))
        return FilterResult(which, [_status(_bit_shortfalls(b) + list(extra)) for b, extra in statuses])

    def _bits(self, cluster: ClusterState, nodes: np.ndarray, wants: tuple[int, int, int]) -> np.ndarray:
        """Per node, the verdict bits of pods, cpu, memory and ephemeral storage (0: fits)."""
        vec = cluster.node_vector
        bits = np.where(vec("pod_count")[nodes] + 1 > vec("allocatable_pods")[nodes], _PODS, 0)
        for want, alloc_name, used_name, bit in (
            (wants[0], "allocatable_milli_cpu", "requested_milli_cpu", _CPU),
            (wants[1], "allocatable_memory", "requested_memory", _MEMORY),
            (wants[2], "allocatable_ephemeral_storage", "requested_ephemeral_storage", _EPHEMERAL),
        ):
            if want <= 0:
                continue
            have = vec(alloc_name)[nodes]
            short = want > have - vec(used_name)[nodes]
            bits = bits | np.where(short, bit, 0)
            if self.unresolvable_beyond:
                bits = bits | np.where(short & (want > have), _UNRESOLVABLE, 0)
        return bits

    @staticmethod
    def _from_bits(bits: np.ndarray) -> FilterResult:
        if not bits.any():  # every node fits: no statuses to build
            return FilterResult.passing(len(bits))
        codes, inverse = np.unique(bits, return_inverse=True)
        statuses: list[Status] = []
        index = np.full(len(codes), -1, dtype=np.int32)
        for k, code in enumerate(codes):
            if code:
                index[k] = len(statuses)
                statuses.append(_status(_bit_shortfalls(int(code))))
        return FilterResult(index[inverse.reshape(-1)].astype(np.int32), statuses)

    # ---------------------------------------------------------------- PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        state.write(_PRE_SCORE_KEY, self.scorer.pod_request_list(pod))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        try:
            requests = state.read(_PRE_SCORE_KEY)
        except StateNotFoundError:  # Score without PreScore (direct calls)
            requests = self.scorer.pod_request_list(pod)
        return self._scores.values(state.cluster, tuple(requests), np.asarray(nodes, dtype=np.int64))

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return int(self.score_nodes(state, pod, np.asarray([node.index], dtype=np.intp))[0])


def _bit_shortfalls(code: int) -> list[tuple[str, bool]]:
    """The (reason, unresolvable) list a vectorized verdict code stands for; the unresolvable
    bit is carried on the first reason (only the status code depends on it)."""
    unresolvable = bool(code & _UNRESOLVABLE)
    out = [(reason, False) for bit, reason in _BIT_REASONS if code & bit]
    if out and unresolvable:
        out[0] = (out[0][0], True)
    return out
