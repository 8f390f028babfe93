"""The README's first Quick start command installs kubespread without the live extra
(kubernetes, jsonpatch, prometheus_client): the CLI must load and run without them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# the live extra's libraries made unimportable, then the CLI run as the Quick start runs it
SCRIPT = """
import sys
for name in ("kubernetes", "jsonpatch", "prometheus_client"):
    sys.modules[name] = None
from kubespread.cli import main
sys.argv = ["kubespread", *sys.argv[1:]]
main()
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_schedule_runs_without_the_live_extra() -> None:
    done = run("schedule", "-f", "examples/snapshot/cluster.yaml", "-f", "examples/snapshot/checkout.yaml")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "checkout" in done.stdout


def test_manifests_print_without_the_live_extra() -> None:
    done = run("manifests")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "/convert-workloadspreads" in done.stdout and "/mutate-pods" in done.stdout
