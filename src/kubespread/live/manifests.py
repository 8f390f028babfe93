"""The manifests that deploy kubespread's admission webhook, in the order to apply them.

The serving certificate is not among them: create the Secret ``kubespread-webhook-tls``
(``tls.crt``, ``tls.key``) for the Service's DNS name, with cert-manager or by hand, and pass
its CA as ``ca_bundle`` so the API server trusts the webhook.

The WorkloadSpread CRD carries kubespread's own schema, written from
:mod:`kubespread.api.kruise`: in a cluster that already runs OpenKruise, keep Kruise's CRD and
leave this one out.

The webhooks skip kube-system and the webhook's own namespace: with ``failurePolicy: Fail``,
the webhook's pods must be able to start while the webhook is down.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from kubespread.io import dump_yaml
from kubespread.live.ports import WEBHOOK_METRICS_PORT

__all__ = [
    "APP_NAME",
    "CRD_NAME",
    "TLS_SECRET",
    "render",
    "webhook_manifests",
    "with_metrics",
]

APP_NAME: Final = "kubespread-webhook"
TLS_SECRET: Final = "kubespread-webhook-tls"
CRD_NAME: Final = "workloadspreads.apps.kruise.io"
KRUISE_GROUP: Final = "apps.kruise.io"
TLS_DIR: Final = "/etc/kubespread/tls"
CONTAINER_PORT: Final = 9443
#: the named container port of /metrics, /healthz and /readyz (plain HTTP)
METRICS_PORT_NAME: Final = "metrics"
FAILURE_POLICIES: Final = ("Fail", "Ignore")

_LABELS: Final = {"app.kubernetes.io/name": APP_NAME, "app.kubernetes.io/part-of": "kubespread"}


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict(_LABELS)
    return meta


# --- the WorkloadSpread CRD --------------------------------------------------------------------------------

_STRING: Final = {"type": "string"}
_INT32: Final = {"type": "integer", "format": "int32"}
_INT64: Final = {"type": "integer", "format": "int64"}
_STRING_MAP: Final = {"type": "object", "additionalProperties": {"type": "string"}}


def _obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out.update(extra)
    return out


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _node_selector_term() -> dict[str, Any]:
    requirement = _obj(
        {"key": dict(_STRING), "operator": dict(_STRING), "values": _array(dict(_STRING))},
        ["key", "operator"],
    )
    return _obj({"matchExpressions": _array(requirement), "matchFields": _array(requirement)})


def _toleration() -> dict[str, Any]:
    return _obj(
        {
            "key": dict(_STRING),
            "operator": dict(_STRING),
            "value": dict(_STRING),
            "effect": dict(_STRING),
            "tolerationSeconds": dict(_INT64),
        }
    )


def _subset() -> dict[str, Any]:
    return _obj(
        {
            "name": dict(_STRING),
            "requiredNodeSelectorTerm": _node_selector_term(),
            "preferredNodeSelectorTerms": _array(
                _obj({"weight": dict(_INT32), "preference": _node_selector_term()}, ["weight", "preference"])
            ),
            "tolerations": _array(_toleration()),
            # a strategic merge patch of the pod: any shape a pod has
            "patch": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "maxReplicas": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
        },
        ["name"],
    )


def _spec() -> dict[str, Any]:
    target = _obj(
        {"apiVersion": dict(_STRING), "kind": dict(_STRING), "name": dict(_STRING)},
        ["apiVersion", "kind", "name"],
    )
    strategy = _obj(
        {
            "type": {"type": "string", "enum": ["Fixed", "Adaptive"]},
            "adaptive": _obj(
                {"rescheduleCriticalSeconds": dict(_INT32), "disableSimulationSchedule": {"type": "boolean"}}
            ),
        }
    )
    return _obj(
        {"targetRef": target, "subsets": _array(_subset()), "scheduleStrategy": strategy},
        ["targetRef", "subsets"],
    )


def _status() -> dict[str, Any]:
    # nothing required: the webhook writes only the fields that differ from their defaults
    condition = _obj(
        {
            "type": dict(_STRING),
            "status": dict(_STRING),
            "lastTransitionTime": dict(_STRING),
            "reason": dict(_STRING),
            "message": dict(_STRING),
        }
    )
    unscheduled = _obj(
        {"unschedulable": {"type": "boolean"}, "unscheduledTime": dict(_STRING), "failedCount": dict(_INT32)}
    )
    subset_status = _obj(
        {
            "name": dict(_STRING),
            "missingReplicas": dict(_INT32),
            "replicas": dict(_INT32),
            "creatingPods": dict(_STRING_MAP),
            "deletingPods": dict(_STRING_MAP),
            "subsetUnscheduledStatus": unscheduled,
            "conditions": _array(condition),
        }
    )
    return _obj({"observedGeneration": dict(_INT64), "subsetStatuses": _array(subset_status)})


def workload_spread_crd() -> dict[str, Any]:
    """The CustomResourceDefinition of apps.kruise.io/v1alpha1 WorkloadSpread."""
    schema = _obj({"apiVersion": dict(_STRING), "kind": dict(_STRING), "metadata": {"type": "object"}})
    schema["properties"].update({"spec": _spec(), "status": _status()})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": _meta(CRD_NAME),
        "spec": {
            "group": KRUISE_GROUP,
            "names": {
                "kind": "WorkloadSpread",
                "listKind": "WorkloadSpreadList",
                "plural": "workloadspreads",
                "singular": "workloadspread",
                "shortNames": ["ws"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Workload-Kind", "type": "string", "jsonPath": ".spec.targetRef.kind"},
                        {"name": "Workload-Name", "type": "string", "jsonPath": ".spec.targetRef.name"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


# --- RBAC --------------------------------------------------------------------------------------------------

_READ: Final = ["get", "list", "watch"]


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _cluster_role() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(APP_NAME),
        "rules": [
            _rule([""], ["nodes", "pods", "namespaces"], list(_READ)),
            _rule(["apps"], ["replicasets", "deployments", "statefulsets"], list(_READ)),
            _rule(["batch"], ["jobs"], list(_READ)),
            _rule([KRUISE_GROUP], ["clonesets"], list(_READ)),
            _rule([KRUISE_GROUP], ["workloadspreads"], [*_READ, "update"]),
            _rule([KRUISE_GROUP], ["workloadspreads/status"], ["update", "patch"]),
            _rule([""], ["pods"], ["patch", "delete"]),
            # the scheduler's PodScheduled=False condition (UpdatePodCondition patches status)
            _rule([""], ["pods/status"], ["patch", "update"]),
            _rule([""], ["pods/binding"], ["create"]),
            _rule([""], ["events"], ["create", "patch"]),
            _rule(["events.k8s.io"], ["events"], ["create", "patch"]),
            _rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"]),
        ],
    }


# --- the server --------------------------------------------------------------------------------------------


def with_metrics(deployment: dict[str, Any], port: int, *, container: str | None = None) -> dict[str, Any]:
    """Make a kubespread Deployment scrapeable and probed, in place (and returned): the
    container (``container``, else the first) gets ``--metrics-bind-address 0.0.0.0:PORT``,
    a container port named ``metrics``, readiness on /readyz and liveness on /healthz; the pod
    template gets the ``prometheus.io/scrape``, ``/port`` and ``/path`` annotations that
    annotation-based Prometheus scrape configs (no ServiceMonitor) read. One helper for every
    component's Deployment, so they all expose the same way."""
    template = deployment["spec"]["template"]
    containers = template["spec"]["containers"]
    target = next((c for c in containers if c["name"] == container), None) if container else containers[0]
    if target is None:
        raise ValueError(f"no container {container!r} in Deployment {deployment['metadata']['name']}")
    target["command"] = [*target.get("command", []), "--metrics-bind-address", f"0.0.0.0:{port}"]
    target["ports"] = [
        *target.get("ports", []),
        {"name": METRICS_PORT_NAME, "containerPort": port, "protocol": "TCP"},
    ]
    probe = {"port": METRICS_PORT_NAME, "scheme": "HTTP"}
    timing = {"periodSeconds": 10, "timeoutSeconds": 2}
    target["readinessProbe"] = {"httpGet": {"path": "/readyz", **probe}, **timing, "initialDelaySeconds": 2}
    target["livenessProbe"] = {
        "httpGet": {"path": "/healthz", **probe},
        **timing,
        "initialDelaySeconds": 10,
        "failureThreshold": 3,
    }
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.update(
        {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
    )
    return deployment


def _deployment(namespace: str, image: str) -> dict[str, Any]:
    container = {
        "name": "webhook",
        "image": image,
        "command": [
            "kubespread",
            "webhook",
            "--tls-cert",
            f"{TLS_DIR}/tls.crt",
            "--tls-key",
            f"{TLS_DIR}/tls.key",
            "--port",
            str(CONTAINER_PORT),
        ],
        "ports": [{"name": "https", "containerPort": CONTAINER_PORT, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tls", "mountPath": TLS_DIR, "readOnly": True}],
    }
    selector = {"app.kubernetes.io/name": APP_NAME}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(APP_NAME, namespace),
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(selector)},
            "template": {
                "metadata": {"labels": dict(_LABELS)},
                "spec": {
                    "serviceAccountName": APP_NAME,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "runAsGroup": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    # the two replicas on different nodes when the cluster has them
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": dict(selector)},
                        }
                    ],
                    "containers": [container],
                    "volumes": [{"name": "tls", "secret": {"secretName": TLS_SECRET}}],
                },
            },
        },
    }
    return with_metrics(deployment, WEBHOOK_METRICS_PORT)


