"""``explain``'s hints say what is true of this pod: no finer topologyKey for an anti-affinity
already per node, the numbers behind "lower the requests", and a tie with the rule that broke
it and the nodes that were equally good."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import node, pod, write


def hints(tmp_path: Path, cluster: list[dict[str, Any]], new_pod: dict[str, Any]) -> list[str]:
    files = ["-f", str(write(tmp_path / "cluster.yaml", cluster))]
    manifest = str(write(tmp_path / "pod.yaml", [new_pod]))
    result = CliRunner().invoke(app, ["explain", manifest, *files, "-o", "json", "--no-progress"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["hints"]


def anti_affinity(key: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def two_full_nodes() -> list[dict[str, Any]]:
    nodes = [node("n1", "a"), node("n2", "b")]
    return nodes + [pod(f"web-{n}", {"app": "web"}, node_name=n) for n in ("n1", "n2")]


def test_hostname_anti_affinity_is_not_told_to_use_hostname(tmp_path: Path) -> None:
    new = pod("web-3", {"app": "web"}, affinity=anti_affinity("kubernetes.io/hostname"))
    (hint,) = [h for h in hints(tmp_path, two_full_nodes(), new) if "anti-affinity" in h]
    assert hint.startswith("Required pod anti-affinity on kubernetes.io/hostname closes 2 node(s)")
    assert "finer" not in hint and "one per node" in hint


def test_zone_anti_affinity_is_told_to_use_a_finer_key(tmp_path: Path) -> None:
    new = pod("web-3", {"app": "web"}, affinity=anti_affinity("topology.kubernetes.io/zone"))
    (hint,) = [h for h in hints(tmp_path, two_full_nodes(), new) if "anti-affinity" in h]
    assert "a finer topologyKey than topology.kubernetes.io/zone such as kubernetes.io/hostname" in hint


def requesting(name: str, cpu: str, memory: str, node_name: str | None = None) -> dict[str, Any]:
    resources = {"resources": {"requests": {"cpu": cpu, "memory": memory}}}
    p = pod(name, {}, node_name=node_name)
    p["spec"]["containers"][0].update(resources)
    return p


def test_insufficient_resources_give_the_requests_and_the_most_free(tmp_path: Path) -> None:
    cluster = [
        node("n1", "a", cpu="4"),
        node("n2", "b", cpu="4"),
        requesting("big-1", "2500m", "1Gi", "n1"),
        requesting("big-2", "3", "1Gi", "n2"),
    ]
    (hint,) = [h for h in hints(tmp_path, cluster, requesting("wants-2", "2", "2Gi")) if "allocatable" in h]
    assert hint.startswith("2 node(s) lack free allocatable resources for the pod's requests: ")
    assert "it requests cpu 2; the most free on those nodes is cpu 1500m (on n1)" in hint
    assert "memory" not in hint  # memory fits: only what is short is compared


def test_a_tie_says_how_it_was_broken_and_names_the_other_nodes(tmp_path: Path) -> None:
    cluster = [node("n1", "a"), node("n2", "a"), node("n3", "a")]
    (hint,) = [h for h in hints(tmp_path, cluster, pod("solo", {})) if h.startswith("Tie")]
    assert hint.startswith("Tie: 3 nodes share the top total ")
    assert "kube-scheduler takes the top of its score heap" in hint
    assert "n1 at parallelism 1 (kubespread's answer)" in hint
    assert "at its default parallelism 16 Filter's threads race and any of them may win" in hint
    assert hint.endswith("Equally good: n2, n3.")


def test_a_tie_across_zones_names_them(tmp_path: Path) -> None:
    cluster = [node("n1", "a"), node("n2", "b"), node("n3", "c")]
    (hint,) = [h for h in hints(tmp_path, cluster, pod("solo", {})) if h.startswith("Tie")]
    assert hint.startswith("Tie: 3 nodes in 3 zones (a, b, c) share the top total ")


def test_no_tie_no_tie_hint(tmp_path: Path) -> None:
    cluster = [node("n1", "a", cpu="4"), node("n2", "a", cpu="8")]
    new = requesting("solo", "1", "1Gi")
    assert not [h for h in hints(tmp_path, cluster, new) if h.startswith("Tie")]


def test_a_bound_pod_on_another_tied_node_is_said_to_run_there(tmp_path: Path) -> None:
    """Explained as if scheduled now, the bound pod's tie goes to n1 (the heap's top: first
    found); it runs on n3, as good a node: the hint says so rather than reading as a wrong
    placement."""
    cluster = [node("n1", "a"), node("n2", "a"), node("n3", "a"), pod("solo", {}, node_name="n3")]
    write(tmp_path / "cluster.yaml", cluster)
    args = ["explain", "solo", "-f", str(tmp_path / "cluster.yaml"), "-o", "json", "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (hint,) = [h for h in json.loads(result.stdout)["hints"] if h.startswith("Tie")]
    assert "n1 at parallelism 1 (kubespread's answer)" in hint and "Equally good: n2, n3." in hint
    assert hint.endswith("The pod runs on n3: one of them, picked when it was placed.")


def test_a_node_short_of_several_resources_counts_once(tmp_path: Path) -> None:
    full = node("n1", "a", cpu="4")
    full["status"]["allocatable"]["pods"] = "1"
    cluster = [full, node("n2", "a", cpu="4"), pod("there", {}, node_name="n1")]
    (hint,) = [h for h in hints(tmp_path, cluster, requesting("big", "5", "32Gi")) if "allocatable" in h]
    assert hint.startswith("2 node(s) lack free allocatable resources for the pod's requests: ")
    assert (
        "it requests cpu 5, memory 32Gi; the most free on those nodes is cpu 4 (on n1), memory 16Gi (on n1)"
        in hint
    )
    assert "1 of them are at their pod limit (allocatable pods)" in hint


def test_a_bound_pod_explained_elsewhere_says_where_it_runs(tmp_path: Path) -> None:
    cluster = [node("n1", "a"), node("n2", "a"), node("n3", "a"), pod("solo", {}, node_name="n3")]
    write(tmp_path / "cluster.yaml", cluster)
    args = ["explain", "solo", "-f", str(tmp_path / "cluster.yaml"), "--no-progress"]
    table = CliRunner().invoke(app, args)
    assert table.stdout.splitlines()[0] == "default/solo runs on n3; scheduled now it would go to n1 (scored)"
    doc = json.loads(CliRunner().invoke(app, [*args, "-o", "json"]).stdout)
    assert (doc["runningOn"], doc["selectedNode"]) == ("n3", "n1")
