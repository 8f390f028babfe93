"""Output to a pipe or a file never wraps: tables are sized to their content, one line per
row, as kubectl prints them (``| head``, ``| grep``); ``-o wide`` adds columns. On a terminal
tables still fold to its width."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import node, pod, write

#: names longer than an 80-column table leaves them, without a shared suffix to cut
NAMES = [f"worker-{i:02d}-{'abcdefghij' * 4}-{zone}" for i, zone in enumerate("abcabc")]
ZONES = ["eu-central-1" + "abc"[i % 3] for i in range(len(NAMES))]


def run(*args: str, terminal: bool = False) -> list[str]:
    """stdout lines; ``terminal``: as on an 80-column terminal (TTY_COMPATIBLE), else a pipe."""
    env = {"COLUMNS": "80", "TTY_COMPATIBLE": "1" if terminal else "0"}
    result = CliRunner().invoke(app, [*args], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    nodes = [node(n, z) for n, z in zip(NAMES, ZONES, strict=True)]
    nodes[0]["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "m6i.2xlarge"
    pods = [pod(f"web-{i}-with-a-rather-long-generated-name", {"app": "web"}) for i in range(4)]
    pods.append(pod("bound-pod", {"app": "web"}, node_name=NAMES[1], priority=1000))
    return write(tmp_path / "cluster.yaml", nodes + pods)


def assert_one_line_per_name(lines: list[str], names: list[str], zones: list[str] | None = None) -> None:
    """Each name whole on one table row (with its zone, the next cell, when given), and no
    line that is only the rest of a cell."""
    for i, name in enumerate(names):
        rows = [line.split() for line in lines if name in line.split()]
        assert rows, name
        if zones:
            assert any(zones[i] in row for row in rows), name
    for line in lines:
        assert not line.startswith(" " * 10), f"a wrapped cell: {line!r}"
        assert line == line.rstrip(), "trailing blanks"


def test_get_nodes_to_a_pipe_keeps_every_row_on_one_line(cluster: Path) -> None:
    lines = run("get", "nodes", "-f", str(cluster))
    assert len(lines) == 1 + len(NAMES)
    assert lines[0].split() == ["NAME", "STATUS", "ZONE", "CPU", "MEMORY", "PODS", "TAINTS"]
    assert_one_line_per_name(lines, NAMES)
    assert max(len(line) for line in lines) > 80


def test_get_nodes_wide_adds_columns_without_wrapping(cluster: Path) -> None:
    lines = run("get", "nodes", "-f", str(cluster), "-o", "wide")
    assert len(lines) == 1 + len(NAMES)
    assert lines[0].split()[-3:] == ["REGION", "INSTANCE-TYPE", "ARCH"]
    assert lines[1].split()[0] == NAMES[0] and "m6i.2xlarge" in lines[1].split()
    assert_one_line_per_name(lines, NAMES)


def test_get_pods_wide_adds_priority_nominated_node_and_controller(cluster: Path) -> None:
    lines = run("get", "pods", "-f", str(cluster), "-o", "wide")
    assert "PRIORITY" in lines[0] and "NOMINATED NODE" in lines[0] and "CONTROLLED BY" in lines[0]
    (bound,) = [line for line in lines if line.split()[1] == "bound-pod"]
    assert NAMES[1] in bound.split() and "1000" in bound.split()


def test_explain_to_a_pipe_keeps_node_names_and_hints_whole(cluster: Path) -> None:
    lines = run("explain", "web-0-with-a-rather-long-generated-name", "-f", str(cluster), "--no-progress")
    assert_one_line_per_name(lines, NAMES, ZONES)
    wide = run("explain", "web-0-with-a-rather-long-generated-name", "-f", str(cluster), "-o", "wide")
    assert_one_line_per_name(wide, NAMES, ZONES)


def test_schedule_to_a_pipe_keeps_pod_rows_on_one_line(cluster: Path) -> None:
    lines = run("schedule", "-f", str(cluster), "--no-progress")
    pods = [f"web-{i}-with-a-rather-long-generated-name" for i in range(4)]
    assert_one_line_per_name(lines, pods)
    for name in pods:
        (row,) = [line for line in lines if name in line]
        assert any(n in row for n in NAMES), "the node is on the pod's line"
    wide = run("schedule", "-f", str(cluster), "--no-progress", "-o", "wide")
    (head,) = [line for line in wide if line.startswith("pod ")]
    assert head.split() == ["pod", "node", "zone", "score", "feasible", "tied"]


def test_on_a_terminal_tables_fold_to_its_width(cluster: Path) -> None:
    lines = run("get", "nodes", "-f", str(cluster), terminal=True)
    assert max(len(line) for line in lines) <= 80
    assert len(lines) > 1 + len(NAMES)
