"""``plan.audit``'s failure runs on a Dask cluster (``kubespread audit --cluster``).

The input goes to the workers **pickled once, by the parent, as bytes**. Scattered as an
object, it cost the critical path four walks of the dump before a worker could build its base
(1,000 nodes, 11,100 objects, at load 3-5: 8 s of scatter before the first run): the parent
pickled it, the first worker unpickled it, then pickled it again to replicate it to the
second, which unpickled it. Bytes replicate as they are.

**Runs fork from a helper, not from the worker.** The first worker of a machine to get a
task starts one plain Python process (``serve``, at a Unix socket, under a file lock), and
every worker of that machine sends it its runs; the helper unpickles each input once, with
the collector paused, builds the base once and forks one child per run (``plan.audit``
``run_failure``), as the local way does: one base per machine, not per worker (two workers
of a LocalCluster built two, 1-1.4 s each, and unpickled twice). Forked from the Dask worker itself,
the same run touched 18% more pages (node runs at 1,000 nodes, one at a time: 20,200 faults
against 17,200 from a plain process; zone runs alike): the worker's heap, laid out by Dask's
own traffic, shares fewer clean pages with the child. The helper's threads only wait for the
runs they forked; a lock keeps one thread's fork from inheriting another run's pipe.

**Few tasks.** Each task is a chunk of runs, the costliest first: with fewer runs than twice
the cluster's threads, one chunk per worker, all its runs at once (three zone runs on two
workers finish together, where two rounds take a third longer); otherwise chunks that shrink
as the runs left do (a share of what is left per thread), one run at a time per chunk, so that
a thread's queue never empties before the last runs, and the last chunks are short. A
thousand node runs are then some thirty tasks, not a thousand round trips through the
scheduler. Nothing is hashed: Dask would otherwise tokenize the input, for a key nothing
else shares.

This module is the transport alone: ``plan.audit`` hands it the function to run for each
call (``run_failure``) and the input, and imports it, never the other way round."""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kubespread.api.model import collect_less, gc_paused
from kubespread.plan.audit_forks import ForkError

__all__ = ["chunks", "packed", "private_dir", "run_chunk", "run_on_dask", "run_packed", "serve", "unpacked"]

R = TypeVar("R")

#: this process's input, unpickled: (token, input); one at a time, like ``plan.audit``'s base
_INPUT: list[tuple[str, Any]] = []
_INPUT_LOCK = threading.Lock()
_LENGTH = struct.Struct("!Q")


def packed(inp: object) -> bytes:
    """``inp`` pickled, for the workers, with the collector paused (0.89 s of CPU at 1,000
    nodes, 0.52 s paused: every object's state is a new dict)."""
    with gc_paused(freeze=False):
        return pickle.dumps(inp, protocol=pickle.HIGHEST_PROTOCOL)


def unpacked(token: str, data: bytes) -> Any:
    """The input ``data`` holds (named ``token``), unpickled once per process, with the
    collector paused (a new object per field, all kept: its passes found nothing, 0.67 s of
    CPU at 1,000 nodes, 0.19 s paused). Paused, not frozen: a long-lived helper still holds
    the previous audit's base then, whose cycles a freeze would keep for good. The last input
    is kept (a long-lived worker audits one cluster after another) and every run of it shares
    it, and so the base ``plan.audit`` keeps under the same token."""
    with _INPUT_LOCK:
        if _INPUT and _INPUT[0][0] == token:
            return _INPUT[0][1]
        _INPUT.clear()
        with gc_paused(freeze=False):
            inp = pickle.loads(data)
        _INPUT.append((token, inp))
        return inp


def run_packed(run: Callable[..., R], token: str, data: bytes, *args: Any) -> R:
    """``run(input, *args)`` on the packed input, in this process."""
    return run(unpacked(token, data), *args)


# ------------------------------------------------------------------ the helper


