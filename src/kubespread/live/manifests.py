"""The manifests that deploy kubespread in a cluster, in the order to apply them.

Three components, each with its own ServiceAccount and least-privilege ClusterRole: the
admission webhook (a Deployment of 2 behind a Service), the WorkloadSpread controller and the
secondary scheduler (leader-elected, its Lease in the components' namespace through a Role).

The serving certificate is not among them: create the Secret ``kubespread-webhook-tls``
(``tls.crt``, ``tls.key``) for the Service's DNS name, with cert-manager or by hand, and pass
its CA as ``ca_bundle`` so the API server trusts the webhook.

The WorkloadSpread CRD carries kubespread's own schema, written from
:mod:`kubespread.api.kruise`: in a cluster that already runs OpenKruise, keep Kruise's CRD and
leave this one out.

What the webhook is called for, and what a call missed costs (see :func:`webhook_configurations`):
only pod creations, deletions and evictions in namespaces that hold a WorkloadSpread (the
controller labels them ``kubespread.io/workloadspread=true``) and WorkloadSpread writes. Pod
status and other pod updates never go through it. Only the booking of a new pod and a
WorkloadSpread's validation fail closed; what the rest would have done the controller redoes.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any, Final

from kubespread.api.keys import LABEL_WORKLOADSPREAD_NAMESPACE
from kubespread.io import dump_yaml
from kubespread.live.crd import CRD_NAME, KRUISE_GROUP, definition
from kubespread.live.paths import (
    CONVERT_WORKLOADSPREADS,
    MUTATE_PODS,
    MUTATE_PODS_MATCH_LABEL_KEYS,
    VALIDATE_PODS,
    VALIDATE_WORKLOADSPREADS,
)
from kubespread.live.ports import (
    CONTROLLER_METRICS_PORT,
    REBALANCER_METRICS_PORT,
    SCHEDULER_METRICS_PORT,
    WEBHOOK_METRICS_PORT,
)

__all__ = [
    "APP_NAME",
    "COMPONENTS",
    "COMPONENTS_NAMESPACE",
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_COMPONENTS",
    "HARD_ANTI_AFFINITY_MODES",
    "REBALANCER_NAME",
    "SCHEDULER_NAME",
    "TLS_SECRET",
    "WORKLOADSPREAD_NAMESPACE_LABEL",
    "ca_bundle_problem",
    "manifests",
    "render",
    "webhook_components",
    "webhook_manifests",
    "with_metrics",
]

APP_NAME: Final = "kubespread-webhook"
CONTROLLER_NAME: Final = "kubespread-controller"
SCHEDULER_NAME: Final = "kubespread-scheduler"
#: what ``kubespread manifests --component`` takes, in apply order
COMPONENTS: Final = ("webhook", "controller", "scheduler", "rebalancer")
#: what ``kubespread manifests`` prints without --component (the rebalancer evicts: asked for)
DEFAULT_COMPONENTS: Final = ("webhook", "controller", "scheduler")
REBALANCER_NAME: Final = "kubespread-rebalancer"
#: how often the printed rebalancer runs (the descheduler's usual interval is minutes)
REBALANCE_EVERY: Final = "10m"
HARD_ANTI_AFFINITY_MODES: Final = ("off", "design", "strict")
#: where ``kubespread manifests`` puts the components (their accounts, the scheduler's Lease
#: and its Role), and so the scheduler's default --leader-elect-namespace: the two agree
COMPONENTS_NAMESPACE: Final = "kubespread-system"
#: the label the controller keeps on namespaces holding a WorkloadSpread: the pod webhooks'
#: namespaceSelector, so pods elsewhere never wait for (or on) the webhook
WORKLOADSPREAD_NAMESPACE_LABEL: Final = LABEL_WORKLOADSPREAD_NAMESPACE
TLS_SECRET: Final = "kubespread-webhook-tls"
TLS_DIR: Final = "/etc/kubespread/tls"
CONTAINER_PORT: Final = 9443
#: the named container port of /metrics, /healthz and /readyz (plain HTTP)
METRICS_PORT_NAME: Final = "metrics"
FAILURE_POLICIES: Final = ("Fail", "Ignore")

#: a webhook call's deadline: the API server waits this long at most before the failurePolicy
WEBHOOK_TIMEOUT_SECONDS: Final = 5
#: the deletions webhook's deadline: the API server calls it up to three times for one
#: deletion (measured on v1.36: an unbound pod's delete twice, a terminating pod's final
#: delete three times; an eviction once), so a hung webhook would hold a delete 15 s at 5 s a
#: call. Its answer only gives a subset's place back sooner (Ignore: the controller recounts
#: anyway), and it answers in milliseconds: 1 s a call bounds a delete at 3 s
DELETE_WEBHOOK_TIMEOUT_SECONDS: Final = 1


def _labels(app: str = APP_NAME) -> dict[str, str]:
    return {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "kubespread"}


def _meta(name: str, namespace: str | None = None, app: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = _labels(app or name)
    return meta


def workload_spread_crd(converter: dict[str, Any] | None = None) -> dict[str, Any]:
    """The WorkloadSpread CRD (:func:`kubespread.live.crd.definition`) labelled as the webhook's."""
    return definition(_meta(CRD_NAME, app=APP_NAME), converter)


