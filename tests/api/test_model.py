"""The typed codec: manifests round-trip, unknown fields and key order survive, decoding errors
carry the field path, and objects built in Python dump only what differs from the defaults."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubespread.api import DecodeError, Deployment, Node, Pod, class_for
from kubespread.api.core import Container, ResourceRequirements, TopologySpreadConstraint
from kubespread.api.meta import ObjectMeta
from kubespread.api.quantity import Quantity
from kubespread.api.taints import Toleration

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CASES = SHARED / "conformance" / "admission" / "cases"
REGEX_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def case_files() -> list[Path]:
    return sorted(CASES.glob("*.input.yaml")) if CASES.is_dir() else []


def expected_for(inp: Path) -> dict[str, Any]:
    return json.loads(inp.with_name(inp.name.replace(".input.yaml", ".expected.json")).read_text())


def key_orders(v: Any, path: str = "") -> list[tuple[str, list[str]]]:
    """Every mapping's key order, by path, so a difference names where it is."""
    out: list[tuple[str, list[str]]] = []
    if isinstance(v, dict):
        out.append((path, list(v)))
        for k, x in v.items():
            out += key_orders(x, f"{path}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += key_orders(x, f"{path}[{i}]")
    return out


def decode(d: dict[str, Any]) -> Any:
    cls = class_for(d.get("apiVersion", ""), d.get("kind", ""))
    assert cls is not None, f"no class for {d.get('apiVersion')}/{d.get('kind')}"
    return cls.from_dict(d)


# --- the admission corpus -------------------------------------------------------------------------


def test_corpus_is_present() -> None:
    if not CASES.is_dir():
        pytest.skip(f"shared conformance corpus not found at {CASES}")
    assert len(case_files()) >= 200


@pytest.mark.parametrize("inp", case_files(), ids=lambda p: p.name.split(".")[0])
def test_corpus_manifest_round_trips(inp: Path) -> None:
    loaded = yaml.safe_load(inp.read_text())
    pristine = copy.deepcopy(loaded)
    try:
        obj = decode(loaded)
    except DecodeError as err:
        # only manifests the server could not decode may fail here, and with its message
        expected = expected_for(inp)
        assert expected["accepted"] is False and expected["code"] == 400, str(err)
        assert expected["message"].endswith(f" cannot be handled as a {loaded['kind']}: {err.message}")
        return
    dumped = obj.to_dict()
    assert dumped == pristine
    assert key_orders(dumped) == key_orders(pristine)
    assert loaded == pristine  # decoding did not touch its input
    again = type(obj).from_dict(dumped)
    assert again == obj
    assert again.to_dict() == pristine


BAD_QUANTITY_PATHS = {
    "004": ("spec.initContainers[0].resources.limits[cpu]", REGEX_MESSAGE),
    "081": ("spec.containers[0].resources.limits[memory]", "unable to parse quantity's suffix"),
    "113": ("spec.containers[0].resources.requests[memory]", REGEX_MESSAGE),
    "179": ("spec.initContainers[0].resources.requests[cpu]", REGEX_MESSAGE),
    "220": ("spec.containers[1].resources.limits[memory]", REGEX_MESSAGE),
}


@pytest.mark.parametrize("number", sorted(BAD_QUANTITY_PATHS))
def test_corpus_bad_quantities_report_path_and_message(number: str) -> None:
    found = [p for p in case_files() if p.name.startswith(f"{number}-")]
    if not found:
        pytest.skip(f"case {number} not found under {CASES}")
    with pytest.raises(DecodeError) as info:
        decode(yaml.safe_load(found[0].read_text()))
    field, message = BAD_QUANTITY_PATHS[number]
    assert info.value.field == field
    assert info.value.message == message
    assert info.value.quantity
    assert str(info.value) == f"{field}: {message}"
    assert expected_for(found[0])["message"].endswith(": " + message)


# --- unknown fields and key order ------------------------------------------------------------------

POD_WITH_UNKNOWNS: dict[str, Any] = {
    "kind": "Pod",
    "topLevelFuture": {"a": [1, 2]},
    "apiVersion": "v1",
    "metadata": {
        "labels": {"z": "1", "a": "2"},
        "name": "p",
        "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        "namespace": "team-a",
    },
    "spec": {
        "schedulerName": "custom",
        "futureSpecField": None,
        "containers": [
            {
                "image": "nginx",
                "securityContext": {"runAsUser": 1000},
                "name": "app",
                "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "100m"}, "futureRes": True},
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"values": ["a"], "operator": "In", "key": "zone", "deepFuture": {"x": 1}}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [{"operator": "Exists", "futureTol": "x"}],
    },
    "status": {"phase": "Pending", "podIP": "10.0.0.1"},
}


def test_unknown_fields_survive_at_every_depth_in_their_place() -> None:
    pristine = copy.deepcopy(POD_WITH_UNKNOWNS)
    pod = Pod.from_dict(POD_WITH_UNKNOWNS)
    dumped = pod.to_dict()
    assert dumped == pristine
    # apiVersion and kind are written first, as kubectl does; everything else keeps its place
    assert list(dumped) == ["apiVersion", "kind", "topLevelFuture", "metadata", "spec", "status"]
    assert key_orders(dumped)[1:] == key_orders(pristine)[1:]
    assert pod.extra == {"topLevelFuture": {"a": [1, 2]}}
    assert pod.metadata.extra == {"managedFields": [{"manager": "kubectl", "operation": "Update"}]}
    assert pod.spec.extra == {"futureSpecField": None}
    assert pod.spec.containers[0].extra == {"securityContext": {"runAsUser": 1000}}
    assert pod.spec.containers[0].resources.extra == {"futureRes": True}
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    term = required.node_selector_terms[0]
    assert term.match_expressions[0].extra == {"deepFuture": {"x": 1}}
    assert pod.spec.tolerations[0].extra == {"futureTol": "x"}
    assert pod.status.extra == {"podIP": "10.0.0.1"}


def test_fields_that_are_known_carry_no_extra() -> None:
    pod = Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert pod.extra is None and pod.metadata.extra is None


def test_key_order_of_maps_is_kept() -> None:
    d = {"metadata": {"name": "n", "labels": {"zz": "1", "aa": "2", "mm": "3"}}, "status": {}}
    d["status"] = {"allocatable": {"pods": "110", "memory": "8Gi", "cpu": "4"}, "capacity": {"cpu": "4"}}
    dumped = Node.from_dict(d).to_dict()
    assert list(dumped["metadata"]["labels"]) == ["zz", "aa", "mm"]
    assert list(dumped["status"]["allocatable"]) == ["pods", "memory", "cpu"]
    assert list(dumped["status"]) == ["allocatable", "capacity"]


# --- decoding errors -------------------------------------------------------------------------------


def pod_with(spec: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata or {"name": "p"}, "spec": spec}


DECODE_ERRORS = [
    (
        Pod,
        pod_with({"containers": [{"name": "a", "resources": {"limits": {"cpu": "0.5cpu"}}}]}),
        "spec.containers[0].resources.limits[cpu]",
        REGEX_MESSAGE,
    ),
    (
        Pod,
        pod_with(
            {"containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"memory": "1Gb"}}}]}
        ),
        "spec.containers[1].resources.requests[memory]",
        REGEX_MESSAGE,
    ),
    (
        Pod,
        pod_with({"topologySpreadConstraints": [{"maxSkew": "1", "topologyKey": "zone"}]}),
        "spec.topologySpreadConstraints[0].maxSkew",
        "string",
    ),
    (
        Pod,
        pod_with({"topologySpreadConstraints": [{"maxSkew": 1}, {"maxSkew": True}]}),
        "spec.topologySpreadConstraints[1].maxSkew",
        "boolean",
    ),
    (
        Pod,
        pod_with({"topologySpreadConstraints": [{"maxSkew": 1.5}]}),
        "spec.topologySpreadConstraints[0].maxSkew",
        "number",
    ),
    (Pod, pod_with({}, {"name": "p", "labels": {"app": 1}}), "metadata.labels[app]", "number"),
    (
        Pod,
        pod_with({}, {"name": "p", "labels": {"ok": "x", "flag": True}}),
        "metadata.labels[flag]",
        "boolean",
    ),
    (Pod, pod_with({}, {"name": 7}), "metadata.name", "number"),
    (Pod, pod_with({"tolerations": "gpu"}), "spec.tolerations", "string"),
    (Pod, pod_with({"tolerations": [{"key": "k"}, "gpu"]}), "spec.tolerations[1]", "string"),
    (
        Pod,
        pod_with({"tolerations": [{"tolerationSeconds": "300"}]}),
        "spec.tolerations[0].tolerationSeconds",
        "string",
    ),
    (
        Pod,
        pod_with({"containers": [{"name": "a", "ports": [{"containerPort": "80"}]}]}),
        "spec.containers[0].ports[0].containerPort",
        "string",
    ),
    (
        Pod,
        pod_with(
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "z", "operator": "In", "values": "a"}]}
                            ]
                        }
                    }
                }
            }
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].values",
        "string",
    ),
    (Pod, pod_with({"nodeSelector": {"disk": ["ssd"]}}), "spec.nodeSelector[disk]", "array"),
    (Pod, {"apiVersion": "v1", "kind": "Pod", "metadata": []}, "metadata", "array"),
    (Pod, pod_with({"hostNetwork": "true"}), "spec.hostNetwork", "string"),
    (
        Node,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"allocatable": {"memory": "8 Gi"}},
        },
        "status.allocatable[memory]",
        REGEX_MESSAGE,
    ),
    (
        Deployment,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {"template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "1x"}}}]}}},
        },
        "spec.template.spec.containers[0].resources.requests[cpu]",
        REGEX_MESSAGE,
    ),
    (Deployment, {"spec": {"replicas": "3"}}, "spec.replicas", "string"),
]


