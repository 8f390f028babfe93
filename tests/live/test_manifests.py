"""The webhook's deployment manifests: complete documents in apply order, the WorkloadSpread CRD's
own schema, webhooks on the right paths through the Service or a URL, and YAML that loads back."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from kubespread.api.kruise import WorkloadSpread
from kubespread.api.validation import validate
from kubespread.live.manifests import render, webhook_manifests, with_metrics
from kubespread.live.ports import WEBHOOK_METRICS_PORT


def by_kind(manifests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {m["kind"]: m for m in manifests}
    assert len(out) == len(manifests), "one document per kind"
    return out


def test_every_document_is_complete_and_in_apply_order() -> None:
    manifests = webhook_manifests()
    for m in manifests:
        assert m["apiVersion"] and m["kind"] and m["metadata"]["name"]
    kinds = [m["kind"] for m in manifests]
    assert kinds == [
        "Namespace",
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Service",
        "Deployment",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    docs = by_kind(manifests)
    for kind in ("ServiceAccount", "Service", "Deployment"):
        assert docs[kind]["metadata"]["namespace"] == "kubespread-system"
    assert docs["Namespace"]["metadata"]["name"] == "kubespread-system"


def schema_of(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    (version,) = by_kind(manifests)["CustomResourceDefinition"]["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]


def test_the_crd_serves_workloadspreads_with_a_status_subresource_and_its_own_schema() -> None:
    crd = by_kind(webhook_manifests())["CustomResourceDefinition"]
    assert crd["metadata"]["name"] == "workloadspreads.apps.kruise.io"
    spec = crd["spec"]
    assert spec["group"] == "apps.kruise.io" and spec["scope"] == "Namespaced"
    assert spec["names"]["kind"] == "WorkloadSpread" and spec["names"]["shortNames"] == ["ws"]
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert {c["jsonPath"] for c in version["additionalPrinterColumns"]} >= {
        ".spec.targetRef.kind",
        ".spec.targetRef.name",
    }
    ws_spec = schema_of([crd])["properties"]["spec"]
    assert "targetRef" in ws_spec["required"]
    assert ws_spec["properties"]["targetRef"]["required"] == ["apiVersion", "kind", "name"]
    assert "x-kubernetes-preserve-unknown-fields" not in ws_spec
    subset = ws_spec["properties"]["subsets"]["items"]
    assert subset["required"] == ["name"]
    assert subset["properties"]["patch"]["x-kubernetes-preserve-unknown-fields"] is True
    assert subset["properties"]["maxReplicas"]["x-kubernetes-int-or-string"] is True
    strategy = ws_spec["properties"]["scheduleStrategy"]["properties"]
    assert strategy["type"]["enum"] == ["Fixed", "Adaptive"]
    status = schema_of([crd])["properties"]["status"]["properties"]["subsetStatuses"]["items"]["properties"]
    assert status["creatingPods"]["additionalProperties"] == {"type": "string"}


def walk(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """The fields of ``value`` the structural schema would prune (unknown, not preserved)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-int-or-string"):
        return []
    if isinstance(value, dict) and schema.get("type") == "object":
        props = schema.get("properties")
        if props is None:
            extra = schema.get("additionalProperties")
            return [p for k, v in value.items() for p in walk(extra, v, f"{path}.{k}")] if extra else []
        return [
            p
            for k, v in value.items()
            for p in (walk(props[k], v, f"{path}.{k}") if k in props else [f"{path}.{k}"])
        ]
    if isinstance(value, list) and schema.get("type") == "array":
        return [p for i, v in enumerate(value) for p in walk(schema["items"], v, f"{path}[{i}]")]
    return []


