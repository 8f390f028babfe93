"""Strict decoding (api.schema) and the one YAML reader (api.documents): what kube-apiserver
v1.36 refuses while decoding, refused here with the same words. The quoted server messages
were taken from a real kube-apiserver v1.36.2 (``create --dry-run=server``, strict field
validation, YAML body)."""

from __future__ import annotations

from typing import Any

import pytest

from kubespread.admission.apiserver import admit_text
from kubespread.api.documents import MAX_REQUEST_BYTES, StrictDict, decode_utf8, parse_documents
from kubespread.api.kinds import KINDS
from kubespread.api.model import Model
from kubespread.api.schema import IssueKind, check, known_kind

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nginx
"""
CANNOT = 'Pod in version "v1" cannot be handled as a Pod: '


def parse_one(text: str) -> Any:
    docs, error = parse_documents(text)
    assert error is None, error
    (doc,) = docs
    return doc.data


def issues(text: str) -> list[tuple[str, str, str]]:
    data = parse_one(text)
    return [(i.kind.value, i.path, i.message) for i in check(data["kind"], data)]


def test_unknown_fields_are_named_by_path_with_a_suggestion() -> None:
    text = POD + "    resoures: {}\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKy: zone}\n"
    assert issues(text) == [
        ("unknown", "spec.containers[0].resoures", 'unknown field "resoures" (did you mean "resources"?)'),
        (
            "unknown",
            "spec.topologySpreadConstraints[0].topologyKy",
            'unknown field "topologyKy" (did you mean "topologyKey"?)',
        ),
    ]


def test_fields_kubespread_does_not_model_are_known_from_the_api() -> None:
    # env, ports, probes, volumes: not modelled by kubespread, but real fields of a Pod
    text = POD + (
        "    env: [{name: A, value: x}]\n    ports: [{containerPort: 80}]\n"
        "    readinessProbe: {httpGet: {path: /, port: 80}}\n"
        "    volumeMounts: [{name: d, mountPath: /d}]\n  volumes: [{name: d, emptyDir: {}}]\n"
    )
    assert issues(text) == []


def test_unknown_fields_deep_in_unmodelled_structures_are_found() -> None:
    text = POD + "    env: [{name: A, valu: x}]\n"
    assert issues(text) == [
        ("unknown", "spec.containers[0].env[0].valu", 'unknown field "valu" (did you mean "value"?)')
    ]


@pytest.mark.parametrize(
    ("snippet", "path", "server"),
    [
        (
            "  priority: 99999999999\n",
            "spec.priority",
            "json: cannot unmarshal number 99999999999 into Go struct field PodSpec.spec.priority "
            "of type int32",
        ),
        (
            "  topologySpreadConstraints: [{maxSkew: 2147483648, topologyKey: z, "
            "whenUnsatisfiable: DoNotSchedule}]\n",
            "spec.topologySpreadConstraints[0].maxSkew",
            "json: cannot unmarshal number 2147483648 into Go struct field "
            "TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32",
        ),
        (
            "  tolerations: [{tolerationSeconds: '5'}]\n",
            "spec.tolerations[0].tolerationSeconds",
            "json: cannot unmarshal string into Go struct field Toleration.spec.tolerations.tolerationSeconds"
            " of type int64",
        ),
        (
            "  hostNetwork: 'yes'\n",
            "spec.hostNetwork",
            "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool",
        ),
        (
            "  affinity: {nodeAffinity: 7}\n",
            "spec.affinity.nodeAffinity",
            "json: cannot unmarshal number into Go struct field Affinity.spec.affinity.nodeAffinity of type "
            "v1.NodeAffinity",
        ),
    ],
)
def test_values_the_server_cannot_decode_get_its_message(snippet: str, path: str, server: str) -> None:
    data = parse_one(POD + snippet)
    (issue,) = check("Pod", data)
    assert issue.kind is IssueKind.TYPE and issue.path == path
    assert issue.api_message == server
    answer = admit_text(POD + snippet)
    assert answer["code"] == 400 and answer["message"] == CANNOT + server


def test_ports_weights_and_replicas_are_int32() -> None:
    deploy = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 3000000000
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: x, ports: [{containerPort: 4294967376}]}]
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 2147483648
            podAffinityTerm: {topologyKey: z}
"""
    got = {(i.path, i.want) for i in check("Deployment", parse_one(deploy))}
    assert got == {
        ("spec.replicas", "int32"),
        ("spec.template.spec.containers[0].ports[0].containerPort", "int32"),
        (
            "spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            "int32",
        ),
    }


def test_integral_floats_decode_as_integers_and_others_do_not() -> None:
    # the server reads 1.0 and 1e3 as integers (YAML to JSON), not 1.5
    ok = POD + "  topologySpreadConstraints: [{maxSkew: 1.0, minDomains: 1e3, topologyKey: z}]\n"
    assert check("Pod", parse_one(ok)) == []
    bad = POD + "  topologySpreadConstraints: [{maxSkew: 1.5, topologyKey: z}]\n"
    (issue,) = check("Pod", parse_one(bad))
    assert issue.got == "number 1.5"


def test_a_map_of_strings_refuses_a_number_at_the_key() -> None:
    text = POD.replace("metadata: {name: p}", "metadata: {name: p, labels: {a: 1}}")
    (issue,) = check("Pod", parse_one(text))
    assert issue.path == "metadata.labels[a]"
    assert issue.api_message == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
    )


