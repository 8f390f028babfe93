"""What the live-layer tests share: a ``stop`` event that no background thread outlives, and
saying so when the tests against a real API server did not run (they skip without one)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from live.fake_api import join_live_threads
from live.tls import make_certificate


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """Set at the end of the test; the reflector, leader and controller threads it stops are
    joined before the next test starts."""
    ev = threading.Event()
    yield ev
    ev.set()
    join_live_threads()


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        if os.environ.get("KUBESPREAD_REQUIRE_OPENSSL"):
            pytest.fail("KUBESPREAD_REQUIRE_OPENSSL is set but the openssl command is missing")
        pytest.skip("the openssl command-line tool is needed to make a test certificate")
    return make_certificate(tmp_path_factory.mktemp("tls"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not os.environ.get("KUBESPREAD_TEST_KUBECONFIG"):
        terminalreporter.write_line(
            "live tests against a real kube-apiserver skipped: KUBESPREAD_TEST_KUBECONFIG is not set "
            "(see tests/live/test_live_cluster.py)",
            yellow=True,
        )