# --- RBAC --------------------------------------------------------------------------------------------------

_READ: Final = ["get", "list", "watch"]


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _workload_reads() -> list[dict[str, Any]]:
    """Owner chains (pod -> ReplicaSet -> Deployment, ...) and WorkloadSpreads, watched."""
    return [
        _rule([""], ["nodes", "namespaces"], list(_READ)),
        _rule(["apps"], ["replicasets", "deployments", "statefulsets"], list(_READ)),
        _rule(["batch"], ["jobs"], list(_READ)),
        _rule([KRUISE_GROUP], ["clonesets", "workloadspreads"], list(_READ)),
        # the subsets' bookkeeping: a PUT carrying the resourceVersion read
        _rule([KRUISE_GROUP], ["workloadspreads/status"], ["update"]),
    ]


def _webhook_rules() -> list[dict[str, Any]]:
    # pods are read one at a time (the pod an eviction names, a generated name's clash)
    return [*_workload_reads(), _rule([""], ["pods"], ["get"])]


def _controller_rules() -> list[dict[str, Any]]:
    return [
        *_workload_reads(),
        # deletion-cost and subset annotations (patch); pods a subset cannot hold (delete)
        _rule([""], ["pods"], [*_READ, "patch", "delete"]),
        # the WorkloadSpread namespace label the pod webhooks select on
        _rule([""], ["namespaces"], ["patch"]),
        _rule(["events.k8s.io"], ["events"], ["create", "patch"]),
    ]


def _scheduler_rules() -> list[dict[str, Any]]:
    return [
        _rule([""], ["nodes", "namespaces", "pods"], list(_READ)),
        # preemption weighs the budgets its victims would break
        _rule(["policy"], ["poddisruptionbudgets"], list(_READ)),
        # preemption's victims are deleted (gracefully: a plain delete, not an eviction)
        _rule([""], ["pods"], ["delete"]),
        _rule([""], ["pods/binding"], ["create"]),
        # the PodScheduled=False condition and nominatedNodeName (UpdatePodCondition patches
        # status); a victim's DisruptionTarget condition
        _rule([""], ["pods/status"], ["patch"]),
        _rule(["events.k8s.io"], ["events"], ["create", "patch"]),
    ]


def _rebalancer_rules() -> list[dict[str, Any]]:
    """What ``rebalance --kubeconfig --apply`` reads (the whole cluster, as ``schedule
    --kubeconfig``) and its one write: evictions (never a plain delete: budgets are asked)."""
    return [
        _rule([""], ["nodes", "namespaces", "pods", "services"], list(_READ)),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], list(_READ)),
        _rule(["apps"], ["deployments", "replicasets", "statefulsets"], list(_READ)),
        _rule(["batch"], ["jobs"], list(_READ)),
        _rule([KRUISE_GROUP], ["clonesets", "workloadspreads"], list(_READ)),
        _rule(["policy"], ["poddisruptionbudgets"], list(_READ)),
        _rule([""], ["pods/eviction"], ["create"]),
    ]


def _lease_rules() -> list[dict[str, Any]]:
    return [_rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"])]


def _account(name: str, namespace: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ServiceAccount, its ClusterRole of ``rules`` and the binding."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, namespace)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(name),
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
    ]


def _namespaced_role(name: str, namespace: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Role in ``namespace`` bound to the ServiceAccount ``name`` (a Lease needs no more)."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(name, namespace),
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        },
    ]


# --- the Deployments ---------------------------------------------------------------------------------------

