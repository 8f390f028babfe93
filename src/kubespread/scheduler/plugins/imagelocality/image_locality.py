"""ImageLocality (Score), as image_locality.go and the scheduler cache's image states.

Each container image (init containers included) found on a node adds its size scaled by
the share of all nodes that hold it, so an image present everywhere does not pull every pod
onto the same few nodes. The sum is clamped to [23 MiB, 1000 MiB x containers] and mapped
linearly onto 0..100.

The scheduler cache keeps one ImageStateSummary per image name for the whole cluster: its
size is that of the first node that reported the name, and names are used as the nodes
report them (only the pod's image names are normalized, by adding ":latest").
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import (
    MAX_NODE_SCORE,
    CycleState,
    NodeIds,
    NodeScores,
    NodeSetCache,
    ScorePlugin,
)
from kubespread.scheduler.node_memo import NodeMemo

__all__ = ["MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "ImageLocality", "normalized_image_name"]

NAME: Final = "ImageLocality"
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB
DEFAULT_IMAGE_TAG: Final = "latest"


def normalized_image_name(name: str) -> str:
    """Add ":latest" when the name has no tag (no ':' after the last '/')."""
    if name.rfind(":") <= name.rfind("/"):
        return f"{name}:{DEFAULT_IMAGE_TAG}"
    return name


def calculate_priority(sum_scores: npt.NDArray[np.int64], num_containers: int) -> npt.NDArray[np.int64]:
    """calculatePriority: clamp to [MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD·containers] and
    scale to 0..100 with int64 division (operands non-negative)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.clip(sum_scores, MIN_THRESHOLD, max(max_threshold, MIN_THRESHOLD))
    return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)


class _ImageIndex:
    """Image name → (size, node-id mask) for one node set (rebuilt when nodes change)."""

    __slots__ = ("images", "num_nodes")

    def __init__(self, cluster: ClusterState) -> None:
        n = cluster.num_nodes
        self.num_nodes = n
        sizes: dict[str, int] = {}
        holders: dict[str, list[int]] = {}
        for i in range(n):
            for image in cluster.node_info_at(i).node.status.images:
                for name in image.names:
                    if name not in sizes:
                        sizes[name] = image.size_bytes
                    ids = holders.setdefault(name, [])
                    if not ids or ids[-1] != i:
                        ids.append(i)
        self.images: dict[str, tuple[int, np.ndarray]] = {}
        for name, ids in holders.items():
            mask = np.zeros(n, dtype=bool)
            mask[ids] = True
            self.images[name] = (sizes[name], mask)


class ImageLocality(ScorePlugin):
    name = NAME

    def __init__(self, args: object = None, *, features: FeatureGates | None = None) -> None:
        super().__init__(args, features=features)
        self._index: NodeSetCache[_ImageIndex] = NodeSetCache(_ImageIndex)
        self._scores: NodeMemo[tuple[str, ...]] = NodeMemo(self._scores_of, pods_matter=False)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeIds) -> NodeScores:
        spec = pod.spec
        images = tuple(normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers))
        return self._scores.values(state.cluster, images, np.asarray(nodes, dtype=np.int64))

    def _scores_of(self, cluster: ClusterState, nodes: np.ndarray, images: tuple[str, ...]) -> np.ndarray:
        """The scores at ``nodes`` of a pod whose containers run ``images`` (normalized names,
        one per container): from the node objects alone, kept per node set by ``_scores``."""
        index = self._index.get(cluster)
        total = np.zeros(len(nodes), dtype=np.int64)
        for image in images:
            got = index.images.get(image)
            if got is None:
                continue
            size, mask = got
            # scaledImageScore: int64(float64(size) * (float64(numNodes) / float64(totalNumNodes)))
            spread = float(int(mask.sum())) / float(index.num_nodes)
            total += np.where(mask[nodes], int(float(size) * spread), 0)
        if not len(total) or total.max() <= MIN_THRESHOLD:  # clamped to the minimum: 0 everywhere
            return np.zeros(len(nodes), dtype=np.int64)
        return calculate_priority(total, len(images)).astype(np.int64)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return int(self.score_nodes(state, pod, np.asarray([node.index], dtype=np.intp))[0])
