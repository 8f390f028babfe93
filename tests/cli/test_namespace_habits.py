"""kubectl's ways of naming a pod and a namespace, on ``explain`` and ``schedule``: ``-n``,
``pod/NAME``, a bare name found in whichever namespace has it (or refused when several do),
and ``-n`` as ``kubectl apply -n`` reads it for the manifests to create."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import node, pod, write

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = str(ROOT / "examples" / "snapshot" / "cluster.yaml")
NODES = str(ROOT / "examples" / "scenarios" / "nodes-3-zones.yaml")
SPREAD = str(ROOT / "tests" / "data" / "check" / "spread.yaml")
SEARCH = "search-56795cc8ff-xkjnr"


def run(*args: str):
    return CliRunner().invoke(app, [*args, "--no-progress"])


def explained(*args: str) -> str:
    r = run("explain", *args, "-f", SNAPSHOT, "-o", "json")
    assert r.exit_code == 0, r.output
    return str(json.loads(r.stdout)["pod"])


def test_explain_finds_a_pod_by_name_however_kubectl_would_name_it() -> None:
    assert explained(f"shop/{SEARCH}") == f"shop/{SEARCH}"
    assert explained(SEARCH) == f"shop/{SEARCH}"  # the one pod of that name, wherever it is
    assert explained(f"pod/{SEARCH}") == f"shop/{SEARCH}"
    assert explained(SEARCH, "-n", "shop") == f"shop/{SEARCH}"
    r = run("explain", SEARCH, "-n", "payments", "-f", SNAPSHOT)
    assert r.exit_code == 1 and f"pod payments/{SEARCH} not found" in r.stderr


def _in(namespace: str, manifest: dict) -> dict:
    manifest["metadata"]["namespace"] = namespace
    return manifest


def test_a_name_in_two_namespaces_asks_for_one(tmp_path: Path) -> None:
    twins = [_in(ns, pod("twin", {"app": "x"})) for ns in ("one", "two")]
    cluster = write(tmp_path / "cluster.yaml", [node("n1", "a"), *twins])
    r = run("explain", "twin", "-f", str(cluster))
    assert r.exit_code == 1
    assert "pod twin is in namespaces one, two: give -n NAMESPACE or NAMESPACE/NAME" in r.stderr
    assert run("explain", "twin", "-n", "two", "-f", str(cluster)).exit_code == 0


def test_schedule_n_creates_the_manifests_in_that_namespace(tmp_path: Path) -> None:
    bare = tmp_path / "bare.yaml"
    bare.write_text(Path(SPREAD).read_text().replace(", namespace: default", ""))
    r = run("schedule", "-n", "shop", "-f", NODES, "-f", str(bare), "-o", "json")
    assert r.exit_code == 0, r.output
    placed = json.loads(r.stdout)["placements"]
    assert placed and {p["namespace"] for p in placed} == {"shop"}


def test_schedule_n_refuses_an_object_of_another_namespace(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(Path(SPREAD).read_text().replace("namespace: default", "namespace: prod"))
    r = run("schedule", "-n", "shop", "-f", NODES, "-f", str(other))
    assert r.exit_code == 1
    assert (
        'the namespace from the provided object "prod" does not match the namespace "shop". '
        "You must pass '--namespace=prod' to perform this operation." in r.stderr
    )
