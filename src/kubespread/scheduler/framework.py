"""The scheduling framework: extension points, CycleState, Status, plugin base classes.

Modelled on kube-scheduler's framework (pkg/scheduler/framework): a plugin implements one
or more extension points; the framework runs them in profile order and stamps every Status
with the plugin's name. Two departures, both for speed, neither visible in the results:

* Filter and Score have a batch form. ``filter_nodes`` / ``score_nodes`` take the node ids
  still in play (a NumPy int array) and answer for all of them at once, so a plugin can work
  on per-node vectors. The base classes implement the batch form with the per-node
  ``filter`` / ``score`` so that a simple plugin writes only those.
* The cluster is handed over on the CycleState (``state.cluster``) rather than through a
  framework handle: a cycle reads one ClusterState and never changes it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Protocol, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates

if TYPE_CHECKING:
    from kubespread.cluster.nodeinfo import NodeInfo
    from kubespread.cluster.state import ClusterState
    from kubespread.scheduler.queueing import EventRegistration

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NO_NODE_AVAILABLE",
    "PREEMPTION_RESULT",
    "READS_NODE",
    "READS_NODE_PODS",
    "READS_PODS",
    "SKIP",
    "SUCCESS",
    "Code",
    "CycleState",
    "FilterPlugin",
    "FilterResult",
    "FrameworkHandle",
    "NodeIds",
    "NodeScores",
    "NodeSetCache",
    "NodeStatuses",
    "Plugin",
    "PostFilterPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "PreemptionResult",
    "QueueSortPlugin",
    "QueuedPod",
    "RemovalFilter",
    "RemovalFilters",
    "ScorePlugin",
    "StateKey",
    "StateNotFoundError",
    "Status",
    "default_normalize_score",
    "fit_error_text",
]

#: a batch of node ids (positions in the cluster's node vectors), as Filter and Score get it
NodeIds: TypeAlias = npt.NDArray[np.intp]
#: one score per node of a NodeIds batch
NodeScores: TypeAlias = npt.NDArray[np.int64]

MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0
#: FitError's opening, formatted with the number of all nodes
NO_NODE_AVAILABLE: Final = "0/{} nodes are available"


class Code(StrEnum):
    """fwk.Code, spelled as kube-scheduler prints it."""

    SUCCESS = "Success"
    ERROR = "Error"
    UNSCHEDULABLE = "Unschedulable"
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
    WAIT = "Wait"
    SKIP = "Skip"
    PENDING = "Pending"


_REJECTING: Final = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict: a code, kube-scheduler's reasons verbatim, and who said it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        """UnschedulableAndUnresolvable: preemption on this node would not help."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)

    @classmethod
    def error(cls, *reasons: str) -> Status:
        return cls(Code.ERROR, reasons)

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod cannot go there."""
        return self.code in _REJECTING

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": str(self.code)}
        if self.plugin:
            out["plugin"] = self.plugin
        if self.reasons:
            out["reasons"] = list(self.reasons)
        return out


SUCCESS: Final = Status()
SKIP: Final = Status(Code.SKIP)

T = TypeVar("T")


class NodeSetCache(Generic[T]):
    """A value derived from the nodes alone (never from pods), built by ``build`` on first use
    and rebuilt whenever the cluster's ``node_generation`` changes; one per cluster, held
    weakly. For per-node facts that vectorized ``filter_nodes`` / ``score_nodes`` index by
    node id."""

    __slots__ = ("_build", "_cache")

    def __init__(self, build: Callable[[ClusterState], T]) -> None:
        self._build = build
        self._cache: weakref.WeakKeyDictionary[ClusterState, tuple[int, T]] = weakref.WeakKeyDictionary()

    def get(self, cluster: ClusterState) -> T:
        generation = cluster.node_generation
        got = self._cache.get(cluster)
        if got is None or got[0] != generation:
            got = (generation, self._build(cluster))
            self._cache[cluster] = got
        return got[1]


class StateKey(Generic[T]):
    """A CycleState key and the type of what is stored under it: a plugin declares one per
    thing it keeps for the cycle (``StateKey("PreFilterNodePorts", tuple)`` typed as
    ``StateKey[tuple[HostPort, ...]]``). ``kind`` is the class the value is checked against
    when read back (for a generic type, its plain class: ``list``, ``tuple``)."""

    __slots__ = ("kind", "name")

    def __init__(self, name: str, kind: type[T]) -> None:
        self.name = name
        self.kind = kind

    def __repr__(self) -> str:
        return f"StateKey({self.name!r}, {self.kind.__name__})"


class StateNotFoundError(KeyError):
    """fwk.ErrNotFound: nothing was written under the key this cycle (the plugin's PreFilter
    or PreScore did not run, or skipped)."""

    def __init__(self, key: StateKey[Any]) -> None:
        super().__init__(key.name)
        self.key = key

    def __str__(self) -> str:
        return f"{self.key.name!r} not found in the cycle state"


class FrameworkHandle(Protocol):
    """What a PostFilter plugin may ask of the framework running it (fwk.Handle's part that
    preemption uses)."""

    def run_filters(self, pod: Pod, node_index: int) -> Status:
        """PreFilter, then every Filter plugin, for ``pod`` on one node of the cluster as it is
        now: SUCCESS, or the first rejecting status (named after its plugin)."""
        ...

    def candidate_offset(self, num_nodes: int) -> int:
        """Where, among ``num_nodes`` potential nodes, preemption's dry run starts."""
        ...

    def removal_filters(self, pod: Pod) -> RemovalFilters | None:
        """PreFilter for ``pod`` once, on the cluster as it is now, to judge nodes with some
        of their pods gone without changing the cluster (valid while the cluster stays as it
        is); None when PreFilter ends in an error (the caller runs the filters itself)."""
        ...


