"""benchmarks/capacity.py runs outside pytest; a tiny instance here shows its table is
consistent (no timing asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared_corpus import load_script

CAPACITY = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "capacity.py")


def test_the_generator_is_seeded() -> None:
    assert CAPACITY.generate(20, 3) == CAPACITY.generate(20, 3)
    assert CAPACITY.generate(20, 3) != CAPACITY.generate(20, 4)


@pytest.mark.slow  # runs ``kubespread capacity`` in a subprocess
def test_a_tiny_run_prints_a_consistent_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert CAPACITY.main(["--nodes", "20", "--runs", "1", "--seed", "20"]) == 0
    out = capsys.readouterr().out
    for column in ("instance", "nodes", "greedy placed", "optimal placed", "proven", "solve s", "total s"):
        assert column in out
    row = next(line for line in out.splitlines() if "20x20" in line and "│" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    name, nodes, found, best, proven = cells[:5]
    assert (name, nodes, proven) == ("20x20", "20", "yes")
    assert int(best) >= int(found) > 0
    assert int(best) > int(found)  # the generator strands replicas even at 20 nodes
    assert all(re.fullmatch(r"\d+\.\d\d", c) for c in cells[5:])
