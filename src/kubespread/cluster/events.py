"""What ClusterState tells its listeners after each change."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

__all__ = ["ClusterEvent", "EventType", "Listener"]


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
    ``node_name`` the node a BOUND/UNBOUND pod entered or left.
    """

    __slots__ = ("kind", "node_name", "obj", "old", "type")

    def __init__(self, type: EventType, obj: Any, *, old: Any = None, node_name: str = "") -> None:
        self.type = type
        self.kind: str = obj.KIND
        self.obj = obj
        self.old = old
        self.node_name = node_name

    def __repr__(self) -> str:
        where = f" node={self.node_name}" if self.node_name else ""
        return f"ClusterEvent({self.type.value} {self.kind} {self.obj.key}{where})"


Listener = Callable[[ClusterEvent], None]
