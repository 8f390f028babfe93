"""A stored pod (a dump's) is not walked in the unmodelled fields no command reads (the
project's decision for issue 38: stored objects are checked for what can break the run):
garbage there loads without a problem and every answer of the run is the one without those
fields; what a run reads of them, the key names, repeated keys, and any object to be created
are still checked as before, with the same messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubespread.admission.apiserver import creation_errors
from kubespread.api.documents import StrictDict
from kubespread.api.fastdecode import decode_checked
from kubespread.api.kinds import class_for
from kubespread.api.schema import check
from kubespread.cli.app import app
from kubespread.io import load, load_text
from shared_corpus import load_script

DUMP = load_script(Path(__file__).resolve().parents[2] / "benchmarks" / "dump.py")


@pytest.fixture(autouse=True)
def _no_repeated_key_read_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a fresh command: other tests' texts with repeated keys are not this run's."""
    monkeypatch.setattr(StrictDict, "made", 0)


def _items() -> list[dict[str, Any]]:
    nodes = [DUMP.node(i) for i in range(4)]
    dep, rs, _, _ = DUMP.deployment(0, 6)
    return [*nodes, dep, rs, *(DUMP.pod(i, rs, nodes[i % 4]) for i in range(6))]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
#: a volume no command reads: an object naming no local storage (emptyDir, hostPath)
_volume = st.dictionaries(st.text(max_size=8).filter(lambda k: k not in ("emptyDir", "hostPath")), _json)

#: a container status no command reads: one without a restart count
_status = st.dictionaries(st.text(max_size=8).filter(lambda k: k != "restartCount"), _json)

#: the unread unmodelled fields of a stored pod, where garbage goes: (path, its values)
UNREAD: dict[tuple[str | int, ...], st.SearchStrategy[Any]] = {
    ("spec", "volumes"): st.lists(_volume, max_size=3),
    ("status", "containerStatuses"): st.lists(_status, max_size=2),
    ("spec", "securityContext"): _json,
    ("spec", "dnsConfig"): _json,
    ("spec", "containers", 0, "volumeMounts"): _json,
    ("spec", "containers", 0, "livenessProbe"): _json,
    ("status", "podIPs"): _json,
    ("metadata", "managedFields"): _json,
}


def _put(item: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    at: Any = item
    for part in path[:-1]:
        at = at[part]
    at[path[-1]] = value


def _drop(item: dict[str, Any], path: tuple[str | int, ...]) -> None:
    at: Any = item
    for part in path[:-1]:
        at = at[part]
    at.pop(path[-1], None)


def _answers(tmp: Path, items: list[dict[str, Any]]) -> list[tuple[int, str]]:
    dump, checkout = tmp / "dump.json", tmp / "checkout.yaml"
    dump.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {}}))
    checkout.write_text(DUMP.CHECKOUT)  # a Deployment of 10 replicas
    out = []
    for extra in ([], ["-o", "json"]):
        result = CliRunner().invoke(
            app, ["schedule", "-f", str(dump), "-f", str(checkout), "--no-progress", *extra]
        )
        assert result.exit_code == 0, result.stderr
        out.append((result.exit_code, result.stdout + result.stderr))
    assert "checkout-" in out[0][1]
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(sorted(UNREAD)), st.data()), max_size=4))
def test_garbage_in_a_stored_pods_unread_fields_changes_no_answer(
    tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[int, tuple[str | int, ...], Any]]
) -> None:
    items, clean = _items(), _items()
    pods = [i for i, d in enumerate(items) if d["kind"] == "Pod"]
    for which, path, data in changes:
        _put(items[pods[which]], path, data.draw(UNREAD[path]))
        _drop(clean[pods[which]], path)
    loaded = load_text(json.dumps({"kind": "List", "items": items}), "d", json_only=True)
    assert [str(p) for p in loaded.problems] == []
    for lo in loaded.objects:  # `validate` judges a stored pod as a create would: unbroken
        creation_errors(lo.obj)
    tmp = tmp_path_factory.mktemp("garbage")
    assert _answers(tmp, items) == _answers(tmp_path_factory.mktemp("clean"), clean)


def _pod() -> dict[str, Any]:
    return copy.deepcopy(_items()[-1])


def test_a_stored_pod_is_still_checked_for_what_a_run_reads_and_for_repeated_keys() -> None:
    cls = class_for("v1", "Pod")
    assert cls is not None
    garbage = _pod()
    garbage["spec"]["securityContext"] = {"runAsUser": "root", "bogus": [1]}
    assert check("Pod", garbage) and decode_checked(cls, garbage) is not None
    for change in (
        lambda p: p["spec"]["volumes"].append({"name": "scratch", "emptyDir": {"sizeLimit": 5, "x": 1}}),
        lambda p: p["spec"].__setitem__("volumes", 3),
        lambda p: p["status"]["containerStatuses"][0].update(restartCount=2, redy=True),
        lambda p: p["spec"].__setitem__("dnsPolicy", 7),  # a string field's type
        lambda p: p["spec"].__setitem__("serviceAcount", "x"),  # a key the schema does not know
    ):
        pod = _pod()
        change(pod)
        assert check("Pod", pod) and decode_checked(cls, pod) is None
    text = json.dumps({"kind": "List", "apiVersion": "v1", "items": [_pod()]})
    repeated = text.replace('"readOnly": true', '"readOnly": true, "readOnly": false')
    assert repeated != text
    got = load_text(repeated, "dump.json", json_only=True)
    assert [str(p) for p in got.errors] == [
        "dump.json: Pod team-00/app-0000-00000000-00005: "
        'spec.containers[0].volumeMounts[0].readOnly: duplicate field "readOnly"'
    ]


@pytest.mark.parametrize("stored", [False, True])
def test_a_pod_to_create_keeps_its_full_validation(stored: bool, tmp_path: Path) -> None:
    """No uid, creationTimestamp (nor nodeName): a manifest to create, whose every field is
    walked, with the strict way's message; the same pod stored loads."""
    pod = _pod()
    pod["spec"]["securityContext"] = {"runAsUser": "root"}
    if not stored:
        for key in ("uid", "creationTimestamp"):
            del pod["metadata"][key]
        del pod["spec"]["nodeName"]
    path = tmp_path / "pod.json"
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [pod]}))
    got = [str(p) for p in load([path]).errors]
    if stored:
        assert got == []
    else:
        assert got == [
            f"{path}: Pod team-00/app-0000-00000000-00005: spec.securityContext.runAsUser: "
            "cannot unmarshal string into a field of type int64"
        ]