def _send(fd: int, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    os.write(fd, _LENGTH.pack(len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """The next message on ``fd``, or None at its end."""
    head = _read(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read(fd, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _address() -> str:
    """Where this machine's helper listens: one per user, Python and kubespread install, in
    this user's private directory (``private_dir``)."""
    here = f"{sys.executable}\0{os.path.dirname(__file__)}".encode()
    return os.path.join(private_dir(), f"audit-{zlib.crc32(here):08x}.sock")


def private_dir(parent: str | None = None) -> str:
    """``kubespread-UID`` in the temporary directory (or ``parent``), made mode 0700 and
    checked: a directory, not a link, this user's, no access for group or others. The
    helper's socket and lock live there because in a shared /tmp another user could take the
    socket's name first (and be sent the cluster's dump, and answer with pickles the worker
    loads) or link the lock's name to a file of ours; as tmux and ssh-agent do."""
    path = os.path.join(parent or tempfile.gettempdir(), f"kubespread-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ForkError(
            f"failed: {path} is not a directory of this user's alone (mode 0700, not a link): "
            "the audit helper will not put its socket there"
        )
    return path


def serve(address: str) -> None:
    """The helper's whole life: listens at ``address``; on each connection, requests ``(id,
    run, token, data, args)``, each run in a thread of its own as ``run(input, *args)``
    (``data`` empty when this connection sent this input before); answers ``(id, ok, value
    or exception)`` as they finish. Ends when the process that started it has (its stdin
    closed) and no connection is left."""
    ready = os.dup(1)
    os.dup2(2, 1)  # a stray print goes to stderr
    # its forked runs collect as the audit command's do (zone runs at 1,000 nodes at the
    # defaults: 11.3 s on Dask against 8.7 s forked by the command); it lives on: no freeze
    collect_less(freeze=False)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen()
    lock = threading.Lock()
    state = {"clients": 0, "orphan": False}
    inputs: dict[str, bytes] = {}  # the last inputs' bytes, for a connection that sent them

    def end_if_idle() -> None:
        with lock:
            if state["orphan"] and not state["clients"]:
                with contextlib.suppress(OSError):
                    os.unlink(address)
                os._exit(0)

    def starter() -> None:
        while os.read(0, 1 << 16):
            pass
        state["orphan"] = True
        end_if_idle()

    def client(conn: socket.socket) -> None:
        fd, sending = conn.fileno(), threading.Lock()

        def answer(ident: int, run: Callable[..., Any], inp: Any, args: tuple[Any, ...]) -> None:
            try:
                reply: tuple[Any, ...] = (ident, True, run(inp, *args))
            except BaseException as e:
                reply = (ident, False, e)
            with sending:
                try:
                    _send(fd, reply)
                except (pickle.PicklingError, TypeError, AttributeError) as e:  # nothing written
                    _send(fd, (ident, False, ForkError(f"failed: {reply[2]!r} ({e})")))
                except OSError:
                    pass  # the worker is gone

        try:
            while (request := _receive(fd)) is not None:
                ident, run, token, data, args = request
                with lock:
                    if data:
                        inputs.pop(token, None)
                        inputs[token] = data
                        while len(inputs) > 2:
                            del inputs[next(iter(inputs))]
                    data = inputs.get(token, b"")
                inp = unpacked(token, data)  # here, before any run of it starts
                threading.Thread(target=answer, args=(ident, run, inp, args), daemon=True).start()
        except OSError:
            pass
        finally:
            with lock:
                state["clients"] -= 1
            end_if_idle()

    threading.Thread(target=starter, daemon=True).start()
    os.write(ready, b"r")  # it listens
    os.close(ready)
    while True:
        conn, _ = listener.accept()
        with lock:
            state["clients"] += 1
        threading.Thread(target=client, args=(conn,), daemon=True).start()


class _Helper:
    """This machine's helper (see the module notes), as one worker process uses it: its
    requests sent under a lock, the answers read by a thread and handed to the thread waiting
    for each. The first worker to find none starts it (under a file lock: one per machine)."""

    def __init__(self) -> None:
        import fcntl  # here: POSIX only (run_chunk runs in the worker where there is no fork)

        address = _address()
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with open(address + ".lock", "wb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self.sock.connect(address)
            except (FileNotFoundError, ConnectionRefusedError):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(address)  # a helper that did not end cleanly
                code = "import sys; from kubespread.plan.audit_dask import serve; serve(sys.argv[1])"
                self.proc = subprocess.Popen(
                    [sys.executable, "-c", code, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                assert self.proc.stdout is not None
                self.proc.stdout.read(1)  # it listens
                self.sock.connect(address)
        self.fd = self.sock.fileno()
        self.lock = threading.Lock()
        self.tokens: set[str] = set()  # the inputs sent
        self.next = 0
        self.waiting: dict[int, tuple[threading.Event, list[tuple[bool, Any]]]] = {}
        self.ended = False
        threading.Thread(target=self._read_answers, daemon=True).start()

    def start(
        self, run: Callable[..., Any], token: str, data: bytes, args: tuple[Any, ...]
    ) -> Callable[[], Any]:
        """Send one run; the function returned waits for its answer (or raises its error)."""
        done, slot = threading.Event(), list[tuple[bool, Any]]()
        with self.lock:
            if self.ended:
                raise ForkError("died without an answer: the audit helper process ended")
            ident, self.next = self.next, self.next + 1
            self.waiting[ident] = (done, slot)
            _send(self.fd, (ident, run, token, b"" if token in self.tokens else data, args))
            self.tokens.add(token)

        def result() -> Any:
            done.wait()
            if not slot:
                raise ForkError("died without an answer: the audit helper process ended")
            ok, value = slot[0]
            if not ok:
                raise value
            return value

        return result

    def _read_answers(self) -> None:
        with contextlib.suppress(OSError):
            while (message := _receive(self.fd)) is not None:
                ident, ok, value = message
                with self.lock:
                    done, slot = self.waiting.pop(ident)
                slot.append((ok, value))
                done.set()
        with self.lock:
            self.ended = True
            for done, _ in self.waiting.values():
                done.set()
            self.waiting.clear()


_HELPER: list[_Helper] = []
_HELPER_LOCK = threading.Lock()


def _helper() -> _Helper:
    """This process's connection to the helper, made on first use, again if it ended."""
    with _HELPER_LOCK:
        if not _HELPER or _HELPER[0].ended:
            _HELPER[:] = [_Helper()]
        return _HELPER[0]


def run_chunk(
    run: Callable[..., R], token: str, data: bytes, calls: Sequence[tuple[Any, ...]], at_once: int
) -> list[R]:
    """One worker's task: ``run(input, *call)`` for each call, in order, by this process's
    helper, ``at_once`` at a time (in this process, one by one, where there is no fork: each
    run then rebuilds its base)."""
    if not hasattr(os, "fork"):
        return [run_packed(run, token, data, *call) for call in calls]
    helper = _helper()
    out: list[R] = []
    live: deque[Callable[[], Any]] = deque()
    for call in calls:
        if len(live) >= at_once:
            out.append(live.popleft()())
        live.append(helper.start(run, token, data, call))
    out += [result() for result in live]
    return out


# ------------------------------------------------------------------ the parent


def chunks(ranked: Sequence[int], workers: Sequence[int]) -> list[tuple[int | None, list[int], int]]:
    """``ranked`` (indexes, costliest first) cut into tasks ``(worker, indexes, at_once)`` for
    workers of the given thread counts: fewer than twice as many runs as threads, one task
    per worker (its index in ``workers``), dealt in turn, all its runs at once; else chunks of
    a share of the runs left per thread (at least one), one run at a time, any worker."""
    threads = max(sum(workers), 1)
    if len(ranked) < 2 * threads:
        dealt: list[list[int]] = [[] for _ in workers] or [[]]
        for n, i in enumerate(ranked):
            dealt[n % len(dealt)].append(i)
        return [(w, share, len(share)) for w, share in enumerate(dealt) if share]
    out: list[tuple[int | None, list[int], int]] = []
    at = 0
    while at < len(ranked):
        size = max(1, math.ceil((len(ranked) - at) / (2 * threads)))
        out.append((None, list(ranked[at : at + size]), 1))
        at += size
    return out


def run_on_dask(
    client: Any,
    run: Callable[..., R],
    inp: object,
    token: str,
    calls: Sequence[tuple[Any, ...]],
    order: Sequence[int],
    finished: Callable[[], None],
) -> list[R]:
    """``run(inp, *call)`` for every call, in the order of ``calls``, in chunks on the Dask
    cluster, the costliest first (``order``); ``finished()`` as each one ends."""
    from distributed import as_completed

    shared = client.scatter(packed(inp), broadcast=True, hash=False)
    threads = client.nthreads()
    addresses = sorted(threads)
    tasks = chunks(list(order) or list(range(len(calls))), [threads[a] for a in addresses])
    futures: dict[Any, list[int]] = {}
    for rank, (worker, indexes, at_once) in enumerate(tasks):
        where = {} if worker is None else {"workers": [addresses[worker]], "allow_other_workers": True}
        future = client.submit(
            run_chunk,
            run,
            token,
            shared,
            [calls[i] for i in indexes],
            at_once,
            pure=False,
            priority=len(tasks) - rank,
            **where,
        )
        futures[future] = indexes
    out: list[Any] = [None] * len(calls)
    for future in as_completed(list(futures)):  # type: ignore[no-untyped-call]
        for i, result in zip(futures[future], future.result(), strict=True):
            out[i] = result
            finished()
    return out
