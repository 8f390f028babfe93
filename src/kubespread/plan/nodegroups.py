"""Node groups for ``provision`` and its autoscaler baseline: node templates (read from a
file or taken from the cluster), the new nodes made from them, and the replay (the settled
cluster's objects settled again with the new nodes in it)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from kubespread.api.core import Node
from kubespread.api.keys import LABEL_HOSTNAME, LABEL_INSTANCE_TYPE, LABEL_ZONE
from kubespread.cluster.state import ClusterState
from kubespread.io.loader import LoadedObject
from kubespread.sim.baseline import Baseline

__all__ = [
    "COST_ANNOTATION",
    "NodeTemplate",
    "ProvisionError",
    "cluster_templates",
    "new_nodes",
    "node_template",
    "replay",
]


class ProvisionError(Exception):
    """The question cannot be answered as asked (one line, naming what)."""


#: a node template's cost per node (default 1)
COST_ANNOTATION: Final = "kubespread.io/cost"


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """A node group: new nodes are copies of ``node`` (its labels, taints, allocatable);
    ``name`` its metadata.name, ``zone`` its zone label, ``cost`` per node; ``source`` where
    it was read (a file and line, or the cluster node it copies)."""

    name: str
    node: Node
    zone: str
    cost: float
    source: str = ""


def _where(lo: LoadedObject, field: str | None = None) -> str:
    return f"{lo.where(field)}: {lo.ref}"


def node_template(lo: LoadedObject) -> NodeTemplate:
    """The template a --node-template object gives; ProvisionError (located) when it is not
    a Node, has no zone label or a cost that is not a number >= 0."""
    obj = lo.obj
    if not isinstance(obj, Node):
        raise ProvisionError(
            f"{_where(lo)}: a node template must be a Node, not a {obj.KIND or 'untyped object'}"
        )
    zone = obj.metadata.labels.get(LABEL_ZONE)
    if not zone:
        raise ProvisionError(
            f"{_where(lo, 'metadata.labels')}: the node template has no {LABEL_ZONE} label "
            "(a node group lives in one zone)"
        )
    raw = obj.metadata.annotations.get(COST_ANNOTATION, "1")
    try:
        cost = float(raw)
    except ValueError:
        cost = math.nan
    if not math.isfinite(cost) or cost < 0:
        raise ProvisionError(
            f"{_where(lo, 'metadata.annotations')}: annotation {COST_ANNOTATION} must be a number 0 or more, "
            f"got {raw!r}"
        )
    return NodeTemplate(obj.metadata.name, obj, zone, cost, lo.where())


#: taints the node lifecycle puts on (conditions), not the node group's own
_CONDITION_TAINT: Final = "node.kubernetes.io/"


def cluster_templates(cluster: ClusterState) -> list[NodeTemplate]:
    """One template per (zone, instance type) present (``--node-template-from-cluster``): a
    copy of the first such node by name, without its condition taints, cordon and hostname,
    named ``<instance type>-<zone>`` (``node-<zone>`` without an instance-type label)."""
    seen: dict[tuple[str, str], Node] = {}
    for name in sorted(cluster.nodes):
        node = cluster.nodes[name]
        zone = node.metadata.labels.get(LABEL_ZONE)
        if not zone:
            continue
        seen.setdefault((zone, node.metadata.labels.get(LABEL_INSTANCE_TYPE, "")), node)
    out = []
    for (zone, itype), node in sorted(seen.items()):
        data = node.to_dict()
        meta = data.setdefault("metadata", {})
        name = _dns_name(f"{itype or 'node'}-{zone}")
        meta["name"] = name
        meta.pop("uid", None)
        meta.get("labels", {}).pop(LABEL_HOSTNAME, None)
        spec = data.setdefault("spec", {})
        spec.pop("unschedulable", None)
        spec["taints"] = [
            t for t in spec.get("taints") or [] if not t.get("key", "").startswith(_CONDITION_TAINT)
        ]
        status = data.setdefault("status", {})
        status.pop("conditions", None)
        template = Node.from_dict(data)
        cost = _cost(template)
        out.append(NodeTemplate(name, template, zone, cost, f"cluster node {node.metadata.name}"))
    return out


def _cost(node: Node) -> float:
    try:
        cost = float(node.metadata.annotations.get(COST_ANNOTATION, "1"))
    except ValueError:
        return 1.0
    return cost if math.isfinite(cost) and cost >= 0 else 1.0


def _dns_name(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.") or "node"


def new_nodes(template: NodeTemplate, count: int, taken: set[str]) -> list[Node]:
    """``count`` copies of the template, named ``<template>-1``, ``-2``, ... (names in
    ``taken`` skipped), each with its own hostname label."""
    data = template.node.to_dict()
    meta = data.setdefault("metadata", {})
    for gone in ("uid", "resourceVersion", "creationTimestamp", "generateName"):
        meta.pop(gone, None)
    out: list[Node] = []
    i = 0
    while len(out) < count:
        i += 1
        name = f"{template.name}-{i}"
        if name in taken:
            continue
        meta["name"] = name
        meta.setdefault("labels", {})[LABEL_HOSTNAME] = name
        out.append(Node.from_dict(data))
    return out


def replay(baseline: Baseline, nodes: Sequence[Node]) -> Baseline:
    """The Baseline's objects settled again with ``nodes`` in the cluster (existing, so there
    before anything new is created): what ``kubespread schedule`` does given them."""
    extra = [LoadedObject(n, "provision") for n in nodes]
    return baseline.fork(extra)
