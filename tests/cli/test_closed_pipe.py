"""A reader that closes the pipe (``| head -1``) ends a command quietly, as kubectl does: exit
141 (128 + SIGPIPE) and nothing on stderr, for tables (rich), data (``-o json``) and the
version alike; never Click's silent 1 nor a traceback from the interpreter's last flush."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubespread.cli.pipe import EXIT_CLOSED_PIPE

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "examples" / "scenarios"


def closed_early(*args: str) -> tuple[int, str]:
    """Run ``python -m kubespread ARGS`` with its stdout's reader gone before it writes."""
    p = subprocess.Popen(
        [sys.executable, "-m", "kubespread", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    stderr = p.stderr.read().decode()
    return p.wait(timeout=120), stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("schedule", "-f", str(SCENARIOS / "nodes-3-zones.yaml"), "-f", str(ROOT / "examples" / "workloads")),
        (
            "schedule",
            "-f",
            str(SCENARIOS / "nodes-3-zones.yaml"),
            "-f",
            str(ROOT / "examples" / "workloads"),
            "-o",
            "json",
        ),
        ("simulate", str(SCENARIOS / "zone-failure.yaml")),
        (
            "audit",
            "-f",
            str(SCENARIOS / "nodes-3-zones.yaml"),
            "-f",
            str(SCENARIOS / "zone-failure-deployments.yaml"),
        ),
        ("--version",),
    ],
    ids=["schedule", "schedule-json", "simulate", "audit", "version"],
)
def test_a_closed_pipe_ends_quietly_with_141(args: tuple[str, ...]) -> None:
    status, stderr = closed_early(*args)
    assert (status, stderr) == (EXIT_CLOSED_PIPE, "")
