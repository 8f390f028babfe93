"""Per-node plugin values kept from cycle to cycle.

A plugin's Filter verdict or raw score on a node is, for most plugins, a function of the pod
(its requests, its tolerations, its images) and of that node alone: its object and the pods
bound to it. Between two cycles the cluster changes by a bound pod or two, so the values for
a pod of the same kind as the last one are the same everywhere but there. :class:`NodeMemo`
keeps a plugin's values over every node per pod signature and recomputes them, with the
plugin's own vectorized code, only at the nodes whose pods changed since (told by the
cluster's events) and only when a cycle asks for one of them. The array operations of a
plugin call cost microseconds whatever the batch, so it is the calls that are saved: a cycle
reads its nodes' values with one gather, and when it reaches a node that changed, every
changed node is recomputed in one call (every few cycles, for a few nodes at once).

A new node set (``node_generation``) starts every memo over.

:class:`DomainTally` keeps per-domain sums of a count vector the same way, for the
plugins that count pods per topology domain over every node.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Final, Generic, Protocol, TypeVar

import numpy as np

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent
from kubespread.cluster.state import ClusterState

__all__ = ["DomainTally", "NodeMemo", "PodChanges", "domain_tally", "pod_changes"]

K = TypeVar("K", bound=Hashable)

#: node names a change log holds before it forgets its older half
_LOG_LIMIT: Final = 4096
#: pod signatures a memo keeps per cluster before it starts over
_ENTRY_LIMIT: Final = 64


class PodChanges:
    """The names of the nodes whose bound pods changed, in order (duplicates kept): a
    derived listener's log, so the tentative changes of a preemption dry run count too.
    ``start`` is the position of ``names[0]`` since the log began."""

    __slots__ = ("__weakref__", "names", "start")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.start = 0

    @property
    def end(self) -> int:
        return self.start + len(self.names)

    def on_event(self, event: ClusterEvent) -> None:
        if event.kind != Pod.KIND or event.echo:  # an echo's nodes: its pair's (logged there)
            return
        names = self.names
        if event.node_name:
            names.append(event.node_name)
        for pod in (event.obj, event.old):
            if isinstance(pod, Pod) and pod.spec.node_name:
                names.append(pod.spec.node_name)
        if len(names) > _LOG_LIMIT:
            drop = len(names) // 2
            del names[:drop]
            self.start += drop


_LOGS: weakref.WeakKeyDictionary[ClusterState, PodChanges] = weakref.WeakKeyDictionary()


class _Listening(Protocol):
    def on_event(self, event: ClusterEvent) -> None: ...


L = TypeVar("L", bound=_Listening)


def kept_per_cluster(
    registry: weakref.WeakKeyDictionary[ClusterState, L],
    cluster: ClusterState,
    make: Callable[[], L],
    *,
    kinds: Iterable[str] | None = None,
) -> L:
    """The cluster's one ``L`` in ``registry``, made on first use and then fed every cluster
    event (of ``kinds``, None: all) by a derived listener that holds it weakly (the cluster
    outlives neither)."""
    kept = registry.get(cluster)
    if kept is None:
        kept = registry[cluster] = make()
        ref = weakref.ref(kept)

        def listener(event: ClusterEvent) -> None:
            live = ref()
            if live is not None:
                live.on_event(event)

        cluster.subscribe(listener, derived=True, kinds=kinds)
    return kept


def pod_changes(cluster: ClusterState) -> PodChanges:
    """The cluster's change log, started (and subscribed) on first use."""
    return kept_per_cluster(_LOGS, cluster, PodChanges, kinds=(Pod.KIND,))


class _Entry:
    __slots__ = ("dirty", "dirty_count", "generation", "log", "synced", "values")

    def __init__(self, generation: int, values: np.ndarray, log: PodChanges | None, synced: int) -> None:
        self.generation = generation
        self.values = values
        self.dirty = np.zeros(len(values), dtype=bool)
        self.dirty_count = 0
        #: the change log ``synced`` counts in (a copied memo meets another log: it starts over)
        self.log = log
        self.synced = synced


