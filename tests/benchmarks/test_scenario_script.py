"""benchmarks/scenario.py runs outside pytest; a tiny instance here shows its tables have
their columns and phases and its scenario does what it says (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from shared_corpus import load_script

SCENARIO = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "scenario.py")


def test_the_generated_scenario_fails_the_first_zone(tmp_path: Path) -> None:
    size = SCENARIO.Size(nodes=20, zones=4, deployments=2, replicas=3)
    path = SCENARIO.scenario_files(size, tmp_path)
    doc = yaml.safe_load(path.read_text())
    steps = doc["steps"]
    assert steps[:2] == [{"apply": "create.yaml"}, {"apply": "rollout.yaml"}]
    assert steps[2:] == [
        {"node": {"selector": "topology.kubernetes.io/zone=zone-00", "action": "fail"}},
        {"advance": "6m"},
    ]
    zone_of = {
        n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
        for n in yaml.safe_load_all((tmp_path / "nodes.yaml").read_text())
    }
    assert [n for n, z in zone_of.items() if z == "zone-00"] == [f"node-{i:05d}" for i in range(0, 20, 4)]
    per_node = yaml.safe_load(SCENARIO.scenario_files(size, tmp_path, per_node=True).read_text())["steps"]
    assert [s["node"]["name"] for s in per_node if "node" in s] == [f"node-{i:05d}" for i in range(0, 20, 4)]
    deployments = list(yaml.safe_load_all((tmp_path / "rollout.yaml").read_text()))
    assert [d["metadata"]["name"] for d in deployments] == ["app-00", "app-01"]
    assert {d["spec"]["template"]["spec"]["containers"][0]["image"] for d in deployments} == {"app:2"}


@pytest.mark.slow  # simulates a small scenario and every bundled example
def test_a_tiny_run_prints_its_tables(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--nodes", "20", "--zones", "4", "--deployments", "2", "--replicas", "4"]
    assert SCENARIO.main(argv) == 0
    out = capsys.readouterr().out
    for column in ("phase", "seconds", "pods placed", "pods/s", "example", "command"):
        assert column in out
    rows = {
        cells[0]: cells[1:]
        for line in out.splitlines()
        if "│" in line and (cells := [c.strip() for c in line.strip("│ ").split("│")])
    }
    # 8 created, 8 rolled out (surge pods included), the zone's pods replaced
    assert rows["create"][1] == "8" and rows["rollout"][1] == "8"
    assert int(rows["total"][1].replace(",", "")) >= 16
    assert all(re.fullmatch(r"\d+\.\d\d", rows[p][0]) for p in ("create", "rollout", "zone failure", "total"))
    assert rows["snapshot + checkout"][0] == "schedule"
    assert rows["zone-failure"][0] == "simulate"
    assert "peak memory" in out


@pytest.mark.slow  # loads a small cluster of running pods three times
def test_the_scaling_table_has_a_row_per_size(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "--only",
        "scaling",
        "--scaling-nodes",
        "10",
        "--scaling-pods",
        "300",
        "--scaling-running",
        "10,50",
    ]
    assert SCENARIO.main(argv) == 0
    out = capsys.readouterr().out
    for column in ("running pods", "ms/pod", "command s", "MiB after load", "peak MiB"):
        assert column in out
    assert re.search(r"│\s+10 │", out) and re.search(r"│\s+50 │", out)


@pytest.mark.slow  # runs schedule and simulate as commands on a tiny cluster
def test_the_memory_table_shows_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--only", "memory", "--memory-nodes", "8", "--memory-running", "40", "--memory-pods", "4"]
    assert SCENARIO.main(argv) == 0
    out = capsys.readouterr().out
    for column in ("command", "seconds", "peak MiB", "exit"):
        assert column in out
    for command in ("schedule", "simulate"):
        row = next(line for line in out.splitlines() if f"│ {command}" in line)
        cells = [c.strip() for c in row.strip("│ ").split("│")]
        assert cells[0] == command and cells[-1] == "0"  # the command succeeded
        assert float(cells[2]) > 0


@pytest.mark.slow  # simulates a small scenario under the profiler
def test_profile_prints_each_phases_costliest_functions(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--only", "scenario", "--nodes", "12", "--zones", "3", "--deployments", "1", "--replicas", "3"]
    assert SCENARIO.main([*argv, "--profile", "4"]) == 0
    out = capsys.readouterr().out
    for phase in ("load + settle", "create", "rollout", "zone failure", "output"):
        assert f"profile of {phase}, by tottime" in out
        assert f"profile of {phase}, by cumulative" in out
    # the create phase's profile holds the scheduling cycle, the rollout's too
    create = out[out.index("profile of create, by cumulative") : out.index("profile of rollout, by tottime")]
    assert "run_step" in create
