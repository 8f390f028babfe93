"""benchmarks/preemption.py runs outside pytest; a tiny instance here shows what it measures
is what it says (no timing asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_corpus import load_script

PREEMPTION = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "preemption.py")


def test_a_tiny_run_preempts_then_finds_no_victims(capsys: pytest.CaptureFixture[str]) -> None:
    PREEMPTION.main(["--nodes", "20", "--victims", "3", "--runs", "2"])
    lines = capsys.readouterr().out.splitlines()
    victims = next(line for line in lines if line.startswith("victims"))
    none = next(line for line in lines if line.startswith("no lower priority"))
    # every node is full of priority-0 pods of 1 CPU: one goes, on the first node
    assert victims.endswith("nominated node-00000 (1 victims)")
    assert none.endswith("0/20 nodes are available: 20 No preemption victims found for incoming pod.")
