"""``kubespread evaluate``: answers on stdout; malformed input exits 2 with one line on stderr."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from builders import make_node, make_pod
from kubespread.cli.app import app

runner = CliRunner()


def _doc(**over: object) -> dict:
    doc: dict = {
        "mode": "sequence",
        "config": {"plugins": "default"},
        "nodes": [make_node("a").dict(), make_node("b").dict()],
        "pods": [],
        "namespaces": [],
        "incoming": [make_pod("p1").req(cpu="3").dict(), make_pod("p2").req(cpu="3").dict()],
    }
    doc.update(over)
    return doc


def test_sequence_mode_counts_earlier_placements() -> None:
    result = runner.invoke(app, ["evaluate"], input=json.dumps(_doc()))
    assert result.exit_code == 0, result.output
    r1, r2 = json.loads(result.stdout)["results"]
    assert r1["selectedNode"] == "a"  # tie on every score: the smaller name
    assert r2["selectedNode"] == "b"  # a is now too full for another 3 CPUs
    assert {n["name"]: n.get("filter", {}).get("reasons") for n in r2["nodes"]}["a"] == ["Insufficient cpu"]


def test_evaluate_mode_judges_every_pod_on_the_initial_cluster() -> None:
    result = runner.invoke(app, ["evaluate"], input=json.dumps(_doc(mode="evaluate")))
    r1, r2 = json.loads(result.stdout)["results"]
    assert r1["selectedNode"] == r2["selectedNode"] == "a"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "error: stdin: not JSON: Expecting property name enclosed in double quotes (line 1, column 2)",
        ),
        ("[]", "error: stdin: input: must be a JSON object"),
        (
            json.dumps(_doc(mode="later")),
            "error: stdin: mode: must be one of evaluate, sequence, got 'later'",
        ),
        (json.dumps(_doc(nodes={})), "error: stdin: nodes: must be a list"),
        (
            json.dumps(_doc(incoming=[{"metadata": {"name": 5}}])),
            "error: stdin: incoming[0].metadata.name: cannot unmarshal number into a string field",
        ),
        (
            json.dumps(_doc(pods=[make_pod("x").node("nowhere").dict()])),
            'error: stdin: pods[0]: pod "default/x" is bound to node "nowhere", which does not exist',
        ),
        (
            json.dumps(
                _doc(config={"plugins": "default", "interPodAffinity": {"hardPodAffinityWeight": -1}})
            ),
            "error: stdin: config: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: "
            "Invalid value: -1: not in valid range [0, 100]",
        ),
        (
            json.dumps(_doc(config={"plugins": ["x"]})),
            'error: stdin: config.plugins: only "default" is supported',
        ),
    ],
)
def test_malformed_input_exits_2_with_one_line(text: str, message: str) -> None:
    result = runner.invoke(app, ["evaluate"], input=text)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert "Traceback" not in result.output


def test_missing_file_is_a_one_line_error(tmp_path) -> None:
    result = runner.invoke(app, ["evaluate", str(tmp_path / "none.json")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'none.json'}: No such file or directory"
