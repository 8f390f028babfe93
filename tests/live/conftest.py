"""What the live-layer tests share: a ``stop`` event that no background thread outlives, and
saying so when the tests against a real API server did not run (they skip without one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        if os.environ.get("KUBESPREAD_REQUIRE_OPENSSL"):
            pytest.fail("KUBESPREAD_REQUIRE_OPENSSL is set but the openssl command is missing")
        pytest.skip("the openssl command-line tool is needed to make a test certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "tls.crt", d / "tls.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not os.environ.get("KUBESPREAD_TEST_KUBECONFIG"):
        terminalreporter.write_line(
            "live tests against a real kube-apiserver skipped: KUBESPREAD_TEST_KUBECONFIG is not set "
            "(see tests/live/test_live_cluster.py)",
            yellow=True,
        )
