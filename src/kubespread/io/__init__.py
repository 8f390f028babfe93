"""Manifest loading and dumping: files, directories, stdin, multi-document YAML, kubectl lists."""

from kubespread.io.dump import dump_data, dump_objects, dump_yaml
from kubespread.io.loader import LoadedObject, LoadProblem, Manifests, load, load_data, load_text
from kubespread.io.snapshot import SnapshotError, cluster_from_manifests, load_cluster

__all__ = [
    "LoadProblem",
    "LoadedObject",
    "Manifests",
    "SnapshotError",
    "cluster_from_manifests",
    "dump_data",
    "dump_objects",
    "dump_yaml",
    "load",
    "load_cluster",
    "load_data",
    "load_text",
]
