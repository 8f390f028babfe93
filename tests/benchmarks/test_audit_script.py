"""benchmarks/audit.py runs outside pytest; a tiny instance here shows its table is
consistent (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared_corpus import load_script

AUDIT = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "audit.py")


def test_the_generated_cluster() -> None:
    docs = AUDIT.generate(10, 2, 6)
    nodes = [d for d in docs if d["kind"] == "Node"]
    zones = [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes]
    assert (zones.count("zone-a"), zones.count("zone-b"), zones.count("zone-c")) == (4, 3, 3)
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    policies = [
        d["spec"]["template"]["spec"]["topologySpreadConstraints"][0].get("nodeTaintsPolicy")
        for d in deployments
    ]
    assert policies == [None, "Honor"]
    assert AUDIT.generate(10, 2, 6) == docs


@pytest.mark.slow  # settles and audits a small cluster with 1 and 2 processes
def test_a_tiny_run_prints_a_consistent_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--only", "generated", "--nodes", "9", "--workloads", "2", "--replicas", "6"]
    assert AUDIT.main([*argv, "--failed-nodes", "2", "--ways", "2", "1", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    for column in (
        "instance",
        "failures",
        "way",
        "settle s",
        "runs s",
        "total s",
        "cpu s",
        "speed-up",
        "control",
    ):
        assert column in out
    rows = [
        [c.strip() for c in line.strip("│ ").split("│")] for line in out.splitlines() if line.startswith("│")
    ]
    assert [(r[0], r[3], r[4]) for r in rows] == [  # 1 process first: the reference
        ("9x12 zones", "3", "1 process"),
        ("9x12 zones", "3", "2 processes"),
        ("9x12 hostnames", "2", "1 process"),
        ("9x12 hostnames", "2", "2 processes"),
    ]
    for r in rows:
        assert (r[1], r[2]) == ("9", "12")
        assert all(re.fullmatch(r"\d+\.\d\d", c) for c in r[5:9])
        assert re.fullmatch(r"\d+\.\d-\d+\.\d", r[11])
    for one, two in ((rows[0], rows[1]), (rows[2], rows[3])):
        assert (one[9], one[10]) == ("", "")
        assert re.fullmatch(r"\d+\.\d\dx", two[9])
        assert re.fullmatch(r"\d+\.\d\dx", two[10])


@pytest.mark.slow  # settles and audits a small cluster on a Dask LocalCluster
def test_keys_and_the_dask_way(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed", reason="Dask distributed is not installed (kubespread[audit-dask])")
    import cloudpickle

    cloudpickle.register_pickle_by_value(AUDIT)  # the workers cannot import the script by name
    argv = ["--only", "generated", "--nodes", "9", "--workloads", "2", "--replicas", "6", "--keys", "zone"]
    assert AUDIT.main([*argv, "--ways", "dask", "--repeat", "1"]) == 0
    rows = [
        [c.strip() for c in line.strip("│ ").split("│")]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("│")
    ]
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("9x12 zones", "3", "1 process"),
        ("9x12 zones", "3", "Dask, 2 workers"),
    ]
    assert float(rows[1][8]) > 0  # the workers' and their helper's CPU counted
