"""The README's command examples print what the commands print: every complete
``$ kubespread ...`` text block (``scripts/make_readme_examples.py`` regenerates them), run as
on the 80-column terminal the README shows, matches line for line."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_readme_examples", ROOT / "scripts" / "make_readme_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
EXAMPLES = SCRIPT.examples((ROOT / "README.md").read_text())


def test_the_readme_has_complete_examples() -> None:
    commands = [c.split()[1] for c, _ in EXAMPLES]
    assert "schedule" in commands and "diff" in commands and "validate" in commands


@pytest.mark.slow
@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_a_readme_example_is_what_the_command_prints(command: str, expected: list[str]) -> None:
    assert SCRIPT.printed(command) == expected
