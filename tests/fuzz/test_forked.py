"""benchmarks/fuzz.py's forked runs: every call answered once, in whatever way it ended; a call
that SIGALRM cannot stop is still killed and reported as a hang, and the rest of its batch
still runs."""

from __future__ import annotations

import os
import signal
import time

import pytest

from fuzz.harness import Hang, forked, time_limit


def _call(x: int) -> int:
    if x == 2:  # a hang out of SIGALRM's reach (as one stuck in C code would be)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(60)
    if x == 4:
        os._exit(3)
    if x == 5:
        raise ValueError("boom")
    return x * 10


def test_each_call_is_answered_once_and_a_stuck_one_is_killed_as_a_hang() -> None:
    start = time.perf_counter()
    got = {
        f.key: f
        for f in forked([(i, _call, (i,)) for i in range(8)], jobs=2, batch=3, time_limit_s=0.5, grace=0.5)
    }
    assert time.perf_counter() - start < 20
    assert sorted(got) == list(range(8))
    assert {k: got[k].value for k in (0, 1, 3, 6, 7)} == {0: 0, 1: 10, 3: 30, 6: 60, 7: 70}
    assert got[2].kind == "hang" and 1.0 <= got[2].seconds < 10
    assert got[4].kind == "died" and "wait status" in got[4].detail
    assert got[5].kind == "died" and "ValueError: boom" in got[5].detail
    assert all(got[k].kind == "done" for k in (0, 1, 3, 6, 7))


def test_a_cpu_time_limit_stops_a_loop_and_lets_a_slow_wait_be() -> None:
    """benchmarks/fuzz.py's CLI limit counts CPU time: on a loaded machine a starved input
    (wall time without CPU) is not a hang, and a loop that never ends still is."""
    with pytest.raises(Hang, match="CPU time"), time_limit(0.2, cpu=True):
        while True:
            pass
    with time_limit(0.2, cpu=True):
        time.sleep(0.4)
