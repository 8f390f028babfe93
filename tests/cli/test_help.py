"""``--help`` at 80 columns, for every command: option names in full, kubectl-like metavars
(FILE, N, SECONDS), no Python types, wrapped at spaces, and a one-line summary per command."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from kubespread.cli.app import app


def commands() -> Iterator[tuple[list[str], typer.core.TyperCommand | typer.core.TyperGroup]]:
    """Every command and group with its path of names, the root first."""
    root = typer.main.get_command(app)
    todo: list[tuple[list[str], typer.core.TyperCommand | typer.core.TyperGroup]] = [([], root)]
    while todo:
        path, cmd = todo.pop(0)
        yield path, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            todo.append(([*path, name], sub))


ALL = list(commands())


def help_text(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TTY_COMPATIBLE": "0"})
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[" ".join(p) or "kubespread" for p, _ in ALL])
def test_help_at_80_columns_names_every_option_in_full_with_kubectl_metavars(
    path: list[str], cmd: typer.core.TyperCommand | typer.core.TyperGroup
) -> None:
    text = help_text(path)
    for param in cmd.params:
        if getattr(param, "hidden", False) or param.param_type_name != "option":
            continue
        for name in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(^|[ ,/]){re.escape(name)}([ ,]|$)", text, re.M), name
    assert "…" not in text
    usage = text.splitlines()[0]
    assert usage.startswith("Usage: kubespread") and "{" not in usage  # explain POD, not {POD}
    for python_type in ("<list[", "<bool>", "<int", "<str>", "<path>", "<float>", "\\["):
        assert python_type not in text
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    # wrapped at spaces only: no name or value split after a hyphen
    assert not [line for line in lines if re.search(r"\w-$", line)]
    # every option with a value names it in capitals (FILE, N, DIR) or is a flag
    for line in lines:
        m = re.match(r"^  (?:-\w, )?(--[\w-]+)(?: (\S+))?", line)
        if m and m.group(2) and not m.group(2).startswith("/"):
            assert re.fullmatch(r"[A-Z][A-Z_]*", m.group(2)), line


def test_the_command_list_has_one_line_per_command() -> None:
    text = help_text([])
    listed = text.split("Commands:\n", 1)[1].splitlines()
    root = typer.main.get_command(app)
    assert len(listed) == len(root.commands)  # type: ignore[attr-defined]
    for line in listed:
        name, summary = line.split(None, 1)
        assert name in root.commands and not summary.endswith("...")  # type: ignore[attr-defined]
