"""benchmarks/fuzz.py runs outside pytest; a handful of inputs here shows its table and exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_corpus import load_script

FUZZ = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz.py")


def test_a_short_run_prints_the_table_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert FUZZ.main(["--n", "6", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for column in ("inputs tried", "clean errors", "accepted", "closed", "crashes", "hangs", "RSS growth"):
        assert column in out
    assert "6 mutated inputs" in out and "webhook" in out
