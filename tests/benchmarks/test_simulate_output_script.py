"""benchmarks/simulate_output.py runs outside pytest; a tiny instance here shows it writes
both forms and that the delta form is the smaller (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared_corpus import load_script

SCRIPT = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "simulate_output.py")


def test_a_tiny_run_measures_both_forms(capsys: pytest.CaptureFixture[str]) -> None:
    assert SCRIPT.main(["--nodes", "6", "--zones", "3", "--deployments", "2", "--replicas", "6"]) == 0
    out = capsys.readouterr().out
    assert "6 nodes, 2 x 6 replicas, 5 steps" in out
    sizes = {form: int(n.replace(",", "")) for form, n in re.findall(r"(delta|full):.*\(([\d,]+) bytes", out)}
    assert set(sizes) == {"delta", "full"}
    assert sizes["delta"] < sizes["full"]
