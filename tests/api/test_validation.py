"""kubespread.api.validation: one case per rule, each with kube-apiserver's exact
(field path, reason, message) list."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from k8s_messages import LABEL_1123, LABEL_KEY_3_PARTS, LABEL_VALUE, NAME_PART, PERCENT, SUBDOMAIN
from kubespread.api.core import Pod
from kubespread.api.errors import ErrorType, FieldError
from kubespread.api.kinds import class_for
from kubespread.api.validation import validate

# --- kube-apiserver's messages, verbatim --------------------------------------------------------------

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _v(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if not isinstance(value, int) else str(value)


def inv(field: str, value: Any, detail: str) -> tuple[str, str, str]:
    return (field, "FieldValueInvalid", f"Invalid value: {_v(value)}: {detail}")


def req(field: str, detail: str = "") -> tuple[str, str, str]:
    return (field, "FieldValueRequired", f"Required value: {detail}" if detail else "Required value")


def forb(field: str, detail: str) -> tuple[str, str, str]:
    return (field, "FieldValueForbidden", f"Forbidden: {detail}")


def dup(field: str, value: Any) -> tuple[str, str, str]:
    return (field, "FieldValueDuplicate", f"Duplicate value: {_v(value)}")


def unsup(field: str, value: str, *supported: str) -> tuple[str, str, str]:
    listed = ", ".join(f'"{s}"' for s in supported)
    return (field, "FieldValueNotSupported", f'Unsupported value: "{value}": supported values: {listed}')


# --- manifest builders ----------------------------------------------------------------------------------


def pod(
    *, name: str = "web", labels: dict[str, str] | None = None, meta: dict | None = None, **spec: Any
) -> dict:
    """A valid Pod; keyword arguments (camelCase) replace spec fields."""
    m = {"name": name, "namespace": "default", "labels": {"app": "web"} if labels is None else labels}
    m.update(meta or {})
    s: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": s}


def ctr(name: str = "app", **kw: Any) -> dict:
    return {"name": name, "image": "nginx:1.27", **kw}


def res(requests: dict | None = None, limits: dict | None = None) -> dict:
    out: dict[str, Any] = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return {"resources": out}


def tsc(**kw: Any) -> dict:
    c = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    c.update(kw)
    return c


def term(**kw: Any) -> dict:
    t = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    t.update(kw)
    return t


def pod_aff(t: dict, *, anti: bool = False, weight: int | None = None) -> dict:
    """Affinity with one pod (anti-)affinity term, required, or preferred when a weight is given."""
    kind = "podAntiAffinity" if anti else "podAffinity"
    if weight is None:
        return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [t]}}
    return {
        kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": t}]}
    }


def node_aff(*exprs: dict, preferred: bool = False, fields: list | None = None) -> dict:
    t: dict[str, Any] = {"matchExpressions": list(exprs)}
    if fields:
        t["matchFields"] = fields
    if preferred:
        return {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": t}]
            }
        }
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [t]}}}


def deploy(*, selector: Any = "default", template_labels: dict | None = None, **spec: Any) -> dict:
    labels = {"app": "web"} if template_labels is None else template_labels
    s: dict[str, Any] = {
        "replicas": 3,
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [ctr()]}},
    }
    if selector == "default":
        s["selector"] = {"matchLabels": {"app": "web"}}
    elif selector is not None:
        s["selector"] = selector
    s.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": s,
    }


def with_template_spec(d: dict, **spec: Any) -> dict:
    d = copy.deepcopy(d)
    d["spec"]["template"]["spec"].update(spec)
    return d


def node(*taints: dict, name: str = "node-1") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {"taints": list(taints)}}


def obj(api_version: str, kind: str, name: str, namespace: str | None = "default", **fields: Any) -> dict:
    meta = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


HOST = "kubernetes.io/hostname"
TSC0 = "spec.topologySpreadConstraints[0]"
REQ_TERM = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
PREF_ANTI = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
NODE_TERM = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
NODE_PREF = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
C0 = "spec.containers[0]"
T0 = "spec.template.spec"

# (id, manifest, expected [(field, reason, message)])
CASES: list[tuple[str, dict, list[tuple[str, str, str]]]] = [
    # --- valid objects -----------------------------------------------------------------------------------
    ("valid-pod", pod(), []),
    ("valid-generate-name-trailing-dash", pod(name="", meta={"generateName": "web-"}), []),
    ("valid-deployment", deploy(), []),
    ("valid-node", node({"key": "dedicated", "value": "infra", "effect": "NoSchedule"}), []),
    (
        "valid-spread-topologykey-not-a-label-key",
        pod(topologySpreadConstraints=[tsc(topologyKey="zone!")]),
        [],
    ),
    (
        "valid-gt-value-need-not-be-integer",
        pod(affinity=node_aff({"key": "cores", "operator": "Gt", "values": ["many"]})),
        [],
    ),
    (
        "valid-preferred-node-affinity-value-not-checked",
        pod(affinity=node_aff({"key": "zone", "operator": "In", "values": ["a b"]}, preferred=True)),
        [],
    ),
    (
        "valid-sidecar-with-probe",
        pod(initContainers=[ctr("proxy", restartPolicy="Always", livenessProbe={"tcpSocket": {"port": 80}})]),
        [],
    ),
    ("valid-limits-only", pod(containers=[ctr(**res(limits={"cpu": "1", "example.com/gpu": 1}))]), []),
    # --- metadata ----------------------------------------------------------------------------------------
    ("pod-name-invalid", pod(name="web_01"), [inv("metadata.name", "web_01", SUBDOMAIN)]),
    (
        "pod-name-too-long",
        pod(name="n" * 254),
        [inv("metadata.name", "n" * 254, "must be no more than 253 characters")],
    ),
    ("pod-name-missing", pod(name=""), [req("metadata.name", "name or generateName is required")]),
    (
        "pod-namespace-invalid",
        pod(meta={"namespace": "team.a"}),
        [inv("metadata.namespace", "team.a", "must not contain dots")],
    ),
    ("label-value-invalid", pod(labels={"app": "v1_"}), [inv("metadata.labels", "v1_", LABEL_VALUE)]),
    (
        "label-value-too-long",
        pod(labels={"app": "x" * 64}),
        [inv("metadata.labels", "x" * 64, "must be no more than 63 bytes")],
    ),
    (
        "label-key-three-parts",
        pod(labels={"app/tier/x": "a"}),
        [inv("metadata.labels", "app/tier/x", LABEL_KEY_3_PARTS)],
    ),
    ("label-key-name-part", pod(labels={"-app": "a"}), [inv("metadata.labels", "-app", NAME_PART)]),
    (
        "label-key-name-too-long",
        pod(labels={"a" * 64: "x"}),
        [inv("metadata.labels", "a" * 64, "name part must be no more than 63 bytes")],
    ),
    (
        "label-key-prefix-invalid",
        pod(labels={"example_com/app": "x"}),
        [inv("metadata.labels", "example_com/app", "prefix part " + SUBDOMAIN)],
    ),
    (
        "label-key-empty-name-part",
        pod(labels={"example.com/": "x"}),
        [
            inv("metadata.labels", "example.com/", "name part must be non-empty"),
            inv("metadata.labels", "example.com/", NAME_PART),
        ],
    ),
    (
        "annotation-key-invalid",
        pod(meta={"annotations": {"bad key": "x"}}),
        [inv("metadata.annotations", "bad key", NAME_PART)],
    ),
    (
        "pod-deletion-cost-not-int32",
        pod(meta={"annotations": {"controller.kubernetes.io/pod-deletion-cost": "+10"}}),
        [
            inv(
                "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]",
                "+10",
                "must be a 32bit integer",
            )
        ],
    ),
    (
        "template-deletion-cost-too-big",
        deploy(
            template={
                "metadata": {
                    "labels": {"app": "web"},
                    "annotations": {"controller.kubernetes.io/pod-deletion-cost": "2147483648"},
                },
                "spec": {"containers": [ctr()]},
            }
        ),
        [
            inv(
                "spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]",
                "2147483648",
                "must be a 32bit integer",
            )
        ],
    ),
    (
        "valid-deletion-cost",
        pod(meta={"annotations": {"controller.kubernetes.io/pod-deletion-cost": "-5"}}),
        [],
    ),
    (
        "mirror-pod-without-node-name",
        pod(meta={"annotations": {"kubernetes.io/config.mirror": "abc"}}),
        [
            inv(
                "metadata.annotations[kubernetes.io/config.mirror]",
                "abc",
                "must set spec.nodeName if mirror pod annotation is set",
            )
        ],
    ),
    # --- containers ----------------------------------------------------------------------------------------
    ("no-containers", pod(containers=[]), [req("spec.containers")]),
    ("container-name-missing", pod(containers=[{"image": "nginx"}]), [req(f"{C0}.name")]),
    (
        "container-name-dots",
        pod(containers=[ctr("app.1")]),
        [inv(f"{C0}.name", "app.1", "must not contain dots")],
    ),
    ("container-name-uppercase", pod(containers=[ctr("App_1")]), [inv(f"{C0}.name", "App_1", LABEL_1123)]),
    (
        "container-name-too-long",
        pod(containers=[ctr("c" * 64)]),
        [inv(f"{C0}.name", "c" * 64, "must be no more than 63 characters")],
    ),
    ("container-dup-name", pod(containers=[ctr(), ctr()]), [dup("spec.containers[1].name", "app")]),
    ("container-image-missing", pod(containers=[{"name": "app"}]), [req(f"{C0}.image")]),
    (
        "container-image-whitespace",
        pod(containers=[ctr(image=" nginx")]),
        [inv(f"{C0}.image", " nginx", "must not have leading or trailing whitespace")],
    ),
    (
        "container-restartpolicy-forbidden",
        pod(containers=[ctr(restartPolicy="Always")]),
        [forb(f"{C0}.restartPolicy", "may not be set for non-init containers")],
    ),
    ("init-dup-name-of-container", pod(initContainers=[ctr()]), [dup("spec.initContainers[0].name", "app")]),
    (
        "init-restartpolicy-never",
        pod(initContainers=[ctr("init", restartPolicy="Never")]),
        [unsup("spec.initContainers[0].restartPolicy", "Never", "Always")],
    ),
    (
        "init-probe-without-restart-always",
        pod(initContainers=[ctr("init", readinessProbe={"tcpSocket": {"port": 80}})]),
        [
            forb(
                "spec.initContainers[0].readinessProbe",
                "may not be set for init containers without restartPolicy=Always",
            )
        ],
    ),
    (
        "ports",
        pod(containers=[ctr(ports=[{"containerPort": 0}, {"containerPort": 70000, "protocol": "HTTP"}])]),
        [
            req(f"{C0}.ports[0].containerPort"),
            inv(f"{C0}.ports[1].containerPort", 70000, "must be between 1 and 65535, inclusive"),
            unsup(f"{C0}.ports[1].protocol", "HTTP", "SCTP", "TCP", "UDP"),
        ],
    ),
    (
        "host-port-conflict",
        pod(
            containers=[
                ctr(ports=[{"containerPort": 80, "hostPort": 80}]),
                ctr("b", ports=[{"containerPort": 81, "hostPort": 80}]),
            ]
        ),
        [dup("spec.containers[1].ports[0].hostPort", "TCP//80")],
    ),
    (
        "host-network-port-mismatch",
        pod(hostNetwork=True, containers=[ctr(ports=[{"containerPort": 80, "hostPort": 81}])]),
        [inv(f"{C0}.ports[0].hostPort", 81, "must match `containerPort` when `hostNetwork` is true")],
    ),
    # --- resources --------------------------------------------------------------------------------
    (
        "res-name-typo",
        pod(containers=[ctr(**res(requests={"gpu": "1"}))]),
        [
            inv(
                f"{C0}.resources.requests[gpu]", "gpu", "must be a standard resource type or fully qualified"
            ),
            inv(f"{C0}.resources.requests[gpu]", "gpu", "must be a standard resource for containers"),
        ],
    ),
    (
        "res-name-typo-limits-only-pod-is-defaulted",
        pod(containers=[ctr(**res(limits={"memroy": "1"}))]),
        [
            inv(
                f"{C0}.resources.limits[memroy]",
                "memroy",
                "must be a standard resource type or fully qualified",
            ),
            inv(f"{C0}.resources.limits[memroy]", "memroy", "must be a standard resource for containers"),
            inv(
                f"{C0}.resources.requests[memroy]",
                "memroy",
                "must be a standard resource type or fully qualified",
            ),
            inv(f"{C0}.resources.requests[memroy]", "memroy", "must be a standard resource for containers"),
        ],
    ),
    (
        "res-name-typo-limits-only-template-not-defaulted",
        with_template_spec(deploy(), containers=[ctr(**res(limits={"memroy": "1"}))]),
        [
            inv(
                f"{T0}.containers[0].resources.limits[memroy]",
                "memroy",
                "must be a standard resource type or fully qualified",
            ),
            inv(
                f"{T0}.containers[0].resources.limits[memroy]",
                "memroy",
                "must be a standard resource for containers",
            ),
        ],
    ),
    (
        "res-standard-but-not-for-containers",
        pod(containers=[ctr(**res(requests={"pods": "1"}))]),
        [inv(f"{C0}.resources.requests[pods]", "pods", "must be a standard resource for containers")],
    ),
    (
        "res-name-not-qualified",
        pod(containers=[ctr(**res(requests={"a/b/c": "1"}))]),
        [
            inv(
                f"{C0}.resources.requests[a/b/c]",
                "a/b/c",
                LABEL_KEY_3_PARTS.replace("a valid label key", "a qualified name"),
            ),
            inv(f"{C0}.resources.requests[a/b/c]", "a/b/c", "doesn't follow extended resource name standard"),
            req(f"{C0}.resources.limits", "Limit must be set for non overcommitable resources"),
        ],
    ),
    (
        "res-negative",
        pod(containers=[ctr(**res(requests={"cpu": "-1"}, limits={"cpu": "-1"}))]),
        [
            inv(f"{C0}.resources.limits[cpu]", "-1", "must be greater than or equal to 0"),
            inv(f"{C0}.resources.requests[cpu]", "-1", "must be greater than or equal to 0"),
        ],
    ),
    (
        "res-requests-gt-limits-canonical-quantities",
        pod(
            containers=[
                ctr(
                    **res(requests={"cpu": 1.5, "memory": "1024Mi"}, limits={"cpu": "250m", "memory": "512M"})
                )
            ]
        ),
        [
            inv(f"{C0}.resources.requests", "1500m", "must be less than or equal to cpu limit of 250m"),
            inv(f"{C0}.resources.requests", "1Gi", "must be less than or equal to memory limit of 512M"),
        ],
    ),
    (
        "res-extended-not-integer",
        pod(containers=[ctr(**res(limits={"example.com/gpu": "500m"}))]),
        [
            (
                f"{C0}.resources.limits[example.com/gpu]",
                "FieldValueInvalid",
                "Invalid value: 500m: must be an integer",
            ),
            (
                f"{C0}.resources.requests[example.com/gpu]",
                "FieldValueInvalid",
                "Invalid value: 500m: must be an integer",
            ),
        ],
    ),
    (
        "res-extended-request-not-equal-limit",
        pod(containers=[ctr(**res(requests={"example.com/gpu": 1}, limits={"example.com/gpu": 2}))]),
        [inv(f"{C0}.resources.requests", "1", "must be equal to example.com/gpu limit of 2")],
    ),
    (
        "res-extended-request-without-limit",
        with_template_spec(deploy(), containers=[ctr(**res(requests={"example.com/gpu": 1}))]),
        [req(f"{T0}.containers[0].resources.limits", "Limit must be set for non overcommitable resources")],
    ),
    (
        "res-hugepages",
        pod(containers=[ctr(**res(limits={"hugepages-2Mi": "3Mi"}))]),
        [
            inv(
                f"{C0}.resources.limits[hugepages-2Mi]",
                "3Mi",
                "3Mi is not positive integer multiple of hugepages-2Mi",
            ),
            inv(
                f"{C0}.resources.requests[hugepages-2Mi]",
                "3Mi",
                "3Mi is not positive integer multiple of hugepages-2Mi",
            ),
            forb(f"{C0}.resources", "HugePages require cpu or memory"),
        ],
    ),
    # --- tolerations ------------------------------------------------------------------------------
    (
        "tol-bad-operator",
        pod(tolerations=[{"key": "k", "operator": "In", "value": "v"}]),
        [unsup("spec.tolerations[0].operator", "In", "Equal", "Exists")],
    ),
    (
        "tol-comparison-operator-gate-off",
        pod(tolerations=[{"key": "k", "operator": "Gt", "value": "5"}]),
        [unsup("spec.tolerations[0].operator", "Gt", "Equal", "Exists", "Lt", "Gt")],
    ),
    (
        "tol-exists-with-value",
        pod(tolerations=[{"key": "k", "operator": "Exists", "value": "infra"}]),
        [inv("spec.tolerations[0].operator", "infra", "value must be empty when `operator` is 'Exists'")],
    ),
    (
        "tol-empty-key-equal",
        pod(tolerations=[{"operator": "Equal"}]),
        [
            (
                "spec.tolerations[0].operator",
                "FieldValueInvalid",
                'Invalid value: "Equal": operator must be Exists when `key` is empty, '
                'which means "match all values and all keys"',
            )
        ],
    ),
    (
        "tol-seconds-without-noexecute",
        pod(tolerations=[{"key": "k", "operator": "Exists", "tolerationSeconds": 30}]),
        [inv("spec.tolerations[0].effect", "", "effect must be 'NoExecute' when `tolerationSeconds` is set")],
    ),
    (
        "tol-bad-effect",
        pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecution"}]),
        [unsup("spec.tolerations[0].effect", "NoExecution", *EFFECTS)],
    ),
    (
        "tol-bad-key",
        pod(tolerations=[{"key": "app name", "operator": "Exists"}]),
        [inv("spec.tolerations[0].key", "app name", NAME_PART)],
    ),
    (
        "tol-bad-value",
        pod(tolerations=[{"key": "k", "operator": "Equal", "value": "-v"}]),
        [inv("spec.tolerations[0].operator", "-v", LABEL_VALUE)],
    ),
    # --- node affinity ----------------------------------------------------------------------------
    (
        "nodeaff-no-terms",
        pod(
            affinity={
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
            }
        ),
        [
            req(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                "must have at least one node selector term",
            )
        ],
    ),
    (
        "nodeaff-operator-bogus",
        pod(affinity=node_aff({"key": "zone", "operator": "in", "values": ["a"]})),
        [inv(f"{NODE_TERM}.matchExpressions[0].operator", "in", "not a valid selector operator")],
    ),
    (
        "nodeaff-in-without-values",
        pod(affinity=node_aff({"key": "zone", "operator": "NotIn"})),
        [
            req(
                f"{NODE_TERM}.matchExpressions[0].values",
                "must be specified when `operator` is 'In' or 'NotIn'",
            )
        ],
    ),
    (
        "nodeaff-exists-with-values",
        pod(affinity=node_aff({"key": "zone", "operator": "Exists", "values": ["a"]}, preferred=True)),
        [
            forb(
                f"{NODE_PREF}.preference.matchExpressions[0].values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        ],
    ),
    (
        "nodeaff-gt-two-values",
        pod(affinity=node_aff({"key": "cores", "operator": "Gt", "values": ["4", "8"]})),
        [
            req(
                f"{NODE_TERM}.matchExpressions[0].values",
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )
        ],
    ),
    (
        "nodeaff-key-invalid",
        pod(affinity=node_aff({"key": "zone name", "operator": "Exists"}, preferred=True)),
        [inv(f"{NODE_PREF}.preference.matchExpressions[0].key", "zone name", NAME_PART)],
    ),
    (
        "nodeaff-required-value-invalid",
        pod(affinity=node_aff({"key": "zone", "operator": "In", "values": ["a b"]})),
        [inv(f"{NODE_TERM}.matchExpressions[0].values[0]", "a b", LABEL_VALUE)],
    ),
    (
        "nodeaff-matchfields",
        pod(
            affinity=node_aff(
                fields=[
                    {"key": "metadata.name", "operator": "Exists"},
                    {"key": "spec.x", "operator": "In", "values": ["a", "b"]},
                ]
            )
        ),
        [
            inv(f"{NODE_TERM}.matchFields[0].operator", "Exists", "not a valid selector operator"),
            req(
                f"{NODE_TERM}.matchFields[1].values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            ),
            inv(f"{NODE_TERM}.matchFields[1].key", "spec.x", "not a valid field selector key"),
        ],
    ),
    (
        "nodeaff-weight",
        pod(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]
                }
            }
        ),
        [inv(f"{NODE_PREF}.weight", 0, "must be in the range 1-100")],
    ),
    # --- pod affinity -----------------------------------------------------------------------------
    (
        "podaff-topologykey-empty-three-causes",
        pod(affinity=pod_aff(term(topologyKey=""))),
        [
            req(f"{REQ_TERM}.topologyKey", "can not be empty"),
            inv(f"{REQ_TERM}.topologyKey", "", "name part must be non-empty"),
            inv(f"{REQ_TERM}.topologyKey", "", NAME_PART),
        ],
    ),
    (
        "podaff-topologykey-invalid",
        pod(affinity=pod_aff(term(topologyKey="zone!"))),
        [inv(f"{REQ_TERM}.topologyKey", "zone!", NAME_PART)],
    ),
    (
        "podaff-weight",
        pod(affinity=pod_aff(term(), anti=True, weight=101)),
        [inv(f"{PREF_ANTI}.weight", 101, "must be in the range 1-100")],
    ),
    (
        "podaff-selector-operator",
        pod(
            affinity=pod_aff(
                term(
                    labelSelector={
                        "matchExpressions": [{"key": "app", "operator": "Equals", "values": ["a"]}]
                    }
                )
            )
        ),
        [
            inv(
                f"{REQ_TERM}.labelSelector.matchExpressions[0].operator",
                "Equals",
                "not a valid selector operator",
            )
        ],
    ),
    (
        "podaff-selector-exists-with-values",
        pod(
            affinity=pod_aff(
                term(
                    labelSelector={
                        "matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]
                    }
                )
            )
        ),
        [
            forb(
                f"{REQ_TERM}.labelSelector.matchExpressions[0].values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        ],
    ),
    (
        "podaff-namespace-selector-value",
        pod(affinity=pod_aff(term(namespaceSelector={"matchLabels": {"env": "prod!"}}))),
        [inv(f"{REQ_TERM}.namespaceSelector.matchLabels", "prod!", LABEL_VALUE)],
    ),
    (
        "podaff-namespaces-invalid-singular-path",
        pod(affinity=pod_aff(term(namespaces=["team-a.prod", "Team_A"]), anti=True, weight=10)),
        [
            inv(f"{PREF_ANTI}.podAffinityTerm.namespace", "team-a.prod", "must not contain dots"),
            inv(f"{PREF_ANTI}.podAffinityTerm.namespace", "Team_A", LABEL_1123),
        ],
    ),
    (
        "podaff-mlk-invalid-key",
        pod(affinity=pod_aff(term(matchLabelKeys=["pod template hash"]))),
        [inv(f"{REQ_TERM}.matchLabelKeys[0]", "pod template hash", NAME_PART)],
    ),
    (
        "podaff-mismatch-keys-without-selector",
        pod(affinity=pod_aff({"topologyKey": HOST, "mismatchLabelKeys": ["version"]})),
        [forb(f"{REQ_TERM}.mismatchLabelKeys", "must not be specified when labelSelector is not set")],
    ),
    (
        "podaff-key-in-match-and-mismatch",
        pod(affinity=pod_aff(term(matchLabelKeys=["version"], mismatchLabelKeys=["version"]))),
        [
            inv(
                f"{REQ_TERM}.matchLabelKeys[0]",
                "version",
                "exists in both matchLabelKeys and mismatchLabelKeys",
            )
        ],
    ),
    (
        # as stored after the matchLabelKeys merge: the user's matchLabels and the merged expression
        "podaff-key-in-match-label-keys-and-selector-after-merge",
        pod(
            affinity=pod_aff(
                term(
                    labelSelector={
                        "matchLabels": {"app": "web"},
                        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}],
                    },
                    matchLabelKeys=["version", "app"],
                )
            )
        ),
        [inv(f"{REQ_TERM}[1]", "app", "exists in both matchLabelKeys and labelSelector")],
    ),
    # --- topology spread --------------------------------------------------------------------------
    (
        "spread-maxskew-zero",
        pod(topologySpreadConstraints=[tsc(maxSkew=0)]),
        [inv(f"{TSC0}.maxSkew", 0, "must be greater than zero")],
    ),
    (
        "spread-maxskew-negative",
        pod(topologySpreadConstraints=[tsc(maxSkew=-2)]),
        [inv(f"{TSC0}.maxSkew", -2, "must be greater than zero")],
    ),
    (
        "spread-topologykey-empty",
        pod(topologySpreadConstraints=[tsc(topologyKey="")]),
        [req(f"{TSC0}.topologyKey", "can not be empty")],
    ),
    (
        "spread-when-unsatisfiable-bogus",
        pod(topologySpreadConstraints=[tsc(whenUnsatisfiable="")]),
        [unsup(f"{TSC0}.whenUnsatisfiable", "", "DoNotSchedule", "ScheduleAnyway")],
    ),
    (
        "spread-duplicate-reported-at-first",
        pod(topologySpreadConstraints=[tsc(), tsc(maxSkew=2)]),
        [dup(f"{TSC0}.{{topologyKey, whenUnsatisfiable}}", "{topology.kubernetes.io/zone, DoNotSchedule}")],
    ),
    (
        "spread-mindomains-zero",
        pod(topologySpreadConstraints=[tsc(minDomains=0)]),
        [inv(f"{TSC0}.minDomains", 0, "must be greater than zero")],
    ),
    (
        "spread-mindomains-with-scheduleanyway",
        pod(topologySpreadConstraints=[tsc(minDomains=2, whenUnsatisfiable="ScheduleAnyway")]),
        [
            inv(
                f"{TSC0}.minDomains",
                2,
                "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            )
        ],
    ),
    (
        "spread-policies-bogus",
        pod(topologySpreadConstraints=[tsc(nodeAffinityPolicy="ignore", nodeTaintsPolicy="Always")]),
        [
            unsup(f"{TSC0}.nodeAffinityPolicy", "ignore", "Honor", "Ignore"),
            unsup(f"{TSC0}.nodeTaintsPolicy", "Always", "Honor", "Ignore"),
        ],
    ),
    (
        "spread-mlk-without-selector",
        pod(topologySpreadConstraints=[tsc(labelSelector=None, matchLabelKeys=["pod-template-hash"])]),
        [forb(f"{TSC0}.matchLabelKeys", "must not be specified when labelSelector is not set")],
    ),
    (
        "spread-mlk-invalid-key",
        pod(topologySpreadConstraints=[tsc(matchLabelKeys=["-hash"])]),
        [inv(f"{TSC0}.matchLabelKeys[0]", "-hash", NAME_PART)],
    ),
    (
        "spread-mlk-in-selector-after-merge",
        pod(
            topologySpreadConstraints=[
                tsc(
                    labelSelector={
                        "matchLabels": {"app": "web"},
                        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}],
                    },
                    matchLabelKeys=["app"],
                )
            ]
        ),
        [inv(f"{TSC0}[0]", "app", "exists in both matchLabelKeys and labelSelector")],
    ),
    (
        "spread-selector-in-without-values",
        pod(
            topologySpreadConstraints=[
                tsc(labelSelector={"matchExpressions": [{"key": "tier", "operator": "In"}]})
            ]
        ),
        [
            req(
                f"{TSC0}.labelSelector.matchExpressions[0].values",
                "must be specified when `operator` is 'In' or 'NotIn'",
            )
        ],
    ),
    # --- other pod spec fields --------------------------------------------------------------------
    (
        "restartpolicy-bogus",
        pod(restartPolicy="Sometimes"),
        [unsup("spec.restartPolicy", "Sometimes", "Always", "OnFailure", "Never")],
    ),
    (
        "nodeselector-invalid",
        pod(nodeSelector={"zone": "a b"}),
        [inv("spec.nodeSelector", "a b", LABEL_VALUE)],
    ),
    (
        "priorityclassname-invalid",
        pod(priorityClassName="High_Priority"),
        [inv("spec.priorityClassName", "High_Priority", SUBDOMAIN)],
    ),
    (
        "preemptionpolicy-bogus",
        pod(preemptionPolicy="Always"),
        [unsup("spec.preemptionPolicy", "Always", "PreemptLowerPriority", "Never")],
    ),
    (
        "scheduling-gates",
        pod(schedulingGates=[{"name": "example.com/wait"}, {"name": "example.com/wait"}]),
        [dup("spec.schedulingGates[1]", "example.com/wait")],
    ),
    (
        "nodename-with-scheduling-gates",
        pod(nodeName="node-1", schedulingGates=[{"name": "wait"}]),
        [forb("spec.nodeName", "cannot be set until all schedulingGates have been cleared")],
    ),
    # --- nodes ------------------------------------------------------------------------------------
    ("node-name-invalid", node(name="Node_1"), [inv("metadata.name", "Node_1", SUBDOMAIN)]),
    (
        "node-taint-key-prefix-invalid",
        node({"key": "example_com/app", "effect": "NoSchedule"}),
        [inv("metadata.taints[0].key", "example_com/app", "prefix part " + SUBDOMAIN)],
    ),
    (
        "node-taint-value-invalid",
        node({"key": "app", "value": "-v1", "effect": "NoSchedule"}),
        [inv("metadata.taints[0].value", "-v1", LABEL_VALUE)],
    ),
    ("node-taint-effect-missing", node({"key": "app"}), [req("metadata.taints[0].effect")]),
    (
        "node-taint-effect-bogus",
        node({"key": "app", "effect": "Evict"}),
        [unsup("metadata.taints[0].effect", "Evict", *EFFECTS)],
    ),
    (
        "node-taint-duplicate",
        node({"key": "app", "effect": "NoSchedule"}, {"key": "app", "value": "x", "effect": "NoSchedule"}),
        [
            (
                "metadata.taints[1]",
                "FieldValueDuplicate",
                'Duplicate value: {"key":"app","value":"x","effect":"NoSchedule"}: '
                "taints must be unique by key and effect pair",
            )
        ],
    ),
    # --- deployments ----------------------------------------------------------------------------------------
    (
        "deploy-replicas-negative",
        deploy(replicas=-1),
        [inv("spec.replicas", -1, "must be greater than or equal to 0")],
    ),
    (
        "deploy-selector-missing",
        deploy(selector=None),
        [
            req("spec.selector"),
            inv(
                "spec.template.metadata.labels", {"app": "web"}, "`selector` does not match template `labels`"
            ),
        ],
    ),
    (
        "deploy-selector-empty",
        deploy(selector={}),
        [inv("spec.selector", {}, "empty selector is invalid for deployment")],
    ),
    (
        "deploy-selector-mismatch-sorted-labels",
        deploy(template_labels={"tier": "backend", "app": "cache"}),
        [
            inv(
                "spec.template.metadata.labels",
                {"app": "cache", "tier": "backend"},
                "`selector` does not match template `labels`",
            )
        ],
    ),
    (
        "deploy-selector-invalid-skips-template",
        with_template_spec(
            deploy(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}), containers=[]
        ),
        [
            req(
                "spec.selector.matchExpressions[0].values",
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            inv(
                "spec.selector",
                {"matchExpressions": [{"key": "app", "operator": "In"}]},
                "invalid label selector",
            ),
        ],
    ),
    (
        "deploy-rollout-zero",
        deploy(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
        [inv("spec.strategy.rollingUpdate.maxUnavailable", 0, "may not be 0 when `maxSurge` is 0")],
    ),
    (
        "deploy-rollout-zero-percent",
        deploy(strategy={"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}),
        [inv("spec.strategy.rollingUpdate.maxUnavailable", 0, "may not be 0 when `maxSurge` is 0")],
    ),
    (
        "deploy-rollout-bad-percent",
        deploy(strategy={"rollingUpdate": {"maxSurge": "10"}}),
        [inv("spec.strategy.rollingUpdate.maxSurge", "10", PERCENT)],
    ),
    (
        "deploy-rollout-negative",
        deploy(strategy={"rollingUpdate": {"maxSurge": -1}}),
        [inv("spec.strategy.rollingUpdate.maxSurge", -1, "must be greater than or equal to 0")],
    ),
    (
        "deploy-maxunavailable-over-100",
        deploy(strategy={"rollingUpdate": {"maxUnavailable": "150%"}}),
        [inv("spec.strategy.rollingUpdate.maxUnavailable", "150%", "must not be greater than 100%")],
    ),
    (
        "deploy-recreate-with-rolling-update",
        deploy(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
        [forb("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")],
    ),
    (
        "deploy-strategy-type-bogus",
        deploy(strategy={"type": "BlueGreen"}),
        [unsup("spec.strategy.type", "BlueGreen", "Recreate", "RollingUpdate")],
    ),
    (
        "deploy-template-restartpolicy-never",
        with_template_spec(deploy(), restartPolicy="Never"),
        [unsup(f"{T0}.restartPolicy", "Never", "Always")],
    ),
    (
        "deploy-template-label-invalid-path",
        deploy(template_labels={"app": "web", "tier": "back end"}),
        [inv("spec.template.labels", "back end", LABEL_VALUE)],
    ),
    (
        "deploy-template-dup-container",
        with_template_spec(deploy(), containers=[ctr(), ctr()]),
        [dup(f"{T0}.containers[1].name", "app")],
    ),
    (
        "deploy-template-weight",
        with_template_spec(deploy(), affinity=pod_aff(term(), weight=-5)),
        [
            inv(
                f"{T0}.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                -5,
                "must be in the range 1-100",
            )
        ],
    ),
    (
        "deploy-progress-deadline",
        deploy(minReadySeconds=700),
        [inv("spec.progressDeadlineSeconds", 600, "must be greater than minReadySeconds")],
    ),
    # --- other kinds ------------------------------------------------------------------------------
    (
        "replicaset-selector-mismatch",
        obj(
            "apps/v1",
            "ReplicaSet",
            "rs",
            spec={
                "selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": [ctr()]}},
            },
        ),
        [inv("spec.template.metadata.labels", {"app": "b"}, "`selector` does not match template `labels`")],
    ),
    (
        "statefulset-pod-management-policy",
        obj(
            "apps/v1",
            "StatefulSet",
            "db",
            spec={
                "podManagementPolicy": "Random",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [ctr()]}},
            },
        ),
        [inv("spec.podManagementPolicy", "Random", "must be 'OrderedReady' or 'Parallel'")],
    ),
    (
        "job-restartpolicy-defaults-to-always",
        obj("batch/v1", "Job", "j", spec={"template": {"spec": {"containers": [ctr()]}}}),
        [unsup("spec.template.spec.restartPolicy", "Always", "OnFailure", "Never")],
    ),
    (
        "job-negative-parallelism",
        obj(
            "batch/v1",
            "Job",
            "j",
            spec={"parallelism": -1, "template": {"spec": {"restartPolicy": "Never", "containers": [ctr()]}}},
        ),
        [inv("spec.parallelism", -1, "must be greater than or equal to 0")],
    ),
    (
        "replicationcontroller-selector-defaults-to-template-labels",
        obj(
            "v1",
            "ReplicationController",
            "rc",
            spec={"template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [ctr()]}}},
        ),
        [],
    ),
    (
        "namespace-name-dots",
        obj("v1", "Namespace", "team.a", None),
        [inv("metadata.name", "team.a", "must not contain dots")],
    ),
    (
        "service-name-starts-with-digit",
        obj("v1", "Service", "1web"),
        [
            inv(
                "metadata.name",
                "1web",
                "a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character "
                "(e.g. 'my-name',  or 'abc-123', "
                "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            )
        ],
    ),
    (
        "priorityclass-system-prefix",
        obj("scheduling.k8s.io/v1", "PriorityClass", "system-high", None, value=10),
        [
            forb(
                "metadata.name",
                "priority class names with 'system-' prefix are reserved for system use only. "
                "error: system-high is not a known system priority class",
            )
        ],
    ),
    (
        "priorityclass-value-too-high",
        obj("scheduling.k8s.io/v1", "PriorityClass", "high", None, value=2_000_000_000),
        [forb("value", "maximum allowed value of a user defined priority is 1000000000")],
    ),
    (
        "workloadspread-name",
        obj(
            "apps.kruise.io/v1alpha1",
            "WorkloadSpread",
            "WS_1",
            spec={
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "subsets": [{"name": "a"}],
            },
        ),
        [inv("metadata.name", "WS_1", SUBDOMAIN)],
    ),
    (
        "cloneset-name",
        obj("apps.kruise.io/v1alpha1", "CloneSet", "cs.", spec=deploy()["spec"]),
        [inv("metadata.name", "cs.", SUBDOMAIN)],
    ),
]


@pytest.mark.parametrize(("manifest", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(manifest: dict, expected: list[tuple[str, str, str]]) -> None:
    cls = class_for(manifest["apiVersion"], manifest["kind"])
    assert cls is not None
    got = [(e.field, e.reason, e.body()) for e in validate(cls.from_dict(manifest))]
    assert got == expected


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_str_is_field_colon_message() -> None:
    (err,) = validate(class_for("v1", "Pod").from_dict(pod(topologySpreadConstraints=[tsc(maxSkew=0)])))
    assert (
        str(err) == "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
    )


def test_errors_are_collected_across_the_object_in_server_order() -> None:
    """metadata, then containers, affinity, spread, tolerations: ValidatePodSpec's order."""
    manifest = pod(
        name="Web",
        containers=[ctr("App")],
        tolerations=[{"key": "k", "operator": "Exists", "effect": "Bad"}],
        topologySpreadConstraints=[tsc(maxSkew=0)],
        affinity=pod_aff(term(topologyKey="zone!")),
    )
    fields = [e.field for e in validate(class_for("v1", "Pod").from_dict(manifest))]
    assert fields == [
        "metadata.name",
        "spec.containers[0].name",
        f"{REQ_TERM}.topologyKey",
        f"{TSC0}.maxSkew",
        "spec.tolerations[0].effect",
    ]


