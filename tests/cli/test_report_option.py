"""``--report DIR`` on schedule, explain and simulate: one self-contained page whose pictures
come from the run (checked from their pixels), and the progress bar of long runs."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import node, pod, spread, write

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]+)">')


def pictures(page: str) -> dict[str, np.ndarray]:
    """alt text -> RGB pixels."""
    from matplotlib.image import imread

    return {
        alt: imread(io.BytesIO(base64.b64decode(data)), format="png")[..., :3]
        for data, alt in IMG.findall(page)
    }


def assert_not_blank(img: np.ndarray) -> None:
    background = img[0, 0]
    differs = np.abs(img - background).sum(axis=2) > 0.05
    assert differs.mean() > 0.02
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 20


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*args, "--no-progress"], env={"COLUMNS": "80"})
    return result.exit_code, result.stdout, result.stderr


def test_schedule_report_explains_the_pending_pod(tmp_path: Path) -> None:
    """4 replicas, one per node by required anti-affinity, on 3 nodes: the 4th is pending and
    is the pod the report explains."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    template = pod("x", {"app": "web"}, affinity=anti, topologySpreadConstraints=[spread("zone")])
    template["spec"]["topologySpreadConstraints"][0]["labelSelector"] = {"matchLabels": {"app": "web"}}
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": template["metadata"], "spec": template["spec"]},
        },
    }
    nodes = write(tmp_path / "nodes.yaml", [node("n1", "a"), node("n2", "a"), node("n3", "b")])
    dep = write(tmp_path / "deploy.yaml", [deploy])
    code, _, stderr = invoke("schedule", "-f", str(nodes), "-f", str(dep), "--report", str(tmp_path / "out"))
    assert code == 0, stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html"]
    page = (tmp_path / "out" / "report.html").read_text()
    hint = "Required pod anti-affinity on kubernetes.io/hostname closes 1 node(s)"
    assert hint in page  # the other two nodes: the zone spread
    assert "Placements</h2>" in page and "create Deployment default/web" in page
    pics = pictures(page)
    assert len(pics) == 5  # domains, skew, pending, heat map, time per plugin (the report times it)
    assert "<h3>Time per plugin</h3>" in page
    for img in pics.values():
        assert_not_blank(img)


def test_simulate_report_has_a_picture_per_question(tmp_path: Path) -> None:
    code, _, stderr = invoke(
        "simulate", str(EXAMPLES / "scenarios" / "zone-failure.yaml"), "-o", "json", "--report", str(tmp_path)
    )
    assert code == 0, stderr
    page = (tmp_path / "report.html").read_text()
    assert "step 2: fail node c1" in page
    pics = pictures(page)
    assert len(pics) == 4
    for img in pics.values():
        assert_not_blank(img)


def test_explain_report_heat_map_is_of_the_explained_pod(tmp_path: Path) -> None:
    code, _, stderr = invoke(
        "explain",
        str(EXAMPLES / "pods" / "one-constraint.yaml"),
        "-f",
        str(EXAMPLES / "cluster"),
        "--report",
        str(tmp_path),
    )
    assert code == 0, stderr
    page = (tmp_path / "report.html").read_text()
    assert "kubespread explain" in page and "default/mypod" in page


def test_long_runs_show_a_progress_bar_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal, stderr shows the bar with what is being created; off one, nothing."""
    from kubespread.cli import common

    buffer = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buffer, force_terminal=True, width=80))
    result = CliRunner().invoke(
        app, ["schedule", "-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "workloads"), "-o", "json"]
    )
    assert result.exit_code == 0
    shown = buffer.getvalue()
    assert "create Deployment default/web" in shown or "settling" in shown
    assert "\x1b[" in shown  # drawn with terminal control codes
