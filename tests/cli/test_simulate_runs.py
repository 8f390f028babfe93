"""``kubespread simulate SCENARIO --runs N [--seed S]``: the scenario replayed N times with the
scheduler's ties drawn at random; per step the spread of outcomes, a verdict, the first run
for --dump and --report."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app

ZONE = "topology.kubernetes.io/zone"


def nodes() -> str:
    """3 zones x 2 identical nodes."""
    return "---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: {z}{i}, labels: "
        f"{{kubernetes.io/hostname: {z}{i}, {ZONE}: zone-{z}}}}}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
        for z in "abc"
        for i in (1, 2)
    )


def scenario(tmp_path: Path, replicas: int, *, zone_spread: bool = False) -> Path:
    """A Deployment of ``replicas`` on ``nodes()``; with ``zone_spread`` a DoNotSchedule zone
    spread (maxSkew 1)."""
    (tmp_path / "nodes.yaml").write_text(nodes())
    path = tmp_path / "s.yaml"
    spread = (
        f", topologySpreadConstraints: [{{maxSkew: 1, topologyKey: {ZONE}, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]"
        if zone_spread
        else ""
    )
    path.write_text(
        textwrap.dedent(f"""\
        apiVersion: kubespread.io/v1alpha1
        kind: Scenario
        metadata: {{name: ties}}
        seed: 3
        cluster: [nodes.yaml]
        steps:
        - apply:
            apiVersion: apps/v1
            kind: Deployment
            metadata: {{name: web}}
            spec:
              replicas: {replicas}
              selector: {{matchLabels: {{app: web}}}}
              template:
                metadata: {{labels: {{app: web}}}}
                spec: {{containers: [{{name: c, image: nginx}}]{spread}}}
        """)
    )
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["simulate", *args, "--no-progress"])
    return result.exit_code, result.stdout, result.stderr


def zone_counts(step: dict[str, Any]) -> dict[str, dict[str, int | float]]:
    (row,) = [r for r in step["distribution"] if r["topologyKey"] == ZONE]
    return row["domains"]


def test_a_tie_across_zones_differs_between_runs(tmp_path: Path) -> None:
    code, out, err = run(str(scenario(tmp_path, 1)), "--runs", "8", "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["scenario"], doc["seed"], doc["runs"]) == ("ties", 3, 8)
    assert doc["seeds"] == list(range(3, 11))
    initial, applied = doc["steps"]
    assert initial["verdict"] == "identical in every run"
    assert any(c["max"] > c["min"] for c in zone_counts(applied).values())
    assert applied["verdict"].startswith("differs between runs")
    assert applied["identical"] is False
    assert applied["pending"] == {"min": 0, "median": 0, "max": 0}


def test_a_do_not_schedule_zone_spread_is_one_per_zone_in_every_run(tmp_path: Path) -> None:
    code, out, err = run(str(scenario(tmp_path, 3, zone_spread=True)), "--runs", "8", "-o", "yaml")
    assert code == 0, err
    applied = yaml.safe_load(out)["steps"][1]
    one = {"min": 1, "median": 1, "max": 1}
    assert zone_counts(applied) == {"zone-a": one, "zone-b": one, "zone-c": one}
    assert applied["countsIdentical"] is True


def test_the_table_shows_each_domain_and_the_verdict(tmp_path: Path) -> None:
    code, out, _ = run(str(scenario(tmp_path, 1)), "--runs", "8")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "ties (8 runs, ties drawn at random, seeds 3-10)"
    zone_a = next(line.split() for line in lines if line.split()[1:3] == ["zone", "zone-a"])
    assert zone_a[0].startswith("rs/web-") and len(zone_a) == 6  # controller key domain min median max
    header = next(line for line in lines if line.startswith("controller"))
    assert header.split() == ["controller", "key", "domain", "min", "median", "max"]
    assert "  identical in every run" in lines
    assert any(line.startswith("  differs between runs: ") for line in lines)
    assert lines[-1] == "differs between runs at: step 1"


def test_the_same_runs_and_seed_twice_give_the_same_output(tmp_path: Path) -> None:
    path = str(scenario(tmp_path, 2))
    for form in ("table", "json"):
        first = run(path, "--runs", "5", "--seed", "40", "-o", form)
        assert first[0] == 0
        assert run(path, "--runs", "5", "--seed", "40", "-o", form) == first
    other = run(path, "--runs", "5", "--seed", "41", "-o", "json")[1]
    assert json.loads(other)["seeds"] == [41, 42, 43, 44, 45]


def test_runs_must_be_at_least_one_and_seed_needs_runs(tmp_path: Path) -> None:
    path = str(scenario(tmp_path, 1))
    for bad in ("0", "-1"):
        code, out, err = run(path, "--runs", bad)
        assert code == 2
        assert "Invalid value for '--runs': must be at least 1" in " ".join(err.split())
        assert "Traceback" not in out + err
    code, _, err = run(path, "--seed", "4")
    assert code == 2
    assert "error: --seed: only with --runs" in err


def test_without_runs_nothing_changes(tmp_path: Path) -> None:
    code, out, _ = run(str(scenario(tmp_path, 1)))
    assert code == 0
    assert out.splitlines()[0] == "ties (seed 3)"
    assert "differs between runs" not in out


def test_dump_writes_the_first_run(tmp_path: Path) -> None:
    path = scenario(tmp_path, 1)
    dump = tmp_path / "final.yaml"
    code, out, err = run(str(path), "--runs", "3", "--seed", "7", "--dump", str(dump), "-o", "json")
    assert code == 0, err
    assert f"dump: {dump} (run 1 of 3, seed 7)" in err
    assert "kind: Pod" in dump.read_text()
    assert json.loads(out)["runs"] == 3


@pytest.mark.slow  # renders the report's pictures
def test_report_shows_the_first_run(tmp_path: Path) -> None:
    path = scenario(tmp_path, 1)
    code, _, err = run(str(path), "--runs", "2", "--report", str(tmp_path / "report"))
    assert code == 0, err
    assert f"report: {tmp_path / 'report' / 'report.html'} (run 1 of 2, seed 3)" in err
    assert "seed 3" in (tmp_path / "report" / "report.html").read_text()
