"""Writing objects back out as kubectl does (a ``List`` for several objects)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import yaml

from kubespread.api.meta import KubeObject
from kubespread.cluster.state import OBJECT_KINDS, ClusterState

__all__ = ["cluster_objects", "dump_data", "dump_objects", "dump_yaml", "to_list_manifest"]


class _NoAliasDumper(yaml.SafeDumper):
    """Writes an object met twice in full both times: kubectl's YAML has no anchors or
    aliases (``&id001`` / ``*id001``), and whoever reads ours should not have to resolve them."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: Any) -> str:
    """YAML as every command writes it: block style, keys in manifest order, no aliases."""
    return yaml.dump(
        data, Dumper=_NoAliasDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def cluster_objects(cluster: ClusterState) -> list[KubeObject]:
    """Every object of a cluster as a kubectl dump lists them (namespaces and nodes first,
    then workloads and the other kept kinds, then pods but finished ones): loading the dump
    gives the same cluster back."""
    objs: list[KubeObject] = [*cluster.namespaces.values(), *cluster.nodes.values()]
    for kind in OBJECT_KINDS:
        objs += list(cluster.objects(kind.KIND).values())
    objs += [p for p in cluster.pods.values() if not p.is_finished]
    return objs


def to_list_manifest(objs: Iterable[KubeObject]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [o.to_dict() for o in objs], "metadata": {}}


def dump_data(data: Any, fmt: str) -> str:
    """JSON (indented, as kubectl) or YAML (block style, keys in manifest order)."""
    if fmt == "json":
        return json.dumps(data, indent=4, ensure_ascii=False) + "\n"
    return dump_yaml(data)


def dump_objects(objs: Iterable[KubeObject], fmt: str = "yaml") -> str:
    return dump_data(to_list_manifest(objs), fmt)
