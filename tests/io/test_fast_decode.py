"""The fast decoding of a stored object (``api.fastdecode.decode_checked``) answers as the
strict check and ``from_dict`` together: the same object when nothing is wrong, and nothing
(so the strict way speaks, with its one message) when anything might be."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.api.fastdecode import decode_checked
from kubespread.api.kinds import class_for
from kubespread.api.schema import check
from kubespread.io import loader
from kubespread.io.loader import load, load_text

REPO = Path(__file__).resolve().parents[2]


def _dump_pod() -> dict[str, Any]:
    """A pod as a kubectl dump writes it (defaulted spec, status)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2026-11-20T10:00:00Z",
            "generateName": "web-7d9c-",
            "labels": {"app": "web", "pod-template-hash": "7d9c"},
            "name": "web-7d9c-abcde",
            "namespace": "team-00",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": "web-7d9c",
                    "uid": "rs-uid",
                }
            ],
            "resourceVersion": "100001",
            "uid": "pod-uid",
        },
        "spec": {
            "containers": [
                {
                    "image": "registry.example.com/web:1.0.0",
                    "name": "app",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": 1}},
                }
            ],
            "nodeName": "node-1",
            "priority": 0,
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                }
            ],
            "topologySpreadConstraints": [
                {
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "matchLabelKeys": ["pod-template-hash"],
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ],
        },
        "status": {
            "conditions": [{"lastProbeTime": None, "status": "True", "type": "Ready"}],
            # a container that restarted: the ranking reads the statuses, so they are walked
            "containerStatuses": [
                {"name": "app", "ready": True, "restartCount": 1, "image": "x", "imageID": ""}
            ],
            "phase": "Running",
            "podIP": "10.0.0.1",
        },
    }


def _same(a: Any, b: Any) -> bool:
    return a == b and a.to_dict() == b.to_dict() and a._keys == b._keys and a.extra == b.extra


def _manifests() -> list[dict[str, Any]]:
    """Every object of the bundled examples and test data, as parsed."""
    out = []
    for path in sorted([*REPO.glob("examples/**/*.yaml"), *REPO.glob("tests/data/**/*.yaml")]):
        docs, _ = loader.parse_documents(path.read_text())
        for d in docs:
            items = d.data.get("items") if isinstance(d.data, dict) else None
            for item in items if isinstance(items, list) else [d.data]:
                if isinstance(item, dict) and isinstance(item.get("kind"), str):
                    out.append(item)
    return out


def test_the_examples_decode_as_from_dict_does_or_go_the_strict_way() -> None:
    fast = 0
    for data in [*_manifests(), _dump_pod()]:
        cls = class_for(str(data.get("apiVersion")), str(data.get("kind")))
        if cls is None:
            continue
        got = decode_checked(cls, copy.deepcopy(data))
        if got is None:
            continue
        fast += 1
        assert not check(cls.KIND, data), data
        assert _same(got, cls.from_dict(data)), data
    assert fast > 100  # the common shape does take the fast way


