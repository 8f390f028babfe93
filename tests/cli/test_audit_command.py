"""``kubespread audit``: the table and the JSON of the zone-failure example, ``--vary``'s
verdict, the report, and bad input refused on stderr without a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
NODES = str(EXAMPLES / "nodes-3-zones.yaml")
DEPLOYMENTS = str(EXAMPLES / "zone-failure-deployments.yaml")
ZONE = "topology.kubernetes.io/zone"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["audit", *args])


def test_json_has_every_zone_failure_ranked() -> None:
    r = run("-f", NODES, "-f", DEPLOYMENTS, "--domains", ZONE, "-o", "json", "--processes", "2")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) == {"domains", "after", "seed", "workloads", "failures", "seconds"}
    assert doc["after"] == 600.0 and doc["domains"] == [ZONE]
    assert [f["rank"] for f in doc["failures"]] == [1, 2, 3]
    first = doc["failures"][0]
    assert set(first) == {"rank", "domain", "key", "value", "nodes", "harm", "pdbsBroken", "workloads"}
    strict = next(w for w in first["workloads"] if w["owner"] == "default/Deployment/strict")
    assert set(strict) == {
        "owner",
        "desired",
        "runningBefore",
        "running",
        "unavailable",
        "pending",
        "pendingReasons",
        "pdbsBroken",
        "recoverySeconds",
        "skew",
    }
    assert (strict["running"], strict["desired"], strict["pending"]) == (4, 6, 2)


def test_the_table_names_each_failure_and_its_worst_workloads() -> None:
    r = run("-f", NODES, "-f", DEPLOYMENTS, "--domains", f"{ZONE},kubernetes.io/hostname", "--after", "10m")
    assert r.exit_code == 0, r.output
    for text in ("zone=zone-a", "zone=zone-c", "hostname=c2", "default/strict 4/6", "never", "hint:"):
        assert text in r.stdout, text
    assert "whole again after 6 of 9 failures" in r.stdout  # each node alone: honor, strict recover


def test_vary_names_the_setting_that_survives(tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(Path(DEPLOYMENTS).read_text()) if d["metadata"]["name"] == "strict"]
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump_all(docs))
    r = run("-f", NODES, "-f", str(strict), "--domains", ZONE, "--vary", "nodeTaintsPolicy=Ignore,Honor")
    assert r.exit_code == 0, r.output
    assert "best: nodeTaintsPolicy=Honor: survives every topology.kubernetes.io/zone failure" in r.stdout
    r = run(
        "-f",
        NODES,
        "-f",
        str(strict),
        "--domains",
        ZONE,
        "--vary",
        "nodeTaintsPolicy=Ignore,Honor",
        "-o",
        "json",
    )
    doc = json.loads(r.stdout)
    assert doc["best"] == {"nodeTaintsPolicy": "Honor"}
    assert [v["survives"] for v in doc["variants"]] == [True, False]


@pytest.mark.slow  # draws the heat map
def test_report_writes_the_heat_map(tmp_path: Path) -> None:
    r = run("-f", NODES, "-f", DEPLOYMENTS, "--domains", ZONE, "--report", str(tmp_path))
    assert r.exit_code == 0, r.output
    page = (tmp_path / "report.html").read_text()
    assert "Availability per failure" not in page or "data:image/png" in page
    assert "data:image/png;base64," in page
    assert "Pending pods and why" in page and "topology.kubernetes.io/zone=zone-a" in page


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--domains", "example.com/rack"], 1, "no node carries the label 'example.com/rack'"),
        (["--after", "0s"], 2, "must be more than 0 seconds"),
        (["--after", "-5m"], 2, "--after"),
        (["--after", "soon"], 2, "must be a duration"),
        (["--vary", "colour=red"], 2, "unknown key 'colour'"),
        (["--vary", "maxSkew=0"], 2, "must be at least 1"),
    ],
)
def test_bad_options_are_refused(args: list[str], code: int, message: str) -> None:
    r = run("-f", NODES, "-f", DEPLOYMENTS, *args)
    assert r.exit_code == code, r.output
    assert message in " ".join(r.output.split())
    assert "Traceback" not in r.output


def test_a_cluster_without_nodes_is_refused() -> None:
    r = run("-f", DEPLOYMENTS)
    assert r.exit_code == 1
    assert "the input has no nodes" in r.output
    assert "Traceback" not in r.output


@pytest.mark.slow  # starts a Dask LocalCluster
def test_cluster_runs_on_dask_with_the_local_answer() -> None:
    distributed = pytest.importorskip(
        "distributed", reason="Dask distributed is not installed (kubespread[audit-dask])"
    )
    args = ["-f", NODES, "-f", DEPLOYMENTS, "--domains", ZONE, "-o", "json"]
    local = json.loads(run(*args).stdout)
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        r = run(*args, "--cluster", cluster.scheduler_address)
    assert r.exit_code == 0, r.output
    remote = json.loads(r.stdout)
    local.pop("seconds"), remote.pop("seconds")
    assert remote == local


def test_an_unreachable_cluster_is_a_clean_error() -> None:
    r = run("-f", NODES, "--cluster", "bogus://nowhere")
    assert r.exit_code == 1
    assert "--cluster bogus://nowhere: cannot connect" in " ".join(r.output.split())
    assert "Traceback" not in r.output