def test_the_schema_keeps_every_field_of_a_full_workload_spread() -> None:
    ws = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "scheduleStrategy": {
                "type": "Adaptive",
                "adaptive": {"rescheduleCriticalSeconds": 30, "disableSimulationSchedule": True},
            },
            "subsets": [
                {
                    "name": "a",
                    "maxReplicas": "50%",
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                    },
                    "preferredNodeSelectorTerms": [
                        {
                            "weight": 5,
                            "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                        }
                    ],
                    "tolerations": [{"key": "t", "operator": "Exists", "effect": "NoSchedule"}],
                    "patch": {"metadata": {"labels": {"subset": "a"}}},
                },
                {"name": "b"},
            ],
        },
        "status": {
            "observedGeneration": 2,
            "subsetStatuses": [
                {
                    "name": "a",
                    "missingReplicas": 1,
                    "replicas": 2,
                    "creatingPods": {"p1": "2026-01-01T00:00:00Z"},
                    "deletingPods": {"p2": "2026-01-01T00:00:00Z"},
                    "subsetUnscheduledStatus": {
                        "unschedulable": True,
                        "unscheduledTime": "2026-01-01T00:00:00Z",
                        "failedCount": 1,
                    },
                    "conditions": [
                        {"type": "SchedulingFailed", "status": "True", "reason": "r", "message": "m"}
                    ],
                }
            ],
        },
    }
    assert validate(WorkloadSpread.from_dict(ws)) == []
    assert walk(schema_of(webhook_manifests()), ws) == []
    # the walker does see a field the schema does not know
    assert walk(schema_of(webhook_manifests()), {"spec": {"bogus": 1}}) == [".spec.bogus"]


def test_rbac_lets_the_service_account_book_status_and_bind() -> None:
    docs = by_kind(webhook_manifests(namespace="spread"))
    rules = docs["ClusterRole"]["rules"]

    def allowed(group: str, resource: str, verb: str) -> bool:
        return any(
            group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules
        )

    assert allowed("apps.kruise.io", "workloadspreads/status", "update")
    assert allowed("apps.kruise.io", "workloadspreads", "watch")
    assert allowed("", "pods/binding", "create")
    assert allowed("coordination.k8s.io", "leases", "update")
    assert allowed("events.k8s.io", "events", "create")
    assert not allowed("", "secrets", "get")
    binding = docs["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == docs["ClusterRole"]["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": docs["ServiceAccount"]["metadata"]["name"], "namespace": "spread"}
    ]


def test_the_deployment_serves_tls_from_the_secret_and_is_probed_on_its_metrics_port() -> None:
    docs = by_kind(webhook_manifests(image="registry.example/kubespread:1.0"))
    dep, svc = docs["Deployment"], docs["Service"]
    assert dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": 9443, "protocol": "TCP"}]
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "registry.example/kubespread:1.0"
    command = container["command"]
    assert command[:2] == ["kubespread", "webhook"]
    assert command[command.index("--tls-cert") + 1] == "/etc/kubespread/tls/tls.crt"
    assert command[command.index("--tls-key") + 1] == "/etc/kubespread/tls/tls.key"
    assert command[command.index("--port") + 1] == "9443"
    assert pod["spec"]["volumes"] == [{"name": "tls", "secret": {"secretName": "kubespread-webhook-tls"}}]
    assert container["volumeMounts"][0]["mountPath"] == "/etc/kubespread/tls"
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics", "scheme": "HTTP"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics", "scheme": "HTTP"}
    assert container["resources"]["requests"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]


def webhooks(manifests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    docs = by_kind(manifests)
    hooks = [
        *docs["MutatingWebhookConfiguration"]["webhooks"],
        *docs["ValidatingWebhookConfiguration"]["webhooks"],
    ]
    return {h["clientConfig"].get("service", {}).get("path") or h["clientConfig"]["url"]: h for h in hooks}


def rules_of(hook: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, op)
        for r in hook["rules"]
        for group in r["apiGroups"]
        for resource in r["resources"]
        for op in r["operations"]
    }


