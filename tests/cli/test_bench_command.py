"""``kubespread bench``: the same placements as ``evaluate``'s sequence mode, counts that add
up, the placements and profile files, and one-line errors. No timing is asserted."""

from __future__ import annotations

import json
import pstats
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from builders import make_node, make_pod
from kubespread.cli.app import app
from kubespread.harness.evaluate import evaluate
from shared_corpus import SHARED

runner = CliRunner()
GEN = SHARED / "bench" / "gen.py"


def _generated(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "input.json"
    subprocess.run([sys.executable, str(GEN), *args, "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize(
    "args",
    [
        ("spread", "--nodes", "12", "--zones", "3", "--pods", "40"),
        ("anti-affinity", "--nodes", "10", "--zones", "2", "--pods", "14", "--existing", "6"),
        ("mixed", "--nodes", "15", "--zones", "3", "--pods", "30", "--existing", "20"),
    ],
)
@pytest.mark.slow
def test_placements_are_evaluates_sequence_answers(tmp_path: Path, args: tuple[str, ...]) -> None:
    path = _generated(tmp_path, *args)
    placements = tmp_path / "placements.json"
    result = runner.invoke(app, ["bench", str(path), "--placements", str(placements)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    answers = evaluate(json.loads(path.read_text()))["results"]
    want = {a["pod"]: a.get("selectedNode") for a in answers}
    assert json.loads(placements.read_text()) == want
    doc = json.loads(path.read_text())
    assert out["scheduled"] == sum(v is not None for v in want.values())
    assert out["unschedulable"] == sum(v is None for v in want.values())
    assert out["nodes"] == len(doc["nodes"]) and out["existingPods"] == len(doc["pods"])
    # wallSeconds is rounded to 4 decimals and podsPerSecond to 1: a run of a few ms moves the
    # quotient by over 1%, so the check is against the range the rounded wall time allows
    wall = out["wallSeconds"]
    fastest, slowest = len(want) / max(wall - 5e-5, 1e-9), len(want) / (wall + 5e-5)
    assert slowest - 0.05 <= out["podsPerSecond"] <= fastest + 0.05
    assert out["ruMaxrssKiB"] > 0 and out["loadSeconds"] > 0


@pytest.mark.slow
def test_anti_affinity_beyond_the_node_count_leaves_pods_unschedulable(tmp_path: Path) -> None:
    path = _generated(tmp_path, "anti-affinity", "--nodes", "5", "--zones", "1", "--pods", "8")
    placements = tmp_path / "p.json"
    result = runner.invoke(app, ["bench", str(path), "--placements", str(placements)])
    out = json.loads(result.stdout)
    assert (out["scheduled"], out["unschedulable"]) == (5, 3)
    got = json.loads(placements.read_text())
    assert sorted(v for v in got.values() if v) == [f"node-{i:05d}" for i in range(5)]
    assert [k for k, v in got.items() if v is None] == [f"default/bench-{i:05d}" for i in (5, 6, 7)]


@pytest.mark.slow
def test_profile_out_holds_the_scheduling_cycles(tmp_path: Path) -> None:
    path = _generated(tmp_path, "spread", "--nodes", "6", "--zones", "2", "--pods", "5")
    prof = tmp_path / "cycles.prof"
    result = runner.invoke(app, ["bench", str(path), "--profile-out", str(prof)])
    assert result.exit_code == 0, result.output
    functions = {name for (_, _, name) in pstats.Stats(str(prof)).stats}  # type: ignore[attr-defined]
    assert "schedule_one" in functions
    assert "build_cluster" not in functions  # loading is outside the profile


def _write(tmp_path: Path, doc: object) -> Path:
    p = tmp_path / "in.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{nope", "not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ({"mode": "later"}, "mode: must be one of evaluate, sequence, got 'later'"),
        (
            {"nodes": [make_node("a").dict()], "incoming": [{"metadata": {"name": 5}}]},
            "incoming[0].metadata.name: cannot unmarshal number into a string field",
        ),
        (
            {"pods": [make_pod("x").node("ghost").dict()]},
            'pods[0]: pod "default/x" is bound to node "ghost", which does not exist',
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, doc: object, message: str) -> None:
    path = _write(tmp_path, doc)
    result = runner.invoke(app, ["bench", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: {path}: {message}\n"


def test_missing_input_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'nope.json'}: No such file or directory\n"


def _spread_input(tmp_path: Path) -> Path:
    """40 nodes in 4 zones, 20 pods with a zone spread: every pod scored."""
    nodes = [make_node(f"n{i:02d}").zone("abcd"[i % 4]).capacity(cpu="4").dict() for i in range(40)]
    web = {"matchLabels": {"app": "web"}}
    zone = "topology.kubernetes.io/zone"
    pod = make_pod("web").labels(app="web").req(cpu="100m").spread(1, zone, selector=web).dict()
    incoming = [{**pod, "metadata": {**pod["metadata"], "name": f"web-{i}"}} for i in range(20)]
    return _write(tmp_path, {"mode": "sequence", "nodes": nodes, "pods": [], "incoming": incoming})


def test_by_plugin_json_adds_up_and_the_default_output_stays_one_object(tmp_path: Path) -> None:
    path = _spread_input(tmp_path)
    plain = runner.invoke(app, ["bench", str(path)])
    assert plain.exit_code == 0, plain.output
    assert len(plain.stdout.splitlines()) == 1 and "byPlugin" not in json.loads(plain.stdout)
    result = runner.invoke(app, ["bench", str(path), "--by-plugin"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["timed"] and out["scheduled"] == 20
    by = out["byPlugin"]
    rows = by["rows"]
    keys = {(r["extensionPoint"], r["plugin"]) for r in rows}
    assert {
        ("Filter", "PodTopologySpread"),
        ("Score", "NodeResourcesFit"),
        ("Snapshot", "(framework)"),
    } <= keys
    plugins = [r for r in rows if not r["framework"]]
    assert sum(r["microseconds"] for r in plugins) == pytest.approx(
        by["pluginMicroseconds"], abs=0.1 * len(rows)
    )
    parts = by["pluginMicroseconds"] + by["frameworkMicroseconds"] + by["otherMicroseconds"]
    assert parts == pytest.approx(by["cycleMicroseconds"], abs=0.3)
    for r in rows:
        assert r["microsecondsPerPod"] == pytest.approx(r["microseconds"] / 20, abs=0.01)
        assert r["share"] == pytest.approx(r["microseconds"] / by["cycleMicroseconds"], abs=1e-4)
    # the cycles' timings are inside the measured wall time
    assert by["cycleMicroseconds"] <= out["wallSeconds"] * 1e6


def test_no_timings_reads_no_clock_and_by_plugin_needs_it(tmp_path: Path) -> None:
    path = _spread_input(tmp_path)
    placements = tmp_path / "p.json", tmp_path / "q.json"
    timed = runner.invoke(app, ["bench", str(path), "--placements", str(placements[0])])
    untimed = runner.invoke(app, ["bench", str(path), "--no-timings", "--placements", str(placements[1])])
    assert untimed.exit_code == 0, untimed.output
    assert json.loads(untimed.stdout)["timed"] is False and json.loads(timed.stdout)["timed"] is True
    assert placements[0].read_text() == placements[1].read_text()
    both = runner.invoke(app, ["bench", str(path), "--no-timings", "--by-plugin"])
    assert both.exit_code == 2 and both.stderr == "error: --by-plugin needs timed cycles; drop --no-timings\n"


def test_by_plugin_table(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", str(_spread_input(tmp_path)), "--by-plugin", "-o", "table"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["pods", "scheduled", "unschedulable", "pods/s", "wall", "s", "timed"]
    assert lines[1].split()[:3] == ["20", "20", "0"] and lines[1].split()[-1] == "yes"
    header = next(i for i, line in enumerate(lines) if line.startswith("extension point"))
    assert lines[header].split() == ["extension", "point", "plugin", "µs", "µs/pod", "share", "status"]
    assert any(line.split()[:2] == ["NormalizeScore", "TaintToleration"] for line in lines[header:])
    assert lines[-1].startswith("plugins ") and " of 20 cycles' " in lines[-1]


def test_overhead_runs_each_cycle_twice_and_keeps_the_placements(tmp_path: Path) -> None:
    path = _spread_input(tmp_path)
    placements = tmp_path / "p.json", tmp_path / "q.json"
    plain = runner.invoke(app, ["bench", str(path), "--placements", str(placements[0])])
    paired = runner.invoke(app, ["bench", str(path), "--overhead", "--placements", str(placements[1])])
    assert paired.exit_code == 0, paired.output
    assert placements[0].read_text() == placements[1].read_text()
    assert "overhead" not in json.loads(plain.stdout)
    o = json.loads(paired.stdout)["overhead"]
    assert o["timedSeconds"] > 0 and o["untimedSeconds"] > 0
    # seconds are rounded to 0.1 ms, the percentage is not
    slack = 100 * 2e-4 / o["untimedSeconds"]
    assert o["percent"] == pytest.approx(100 * (o["timedSeconds"] / o["untimedSeconds"] - 1), abs=slack)
    assert isinstance(o["medianPercent"], float)
    both = runner.invoke(app, ["bench", str(path), "--no-timings", "--overhead"])
    assert both.exit_code == 2 and both.stderr == "error: --overhead needs timed cycles; drop --no-timings\n"


def test_the_first_pair_of_cycles_is_left_out_of_the_overhead() -> None:
    """The first cycle builds the plugins' caches: whichever half of the pair runs first would
    carry that once-only cost, so the sums and the per-cycle ratios start at the second pod."""
    from kubespread.harness.bench import _Paired
    from kubespread.harness.evaluate import build_cluster
    from kubespread.scheduler.config import default_profile

    nodes = [make_node(f"n{i}").zone("ab"[i % 2]).capacity(cpu="4").dict() for i in range(4)]
    cluster = build_cluster({"mode": "sequence", "nodes": nodes, "pods": []})
    pair, profile = _Paired(), default_profile()
    for i in range(3):
        decision = pair(make_pod(f"p{i}").req(cpu="100m").obj(), cluster, profile)
        assert decision.timings is not None  # the timed decision is the one kept
    assert len(pair.ratios) == 2
    assert pair.warmup_untimed_ns > 0 and pair.timed_ns > 0 and pair.untimed_ns > 0