def _service(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(APP_NAME, namespace),
        "spec": {
            "selector": {"app.kubernetes.io/name": APP_NAME},
            "ports": [{"name": "https", "port": 443, "targetPort": CONTAINER_PORT, "protocol": "TCP"}],
        },
    }


# --- the webhook configurations ----------------------------------------------------------------------------


def _webhook(
    name: str,
    path: str,
    rules: list[dict[str, Any]],
    *,
    namespace: str,
    url: str | None,
    ca_bundle: bytes | None,
    failure_policy: str,
) -> dict[str, Any]:
    client: dict[str, Any]
    if url is not None:
        client = {"url": url.rstrip("/") + path}
    else:
        client = {"service": {"namespace": namespace, "name": APP_NAME, "path": path, "port": 443}}
    if ca_bundle is not None:
        client["caBundle"] = base64.b64encode(ca_bundle).decode()
    excluded = list(dict.fromkeys(["kube-system", namespace]))
    return {
        "name": name,
        "clientConfig": client,
        "rules": rules,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "NoneOnDryRun",
        "timeoutSeconds": 10,
        "failurePolicy": failure_policy,
        "matchPolicy": "Equivalent",
        "namespaceSelector": {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded}
            ]
        },
    }


def _pod_rule(operations: list[str], resource: str) -> dict[str, Any]:
    return {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": operations,
        "resources": [resource],
        "scope": "Namespaced",
    }


