"""The long-running commands on a live cluster: ``scheduler``, ``controller`` and ``webhook``.

Each connects with a kubeconfig (or, in a pod, its service account), logs one line per action
to stderr, and stops cleanly on SIGTERM or Ctrl-C (exit 0). Object contents are never logged
at the default level.
"""

from __future__ import annotations

import logging
import signal
import threading
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kubespread.cli.common import ContextOption, err, scheduler_profiles_or_exit

if TYPE_CHECKING:
    from kubespread.live.kube import KubeApi

__all__ = ["controller_command", "scheduler_command", "stop_on_signals"]


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        help="The kubeconfig to connect with (default: $KUBECONFIG, ~/.kube/config, or in a pod its "
        "service account).",
    ),
]
LogLevelOption = Annotated[LogLevel, typer.Option("--log-level", help="Least severe level logged.")]


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


def connect_or_exit(kubeconfig: Path | None, context: str | None) -> KubeApi:
    from kubespread.live.kube import KubeApi, LiveError

    try:
        return KubeApi.connect(kubeconfig, context)
    except LiveError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None


def scheduler_command(
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    scheduler_name: Annotated[
        str,
        typer.Option("--scheduler-name", help="Schedule the pods whose spec.schedulerName is this."),
    ] = "kubespread",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A KubeSchedulerConfiguration: its profiles (by schedulerName) replace the default one.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Tie-break seed: `schedule --seed` with the same value picks alike.")
    ] = 0,
    leader_elect: Annotated[
        bool, typer.Option("--leader-elect", help="Run only while holding a coordination.k8s.io Lease.")
    ] = False,
    lease_namespace: Annotated[
        str, typer.Option("--leader-elect-namespace", help="Namespace of the Lease.")
    ] = "kube-system",
    log_level: LogLevelOption = LogLevel.info,
) -> None:
    """Run as a secondary scheduler: watch pending pods of --scheduler-name, decide with the
    engine, bind them through the API, record Scheduled / FailedScheduling Events."""
    from kubespread.live.kube import ApiError
    from kubespread.live.leader import LeaderElector
    from kubespread.live.scheduler import SecondaryScheduler, instance_name
    from kubespread.scheduler.config import default_profile

    setup_logging(log_level)
    profiles = scheduler_profiles_or_exit(config)
    if profiles is None:
        profiles = {scheduler_name: default_profile()}
    api = connect_or_exit(kubeconfig, context)
    stop = stop_on_signals()
    identity = instance_name()
    sched = SecondaryScheduler(api, profiles, seed=seed, stop=stop, identity=identity)
    leader = None
    if leader_elect:
        lease = "kubespread-scheduler" if len(profiles) > 1 else next(iter(profiles))
        leader = LeaderElector(api, namespace=lease_namespace, name=lease, identity=identity, stop=stop)
        leader.start()
    try:
        sched.start()
    except ApiError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    sched.run(leader)
    stop.set()
    if leader is not None:
        leader.join(timeout=5)
    s = sched.stats
    logging.getLogger("kubespread.scheduler").info(
        "stopped: %d attempts, %d bound, %d unschedulable, %d bind conflicts, %d bind errors",
        s.attempts,
        s.bound,
        s.unschedulable,
        s.bind_conflicts,
        s.bind_errors,
    )
    if leader is not None and leader.lost.is_set():
        raise typer.Exit(1)


def controller_command(
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    log_level: LogLevelOption = LogLevel.info,
) -> None:
    """Run the WorkloadSpread controller: keep subset status, clean up stale creating and
    deleting entries, reschedule pods a subset cannot hold, set pod-deletion-cost."""
    from kubespread.live.kube import ApiError
    from kubespread.live.workloadspread import LiveController

    setup_logging(log_level)
    api = connect_or_exit(kubeconfig, context)
    stop = stop_on_signals()
    controller = LiveController(api, stop=stop)
    try:
        controller.start()
    except ApiError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    controller.run()
