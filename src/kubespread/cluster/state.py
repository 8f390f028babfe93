"""ClusterState: the only place that changes what exists, and the indexes derived from it.

Every change is one method call that first checks it applies (raising :class:`ClusterError`
with nothing changed), then updates the objects and every index together, then tells the
listeners. Nothing is recomputed by scanning all pods or nodes; each operation costs what
the changed object touches.

Node ids
    Nodes are numbered 0..n-1, their position in every per-node NumPy vector. The ids are
    dense: deleting a node moves the last node into the freed slot (its id changes; nothing
    else moves). So vectors never hold dead slots that vector code would have to mask out.
    ``node_generation`` changes whenever nodes are added, deleted or updated; read-only
    vectors handed out (node_names, node_vector, pod_counts) are live views for pod changes,
    valid until the node set changes — fetch them again then (it is a dict lookup).

Pods that are terminating or finished
    All pods stay in the object store and in the by-namespace, by-label and by-node
    (``pods_on_node``) indexes; ``pod.is_terminating`` / ``pod.is_finished`` tell them apart.
    What the scheduler sees follows kube-scheduler: a terminating pod (deletionTimestamp set)
    still holds its node's resources, ports and pod slot; a Succeeded or Failed pod is not on
    NodeInfo at all (its informer filters them out), so it counts in no resources, ports,
    pod counts or :meth:`pod_counts` vector. Topology spread also skips terminating pods;
    ``pod_counts(..., include_terminating=False)`` gives that count.

Nodes with pods
    A node can only be deleted once no pod is bound to it (unbind or delete them first), and a
    pod can only name an existing node: the state never holds a pod on a missing node.

Objects handed in belong to the state; change them through ``update`` with a new object.
``bind``/``unbind`` replace the stored pod with a shallow copy whose spec.nodeName is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubespread.api.apps import Deployment, Job, PriorityClass, ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Namespace, Node, Pod, Service
from kubespread.api.kruise import CloneSet, WorkloadSpread
from kubespread.api.meta import KubeObject
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.resources import node_allocatable
from kubespread.api.selectors import Selector
from kubespread.cluster.counts import (
    ANCHOR_KEY,
    ANCHOR_NONE,
    ANCHOR_VALUES,
    Anchor,
    GroupKey,
    PodCountGroup,
)
from kubespread.cluster.entries import PodEntry, nested_add, nested_remove, with_node_name
from kubespread.cluster.errors import ClusterError
from kubespread.cluster.events import ClusterEvent, EventType, Listener, Subscribers
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.cluster.vectors import NODE_VECTORS, grown, int64, write_requests

__all__ = ["NODE_VECTORS", "OBJECT_KINDS", "ClusterState"]

#: kinds kept as plain objects by kind and key (no index beyond that)
OBJECT_KINDS: Final[tuple[type[KubeObject], ...]] = (
    Deployment,
    ReplicaSet,
    StatefulSet,
    Job,
    ReplicationController,
    Service,
    PriorityClass,
    PodDisruptionBudget,
    WorkloadSpread,
    CloneSet,
)


class ClusterState:
    """Nodes, pods, namespaces and workload objects, with incremental indexes over them."""

    def __init__(self) -> None:
        # nodes
        self._nodes: dict[str, Node] = {}
        self._infos: dict[str, NodeInfo] = {}
        self._infos_by_index: list[NodeInfo] = []
        self._n = 0
        self._capacity = 0
        self._names: np.ndarray = np.empty(0, dtype=object)
        self._vectors: dict[str, npt.NDArray[np.int64]] = {
            name: np.zeros(0, dtype=np.int64) for name in NODE_VECTORS
        }
        self._node_generation = 0
        self._nodes_by_label: dict[str, dict[str, dict[str, Node]]] = {}
        self._label_columns: dict[str, tuple[npt.NDArray[np.int32], tuple[str, ...]]] = {}
        # read-only views of the above by vector name, "node_names" or count group key
        self._views: dict[str | GroupKey, np.ndarray] = {}
        # pods
        self._pods: dict[str, Pod] = {}
        self._entries: dict[str, PodEntry] = {}
        self._unbound: dict[str, Pod] = {}
        self._pods_by_ns: dict[str, dict[str, Pod]] = {}
        self._pods_by_label: dict[str, dict[str, dict[str, Pod]]] = {}
        # how many pods of each priority the NodeInfos hold (preemption's first question)
        self._priorities: dict[int, int] = {}
        # other objects
        self._namespaces: dict[str, Namespace] = {}
        self._objects: dict[str, dict[str, KubeObject]] = {cls.KIND: {} for cls in OBJECT_KINDS}
        # matching-pod count groups and how a pod finds the ones it may belong to
        self._groups: dict[GroupKey, PodCountGroup] = {}
        self._groups_by_value: dict[tuple[str, str], list[PodCountGroup]] = {}
        self._groups_by_key: dict[str, list[PodCountGroup]] = {}
        self._groups_any: list[PodCountGroup] = []
        self._listeners = Subscribers()
        self._hypothetical = 0
        #: inside :meth:`adding_pods`: the nodes whose request vectors are yet to be written
        self._requests_later: dict[str, NodeInfo] | None = None

    # ------------------------------------------------------------------ generic operations
    def add(self, obj: KubeObject) -> None:
        """Add any object ClusterState keeps (dispatching on its type)."""
        if isinstance(obj, Pod):
            self.add_pod(obj)
        elif isinstance(obj, Node):
            self.add_node(obj)
        elif isinstance(obj, Namespace):
            self.add_namespace(obj)
        else:
            self.add_object(obj)

    def update(self, obj: KubeObject) -> None:
        """Replace the stored object with the same kind and key."""
        if isinstance(obj, Pod):
            self.update_pod(obj)
        elif isinstance(obj, Node):
            self.update_node(obj)
        elif isinstance(obj, Namespace):
            self.update_namespace(obj)
        else:
            self.update_object(obj)

    def delete(self, kind: str, key: str) -> None:
        """Delete the object of this kind ("Pod", "Node", ...) and key (ns/name or name)."""
        if kind == Pod.KIND:
            self.delete_pod(key)
        elif kind == Node.KIND:
            self.delete_node(key)
        elif kind == Namespace.KIND:
            self.delete_namespace(key)
        else:
            self.delete_object(kind, key)

    def add_all(self, objs: Iterable[KubeObject]) -> None:
        """Add many objects: namespaces and nodes first, then the rest, each in given order.

        Not atomic: an error stops at the offending object, with the earlier ones added.
        """
        objs = list(objs)
        for obj in objs:
            if isinstance(obj, Namespace | Node):
                self.add(obj)
        for obj in objs:
            if not isinstance(obj, Namespace | Node):
                self.add(obj)

    def get(self, kind: str, key: str) -> KubeObject | None:
        """The stored object of this kind and key, or None."""
        if kind == Pod.KIND:
            return self._pods.get(key)
        if kind == Node.KIND:
            return self._nodes.get(key)
        if kind == Namespace.KIND:
            return self._namespaces.get(key)
        store = self._objects.get(kind)
        return None if store is None else store.get(key)

    # ------------------------------------------------------------------ listeners
    def subscribe(
        self, listener: Listener, *, derived: bool = False, kinds: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Call ``listener(event)`` after every change; returns a function that unsubscribes.

        Listeners run in subscription order, synchronously, with the state already updated;
        one that changes the state makes its own events, delivered before the rest of the
        current ones (depth first). An exception propagates to the caller of the change,
        which has nonetheless happened.

        ``derived``: the listener keeps an index derived from the state (a plugin's), so it
        must see every change, the tentative ones made inside :meth:`hypothetical` too.
        ``kinds``: the object kinds whose events it reads (None: all); the others never reach
        it, so a controller that ignores most events is not called for each of them.
        """
        return self._listeners.add(listener, derived, kinds)

    @contextmanager
    def hypothetical(self) -> Iterator[None]:
        """A scope for tentative changes that the caller undoes before leaving it (preemption's
        dry run takes pods off a node and puts them back): only derived listeners hear of
        them, so controllers and recorders never see a change that did not happen."""
        self._hypothetical += 1
        try:
            yield
        finally:
            self._hypothetical -= 1

    def _emit(
        self, type: EventType, obj: Any, *, old: Any = None, node_name: str = "", echo: bool = False
    ) -> None:
        listeners = self._listeners.route(obj.KIND, self._hypothetical > 0)
        if listeners:
            event = ClusterEvent(type, obj, old=old, node_name=node_name, echo=echo)
            for listener in listeners:
                listener(event)

    # ------------------------------------------------------------------ nodes
    def add_node(self, node: Node) -> None:
        name = node.metadata.name
        if name in self._nodes:
            raise ClusterError(f'node "{name}" already exists')
        if self._n == self._capacity:
            self._grow(max(16, 2 * self._capacity))
        i = self._n
        info = NodeInfo(node, i)
        self._nodes[name] = node
        self._infos[name] = info
        self._infos_by_index.append(info)
        self._names[i] = name
        self._n = i + 1
        self._set_allocatable(info)
        self._index_node_labels(node, +1)
        self._node_set_changed(shape=True)
        self._emit(EventType.ADDED, node)

    def update_node(self, node: Node) -> None:
        name = node.metadata.name
        info = self._infos.get(name)
        if info is None:
            raise ClusterError(f'node "{name}" not found')
        old = info.node
        self._index_node_labels(old, -1)
        self._nodes[name] = node
        info.node = node
        info.allocatable = node_allocatable(node)
        self._set_allocatable(info)
        self._index_node_labels(node, +1)
        self._node_set_changed(shape=False)
        self._emit(EventType.UPDATED, node, old=old)

    def delete_node(self, name: str) -> None:
        info = self._infos.get(name)
        if info is None:
            raise ClusterError(f'node "{name}" not found')
        if info.all_pods:
            raise ClusterError(
                f'cannot delete node "{name}": {len(info.all_pods)} pod(s) are bound to it; '
                "unbind or delete them first"
            )
        i, last = info.index, self._n - 1
        arrays = [*self._vectors.values(), *(g.counts for g in self._groups.values())]
        if i != last:  # keep ids dense: the last node takes the freed slot
            moved = self._infos_by_index[last]
            for a in arrays:
                a[i] = a[last]
            self._names[i] = self._names[last]
            moved.index = i
            self._infos_by_index[i] = moved
        for a in arrays:
            a[last] = 0
        self._names[last] = None
        self._infos_by_index.pop()
        self._n = last
        del self._nodes[name]
        del self._infos[name]
        self._index_node_labels(info.node, -1)
        self._node_set_changed(shape=True)
        self._emit(EventType.DELETED, info.node)

    def _grow(self, capacity: int) -> None:
        """Reallocate every per-node buffer (vectors, names, count groups) to ``capacity``."""
        n = self._n
        self._names = grown(self._names, n, capacity)
        for name, a in self._vectors.items():
            self._vectors[name] = grown(a, n, capacity)
        for g in self._groups.values():
            g.counts = grown(g.counts, n, capacity)
        self._capacity = capacity

    def _set_allocatable(self, info: NodeInfo) -> None:
        v, i, a = self._vectors, info.index, info.allocatable
        v["allocatable_milli_cpu"][i] = int64(a.milli_cpu)
        v["allocatable_memory"][i] = int64(a.memory)
        v["allocatable_ephemeral_storage"][i] = int64(a.ephemeral_storage)
        v["allocatable_pods"][i] = int64(a.allowed_pod_number)

    def _index_node_labels(self, node: Node, delta: int) -> None:
        name = node.metadata.name
        for k, v in node.metadata.labels.items():
            if delta > 0:
                nested_add(self._nodes_by_label, k, v, name, node)
            else:
                nested_remove(self._nodes_by_label, k, v, name)

    def _node_set_changed(self, *, shape: bool) -> None:
        self._node_generation += 1
        self._label_columns.clear()
        if shape:
            self._views.clear()

    # ------------------------------------------------------------------ pods
    def add_pod(self, pod: Pod) -> None:
        """Add a pod; one with spec.nodeName set is bound to that (existing) node at once."""
        key = pod.key
        if key in self._entries:
            raise ClusterError(f'pod "{key}" already exists')
        info = self._info_for_pod(pod)
        entry = PodEntry(pod, key, info)
        self._register(entry, +1)
        if info is not None:
            self._update(entry, +1)
        self._emit(EventType.ADDED, pod)
        if info is not None:
            self._emit(EventType.BOUND, pod, node_name=info.name)

    def update_pod(self, pod: Pod) -> None:
        """Replace a pod (labels, phase, deletionTimestamp, even nodeName) and re-index it."""
        key = pod.key
        old_entry = self._entries.get(key)
        if old_entry is None:
            raise ClusterError(f'pod "{key}" not found')
        info = self._info_for_pod(pod)
        entry = PodEntry(pod, key, info, old_entry)
        old, old_info = old_entry.pod, old_entry.info
        if old_info is not None:
            self._update(old_entry, -1)
        self._register(old_entry, -1)
        self._register(entry, +1)
        if info is not None:
            self._update(entry, +1)
        if old_info is not None and old_info is not info:
            self._emit(EventType.UNBOUND, old, node_name=old_info.name)
        self._emit(EventType.UPDATED, pod, old=old)
        if info is not None and old_info is not info:
            self._emit(EventType.BOUND, pod, old=old, node_name=info.name, echo=True)

    def delete_pod(self, key: str) -> None:
        entry = self._entries.get(key)
        if entry is None:
            raise ClusterError(f'pod "{key}" not found')
        info = entry.info
        if info is not None:
            self._update(entry, -1)
        self._register(entry, -1)
        if info is not None:
            self._emit(EventType.UNBOUND, entry.pod, node_name=info.name, echo=True)
        self._emit(EventType.DELETED, entry.pod)

    def bind(self, pod_key: str, node_name: str) -> None:
        """Assign an unbound pod to a node (the Binding the scheduler's decision becomes)."""
        entry = self._entries.get(pod_key)
        if entry is None:
            raise ClusterError(f'pod "{pod_key}" not found')
        if entry.info is not None:
            raise ClusterError(f'pod "{pod_key}" is already bound to node "{entry.info.name}"')
        info = self._infos.get(node_name)
        if info is None:
            raise ClusterError(f'cannot bind pod "{pod_key}": node "{node_name}" not found')
        old = entry.pod
        self._replace_pod(entry, with_node_name(old, node_name))
        entry.info = info
        self._update(entry, +1)
        self._emit(EventType.BOUND, entry.pod, old=old, node_name=node_name)

    def unbind(self, pod_key: str) -> None:
        """Take a bound pod off its node; it stays, with an empty spec.nodeName (pending)."""
        entry = self._entries.get(pod_key)
        if entry is None:
            raise ClusterError(f'pod "{pod_key}" not found')
        info = entry.info
        if info is None:
            raise ClusterError(f'pod "{pod_key}" is not bound to a node')
        old = entry.pod
        self._update(entry, -1)
        entry.info = None
        self._replace_pod(entry, with_node_name(old, ""))
        self._emit(EventType.UNBOUND, entry.pod, old=old, node_name=info.name)

    def _info_for_pod(self, pod: Pod) -> NodeInfo | None:
        node_name = pod.spec.node_name
        if not node_name:
            return None
        info = self._infos.get(node_name)
        if info is None:
            raise ClusterError(f'pod "{pod.key}" is bound to node "{node_name}", which does not exist')
        return info

    def _register(self, entry: PodEntry, delta: int) -> None:
        """Add (+1) or remove (-1) a pod in the store and its node-independent indexes."""
        key, pod, ns = entry.key, entry.pod, entry.namespace
        if delta > 0:
            self._entries[key] = entry
            self._pods[key] = pod
            self._unbound[key] = pod  # until _update places it
            members = self._pods_by_ns.get(ns)
            if members is None:
                self._pods_by_ns[ns] = {key: pod}
            else:
                members[key] = pod
            for k, v in entry.labels.items():
                nested_add(self._pods_by_label, k, v, key, pod)
            if self._groups and entry.visible:
                entry.groups = self._matching_groups(entry)
        else:
            del self._entries[key]
            del self._pods[key]
            del self._unbound[key]
            members = self._pods_by_ns[ns]
            del members[key]
            if not members:
                del self._pods_by_ns[ns]
            for k, v in entry.labels.items():
                nested_remove(self._pods_by_label, k, v, key)

    def _update(self, entry: PodEntry, delta: int) -> None:
        """Put a pod on (+1) or take it off (-1) its node: NodeInfo.update(pod, sign).

        Adding and removing share this one function so that they cannot disagree.
        """
        info = entry.info
        assert info is not None
        key, pod = entry.key, entry.pod
        if delta > 0:
            info.all_pods[key] = pod
            del self._unbound[key]
        else:
            del info.all_pods[key]
            self._unbound[key] = pod
        if not entry.visible:
            return
        if delta > 0:
            info.pods[key] = pod
        else:
            del info.pods[key]
        priority = pod.spec.priority or 0
        left = self._priorities.get(priority, 0) + delta
        if left:
            self._priorities[priority] = left
        else:
            del self._priorities[priority]
        i = info.index
        req = entry.requests
        info.requested.add_in_place(req, delta)
        nz = info.non_zero_requested
        nz.milli_cpu += delta * entry.non_zero_cpu
        nz.memory += delta * entry.non_zero_memory
        if entry.ports:
            used = info.used_ports
            for port in entry.ports:
                c = used.get(port, 0) + delta
                if c:
                    used[port] = c
                else:
                    del used[port]
        if self._requests_later is None:
            write_requests(self._vectors, info)
        else:
            self._requests_later[info.name] = info
        self._vectors["pod_count"][i] += delta
        if entry.groups:
            for g in entry.groups:
                g.counts[i] += delta

    @contextmanager
    def adding_pods(self) -> Iterator[None]:
        """A scope for adding many pods to a cluster nobody listens to yet (a dump's, as it is
        built): each node's request vectors are written once on leaving, not once per pod."""
        if self._listeners or self._requests_later is not None:
            yield  # someone may read the vectors at each event: written as each pod comes
            return
        self._requests_later = {}
        try:
            yield
        finally:
            later, self._requests_later = self._requests_later, None
            for name, info in later.items():
                if self._infos.get(name) is info:  # not deleted since (its index is current)
                    write_requests(self._vectors, info)

    def _replace_pod(self, entry: PodEntry, pod: Pod) -> None:
        """Swap the stored object of an entry for a new one with the same key, labels and node."""
        key = entry.key
        entry.pod = pod
        self._pods[key] = pod
        self._pods_by_ns[entry.namespace][key] = pod
        for k, v in entry.labels.items():
            self._pods_by_label[k][v][key] = pod
        if key in self._unbound:
            self._unbound[key] = pod
        if entry.info is not None:
            entry.info.all_pods[key] = pod
            if entry.visible:
                entry.info.pods[key] = pod

    # ------------------------------------------------------------------ matching-pod counts
    def pod_counts(
        self,
        namespaces: frozenset[str] | None,
        selector: Selector,
        *,
        include_terminating: bool = True,
    ) -> npt.NDArray[np.int64]:
        """Per node id, how many scheduler-visible bound pods in ``namespaces`` (None: all)
        match ``selector``; terminating pods too unless ``include_terminating`` is False
        (topology spread leaves them out; inter-pod affinity counts them).

        A read-only int64 view, kept current by every later pod change; valid until the node
        set changes (see the module notes). The first request for a key scans the pods once;
        equal keys share one vector.
        """
        if namespaces is not None and type(namespaces) is not frozenset:
            namespaces = frozenset(namespaces)
        key: GroupKey = (namespaces, selector, include_terminating)
        view = self._views.get(key)
        if view is None:
            group = self._groups.get(key) or self._create_group(key)
            view = group.counts[: self._n]
            view.flags.writeable = False
            self._views[key] = view
        return view

    def _create_group(self, key: GroupKey) -> PodCountGroup:
        group = PodCountGroup(key, self._capacity)
        anchor = group.anchor
        if anchor.kind != ANCHOR_NONE:
            indexes = []
            for entry in self._group_candidates(anchor):
                if entry.visible and group.matches(entry.namespace, entry.labels, entry.terminating):
                    if entry.groups is None:
                        entry.groups = [group]
                    else:
                        entry.groups.append(group)
                    if entry.info is not None:
                        indexes.append(entry.info.index)
            if indexes:
                group.counts[: self._n] += np.bincount(np.asarray(indexes), minlength=self._n)
            if anchor.kind == ANCHOR_VALUES:
                for v in anchor.values:
                    self._groups_by_value.setdefault((anchor.key, v), []).append(group)
            elif anchor.kind == ANCHOR_KEY:
                self._groups_by_key.setdefault(anchor.key, []).append(group)
            else:
                self._groups_any.append(group)
        self._groups[key] = group
        return group

    def _group_candidates(self, anchor: Anchor) -> Iterable[PodEntry]:
        """Every pod a new group could count, found through the pod label index."""
        entries = self._entries
        if anchor.kind == ANCHOR_VALUES:
            by_value = self._pods_by_label.get(anchor.key, {})
            return [entries[key] for v in anchor.values for key in by_value.get(v, ())]
        if anchor.kind == ANCHOR_KEY:
            by_value = self._pods_by_label.get(anchor.key, {})
            return [entries[key] for members in by_value.values() for key in members]
        return list(entries.values())

    def _matching_groups(self, entry: PodEntry) -> list[PodCountGroup] | None:
        """The count groups a (visible) pod belongs to, looked up by its labels."""
        ns, labels, term = entry.namespace, entry.labels, entry.terminating
        found = [g for g in self._groups_any if g.matches(ns, labels, term)]
        by_value, by_key = self._groups_by_value, self._groups_by_key
        if by_value or by_key:
            for k, v in labels.items():
                for g in by_value.get((k, v), ()):
                    if g.matches(ns, labels, term):
                        found.append(g)
                for g in by_key.get(k, ()):
                    if g.matches(ns, labels, term):
                        found.append(g)
        return found or None

    # ------------------------------------------------------------------ namespaces, workloads
    def add_namespace(self, ns: Namespace) -> None:
        name = ns.metadata.name
        if name in self._namespaces:
            raise ClusterError(f'namespace "{name}" already exists')
        self._namespaces[name] = ns
        self._emit(EventType.ADDED, ns)

    def update_namespace(self, ns: Namespace) -> None:
        name = ns.metadata.name
        old = self._namespaces.get(name)
        if old is None:
            raise ClusterError(f'namespace "{name}" not found')
        self._namespaces[name] = ns
        self._emit(EventType.UPDATED, ns, old=old)

    def delete_namespace(self, name: str) -> None:
        """Delete a Namespace object; its pods stay (delete them first if they should go)."""
        ns = self._namespaces.pop(name, None)
        if ns is None:
            raise ClusterError(f'namespace "{name}" not found')
        self._emit(EventType.DELETED, ns)

    def _store_for(self, kind: str) -> dict[str, KubeObject]:
        store = self._objects.get(kind)
        if store is None:
            raise ClusterError(f"ClusterState does not keep {kind or 'untyped'} objects")
        return store

    def add_object(self, obj: KubeObject) -> None:
        """Add a workload or other kept object (Deployment, Service, WorkloadSpread, ...)."""
        store = self._store_for(obj.KIND)
        if obj.key in store:
            raise ClusterError(f'{obj.KIND} "{obj.key}" already exists')
        store[obj.key] = obj
        self._emit(EventType.ADDED, obj)

    def update_object(self, obj: KubeObject) -> None:
        store = self._store_for(obj.KIND)
        old = store.get(obj.key)
        if old is None:
            raise ClusterError(f'{obj.KIND} "{obj.key}" not found')
        store[obj.key] = obj
        self._emit(EventType.UPDATED, obj, old=old)

    def delete_object(self, kind: str, key: str) -> None:
        store = self._store_for(kind)
        obj = store.pop(key, None)
        if obj is None:
            raise ClusterError(f'{kind} "{key}" not found')
        self._emit(EventType.DELETED, obj)

    # ------------------------------------------------------------------ reading: objects
    @property
    def nodes(self) -> Mapping[str, Node]:
        return MappingProxyType(self._nodes)

    @property
    def pods(self) -> Mapping[str, Pod]:
        return MappingProxyType(self._pods)

    @property
    def namespaces(self) -> Mapping[str, Namespace]:
        return MappingProxyType(self._namespaces)

    def objects(self, kind: str) -> Mapping[str, KubeObject]:
        """The kept objects of one kind ("Deployment", ...), by key."""
        return MappingProxyType(self._store_for(kind))

    def namespaces_matching(self, selector: Selector) -> frozenset[str]:
        """Names of the Namespace objects whose labels the selector matches (namespaceSelector)."""
        return frozenset(name for name, ns in self._namespaces.items() if selector.matches(ns.labels))

    # ------------------------------------------------------------------ reading: pods
    def node_of(self, pod_key: str) -> str:
        """The node a pod is bound to, "" when unbound; ClusterError for an unknown pod."""
        entry = self._entries.get(pod_key)
        if entry is None:
            raise ClusterError(f'pod "{pod_key}" not found')
        return entry.info.name if entry.info is not None else ""

    @property
    def unbound_pods(self) -> Mapping[str, Pod]:
        """Pods without a node (pending, gated, or finished before being bound)."""
        return MappingProxyType(self._unbound)

    def pods_on_node(self, name: str) -> Mapping[str, Pod]:
        """Every pod bound to the node, finished ones included (NodeInfo.pods excludes them)."""
        return MappingProxyType(self._info(name).all_pods)

    def pods_in_namespace(self, namespace: str) -> Mapping[str, Pod]:
        return MappingProxyType(self._pods_by_ns.get(namespace, {}))

    def pods_with_label(self, key: str, value: str) -> Mapping[str, Pod]:
        """Pods whose label ``key`` is ``value`` (any namespace, bound or not)."""
        return MappingProxyType(self._pods_by_label.get(key, {}).get(value, {}))

    def pod_label_values(self, key: str) -> Mapping[str, Mapping[str, Pod]]:
        """value → pods, for every value pods carry under label ``key``."""
        return MappingProxyType(self._pods_by_label.get(key, {}))

    # ------------------------------------------------------------------ reading: nodes
    @property
    def node_generation(self) -> int:
        """Changes whenever a node is added, updated or deleted (per-node-set caches key on it)."""
        return self._node_generation

    @property
    def num_nodes(self) -> int:
        return self._n

    @property
    def node_names(self) -> np.ndarray:
        """Node names by node id (object array, read-only view)."""
        view = self._views.get("node_names")
        if view is None:
            view = self._names[: self._n]
            view.flags.writeable = False
            self._views["node_names"] = view
        return view

    def node_index(self, name: str) -> int:
        """The node's id: its position in node_names and every per-node vector."""
        return self._info(name).index

    def node_info(self, name: str) -> NodeInfo:
        return self._info(name)

    def node_info_at(self, index: int) -> NodeInfo:
        return self._infos_by_index[index]

    def lowest_priority(self) -> int | None:
        """The lowest priority (spec.priority, 0 when unset) of the pods on the nodes'
        NodeInfos, None when they hold none: no pod may preempt below it."""
        return min(self._priorities) if self._priorities else None

    def node_info_without(self, index: int, gone: Sequence[Pod]) -> NodeInfo:
        """A copy of the node's NodeInfo with ``gone`` (visible pods bound to it) taken off as
        :meth:`_update` takes a pod off (kube's NodeInfo.Clone, then RemovePod), the cluster
        left alone: what preemption's dry run judges a node on. ``all_pods`` is shared."""
        info = self._infos_by_index[index]
        out = NodeInfo.__new__(NodeInfo)
        out.node, out.index, out.allocatable, out.all_pods = info.node, index, info.allocatable, info.all_pods
        requested, non_zero = info.requested.copy(), info.non_zero_requested.copy()
        pods, used = dict(info.pods), dict(info.used_ports)
        for pod in gone:
            key = pod.key
            entry = self._entries[key]
            del pods[key]
            requested.add_in_place(entry.requests, -1)
            non_zero.milli_cpu -= entry.non_zero_cpu
            non_zero.memory -= entry.non_zero_memory
            for port in entry.ports:
                c = used.get(port, 0) - 1
                if c:
                    used[port] = c
                else:
                    del used[port]
        out.requested, out.non_zero_requested, out.pods, out.used_ports = requested, non_zero, pods, used
        return out

    def node_infos(self) -> list[NodeInfo]:
        """All NodeInfos in node id order (a copy of the list)."""
        return list(self._infos_by_index)

    def node_vector(self, name: str) -> npt.NDArray[np.int64]:
        """One of NODE_VECTORS by node id, as a read-only int64 view (see the module notes)."""
        view = self._views.get(name)
        if view is None:
            if name not in self._vectors:
                raise KeyError(f"unknown node vector {name!r}; one of {', '.join(NODE_VECTORS)}")
            view = self._vectors[name][: self._n]
            view.flags.writeable = False
            self._views[name] = view
        return view

    def nodes_with_label(self, key: str, value: str) -> Mapping[str, Node]:
        return MappingProxyType(self._nodes_by_label.get(key, {}).get(value, {}))

    def node_label_values(self, key: str) -> Mapping[str, Mapping[str, Node]]:
        """value → nodes, for every value nodes carry under label ``key``."""
        return MappingProxyType(self._nodes_by_label.get(key, {}))

    def node_label_column(self, key: str) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
        """(codes, values) for label ``key``: codes[node id] indexes the sorted ``values``, -1
        where the node lacks the label — topology domains as a vector. Cached until the node
        set changes."""
        got = self._label_columns.get(key)
        if got is None:
            by_value = self._nodes_by_label.get(key, {})
            values = tuple(sorted(by_value))
            codes = np.full(self._n, -1, dtype=np.int32)
            for code, v in enumerate(values):
                for name in by_value[v]:
                    codes[self._infos[name].index] = code
            codes.flags.writeable = False
            got = (codes, values)
            self._label_columns[key] = got
        return got

    def _info(self, name: str) -> NodeInfo:
        info = self._infos.get(name)
        if info is None:
            raise ClusterError(f'node "{name}" not found')
        return info

    def __repr__(self) -> str:
        return (
            f"ClusterState(nodes={self._n}, pods={len(self._pods)}, namespaces={len(self._namespaces)}, "
            f"count groups={len(self._groups)})"
        )
