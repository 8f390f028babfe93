"""Manifest loading and dumping: files, directories, stdin, multi-document YAML, kubectl lists."""

from kubespread.io.dump import dump_data, dump_objects
from kubespread.io.loader import LoadedObject, LoadProblem, Manifests, load, load_text

__all__ = ["LoadProblem", "LoadedObject", "Manifests", "dump_data", "dump_objects", "load", "load_text"]
