"""The executables register only the command they run (its module's imports are most of a
short command's CPU time): its help is the full app's, the root's help and completion still
list every command, and no other command's module is imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app as full_app
from kubespread.cli.root import COMMANDS, GROUPS, app_for

NAMES = [c[0] for c in COMMANDS] + [g[0] for g in GROUPS]


@pytest.mark.parametrize("name", NAMES)
def test_a_named_command_alone_has_the_full_apps_help(name: str) -> None:
    runner = CliRunner()
    alone = runner.invoke(app_for([name, "--help"], {}), [name, "--help"], prog_name="kubespread")
    full = runner.invoke(full_app, [name, "--help"], prog_name="kubespread")
    assert alone.exit_code == full.exit_code == 0
    assert alone.output == full.output


def _registered(args: list[str], environ: dict[str, str]) -> list[str]:
    app = app_for(args, environ)
    return [c.name or "" for c in app.registered_commands] + [g.name or "" for g in app.registered_groups]


def test_only_the_named_command_is_registered() -> None:
    assert _registered(["schedule", "-f", "x.yaml"], {}) == ["schedule"]
    assert _registered(["webhook", "serve"], {}) == ["webhook"]


@pytest.mark.parametrize(
    ("args", "environ"),
    [
        ([], {}),
        (["--help"], {}),
        (["schedul"], {}),  # a misspelt name: the error lists the commands
        (["-f", "schedule"], {}),
        (["schedule"], {"_KUBESPREAD_COMPLETE": "complete_bash"}),
        (["schedule"], {"_KUBECTL_SPREAD_COMPLETE": "complete_zsh"}),
    ],
)
def test_help_errors_and_completion_get_every_command(args: list[str], environ: dict[str, str]) -> None:
    assert _registered(args, environ) == NAMES


def test_root_help_lists_every_command_as_before() -> None:
    runner = CliRunner()
    lazy = runner.invoke(app_for(["--help"], {}), ["--help"], prog_name="kubespread")
    full = runner.invoke(full_app, ["--help"], prog_name="kubespread")
    assert lazy.output == full.output
    assert all(name in lazy.output for name in NAMES)


def test_running_one_command_imports_no_other_commands_module() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['kubespread', 'schedule', '--help']\n"
        "from kubespread.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "cli = sorted(m for m in sys.modules if m.startswith('kubespread.cli.'))\n"
        "print(' '.join(cli), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: kubespread schedule" in done.stdout
    loaded = set(done.stderr.split())
    assert "kubespread.cli.schedule" in loaded
    others = {f"kubespread.cli.{module}" for _, _, module, _ in COMMANDS + GROUPS}
    others.discard("kubespread.cli.schedule")
    assert not loaded & others


def test_a_command_run_imports_no_validation_framework() -> None:
    """pydantic (typer 0.29 builds a TypeAdapter per parameter with it, about 0.1 s of every
    command) and the live extra's client stay out of a command that needs neither: the
    pyproject's typer cap and the live layer's confinement, as a run sees them."""
    code = (
        "import sys\n"
        "sys.argv = ['kubespread', 'schedule', '-f', 'examples/snapshot/cluster.yaml',"
        " '-f', 'examples/snapshot/checkout.yaml', '-o', 'json']\n"
        "from kubespread.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(' '.join(sorted(m.split('.')[0] for m in sys.modules)), file=sys.stderr)\n"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    assert json.loads(done.stdout)["placements"]  # it ran: the placements are printed
    loaded = set(done.stderr.split())
    assert "kubespread" in loaded and "typer" in loaded
    assert not loaded & {"pydantic", "pydantic_core", "kubernetes", "prometheus_client"}


def test_the_executables_collect_less_often() -> None:
    """A command's process runs the cyclic collector at :data:`COMMAND_GC_THRESHOLDS`, not
    Python's defaults, which walked the cluster's objects again and again, and lets
    ``gc_paused`` freeze what a big build made (the process ends with its command)."""
    from kubespread.api.model import COMMAND_GC_THRESHOLDS

    code = (
        "import gc, sys\n"
        "sys.argv = ['kubespread', 'get', '--help']\n"
        "from kubespread.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from kubespread.api import model\n"
        "print(list(gc.get_threshold()), model._FREEZING, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == f"{list(COMMAND_GC_THRESHOLDS)} True"  # and big builds frozen
    assert COMMAND_GC_THRESHOLDS != (700, 10, 10)