#: the filters' verdict on one node with some of its pods gone: :meth:`FrameworkHandle.run_filters`'s
#: answer had they been taken off
RemovalFilter = Callable[[Sequence[Pod]], Status]


class RemovalFilters(Protocol):
    def on_node(self, node_index: int, gone: Sequence[Pod]) -> RemovalFilter | None:
        """The verdict for any subset of ``gone`` (pods bound to the node) taken off; None when
        some Filter plugin cannot tell without taking them off for real (its
        ``filter_without``), or the node has pods nominated to it that count."""
        ...


class CycleState:
    """Per-pod, per-cycle scratch space: each plugin writes under its own key in PreFilter or
    PreScore and reads it back in Filter or Score. Also carries the cluster being read, the
    plugins the cycle skips and the framework handle (None outside a scheduling cycle)."""

    __slots__ = ("_data", "cluster", "handle", "skip_filter", "skip_score")

    def __init__(self, cluster: ClusterState, handle: FrameworkHandle | None = None) -> None:
        self.cluster = cluster
        self.handle = handle
        self._data: dict[str, object] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key.name] = value

    def read(self, key: StateKey[T]) -> T:
        """The value written under ``key`` this cycle. StateNotFoundError (a KeyError) when
        none was; TypeError when it is not a ``key.kind``."""
        try:
            value = self._data[key.name]
        except KeyError:
            raise StateNotFoundError(key) from None
        if not isinstance(value, key.kind):
            raise TypeError(f"cycle state {key.name!r} holds {type(value).__name__}, not {key.kind.__name__}")
        return value


@dataclass(frozen=True, slots=True)
class PreemptionResult:
    """What DefaultPreemption decided for an unschedulable pod: the node it is nominated to
    (None when preemption cannot help), the pods to evict there, most important first, and
    how many of them a PodDisruptionBudget forbids evicting."""

    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()
    pdb_violations: int = 0
    #: why that node won (the pickOneNodeForPreemption criterion that decided)
    reason: str = ""
    #: False when the pod may not preempt at all (PodEligibleToPreemptOthers said no): its
    #: nomination, if any, is kept, where a search without candidates clears it
    eligible: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The conformance answer's ``preemption`` field."""
        return {
            "nominatedNode": self.nominated_node,
            "victims": [p.key for p in self.victims],
            "pdbViolations": self.pdb_violations,
        }


