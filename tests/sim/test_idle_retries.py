"""A pending pod's 5-minute retry is skipped while nothing that could change its outcome
happened (issue 18: a valid ``advance`` of years with pending pods ran for hours). Skipping
must not change what happens: every bundled scenario, and long advances around cluster
changes, end the same with and without it, FailedScheduling repeats aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubespread.sim.engine import Simulation
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(
    p for p in (ROOT / "examples" / "scenarios").glob("*.yaml") if "kind: Scenario" in p.read_text()
)

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 40
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: nginx, resources: {requests: {cpu: "1"}}}]
"""


def outcome(path: Path, monkeypatch: pytest.MonkeyPatch, skip: bool) -> dict[str, Any]:
    monkeypatch.setattr(Simulation, "skip_idle_retries", skip)
    doc = simulate(load_scenario(path)).to_dict()
    # the retries skipped are the repeats of a FailedScheduling: all else must be equal
    for part in [doc["initial"], *doc["steps"], doc]:
        if "events" in part:
            part["events"] = [e for e in part["events"] if e.get("reason") != "FailedScheduling"]
    return doc


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_bundled_scenarios_end_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert outcome(path, monkeypatch, True) == outcome(path, monkeypatch, False)


def scenario(tmp_path: Path, steps: str) -> Path:
    (tmp_path / "nodes.yaml").write_text((ROOT / "examples" / "scenarios" / "nodes-3.yaml").read_text())
    (tmp_path / "web.yaml").write_text(DEPLOY)
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: kubespread.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
        "cluster: [nodes.yaml]\nsteps:\n- apply: web.yaml\n" + steps
    )
    return path


def test_changes_in_a_long_wait_are_met_as_without_skipping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending pods wait dormant, a scale-down between two long advances frees room at an
    instant off the 5-minute cadence, a node fails and recovers: the same pods run where they
    would, with the same queue state after."""
    path = scenario(
        tmp_path,
        "- advance: 7h13m\n"
        "- scale: {kind: Deployment, namespace: default, name: web, replicas: 20}\n"
        "- advance: 2h7m\n"
        "- node: {name: node1, action: fail}\n"
        "- advance: 11m\n"
        "- node: {name: node1, action: recover}\n"
        "- scale: {kind: Deployment, namespace: default, name: web, replicas: 45}\n"
        "- advance: 30h\n",
    )
    assert outcome(path, monkeypatch, True) == outcome(path, monkeypatch, False)


def test_a_long_wait_with_pending_pods_makes_no_retries_while_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario(tmp_path, "- advance: 8760h\n")  # a year
    result = simulate(load_scenario(path))
    failed = [e for e in result.events if e.reason == "FailedScheduling"]
    pending = len(result.final.pending)
    assert pending > 0
    # each pending pod failed once when created, and maybe once more as the queue settled
    assert len(failed) <= 2 * pending + 40
