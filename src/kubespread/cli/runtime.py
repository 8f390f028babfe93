"""What the commands that run against a live cluster share (``scheduler``, ``controller``,
``webhook``, ``rebalance --apply``): the live extra's presence, connecting, logging, stopping on
signals, and serving /metrics, /healthz and /readyz.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubespread.cli.common import err

if TYPE_CHECKING:
    from kubespread.live.kube import KubeApi
    from kubespread.live.metrics import ControllerMetrics, RebalancerMetrics, SchedulerMetrics, WebhookMetrics

__all__ = [
    "KubeconfigOption",
    "LogLevel",
    "LogLevelOption",
    "connect_or_exit",
    "metrics_option",
    "metrics_served",
    "parse_metrics_address_or_exit",
    "require_live_extra",
    "setup_logging",
    "stop_on_signals",
]


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        metavar="FILE",
        help="The kubeconfig to connect with (default: $KUBECONFIG, ~/.kube/config, or in a pod its "
        "service account).",
    ),
]
LogLevelOption = Annotated[
    LogLevel, typer.Option("--log-level", metavar="LEVEL", help="Least severe level logged.")
]


def metrics_option(default_port: int) -> Any:
    """``--metrics-bind-address``: where /metrics, /healthz and /readyz are served over HTTP."""
    return typer.Option(
        "--metrics-bind-address",
        metavar="ADDRESS",
        help=f"HOST:PORT of /metrics, /healthz and /readyz, plain HTTP (default port {default_port}; "
        "port 0: any free port, logged; 0: off).",
    )


def parse_metrics_address_or_exit(text: str) -> tuple[str, int] | None:
    """The bind address, or exit 2 saying what is wrong with it (before anything connects)."""
    from kubespread.live.metrics import MetricsConfigError, parse_bind_address

    try:
        return parse_bind_address(text)
    except MetricsConfigError as e:
        err.print(f"error: --metrics-bind-address {e}", markup=False, highlight=False)
        raise typer.Exit(2) from None


@contextlib.contextmanager
def metrics_served(
    metrics: SchedulerMetrics | ControllerMetrics | WebhookMetrics | RebalancerMetrics,
    address: tuple[str, int] | None,
    component: str,
) -> Iterator[None]:
    """Serve ``metrics`` (its registry and health probes) while the block runs (every way out
    of it shuts the server down), or exit 1 when the address cannot be bound (a port in use,
    an address not of this host)."""
    from kubespread.live.metrics import MetricsConfigError, serve_metrics

    try:
        server = serve_metrics(metrics.registry, metrics.health, address)
    except MetricsConfigError as e:
        err.print(f"error: --metrics-bind-address: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if server is not None:
        logging.getLogger(f"kubespread.{component}").info(
            "serving /metrics, /healthz, /readyz on http://%s:%d", server.host, server.port
        )
    try:
        yield
    finally:
        if server is not None:
            server.shutdown()


def setup_logging(level: LogLevel) -> None:
    logging.basicConfig(
        level=getattr(logging, level.value.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT: the loops check it and wind down."""
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        logging.getLogger("kubespread").info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop


def require_live_extra() -> None:
    """The live commands need the optional extra: say so instead of a traceback."""
    import importlib.util

    missing = [
        m for m in ("kubernetes", "jsonpatch", "prometheus_client") if importlib.util.find_spec(m) is None
    ]
    if missing:
        err.print(
            f"error: {', '.join(missing)} not installed: live clusters need the optional extra: "
            "pip install 'kubespread\\[live]'",
        )
        raise typer.Exit(1)


def connect_or_exit(kubeconfig: Path | None, context: str | None) -> KubeApi:
    from kubespread.live.kube import KubeApi, LiveError

    try:
        return KubeApi.connect(kubeconfig, context)
    except LiveError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