@pytest.mark.parametrize(("cls", "data", "field", "message"), DECODE_ERRORS)
def test_decode_errors_name_the_field(cls: Any, data: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(DecodeError) as info:
        cls.from_dict(data)
    err = info.value
    assert err.field == field
    assert str(err) == f"{field}: {err.message}"
    if message == REGEX_MESSAGE:
        assert err.message == message and err.quantity
    else:
        assert message in err.message and not err.quantity


def test_decode_error_for_a_whole_object_of_the_wrong_type() -> None:
    with pytest.raises(DecodeError) as info:
        Pod.from_dict(["not", "an", "object"])  # type: ignore[arg-type]
    assert info.value.field == ""
    assert "array" in str(info.value)


def test_lenient_numbers_decode_as_go_would_from_yaml() -> None:
    # YAML 1.0 is an integer-valued float, which kubectl sends as 1; IntOrString takes both
    pod = Pod.from_dict(pod_with({"topologySpreadConstraints": [{"maxSkew": 1.0}]}))
    assert pod.spec.topology_spread_constraints[0].max_skew == 1
    assert isinstance(pod.spec.topology_spread_constraints[0].max_skew, int)
    dep = Deployment.from_dict(
        {"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}
    )
    assert dep.spec.strategy is not None and dep.spec.strategy.rolling_update is not None
    assert (dep.spec.strategy.rolling_update.max_surge, dep.spec.strategy.rolling_update.max_unavailable) == (
        "25%",
        1,
    )


# --- quantities inside manifests --------------------------------------------------------------------


def limits(value: Any) -> Quantity:
    return ResourceRequirements.from_dict({"limits": {"cpu": value}}).limits["cpu"]


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        # JSON numbers reach Quantity.UnmarshalJSON as Go's encoding/json writes a float64:
        # positional between 1e-6 and 1e21, exponent form outside
        (0.1, "100m"),
        (0.25, "250m"),
        (1.5, "1500m"),
        (1.0, "1"),
        (2, "2"),
        (0.00005, "50u"),
        (0.000001, "1u"),
        (1e16, "10P"),
        (1.5e20, "150E"),
        (1e-7, "100e-9"),
        (2.5e21, "2500e18"),
        (0, "0"),
        (-0.5, "-500m"),
        # strings are trimmed of surrounding white space first (strings.TrimSpace)
        (" 500m", "500m"),
        ("1Gi \n", "1Gi"),
        ("\u00a02", "2"),
        ("\t1.5\t", "1500m"),
        # null is the zero quantity
        (None, "0"),
    ],
)
def test_quantity_values_as_the_apiserver_reads_them(written: Any, canonical: str) -> None:
    assert limits(written).canonical() == canonical