# each a change to the dump pod and the one message the strict way gives for it
BROKEN = {
    "unknown field": (
        lambda p: p["spec"]["containers"][0].__setitem__("resoures", {}),
        'spec.containers[0].resoures: unknown field "resoures" (did you mean "resources"?)',
    ),
    "unknown field in an unmodelled part": (
        lambda p: p["status"]["containerStatuses"][0].__setitem__("redy", True),
        'status.containerStatuses[0].redy: unknown field "redy" (did you mean "ready"?)',
    ),
    "string for an integer": (
        lambda p: p["spec"]["containers"][0]["ports"][0].__setitem__("containerPort", "8080"),
        "spec.containers[0].ports[0].containerPort: cannot unmarshal string into a field of type int32",
    ),
    "int32 out of range": (
        lambda p: p["spec"]["topologySpreadConstraints"][0].__setitem__("maxSkew", 2**31),
        "spec.topologySpreadConstraints[0].maxSkew: cannot unmarshal number 2147483648 into a field of "
        "type int32 (from -2147483648 to 2147483647)",
    ),
    "bad quantity": (
        lambda p: p["spec"]["containers"][0]["resources"]["requests"].__setitem__("cpu", "lots"),
        "spec.containers[0].resources.requests[cpu]: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    "number for a string in a map": (
        lambda p: p["metadata"]["labels"].__setitem__("tier", 3),
        "metadata.labels[tier]: cannot unmarshal number into a field of type string",
    ),
    "null list item": (
        lambda p: p["spec"]["tolerations"].append(None),
        "spec.tolerations[1]: cannot unmarshal null into an object field",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_pod_gets_the_strict_ways_message(case: str, tmp_path: Path) -> None:
    change, message = BROKEN[case]
    pods = [_dump_pod() for _ in range(3)]
    for i, p in enumerate(pods):
        p["metadata"]["name"] = f"web-7d9c-{i}"
    change(pods[1])
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": pods, "kind": "List", "metadata": {}}, indent=4))
    got = load([path])
    assert [str(p) for p in got.errors] == [f"{path}: Pod team-00/web-7d9c-1: {message}"]
    assert [lo.obj.metadata.name for lo in got.objects] == ["web-7d9c-0", "web-7d9c-2"]


def test_problems_are_those_of_the_strict_way_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every broken pod, in one list: the problems and objects are the same with the fast way
    turned off."""
    pods = []
    for i, (change, _) in enumerate(BROKEN[k] for k in sorted(BROKEN)):
        p = _dump_pod()
        p["metadata"]["name"] = f"web-{i}"
        change(p)
        pods.append(p)
    text = json.dumps({"apiVersion": "v1", "items": pods, "kind": "List"})
    fast = load_text(text, "dump.json", json_only=True)
    monkeypatch.setattr(loader, "decode_checked", lambda cls, data: None)
    strict = load_text(text, "dump.json", json_only=True)
    assert [str(p) for p in fast.problems] == [str(p) for p in strict.problems]
    assert len(fast.objects) == len(strict.objects)
    for a, b in zip(fast.objects, strict.objects, strict=True):
        assert _same(a.obj, b.obj)


# each a change to the dump pod the strict way lets through, which the fast way leaves to it
ODD_BUT_VALID = {
    "a float for an integer": lambda p: p["status"]["containerStatuses"][0].__setitem__("restartCount", 1.0),
    "a float for a modelled integer": lambda p: p["spec"]["tolerations"][0].__setitem__(
        "tolerationSeconds", 3e2
    ),
    "a null list item in an unmodelled list": lambda p: p["status"].__setitem__("podIPs", [None]),
    "a null field": lambda p: p["spec"].__setitem__("affinity", None),
}


@pytest.mark.parametrize("case", sorted(ODD_BUT_VALID))
def test_an_odd_but_valid_pod_loads_as_the_strict_way_loads_it(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pod = _dump_pod()
    ODD_BUT_VALID[case](pod)
    text = json.dumps({"apiVersion": "v1", "items": [pod], "kind": "List"})
    fast = load_text(text, "dump.json", json_only=True)
    monkeypatch.setattr(loader, "decode_checked", lambda cls, data: None)
    strict = load_text(text, "dump.json", json_only=True)
    assert not fast.problems and not strict.problems
    assert _same(fast.objects[0].obj, strict.objects[0].obj)


def _mutated(pod: dict[str, Any], path: list[str | int], how: str) -> dict[str, Any]:
    at: Any = pod
    for part in path[:-1]:
        at = at[part]
    last = path[-1]
    if how == "drop" and isinstance(at, dict):
        at.pop(last, None)
    elif how == "null":
        at[last] = None
    elif how == "string":
        at[last] = "x"
    elif how == "number":
        at[last] = 7
    elif how == "first" and isinstance(at, dict) and last in at:  # the key moved to the front
        value = at.pop(last)
        rest = dict(at)
        at.clear()
        at.update({last: value, **rest})
    return pod


_PATHS = [
    ["metadata", "name"],
    ["metadata", "labels"],
    ["metadata", "generateName"],
    ["spec", "nodeName"],
    ["spec", "priority"],
    ["spec", "containers", 0, "image"],
    ["spec", "containers", 0, "resources"],
    ["spec", "containers", 0, "ports", 0, "containerPort"],
    ["spec", "tolerations", 0, "tolerationSeconds"],
    ["spec", "topologySpreadConstraints", 0, "maxSkew"],
    ["status", "conditions", 0, "lastProbeTime"],
    ["status", "conditions", 0, "type"],
    ["status", "containerStatuses", 0, "ready"],
    ["status", "podIP"],
    ["status", "phase"],
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(range(len(_PATHS))),
                st.sampled_from(["drop", "null", "string", "number", "first"]),
            ),
            max_size=3,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_objects_of_a_key_order_met_before_decode_as_the_first_did(
    changes: list[list[tuple[int, str]]],
) -> None:
    """Each key order gets a decoder of its own once met: a pod decoded by one (the second
    time its shape comes) is the pod ``from_dict`` builds, and it speaks only when the strict
    way finds nothing."""
    cls = class_for("v1", "Pod")
    assert cls is not None
    for pod_changes in changes:
        pod = _dump_pod()
        for i, how in pod_changes:
            pod = _mutated(pod, _PATHS[i], how)
        answers = [decode_checked(cls, copy.deepcopy(pod)) for _ in range(2)]
        for got in answers:
            if got is None:
                continue
            assert not check(cls.KIND, pod)
            assert _same(got, cls.from_dict(pod))
        assert (answers[0] is None) == (answers[1] is None)


def test_threads_decoding_at_once_keep_each_objects_deferred_checks() -> None:
    """The unread fields' walks wait for the object to be decoded (in one list the decoders
    share): a pod to create with a wrong value there is refused every time, and a good one
    decoded every time, while other threads decode at once."""
    import sys
    import threading

    good = _dump_pod()
    for meta_field in ("uid", "creationTimestamp"):
        del good["metadata"][meta_field]  # a pod to create: every field is walked
    bad = copy.deepcopy(good)
    bad["spec"]["securityContext"] = {"runAsUser": "root"}  # unmodelled, walked after the pod
    cls = class_for("v1", "Pod")
    assert cls is not None and decode_checked(cls, copy.deepcopy(good)) is not None
    assert decode_checked(cls, copy.deepcopy(bad)) is None
    wrong: list[str] = []

    def decode(data: dict[str, Any], refused: bool) -> None:
        for _ in range(300):
            if (decode_checked(cls, copy.deepcopy(data)) is None) != refused:
                wrong.append("accepted" if refused else "refused")

    was = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=decode, args=(d, d is bad)) for d in (good, bad) * 3]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(was)
    assert not wrong
