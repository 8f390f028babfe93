"""A live cluster as the input of any command: what ``-f`` reads from files, read from the API.

Every object comes back with its uid and creationTimestamp, so placement takes it as already
existing (bound pods stay on their nodes, pending pods are placed), exactly as a kubectl dump
of the same cluster would be. Nothing is written: ``schedule`` and ``explain`` against a live
cluster are read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from kubespread.io.loader import Manifests, load_data
from kubespread.live.kube import ApiError, KubeApi, LiveError

__all__ = ["SOURCE_KINDS", "read_cluster", "read_from", "server_version"]

#: what a cluster contributes, in the order a dump lists it (namespaces and nodes first)
SOURCE_KINDS: Final = (
    "Namespace",
    "Node",
    "PriorityClass",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "CloneSet",
    "WorkloadSpread",
    "Service",
    "PodDisruptionBudget",
    "Pod",
)
#: kinds that live only where their CustomResourceDefinition is installed
OPTIONAL_KINDS: Final = frozenset({"CloneSet", "WorkloadSpread"})


def server_version(kubeconfig: Path | str | None = None, context: str | None = None) -> str | None:
    """The cluster's Kubernetes version (``1.36``, from /version), None when it does not say.
    Raises LiveError when the cluster cannot be reached (read_cluster's message)."""
    api = KubeApi.connect(kubeconfig, context)
    try:
        return api.server_version()
    except ApiError as e:
        raise LiveError(
            f"cluster {api.context or api.host}: cannot reach the API server: {e.message}"
        ) from None


def read_cluster(kubeconfig: Path | str | None = None, context: str | None = None) -> Manifests:
    """Everything kubespread models, listed once. Raises LiveError (a message for the user)
    when the cluster cannot be reached or read."""
    return read_from(KubeApi.connect(kubeconfig, context))


def read_from(api: KubeApi) -> Manifests:
    """:func:`read_cluster` through a client already connected (a command that reads the
    cluster again and again: ``rebalance --apply`` before each round)."""
    source = f"cluster {api.context or api.host}"
    items = []
    for kind in SOURCE_KINDS:
        try:
            listed, _ = api.list(kind)
        except ApiError as e:
            if e.status == 404 and kind in OPTIONAL_KINDS:
                continue  # no such CRD in this cluster
            if e.unreachable:
                raise LiveError(f"{source}: cannot reach the API server: {e.message}") from None
            if e.denied:
                raise LiveError(e.advice(f"{source}: listing {kind}")) from None
            raise LiveError(f"{source}: listing {kind}: {e}") from None
        items += listed
    return load_data(items, source)