@pytest.mark.parametrize("written", [True, False, ["1"], {"value": "1"}, "1 0", "\x1c1", "5 m"])
def test_quantity_values_that_are_not_quantities(written: Any) -> None:
    with pytest.raises(DecodeError) as info:
        limits(written)
    assert info.value.field == "limits[cpu]"
    assert info.value.message == REGEX_MESSAGE
    assert info.value.quantity


def test_numeric_quantities_dump_back_as_numbers() -> None:
    rr = ResourceRequirements.from_dict({"requests": {"cpu": 0.5, "memory": "1024Mi", "pods": 3}})
    assert rr.to_dict() == {"requests": {"cpu": 0.5, "memory": "1024Mi", "pods": 3}}
    assert rr.requests["memory"] == Quantity.parse("1Gi")


# --- present(), changes, and objects built in Python -----------------------------------------------


def test_present_tells_written_defaults_from_absent_ones() -> None:
    pod = Pod.from_dict(pod_with({"priority": 0, "nodeName": "", "containers": []}))
    assert pod.spec.present("priority") and pod.spec.priority == 0
    assert pod.spec.present("nodeName") and pod.spec.present("containers")
    assert not pod.spec.present("schedulerName")
    assert not pod.spec.present("scheduler_name")  # keys are the manifest's camelCase
    assert not pod.spec.present("tolerations")
    assert pod.present("spec") and not pod.present("status")
    # a null is written, but decodes as the default
    nulls = Pod.from_dict(pod_with({"affinity": None}))
    assert nulls.spec.affinity is None and nulls.spec.present("affinity")
    built = Toleration(key="k")
    assert not built.present("key")


