"""Virtual seconds read from a stamp: the stamps parsed once give what parsing again gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.api.timestamps import _parse, timestamp, virtual_seconds

stamps = st.one_of(
    st.integers(-(10**11), 10**11).map(timestamp),
    st.sampled_from(["2026-11-20T10:00:00Z", "2026-11-20T10:00:00", "2026-11-20T10:00:00+02:00", "x", ""]),
    st.text(max_size=25),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(stamps, max_size=20))
def test_virtual_seconds_as_parsed_again(given_stamps: list[str]) -> None:
    for stamp in given_stamps + given_stamps:  # each asked twice: the second from the cache
        assert virtual_seconds(stamp) == (_parse(stamp) if stamp else None)


def test_round_trip() -> None:
    for seconds in (0, 59, 3600 * 24 * 400, -5):
        assert virtual_seconds(timestamp(seconds)) == seconds
