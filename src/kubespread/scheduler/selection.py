"""Which nodes a kube-scheduler cycle examines, in what order, and which of the best it takes.

kube-scheduler v1.35 (``pkg/scheduler/schedule_one.go``, ``backend/cache/node_tree.go``,
``backend/cache/cache.go`` UpdateSnapshot, at v1.35.4) does not score every node nor break
ties by name:

- **Visiting order.** The snapshot lists nodes in its cache's node tree order: zones round
  robin in the order each zone (region + zone labels, ``GetZoneKey``) first appeared, the
  nodes of a zone in the order they were added; a zone that empties leaves the rotation and
  comes back last. The list is re-read from the tree only when a node is added or removed
  (a zone label changed on an update moves the node in the tree, not in the list, until then).
- **Where it starts.** ``nextStartNodeIndex``, which after each cycle that got past PreFilter
  advances by the nodes processed (feasible found + rejections recorded), modulo the node
  count. It is state of a scheduler instance, as the tree is: :class:`NodeOrder` holds both.
- **Sampling.** Filter stops once ``numFeasibleNodesToFind`` feasible nodes are found
  (:func:`num_feasible_nodes_to_find`; 1 when the profile has no Score plugin), and only
  those are scored. With parallelism 1 the search stops at the next feasible node after
  that many: the rejections met on the way are recorded (and counted as processed), that
  node is not.
- **The pick.** ``heap.Init`` over the feasible nodes in the order Filter found them, then one
  ``Pop``: the top is the first node, in a preorder walk of the implicit binary heap, whose
  total is the highest (``nodeScoreHeap.Less``: higher total, then a Randomizer only
  extenders set; :func:`heap_top`).

Divergences. Two because the real scheduler's answer is not a function of its input:
parallelism above 1 makes the found order (and which nodes are found) a race between threads,
and a PreFilterResult's node set is visited in Go's random map order. kubespread answers as
parallelism 1 and visits a PreFilterResult's nodes in the tree's order; ``Sampling`` says
when either applies. One not modelled: OpportunisticBatching (beta, on by default in v1.35)
tries a node hinted by an earlier pod of the same signature first; under the default profile
no pod is signable (PodTopologySpread's system default constraints refuse every pod,
``SignPod``), so it only matters with ``defaultingType: List`` and no default constraints.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import numpy as np

from kubespread.api.core import Node
from kubespread.api.keys import LABEL_REGION, LABEL_REGION_LEGACY, LABEL_ZONE, LABEL_ZONE_LEGACY
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState

__all__ = [
    "ADAPTIVE",
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NodeOrder",
    "NodeTree",
    "Sampling",
    "allowed_nodes",
    "heap_top",
    "next_chunk",
    "num_feasible_nodes_to_find",
    "zone_key",
]

#: schedule_one.go's constants
MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
#: percentageOfNodesToScore 0 (the default): the share depends on the cluster's size
ADAPTIVE: Final = 0


def num_feasible_nodes_to_find(percentage: int, num_nodes: int) -> int:
    """numFeasibleNodesToFind: every node below 100; else ``percentage`` of them (adaptive
    when 0: 50 - n/125, at least 5), at least 100. Integer arithmetic as Go's int32."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    if percentage == ADAPTIVE:
        percentage = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def next_chunk(needed: int, found: int, done: int) -> int:
    """How many more nodes to filter: enough, at the feasible share seen so far and a margin,
    to find the ``needed`` nodes still missing (twice what was done when none was found yet).
    Filtering every remaining node instead costs up to ten times the nodes the search reaches."""
    if needed <= 0:
        return 0
    if not found:
        return 2 * done
    return int(needed * done / found * 1.25) + 64


def allowed_nodes(cluster: ClusterState, node_names: frozenset[str]) -> np.ndarray:
    """Per node id, whether a PreFilterResult's node set holds the node: a lookup per name in
    the set (usually a few), not a string test per node of the cluster."""
    keep = np.zeros(cluster.num_nodes, dtype=bool)
    ids = [cluster.node_index(n) for n in node_names if n in cluster.nodes]
    if ids:
        keep[ids] = True
    return keep


def zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: the beta zone label if present (even empty), else the GA one; the
    same for the region; "" when both are empty, else ``region:\\x00:zone``."""
    labels = node.metadata.labels
    zone = labels[LABEL_ZONE_LEGACY] if LABEL_ZONE_LEGACY in labels else labels.get(LABEL_ZONE, "")
    region = labels[LABEL_REGION_LEGACY] if LABEL_REGION_LEGACY in labels else labels.get(LABEL_REGION, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """The scheduler cache's nodeTree: node names per zone key, zones in first-seen order."""

    __slots__ = ("_count", "_zones", "tree")

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self.tree: dict[str, list[str]] = {}
        self._zones: list[str] = []
        self._count = 0
        for node in nodes:
            self.add(node)

    def __len__(self) -> int:
        return self._count

    @property
    def zones(self) -> list[str]:
        return list(self._zones)

    def add(self, node: Node) -> bool:
        """addNode; False when the node is already in its zone (kube logs and ignores it)."""
        zone, name = zone_key(node), node.metadata.name
        names = self.tree.get(zone)
        if names is None:
            self._zones.append(zone)
            self.tree[zone] = [name]
        elif name in names:
            return False
        else:
            names.append(name)
        self._count += 1
        return True

    def remove(self, node: Node) -> bool:
        """removeNode (from the zone its labels name); False when it is not there."""
        zone, name = zone_key(node), node.metadata.name
        names = self.tree.get(zone)
        if names is None or name not in names:
            return False
        names.remove(name)
        if not names:
            del self.tree[zone]
            self._zones.remove(zone)
        self._count -= 1
        return True

    def has(self, node: Node) -> bool:
        return node.metadata.name in self.tree.get(zone_key(node), ())

    def discard(self, name: str) -> None:
        """Remove a node by name from whichever zone holds it (reconciling a lost event)."""
        for zone, names in list(self.tree.items()):
            if name in names:
                names.remove(name)
                self._count -= 1
                if not names:
                    del self.tree[zone]
                    self._zones.remove(zone)
                return

    def update(self, old: Node, new: Node) -> None:
        """updateNode: moved to the back of its new zone when its zone key changed."""
        if zone_key(old) == zone_key(new):
            return
        self.remove(old)
        self.add(new)

    def list(self) -> list[str]:
        """list(): one node of each zone in turn, zones in their order, until all are out."""
        columns = [self.tree[z] for z in self._zones]
        out: list[str] = []
        depth = max((len(c) for c in columns), default=0)
        for i in range(depth):
            out.extend(c[i] for c in columns if i < len(c))
        return out


