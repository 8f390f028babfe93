"""Inputs the fuzz run of issue 18 (benchmarks/fuzz.py) broke a command with, each as a user runs
it: valid-but-odd input runs as kube-scheduler would, a mistake ends in exit 1 with its path."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
runner = CliRunner()


def run(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_an_allocatable_amount_beyond_int64_is_the_largest_one(tmp_path: Path) -> None:
    """A decimal quantity has no cap when parsed (binary ones stop at 2**63-1): the node's
    allocatable pods or memory over int64 hold every pod, instead of overflowing."""
    nodes = (EXAMPLES / "cluster" / "nodes.yaml").read_text()
    for before, after in (
        ('pods: "110"}', 'pods: "9223372036854775808"}'),
        ("memory: 15Gi", 'memory: "99999999999999999999999"'),
        ("cpu: 3920m", 'cpu: "9223372036854775808"'),
    ):
        f = tmp_path / "nodes.yaml"
        f.write_text(nodes.replace(before, after))
        pod = EXAMPLES / "pods" / "one-constraint.yaml"
        r = run("schedule", "--no-progress", "-f", str(f), "-f", str(pod))
        assert r.exit_code == 0, (after, r.output)
        assert "mypod" in r.output


def test_an_endless_advance_is_an_error_with_its_step(tmp_path: Path) -> None:
    """advance: 1e400 (or "inf", or beyond Go's 292 years) used to wait forever."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for p in (EXAMPLES / "scenarios").glob("*.yaml"):
        (scenarios / p.name).write_text(p.read_text())
    base = (EXAMPLES / "scenarios" / "zone-failure.yaml").read_text()
    for value in ("1e400", '"inf"', "99999999999h"):
        f = scenarios / "endless.yaml"
        f.write_text(base.replace("advance: 5m", f"advance: {value}"))
        r = run("simulate", str(f))
        assert r.exit_code == 1, (value, r.output)
        assert "steps[3].advance: must be a duration" in r.output, r.output


def test_a_bound_pod_requesting_beyond_int64_fills_its_node(tmp_path: Path) -> None:
    """Its requests count in full (the node holds nothing more), without overflowing."""
    bound = tmp_path / "bound.yaml"
    bound.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  nodeName: node1\n  containers:\n"
        "  - name: c\n    image: nginx\n    resources:\n      requests:\n"
        '        memory: "9223372036854775808"\n        cpu: "99999999999999999999"\n'
    )
    pod = tmp_path / "small.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: small}\nspec:\n  nodeSelector: {node: node1}\n"
        "  containers:\n  - name: c\n    image: nginx\n    resources: {requests: {cpu: 10m}}\n"
    )
    nodes = EXAMPLES / "cluster" / "nodes.yaml"
    r = run("schedule", "--no-progress", "-o", "json", "-f", str(nodes), "-f", str(bound), "-f", str(pod))
    assert r.exit_code == 0, r.output
    assert "Insufficient cpu" in r.output, r.output


def test_the_longest_grace_period_deletes_at_the_last_timestamp(tmp_path: Path) -> None:
    """terminationGracePeriodSeconds 2**63-1 (an int64, valid): the deletionTimestamp of a pod
    scaled away is the last one RFC 3339 writes, not an overflow."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for p in (EXAMPLES / "scenarios").glob("*.yaml"):
        (scenarios / p.name).write_text(p.read_text())
    f = scenarios / "scale-down-imbalance.yaml"
    f.write_text(
        f.read_text().replace(
            "          containers: [",
            "          terminationGracePeriodSeconds: 9223372036854775807\n          containers: [",
        )
    )
    r = run("simulate", str(f))
    assert r.exit_code == 0, r.output
    assert "scale Deployment default/web to 3" in r.output


def test_timestamps_beyond_rfc3339_years_are_the_first_and_last() -> None:
    from kubespread.api.timestamps import timestamp

    assert timestamp(0) == "2026-01-01T00:00:00Z"
    assert timestamp(9.2e18) == "9999-12-31T23:59:59Z"
    assert timestamp(-9.2e18) == "0001-01-01T00:00:00Z"


def test_explain_takes_any_pod_argument_as_text(tmp_path: Path) -> None:
    """Brackets are no markup, and a name too long for a file is a pod name that is not found."""
    nodes = EXAMPLES / "cluster" / "nodes.yaml"
    for pod, want in (
        ("[/]", "error: pod [/] not found"),
        ("[/x].yaml", "error: [/x].yaml: no such file"),
        ("a" * 300, "error: pod default/aaa"),
    ):
        r = run("explain", pod, "--no-progress", "-f", str(nodes))
        assert r.exit_code in (1, 2), (pod, r.output)
        assert want in r.output, r.output


def test_a_file_name_too_long_is_a_load_problem(tmp_path: Path) -> None:
    name = str(tmp_path / ("b" * 300))
    r = run("schedule", "--no-progress", "-f", name)
    assert r.exit_code == 1, r.output
    assert "File name too long" in r.output and "b" * 300 in r.output.replace("\n", "")