def test_the_webhooks_call_the_service_on_their_paths() -> None:
    hooks = webhooks(webhook_manifests(namespace="spread", failure_policy="Ignore"))
    assert set(hooks) == {"/mutate-pods", "/validate-pods", "/validate-workloadspreads"}
    for path, hook in hooks.items():
        assert hook["clientConfig"]["service"] == {
            "namespace": "spread",
            "name": "kubespread-webhook",
            "path": path,
            "port": 443,
        }
        assert "caBundle" not in hook["clientConfig"]
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["sideEffects"] == "NoneOnDryRun"
        assert hook["timeoutSeconds"] == 10
        assert hook["failurePolicy"] == "Ignore"
        (expr,) = hook["namespaceSelector"]["matchExpressions"]
        assert expr == {
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": ["kube-system", "spread"],
        }
    assert rules_of(hooks["/mutate-pods"]) == {("", "pods", "CREATE")}
    assert rules_of(hooks["/validate-pods"]) == {
        ("", "pods", "CREATE"),
        ("", "pods", "UPDATE"),
        ("", "pods", "DELETE"),
        ("", "pods/eviction", "CREATE"),
        ("", "pods/status", "UPDATE"),
    }
    assert rules_of(hooks["/validate-workloadspreads"]) == {
        ("apps.kruise.io", "workloadspreads", "CREATE"),
        ("apps.kruise.io", "workloadspreads", "UPDATE"),
    }


def test_url_mode_calls_the_url_and_carries_the_ca_bundle() -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    hooks = webhooks(webhook_manifests(url="https://10.0.0.5:9443/", ca_bundle=ca))
    assert set(hooks) == {
        "https://10.0.0.5:9443/mutate-pods",
        "https://10.0.0.5:9443/validate-pods",
        "https://10.0.0.5:9443/validate-workloadspreads",
    }
    for hook in hooks.values():
        assert "service" not in hook["clientConfig"]
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca
        assert hook["failurePolicy"] == "Fail"


def test_an_unknown_failure_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="failure_policy"):
        webhook_manifests(failure_policy="fail")


@pytest.mark.slow
def test_render_round_trips_through_yaml() -> None:
    manifests = webhook_manifests(url="https://127.0.0.1:9443", ca_bundle=b"ca")
    text = render(manifests)
    assert text.count("\n---\n") == len(manifests) - 1
    assert list(yaml.safe_load_all(text)) == manifests


# --------------------------------------------------------------------------- metrics
def test_the_webhook_pods_expose_a_named_metrics_port_and_the_scrape_annotations() -> None:
    dep = by_kind(webhook_manifests())["Deployment"]
    pod = dep["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": 9443, "metrics": WEBHOOK_METRICS_PORT}
    command = container["command"]
    assert command[command.index("--metrics-bind-address") + 1] == f"0.0.0.0:{WEBHOOK_METRICS_PORT}"
    assert pod["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(WEBHOOK_METRICS_PORT),
        "prometheus.io/path": "/metrics",
    }
    # the Service carries the reviews only: Prometheus scrapes the pods themselves
    assert [p["name"] for p in by_kind(webhook_manifests())["Service"]["spec"]["ports"]] == ["https"]


def _two_container_deployment() -> dict[str, Any]:
    return {
        "metadata": {"name": "kubespread-scheduler"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "x"}, "annotations": {"keep": "me"}},
                "spec": {
                    "containers": [
                        {"name": "sidecar", "image": "s"},
                        {"name": "scheduler", "image": "k", "command": ["kubespread", "scheduler"]},
                    ]
                },
            }
        },
    }


def test_with_metrics_adds_the_port_the_flag_the_probes_and_the_annotations_to_the_named_container() -> None:
    dep = with_metrics(_two_container_deployment(), 10251, container="scheduler")
    sidecar, sched = dep["spec"]["template"]["spec"]["containers"]
    assert "ports" not in sidecar and "readinessProbe" not in sidecar
    assert sched["command"] == ["kubespread", "scheduler", "--metrics-bind-address", "0.0.0.0:10251"]
    assert sched["ports"] == [{"name": "metrics", "containerPort": 10251, "protocol": "TCP"}]
    assert sched["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert sched["livenessProbe"]["httpGet"]["path"] == "/healthz"
    annotations = dep["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {
        "keep": "me",
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "10251",
        "prometheus.io/path": "/metrics",
    }


def test_with_metrics_names_a_missing_container() -> None:
    with pytest.raises(ValueError, match="no container 'nope'"):
        with_metrics(_two_container_deployment(), 10251, container="nope")
