"""The catalog (catalog.yaml) and what it expands into: node plans and the manifests of nodes,
DaemonSet pods and Deployments as the API server stores them (defaults filled in)."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .common import HOST, NODEGROUP, REGION, SEED, ZONE, Addresses, parse_ts, rand_hex, rand_uid

CATALOG_FILE = Path(__file__).with_name("catalog.yaml")
TOPOLOGY_KEYS = {"zone": ZONE, "hostname": HOST}
NODE_CONDITIONS = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
]
#: what the DaemonSet controller adds to its pods' tolerations (the last one for hostNetwork pods)
DAEMON_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
]
HOST_NETWORK_TOLERATION = {
    "effect": "NoSchedule",
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
}
#: who writes a workload (its ``manager``): (managedFields manager, operation, subresource)
WRITERS = {
    "kubectl": ("kubectl-client-side-apply", "Update", ""),
    "argocd-controller": ("argocd-controller", "Apply", ""),
    "helm": ("helm", "Update", ""),
}


@cache
def catalog() -> dict[str, Any]:
    """catalog.yaml, read once (callers copy what they change)."""
    return yaml.safe_load(CATALOG_FILE.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# nodes


@dataclass(frozen=True)
class Group:
    instance_type: str
    cpu: str
    allocatable_cpu: str
    memory_ki: int
    allocatable_memory_ki: int
    pods: str
    capacity_type: str
    taints: list[dict[str, str]]


def groups() -> dict[str, Group]:
    return {
        name: Group(
            g["instanceType"],
            g["cpu"],
            g["allocatableCpu"],
            g["memoryKi"],
            g["allocatableMemoryKi"],
            g["pods"],
            g["capacityType"],
            g["taints"],
        )
        for name, g in catalog()["nodeGroups"].items()
    }


GROUPS = groups()
SYSTEM_IMAGES: list[tuple[str, int]] = [(name, size) for name, size in catalog()["systemImages"]]


@dataclass
class NodePlan:
    zone: str
    group: str
    created: datetime
    name: str = ""
    ip: str = ""
    instance_id: str = ""
    late: bool = False  # joined seconds before the dump: not in the simulation


def node_plans(addresses: Addresses) -> list[NodePlan]:
    """The first day's nodes, 47 s apart with jitter, then the autoscaler's additions; each with
    its address, name and EC2 instance id."""
    rng = random.Random(SEED)
    spec = catalog()["nodes"]
    start = parse_ts(spec["start"])
    plans: list[NodePlan] = []
    for zone, counts in spec["initial"].items():
        for group, n in counts.items():
            for _ in range(n):
                created = start + timedelta(seconds=47 * len(plans) + rng.randint(0, 30))
                plans.append(NodePlan(zone, group, created))
    for added in spec["added"]:
        plans.append(
            NodePlan(added["zone"], added["group"], parse_ts(added["created"]), late=added.get("late", False))
        )
    for p in plans:
        p.ip = addresses.take(p.zone)
        p.name = f"ip-{p.ip.replace('.', '-')}.{REGION}.compute.internal"
        p.instance_id = "i-0" + rand_hex(16, rng)
    return plans


def node_manifest(p: NodePlan) -> dict[str, Any]:
    """The node as its kubelet registers it (conditions without times: they are set at dump time)."""
    g = GROUPS[p.group]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": g.instance_type,
        "beta.kubernetes.io/os": "linux",
        "example.com/capacity-type": g.capacity_type,
        NODEGROUP: p.group,
        "failure-domain.beta.kubernetes.io/region": REGION,
        "failure-domain.beta.kubernetes.io/zone": p.zone,
        "kubernetes.io/arch": "amd64",
        HOST: p.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": g.instance_type,
        "topology.kubernetes.io/region": REGION,
        ZONE: p.zone,
    }
    spec: dict[str, Any] = {"providerID": f"aws:///{p.zone}/{p.instance_id}"}
    if g.taints:
        spec["taints"] = copy.deepcopy(g.taints)
    resources = {
        "cpu": g.cpu,
        "ephemeral-storage": "104845292Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{g.memory_ki}Ki",
        "pods": g.pods,
    }
    allocatable = {
        **resources,
        "cpu": g.allocatable_cpu,
        "ephemeral-storage": "95551679124",
        "memory": f"{g.allocatable_memory_ki}Ki",
    }
    conditions = [{"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in NODE_CONDITIONS]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": p.ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "labels": labels,
            "name": p.name,
        },
        "spec": spec,
        "status": {"allocatable": allocatable, "capacity": resources, "conditions": conditions},
    }


# --------------------------------------------------------------------------------------------
# pod templates, as the API server stores them (defaults filled in)


def container(c: dict[str, Any]) -> dict[str, Any]:
    """A container of the catalog as the API server stores it. A port named ``dns`` is UDP;
    the readiness probe (an HTTP GET of ``probe``) targets the first port unless ``probePort``
    is given; fields the shorthand does not know are copied as they are."""
    shorthand = ("name", "image", "requests", "limits", "args", "env", "ports", "probe", "probePort")
    out: dict[str, Any] = {"name": c["name"], "image": c["image"], "imagePullPolicy": "IfNotPresent"}
    if c.get("args"):
        out["args"] = list(c["args"])
    if c.get("env"):
        out["env"] = [{"name": k, "value": v} for k, v in c["env"].items()]
    ports = list(c.get("ports", {}).items())
    if ports:
        out["ports"] = [
            {"containerPort": port, "name": name, "protocol": "UDP" if name == "dns" else "TCP"}
            for name, port in ports
        ]
    if c.get("probe") and ports:
        out["readinessProbe"] = {
            "failureThreshold": 3,
            "httpGet": {"path": c["probe"], "port": c.get("probePort") or ports[0][0], "scheme": "HTTP"},
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        }
    limits = c.get("limits")
    out["resources"] = {"requests": dict(c["requests"]), **({"limits": dict(limits)} if limits else {})}
    out["terminationMessagePath"] = "/dev/termination-log"
    out["terminationMessagePolicy"] = "File"
    out.update({k: copy.deepcopy(v) for k, v in c.items() if k not in shorthand})
    return out


def pod_spec_defaults(spec: dict[str, Any]) -> dict[str, Any]:
    """SetDefaults_PodSpec's fields (as a template carries them)."""
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    if "serviceAccountName" in spec:
        spec["serviceAccount"] = spec["serviceAccountName"]
    return spec


