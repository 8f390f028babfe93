"""``schedule --fail-on-pending`` fails a workload that can create no pod at all (its pods
refused by the API server: "placed 0 pod(s), 0 pending" with a failed create), as it fails
one whose pods stay pending."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
NODES = str(ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml")
TYPO = str(ROOT / "tests" / "data" / "check" / "typo-priority.yaml")


def test_a_workload_that_creates_no_pod_fails_the_gate() -> None:
    args = ["schedule", "-f", NODES, "-f", TYPO, "--no-progress"]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 0 and "placed 0 pod(s), 0 pending" in plain.stdout
    gated = CliRunner().invoke(app, [*args, "--fail-on-pending"])
    assert gated.exit_code == 3
    assert "error: 1 workload(s) could not create pods (--fail-on-pending)" in gated.stderr
    assert "no PriorityClass with name hgih-priority was found" in gated.stdout
