"""A workload's identity and a pod's ownership, in one place for every layer.

A pod names its owner in one ``ownerReference`` with ``controller: true``: its *controller*
(a ReplicaSet, StatefulSet, Job, CloneSet, ...). The controller may itself be controlled (a
Deployment's ReplicaSet); following that chain up gives the *top* owner, what a user
deployed and calls the workload. Both matter: a rollout's two ReplicaSets are two
controllers of one Deployment, so spread rows and planners that move interchangeable pods go
by the controller, while audit and diff go by the top owner. ``ownership`` walks the chain
once per pod and both answers travel together, so no layer re-walks it or mixes them up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kubespread.api.meta import KubeObject
from kubespread.cluster.state import ClusterState

__all__ = [
    "NO_OWNER",
    "SHORT_KINDS",
    "Lookup",
    "Ownership",
    "WorkloadRef",
    "controller_of",
    "ownership",
    "short_kind",
]

#: finds an object by kind and ``namespace/name`` (``ClusterState.get``, or a snapshot's copy)
Lookup = Callable[[str, str], KubeObject | None]

#: kubectl's short names, so workload references fit 80 columns
SHORT_KINDS: Final = {
    "ReplicaSet": "rs",
    "StatefulSet": "sts",
    "Job": "job",
    "Deployment": "deploy",
    "CloneSet": "cloneset",
    "DaemonSet": "ds",
}

#: owner chains are short (ReplicaSet → Deployment); a cycle in bad input must still end
_MAX_HOPS: Final = 5


def short_kind(kind: str) -> str:
    """``deploy`` for ``Deployment``; an unknown kind lower-cased."""
    return SHORT_KINDS.get(kind, kind.lower())


@dataclass(frozen=True, slots=True, order=True)
class WorkloadRef:
    """One workload object by namespace, kind and name (ordered in that order)."""

    namespace: str
    kind: str
    name: str

    @property
    def key(self) -> str:
        """``namespace/Kind/name``: the spelling plan/ and its JSON use as a key."""
        return f"{self.namespace}/{self.kind}/{self.name}"

    @property
    def short(self) -> str:
        """``deploy/shop/checkout`` (``deploy/checkout`` in the default namespace): the
        spelling of the tables, after ``kubectl get``'s ``kind/name``."""
        name = self.name if self.namespace == "default" else f"{self.namespace}/{self.name}"
        return f"{short_kind(self.kind)}/{name}"

    @classmethod
    def parse(cls, key: str) -> WorkloadRef:
        """The reference ``key`` spells (``namespace/Kind/name``)."""
        namespace, kind, name = key.split("/", 2)
        return cls(namespace, kind, name)


@dataclass(frozen=True, slots=True)
class Ownership:
    """Who owns a pod: its ``controller`` (the controller ownerReference) and the ``top`` of
    the controller chain (the Deployment of a ReplicaSet; the controller itself when nothing
    controls it, or when an owner on the way is not found). Both None for a pod without a
    controller."""

    controller: WorkloadRef | None
    top: WorkloadRef | None


NO_OWNER: Final = Ownership(None, None)


def controller_of(obj: KubeObject) -> WorkloadRef | None:
    """``obj``'s controller (its controller ownerReference), no lookup needed: what the
    planners group interchangeable pods by."""
    ref = obj.metadata.controller_ref()
    return None if ref is None else WorkloadRef(obj.namespace, ref.kind, ref.name)


def ownership(source: ClusterState | Lookup, obj: KubeObject) -> Ownership:
    """``obj``'s controller and top owner, looked up in ``source`` (a cluster, or a lookup
    such as a snapshot's copy of the kept objects).

    Not cached on the pod: a pod object outlives changes to its owners (a ReplicaSet
    adopted or deleted), so the answer belongs to the cluster as it is when asked; callers
    that ask often about one state memoize per controller (``sim.run``'s snapshots do)."""
    ref = obj.metadata.controller_ref()
    controller = top = controller_of(obj)
    if ref is None or controller is None:
        return NO_OWNER
    find = source.get if isinstance(source, ClusterState) else source
    namespace = obj.namespace
    for _ in range(_MAX_HOPS):
        owner = find(ref.kind, f"{namespace}/{ref.name}")
        if owner is None:
            break
        up = owner.metadata.controller_ref()
        if up is None:
            break
        ref = up
        top = WorkloadRef(namespace, ref.kind, ref.name)
    return Ownership(controller, top)
