"""benchmarks/dump.py generates a kubectl dump; a tiny one here loads without a problem and
settles with every pod where the dump put it (no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubespread.api.fastdecode import decode_checked
from kubespread.api.kinds import class_for
from kubespread.io import load
from kubespread.sim.baseline import settle
from shared_corpus import load_script

DUMP = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "dump.py")


def test_a_tiny_dump_loads_and_settles_as_written(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    DUMP.write_dump(path, 20, 100, 5)
    manifests = load([path])
    assert [str(p) for p in manifests.problems] == []
    kinds = [lo.obj.kind for lo in manifests.objects]
    assert (
        kinds.count("Node"),
        kinds.count("Pod"),
        kinds.count("Deployment"),
        kinds.count("ReplicaSet"),
    ) == (
        20,
        100,
        5,
        5,
    )
    # what the benchmark measures is the fast way: every object of the dump takes it
    items: list[dict[str, Any]] = json.loads(path.read_text())["items"]
    assert all(decode_checked(class_for(d["apiVersion"], d["kind"]), d) is not None for d in items)
    base = settle(manifests)
    pods = base.sim.cluster.pods
    assert len(pods) == 100  # the ReplicaSets are satisfied: nothing created, nothing deleted
    written = {lo.obj.key: lo.obj.spec.node_name for lo in manifests.objects if lo.obj.kind == "Pod"}
    assert {key: pod.spec.node_name for key, pod in pods.items()} == written