class NodeOrder:
    """A kube-scheduler instance's visiting order: its node tree, the snapshot's node list
    (re-read from the tree when nodes are added or removed) and ``nextStartNodeIndex``.

    Built from a cluster's nodes in their order (a fresh scheduler that listed them), then
    kept in step with node events (:meth:`follow`), as a running scheduler's cache is. A
    cycle reads :meth:`visit_ids`; nodes the events missed (a cluster changed behind its
    back) are reconciled there: added in node id order, or dropped.
    """

    __slots__ = ("_generation", "_ids", "_names", "next_start", "tree")

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self.tree = NodeTree(nodes)
        #: nextStartNodeIndex
        self.next_start = 0
        self._names: list[str] | None = None
        self._ids: np.ndarray | None = None
        self._generation = -1

    @classmethod
    def of(cls, cluster: ClusterState) -> NodeOrder:
        """A fresh scheduler's order over the cluster's nodes, in node id order."""
        return cls(cluster.node_info_at(i).node for i in range(cluster.num_nodes))

    def follow(self, ev: ClusterEvent) -> None:
        """The cache's AddNode / UpdateNode / RemoveNode for one node event."""
        if ev.kind != Node.KIND:
            return
        if ev.type is EventType.ADDED:
            if self.tree.add(ev.obj):
                self._names = None
        elif ev.type is EventType.DELETED:
            if self.tree.remove(ev.obj):
                self._names = None
        elif ev.type is EventType.UPDATED and ev.old is not None:
            self.tree.update(ev.old, ev.obj)

    def fork(self) -> NodeOrder:
        """A copy with its own start index, sharing the tree (no copy of thousands of names):
        for a cycle run to look or to try, never to follow events."""
        return copy.copy(self)

    def visit_ids(self, cluster: ClusterState) -> np.ndarray:
        """The snapshot's node list as node ids (read-only; valid until the node set changes)."""
        if self._names is None:
            self._names = self.tree.list()
            self._ids = None
        if self._ids is not None and self._generation == cluster.node_generation:
            return self._ids
        nodes = cluster.nodes
        if len(self._names) != cluster.num_nodes or any(n not in nodes for n in self._names):
            self._reconcile(cluster)
        names = self._names
        ids = np.fromiter((cluster.node_index(n) for n in names), dtype=np.int64, count=len(names))
        ids.flags.writeable = False
        self._ids, self._generation = ids, cluster.node_generation
        return ids

    def _reconcile(self, cluster: ClusterState) -> None:
        nodes = cluster.nodes
        for name in [n for n in self.tree.list() if n not in nodes]:
            self.tree.discard(name)
        for i in range(cluster.num_nodes):
            node = cluster.node_info_at(i).node
            if not self.tree.has(node):
                self.tree.add(node)
        self._names = self.tree.list()

    def advance(self, processed: int, num_nodes: int) -> None:
        """nextStartNodeIndex = (nextStartNodeIndex + processed) % len(allNodes)."""
        if num_nodes:
            self.next_start = (self.next_start + processed) % num_nodes


def heap_top(totals: np.ndarray) -> int:
    """The position heap.Init over ``totals`` (in found order) puts on top, which one Pop
    returns. A node stays above its children unless one is strictly higher, and of two
    children the right one wins only when strictly higher, so the top is the first position,
    in preorder, holding the highest total."""
    n = len(totals)
    if n == 1:
        return 0
    best = np.flatnonzero(totals == totals.max())
    if len(best) == 1:
        return int(best[0])
    # preorder of heap positions: the root path's bits (1-based position, leading 1 dropped)
    # left-aligned to the deepest level, then the depth (an ancestor before its descendants);
    # frexp's exponent is floor(log2(pos)) + 1, exactly (positions are far below 2**53)
    pos = best + 1
    depth = np.frexp(pos)[1].astype(np.int64) - 1
    deepest = n.bit_length() - 1
    keys = np.left_shift(pos, deepest - depth) * 64 + depth
    return int(best[np.argmin(keys)])


@dataclass(slots=True)
class Sampling:
    """How a cycle chose its nodes as kube-scheduler does (``Decision.sampling``)."""

    #: nextStartNodeIndex at the cycle's start (a position in ``visit``)
    start: int
    #: the node ids in the order Filter would visit them, from ``start`` on (the PreFilterResult's
    #: nodes only, when one narrowed the search)
    visit: np.ndarray
    #: numFeasibleNodesToFind for this cycle
    to_find: int
    #: how many of ``visit`` were examined (filtered), in order
    examined: int
    #: the node id whose feasibility ended the search (found beyond ``to_find``), or -1
    stopped_at: int = -1
    #: nodes processed, by which nextStartNodeIndex advanced (0: it did not)
    processed: int = 0
    #: the pod's status.nominatedNodeName was tried first and passed every filter
    nominated_first: bool = False
    #: percentageOfNodesToScore as configured (0: adaptive)
    percentage: int = ADAPTIVE
    #: a PreFilterResult narrowed the search: kube visits its nodes in Go's random map order
    narrowed: bool = False

    @property
    def unexamined(self) -> int:
        return len(self.visit) - self.examined

    @property
    def unexamined_ids(self) -> np.ndarray:
        """The node ids the search never reached, in the order it would have."""
        return self.visit[self.examined :]
