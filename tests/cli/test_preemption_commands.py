"""Preemption in every command, on the bundled example (examples/preemption/,
examples/scenarios/preemption.yaml): ``schedule`` and ``explain`` show the nominated node,
the victims (priority, node, PDB) and why that node won; ``simulate`` shows the victims
evicted by preemption and the preemptor running after them; ``-o json`` carries the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubespread.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INPUT = [
    "-f",
    str(EXAMPLES / "scenarios" / "nodes-3-zones-1-node.yaml"),
    "-f",
    str(EXAMPLES / "preemption" / "batch.yaml"),
    "-f",
    str(EXAMPLES / "preemption" / "critical.yaml"),
]


def run(*args: str, terminal: bool = False) -> str:
    """``terminal``: as on an 80-column terminal (TTY_COMPATIBLE), where tables fold to fit."""
    env = {"COLUMNS": "80", "TTY_COMPATIBLE": "1" if terminal else "0"}
    result = CliRunner().invoke(app, [*args, "--no-progress"], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def check_entry(entry: dict[str, Any]) -> None:
    assert set(entry) >= {"pod", "nominatedNode", "victims", "pdbViolations", "reason"}
    assert entry["pod"].startswith("default/payments-")
    assert entry["pdbViolations"] == 0 and entry["reason"]
    (victim,) = entry["victims"]
    assert set(victim) == {"name", "namespace", "priority", "node", "pdb"}
    assert victim["name"].startswith("batch-") and victim["namespace"] == "default"
    assert victim["priority"] == 0 and victim["node"] == entry["nominatedNode"] and victim["pdb"] is None


def test_schedule_shows_the_victims_on_the_bundled_example() -> None:
    stdout = run("schedule", *INPUT, terminal=True)
    assert "placed 9 pod(s), 3 pending, 3 preempted" in stdout
    assert stdout.count(" (preempted) ") == 3
    assert "preempted (victims deleted gracefully; the preemptor waits nominated)" in stdout
    for node in ("a1", "b1", "c1"):
        assert f"-> {node} (at 0s, running on {node} at " in stdout
        assert f"(priority 0, on {node})" in stdout
    assert stdout.count("evicts batch-") == 3
    assert "why " in stdout
    assert all(len(line) <= 80 for line in stdout.splitlines())


def test_schedule_json_carries_the_preemptions() -> None:
    doc = json.loads(run("schedule", *INPUT, "-o", "json"))
    assert len(doc["preemptions"]) == 3
    for entry in doc["preemptions"]:
        check_entry(entry)
        assert entry["scheduledNode"] == entry["nominatedNode"] and entry["scheduledAt"] >= 30
    running = {p["name"]: p["node"] for p in doc["placements"] if p["name"].startswith("payments-")}
    assert {f"default/{n}": node for n, node in running.items()} == {
        e["pod"]: e["nominatedNode"] for e in doc["preemptions"]
    }
    step = doc["steps"][-1]  # the payments Deployment's step
    assert len(step["preemptions"]) == 3
    assert [e["reason"] for e in step["evictions"]] == ["Preempted"] * 3


def test_explain_shows_the_preemption_of_that_pod() -> None:
    doc = json.loads(run("schedule", *INPUT, "-o", "json"))
    entry = doc["preemptions"][0]
    stdout = run("explain", entry["pod"], *INPUT)
    victim = entry["victims"][0]["name"]
    assert f"evicts {victim} (priority 0, on {entry['nominatedNode']})" in stdout
    assert f"-> {entry['nominatedNode']} (at 0s, running on {entry['nominatedNode']}" in stdout
    explained = json.loads(run("explain", entry["pod"], *INPUT, "-o", "json"))
    assert explained["preemptions"] == [entry]


def test_simulate_shows_the_preemptors_running_after_their_victims() -> None:
    doc = json.loads(run("simulate", str(EXAMPLES / "scenarios" / "preemption.yaml"), "-o", "json"))
    applied = doc["steps"][1]
    assert len(applied["preemptions"]) == 3
    for entry in applied["preemptions"]:
        check_entry(entry)
        victim = entry["victims"][0]["name"]
        (evicted,) = [e for e in applied["evictions"] if e["object"]["name"] == victim]
        assert evicted["reason"] == "Preempted"
        assert evicted["message"].startswith("Preempted by pod ") and evicted["message"].endswith(
            f" on node {entry['nominatedNode']}"
        )
        assert entry["scheduledAt"] >= evicted["time"] + 30  # its terminationGracePeriodSeconds
    final = {p["name"]: p for p in doc["final"]["pods"]}
    for entry in applied["preemptions"]:
        pod = final[entry["pod"].split("/")[1]]
        assert pod["node"] == entry["nominatedNode"] and pod["phase"] == "Running"
    pdb = doc["final"]["podDisruptionBudgets"][0]
    assert pdb["disruptionsAllowed"] == 0 and pdb["currentHealthy"] == pdb["desiredHealthy"]
    stdout = run("simulate", str(EXAMPLES / "scenarios" / "preemption.yaml"))
    assert "preempted (victims deleted gracefully" in stdout and stdout.count("evicts batch-") == 3


def test_the_report_shows_who_was_evicted_where(tmp_path: Path) -> None:
    run("simulate", str(EXAMPLES / "scenarios" / "preemption.yaml"), "--report", str(tmp_path))
    page = (tmp_path / "report.html").read_text()
    section = page[page.index("<h2>Evictions</h2>") :]
    section = section[: section.index("</section>")]
    assert "<h3>Preempted</h3>" in section
    for node in ("a1", "b1", "c1"):
        assert f"<td>{node}</td>" in section and f"{node} at 3" in section
    assert section.count("batch-") == 3 and section.count("payments-") == 3