def label_selector(labels: dict[str, str]) -> dict[str, Any]:
    return {"matchLabels": dict(labels)}


def spread(c: dict[str, Any], selector: dict[str, str]) -> dict[str, Any]:
    """A ``placement.spread`` entry as a topologySpreadConstraint over ``selector``'s pods."""
    out: dict[str, Any] = {
        "labelSelector": label_selector(selector),
        "maxSkew": 1,
        "topologyKey": TOPOLOGY_KEYS[c["key"]],
        "whenUnsatisfiable": c["when"],
    }
    if "matchLabelKeys" in c:
        out["matchLabelKeys"] = list(c["matchLabelKeys"])
    return out


def pod_affinity(rule: dict[str, Any], selector: dict[str, str]) -> dict[str, Any]:
    """``{required: key}`` or ``{preferred: key, weight: w}`` as a (anti-)affinity to ``selector``."""
    when = "required" if "required" in rule else "preferred"
    term = {"labelSelector": label_selector(selector), "topologyKey": TOPOLOGY_KEYS[rule[when]]}
    if when == "required":
        return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    weighted = {"podAffinityTerm": term, "weight": rule["weight"]}
    return {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}


def node_group(group: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": NODEGROUP, "operator": "In", "values": [group]}]}
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}


def placed(spec: dict[str, Any], placement: dict[str, Any], selector: dict[str, str]) -> dict[str, Any]:
    """``spec`` with the rules of a workload's ``placement`` shorthands added."""
    spec = copy.deepcopy(spec)
    affinity = spec.get("affinity", {})
    if "nodeGroup" in placement:
        affinity["nodeAffinity"] = node_group(placement["nodeGroup"])
    if "podAffinity" in placement:
        rule = placement["podAffinity"]
        affinity["podAffinity"] = pod_affinity(rule, rule["selector"])
    if "antiAffinity" in placement:
        affinity["podAntiAffinity"] = pod_affinity(placement["antiAffinity"], selector)
    if affinity:
        spec["affinity"] = affinity
    if "spread" in placement:
        spec["topologySpreadConstraints"] = [spread(c, selector) for c in placement["spread"]]
    return spec


# --------------------------------------------------------------------------------------------
# workloads


