"""A self-signed loopback certificate for the HTTPS server tests and the webhook fuzz run."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """``tls.crt`` and ``tls.key`` in ``folder``: EC P-256, valid one day, for 127.0.0.1 and
    localhost (needs the openssl command)."""
    cert, key = folder / "tls.crt", folder / "tls.key"
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
