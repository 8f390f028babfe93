"""Runs one mutated input through one command path, in process, and classifies the outcome.

The outcomes of issue 18: ``accepted`` (exit 0), ``clean`` (exit 1 or 2 with a message and no
traceback), ``crash`` (an uncaught exception, or a traceback in the output) and ``hang`` (no
answer within the time limit, enforced with SIGALRM so that it works without threads).
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubespread.cli.app import app

from .mutate import EXAMPLES, Mutant, Source

__all__ = ["COMMANDS", "Outcome", "commands_for", "run_mutant"]

COMMANDS = ("admit", "validate", "schedule", "explain", "simulate")
NODES = EXAMPLES / "cluster" / "nodes.yaml"
POD = EXAMPLES / "pods" / "two-constraints.yaml"
SCENARIOS = EXAMPLES / "scenarios"
TIME_LIMIT = 10.0


class Hang(BaseException):
    """Raised by SIGALRM: a BaseException, so that no ``except Exception`` in the code swallows it."""


@dataclass(frozen=True)
class Outcome:
    command: str
    kind: str  # accepted | clean | crash | hang
    exit_code: int | None
    seconds: float
    args: tuple[str, ...]
    output: str
    detail: str = ""  # the traceback of a crash

    @property
    def bad(self) -> bool:
        return self.kind in ("crash", "hang")


def commands_for(source: Source) -> tuple[str, ...]:
    """The command paths a source makes sense for: a scenario is only simulated, any other
    file is admitted, validated, scheduled and explained."""
    if source.is_scenario:
        return ("simulate", "validate")
    if _scenario_using(source) is not None:
        return ("admit", "validate", "schedule", "explain", "simulate")
    return ("admit", "validate", "schedule", "explain")


def _scenario_using(source: Source) -> Path | None:
    """The first bundled scenario that reads ``source`` (a cluster or an applied file)."""
    if source.path.parent != SCENARIOS or source.is_scenario:
        return None
    for p in sorted(SCENARIOS.glob("*.yaml")):
        if p != source.path and source.path.name in p.read_text():
            return p
    return None


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _first_pod_name(mutant: Mutant) -> str:
    for doc in mutant.source.docs:
        if isinstance(doc, dict) and doc.get("kind") == "Pod":
            return str(doc.get("metadata", {}).get("name", "mypod"))
    return "mypod"


def _args(command: str, mutant: Mutant, workdir: Path) -> tuple[tuple[str, ...], str | None]:
    """The command line and stdin for one command path; files are written under ``workdir``."""
    if command == "admit":
        return ("admit",), mutant.single
    if command == "simulate":
        # a scenario names its cluster and applied files relative to itself: copy them along
        shutil.copytree(SCENARIOS, workdir / "scenarios")
        (workdir / "scenarios" / mutant.source.path.name).write_text(mutant.text)
        scenario = mutant.source.path if mutant.source.is_scenario else _scenario_using(mutant.source)
        assert scenario is not None
        return ("simulate", str(workdir / "scenarios" / scenario.name), "-o", "json"), None
    target = workdir / ("in-" + mutant.source.path.name)
    target.write_text(mutant.text)
    if command == "validate":
        return ("validate", "-f", str(target)), None
    if command == "schedule":
        return ("schedule", "--no-progress", "-o", "json", "-f", str(NODES), "-f", str(target)), None
    if command == "explain":
        if mutant.source.has_pod and mutant.seed % 2:
            return ("explain", str(target), "--no-progress", "-o", "json", "-f", str(NODES)), None
        # a valid pod explained against the mutated cluster (or the mutated pod, by name)
        pod = _first_pod_name(mutant) if mutant.source.has_pod else str(POD)
        return (
            "explain",
            pod,
            "--no-progress",
            "-o",
            "json",
            "-f",
            str(NODES),
            "-f",
            str(target),
        ), None
    raise ValueError(command)


def run_mutant(command: str, mutant: Mutant, time_limit_s: float = TIME_LIMIT) -> Outcome:
    """Run ``command`` on ``mutant`` and classify what happened."""
    runner = CliRunner()
    with tempfile.TemporaryDirectory(prefix="kubespread-fuzz-") as tmp:
        args, stdin = _args(command, mutant, Path(tmp))
        start = time.perf_counter()
        try:
            with time_limit(time_limit_s):
                result = runner.invoke(app, list(args), input=stdin, env={"COLUMNS": "120"})
        except Hang as e:
            return Outcome(command, "hang", None, time.perf_counter() - start, args, "", str(e))
        seconds = time.perf_counter() - start
    output = result.stdout + result.stderr
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return Outcome(command, "crash", result.exit_code, seconds, args, output, detail)
    if "Traceback (most recent call last)" in output:
        return Outcome(command, "crash", result.exit_code, seconds, args, output, output)
    if result.exit_code == 0:
        return Outcome(command, "accepted", 0, seconds, args, output)
    if result.exit_code in (1, 2) and result.stderr.strip():
        return Outcome(command, "clean", result.exit_code, seconds, args, output)
    return Outcome(command, "crash", result.exit_code, seconds, args, output, "exit without a message")
