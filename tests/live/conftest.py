"""Say it when the tests against a real API server did not run (they skip without one)."""

from __future__ import annotations

import os

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not os.environ.get("KUBESPREAD_TEST_KUBECONFIG"):
        terminalreporter.write_line(
            "live tests against a real kube-apiserver skipped: KUBESPREAD_TEST_KUBECONFIG is not set "
            "(see tests/live/test_live_cluster.py)",
            yellow=True,
        )
