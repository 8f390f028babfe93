"""What a controller may read and do: the narrow surface between controllers and their host.

Controllers are written against :class:`ControllerHost`, never against the simulation: the
simulation (:class:`kubespread.sim.engine.Simulation`) and the live hosts
(:mod:`kubespread.live`) both implement it, so the same controller code runs on a virtual
clock and on a real API server. Anything a controller needs that is not here is a change to
this protocol, made on purpose.

Reads: ``cluster`` (the objects as the host knows them; subscribe to its events), ``now``
(seconds on the simulation's time scale, :mod:`kubespread.api.timestamps`),
``profiles`` (the scheduler profiles the host runs, for rules that follow the scheduler's
configuration) and ``features`` (the gates of the Kubernetes version answered as).
Writes go through the API server's verbs (create, update, delete, evict,
status), so admission sees them. Work is asked for with ``enqueue`` (a deduplicated
``sync(key)``) and ``after`` (a timer; ``settle`` marks one that is part of how the
cluster converges within seconds). ``record`` writes an Event.

The kubelet's side (:meth:`ControllerHost.set_node_reachable`, :meth:`node_reachable`,
:meth:`finish_terminations`) is what the node lifecycle controller's scenario verbs need:
whether a node's kubelet still confirms pod kills.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kubespread.admission.framework import Rejection
    from kubespread.api.core import PodCondition
    from kubespread.api.features import FeatureGates
    from kubespread.api.meta import KubeObject
    from kubespread.cluster.state import ClusterState
    from kubespread.scheduler.profile import Profile

__all__ = ["Cancellable", "Controller", "ControllerHost"]


class Cancellable(Protocol):
    """A timer handle: ``time`` is when it is due (on the host's ``now`` scale); ``cancel()``
    keeps the callback from running."""

    @property
    def time(self) -> float: ...

    def cancel(self) -> None: ...


class Controller(Protocol):
    """A controller: ``start`` subscribes to the cluster (``host.cluster.subscribe``) and
    queues its first keys; ``sync(key)`` reconciles one key (called through ``host.enqueue``)."""

    name: str

    def start(self, host: ControllerHost) -> None: ...

    def sync(self, key: str) -> None: ...


class ControllerHost(Protocol):
    """The cluster as a controller sees it, and the verbs it may use on it."""

    @property
    def cluster(self) -> ClusterState: ...

    @property
    def now(self) -> float: ...

    @property
    def profiles(self) -> Mapping[str, Profile]: ...

    @property
    def features(self) -> FeatureGates:
        """The Kubernetes version's gates: what kube-controller-manager of that version does."""
        ...

    # ------------------------------------------------------------------ work
    def enqueue(self, controller: Controller, key: str) -> None: ...

    def after(self, delay: float, callback: Callable[[], None], *, settle: bool = False) -> Cancellable: ...

    def record(self, obj: KubeObject, reason: str, message: str, *, type: str = "Normal") -> None: ...

    # ------------------------------------------------------------------ API server verbs
    def generate_name(self, prefix: str, namespace: str = "", kind: str = "Pod") -> str: ...

    def create(self, obj: KubeObject) -> KubeObject | Rejection: ...

    def update(self, obj: KubeObject, *, precondition: bool = False) -> None: ...

    def delete(self, kind: str, key: str, *, grace_seconds: float | None = None) -> None: ...

    def delete_pod(
        self, key: str, *, grace_seconds: float | None = None, subresource: str = ""
    ) -> Rejection | None: ...

    def evict(
        self, key: str, *, reason: str, message: str, grace_seconds: float | None = None
    ) -> Rejection | None:
        """The Eviction API: None once granted, else the refusal (429 when a
        PodDisruptionBudget would break; the caller decides whether to try again)."""
        ...

    def set_pod_status(
        self, key: str, phase: str, *, conditions: Iterable[PodCondition] | None = None
    ) -> None: ...

    # ------------------------------------------------------------------ the kubelet's side
    def node_reachable(self, node: str) -> bool: ...

    def set_node_reachable(self, node: str, reachable: bool) -> None: ...

    def finish_terminations(self, node: str) -> None: ...
