"""benchmarks/rollout.py runs outside pytest; a tiny instance here shows its table has a
create and a rollout row per size, with the pods each placed (no timing asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_corpus import load_script

ROLLOUT = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "rollout.py")


@pytest.mark.slow  # simulates two tiny scenarios
def test_a_tiny_run_prints_create_and_rollout_per_size(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--nodes", "20", "--zones", "4", "--deployments", "2", "--replicas", "3", "6", "--runs", "1"]
    assert ROLLOUT.main(argv) == 0
    out = capsys.readouterr().out
    for column in ("replicas each", "phase", "CPU s", "pods/s CPU", "CPU µs/pod"):
        assert column in out
    cells = [[c.strip() for c in line.strip("│ ").split("│")] for line in out.splitlines() if "│" in line]
    rows = [c for c in cells if len(c) > 2 and c[1] in ("create", "rollout")]
    # every replica is created, then replaced once by the rollout
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("3", "create", "6"),
        ("3", "rollout", "6"),
        ("6", "create", "12"),
        ("6", "rollout", "12"),
    ]
    assert "load" in out
