"""Regenerate the README's command examples from the commands themselves.

Every ```text block that starts with ``$ kubespread ...`` and leaves nothing out (no line
starting with ``...``: those are excerpts, kept by hand) is run as on the 80-column terminal
the README shows, and replaced by what it prints (stdout and stderr, as a terminal shows
them). ``--check`` changes nothing and exits 1 when a block differs (the test suite runs it).

    .venv/bin/python scripts/make_readme_examples.py [--check]
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```text\n(\$ kubespread [^\n]*)\n(.*?)```", re.S)
#: an 80-column terminal without colours (the progress bar's cursor codes are dropped)
TERMINAL = {"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def examples(text: str) -> list[tuple[str, list[str]]]:
    """(command, the lines the README shows) of each complete example."""
    found = []
    for m in BLOCK.finditer(text):
        lines = m.group(2).rstrip("\n").splitlines()
        if not any(line.strip().startswith("...") for line in lines):
            found.append((m.group(1)[2:], [line.rstrip() for line in lines]))
    return found


def printed(command: str) -> list[str]:
    """What ``command`` prints, run in the repository's root as the README runs it."""
    cwd = Path.cwd()
    try:
        os.chdir(ROOT)
        result = CliRunner().invoke(app, shlex.split(command)[1:], env=TERMINAL)
    finally:
        os.chdir(cwd)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise RuntimeError(f"{command}: {result.exception!r}")
    lines = [(line, _CONTROL.sub("", line).rstrip()) for line in result.output.splitlines()]
    return [text for line, text in lines if text or not line]


def regenerate(text: str) -> str:
    def replace(m: re.Match[str]) -> str:
        lines = m.group(2).rstrip("\n").splitlines()
        if any(line.strip().startswith("...") for line in lines):
            return m.group(0)
        body = "\n".join(printed(m.group(1)[2:]))
        return f"```text\n{m.group(1)}\n{body}\n```"

    return BLOCK.sub(replace, text)


def main(argv: list[str]) -> int:
    text = README.read_text()
    new = regenerate(text)
    if "--check" in argv:
        if new != text:
            print(
                "README.md: examples differ from what the commands print; run scripts/make_readme_examples.py"
            )
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print("README.md: examples regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