#: where DefaultPreemption leaves its PreemptionResult for the cycle to read
PREEMPTION_RESULT: Final = StateKey("PostFilterPreemption", PreemptionResult)


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """The nodes a PreFilter plugin allows (None: all). Results of several plugins intersect."""

    node_names: frozenset[str] | None = None

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


class FilterResult:
    """A Filter plugin's verdict on a batch of nodes.

    ``which[i]`` is -1 when the i-th node passes, else an index into ``statuses``: most
    plugins reject for one or two distinct reasons, so a batch holds few Status objects.
    """

    __slots__ = ("all_pass", "statuses", "which")

    def __init__(self, which: np.ndarray, statuses: Sequence[Status] = ()) -> None:
        self.which = which
        self.statuses = tuple(statuses)
        #: known to reject no node (``passing``): the cycle need not look at ``which``
        self.all_pass = False

    @classmethod
    def passing(cls, n: int) -> FilterResult:
        result = cls(np.full(n, -1, dtype=np.int32))
        result.all_pass = True
        return result

    @classmethod
    def from_mask(cls, rejected: np.ndarray, status: Status) -> FilterResult:
        """Every node where ``rejected`` is True fails with the same status."""
        return cls(np.where(rejected, 0, -1).astype(np.int32), (status,))

    @classmethod
    def from_statuses(cls, statuses: Iterable[Status]) -> FilterResult:
        """From one Status per node (the per-node form)."""
        distinct: dict[Status, int] = {}
        which = []
        for st in statuses:
            if st.is_success:
                which.append(-1)
            else:
                which.append(distinct.setdefault(st, len(distinct)))
        return cls(np.asarray(which, dtype=np.int32), tuple(distinct))

    @property
    def rejected(self) -> np.ndarray:
        return self.which >= 0


def fit_error_text(num_nodes: int, counts: Mapping[str, int]) -> str:
    """FitError.Error() over a reason histogram: "0/N nodes are available: " then the "count
    reason" strings sorted as strings (Go's sort.Strings, so "10 b" before "2 a"), then ".".
    Shared by the scheduler and DefaultPreemption, whose message nests one."""
    msg = NO_NODE_AVAILABLE.format(num_nodes) + ":"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg


class NodeStatuses:
    """NodeToStatusReader, as PostFilter sees it: the status each node was rejected with,
    as (node ids, status) groups. For an unschedulable pod the groups cover every node: after
    a PreFilter rejection they all carry the PreFilter status; nodes a PreFilterResult left
    out carry UnschedulableAndUnresolvable."""

    __slots__ = ("groups",)

    def __init__(self, groups: Iterable[tuple[np.ndarray, Status]]) -> None:
        self.groups = tuple(groups)

    def nodes_with_code(self, code: Code) -> np.ndarray:
        """NodesForStatusCode: ids of the nodes rejected with ``code``, in id order."""
        picked = [ids for ids, st in self.groups if st.code is code and len(ids)]
        if not picked:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(picked).astype(np.int64))

    def status_at(self, index: int) -> Status | None:
        """The status node ``index`` was rejected with; None when it was not rejected."""
        for ids, st in self.groups:
            if np.any(ids == index):
                return st
        return None


