"""The webhook's deployment manifests: complete documents in apply order, the WorkloadSpread CRD's
own schema, webhooks on the right paths through the Service or a URL, and YAML that loads back."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from kubespread.api.kruise import WorkloadSpread
from kubespread.api.validation import validate
from kubespread.live.manifests import manifests, render, webhook_manifests, with_metrics
from kubespread.live.ports import CONTROLLER_METRICS_PORT, SCHEDULER_METRICS_PORT, WEBHOOK_METRICS_PORT


def by_kind(manifests: list[dict[str, Any]], name: str | None = None) -> dict[str, dict[str, Any]]:
    """The documents by kind (of the component ``name`` when given: one of each kind)."""
    chosen = [m for m in manifests if name is None or m["metadata"]["name"] == name]
    out = {m["kind"]: m for m in chosen}
    assert len(out) == len(chosen), "one document per kind"
    return out


def test_every_document_is_complete_and_in_apply_order() -> None:
    docs = manifests()
    for m in docs:
        assert m["apiVersion"] and m["kind"] and m["metadata"]["name"]
    kinds = [(m["kind"], m["metadata"]["name"]) for m in docs]
    account = ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
    assert kinds == [
        ("Namespace", "kubespread-system"),
        ("CustomResourceDefinition", "workloadspreads.apps.kruise.io"),
        *((k, "kubespread-webhook") for k in [*account, "Service", "Deployment"]),
        *((k, "kubespread-controller") for k in [*account, "Deployment"]),
        *((k, "kubespread-scheduler") for k in [*account, "Role", "RoleBinding", "Deployment"]),
        ("MutatingWebhookConfiguration", "kubespread-webhook"),
        ("ValidatingWebhookConfiguration", "kubespread-webhook"),
    ]
    for m in docs:
        if m["kind"] in ("ServiceAccount", "Service", "Deployment", "Role", "RoleBinding"):
            assert m["metadata"]["namespace"] == "kubespread-system"


def test_components_choose_the_documents_and_webhook_manifests_keeps_its_pair() -> None:
    only = manifests(["scheduler"])
    assert {m["kind"] for m in only} == {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
    }
    assert "CustomResourceDefinition" in {m["kind"] for m in manifests(["controller"])}
    pair = {m["metadata"]["name"] for m in webhook_manifests() if m["kind"] == "Deployment"}
    assert pair == {"kubespread-webhook", "kubespread-controller"}
    three = {
        m["metadata"]["name"] for m in webhook_manifests(with_scheduler=True) if m["kind"] == "Deployment"
    }
    assert three == {"kubespread-webhook", "kubespread-controller", "kubespread-scheduler"}
    with pytest.raises(ValueError, match="components must be some of"):
        manifests(["webhook", "descheduler"])


def schema_of(manifests: list[dict[str, Any]], name: str = "v1alpha1") -> dict[str, Any]:
    crd = next(m for m in manifests if m["kind"] == "CustomResourceDefinition")
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == name]
    return version["schema"]["openAPIV3Schema"]


def test_the_crd_serves_workloadspreads_with_a_status_subresource_and_its_own_schema() -> None:
    crd = next(m for m in webhook_manifests() if m["kind"] == "CustomResourceDefinition")
    assert crd["metadata"]["name"] == "workloadspreads.apps.kruise.io"
    spec = crd["spec"]
    assert spec["group"] == "apps.kruise.io" and spec["scope"] == "Namespaced"
    assert spec["names"]["kind"] == "WorkloadSpread" and spec["names"]["shortNames"] == ["ws"]
    version, beta = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    # v1beta1 (kruise#2466) is served too, converted by the webhook
    assert (beta["name"], beta["served"], beta["storage"]) == ("v1beta1", True, False)
    beta_subset = schema_of([crd], "v1beta1")["properties"]["spec"]["properties"]["subsets"]["items"]
    assert {"requiredNodeSelector", "preferredNodeSelector"} <= set(beta_subset["properties"])
    assert "requiredNodeSelectorTerm" not in beta_subset["properties"]
    conversion = spec["conversion"]
    assert conversion["strategy"] == "Webhook" and conversion["webhook"]["conversionReviewVersions"] == ["v1"]
    assert conversion["webhook"]["clientConfig"]["service"]["path"] == "/convert-workloadspreads"
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
            "targetFilter": {
                "selector": {
                    "matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
                },
                "replicasPathList": ["spec.replicas"],
            },
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


def allowed(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def test_each_component_has_its_own_account_with_only_what_it_does() -> None:
    docs = manifests(namespace="spread")
    roles = {m["metadata"]["name"]: m["rules"] for m in docs if m["kind"] == "ClusterRole"}
    webhook, controller, scheduler = (
        roles["kubespread-webhook"],
        roles["kubespread-controller"],
        roles["kubespread-scheduler"],
    )
    # the webhook books subsets; it neither binds nor writes pods
    assert allowed(webhook, "apps.kruise.io", "workloadspreads/status", "update")
    assert allowed(webhook, "apps.kruise.io", "workloadspreads", "watch")
    assert not any(allowed(webhook, "", "pods", v) for v in ("patch", "delete", "list"))
    assert not allowed(webhook, "", "pods/binding", "create")
    # the controller: status, deletion cost, rescheduling deletions, the namespace label
    assert allowed(controller, "apps.kruise.io", "workloadspreads/status", "update")
    assert allowed(controller, "", "pods", "patch") and allowed(controller, "", "pods", "delete")
    assert allowed(controller, "", "namespaces", "patch")
    assert not allowed(controller, "", "pods/binding", "create")
    # the scheduler: binding, PodScheduled, events; its Lease only in its own namespace
    assert allowed(scheduler, "", "pods/binding", "create")
    assert allowed(scheduler, "", "pods/status", "patch")
    assert allowed(scheduler, "events.k8s.io", "events", "create")
    assert not allowed(scheduler, "coordination.k8s.io", "leases", "update")
    assert not allowed(scheduler, "apps.kruise.io", "workloadspreads/status", "update")
    lease_role = by_kind(docs, "kubespread-scheduler")["Role"]
    assert lease_role["metadata"]["namespace"] == "spread"
    assert allowed(lease_role["rules"], "coordination.k8s.io", "leases", "update")
    for rules in roles.values():
        assert not allowed(rules, "", "secrets", "get")
        assert not any("*" in r["verbs"] or "*" in r["resources"] for r in rules)
    for name in roles:
        mine = by_kind(docs, name)
        binding = mine["ClusterRoleBinding"]
        assert binding["roleRef"]["name"] == name
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": "spread"}]
        pod = mine["Deployment"]["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == name


def test_the_controller_and_scheduler_deployments_run_their_commands() -> None:
    docs = manifests(namespace="spread", image="registry.example/kubespread:1.0")
    controller = by_kind(docs, "kubespread-controller")["Deployment"]["spec"]
    (c,) = controller["template"]["spec"]["containers"]
    assert c["command"][:2] == ["kubespread", "controller"]
    assert c["image"] == "registry.example/kubespread:1.0"
    # no leader election in the controller: never two at once, even during a rollout
    assert controller["replicas"] == 1 and controller["strategy"] == {"type": "Recreate"}
    scheduler = by_kind(docs, "kubespread-scheduler")["Deployment"]["spec"]
    (c,) = scheduler["template"]["spec"]["containers"]
    command = c["command"]
    assert command[:2] == ["kubespread", "scheduler"] and "--leader-elect" in command
    assert command[command.index("--leader-elect-namespace") + 1] == "spread"
    assert scheduler["replicas"] == 2
    for spec in (controller, scheduler):
        pod = spec["template"]
        assert spec["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_deployment_serves_tls_from_the_secret_and_is_probed_on_its_metrics_port() -> None:
    docs = by_kind(webhook_manifests(image="registry.example/kubespread:1.0"), "kubespread-webhook")
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
    assert command[command.index("--hard-anti-affinity") + 1] == "off"
    assert pod["spec"]["volumes"] == [{"name": "tls", "secret": {"secretName": "kubespread-webhook-tls"}}]
    assert container["volumeMounts"][0]["mountPath"] == "/etc/kubespread/tls"
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics", "scheme": "HTTP"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics", "scheme": "HTTP"}
    assert container["resources"]["requests"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True


def webhooks(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    hooks = [h for m in docs if m["kind"].endswith("WebhookConfiguration") for h in m["webhooks"]]
    return {h["name"]: h for h in hooks}


def rules_of(hook: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, op)
        for r in hook["rules"]
        for group in r["apiGroups"]
        for resource in r["resources"]
        for op in r["operations"]
    }


SYSTEM = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "spread"]}
LABELLED = {"key": "kubespread.io/workloadspread", "operator": "In", "values": ["true"]}


def test_only_what_needs_the_webhook_calls_it_and_only_bookings_fail_closed() -> None:
    hooks = webhooks(webhook_manifests(namespace="spread"))
    assert set(hooks) == {
        "workloadspread.pods.kubespread.io",
        "workloadspread-deletions.pods.kubespread.io",
        "workloadspreads.kubespread.io",
    }
    book = hooks["workloadspread.pods.kubespread.io"]
    assert rules_of(book) == {("", "pods", "CREATE")}
    assert book["clientConfig"]["service"]["path"] == "/mutate-pods"
    assert book["namespaceSelector"]["matchExpressions"] == [SYSTEM, LABELLED]
    assert (book["failurePolicy"], book["sideEffects"], book["reinvocationPolicy"]) == (
        "Fail",
        "NoneOnDryRun",
        "Never",
    )
    gone = hooks["workloadspread-deletions.pods.kubespread.io"]
    assert rules_of(gone) == {("", "pods", "DELETE"), ("", "pods/eviction", "CREATE")}
    assert gone["clientConfig"]["service"]["path"] == "/validate-pods"
    assert gone["namespaceSelector"]["matchExpressions"] == [SYSTEM, LABELLED]
    assert (gone["failurePolicy"], gone["sideEffects"]) == ("Ignore", "NoneOnDryRun")
    ws = hooks["workloadspreads.kubespread.io"]
    assert rules_of(ws) == {
        ("apps.kruise.io", "workloadspreads", "CREATE"),
        ("apps.kruise.io", "workloadspreads", "UPDATE"),
    }
    assert (ws["failurePolicy"], ws["sideEffects"]) == ("Fail", "None")
    assert ws["namespaceSelector"]["matchExpressions"] == [SYSTEM]
    for hook in hooks.values():
        # never pod status, never pod updates: a kubelet's writes do not wait for the webhook
        assert not {
            r for r in rules_of(hook) if r[1] == "pods/status" or (r[1] == "pods" and r[2] == "UPDATE")
        }
        # the deletions one: the API server calls it up to 3 times a delete (issue 36)
        assert hook["timeoutSeconds"] == (1 if hook is gone else 5)
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["clientConfig"]["service"]["namespace"] == "spread"
        assert hook["clientConfig"]["service"]["name"] == "kubespread-webhook"
        assert "caBundle" not in hook["clientConfig"]


def test_the_optional_webhooks_fail_open_and_skip_what_the_booking_one_covers() -> None:
    docs = webhook_manifests(
        namespace="spread", failure_policy="Ignore", merge_match_label_keys=True, hard_anti_affinity="strict"
    )
    hooks = webhooks(docs)
    merge = hooks["match-label-keys.pods.kubespread.io"]
    assert merge["clientConfig"]["service"]["path"] == "/mutate-pods/match-label-keys"
    assert merge["namespaceSelector"]["matchExpressions"] == [
        SYSTEM,
        {"key": "kubespread.io/workloadspread", "operator": "DoesNotExist"},
    ]
    assert (merge["failurePolicy"], merge["sideEffects"], merge["reinvocationPolicy"]) == (
        "Ignore",
        "None",
        "IfNeeded",
    )
    limit = hooks["hard-anti-affinity.pods.kubespread.io"]
    assert rules_of(limit) == {("", "pods", "CREATE")}
    assert (limit["failurePolicy"], limit["sideEffects"]) == ("Ignore", "None")
    assert limit["namespaceSelector"]["matchExpressions"] == [SYSTEM]
    assert hooks["workloadspread.pods.kubespread.io"]["failurePolicy"] == "Ignore"
    command = by_kind(docs, "kubespread-webhook")["Deployment"]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ]
    assert command[command.index("--hard-anti-affinity") + 1] == "strict"


def test_url_mode_calls_the_url_and_carries_the_ca_bundle() -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    hooks = webhooks(webhook_manifests(url="https://10.0.0.5:9443/", ca_bundle=ca))
    assert {h["clientConfig"]["url"] for h in hooks.values()} == {
        "https://10.0.0.5:9443/mutate-pods",
        "https://10.0.0.5:9443/validate-pods",
        "https://10.0.0.5:9443/validate-workloadspreads",
    }
    for hook in hooks.values():
        assert "service" not in hook["clientConfig"]
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca


def test_an_unknown_failure_policy_or_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="failure_policy"):
        webhook_manifests(failure_policy="fail")
    with pytest.raises(ValueError, match="hard_anti_affinity"):
        webhook_manifests(hard_anti_affinity="zone")


@pytest.mark.slow
def test_render_round_trips_through_yaml() -> None:
    docs = manifests(url="https://127.0.0.1:9443", ca_bundle=b"ca")
    text = render(docs)
    assert text.count("\n---\n") == len(docs) - 1
    assert list(yaml.safe_load_all(text)) == docs


# --------------------------------------------------------------------------- metrics
@pytest.mark.parametrize(
    ("name", "port", "own"),
    [
        ("kubespread-webhook", WEBHOOK_METRICS_PORT, {"https": 9443}),
        ("kubespread-controller", CONTROLLER_METRICS_PORT, {}),
        ("kubespread-scheduler", SCHEDULER_METRICS_PORT, {}),
    ],
)
def test_every_component_exposes_a_named_metrics_port_and_the_scrape_annotations(
    name: str, port: int, own: dict[str, int]
) -> None:
    docs = by_kind(manifests(), name)
    pod = docs["Deployment"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {**own, "metrics": port}
    command = container["command"]
    assert command[command.index("--metrics-bind-address") + 1] == f"0.0.0.0:{port}"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(port),
        "prometheus.io/path": "/metrics",
    }
    if name == "kubespread-webhook":
        # the Service carries the reviews only: Prometheus scrapes the pods themselves
        assert [p["name"] for p in docs["Service"]["spec"]["ports"]] == ["https"]


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


def test_the_rebalancer_is_printed_when_asked_and_evicts_only() -> None:
    """Issue 36: ``manifests --component rebalancer``: ``rebalance --apply --every`` under
    leader election, its Lease's Role in its own namespace, evictions and reads only."""
    assert "kubespread-rebalancer" not in render(manifests())  # not by default: it evicts
    docs = manifests(["rebalancer"], namespace="spread")
    mine = by_kind(docs, "kubespread-rebalancer")
    (c,) = mine["Deployment"]["spec"]["template"]["spec"]["containers"]
    command = c["command"]
    assert command[:4] == ["kubespread", "rebalance", "--apply", "--every"]
    assert command[command.index("--leader-elect-namespace") + 1] == "spread"
    assert command[command.index("--metrics-bind-address") + 1] == "0.0.0.0:10254"
    rules = mine["ClusterRole"]["rules"]
    assert allowed(rules, "", "pods/eviction", "create")
    assert allowed(rules, "policy", "poddisruptionbudgets", "list")
    assert not allowed(rules, "", "pods", "delete") and not allowed(rules, "", "pods", "patch")
    assert mine["Role"]["metadata"]["namespace"] == "spread"
    assert allowed(mine["Role"]["rules"], "coordination.k8s.io", "leases", "update")
