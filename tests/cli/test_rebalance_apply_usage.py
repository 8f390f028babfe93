"""``rebalance --apply``'s usage errors are said before anything connects (exit 2), and the
bounds of --apply are refused without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

NOWHERE = ["--kubeconfig", "/nonexistent/kubeconfig"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--apply", "--dry-run"], "--apply and --dry-run: choose one"),
        (["--apply", "-f", "x.yaml"], "--apply plans from the live cluster"),
        (["--apply", "--strategy", "descheduler"], "not --strategy descheduler"),
        (["--apply", "--apply-scenario", "s.yaml"], "--apply-scenario writes the replay"),
        (["--apply", "-o", "json"], "leave -o out"),
        (["--apply", "--every", "soon"], "--every 'soon': not a duration"),
        (["--apply", "--every", "0s"], "not a duration"),
        (["--every", "10m"], "--every repeats --apply: add --apply"),
        (["--max-evictions", "2"], "bound --apply: add --apply"),
        (["--selector", "app=web"], "bound --apply: add --apply"),
        (["--apply", "--selector", "app in (x"], "--selector 'app in (x'"),
        (["--apply", "--rounds", "0"], "must be at least 1"),
    ],
)
def test_what_does_not_go_with_apply_is_a_usage_error(args: list[str], said: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["rebalance", *NOWHERE, *args])
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert "Traceback" not in result.output


def test_apply_without_a_reachable_cluster_says_so() -> None:
    result = CliRunner().invoke(app, ["rebalance", *NOWHERE, "--apply"])
    assert result.exit_code == 1
    assert "/nonexistent/kubeconfig" in result.output


def test_capacity_takes_the_cluster_from_kubeconfig_and_the_template_from_f(tmp_path: Path) -> None:
    template = tmp_path / "t.yaml"
    template.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec: {containers: [{name: c}]}\n")
    alone = CliRunner().invoke(app, ["capacity", "-f", str(template)])
    assert alone.exit_code == 2 and "--kubeconfig FILE -f TEMPLATE" in alone.output
    live = CliRunner().invoke(app, ["capacity", *NOWHERE, "-f", str(template)])
    assert live.exit_code == 1 and "/nonexistent/kubeconfig" in live.output  # it tried to read it
