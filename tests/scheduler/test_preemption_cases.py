"""Preemption cases as conformance-style files (tests/data/preemption: NAME.input.json and
NAME.expected.json), translated from kube-scheduler's preemption unit tests, judged by
compare.py's rules plus the ``preemption`` field's (tests/preemption_compare.py). More
translated cases can be dropped into the folder as they are."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kubespread.harness.evaluate import evaluate
from preemption_compare import diff_case, diff_preemption

CASES = sorted((Path(__file__).resolve().parents[1] / "data" / "preemption").glob("*.input.json"))


def _expected(case: Path) -> dict:
    return json.loads(case.with_name(case.name.replace(".input.json", ".expected.json")).read_text())


def test_the_cases_are_there() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.name.removesuffix(".input.json") for c in CASES])
def test_case(case: Path) -> None:
    answer = evaluate(json.loads(case.read_text()))
    problems = diff_case(_expected(case), answer)
    assert not problems, "\n".join(problems)


def test_the_extended_rules_see_a_wrong_preemption() -> None:
    case = next(c for c in CASES if "min-highest-priority" in c.name)
    answer = evaluate(json.loads(case.read_text()))
    assert diff_case(_expected(case), answer) == []
    for key, wrong in (("nominatedNode", "node1"), ("victims", ["default/p1"]), ("pdbViolations", 0)):
        bad = copy.deepcopy(answer)
        bad["results"][0]["preemption"][key] = wrong
        assert len(diff_case(_expected(case), bad)) == 1, key
    # the victims' order does not matter; a scheduled pod has no preemption
    assert diff_preemption({"victims": ["a", "b"]}, {"victims": ["b", "a"]}) == []
    assert diff_preemption(None, None) == [] and diff_preemption(None, {"nominatedNode": "x"})