_SECURITY: Final = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def _deployment(
    name: str,
    namespace: str,
    container: dict[str, Any],
    *,
    replicas: int,
    volumes: list[dict[str, Any]] | None = None,
    recreate: bool = False,
) -> dict[str, Any]:
    """A Deployment of one container running as ServiceAccount ``name``, non-root, its
    replicas on different nodes when the cluster has them. ``recreate``: never two at once
    (a controller without leader election)."""
    selector = {"app.kubernetes.io/name": name}
    container = {
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": dict(_SECURITY),
        **container,
    }
    spec: dict[str, Any] = {"replicas": replicas, "selector": {"matchLabels": dict(selector)}}
    if recreate:
        spec["strategy"] = {"type": "Recreate"}
    pod_spec: dict[str, Any] = {
        "serviceAccountName": name,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
    }
    if replicas > 1:
        pod_spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(selector)},
            }
        ]
    if volumes:
        pod_spec["volumes"] = volumes
    spec["template"] = {"metadata": {"labels": _labels(name)}, "spec": pod_spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, namespace), "spec": spec}


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


def _webhook_deployment(namespace: str, image: str, hard_anti_affinity: str) -> dict[str, Any]:
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
            "--hard-anti-affinity",
            hard_anti_affinity,
        ],
        "ports": [{"name": "https", "containerPort": CONTAINER_PORT, "protocol": "TCP"}],
        "volumeMounts": [{"name": "tls", "mountPath": TLS_DIR, "readOnly": True}],
    }
    deployment = _deployment(
        APP_NAME,
        namespace,
        container,
        replicas=2,
        volumes=[{"name": "tls", "secret": {"secretName": TLS_SECRET}}],
    )
    return with_metrics(deployment, WEBHOOK_METRICS_PORT)


def _controller_deployment(namespace: str, image: str) -> dict[str, Any]:
    container = {"name": "controller", "image": image, "command": ["kubespread", "controller"]}
    deployment = _deployment(CONTROLLER_NAME, namespace, container, replicas=1, recreate=True)
    return with_metrics(deployment, CONTROLLER_METRICS_PORT)


def _scheduler_deployment(namespace: str, image: str) -> dict[str, Any]:
    container = {
        "name": "scheduler",
        "image": image,
        "command": [
            "kubespread",
            "scheduler",
            "--scheduler-name",
            "kubespread",
            "--leader-elect",
            "--leader-elect-namespace",
            namespace,
        ],
    }
    deployment = _deployment(SCHEDULER_NAME, namespace, container, replicas=2)
    return with_metrics(deployment, SCHEDULER_METRICS_PORT)


def _rebalancer_deployment(namespace: str, image: str) -> dict[str, Any]:
    container = {
        "name": "rebalancer",
        "image": image,
        "command": [
            "kubespread",
            "rebalance",
            "--apply",
            "--every",
            REBALANCE_EVERY,
            "--leader-elect",
            "--leader-elect-namespace",
            namespace,
        ],
    }
    deployment = _deployment(REBALANCER_NAME, namespace, container, replicas=1, recreate=True)
    return with_metrics(deployment, REBALANCER_METRICS_PORT)


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


def _client_config(path: str, *, namespace: str, url: str | None, ca_bundle: bytes | None) -> dict[str, Any]:
    """How the API server reaches the webhook's ``path``: ``url`` or the Service, with the CA."""
    client: dict[str, Any]
    if url is not None:
        client = {"url": url.rstrip("/") + path}
    else:
        client = {"service": {"namespace": namespace, "name": APP_NAME, "path": path, "port": 443}}
    if ca_bundle is not None:
        client["caBundle"] = base64.b64encode(ca_bundle).decode()
    return client


def _webhook(
    name: str,
    path: str,
    rules: list[dict[str, Any]],
    *,
    namespace: str,
    url: str | None,
    ca_bundle: bytes | None,
    failure_policy: str,
    side_effects: str,
    workload_spread_namespaces: bool | None,
    timeout: int = WEBHOOK_TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """One webhook. ``workload_spread_namespaces``: True, only namespaces the controller
    labelled; False, only the others; None, every namespace. kube-system and kubespread's own
    namespace are always left out, so its pods start while the webhook is down."""
    client = _client_config(path, namespace=namespace, url=url, ca_bundle=ca_bundle)
    excluded = list(dict.fromkeys(["kube-system", namespace]))
    expressions: list[dict[str, Any]] = [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded}
    ]
    if workload_spread_namespaces is True:
        expressions.append({"key": WORKLOADSPREAD_NAMESPACE_LABEL, "operator": "In", "values": ["true"]})
    elif workload_spread_namespaces is False:
        expressions.append({"key": WORKLOADSPREAD_NAMESPACE_LABEL, "operator": "DoesNotExist"})
    return {
        "name": name,
        "clientConfig": client,
        "rules": rules,
        "admissionReviewVersions": ["v1"],
        "sideEffects": side_effects,
        "timeoutSeconds": timeout,
        "failurePolicy": failure_policy,
        "matchPolicy": "Equivalent",
        "namespaceSelector": {"matchExpressions": expressions},
    }


