"""Building a ClusterState from loaded manifests (a folder of YAML or a kubectl dump).

All or nothing: every object that cannot be added (a duplicate, a pod bound to a node that
is not in the input, ...) is reported with its file and line, and no state is returned, so a
caller never works on a cluster that silently lacks part of its input.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kubespread.api.core import Namespace, Node, Pod
from kubespread.api.model import gc_paused
from kubespread.cluster import OBJECT_KINDS, ClusterError, ClusterState
from kubespread.io.loader import LoadedObject, LoadProblem, Manifests, load

__all__ = ["SnapshotError", "cluster_from_manifests", "load_cluster"]

_CLUSTER_KINDS = (Pod, Node, Namespace, *OBJECT_KINDS)


class SnapshotError(Exception):
    """The input does not make a consistent cluster; ``problems`` says where and why."""

    def __init__(self, problems: list[LoadProblem]):
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


@gc_paused()
def cluster_from_manifests(objects: Manifests | Iterable[LoadedObject]) -> ClusterState:
    """A ClusterState holding every cluster object (pods, nodes, namespaces, workloads).

    Namespaces and nodes go in first so that bound pods find their nodes. Objects that are
    not cluster contents (e.g. a KubeSchedulerConfiguration) are left out.
    """
    loaded = objects.objects if isinstance(objects, Manifests) else list(objects)
    state = ClusterState()
    problems: list[LoadProblem] = []
    first = [lo for lo in loaded if isinstance(lo.obj, Namespace | Node)]
    rest = [lo for lo in loaded if not isinstance(lo.obj, Namespace | Node)]
    with state.adding_pods():
        for lo in first + rest:
            if isinstance(lo.obj, _CLUSTER_KINDS):
                try:
                    state.add(lo.obj)
                except ClusterError as e:
                    problems.append(LoadProblem(lo.source, str(e), line=lo.line, ref=lo.ref))
    if problems:
        raise SnapshotError(problems)
    return state


def load_cluster(paths: Iterable[str | Path]) -> tuple[ClusterState, Manifests]:
    """Load manifests and build the cluster; raises SnapshotError on any load or build problem."""
    manifests = load(paths)
    if manifests.errors:
        raise SnapshotError(manifests.errors)
    return cluster_from_manifests(manifests), manifests
