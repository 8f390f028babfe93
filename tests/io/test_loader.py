"""Manifest loading: files, directories, stdin, multi-document YAML, kubectl lists, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubespread.api import Node, Pod
from kubespread.io import load, load_text
from kubespread.io.dump import dump_objects

POD = """apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: team-a, labels: {app: web}}
spec:
  containers: [{name: app, image: nginx}]
"""
NODE = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
"""


def test_multi_document_yaml_keeps_order_and_lines() -> None:
    m = load_text(POD + "---\n" + NODE, "x.yaml")
    assert [lo.ref for lo in m.objects] == ["Pod team-a/web-1", "Node n1"]
    assert [lo.line for lo in m.objects] == [1, 7]
    assert not m.problems


def test_empty_documents_are_ignored() -> None:
    m = load_text("---\n---\n" + NODE + "---\n", "x.yaml")
    assert len(m) == 1 and not m.problems


def test_kubectl_list_with_items_and_typed_list_without_item_kinds() -> None:
    lst = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"}},
        ],
    }
    m = load_text(json.dumps(lst), "dump.json", json_only=True)
    assert [type(o).__name__ for o in m] == ["Node", "Pod"]
    typed = "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n"
    m = load_text(typed, "pods.yaml")
    assert [o.key for o in m.of_kind(Pod)] == ["default/a", "default/b"]
    assert [lo.line for lo in m.objects] == [4, 5]


def test_unknown_kinds_are_skipped_with_one_warning_per_kind() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n"
    text = "---\n".join([cm % 1, cm % 2, NODE])
    m = load_text(text, "x.yaml")
    assert len(m) == 1
    assert [str(w) for w in m.warnings] == ["x.yaml: skipped 2 objects of unknown kind ConfigMap (v1)"]
    assert not m.errors


def test_group_must_match_for_a_known_kind() -> None:
    m = load_text("apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: d}\n", "x.yaml")
    assert len(m) == 0 and len(m.warnings) == 1


def test_malformed_yaml_names_file_and_line_and_keeps_earlier_documents() -> None:
    m = load_text(NODE + "---\nkind: Pod\nmetadata: {name: [x\n", "bad.yaml")
    assert len(m) == 1
    (e,) = m.errors
    assert e.source == "bad.yaml" and e.line == 7
    assert str(e).startswith("bad.yaml:7: malformed YAML:")


def test_malformed_json_names_file_and_line() -> None:
    m = load_text('{\n  "kind": "Pod",\n  "metadata": {\n}', "bad.json", json_only=True)
    (e,) = m.errors
    assert e.line == 4 and "malformed JSON" in e.message


def test_wrong_type_gives_field_path_and_object() -> None:
    text = POD.replace(
        "containers: [{name: app, image: nginx}]", "topologySpreadConstraints: [{maxSkew: one}]"
    )
    (e,) = load_text(text, "x.yaml").errors
    assert str(e) == (
        "x.yaml:5: Pod team-a/web-1: spec.topologySpreadConstraints[0].maxSkew: "
        "cannot unmarshal string into a field of type int32"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata: {name: x}\n", "Required value: kind not set"),
        ("kind: Pod\nmetadata: {name: x}\n", "Required value: apiVersion not set"),
        ("- a\n- b\n", "a manifest must be a mapping (an object)"),
    ],
)
def test_documents_that_are_not_objects(text: str, message: str) -> None:
    (e,) = load_text(text, "x.yaml").errors
    assert e.message == message


def test_directories_recursive_only_manifest_suffixes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pod.yaml").write_text(POD)
    (tmp_path / "node.yml").write_text(NODE)
    (tmp_path / "notes.txt").write_text("not: a manifest")
    m = load([tmp_path])
    assert sorted(o.kind for o in m) == ["Node", "Pod"]
    assert not m.problems


def test_missing_path_and_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    m = load([tmp_path / "nope.yaml", tmp_path / "empty"])
    assert [p.message for p in m.errors] == ["no such file or directory"]
    assert len(m.warnings) == 1


def test_stdin() -> None:
    m = load(["-"], stdin_text=NODE)
    assert [lo.source for lo in m.objects] == ["<stdin>"]
    assert m.of_kind(Node)[0].name == "n1"


def test_dump_round_trip_through_a_list() -> None:
    m = load_text(POD + "---\n" + NODE, "x.yaml")
    again = load_text(dump_objects(m, "yaml"), "dump.yaml")
    assert [o.to_dict() for o in again] == [o.to_dict() for o in m]
    again = load_text(dump_objects(m, "json"), "dump.json", json_only=True)
    assert [o.to_dict() for o in again] == [o.to_dict() for o in m]