def _pod_rule(operations: list[str], resource: str) -> dict[str, Any]:
    return {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": operations,
        "resources": [resource],
        "scope": "Namespaced",
    }


def webhook_configurations(
    *,
    namespace: str = COMPONENTS_NAMESPACE,
    url: str | None = None,
    ca_bundle: bytes | None = None,
    failure_policy: str = "Fail",
    merge_match_label_keys: bool = False,
    hard_anti_affinity: str = "off",
) -> list[dict[str, Any]]:
    """The Mutating- and ValidatingWebhookConfiguration: only the calls something needs.

    - pod CREATE in WorkloadSpread namespaces (``/mutate-pods``): books the pod in a subset and
      injects it. ``failure_policy`` (Fail): a pod admitted unbooked lands outside its subset's
      nodes and may overfill one, which no controller undoes (it only adopts the pod by its
      node); Ignore trades that for pod creation during an outage. Never reinvoked: a booking
      is a write. Side effects skipped on dry run.
    - pod DELETE and pods/eviction CREATE in WorkloadSpread namespaces (``/validate-pods``):
      give the subset its place back at once, so the replacement goes to the same subset.
      Ignore: when missed, the controller recounts the subset as soon as the pod is
      terminating (it counts active pods only).
    - WorkloadSpread CREATE/UPDATE (``/validate-workloadspreads``), ``failure_policy``: a
      second WorkloadSpread of one workload or a targetRef change would get in unchecked.
    - with ``merge_match_label_keys`` (API servers before v1.34): pod CREATE in the other
      namespaces (``/mutate-pods/match-label-keys``), Ignore, reinvoked if needed (the merge
      is idempotent); missed, a pod counts every revision's pods in its spread.
    - with ``hard_anti_affinity`` other than off: pod CREATE everywhere (``/validate-pods``),
      Ignore: a policy must not stop pod creation; missed, a pod it would refuse gets in.

    Never pods/status or pod UPDATE: a finished pod's place comes back when the controller
    recounts, and a pod's affinity cannot change after creation.
    """
    if failure_policy not in FAILURE_POLICIES:
        choices = ", ".join(FAILURE_POLICIES)
        raise ValueError(f"failure_policy must be one of {choices}, not {failure_policy!r}")
    if hard_anti_affinity not in HARD_ANTI_AFFINITY_MODES:
        choices = ", ".join(HARD_ANTI_AFFINITY_MODES)
        raise ValueError(f"hard_anti_affinity must be one of {choices}, not {hard_anti_affinity!r}")
    common: dict[str, Any] = {"namespace": namespace, "url": url, "ca_bundle": ca_bundle}
    mutating_hooks = [
        {
            **_webhook(
                "workloadspread.pods.kubespread.io",
                MUTATE_PODS,
                [_pod_rule(["CREATE"], "pods")],
                failure_policy=failure_policy,
                side_effects="NoneOnDryRun",
                workload_spread_namespaces=True,
                **common,
            ),
            "reinvocationPolicy": "Never",
        }
    ]
    if merge_match_label_keys:
        mutating_hooks.append(
            {
                **_webhook(
                    "match-label-keys.pods.kubespread.io",
                    MUTATE_PODS_MATCH_LABEL_KEYS,
                    [_pod_rule(["CREATE"], "pods")],
                    failure_policy="Ignore",
                    side_effects="None",
                    workload_spread_namespaces=False,
                    **common,
                ),
                "reinvocationPolicy": "IfNeeded",
            }
        )
    validating_hooks = [
        _webhook(
            "workloadspread-deletions.pods.kubespread.io",
            VALIDATE_PODS,
            [_pod_rule(["DELETE"], "pods"), _pod_rule(["CREATE"], "pods/eviction")],
            failure_policy="Ignore",
            side_effects="NoneOnDryRun",
            workload_spread_namespaces=True,
            timeout=DELETE_WEBHOOK_TIMEOUT_SECONDS,
            **common,
        ),
        _webhook(
            "workloadspreads.kubespread.io",
            VALIDATE_WORKLOADSPREADS,
            [
                {
                    "apiGroups": [KRUISE_GROUP],
                    "apiVersions": ["v1alpha1", "v1beta1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["workloadspreads"],
                    "scope": "Namespaced",
                }
            ],
            failure_policy=failure_policy,
            side_effects="None",
            workload_spread_namespaces=None,
            **common,
        ),
    ]
    if hard_anti_affinity != "off":
        validating_hooks.append(
            _webhook(
                "hard-anti-affinity.pods.kubespread.io",
                VALIDATE_PODS,
                [_pod_rule(["CREATE"], "pods")],
                failure_policy="Ignore",
                side_effects="None",
                workload_spread_namespaces=None,
                **common,
            )
        )
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": _meta(APP_NAME),
            "webhooks": mutating_hooks,
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": _meta(APP_NAME),
            "webhooks": validating_hooks,
        },
    ]


