"""Calls run in forked children, for ``plan.audit``'s failure runs: each child inherits the
caller's objects by copy-on-write (nothing is pickled to it), changes them as it likes (the
caller never sees it) and sends back its result, pickled, through a pipe.

A child's first act is ``gc.freeze()``: its garbage collections then leave the inherited
objects alone. Without it, a full collection in a child (a long run at 1,000 nodes allocates
enough to start several) walks every inherited object and writes its GC header, copying
nearly every page of the caller's heap into the child. Freezing in the child only splices the
collector's lists, and leaves the caller's collector as it was."""

from __future__ import annotations

import gc
import os
import pickle
import selectors
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["ForkError", "fork_each", "forked"]

#: held from a pipe's creation to the close of its write end in the caller: a child forked by
#: another thread meanwhile would hold that end open, and the read would wait for that child too
_FORKING = threading.Lock()

#: one call: the function and its arguments
Call = tuple[Callable[..., Any], tuple[Any, ...]]


class ForkError(Exception):
    """A child died without an answer, or its call raised (the text says which and why)."""


def forked(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a forked child, its result (pickled) sent back through a pipe: the
    child's changes to inherited objects never reach this process."""
    with _FORKING:  # no other thread's child inherits this pipe's write end
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            _child(write, read, fn, args)
        os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return _answer(data)


def fork_each(calls: Sequence[Call], at_once: int, finished: Callable[[], None]) -> list[Any]:
    """Every call's result, in the order given, each call in its own forked child, at most
    ``at_once`` children alive at a time, started in the order given; ``finished()`` after
    each one ends. The pipes are read as the children write (a result may exceed a pipe's
    buffer). On an error (ForkError, or an interrupt) the children still running are ended."""
    pending = list(range(len(calls)))
    results: dict[int, Any] = {}
    running: dict[int, tuple[int, int, list[bytes]]] = {}  # fd -> (index, pid, chunks)
    selector = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and len(running) < max(at_once, 1):
                i = pending.pop(0)
                read, write = os.pipe()
                pid = os.fork()
                if pid == 0:  # the child
                    _child(write, read, *calls[i])
                os.close(write)
                running[read] = (i, pid, [])
                selector.register(read, selectors.EVENT_READ)
            for key, _ in selector.select():
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    running[fd][2].append(chunk)
                    continue
                selector.unregister(fd)
                os.close(fd)
                i, pid, chunks = running.pop(fd)
                os.waitpid(pid, 0)
                results[i] = _answer(b"".join(chunks))
                finished()
    finally:
        for fd, (_, pid, _) in running.items():
            os.close(fd)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        selector.close()
    return [results[i] for i in range(len(calls))]


def _child(write: int, read: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """A forked child's whole life: ``fn(*args)``, or the error's text, pickled to ``write``;
    then it exits without running anything of the parent's (no atexit, no finalizers)."""
    gc.freeze()
    status = 0
    try:
        os.close(read)
        try:
            data = pickle.dumps((True, fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:
            data = pickle.dumps((False, f"{type(e).__name__}: {e}"))
        with os.fdopen(write, "wb") as f:
            f.write(data)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _answer(data: bytes) -> Any:
    if not data:
        raise ForkError("died without an answer")
    ok, value = pickle.loads(data)
    if not ok:
        raise ForkError(f"failed: {value}")
    return value
