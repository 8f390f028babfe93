"""Runs one mutated input through one command path, in process, and classifies the outcome.

The outcomes of issue 18: ``accepted`` (exit 0), ``clean`` (exit 1 or 2 with a message and no
traceback), ``crash`` (an uncaught exception, or a traceback in the output) and ``hang`` (no
answer within the time limit, enforced with SIGALRM so that it works without threads).

``forked`` runs such calls in children forked from a warm process (benchmarks/fuzz.py's long
runs): an input sees no state left by inputs outside its batch, several run at once, and a
child that SIGALRM cannot stop (stuck in C code, signals blocked) is killed at the time limit
plus a grace and its input reported as a hang all the same.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import select
import shutil
import signal
import tempfile
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import typer.main
import typer.testing
from typer._click import _compat
from typer.testing import CliRunner

from kubespread.cli.app import app

from .mutate import EXAMPLES, Mutant, Source

__all__ = ["COMMANDS", "Finished", "Outcome", "commands_for", "forked", "run_mutant"]

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
def time_limit(seconds: float, *, cpu: bool = False) -> Iterator[None]:
    """Raise :class:`Hang` after ``seconds`` of wall time, or with ``cpu`` of this process's CPU
    time (a loop that never ends spends it however loaded the machine is; a wait that never
    ends is left to the caller's wall-clock backstop, as :func:`forked` has)."""
    which, sig = (signal.ITIMER_PROF, signal.SIGPROF) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer in {seconds:g} s{' of CPU time' if cpu else ''}")

    previous = signal.signal(sig, on_alarm)
    signal.setitimer(which, seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        signal.signal(sig, previous)


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


#: Typer builds the Click command from the app on every ``CliRunner.invoke`` (about 0.1 s, most
#: of an input's time); Click commands are reusable, so the fuzz harness builds it once
_command = functools.cache(typer.main.get_command)


def _forget_runner_streams() -> None:
    """Click caches a text wrapper per stdin/stdout/stderr object in a WeakKeyDictionary whose
    values hold their keys, so each ``CliRunner.invoke``'s streams stay for good (~8 objects
    an input: most of ``admit``'s RSS growth over a fuzz run). A CLI process has one stdout;
    the harness drops the runner's, so that an in-process run measures kubespread's memory."""
    for cached in (_compat._default_text_stdin, _compat._default_text_stdout, _compat._default_text_stderr):
        for cell in cached.__closure__ or ():
            if isinstance(cell.cell_contents, weakref.WeakKeyDictionary):
                cell.cell_contents.clear()


def run_mutant(
    command: str, mutant: Mutant, time_limit_s: float = TIME_LIMIT, *, cpu: bool = False
) -> Outcome:
    """Run ``command`` on ``mutant`` and classify what happened (``cpu``: the time limit in CPU
    seconds, for runs on a loaded machine, where wall time says little)."""
    runner = CliRunner()
    with tempfile.TemporaryDirectory(prefix="kubespread-fuzz-") as tmp:
        args, stdin = _args(command, mutant, Path(tmp))
        start = time.perf_counter()
        try:
            with (
                time_limit(time_limit_s, cpu=cpu),
                mock.patch.object(typer.testing, "_get_command", _command),
            ):
                result = runner.invoke(app, list(args), input=stdin, env={"COLUMNS": "120"})
        except Hang as e:
            return Outcome(command, "hang", None, time.perf_counter() - start, args, "", str(e))
        finally:
            _forget_runner_streams()
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


# --------------------------------------------------------------------------- forked runs
Call = tuple[Any, Callable[..., Any], tuple[Any, ...]]  # (key, fn, args)


@dataclass(frozen=True)
class Finished:
    """One forked call: its value, or why there is none (``hang``: killed at the time limit plus
    the grace; ``died``: the call raised, or the child ended without an answer)."""

    key: Any
    value: Any
    kind: str  # done | hang | died
    seconds: float
    detail: str = ""
    peak_mib: float = 0.0  # the child's high-water RSS above what it started with, so far


def _status_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        return next((int(line.split()[1]) / 1024 for line in f if line.startswith(field)), 0.0)


def _child(write: int, batch: list[Call]) -> None:
    """In the forked child: each call in turn, its answer sent back framed (length, pickle)
    as soon as it is known; then leave without cleanup (atexit handlers, temporary folders
    and buffers are the parent's)."""
    start = _status_mib("VmRSS:")
    for _key, fn, args in batch:
        try:
            answer: tuple[Any, ...] = ("done", fn(*args), "")
        except BaseException:  # anything the call raises is its answer
            answer = ("died", None, traceback.format_exc())
        data = pickle.dumps((*answer, max(_status_mib("VmHWM:") - start, 0.0)))
        view = memoryview(len(data).to_bytes(8, "big") + data)
        while view:
            view = view[os.write(write, view) :]
    os._exit(0)


@dataclass
class _Worker:
    pid: int
    batch: list[Call]
    last: float  # when the call under way started
    done: int = 0
    buffer: bytes = b""


def forked(
    calls: Iterable[Call],
    jobs: int = 1,
    batch: int = 1,
    time_limit_s: float = TIME_LIMIT,
    grace: float = 5.0,
    stop: Callable[[], bool] | None = None,
) -> Iterator[Finished]:
    """Run ``(key, fn, args)`` calls in children forked from this process, ``jobs`` children at
    once, each child taking ``batch`` calls in turn (1: every call in a fresh copy of this
    process; more: a fork's cost shared, state isolated per batch). Yields each call's answer
    as it comes (not in order). A call that gives no answer within ``time_limit_s + grace`` has
    its child killed and is a ``hang``; the rest of its batch goes to a fresh child. Once
    ``stop()`` is true no further child starts and the calls not yet given are dropped.

    Fork from a process without threads: a lock held by another thread at the fork stays held
    in the child forever."""
    # what the parent holds is left out of the collector's sweeps: a full collection in a child
    # would otherwise write to every object's header and copy the parent's whole heap
    gc.freeze()
    try:
        pending = deque(calls)
        running: dict[int, _Worker] = {}  # by the read end of the child's pipe
        limit = time_limit_s + grace
        while pending or running:
            if stop is not None and stop():
                pending.clear()
            while pending and len(running) < jobs:
                todo = [pending.popleft() for _ in range(min(batch, len(pending)))]
                read, write = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(read)
                    _child(write, todo)
                os.close(write)
                running[read] = _Worker(pid, todo, time.perf_counter())
            if not running:
                break
            wait = max(min(w.last for w in running.values()) + limit - time.perf_counter(), 0.0)
            ready, _, _ = select.select(list(running), [], [], wait)
            for fd in ready:
                w = running[fd]
                chunk = os.read(fd, 1 << 16)
                w.buffer += chunk
                while len(w.buffer) >= 8 and len(w.buffer) >= 8 + (
                    size := int.from_bytes(w.buffer[:8], "big")
                ):
                    kind, value, detail, peak = pickle.loads(w.buffer[8 : 8 + size])
                    w.buffer = w.buffer[8 + size :]
                    now = time.perf_counter()
                    yield Finished(w.batch[w.done][0], value, kind, now - w.last, detail, peak)
                    w.done += 1
                    w.last = now
                if not chunk:  # the child is gone: whatever it had not answered, it never will
                    del running[fd]
                    os.close(fd)
                    _, status = os.waitpid(w.pid, 0)
                    if w.done < len(w.batch):
                        seconds = time.perf_counter() - w.last
                        yield Finished(
                            w.batch[w.done][0],
                            None,
                            "died",
                            seconds,
                            f"child ended with wait status {status}",
                        )
                        pending.extendleft(reversed(w.batch[w.done + 1 :]))
            now = time.perf_counter()
            for fd, w in list(running.items()):
                if now - w.last >= limit:
                    os.kill(w.pid, signal.SIGKILL)
                    os.waitpid(w.pid, 0)
                    os.close(fd)
                    del running[fd]
                    yield Finished(
                        w.batch[w.done][0], None, "hang", now - w.last, f"killed after {now - w.last:.1f} s"
                    )
                    pending.extendleft(reversed(w.batch[w.done + 1 :]))
    finally:  # left early (an error, Ctrl-C): no child outlives the run
        for fd, w in running.items():
            os.kill(w.pid, signal.SIGKILL)
            os.waitpid(w.pid, 0)
            os.close(fd)
        gc.unfreeze()
