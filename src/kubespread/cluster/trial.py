"""A scope of tentative changes to a ClusterState that undoes itself.

:meth:`ClusterState.hypothetical` keeps tentative changes from ordinary listeners (the
simulation's queue, controllers, recorders) but leaves the undoing to the caller, who must
remember every pod added, bound or replaced. :func:`trial` does that bookkeeping once: it
notes each object as it was before its first change in the scope and, on leaving (normally
or by an exception), puts every one back through ClusterState's own methods, still inside
``hypothetical()``, so the derived indexes follow and nobody else hears a thing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubespread.api.core import Pod
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.cluster.state import ClusterState

__all__ = ["trial"]

#: (kind, key) -> the object before the scope's first change to it (None: it did not exist)
_Journal = dict[tuple[str, str], Any]


@contextmanager
def trial(cluster: ClusterState) -> Iterator[ClusterState]:
    """Change ``cluster`` freely inside; on leaving, every object is as it was (the same
    objects, the indexes with them). Only derived listeners hear the changes and the undoing.

    What is restored is what exists: a node deleted and put back may take another index in
    the node vectors. Scopes nest (the inner one undoes first)."""
    before: _Journal = {}

    def note(ev: ClusterEvent) -> None:
        obj = ev.obj if ev.old is None else ev.old
        before.setdefault((ev.kind, ev.obj.key), None if ev.type is EventType.ADDED else obj)

    with cluster.hypothetical():
        unsubscribe = cluster.subscribe(note, derived=True)
        try:
            yield cluster
        finally:
            unsubscribe()
            _restore(cluster, before)


def _restore(cluster: ClusterState, before: _Journal) -> None:
    """Pods off the way first (new ones deleted), then nodes, namespaces and other objects
    back, then pods back on them, and last the nodes that did not exist, now free of pods."""
    pods = {k: v for k, v in before.items() if k[0] == Pod.KIND}
    rest = {k: v for k, v in before.items() if k[0] != Pod.KIND}
    for (_, key), old in pods.items():
        if old is None and key in cluster.pods:
            cluster.delete_pod(key)
    for (kind, key), old in rest.items():
        if old is not None:
            _put_back(cluster, kind, key, old)
    for (kind, key), old in pods.items():
        if old is not None:
            _put_back(cluster, kind, key, old)
    for (kind, key), old in reversed(rest.items()):
        if old is None and cluster.get(kind, key) is not None:
            cluster.delete(kind, key)


def _put_back(cluster: ClusterState, kind: str, key: str, old: Any) -> None:
    now = cluster.get(kind, key)
    if now is None:
        cluster.add(old)
    elif now is not old:
        cluster.update(old)