def test_changed_fields_appear_in_the_dump() -> None:
    pod = Pod.from_dict(pod_with({"schedulerName": "a", "containers": [{"name": "c"}]}, {"name": "p"}))
    pod.spec.node_name = "node-1"
    pod.spec.scheduler_name = "b"
    pod.metadata.labels["app"] = "web"
    pod.spec.containers[0].resources.requests["cpu"] = Quantity.parse("250m")
    pod.spec.tolerations.append(Toleration(key="gpu", operator="Exists"))
    dumped = pod.to_dict()
    # a written key keeps its place with its new value; new ones follow in declaration order
    assert list(dumped["spec"]) == ["schedulerName", "containers", "nodeName", "tolerations"]
    assert dumped["spec"]["schedulerName"] == "b"
    assert dumped["spec"]["nodeName"] == "node-1"
    assert dumped["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert dumped["spec"]["containers"] == [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}]
    assert dumped["metadata"] == {"name": "p", "labels": {"app": "web"}}


def test_changing_a_field_back_to_its_default_drops_it_unless_written() -> None:
    pod = Pod.from_dict(pod_with({"schedulerName": "a"}))
    pod.spec.node_name = "n"
    pod.spec.node_name = ""
    pod.spec.scheduler_name = ""
    assert pod.to_dict()["spec"] == {"schedulerName": ""}


def test_objects_built_with_keywords_dump_only_non_default_fields() -> None:
    assert Toleration(key="k", operator="Exists").to_dict() == {"key": "k", "operator": "Exists"}
    assert Toleration().to_dict() == {}
    tsc = TopologySpreadConstraint(when_unsatisfiable="DoNotSchedule", max_skew=1, topology_key="zone")
    d = tsc.to_dict()
    assert d == {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    assert list(d) == ["maxSkew", "topologyKey", "whenUnsatisfiable"]  # declaration order
    c = Container(name="c", resources=ResourceRequirements(requests={"cpu": Quantity.parse("500m")}))
    assert c.to_dict() == {"name": "c", "resources": {"requests": {"cpu": "500m"}}}
    pod = Pod(metadata=ObjectMeta(name="p", labels={"a": "b"}))
    assert pod.to_dict() == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
    }
    # a value that equals the default is not written, even when given explicitly
    assert Toleration(key="", operator="Equal").to_dict() == {"operator": "Equal"}
    assert TopologySpreadConstraint(min_domains=None, max_skew=0).to_dict() == {}


def test_built_objects_read_back_equal() -> None:
    tsc = TopologySpreadConstraint(max_skew=2, topology_key="zone", match_label_keys=["pod-template-hash"])
    assert TopologySpreadConstraint.from_dict(tsc.to_dict()) == tsc
    pod = Pod.from_dict(POD_WITH_UNKNOWNS)
    twin = pod.copy()
    assert twin == pod and twin is not pod
    twin.spec.containers[0].name = "other"
    assert pod.spec.containers[0].name == "app"
    assert twin.to_dict()["topLevelFuture"] == {"a": [1, 2]}


def test_a_field_without_omitempty_is_written_at_its_zero_value() -> None:
    """Kruise's WorkloadSpreadSubsetStatus writes name, replicas and missingReplicas always (no
    omitempty); the optional members stay out at their zero value."""
    from kubespread.api.kruise import WorkloadSpreadSubsetStatus

    assert WorkloadSpreadSubsetStatus(name="a").to_dict() == {
        "name": "a",
        "replicas": 0,
        "missingReplicas": 0,
    }
    back = WorkloadSpreadSubsetStatus.from_dict({"name": "b", "missingReplicas": 0, "creatingPods": {}})
    assert back.to_dict() == {"name": "b", "missingReplicas": 0, "creatingPods": {}, "replicas": 0}


def test_a_shallow_copy_is_the_default_protocols_copy() -> None:
    """``copy.copy`` of a model (its straight-line ``__copy__``) gives what the default
    protocol gives: a new object sharing every field's value, unknown fields and key order kept;
    a subclass instance keeps its own attributes too."""
    pod = Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "a", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "unknownTop": {"x": 1},
        }
    )
    ours = copy.copy(pod)
    default = copy._reconstruct(pod, None, *pod.__reduce_ex__(4))  # type: ignore[attr-defined]
    assert type(ours) is Pod and ours is not pod
    for name in ("api_version", "kind", "metadata", "spec", "status", "_keys", "extra"):
        assert getattr(ours, name) is getattr(pod, name) is getattr(default, name)
    assert ours.to_dict() == pod.to_dict() == default.to_dict()
    ours.metadata = copy.copy(pod.metadata)
    ours.metadata.name = "b"
    assert pod.metadata.name == "a"

    class Marked(Pod):
        pass

    marked = Marked()
    marked.note = "kept"  # type: ignore[attr-defined]
    again = copy.copy(marked)
    assert type(again) is Marked and again.note == "kept" and again == marked  # type: ignore[attr-defined]