class NodeMemo(Generic[K]):
    """One plugin's per-node values by pod signature (see the module notes).

    ``compute(cluster, node_ids, key)`` gives the values at those nodes for the pods of
    signature ``key``, each node's from that node alone (and, with ``pods_matter=False``,
    from its object alone: nothing a pod change moves)."""

    __slots__ = ("_by_cluster", "_compute", "_pods_matter")

    def __init__(
        self, compute: Callable[[ClusterState, np.ndarray, K], np.ndarray], *, pods_matter: bool = True
    ) -> None:
        self._compute = compute
        self._pods_matter = pods_matter
        self._by_cluster: weakref.WeakKeyDictionary[ClusterState, dict[K, _Entry]] = (
            weakref.WeakKeyDictionary()
        )

    def values(self, cluster: ClusterState, key: K, nodes: np.ndarray) -> np.ndarray:
        """The values at ``nodes`` (a new array), as computing them now would give."""
        entries = self._by_cluster.get(cluster)
        if entries is None:
            entries = self._by_cluster[cluster] = {}
        log = pod_changes(cluster) if self._pods_matter else None
        end = log.end if log is not None else 0
        entry = entries.get(key)
        generation = cluster.node_generation
        if (
            entry is None
            or entry.generation != generation
            or entry.log is not log
            or (log is not None and entry.synced < log.start)
        ):
            if len(entries) >= _ENTRY_LIMIT:
                entries.clear()
            every = np.arange(cluster.num_nodes, dtype=np.int64)
            values = np.array(self._compute(cluster, every, key))
            entry = entries[key] = _Entry(generation, values, log, end)
        elif log is not None and entry.synced < end:
            dirty = entry.dirty
            known = cluster.nodes
            for name in log.names[entry.synced - log.start :]:
                if name in known:
                    i = cluster.node_index(name)
                    if not dirty[i]:
                        dirty[i] = True
                        entry.dirty_count += 1
            entry.synced = end
        if entry.dirty_count and entry.dirty[nodes].any():
            # every changed node at once, not only those asked for: one call now spares the
            # calls later cycles would make for the others
            stale = np.flatnonzero(entry.dirty)
            entry.values[stale] = self._compute(cluster, stale, key)
            entry.dirty[stale] = False
            entry.dirty_count = 0
        got: np.ndarray = entry.values[nodes]
        return got


class DomainTally:
    """A per-node count vector summed per topology domain over the nodes that carry a set of
    keys, kept from cycle to cycle: topology spread's matching pods per domain, inter-pod
    affinity's matching pods or term carriers per domain. The vector is one kept current in
    place (a ``pod_counts`` view, a term's carriers), so the sums are brought up to date at
    the nodes whose count moved (found by comparing it with the copy taken last time), not
    summed again over every node. Valid while the node set is unchanged."""

    __slots__ = ("base", "codes", "counts", "domain_counts", "generation", "present", "seen")

    #: past this many changed nodes, a fresh sum costs less than the updates
    REBUILD: Final = 64

    def __init__(self, cluster: ClusterState, key: str, keys: frozenset[str], counts: np.ndarray) -> None:
        self.generation = cluster.node_generation
        self.codes, values = cluster.node_label_column(key)
        base = np.ones(cluster.num_nodes, dtype=bool)
        for k in keys:
            base &= cluster.node_label_column(k)[0] >= 0
        base.flags.writeable = False
        self.base = base
        self.counts = counts
        self.present = np.bincount(self.codes[base], minlength=len(values)) > 0
        self.present.flags.writeable = False
        self.seen = counts.copy()
        self.domain_counts = self._sum(len(values))

    def _sum(self, num_values: int) -> np.ndarray:
        base = self.base
        return np.bincount(self.codes[base], weights=self.seen[base], minlength=num_values).astype(np.int64)

    def current(self) -> np.ndarray:
        """The domain counts as the live vector says now (a copy the caller may keep)."""
        changed = np.flatnonzero(self.counts != self.seen)
        if len(changed) > self.REBUILD:
            self.seen[:] = self.counts
            self.domain_counts = self._sum(len(self.domain_counts))
        elif len(changed):
            counts, seen, base, codes, dc = self.counts, self.seen, self.base, self.codes, self.domain_counts
            for i in changed.tolist():
                if base[i]:
                    dc[codes[i]] += counts[i] - seen[i]
                seen[i] = counts[i]
        return self.domain_counts.copy()


#: per cluster: (topology key, the keys a node must carry, the count vector's id) -> its tally
_TALLIES: weakref.WeakKeyDictionary[ClusterState, dict[tuple[str, frozenset[str], int], DomainTally]] = (
    weakref.WeakKeyDictionary()
)


def domain_tally(cluster: ClusterState, key: str, keys: frozenset[str], counts: np.ndarray) -> DomainTally:
    """The kept tally of ``counts`` (a vector kept current in place, never a temporary: each
    new object starts a tally) per domain of ``key`` over the nodes carrying all ``keys``."""
    tallies = _TALLIES.get(cluster)
    if tallies is None:
        tallies = _TALLIES[cluster] = {}
    ident = (key, keys, id(counts))
    tally = tallies.get(ident)
    if tally is None or tally.generation != cluster.node_generation or tally.counts is not counts:
        if len(tallies) >= 256:
            tallies.clear()
        tally = tallies[ident] = DomainTally(cluster, key, keys, counts)
    return tally
