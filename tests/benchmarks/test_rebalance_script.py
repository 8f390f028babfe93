"""benchmarks/rebalance.py runs outside pytest; a tiny instance here shows its table is
consistent (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from shared_corpus import load_script

REBALANCE = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "rebalance.py")


def test_the_generated_scenario(tmp_path: Path) -> None:
    doc = yaml.safe_load(REBALANCE.write_scale(tmp_path, 9, 2, 6).read_text())
    deployments, nodes = doc["steps"][0]["apply"], doc["steps"][1]["apply"]
    assert [d["spec"]["replicas"] for d in deployments] == [6, 6]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == ["zone-c"] * 3
    tainted = [n for n in yaml.safe_load_all((tmp_path / "nodes.yaml").read_text()) if n.get("spec")]
    assert len(tainted) == 3  # zone c starts tainted, the second step lifts it


@pytest.mark.slow  # runs kubespread simulate and rebalance in subprocesses
def test_a_tiny_run_prints_a_consistent_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert REBALANCE.main(["--only", "scale", "--nodes", "9", "--workloads", "2", "--replicas", "6"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "│" in line and re.search(r"│\s+9\s+│", line))
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    nodes, pods, workloads, evictions, waves, proven, balanced = cells[:7]
    # each Deployment runs 3/3/0 over the zones: one pod of each of zone a and b moves to c
    assert (nodes, pods, workloads, evictions, waves, proven, balanced) == (
        "9",
        "12",
        "2",
        "4",
        "1",
        "yes",
        "yes",
    )
    assert all(re.fullmatch(r"\d+\.\d", c) for c in cells[7:])
