"""What ClusterState tells its listeners after each change."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any

__all__ = ["ClusterEvent", "EventType", "Listener", "Subscribers"]


class EventType(StrEnum):
    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    #: a pod now occupies a node: bind(), or add/update of a pod with spec.nodeName set
    BOUND = "Bound"
    #: a pod no longer occupies a node: unbind(), delete of a bound pod, or an update moving it
    UNBOUND = "Unbound"


class ClusterEvent:
    """One change, delivered after the state (and every index) already reflects it.

    ``obj`` is the object as it is now (for DELETED and UNBOUND: as it was); ``old`` the
    replaced object for UPDATED, BOUND and UNBOUND when a pod object was replaced;
    ``node_name`` the node a BOUND/UNBOUND pod entered or left. ``echo``: the one of the two
    events a single change of a pod makes that tells a listener keeping only what the pods
    are (not where they are) nothing the other does: the BOUND an update onto a node makes
    right after its UPDATED (the same ``obj`` and ``old``), the UNBOUND the deletion of a
    bound pod makes right before its DELETED (the same ``obj``, the pod already gone).
    """

    __slots__ = ("echo", "kind", "node_name", "obj", "old", "type")

    def __init__(
        self, type: EventType, obj: Any, *, old: Any = None, node_name: str = "", echo: bool = False
    ) -> None:
        self.type = type
        self.kind: str = obj.KIND
        self.obj = obj
        self.old = old
        self.node_name = node_name
        self.echo = echo

    def __repr__(self) -> str:
        where = f" node={self.node_name}" if self.node_name else ""
        return f"ClusterEvent({self.type.value} {self.kind} {self.obj.key}{where})"


Listener = Callable[[ClusterEvent], None]


class Subscribers:
    """ClusterState's listeners, and which of them hear an event of a kind: the route per
    (kind, tentative or not) is worked out once and kept until someone (un)subscribes, so a
    controller that reads few kinds is not called for every other event."""

    __slots__ = ("_entries", "_routes")

    def __init__(self) -> None:
        #: (listener, the kinds it hears or None for every kind, derived), in subscription order
        self._entries: list[tuple[Listener, frozenset[str] | None, bool]] = []
        self._routes: dict[tuple[str, bool], tuple[Listener, ...]] = {}

    def __bool__(self) -> bool:
        return bool(self._entries)

    def add(self, listener: Listener, derived: bool, kinds: Iterable[str] | None) -> Callable[[], None]:
        entry = (listener, None if kinds is None else frozenset(kinds), derived)
        self._entries.append(entry)
        self._routes.clear()

        def unsubscribe() -> None:
            if entry in self._entries:
                self._entries.remove(entry)
                self._routes.clear()

        return unsubscribe

    def route(self, kind: str, derived_only: bool) -> tuple[Listener, ...]:
        """Who hears an event of ``kind`` (inside ClusterState.hypothetical: derived ones only)."""
        scope = (kind, derived_only)
        listeners = self._routes.get(scope)
        if listeners is None:
            listeners = self._routes[scope] = tuple(
                f
                for f, kinds, derived in self._entries
                if (derived or not derived_only) and (kinds is None or kind in kinds)
            )
        return listeners
