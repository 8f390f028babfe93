"""kubespread's scheduler against shared/conformance/cases: what kube-scheduler v1.35.4 (its
own framework and plugins, default profile) answered for 491 inputs; and against
shared/conformance/cases-1.36, the same inputs answered by kube-scheduler v1.36 (each carrying
``"kubeVersion": "1.36"``: NodeResourcesBalancedAllocation's score differs on 332 of them).
Every case must pass compare.py's diff_case: same feasible nodes, rejecting plugin and
reasons per node, weighted scores and totals, selected node and FitError message.

The corpus is not optional: without it this module fails rather than skips, so a CI machine
missing ../shared cannot pass silently."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.harness.evaluate import evaluate
from shared_corpus import SHARED, load_script

CORPUS = SHARED / "conformance"
CASES = sorted((CORPUS / "cases").rglob("*.input.json"))
CASES_136 = sorted((CORPUS / "cases-1.36").rglob("*.input.json"))


def _compare() -> ModuleType:
    return load_script(CORPUS / "compare.py")


def _expected(case: Path) -> dict:
    return json.loads(case.with_name(case.name.replace(".input.json", ".expected.json")).read_text())


def test_corpus_is_present() -> None:
    assert len(CASES) >= 491, f"expected the 491 conformance cases under {CORPUS / 'cases'}"
    assert len(CASES_136) >= 491, f"expected the 491 conformance cases under {CORPUS / 'cases-1.36'}"


def _id(case: Path) -> str:
    return case.name.removesuffix(".input.json")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_case(case: Path) -> None:
    answer = evaluate(json.loads(case.read_text()))
    problems = _compare().diff_case(_expected(case), answer)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASES_136, ids=[_id(c) for c in CASES_136])
def test_case_136(case: Path) -> None:
    doc = json.loads(case.read_text())
    assert doc.get("kubeVersion") == "1.36"
    problems = _compare().diff_case(_expected(case), evaluate(doc))
    assert not problems, "\n".join(problems)


def test_136_corpus_answers_differently_as_135() -> None:
    """The version the document names is what decides: the same 1.36 inputs answered as
    v1.35 (the field dropped) miss the expected answer on the cases #135573 changed."""
    differ = 0
    for case in CASES_136:
        doc = json.loads(case.read_text())
        doc.pop("kubeVersion")
        differ += bool(_compare().diff_case(_expected(case), evaluate(doc)))
    assert differ == 332


@pytest.mark.parametrize("name", ["docs-two-constraints", "design-anti-affinity-symmetry", "sequence-1-0007"])
def test_cli_gives_the_same_answer(name: str) -> None:
    """The command compare.py runs answers as the library does."""
    case = next(c for c in CASES if c.name.startswith(name))
    result = CliRunner().invoke(app, ["evaluate"], input=case.read_text())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == evaluate(json.loads(case.read_text()))
    assert not _compare().diff_case(_expected(case), json.loads(result.stdout))


@pytest.mark.parametrize("name", ["docs-two-constraints", "sequence-1-0007"])
def test_cli_answers_the_136_corpus(name: str) -> None:
    """compare.py's command answers a v1.36 document as v1.36, whatever --kube-version says:
    the document names the scheduler that answered it."""
    case = next(c for c in CASES_136 if c.name.startswith(name))
    result = CliRunner().invoke(app, ["evaluate", "--kube-version", "1.35"], input=case.read_text())
    assert result.exit_code == 0, result.output
    assert not _compare().diff_case(_expected(case), json.loads(result.stdout))
