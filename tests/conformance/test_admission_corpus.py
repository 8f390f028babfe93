"""kubespread.admission against shared/conformance/admission: what kube-apiserver v1.36 answered
to 240 manifests (README there). Every case must pass compare_admission.diff_case: rejections by
their (field, reason) causes, acceptances by the stored object's recorded parts (defaulting,
mutating admission and the matchLabelKeys merge included). The messages, which the corpus only
counts, must all be identical too. The admission steps alone are tested in tests/admission."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from kubespread.admission.apiserver import admit_text
from kubespread.cli.app import app
from shared_corpus import SHARED, load_script

CORPUS = SHARED / "conformance" / "admission"
CASES = CORPUS / "cases"

needs_corpus = pytest.mark.skipif(
    not (CASES.is_dir() and (CORPUS / "compare_admission.py").is_file()),
    reason=f"the admission corpus is not there ({CORPUS}): it lives in the shared checkout beside the repo",
)


def _compare() -> ModuleType:
    return load_script(CORPUS / "compare_admission.py")


def _names() -> list[str]:
    if not CASES.is_dir():
        return []
    return sorted(f.name.removesuffix(".input.yaml") for f in CASES.glob("*.input.yaml"))


def _expected(name: str) -> dict[str, Any]:
    return json.loads((CASES / f"{name}.expected.json").read_text())


def _input(name: str) -> str:
    return (CASES / f"{name}.input.yaml").read_text()


@needs_corpus
@pytest.mark.parametrize("name", _names())
def test_case_matches(name: str) -> None:
    expected, actual = _expected(name), admit_text(_input(name))
    assert _compare().diff_case(expected, actual) == []


@needs_corpus
def test_the_corpus_is_whole() -> None:
    answers = [_expected(n)["accepted"] for n in _names()]
    assert (len(answers), answers.count(True), answers.count(False)) == (240, 115, 125)


@pytest.mark.slow
@needs_corpus
def test_rejection_messages_are_identical() -> None:
    """Not a pass/fail rule of the corpus (messages are only counted there), but we match them
    all: status message and every cause's message."""
    compare = _compare()
    rejected = [n for n in _names() if not _expected(n)["accepted"]]
    differ = [n for n in rejected if not compare.messages_identical(_expected(n), admit_text(_input(n)))]
    assert len(rejected) == 125
    assert differ == [], f"messages identical: {len(rejected) - len(differ)}/{len(rejected)}"


@pytest.mark.slow
@needs_corpus
def test_the_command_gives_the_same_answers() -> None:
    """``kubespread admit`` (what compare_admission.py runs) answers as admit_text does."""
    runner = CliRunner()
    for name in _names():
        result = runner.invoke(app, ["admit"], input=_input(name))
        assert result.exit_code == 0, (name, result.output)
        assert json.loads(result.stdout) == admit_text(_input(name)), name
