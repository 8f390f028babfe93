"""benchmarks/provision.py runs outside pytest; a tiny instance here shows its generator is
seeded and its run consistent (no timing asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_corpus import load_script

PROVISION = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "provision.py")


def test_the_generator_is_seeded() -> None:
    assert PROVISION.generate(12, 2, 3, seed=1) == PROVISION.generate(12, 2, 3, seed=1)
    assert PROVISION.generate(12, 2, 3, seed=1) != PROVISION.generate(12, 2, 3, seed=2)


@pytest.mark.slow
def test_a_tiny_run_adds_what_the_replay_confirms() -> None:
    row = PROVISION.run(30, 3, 6, 10, 5.0)
    assert row["pending"] == 18  # no replica fits the existing nodes
    assert row["left"] == 0
    assert row["bound"] <= row["added"]
    assert 18 / 8 <= row["added"] <= 18  # at least the CPU asks, at most a node per pod
    assert "spot-b" not in row["by"]  # tainted: no replica tolerates it
