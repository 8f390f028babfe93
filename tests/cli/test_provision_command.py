"""``kubespread provision``: the answer on the bundled example in JSON (replayed by
``schedule`` with the nodes added), the autoscaler side by side, the report, and bad input in
one line with exit 1 or 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "provision"
ARGS = ["-f", str(EXAMPLE / "cluster.yaml"), "-f", str(EXAMPLE / "web.yaml")]
TEMPLATES = ["--node-template", str(EXAMPLE / "templates.yaml")]


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["provision", *args])


def test_json_on_the_example_is_what_schedule_confirms(tmp_path: Path) -> None:
    result = run(*ARGS, *TEMPLATES, "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) >= {"add", "nodes", "cost", "proven", "pendingAfter", "placements", "baseline"}
    assert (doc["nodes"], doc["cost"], doc["proven"], doc["pendingAfter"]) == (3, 3, True, [])
    assert all(set(a) >= {"template", "zone", "count", "cost"} for a in doc["add"])
    assert len(doc["baseline"]["pending"]) == 5 and len(doc["placements"]) == 9
    # the answer's nodes, made from the templates, given to `schedule`: nothing pending
    templates = {
        t["metadata"]["name"]: t for t in yaml.safe_load_all((EXAMPLE / "templates.yaml").read_text())
    }
    nodes = []
    for a in doc["add"]:
        for name in a["nodes"]:
            node = json.loads(json.dumps(templates[a["template"]]))
            node["metadata"]["name"] = name
            node["metadata"]["labels"]["kubernetes.io/hostname"] = name
            nodes.append(node)
    added = tmp_path / "added.yaml"
    added.write_text(yaml.safe_dump_all(nodes))
    scheduled = CliRunner().invoke(
        app,
        [
            "schedule",
            "-f",
            str(EXAMPLE / "cluster.yaml"),
            "-f",
            str(added),
            "-f",
            str(EXAMPLE / "web.yaml"),
            "-o",
            "json",
        ],
    )
    assert scheduled.exit_code == 0, scheduled.output
    assert json.loads(scheduled.stdout)["pending"] == []
    # and one node fewer leaves pods pending
    one_less = tmp_path / "one-less.yaml"
    one_less.write_text(yaml.safe_dump_all(nodes[:-1]))
    fewer = CliRunner().invoke(
        app,
        [
            "schedule",
            "-f",
            str(EXAMPLE / "cluster.yaml"),
            "-f",
            str(one_less),
            "-f",
            str(EXAMPLE / "web.yaml"),
            "-o",
            "json",
        ],
    )
    assert json.loads(fewer.stdout)["pending"]


def test_the_table_shows_both_answers_side_by_side() -> None:
    result = run(*ARGS, *TEMPLATES, "--compare", "autoscaler")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "5 pods pending; add 3 nodes (cost 3), proven minimum; replayed: nothing pending"
    i = next(i for i, line in enumerate(lines) if line.startswith("cluster-autoscaler"))
    assert "add 4 nodes" in lines[i] and "in 3 loops" in lines[i + 1]


def test_the_report_is_written(tmp_path: Path) -> None:
    result = run(*ARGS, *TEMPLATES, "--report", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r" / "report.html").read_text()
    assert "data:image/png;base64," in page and "m5-a-1" in page


def write(tmp_path: Path, name: str, doc: dict[str, Any] | str) -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return str(path)


TEMPLATE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "t", "labels": {"topology.kubernetes.io/zone": "a"}},
    "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
}


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (
            ["--node-template", str(EXAMPLE / "web.yaml")],
            1,
            "a node template must be a Node, not a Deployment",
        ),
        ("no-zone", 1, "has no topology.kubernetes.io/zone label"),
        ("tainted", 1, "Deployment default/web: no node template can host its pods"),
        ("empty", 1, "holds nothing"),
        ([*TEMPLATES, "--max-per-template", "0"], 2, "must be at least 1, got 0"),
        ([*TEMPLATES, "--no-such-flag"], 2, "No such option: --no-such-flag"),
        ([], 2, "give at least one --node-template FILE"),
        ([*TEMPLATES, "--compare", "karpenter"], 2, "--compare"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path: Path, extra: Any, code: int, message: str) -> None:
    if extra == "no-zone":
        extra = ["--node-template", write(tmp_path, "t.yaml", {**TEMPLATE, "metadata": {"name": "t"}})]
    elif extra == "tainted":
        tainted = {**TEMPLATE, "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}
        extra = ["--node-template", write(tmp_path, "t.yaml", tainted)]
    elif extra == "empty":
        extra = ["--node-template", write(tmp_path, "t.yaml", "")]
    result = run(*ARGS, *extra)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
