"""The kubelets of the simulated nodes, as far as placement needs them.

A bound pod starts at once (Running, Ready). A Terminating pod's containers stop when its
grace period ends, and the kubelet then removes the pod object. A node whose kubelet is gone
(unreachable: a failed node) confirms nothing, so its pods stay Terminating until it comes
back (:meth:`Kubelets.finish_terminations`) or the node is deleted.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from kubespread.api.core import Pod, PodCondition, PodStatus
from kubespread.api.timestamps import timestamp
from kubespread.cluster.state import ClusterState
from kubespread.sim.clock import Clock, Timer

__all__ = ["Kubelets"]


class Kubelets:
    """Every node's kubelet: starts bound pods, ends Terminating ones after their grace period.
    ``remove(key)``: the API server's removal of a pod object (its final delete);
    ``record``: how an Event is written."""

    def __init__(
        self,
        cluster: ClusterState,
        clock: Clock,
        *,
        remove: Callable[[str], None],
        record: Callable[[Pod, str, str], None],
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self._remove = remove
        self._record = record
        #: nodes whose kubelet is gone: their pods cannot finish terminating
        self.unreachable: set[str] = set()
        self._terminations: dict[str, Timer] = {}

    def reachable(self, node: str) -> bool:
        return node not in self.unreachable

    def set_reachable(self, node: str, reachable: bool) -> None:
        if reachable:
            self.unreachable.discard(node)
        else:
            self.unreachable.add(node)

    def start(self, pod: Pod, node: str) -> Pod:
        """The pod bound to ``node``, Running and Ready since now (what its kubelet reports at
        once; ``startTime`` is what preemption's last node criterion compares)."""
        bound = copy.copy(pod)
        bound.spec = copy.copy(pod.spec)
        bound.spec.node_name = node
        bound.status = PodStatus(
            phase="Running",
            start_time=timestamp(self.clock.now),
            conditions=[
                PodCondition(type="PodScheduled", status="True"),
                PodCondition(type="Ready", status="True"),
            ],
        )
        return bound

    def kill(self, pod: Pod, grace_seconds: float) -> None:
        """Stop the pod's containers; the object goes when the grace period ends, unless the
        node is unreachable."""
        container = pod.spec.containers[0].name if pod.spec.containers else "main"
        self._record(pod, "Killing", f"Stopping container {container}")
        if pod.spec.node_name not in self.unreachable:
            key = pod.key
            self._terminations[key] = self.clock.after(grace_seconds, lambda: self._remove(key), settle=True)

    def forget(self, key: str) -> None:
        """The pod object is going: no kill is pending for it any more."""
        timer = self._terminations.pop(key, None)
        if timer is not None:
            timer.cancel()

    def finish_terminations(self, node: str) -> None:
        """The node's kubelet (back, or the node gone): its Terminating pods are removed."""
        for key in sorted(self.cluster.pods_on_node(node)):
            if self.cluster.pods[key].is_terminating:
                self._remove(key)
