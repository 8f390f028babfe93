"""The bundled kubectl dump (examples/snapshot): it loads unchanged, managedFields and all,
bound pods stay where they are, and the README's commands answer as it says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.io import load
from kubespread.sim.placement import place

pytestmark = pytest.mark.slow

SNAPSHOT = Path(__file__).resolve().parents[2] / "examples" / "snapshot"


@pytest.fixture(scope="module")
def raw_items() -> list[dict]:
    return yaml.load((SNAPSHOT / "cluster.yaml").read_text(), Loader=yaml.CSafeLoader)["items"]


def test_every_object_loads_unchanged(raw_items: list[dict]) -> None:
    manifests = load([SNAPSHOT / "cluster.yaml"])
    assert manifests.problems == []
    assert len(manifests.objects) == len(raw_items) > 300
    assert sum("managedFields" in item["metadata"] for item in raw_items) == len(raw_items)
    for item, lo in zip(raw_items, manifests.objects, strict=True):
        assert lo.obj.to_dict() == item, lo.ref


def test_bound_pods_stay_and_pending_pods_are_placed(raw_items: list[dict]) -> None:
    bound = {
        f"{i['metadata']['namespace']}/{i['metadata']['name']}": i["spec"]["nodeName"]
        for i in raw_items
        if i["kind"] == "Pod" and i["spec"].get("nodeName")
    }
    pending = {
        f"{i['metadata']['namespace']}/{i['metadata']['name']}"
        for i in raw_items
        if i["kind"] == "Pod" and not i["spec"].get("nodeName")
    }
    result = place(load([SNAPSHOT / "cluster.yaml"]))
    pods = result.sim.cluster.pods
    assert set(pods) == set(bound) | pending  # the dump is at rest: no pod created or deleted
    assert all(pods[key].spec.node_name == node for key, node in bound.items())
    placed = {p.key for p in result.placements}
    still = {p.key for p in result.final.pending}
    assert placed | still == pending and placed and still
    for p in result.final.pending:
        assert "didn't match pod topology spread constraints" in p.message


def test_the_readme_commands(tmp_path: Path) -> None:
    runner = CliRunner()
    cluster = str(SNAPSHOT / "cluster.yaml")
    res = runner.invoke(
        app, ["schedule", "-f", cluster, "-f", str(SNAPSHOT / "checkout.yaml"), "-o", "json", "--no-progress"]
    )
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    checkout = [p for p in doc["placements"] if p["owner"] == {"kind": "Deployment", "name": "checkout"}]
    assert len(checkout) == 9
    zone = next(r for r in doc["spread"] if r["pod"].startswith("checkout") and "zone" in r["topologyKey"])
    assert zone["skew"] <= 1 and sum(zone["domains"].values()) == 9
    (pending,) = doc["pending"]
    res = runner.invoke(
        app,
        ["explain", f"{pending['namespace']}/{pending['name']}", "-f", cluster, "--no-progress"],
        env={"COLUMNS": "80", "TTY_COMPATIBLE": "1"},  # the README's 80-column terminal
    )
    assert res.exit_code == 0, res.stderr
    assert "PodTopologySpread: node(s) didn't match pod topology spread constraints" in res.stdout
    assert "These spread constraints conflict" in " ".join(res.stdout.split())
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
