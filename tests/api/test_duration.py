"""Durations: Go's time.ParseDuration range, so that no wait is infinite."""

from __future__ import annotations

import pytest

from kubespread.api.duration import MAX_SECONDS, parse_duration


@pytest.mark.parametrize("value", ["90s", "1h30m", "250ms", 45, 45.5, "0", "2562047h"])
def test_durations_in_gos_range_are_read(value: object) -> None:
    assert parse_duration(value) is not None


@pytest.mark.parametrize(
    "value", [float("inf"), "inf", "1e400", 1e300, "2562048h", "99999999999h", float("nan"), "nan", -1, "-5m"]
)
def test_infinite_or_over_int64_nanoseconds_is_no_duration(value: object) -> None:
    assert parse_duration(value) is None


def test_the_limit_is_gos() -> None:
    assert pytest.approx(9223372036.854775807) == MAX_SECONDS
