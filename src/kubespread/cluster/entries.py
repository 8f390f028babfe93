"""The records ClusterState's indexes are made of: a pod's entry (what the state counted for
it, so that removing the pod undoes exactly that), the bound copy of a pod, and the nested
label index (label key → value → object key → object) kept for pods and nodes alike."""

from __future__ import annotations

import copy
from typing import Any, Final

from kubespread.api.core import Pod
from kubespread.api.resources import Resources, pod_requests_and_non_zero
from kubespread.cluster.counts import PodCountGroup
from kubespread.cluster.nodeinfo import HostPort, NodeInfo, pod_host_ports

__all__ = ["PodEntry", "nested_add", "nested_remove", "with_node_name"]


class PodEntry:
    """What the state counted for one pod, so that removing it undoes exactly that."""

    __slots__ = (
        "groups",
        "info",
        "key",
        "labels",
        "namespace",
        "non_zero_cpu",
        "non_zero_memory",
        "pod",
        "ports",
        "requests",
        "terminating",
        "visible",
    )

    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int
    ports: tuple[HostPort, ...]

    def __init__(self, pod: Pod, key: str, info: NodeInfo | None, previous: PodEntry | None = None) -> None:
        """``previous``: the entry of the version this pod replaces; when the new one shares
        what requests and host ports are computed from (a bind, a status or deletion write
        copies the pod shallowly), they are taken from it rather than recomputed."""
        self.pod = pod
        self.key = key
        self.info = info
        self.namespace = pod.namespace
        self.labels = dict(pod.metadata.labels)
        self.terminating = pod.is_terminating
        self.visible = not pod.is_finished  # on kube-scheduler's NodeInfo at all
        self.groups: list[PodCountGroup] | None = None
        if self.visible and previous is not None and previous.visible and _same_needs(previous.pod, pod):
            self.requests = previous.requests
            self.non_zero_cpu, self.non_zero_memory = previous.non_zero_cpu, previous.non_zero_memory
            self.ports = previous.ports
        elif self.visible:
            self.requests, nz = pod_requests_and_non_zero(pod)
            self.non_zero_cpu, self.non_zero_memory = nz.milli_cpu, nz.memory
            self.ports = pod_host_ports(pod)
        else:
            self.requests = _ZERO
            self.non_zero_cpu = self.non_zero_memory = 0
            self.ports = ()


_ZERO: Final = Resources()


def _same_needs(old: Pod, new: Pod) -> bool:
    """Whether the two pods share (as objects) all that requests and host ports read."""
    a, b = old.spec, new.spec
    return a is b or (
        a.containers is b.containers
        and a.init_containers is b.init_containers
        and a.overhead is b.overhead
        and a.resources is b.resources
    )


def with_node_name(pod: Pod, node_name: str) -> Pod:
    """A shallow copy of the pod with spec.nodeName set (the binding)."""
    new = copy.copy(pod)
    spec = copy.copy(pod.spec)
    spec.node_name = node_name
    new.spec = spec
    return new


def nested_add(index: dict[str, dict[str, dict[str, Any]]], k: str, v: str, key: str, obj: Any) -> None:
    by_value = index.get(k)
    if by_value is None:
        index[k] = {v: {key: obj}}
        return
    members = by_value.get(v)
    if members is None:
        by_value[v] = {key: obj}
    else:
        members[key] = obj


def nested_remove(index: dict[str, dict[str, dict[str, Any]]], k: str, v: str, key: str) -> None:
    by_value = index[k]
    members = by_value[v]
    del members[key]
    if not members:
        del by_value[v]
        if not by_value:
            del index[k]
