"""Building a ClusterState from manifests: everything in, or a report of every problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.api.selectors import parse_selector
from kubespread.io import SnapshotError, cluster_from_manifests, load_cluster, load_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_cluster_builds_with_bound_pods_counted_per_node() -> None:
    state, manifests = load_cluster([EXAMPLES / "cluster"])
    assert len(manifests) == 7
    assert list(state.node_names) == ["node1", "node2", "node3", "node4"]
    assert state.pod_counts(None, parse_selector("foo=bar")).tolist() == [1, 1, 1, 0]
    assert state.node_of("default/foo-3") == "node3"


def test_nodes_go_in_before_pods_whatever_the_file_order() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n1, containers: [{name: c}]}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    )
    state = cluster_from_manifests(load_text(text, "x.yaml"))
    assert state.node_of("default/p") == "n1"


def test_every_problem_is_reported_with_file_and_line_and_nothing_returned() -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: ghost, containers: [{name: c}]}\n"
    )
    with pytest.raises(SnapshotError) as info:
        cluster_from_manifests(load_text(text, "x.yaml"))
    problems = info.value.problems
    assert [(p.line, p.ref) for p in problems] == [(5, "Node n1"), (9, "Pod default/p")]
    assert all(p.source == "x.yaml" for p in problems)


def test_load_errors_stop_the_build(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: Node\nmetadata:\n\tname: x\n")
    with pytest.raises(SnapshotError) as info:
        load_cluster([tmp_path])
    assert "malformed YAML" in str(info.value)
