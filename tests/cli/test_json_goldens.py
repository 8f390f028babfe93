"""Every command's ``-o json`` on the bundled examples is field for field what the committed
goldens hold (``tests/data/json-goldens/``, written by ``scripts/make_json_goldens.py``, whose
``CASES`` both share): reshaping what sim/ and plan/ return must not change what users read.

Compared after masking (``make_json_goldens.mask``): the values of members named ``seconds``,
``solveSeconds``, ``timings``, ``version`` and ``processes`` (wall-clock times and the machine)
become ``"<masked>"``, their presence still compared; the repository's absolute path in
strings becomes ``<root>``. Everything else, order of lists included, must be equal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared_corpus import load_script

ROOT = Path(__file__).resolve().parents[2]


SCRIPT = load_script(ROOT / "scripts" / "make_json_goldens.py")


def first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where ``got`` first differs from ``want`` (a JSON path and both values), else None."""
    if isinstance(got, dict) and isinstance(want, dict):
        if set(got) != set(want):
            return f"{path}: members {sorted(set(got) ^ set(want))} added or missing"
        for k in want:
            found = first_difference(got[k], want[k], f"{path}.{k}")
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            found = first_difference(g, w, f"{path}[{i}]")
            if found:
                return found
        if len(got) != len(want):
            return f"{path}: {len(got)} items, golden {len(want)}"
        return None
    if got != want or type(got) is not type(want):
        return f"{path}: {got!r}, golden {want!r}"
    return None


def test_every_command_with_json_output_is_covered() -> None:
    commands = {line.split()[0] for line in SCRIPT.CASES.values()}
    assert commands >= {
        "schedule",
        "explain",
        "diff",
        "validate",
        "get",
        "simulate",
        "capacity",
        "provision",
        "rebalance",
        "audit",
    }


@pytest.mark.parametrize("name", list(SCRIPT.CASES))
def test_json_is_the_golden(name: str) -> None:
    assert first_difference(SCRIPT.run(name), SCRIPT.load(name)) is None