class Plugin:
    """A named plugin; ``args`` is its defaulted, validated args object (or None);
    ``features`` the gates of the Kubernetes version it answers as (kube's ``feature.Features``
    handed to each plugin factory): a plugin branches on a gate, never on a version number."""

    name: ClassVar[str] = ""

    def __init__(self, args: Any = None, *, features: FeatureGates | None = None) -> None:
        self.args = args
        self.features = features if features is not None else FeatureGates()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def events_to_register(self) -> list[EventRegistration] | None:
        """EnqueueExtensions: the cluster changes that may undo this plugin's rejection, each
        with its queueing hint (:mod:`kubespread.scheduler.queueing`). None (the default): the
        plugin has no hints, so any change retries the pods it rejected; ``[]``: no change
        does (only the 5-minute flush)."""
        return None


@dataclass(slots=True)
class QueuedPod:
    """What the queue knows of a pod: the pod and when it entered the queue (for sorting)."""

    pod: Pod
    timestamp: float = 0.0
    attempts: int = 0


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: Pod) -> Status:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: QueuedPod, b: QueuedPod) -> bool:
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        """Compute what Filter needs; Skip to have this plugin's Filter skipped for the pod."""
        raise NotImplementedError


#: what a Filter plugin's verdict on a node reads besides the node and the incoming pod
#: (``FilterPlugin.reads``): nothing; the pods on that node (what they use); pods anywhere
READS_NODE: Final = "node"
READS_NODE_PODS: Final = "node pods"
READS_PODS: Final = "pods"


class FilterPlugin(Plugin):
    #: READS_NODE, READS_NODE_PODS or READS_PODS (the default, which assumes the most)
    reads: str = READS_PODS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        raise NotImplementedError

    def judges_without(self, state: CycleState, pod: Pod, gone: Sequence[Pod]) -> bool:
        """Whether :meth:`filter` on a copy of the node's NodeInfo with ``gone`` (pods bound
        to it) taken off (``ClusterState.node_info_without``), from ``state`` computed with
        them there, gives the verdict of taking them off the cluster and running PreFilter
        again (kube's NodeInfo clone and PreFilter RemovePod extension). It must then hold
        for any subset of ``gone``. By default: for a plugin that reads no other pod, or only
        those of the node (on the copy)."""
        return self.reads != READS_PODS

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> FilterResult:
        """Filter for a batch of node ids; override for a vectorized form."""
        info_at = state.cluster.node_info_at
        return FilterResult.from_statuses(self.filter(state, pod, info_at(int(i))) for i in nodes)


class PostFilterPlugin(Plugin):
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
        """Run when no node fits (after a PreFilter rejection too), to make the pod fit in a
        later cycle (preemption). The returned reasons end kube-scheduler's FitError message.
        None: kubespread cannot tell what kube-scheduler would answer (it would act, e.g.
        evict pods), so the message is left without its PostFilter part."""
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeIds) -> Status:
        """Prepare Score for the feasible nodes; Skip to have this plugin's Score skipped."""
        raise NotImplementedError


class ScorePlugin(Plugin):
    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        raise NotImplementedError

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        """Raw scores (int64) for a batch of node ids; override for a vectorized form."""
        info_at = state.cluster.node_info_at
        return np.fromiter(
            (self.score(state, pod, info_at(int(i))) for i in nodes), dtype=np.int64, count=len(nodes)
        )

    def normalize_scores(self, state: CycleState, pod: Pod, nodes: NodeIds, scores: NodeScores) -> NodeScores:
        """NormalizeScore: the raw scores mapped into [0, 100]; the default leaves them."""
        return scores


def default_normalize_score(scores: np.ndarray, *, reverse: bool) -> np.ndarray:
    """helper.DefaultNormalizeScore: scale so the highest becomes 100 (integer division);
    ``reverse`` turns it into 100 - that. All zero: 0 each, or 100 each when reversed."""
    top = int(scores.max()) if len(scores) else 0
    if top == 0:
        return np.full(len(scores), MAX_NODE_SCORE if reverse else 0, dtype=np.int64)
    out = (MAX_NODE_SCORE * scores) // top
    return MAX_NODE_SCORE - out if reverse else out


PluginFactory = Callable[[Any], Plugin]
