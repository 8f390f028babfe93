"""Durations as Kubernetes writes them (metav1.Duration, Go's time.ParseDuration): ``90s``,
``1m30s``, ``2h``, ``250ms``; kubespread also takes a plain number of seconds. One parser for
scenario steps, command-line options and the Job duration annotation."""

from __future__ import annotations

import math
import re
from typing import Any, Final

__all__ = ["parse_duration"]

_PART: Final = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ms|h|m|s)")
_WHOLE: Final = re.compile(f"(?:{_PART.pattern})+")
_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
#: Go's time.Duration is int64 nanoseconds: ParseDuration refuses more ("invalid duration"), and
#: a virtual clock told to wait longer (or forever: 1e400, "inf") would never get there
MAX_SECONDS: Final = (2**63 - 1) / 1e9


def parse_duration(value: Any) -> float | None:
    """Seconds of a duration (``90s``, ``1h30m``, ``250ms``, ``45``, ``45.5``); None when the
    value is none of these, negative, or beyond Go's (about 292 years; so never infinite)."""
    seconds = _seconds(value)
    if seconds is None or not math.isfinite(seconds) or seconds > MAX_SECONDS:
        return None
    return seconds


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        return number if number >= 0 else None
    if not text or not _WHOLE.fullmatch(text):
        return None
    total = 0.0
    for part in _PART.findall(text):
        unit = "ms" if part.endswith("ms") else part[-1]
        total += float(part[: -len(unit)]) * _UNITS[unit]
    return total
