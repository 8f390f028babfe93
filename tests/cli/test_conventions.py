"""The conventions of a command-line tool: ``python -m kubespread``, shell completion, the
``kubectl-spread`` plugin executable, ``--version`` without the package's imports,
``schedule --fail-on-pending``, YAML without anchors, parameter errors in plain words, and a
directory of examples that loads without a warning per scenario file."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import kubespread
from kubespread.cli import prog_name
from kubespread.cli.app import app
from kubespread.io import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PREEMPTION = [
    "-f",
    str(EXAMPLES / "scenarios" / "nodes-3-zones-1-node.yaml"),
    "-f",
    str(EXAMPLES / "preemption" / "batch.yaml"),
    "-f",
    str(EXAMPLES / "preemption" / "critical.yaml"),
]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_executables_are_kubespread_and_kubectls_plugin_name() -> None:
    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if "spread" in e.name}
    assert scripts == {"kubespread": "kubespread.cli:main", "kubectl-spread": "kubespread.cli:main"}
    assert prog_name("/usr/local/bin/kubectl-spread") == "kubectl spread"
    assert prog_name("/usr/local/bin/kubespread") == "kubespread"
    # completion scripts name the executable: a program name with a space would break them
    assert prog_name("/usr/local/bin/kubectl-spread", ["--show-completion"]) == "kubectl-spread"


@pytest.mark.slow
def test_python_m_kubespread_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubespread", "get", "nodes", "-f", str(EXAMPLES / "cluster")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["NAME", "STATUS"]


@pytest.mark.slow
def test_version_answers_without_importing_typer_or_the_models() -> None:
    code = (
        "import sys; sys.argv = ['kubespread', '--version']\n"
        "from kubespread.cli import main; main()\n"
        "print(sorted(m for m in ('typer', 'kubespread.io', 'kubespread.api', 'numpy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [f"kubespread {kubespread.__version__}", "[]"]


def test_shell_completion_is_offered() -> None:
    code, stdout, _ = run("--help")
    assert code == 0
    assert "--install-completion" in stdout and "--show-completion" in stdout


def test_fail_on_pending_exits_3_only_when_a_pod_stays_pending() -> None:
    code, stdout, stderr = run("schedule", *PREEMPTION, "--no-progress", "--fail-on-pending")
    assert code == 3
    assert "3 pending" in stdout  # the output is the usual one
    assert "error: 3 pod(s) pending (--fail-on-pending)" in stderr
    assert run("schedule", *PREEMPTION, "--no-progress")[0] == 0
    fits = ["-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "pods" / "two-constraints.yaml")]
    assert run("schedule", *fits, "--no-progress", "--fail-on-pending")[0] == 0


def test_yaml_output_has_no_anchors_or_aliases() -> None:
    code, stdout, _ = run("schedule", *PREEMPTION, "--no-progress", "-o", "yaml")
    assert code == 0
    assert "&id" not in stdout and "*id" not in stdout
    assert yaml.safe_load(stdout) == json.loads(
        run("schedule", *PREEMPTION, "--no-progress", "-o", "json")[1]
    )


def test_parameter_errors_carry_no_pydantic_wording() -> None:
    code, _, stderr = run("get", "deployments", "-f", str(EXAMPLES / "cluster"))
    assert code == 2
    assert "'deployments' is not one of 'nodes', 'pods'" in stderr and "Value error" not in stderr
    code, _, stderr = run("schedule", "-f", str(EXAMPLES / "cluster"), "--seed", "abc")
    assert code == 2
    assert "Invalid value for '--seed': 'abc' is not a valid int." in stderr and "Input should" not in stderr


def test_loading_the_examples_as_a_library_warns_about_nothing() -> None:
    manifests = kubespread.load([str(EXAMPLES)])
    assert manifests.problems == []
    assert len(manifests) > 0


def test_unknown_kinds_of_several_files_are_one_warning(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n"
        )
    (warning,) = [str(w) for w in load([str(tmp_path)]).warnings]
    assert warning == (
        f"{tmp_path}: skipped 3 objects of unknown kind ConfigMap (v1) in 3 files "
        f"({tmp_path}/a.yaml, {tmp_path}/b.yaml, {tmp_path}/c.yaml)"
    )


def test_schedule_locates_a_validation_error_at_the_fields_own_line(tmp_path: Path) -> None:
    """A workload whose creation validation refuses: the field's line, not the object's."""
    from typer.testing import CliRunner

    from kubespread.cli.app import app

    bad = tmp_path / "web.yaml"
    bad.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"
        "  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n"
        "    spec:\n      containers:\n      - name: web\n        image: nginx\n"
        "      topologySpreadConstraints:\n      - maxSkew: 0\n        topologyKey: zone\n"
        "        whenUnsatisfiable: DoNotSchedule\n        labelSelector: {matchLabels: {app: web}}\n"
    )
    nodes = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "nodes-3.yaml"
    r = CliRunner().invoke(app, ["schedule", "-f", str(nodes), "-f", str(bad), "--no-progress"])
    assert r.exit_code == 1
    assert (
        f"{bad}:17: Deployment default/web: spec.template.spec.topologySpreadConstraints[0].maxSkew"
        in r.stderr
    )
