"""What the live-layer tests share: a ``stop`` event that no background thread outlives, and
saying so when the tests against a real API server did not run (they skip without one)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from live.fake_api import join_live_threads


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """Set at the end of the test; the reflector, leader and controller threads it stops are
    joined before the next test starts."""
    ev = threading.Event()
    yield ev
    ev.set()
    join_live_threads()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not os.environ.get("KUBESPREAD_TEST_KUBECONFIG"):
        terminalreporter.write_line(
            "live tests against a real kube-apiserver skipped: KUBESPREAD_TEST_KUBECONFIG is not set "
            "(see tests/live/test_live_cluster.py)",
            yellow=True,
        )