@dataclass
class App:
    """A workload of the catalog (``version`` follows its rollouts)."""

    namespace: str
    name: str
    replicas: int
    containers: list[dict[str, Any]]
    manager: str
    part_of: str
    selector: dict[str, str]
    spec: dict[str, Any]  # the pod spec but containers: affinity, spread, tolerations, ...
    pod_annotations: dict[str, str]
    service: dict[str, Any] | None
    version: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def writer(self) -> tuple[str, str, str]:
        """(manager, operation, subresource) of its applies, as managedFields name them."""
        return WRITERS[self.manager]


def app_catalog() -> list[App]:
    """The workloads, in the order their namespaces were set up."""
    apps = []
    for w in copy.deepcopy(catalog()["workloads"]):
        selector = w.get("selector") or {"app.kubernetes.io/name": w["name"]}
        apps.append(
            App(
                namespace=w["namespace"],
                name=w["name"],
                replicas=w["replicas"],
                containers=[container(c) for c in w["containers"]],
                manager=w["manager"],
                part_of=w["partOf"],
                selector=selector,
                spec=placed(w.get("spec", {}), w.get("placement", {}), selector),
                pod_annotations=w.get("podAnnotations", {}),
                service=w.get("service"),
                version=w["version"],
            )
        )
    return apps


def app_labels(app: App) -> dict[str, str]:
    labels = {**app.selector, "app.kubernetes.io/instance": app.name}
    if app.manager == "helm":
        labels["app.kubernetes.io/managed-by"] = "Helm"
        labels["helm.sh/chart"] = f"{app.name}-{app.version.lstrip('v')}"
    labels["app.kubernetes.io/part-of"] = app.part_of
    labels["app.kubernetes.io/version"] = app.version
    return labels


def user_deployment(app: App) -> dict[str, Any]:
    """What the team applies (the last-applied-configuration of kubectl apply)."""
    spec = {**copy.deepcopy(app.spec), "containers": copy.deepcopy(app.containers)}
    tmeta: dict[str, Any] = {"labels": dict(app.selector)}
    if app.pod_annotations:
        tmeta["annotations"] = dict(app.pod_annotations)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": app_labels(app), "name": app.name, "namespace": app.namespace},
        "spec": {
            "replicas": app.replicas,
            "selector": label_selector(app.selector),
            "template": {"metadata": tmeta, "spec": spec},
        },
    }


def with_defaults(manifest: dict[str, Any]) -> dict[str, Any]:
    """The Deployment as the API server stores it: SetDefaults_Deployment and the pod spec's."""
    d = copy.deepcopy(manifest)
    spec = d["spec"]
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault(
        "strategy", {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"}
    )
    pod_spec_defaults(spec["template"]["spec"])
    return d


# --------------------------------------------------------------------------------------------
# DaemonSets


@dataclass(frozen=True)
class DaemonSet:
    namespace: str
    name: str
    labels: dict[str, str]
    spec: dict[str, Any]
    revision_hash: str
    generation: int
    uid: str


def daemonsets() -> list[DaemonSet]:
    """The DaemonSets whose pods run on every node (the DaemonSets themselves are not dumped)."""
    rng = random.Random(f"{SEED}-daemonsets")
    out = []
    for ds in copy.deepcopy(catalog()["daemonSets"]):
        spec = {"containers": [container(c) for c in ds["containers"]], **ds["spec"]}
        spec["tolerations"] = [*spec.get("tolerations", []), *copy.deepcopy(DAEMON_TOLERATIONS)]
        if spec.get("hostNetwork"):
            spec["tolerations"].append(dict(HOST_NETWORK_TOLERATION))
        out.append(
            DaemonSet(
                ds["namespace"],
                ds["name"],
                ds["labels"],
                pod_spec_defaults(spec),
                ds["revisionHash"],
                ds["generation"],
                rand_uid(rng),
            )
        )
    return out


def daemon_pod(ds: DaemonSet, node: str) -> dict[str, Any]:
    """A pod as the DaemonSet controller creates it: pinned to its node by a matchFields term."""
    spec = copy.deepcopy(ds.spec)
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
    }
    owner = {
        "apiVersion": "apps/v1",
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "DaemonSet",
        "name": ds.name,
        "uid": ds.uid,
    }
    labels = {
        **ds.labels,
        "controller-revision-hash": ds.revision_hash,
        "pod-template-generation": str(ds.generation),
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{ds.name}-",
            "labels": labels,
            "namespace": ds.namespace,
            "ownerReferences": [owner],
        },
        "spec": spec,
    }