def test_validation_does_not_change_the_object() -> None:
    manifest = pod(
        containers=[ctr(**res(limits={"cpu": "1"}))], topologySpreadConstraints=[tsc(matchLabelKeys=["app"])]
    )
    p = class_for("v1", "Pod").from_dict(copy.deepcopy(manifest))
    validate(p)
    assert p.to_dict() == manifest


def test_unvalidated_kinds_give_nothing() -> None:
    cls = class_for("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
    assert cls is not None
    assert (
        validate(
            cls.from_dict(
                {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
            )
        )
        == []
    )


def test_never_raises_a_bug_is_an_internal_error() -> None:
    p = Pod.from_dict(pod())
    object.__setattr__(p.spec, "containers", None)  # not something decoding can produce
    (err,) = validate(p)
    assert err.type is ErrorType.INTERNAL and "validating Pod" in err.detail


def test_error_values_print_as_kube_apiserver_prints_them() -> None:
    assert FieldError.invalid("f", {"b": "2", "a": "1"}, "d").body() == 'Invalid value: {"b":"2","a":"1"}: d'
    assert FieldError.invalid("f", None, "d").body() == "Invalid value: null: d"
    assert FieldError.invalid("f", [1, "x"], "d").body() == 'Invalid value: [1,"x"]: d'
    assert FieldError.invalid("f", "x", "d").body() == 'Invalid value: "x": d'