def test_duplicate_keys_are_remembered_and_reported_with_their_line() -> None:
    text = POD + "    image: nginx2\n    resoures: {}\n"
    data = parse_one(text)
    container = data["spec"]["containers"][0]
    assert isinstance(container, StrictDict) and container["image"] == "nginx2"
    assert container.duplicates == [("image", 8)]
    answer = admit_text(text)
    assert answer["message"] == CANNOT + (
        'strict decoding error: yaml: unmarshal errors:\n  line 8: key "image" already set in map, '
        'unknown field "spec.containers[0].resoures"'
    )


def test_merge_keys_are_not_duplicates() -> None:
    data = parse_one("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n")
    assert data["m"] == {"x": 2} and type(data["m"]) is dict


def test_unknown_fields_come_in_the_servers_order() -> None:
    text = POD + "    resoures: {}\n    env: [{name: A, valu: x}]\n  foo: 1\n"
    answer = admit_text(text)
    assert answer["message"] == CANNOT + (
        'strict decoding error: unknown field "spec.containers[0].env[0].valu", '
        'unknown field "spec.containers[0].resoures", unknown field "spec.foo"'
    )


def test_over_4300_digits_stays_a_string_as_in_go_yaml() -> None:
    data = parse_one(POD + "  priority: " + "9" * 5000 + "\n")
    assert data["spec"]["priority"] == "9" * 5000
    answer = admit_text(POD + "  priority: " + "9" * 5000 + "\n")
    assert answer["message"] == CANNOT + (
        "json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32"
    )


def test_an_alias_bomb_is_refused_without_expanding_it() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for name in "bcdefghi":
        bomb += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
        prev = name
    docs, error = parse_documents(bomb)
    assert docs == [] and error is not None
    assert error.message == "document contains excessive aliasing"
    answer = admit_text(POD + "x:\n" + "".join("  " + line + "\n" for line in bomb.splitlines()))
    assert answer["code"] == 400 and "excessive aliasing" in answer["message"]


def test_a_few_aliases_are_fine() -> None:
    data = parse_one("a: &a {k: v}\nb: *a\nc: *a\n")
    assert data["b"] == data["c"] == {"k": "v"}


def test_nesting_beyond_the_parsers_limit_is_a_clean_error() -> None:
    deep = POD + "  foo: " + "[" * 1000 + "]" * 1000 + "\n"
    _, error = parse_documents(deep)
    assert error is not None and "nesting depth" in error.message and error.line == 8
    answer = admit_text(deep)
    assert answer["code"] == 400 and "nesting depth" in answer["message"]


def test_invalid_utf8_names_its_line_and_admit_refuses_it() -> None:
    raw = POD.encode().replace(b"name: p}", b"name: p\xff}")
    with pytest.raises(Exception, match=r"invalid UTF-8: byte 0xff") as info:
        decode_utf8(raw)
    assert getattr(info.value, "line", None) == 3
    answer = admit_text(raw)
    assert answer["code"] == 400 and "invalid UTF-8" in answer["message"]


def test_admit_refuses_a_body_over_the_servers_limit() -> None:
    big = POD + "  x: '" + "a" * MAX_REQUEST_BYTES + "'\n"
    answer = admit_text(big.encode())
    assert (
        answer["code"] == 413
        and answer["message"] == f"Request entity too large: limit is {MAX_REQUEST_BYTES}"
    )


def test_every_field_kubespread_models_is_in_the_table() -> None:
    """A modelled field missing from schema.json would be refused as unknown under strict
    validation: every kind's model must be covered by the table (extensions included)."""
    import typing

    from kubespread.api import schema

    table = schema._schema()
    missing: list[str] = []

    def models(tp: Any) -> list[type[Model]]:
        out = []
        for a in (tp, *typing.get_args(tp)):
            for b in (a, *typing.get_args(a)):
                if isinstance(b, type) and issubclass(b, Model):
                    out.append(b)
        return out

    seen: set[tuple[type, str]] = set()

    def walk(cls: type[Model], ref: str, path: str) -> None:
        if (cls, ref) in seen or ref == "any":
            return
        seen.add((cls, ref))
        fields = table["types"][ref]
        hints = typing.get_type_hints(cls)
        for key, f in cls._fields_.items():
            r = fields.get(key)
            if r is None:
                missing.append(f"{path}.{key}")
                continue
            for sub in models(hints[f.attr]):
                walk(sub, r.lstrip("[]{}"), f"{path}.{key}")

    for kind, cls in KINDS.items():
        assert known_kind(kind), kind
        walk(cls, table["kinds"][kind], kind)
    # KubeSchedulerConfiguration has no metadata in kube-scheduler's config/v1 (TypeMeta only)
    assert missing == ["KubeSchedulerConfiguration.metadata"]


def test_only_json_types_come_out_of_the_reader() -> None:
    """An unquoted timestamp stays its text (go-yaml's reading), so a condition's time is a
    valid string; sets, ordered maps and binary become JSON shapes, never Python objects that
    a JSON writer would choke on."""
    data = parse_one(
        "t: 2024-01-01T00:00:00Z\nd: 2024-01-01\ns: !!set {x, y}\no: !!omap [{a: 1}, {b: 2}]\n"
        "b: !!binary aGVsbG8=\n"
    )
    assert data == {
        "t": "2024-01-01T00:00:00Z",
        "d": "2024-01-01",
        "s": {"x": None, "y": None},
        "o": [{"a": 1}, {"b": 2}],
        "b": "aGVsbG8=",
    }
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n, creationTimestamp: 2024-01-01T00:00:00Z}\n"
    assert check("Node", parse_one(node)) == []


def test_python_tags_are_refused() -> None:
    _, error = parse_documents("a: !!python/object/apply:os.system [echo]\n")
    assert error is not None and "could not determine a constructor" in error.message
