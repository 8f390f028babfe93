"""The README's command examples print what the commands print: every ```text block that
starts with ``$ kubespread ...`` and leaves nothing out (no ``...`` line) is run as on the
80-column terminal the README shows, and what it prints (stdout and stderr, as a terminal
shows them) must match line for line."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]


def examples() -> list[tuple[str, list[str]]]:
    text = (ROOT / "README.md").read_text()
    found = []
    for block in re.findall(r"```text\n(.*?)```", text, re.S):
        lines = block.rstrip("\n").splitlines()
        if not lines or not lines[0].startswith("$ kubespread "):
            continue
        if any(line.strip().startswith("...") for line in lines[1:]):
            continue  # an excerpt
        found.append((lines[0][2:], [line.rstrip() for line in lines[1:]]))
    return found


EXAMPLES = examples()


def test_the_readme_has_complete_examples() -> None:
    commands = [c.split()[1] for c, _ in EXAMPLES]
    assert "schedule" in commands and "diff" in commands


@pytest.mark.slow
@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_a_readme_example_is_what_the_command_prints(
    command: str, expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    env = {"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, shlex.split(command)[1:], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    # the progress bar's cursor codes (on stderr) are on lines of their own: not output
    lines = [
        (line, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line).rstrip()) for line in result.output.splitlines()
    ]
    printed = [text for line, text in lines if text or not line]
    assert printed == expected
