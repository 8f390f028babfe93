"""A reader that closes the pipe early (``kubespread schedule ... | head -1``) ends the
command quietly, as kubectl does: a Go program writing to a closed standard output is killed
by SIGPIPE, so the shell sees 141 (128 + 13) and nothing is said on stderr. Python instead
raises BrokenPipeError, which Click turns into a silent exit 1 (a failure a pipeline with
``pipefail`` cannot tell from a real one), and whatever is still buffered fails again when
the interpreter flushes standard output on its way out."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Final, NoReturn, TypeVar

__all__ = ["EXIT_CLOSED_PIPE", "closed_pipe", "is_closed_pipe", "quiet_on_closed_pipe"]

#: the status a shell reports for a process killed by SIGPIPE (13), kubectl's on ``| head``
EXIT_CLOSED_PIPE: Final = 128 + 13

T = TypeVar("T")


def is_closed_pipe(error: BaseException) -> bool:
    return isinstance(error, BrokenPipeError) or (isinstance(error, OSError) and error.errno == errno.EPIPE)


def closed_pipe() -> NoReturn:
    """End the command as kubectl would on a closed pipe: standard output pointed at
    /dev/null (so the interpreter's last flush has nowhere to fail), exit 141, nothing said."""
    for stream in (sys.stdout, sys.__stdout__):
        try:
            if stream is not None:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no real file behind it (a test's capture)
            pass
    raise SystemExit(EXIT_CLOSED_PIPE)


def quiet_on_closed_pipe(run: Callable[[], T]) -> T:
    """``run()``, then flush standard output; a closed pipe in either ends as :func:`closed_pipe`."""
    try:
        result = run()
        sys.stdout.flush()
        return result
    except SystemExit:
        try:
            sys.stdout.flush()
        except OSError as e:
            if is_closed_pipe(e):
                closed_pipe()
            raise
        raise
    except OSError as e:
        if is_closed_pipe(e):
            closed_pipe()
        raise