# --- everything --------------------------------------------------------------------------------------------


def ca_bundle_problem(data: bytes) -> str | None:
    """Why ``data`` cannot be a webhook's caBundle (None when it can): it must be PEM text
    holding at least one X.509 certificate, each one that OpenSSL can read, and no private key
    (a caBundle is public: it is written into the webhook configuration for anyone to read).
    The API server takes any bytes here and only fails on the first call, with a TLS error."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "not PEM text (binary data: convert DER with `openssl x509 -inform der`)"
    if "PRIVATE KEY-----" in text:
        return "holds a private key: a caBundle must hold the CA's certificate only"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cadata=text)
    except (ssl.SSLError, ValueError) as e:
        return f"not a PEM certificate ({getattr(e, 'reason', None) or e})"
    if not context.cert_store_stats().get("x509"):
        return "holds no certificate"
    return None


def manifests(
    components: tuple[str, ...] | list[str] = DEFAULT_COMPONENTS,
    *,
    namespace: str = COMPONENTS_NAMESPACE,
    image: str = "kubespread:latest",
    url: str | None = None,
    ca_bundle: bytes | None = None,
    failure_policy: str = "Fail",
    merge_match_label_keys: bool = False,
    hard_anti_affinity: str = "off",
) -> list[dict[str, Any]]:
    """What runs ``components`` (of :data:`COMPONENTS`) in a cluster, in apply order: the
    namespace, the CRD (webhook or controller), each component's account, role and
    Deployment, then the webhook configurations last (the webhook's pods first). ``url``:
    the API server calls the webhook there (``<url>/mutate-pods`` ...) instead of through
    the Service, for a webhook running outside the cluster (its Deployment is still printed).
    The webhook needs the controller somewhere: it labels the namespaces the pod webhooks
    select."""
    unknown = [c for c in components if c not in COMPONENTS]
    if unknown or not components:
        raise ValueError(
            f"components must be some of {', '.join(COMPONENTS)}, not {', '.join(unknown) or 'none'}"
        )
    wanted = set(components)
    configurations = (
        webhook_configurations(
            namespace=namespace,
            url=url,
            ca_bundle=ca_bundle,
            failure_policy=failure_policy,
            merge_match_label_keys=merge_match_label_keys,
            hard_anti_affinity=hard_anti_affinity,
        )
        if "webhook" in wanted
        else []
    )
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(namespace, app="kubespread")}
    ]
    if wanted & {"webhook", "controller"}:
        converter = (
            _client_config(CONVERT_WORKLOADSPREADS, namespace=namespace, url=url, ca_bundle=ca_bundle)
            if "webhook" in wanted
            else None
        )
        out.append(workload_spread_crd(converter))
    if "webhook" in wanted:
        out += _account(APP_NAME, namespace, _webhook_rules())
        out += [_service(namespace), _webhook_deployment(namespace, image, hard_anti_affinity)]
    if "controller" in wanted:
        out += _account(CONTROLLER_NAME, namespace, _controller_rules())
        out.append(_controller_deployment(namespace, image))
    if "scheduler" in wanted:
        out += _account(SCHEDULER_NAME, namespace, _scheduler_rules())
        out += _namespaced_role(SCHEDULER_NAME, namespace, _lease_rules())
        out.append(_scheduler_deployment(namespace, image))
    if "rebalancer" in wanted:
        out += _account(REBALANCER_NAME, namespace, _rebalancer_rules())
        out += _namespaced_role(REBALANCER_NAME, namespace, _lease_rules())
        out.append(_rebalancer_deployment(namespace, image))
    return out + configurations


def webhook_components(with_scheduler: bool = False) -> tuple[str, ...]:
    """What ``kubespread webhook manifests`` prints: the webhook and the controller it needs
    (the one labels the namespaces the other is called for), and the scheduler on request."""
    return ("webhook", "controller", "scheduler") if with_scheduler else ("webhook", "controller")


def webhook_manifests(*, with_scheduler: bool = False, **options: Any) -> list[dict[str, Any]]:
    """:func:`manifests` of :func:`webhook_components` (``options``: manifests' keywords)."""
    return manifests(webhook_components(with_scheduler), **options)


def render(manifests: list[dict[str, Any]]) -> str:
    """Multi-document YAML, for ``kubectl apply -f -``."""
    return "---\n".join(dump_yaml(m) for m in manifests)