def webhook_manifests(
    *,
    namespace: str = "kubespread-system",
    image: str = "kubespread:latest",
    url: str | None = None,
    ca_bundle: bytes | None = None,
    failure_policy: str = "Fail",
) -> list[dict[str, Any]]:
    """Everything the webhook needs, in apply order. ``url``: the API server calls the webhook
    there (``<url>/mutate-pods`` ...) instead of through the Service, for a webhook running
    outside the cluster."""
    if failure_policy not in FAILURE_POLICIES:
        choices = ", ".join(FAILURE_POLICIES)
        raise ValueError(f"failure_policy must be one of {choices}, not {failure_policy!r}")
    common: dict[str, Any] = {
        "namespace": namespace,
        "url": url,
        "ca_bundle": ca_bundle,
        "failure_policy": failure_policy,
    }
    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": _meta(APP_NAME),
        "webhooks": [
            {
                **_webhook(
                    "mutate-pods.kubespread.io", "/mutate-pods", [_pod_rule(["CREATE"], "pods")], **common
                ),
                "reinvocationPolicy": "Never",
            }
        ],
    }
    validating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": _meta(APP_NAME),
        "webhooks": [
            _webhook(
                "validate-pods.kubespread.io",
                "/validate-pods",
                [
                    _pod_rule(["CREATE", "UPDATE", "DELETE"], "pods"),
                    _pod_rule(["CREATE"], "pods/eviction"),
                    _pod_rule(["UPDATE"], "pods/status"),
                ],
                **common,
            ),
            _webhook(
                "validate-workloadspreads.kubespread.io",
                "/validate-workloadspreads",
                [
                    {
                        "apiGroups": [KRUISE_GROUP],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["workloadspreads"],
                        "scope": "Namespaced",
                    }
                ],
                **common,
            ),
        ],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(namespace)},
        workload_spread_crd(),
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(APP_NAME, namespace)},
        _cluster_role(),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(APP_NAME),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": APP_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": APP_NAME, "namespace": namespace}],
        },
        _service(namespace),
        _deployment(namespace, image),
        mutating,
        validating,
    ]


def render(manifests: list[dict[str, Any]]) -> str:
    """Multi-document YAML, for ``kubectl apply -f -``."""
    return "---\n".join(dump_yaml(m) for m in manifests)
