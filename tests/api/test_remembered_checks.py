"""What makes a big dump cheaper to check must not change an answer: names remembered valid
(``validation.names``) and objects frozen after a big load (``model.gc_paused``)."""

from __future__ import annotations

import gc

import pytest

from kubespread.api import model
from kubespread.api.errors import Path
from kubespread.api.validation import names
from kubespread.api.validation.names import is_qualified_name, is_valid_label_value, validate_label_name


def test_a_name_remembered_valid_stays_valid_and_invalid_ones_are_still_refused() -> None:
    assert is_qualified_name("example.com/app") == []
    assert is_qualified_name("example.com/app") == []  # remembered
    bad = "example.com/app/extra"
    assert is_qualified_name(bad) == is_qualified_name(bad) != []
    # the wording of an error still follows the other arguments
    assert is_qualified_name(bad)[0].startswith("a qualified name ")
    assert is_qualified_name(bad, label_key=True)[0].startswith("a valid label key ")
    assert (
        [str(e) for e in validate_label_name("-x", Path("spec.key"))]
        == [str(e) for e in validate_label_name("-x", Path("spec.key"))]
        != []
    )
    assert is_valid_label_value("a" * 64) != [] and is_valid_label_value("a" * 63) == []


def test_only_so_many_names_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "_REMEMBERED", 0)
    # a fresh remembering check: nothing is kept, every answer is still right
    check = names._remember_valid(lambda value: [] if value.isalpha() else ["not letters"])
    assert [check(v) for v in ("ab", "ab", "a1")] == [[], [], ["not letters"]]


def test_many_objects_built_with_the_collector_paused_are_frozen_in_a_command_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frozen in a one-shot command's process; in any other (a library caller, a live
    component), a big build that is dropped again would keep its cycles for good."""
    monkeypatch.setattr(model, "_FREEZE_OVER", 2_000)
    monkeypatch.setattr(model, "_FREEZING", False)  # a library caller's process
    start = gc.get_freeze_count()
    with model.gc_paused():
        assert not gc.isenabled()
        dropped = [[] for _ in range(5_000)]
    assert gc.isenabled() and gc.get_freeze_count() == start and len(dropped) == 5_000
    monkeypatch.setattr(model, "_FREEZING", True)  # a command's (collect_less)
    gc.collect()
    before = gc.get_freeze_count()
    with model.gc_paused():
        few = [[] for _ in range(10)]
    assert gc.isenabled() and gc.get_freeze_count() == before
    with model.gc_paused():
        assert not gc.isenabled()
        many = [[] for _ in range(5_000)]
    assert gc.isenabled() and gc.get_freeze_count() >= before + 5_000
    gc.unfreeze()  # back in the collector's generations, as the rest of the tests expect
    assert len(few) + len(many) == 5_010
