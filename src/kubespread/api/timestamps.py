"""Virtual time as the API shows it: seconds on the simulation clock <-> RFC 3339 stamps.

The simulation, its controllers and the live hosts all write creationTimestamps, condition
times and deletion timestamps through these, so a stamp written by one reads back the same
in another (the live hosts count wall seconds on the same scale).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = ["EPOCH", "timestamp", "virtual_seconds"]

#: virtual time 0, as creationTimestamps and event times show it
EPOCH: Final = datetime(2026, 1, 1, tzinfo=UTC)


#: the stamps RFC 3339 has (metav1.Time writes years 0000 to 9999 only; Python's start at 1): a
#: time beyond, such as now plus a terminationGracePeriodSeconds of 2**63-1, shows as the last
_FIRST: Final = datetime(1, 1, 1, tzinfo=UTC)
_LAST: Final = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def timestamp(seconds: float) -> str:
    """RFC 3339 (second precision, as the API server writes it) for a virtual time."""
    return _stamp(int(seconds))


@functools.lru_cache(maxsize=4096)
def _stamp(offset: int) -> str:
    """:func:`timestamp` of a whole second, formatted once (a simulation stamps thousands of
    objects at the same instant)."""
    if offset > (_LAST - EPOCH).total_seconds():
        when = _LAST
    elif offset < (_FIRST - EPOCH).total_seconds():
        when = _FIRST
    else:
        when = EPOCH + timedelta(seconds=offset)
    return f"{when.year:04d}-{when:%m-%dT%H:%M:%S}Z"


def virtual_seconds(stamp: str | None) -> float | None:
    """The inverse of :func:`timestamp`: an RFC 3339 time as virtual seconds; None if absent or
    not a time with a zone."""
    if not stamp:
        return None
    return _seconds(stamp) if isinstance(stamp, str) else _parse(stamp)


def _parse(stamp: str) -> float | None:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return (when - EPOCH).total_seconds()


#: :func:`virtual_seconds` of a stamp, parsed once (a dump's objects are created by the
#: thousand in the same second)
_seconds = functools.lru_cache(maxsize=4096)(_parse)
