"""A quantity decoded from text is one object per text (``api.model._DECODED``): the same
amount, format and text as parsing it afresh, and never the object a bare number (which is
given its ``number``) decodes to."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.api.model import _GO_SPACE, _dec_quantity
from kubespread.api.quantity import Quantity, QuantityError

_TEXTS = st.one_of(
    st.from_regex(r"\A[+-]?[0-9]{0,4}(\.[0-9]{0,3})?(m|k|M|G|Ki|Mi|Gi|e3|E-2)?\Z"),
    st.sampled_from(["100m", "256Mi", "1", "0.5", " 2Gi ", "1e3", "-1", "", "lots"]),
)


def _fields(q: Quantity) -> tuple[object, ...]:
    return (q.nanos, q.format, q.text, q.number)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXTS, min_size=1, max_size=6))
def test_a_shared_quantity_is_what_parsing_its_text_afresh_gives(texts: list[str]) -> None:
    for text in texts * 2:  # the second time from the table
        try:
            fresh = Quantity.parse(text.strip(_GO_SPACE))
        except QuantityError:
            fresh = None
        try:
            got = _dec_quantity(text)
        except Exception:  # a DecodeError, as from the parse
            assert fresh is None
            continue
        assert fresh is not None and _fields(got) == _fields(fresh)
        assert _dec_quantity(text) is got


def test_a_bare_number_gets_an_object_of_its_own() -> None:
    shared = _dec_quantity("3")
    number = _dec_quantity(3)
    assert number is not shared and number.number == 3
    assert shared.number is None and _dec_quantity("3") is shared
    assert _dec_quantity(3.0).number == 3.0 and _dec_quantity("3").number is None
