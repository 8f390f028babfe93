"""``simulate`` and ``schedule`` print the same skew for the same pods.

The zone-failure example (examples/scenarios/zone-failure.yaml) is run with ``simulate``, once
stopped while zone-c is down (after ``advance 5m``: the evicted pods' replacements pending)
and once to the end; the cluster it leaves is dumped as a kubectl dump would be and given to
``schedule``, which takes it as it is. Both commands' rows per (workload, constraint) must be
equal, and where the scheduler's skew and the raw one differ (the Honor Deployment with its
failed zone left out) both tables show both numbers, each in its named column."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.cluster.state import OBJECT_KINDS
from kubespread.io.dump import dump_objects
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--no-progress"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def scenario_until(tmp_path: Path, steps: int | None) -> Path:
    """zone-failure.yaml with only its first ``steps`` steps (all when None), paths made absolute."""
    doc = yaml.safe_load((SCENARIOS / "zone-failure.yaml").read_text())
    doc["cluster"] = [str(SCENARIOS / c) for c in doc["cluster"]]
    doc["steps"] = [
        {"apply": str(SCENARIOS / s["apply"])} if "apply" in s else s for s in doc["steps"][:steps]
    ]
    path = tmp_path / "zone-failure.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def dump_of(scenario: Path, tmp_path: Path) -> tuple[Path, list[tuple[str, str | None]]]:
    """The cluster the scenario leaves (same scenario and seed as the CLI run: the same
    history), as a kubectl dump: nodes with their taints and conditions, workloads, and every
    pod with its node, uid and deletionTimestamp. Also (pod, node) for each pod."""
    cluster = simulate(load_scenario(scenario)).sim.cluster  # type: ignore[union-attr]
    objects: list[Any] = [*cluster.namespaces.values(), *cluster.nodes.values()]
    for kind in OBJECT_KINDS:
        objects += cluster.objects(kind.KIND).values()
    objects += cluster.pods.values()
    path = tmp_path / "dump.yaml"
    path.write_text(dump_objects(objects))
    return path, sorted((p.metadata.name, p.spec.node_name or None) for p in cluster.pods.values())


def by_constraint(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    out = {}
    for r in rows:
        key = (r["workload"]["name"], r["topologyKey"], r["maxSkew"], r["whenUnsatisfiable"])
        assert key not in out
        out[key] = r
    return out


def table_rows(text: str, header: str) -> dict[str, str]:
    """The spread table under the last line starting with ``header``: first cell -> line."""
    lines = text.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith(header))
    rows = {}
    for line in lines[start + 1 :]:
        if not line.strip() or line.startswith(("  ", "(d=n)", "raw:")):
            break
        rows[line.split()[0]] = line
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("steps", [4, None], ids=["zone-c-down", "to-the-end"])
def test_simulate_and_schedule_count_the_same_skew(tmp_path: Path, steps: int | None) -> None:
    scenario = scenario_until(tmp_path, steps)
    simulated = json.loads(cli("simulate", str(scenario), "-o", "json"))["final"]
    dump, pods = dump_of(scenario, tmp_path)
    assert sorted((p["name"], p["node"]) for p in simulated["pods"]) == pods  # the same state
    scheduled = json.loads(cli("schedule", "-f", str(dump), "-o", "json"))
    assert scheduled["placements"] == []  # nothing new, nothing fits: the cluster as it was

    sim_rows = by_constraint(simulated["distribution"])
    assert len(sim_rows) == 3
    # schedule's spread (every workload: the input created nothing) and its distribution
    assert by_constraint(scheduled["spread"]) == sim_rows
    assert by_constraint(scheduled["distribution"]) == sim_rows

    skews = {k[0].rsplit("-", 1)[0]: (r["skew"], r["rawSkew"]) for k, r in sim_rows.items()}
    if steps == 4:
        # Honor leaves the failed zone out: skew 0 as the scheduler counts it, 3 raw (3/3/0);
        # minDomains 3 over the two zones left takes the minimum as 0; strict counts zone-c's 0
        assert skews == {"honor": (0, 3), "min-domains": (2, 2), "strict": (2, 2)}
        honor = next(r for k, r in sim_rows.items() if k[0].startswith("honor-"))
        assert honor["domains"] == {"zone-a": 3, "zone-b": 3}
        assert honor["rawDomains"] == {"zone-a": 3, "zone-b": 3, "zone-c": 0}
        assert honor["leftOutDomains"] == ["zone-c"] and honor["withinMaxSkew"]
    else:
        # zone-c is back and counts again: honor's 3/3/0 is over maxSkew both ways
        assert skews == {"honor": (3, 3), "min-domains": (0, 0), "strict": (0, 0)}

    # the tables: the same numbers, the raw one in its own named column where it differs
    sim_table = table_rows(cli("simulate", str(scenario)), "controller")
    sched_table = table_rows(cli("schedule", "-f", str(dump)), "workload")
    assert len(sim_table) == len(sched_table) == 3
    for name, (skew, raw) in skews.items():
        sim_line = next(line for label, line in sim_table.items() if label.startswith(f"rs/{name}-"))
        sched_line = sched_table[f"deploy/{name}"]
        want = rf"\s{skew}/1(?: over)?" + (rf"\s+{raw}$" if steps == 4 else "$")
        assert re.search(want, sim_line), sim_line
        assert re.search(want, sched_line), sched_line


@pytest.mark.slow
def test_the_failed_zone_is_shown_with_both_numbers_named(tmp_path: Path) -> None:
    scenario = scenario_until(tmp_path, 4)
    dump, _ = dump_of(scenario, tmp_path)
    for text, header in (
        (cli("simulate", str(scenario)), "controller"),
        (cli("schedule", "-f", str(dump)), "workload"),
    ):
        lines = text.splitlines()
        head = next(line for line in reversed(lines) if line.startswith(header))
        assert head.split()[-2:] == ["skew", "raw"]
        honor = next(line for line in table_rows(text, header).values() if "honor" in line.split()[0])
        assert honor.split()[2:] == ["zone-a=3", "zone-b=3", "(zone-c=0)", "0/1", "3"]
        assert "raw: the workload's own running pods, max - min over every domain of the key" in lines
        assert "(d=n): domain d left out by nodeAffinityPolicy/nodeTaintsPolicy; n: own pods" in lines
        table = [head, *table_rows(text, header).values()]
        assert max(len(line) for line in table) <= 80
