"""benchmarks/commands.py runs outside pytest; one run of one command here shows its rows are
what it says (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared_corpus import load_script

REPO = Path(__file__).resolve().parents[2]
COMMANDS = load_script(REPO / "benchmarks" / "commands.py")


@pytest.mark.slow  # runs kubespread schedule four times, each in a fresh process
def test_side_by_side_prints_both_trees_and_their_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    # the other tree is this one: both rows are measured (not one list shared by both)
    assert COMMANDS.main(["--runs", "1", "--only", "schedule", "--other", str(REPO)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.startswith("schedule ") and "other / this" not in line]
    assert [r[1] for r in rows] == ["this", "other"]
    for r in rows:
        cpu, low, high = (float(x) for x in r[2:5])
        assert 0 < low <= cpu <= high  # one run: all three the same
    (ratio,) = [line for line in lines if "other / this" in line]
    assert re.fullmatch(r"schedule\s+other / this, CPU: \d+\.\d\dx", ratio)
