"""The virtual clock: a heap of timers, a read-only ``now``, one ``step()`` (simpy's core).

Entries are ``(time, seq, timer)``; the sequence number makes timers due at the same instant
fire first-in first-out, so a run is a pure function of its inputs.

A timer is *settling* when it is part of how the cluster converges within seconds (the
scheduling queue's backoff, a pod's graceful termination): running a step "until quiet"
fires those, and whatever else falls due before them, but never waits for the long timers
(a Job's duration, a taint's tolerationSeconds), which only ``advance`` reaches.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

__all__ = ["Clock", "Timer"]


class Timer:
    """A callback due at ``time``; :meth:`cancel` keeps it from firing."""

    __slots__ = ("callback", "cancelled", "settle", "time")

    def __init__(self, time: float, callback: Callable[[], None], settle: bool) -> None:
        self.time = time
        self.callback = callback
        self.settle = settle
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._heap: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._settling = 0  # pending settle timers, cancelled ones included until popped

    @property
    def now(self) -> float:
        """Virtual seconds since the epoch (0 unless the simulation starts later, e.g. at the
        time of a cluster snapshot)."""
        return self._now

    def at(self, time: float, callback: Callable[[], None], *, settle: bool = False) -> Timer:
        timer = Timer(max(time, self._now), callback, settle)
        heapq.heappush(self._heap, (timer.time, next(self._seq), timer))
        self._settling += settle
        return timer

    def after(self, delay: float, callback: Callable[[], None], *, settle: bool = False) -> Timer:
        return self.at(self._now + max(delay, 0.0), callback, settle=settle)

    def _drop_cancelled(self) -> None:
        while self._heap and self._heap[0][2].cancelled:
            self._settling -= heapq.heappop(self._heap)[2].settle

    def peek(self) -> float | None:
        """When the next live timer is due, or None."""
        self._drop_cancelled()
        return self._heap[0][0] if self._heap else None

    def settling(self) -> bool:
        """Whether a live settling timer is pending."""
        return bool(self._settling and any(t.settle and not t.cancelled for _, _, t in self._heap))

    def step(self) -> None:
        """Move to the next live timer and fire it."""
        self._drop_cancelled()
        if not self._heap:
            raise IndexError("no timer pending")
        time, _, timer = heapq.heappop(self._heap)
        self._settling -= timer.settle
        self._now = time
        timer.callback()

    def advance_to(self, time: float) -> None:
        """Set ``now`` forward to ``time``; the caller has fired every timer due before it."""
        if time < self._now:
            raise ValueError(f"cannot move the clock back from {self._now} to {time}")
        self._now = time
