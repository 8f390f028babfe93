"""The scorer NodeResourcesFit and NodeResourcesBalancedAllocation share (resource_allocation.go).

For each configured resource it works out, per node, what the node can allocate and what
would be requested once the pod is on it, then hands both to a strategy. Both come as int64
matrices of shape (resources, nodes), so a strategy is a few NumPy lines; a resource the
scorer must leave out on a node (0 allocatable, or an extended resource the pod does not
ask for) has allocatable 0 there, and every strategy skips such entries, as kube does.

``use_requested`` picks which node totals count for cpu and memory: NodeInfo.Requested
(BalancedAllocation) or NonZeroRequested, where each container that names no cpu/memory
request counts 100m / 200Mi (Fit's strategies). The incoming pod's request follows suit:
with the defaults applied per container, or as requested.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from kubespread.api.core import Pod
from kubespread.api.quantity import NANO
from kubespread.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_scalar_resource_name,
    pod_request_list,
)
from kubespread.api.schedconfig import ResourceSpec
from kubespread.cluster.state import ClusterState

__all__ = ["CPU", "EPHEMERAL_STORAGE", "MEMORY", "ResourceAllocationScorer", "Strategy"]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"

#: NonMissingContainerRequests of the non-zero scorers, in nano-units
_NON_MISSING: Final = {CPU: DEFAULT_MILLI_CPU_REQUEST * 10**6, MEMORY: DEFAULT_MEMORY_REQUEST * NANO}

#: a strategy: (requested, allocatable), both int64 (resources x nodes) → int64 raw score per node
Strategy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


class ResourceAllocationScorer:
    """resourceAllocationScorer: resources and weights, which totals to read, and a strategy.

    ``skip_pod_level`` reproduces Fit's scorer in v1.35: NewFit never passes the
    PodLevelResources gate to its embedded scorer, so Fit scores from the containers alone
    while its Filter and BalancedAllocation honour spec.resources.
    """

    def __init__(
        self,
        resources: Sequence[ResourceSpec],
        strategy: Strategy,
        *,
        use_requested: bool,
        skip_pod_level: bool = False,
    ) -> None:
        self.resources = [r.name for r in resources]
        self.weights = np.asarray([r.weight for r in resources], dtype=np.int64)
        self.strategy = strategy
        self.use_requested = use_requested
        self.skip_pod_level = skip_pod_level

    # ------------------------------------------------------------------ the pod
    def pod_request_list(self, pod: Pod) -> list[int]:
        """calculatePodResourceRequestList: one amount per configured resource, cpu in
        millicores and the rest in whole units, each rounded up (MilliValue / Value)."""
        if self.skip_pod_level and pod.spec.resources is not None and pod.spec.resources.requests:
            pod = pod.copy()
            pod.spec.resources = None
        nanos = pod_request_list(pod, non_missing=None if self.use_requested else _NON_MISSING)
        out = []
        for name in self.resources:
            v = nanos.get(name, 0)
            out.append(_ceil_div(v, 10**6) if name == CPU else _ceil_div(v, NANO))
        return out

    # ------------------------------------------------------------------ the nodes
    def allocatable_requested(
        self, cluster: ClusterState, nodes: np.ndarray, pod_requests: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """calculateResourceAllocatableRequest for every resource and node: (allocatable,
        requested incl. the pod), int64 (resources x nodes); both 0 where the resource is
        left out of scoring on that node."""
        n = len(nodes)
        vec = cluster.node_vector
        # every node, in order (the usual feasible set): a slice reads the vectors without a gather
        every = n == cluster.num_nodes and n > 1 and nodes[0] == 0 and bool((nodes[1:] > nodes[:-1]).all())
        pick: slice | np.ndarray = slice(0, n) if every else nodes
        allocs: list[np.ndarray] = []
        reqs: list[np.ndarray] = []
        for name, pod_req in zip(self.resources, pod_requests, strict=True):
            if name == CPU:
                a = vec("allocatable_milli_cpu")[pick]
                r = vec("requested_milli_cpu" if self.use_requested else "non_zero_milli_cpu")[pick]
            elif name == MEMORY:
                a = vec("allocatable_memory")[pick]
                r = vec("requested_memory" if self.use_requested else "non_zero_memory")[pick]
            elif name == EPHEMERAL_STORAGE:  # always the real requests
                a = vec("allocatable_ephemeral_storage")[pick]
                r = vec("requested_ephemeral_storage")[pick]
            elif pod_req == 0 and is_scalar_resource_name(name):
                a = r = np.zeros(n, dtype=np.int64)  # an extended resource the pod does not use: not scored
            else:
                a, r = self._scalar_columns(cluster, nodes, name)
            allocs.append(a)  # 0 where the node has none: left out
            reqs.append(r + pod_req)
        if not allocs:
            return np.zeros((0, n), dtype=np.int64), np.zeros((0, n), dtype=np.int64)
        alloc, req = np.stack(allocs), np.stack(reqs)
        none = alloc == 0
        if none.any():
            req[none] = 0
        return alloc, req

    @staticmethod
    def _scalar_columns(cluster: ClusterState, nodes: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Allocatable and requested of a scalar resource, per node (rare: plain Python).

        A node whose allocatable does not list the resource gives 0 (left out); so does any
        non-scalar name other than cpu/memory/ephemeral-storage (e.g. ``pods``)."""
        a = np.zeros(len(nodes), dtype=np.int64)
        r = np.zeros(len(nodes), dtype=np.int64)
        info_at = cluster.node_info_at
        for j, node_id in enumerate(nodes):
            info = info_at(int(node_id))
            got = info.allocatable.scalar.get(name)
            if got:
                a[j] = got
                r[j] = info.requested.scalar.get(name, 0)
        return a, r

    def score_nodes(
        self, cluster: ClusterState, nodes: np.ndarray, pod_requests: Sequence[int]
    ) -> np.ndarray:
        """The strategy's raw score for each node (int64)."""
        if len(nodes) == 0:
            return np.zeros(0, dtype=np.int64)
        alloc, req = self.allocatable_requested(cluster, nodes, pod_requests)
        return self.strategy(req, alloc)


def weighted_mean_floor(scores: np.ndarray, used: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ score·weight // Σ weight over the resources ``used`` per node (0 when none): how
    LeastAllocated and MostAllocated combine (int64 division, operands non-negative)."""
    w = np.where(used, weights[:, None], 0)
    total = (scores * w).sum(axis=0)
    weight_sum = w.sum(axis=0)
    return np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0).astype(np.int64)
