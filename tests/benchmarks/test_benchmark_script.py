"""benchmarks/run.py reads its workloads and kube-scheduler's figures from ../shared/bench's
README and checks placements; its parts are tested here on a tiny input (no timing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared_corpus import SHARED, load_script

RUN = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "run.py")


def test_reads_the_five_reference_workloads() -> None:
    workloads = {w.name: w for w in RUN.reference_workloads(SHARED / "bench")}
    assert list(workloads) == ["spread", "spread10k", "anti", "pref", "mixed"]
    assert workloads["spread10k"].gen_args == ("spread", "--existing", "10000")
    assert workloads["mixed"].gen_args == ("mixed", "--existing", "5000")
    assert workloads["spread"].kube_pods_per_second == 100
    assert all(w.expected is not None and w.expected.exists() for w in workloads.values())


@pytest.mark.slow
def test_generates_into_the_cache_and_compares_placements(tmp_path: Path) -> None:
    args = ("anti-affinity", "--nodes", "6", "--zones", "2", "--pods", "4")
    path = RUN.generate(SHARED / "bench", tmp_path, args)
    assert path.parent == tmp_path and json.loads(path.read_text())["mode"] == "sequence"
    assert RUN.generate(SHARED / "bench", tmp_path, args) == path  # cached, not regenerated
    right = tmp_path / "right.json"
    right.write_text(json.dumps({f"default/bench-{i:05d}": f"node-{i:05d}" for i in range(4)}))
    measured = RUN.measure(path, 2, right, tmp_path)
    assert len(measured.runs) == 2 and measured.identical is True
    assert all(r["scheduled"] == 4 for r in measured.runs)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({f"default/bench-{i:05d}": "node-00005" for i in range(4)}))
    assert RUN.measure(path, 1, wrong, tmp_path).identical is False


@pytest.mark.slow
def test_timed_and_untimed_runs_alternate_into_the_overhead_and_by_plugin_tables(tmp_path: Path) -> None:
    args = ("spread", "--nodes", "8", "--zones", "2", "--pods", "6")
    path = RUN.generate(SHARED / "bench", tmp_path, args)
    m = RUN.measure(path, 2, None, tmp_path, untimed=True)
    assert [r["timed"] for r in m.runs] == [True, True] and [r["timed"] for r in m.untimed] == [False, False]
    assert all("byPlugin" in r for r in m.runs) and not any("byPlugin" in r for r in m.untimed)
    assert len(m.overheads()) == 2
    assert m.paired is not None and set(m.paired["overhead"]) >= {"percent", "medianPercent"}
    w = RUN.Workload("tiny", args, 100.0, None)
    console = RUN.Console(width=200, record=True)
    console.print(RUN.overhead_table([w], {"tiny": m}, 2))
    console.print(RUN.by_plugin_table([w], {"tiny": m}))
    text = console.export_text()
    assert "overhead" in text and "tiny" in text
    assert "PodTopologySpread" in text and "plugins" in text and "in no row" in text
