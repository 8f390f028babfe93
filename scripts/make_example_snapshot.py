"""Generate examples/snapshot/cluster.yaml: an anonymised but realistic cluster dump.

Why this script exists: users try ``kubespread schedule`` and ``kubespread explain`` on their
own ``kubectl get nodes,pods,deployments,replicasets,services,namespaces -A -o yaml`` output.
The examples need such a dump that is (1) shaped exactly like kubectl's (a ``List`` with uids,
resourceVersions, managedFields, full statuses, kubectl's key order) and (2) consistent with
kubespread's scheduler: every bound pod sits where kube-scheduler would have put it, the
workloads are at rest, and the pending pods are pending for the reasons the scheduler gives.
A hand-written dump gets (2) wrong; a real one cannot be published. So the cluster's history
(node groups, deployments, rollouts, a drain, scale-ups) is played on kubespread's simulator,
and its end state is written out with the decorations a real API server adds.

Run from the repository root::

    .venv/bin/python scripts/make_example_snapshot.py

It writes examples/snapshot/cluster.yaml, then loads it back and checks it (see ``check``).
Everything is seeded: two runs write the same bytes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from kubespread.admission.apiserver import create as admit_create
from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Namespace, Node, Pod, Service
from kubespread.api.kinds import KINDS
from kubespread.api.meta import KubeObject
from kubespread.api.validation import validate
from kubespread.io import cluster_from_manifests, load
from kubespread.sim.engine import EPOCH, Simulation

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "examples" / "snapshot"
CLUSTER_FILE = OUT_DIR / "cluster.yaml"
CHECKOUT_FILE = OUT_DIR / "checkout.yaml"
SEED = 20261120
MAX_BYTES = 2_500_000

REGION = "eu-west-1"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
#: third octet ranges of each zone's /19 subnet in the VPC 10.20.0.0/16
SUBNETS = {"eu-west-1a": (32, 63), "eu-west-1b": (64, 95), "eu-west-1c": (96, 127)}
REGISTRY = "registry.example.com"
KUBELET_VERSION = "v1.34.1-eks-3025e55"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NODEGROUP = "example.com/nodegroup"
DUMP_TIME = datetime(2026, 11, 20, 14, 45, 31, tzinfo=UTC)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# --------------------------------------------------------------------------------------------
# deterministic helpers


RNG = random.Random(SEED)


def rand_hex(n: int, rng: random.Random = RNG) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def rand_uid(rng: random.Random = RNG) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def ts(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def later(stamp: str, seconds: float) -> str:
    return ts(parse_ts(stamp) + timedelta(seconds=seconds))


def dt(day: int, hour: int, minute: int, second: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, second, tzinfo=UTC)


class Addresses:
    """Unique node and pod IPs in each zone's subnet (the VPC CNI gives pods VPC addresses)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def take(self, zone: str) -> str:
        lo, hi = SUBNETS[zone]
        while True:
            ip = f"10.20.{self.rng.randint(lo, hi)}.{self.rng.randint(4, 254)}"
            if ip not in self.used:
                self.used.add(ip)
                return ip


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


GROUPS = {
    "general": Group("m6i.2xlarge", "8", "7910m", 32386596, 31369764, "58", "ON_DEMAND"),
    "highmem": Group("r6i.2xlarge", "8", "7910m", 65023428, 64006596, "58", "ON_DEMAND"),
    "batch": Group("c6i.4xlarge", "16", "15890m", 32386596, 29387300, "234", "SPOT"),
}


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
    """30 nodes, 11/10/9 over the zones, in three node groups: general (8/7/5), highmem (2/2/3,
    the last one the late node) and batch (1/1/1, tainted). Most join on the first day; the
    autoscaler adds four general nodes later, and the late highmem node just before the dump."""
    start = datetime(2026, 10, 5, 9, 6, tzinfo=UTC)
    plans: list[NodePlan] = []
    initial = {
        "eu-west-1a": {"general": 6, "highmem": 2, "batch": 1},
        "eu-west-1b": {"general": 6, "highmem": 2, "batch": 1},
        "eu-west-1c": {"general": 4, "highmem": 2, "batch": 1},
    }
    i = 0
    for zone in ZONES:
        for group, n in initial[zone].items():
            for _ in range(n):
                plans.append(NodePlan(zone, group, start + timedelta(seconds=47 * i + RNG.randint(0, 30))))
                i += 1
    # the cluster autoscaler's later additions
    plans.append(NodePlan("eu-west-1a", "general", datetime(2026, 10, 22, 3, 11, 52, tzinfo=UTC)))
    plans.append(NodePlan("eu-west-1b", "general", datetime(2026, 10, 22, 3, 12, 9, tzinfo=UTC)))
    plans.append(NodePlan("eu-west-1a", "general", datetime(2026, 11, 6, 17, 40, 3, tzinfo=UTC)))
    plans.append(NodePlan("eu-west-1c", "general", datetime(2026, 11, 6, 17, 40, 31, tzinfo=UTC)))
    # and the node it added for the pending ledger pods, just before the dump
    plans.append(NodePlan("eu-west-1c", "highmem", dt(20, 14, 43, 58), late=True))
    for p in plans:
        p.ip = addresses.take(p.zone)
        p.name = f"ip-{p.ip.replace('.', '-')}.{REGION}.compute.internal"
        p.instance_id = "i-0" + rand_hex(16)
    return plans


SYSTEM_IMAGES = [
    (f"{REGISTRY}/kube-system/pause:3.10", 318731),
    (f"{REGISTRY}/kube-system/kube-proxy:v1.34.1-minimal-eksbuild.2", 32416713),
    (f"{REGISTRY}/monitoring/fluent-bit:4.0.7", 37862104),
]


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
    if p.group == "batch":
        spec["taints"] = [{"effect": "NoSchedule", "key": "dedicated", "value": "batch"}]
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
        "status": {
            "allocatable": allocatable,
            "capacity": resources,
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in NODE_CONDITIONS
            ],
        },
    }


NODE_CONDITIONS = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
]

# --------------------------------------------------------------------------------------------
# pod templates, as the API server stores them (defaults filled in)

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def container(
    name: str,
    image: str,
    requests: dict[str, str],
    limits: dict[str, str] | None = None,
    ports: list[tuple[str, int]] | None = None,
    probe: str | None = "/healthz",
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
    probe_port: int | str | None = None,
) -> dict[str, Any]:
    """A container as the API server stores it. A port named ``dns`` is UDP; the readiness
    probe (an HTTP GET of ``probe``) targets the first port unless ``probe_port`` is given."""
    c: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if args:
        c["args"] = args
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if ports:
        c["ports"] = [
            {"containerPort": port, "name": pname, "protocol": "UDP" if pname == "dns" else "TCP"}
            for pname, port in ports
        ]
    if probe and ports:
        c["readinessProbe"] = {
            "failureThreshold": 3,
            "httpGet": {"path": probe, "port": probe_port or ports[0][0], "scheme": "HTTP"},
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        }
    c["resources"] = {"requests": dict(requests), **({"limits": dict(limits)} if limits else {})}
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


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


def zone_spread(sel: dict[str, str], when: str = "DoNotSchedule", hash_key: bool = True) -> dict[str, Any]:
    c: dict[str, Any] = {
        "labelSelector": label_selector(sel),
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": when,
    }
    if hash_key:
        c["matchLabelKeys"] = ["pod-template-hash"]
    return c


def host_spread(sel: dict[str, str], when: str = "ScheduleAnyway") -> dict[str, Any]:
    return {
        "labelSelector": label_selector(sel),
        "maxSkew": 1,
        "topologyKey": HOST,
        "whenUnsatisfiable": when,
    }


def anti_required(sel: dict[str, str], key: str = HOST) -> dict[str, Any]:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": label_selector(sel), "topologyKey": key}
        ]
    }


def anti_preferred(sel: dict[str, str], weight: int = 100, key: str = HOST) -> dict[str, Any]:
    term = {"labelSelector": label_selector(sel), "topologyKey": key}
    return {"preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": term, "weight": weight}]}


def node_group(group: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": NODEGROUP, "operator": "In", "values": [group]}]}
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}


# --------------------------------------------------------------------------------------------
# workloads


@dataclass
class App:
    namespace: str
    name: str
    replicas: int
    containers: list[dict[str, Any]]
    manager: str  # who applies it: helm, argocd-controller (server-side apply) or kubectl
    part_of: str
    selector: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)  # affinity, spread, tolerations, ...
    pod_annotations: dict[str, str] = field(default_factory=dict)
    service_port: int | None = None
    version: str = ""

    def __post_init__(self) -> None:
        if not self.selector:
            self.selector = {"app.kubernetes.io/name": self.name}


def img(team: str, name: str, tag: str) -> str:
    return f"{REGISTRY}/{team}/{name}:{tag}"


def app_catalog() -> list[App]:
    """The workloads, in the order their namespaces were set up."""
    dns = {"k8s-app": "kube-dns"}
    ms = {"app.kubernetes.io/name": "metrics-server"}
    fe = {"app.kubernetes.io/name": "frontend"}
    cat = {"app.kubernetes.io/name": "catalog-api"}
    cart = {"app.kubernetes.io/name": "cart"}
    search = {"app.kubernetes.io/name": "search"}
    recs = {"app.kubernetes.io/name": "recommendations"}
    api = {"app.kubernetes.io/name": "api"}
    cache = {"app.kubernetes.io/name": "api-cache"}
    ledger = {"app.kubernetes.io/name": "ledger"}
    hooks = {"app.kubernetes.io/name": "webhooks"}
    ingest = {"app.kubernetes.io/name": "ingest-worker"}
    reports = {"app.kubernetes.io/name": "report-builder"}
    router = {"app.kubernetes.io/name": "event-router"}
    notes = {"app.kubernetes.io/name": "notifications"}
    resizer = {"app.kubernetes.io/name": "image-resizer"}
    linux = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                    ]
                }
            ]
        }
    }
    prom = {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
    return [
        App(
            "kube-system",
            "coredns",
            3,
            [
                container(
                    "coredns",
                    img("kube-system", "coredns", "v1.12.3-eksbuild.1"),
                    {"cpu": "100m", "memory": "70Mi"},
                    {"memory": "170Mi"},
                    [("dns", 53), ("dns-tcp", 53), ("metrics", 9153)],
                    probe="/ready",
                    probe_port=8181,
                    args=["-conf", "/etc/coredns/Corefile"],
                )
            ],
            "helm",
            "kube-dns",
            selector=dns,
            spec={
                "affinity": {"nodeAffinity": linux, "podAntiAffinity": anti_preferred(dns)},
                "priorityClassName": "system-cluster-critical",
                "serviceAccountName": "coredns",
                "tolerations": [
                    {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"},
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                ],
                "topologySpreadConstraints": [zone_spread(dns, "ScheduleAnyway", hash_key=False)],
            },
            service_port=53,
            version="v1.12.3",
        ),
        App(
            "kube-system",
            "metrics-server",
            2,
            [
                container(
                    "metrics-server",
                    img("kube-system", "metrics-server", "v0.8.0"),
                    {"cpu": "100m", "memory": "200Mi"},
                    None,
                    [("https", 10250)],
                    probe="/readyz",
                    args=["--secure-port=10250", "--kubelet-preferred-address-types=InternalIP"],
                )
            ],
            "helm",
            "metrics-server",
            selector=ms,
            spec={
                "affinity": {"podAntiAffinity": anti_required(ms)},
                "priorityClassName": "system-cluster-critical",
                "serviceAccountName": "metrics-server",
            },
            service_port=443,
            version="0.8.0",
        ),
        App(
            "monitoring",
            "kube-state-metrics",
            1,
            [
                container(
                    "kube-state-metrics",
                    img("monitoring", "kube-state-metrics", "v2.16.0"),
                    {"cpu": "100m", "memory": "256Mi"},
                    {"memory": "512Mi"},
                    [("http", 8080)],
                )
            ],
            "helm",
            "monitoring",
            spec={"serviceAccountName": "kube-state-metrics"},
            service_port=8080,
            version="2.16.0",
        ),
        App(
            "shop",
            "frontend",
            18,
            [
                container(
                    "frontend",
                    img("shop", "frontend", "1.13.4"),
                    {"cpu": "500m", "memory": "512Mi"},
                    {"memory": "768Mi"},
                    [("http", 8080)],
                    env={"LOG_FORMAT": "json"},
                )
            ],
            "argocd-controller",
            "shop",
            selector=fe,
            spec={"topologySpreadConstraints": [zone_spread(fe), host_spread(fe)]},
            service_port=80,
            version="1.13.4",
        ),
        App(
            "shop",
            "catalog-api",
            12,
            [
                container(
                    "catalog-api",
                    img("shop", "catalog-api", "2.8.0"),
                    {"cpu": "600m", "memory": "1Gi"},
                    {"memory": "1536Mi"},
                    [("http", 8080), ("grpc", 9090)],
                    env={"LOG_FORMAT": "json"},
                )
            ],
            "argocd-controller",
            "shop",
            selector=cat,
            spec={
                "affinity": {"podAntiAffinity": anti_required(cat)},
                "topologySpreadConstraints": [zone_spread(cat)],
            },
            pod_annotations=prom,
            service_port=80,
            version="2.8.0",
        ),
        App(
            "shop",
            "cart",
            18,
            [
                container(
                    "cart",
                    img("shop", "cart", "3.2.1"),
                    {"cpu": "250m", "memory": "384Mi"},
                    {"memory": "512Mi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "argocd-controller",
            "shop",
            selector=cart,
            spec={"affinity": {"podAntiAffinity": anti_preferred(cart)}},
            service_port=80,
            version="3.2.1",
        ),
        App(
            "shop",
            "search",
            12,
            [
                container(
                    "search",
                    img("shop", "search", "5.4.0"),
                    {"cpu": "1500m", "memory": "3Gi"},
                    {"memory": "4Gi"},
                    [("http", 9200)],
                    probe="/_cluster/health",
                )
            ],
            "argocd-controller",
            "shop",
            selector=search,
            spec={
                "affinity": {"nodeAffinity": node_group("general")},
                "topologySpreadConstraints": [
                    zone_spread(search, hash_key=False),
                    host_spread(search, "DoNotSchedule"),
                ],
            },
            service_port=9200,
            version="5.4.0",
        ),
        App(
            "shop",
            "notifications",
            9,
            [
                container(
                    "notifications",
                    img("shop", "notifications", "1.0.9"),
                    {"cpu": "250m", "memory": "256Mi"},
                    {"memory": "512Mi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "argocd-controller",
            "shop",
            selector=notes,
            spec={"affinity": {"podAntiAffinity": anti_preferred(notes)}},
            service_port=80,
            version="1.0.9",
        ),
        App(
            "shop",
            "recommendations",
            8,
            [
                container(
                    "recommendations",
                    img("shop", "recommendations", "0.19.3"),
                    {"cpu": "750m", "memory": "1536Mi"},
                    {"memory": "2Gi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "argocd-controller",
            "shop",
            selector=recs,
            spec={"topologySpreadConstraints": [host_spread(recs)]},
            service_port=80,
            version="0.19.3",
        ),
        App(
            "payments",
            "api",
            6,
            [
                container(
                    "api",
                    img("payments", "api", "4.1.0"),
                    {"cpu": "1", "memory": "1Gi"},
                    {"cpu": "2", "memory": "1536Mi"},
                    [("http", 8443)],
                    env={"LOG_LEVEL": "info"},
                )
            ],
            "kubectl",
            "payments",
            selector=api,
            spec={
                "affinity": {"podAntiAffinity": anti_required(api)},
                "serviceAccountName": "payments-api",
                "topologySpreadConstraints": [zone_spread(api)],
            },
            service_port=443,
            version="4.1.0",
        ),
        App(
            "payments",
            "api-cache",
            3,
            [
                container(
                    "redis",
                    img("payments", "redis", "7.4.5"),
                    {"cpu": "500m", "memory": "2Gi"},
                    {"cpu": "500m", "memory": "2Gi"},
                    [("redis", 6379)],
                    probe=None,
                )
            ],
            "kubectl",
            "payments",
            selector=cache,
            spec={
                "affinity": {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": label_selector(api), "topologyKey": ZONE}
                        ]
                    },
                    "podAntiAffinity": anti_required(cache, ZONE),
                }
            },
            service_port=6379,
            version="7.4.5",
        ),
        App(
            "payments",
            "ledger",
            8,
            [
                container(
                    "ledger",
                    img("payments", "ledger", "2.3.7"),
                    {"cpu": "2", "memory": "14Gi"},
                    {"memory": "16Gi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "kubectl",
            "payments",
            selector=ledger,
            spec={
                "affinity": {"nodeAffinity": node_group("highmem")},
                "topologySpreadConstraints": [zone_spread(ledger, "ScheduleAnyway")],
            },
            service_port=80,
            version="2.3.7",
        ),
        App(
            "payments",
            "webhooks",
            8,
            [
                container(
                    "webhooks",
                    img("payments", "webhooks", "1.7.2"),
                    {"cpu": "200m", "memory": "256Mi"},
                    {"memory": "384Mi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "kubectl",
            "payments",
            selector=hooks,
            spec={"affinity": {"podAntiAffinity": anti_preferred(hooks, 50)}},
            service_port=80,
            version="1.7.2",
        ),
        App(
            "platform",
            "ingest-worker",
            16,
            [
                container(
                    "worker",
                    img("platform", "ingest-worker", "0.42.1"),
                    {"cpu": "1200m", "memory": "2Gi"},
                    {"memory": "3Gi"},
                    [("metrics", 9090)],
                    probe=None,
                )
            ],
            "helm",
            "platform",
            selector=ingest,
            spec={"affinity": {"podAntiAffinity": anti_preferred(ingest, 20)}},
            pod_annotations=prom,
            version="0.42.1",
        ),
        App(
            "platform",
            "report-builder",
            6,
            [
                container(
                    "builder",
                    img("platform", "report-builder", "2026.10.2"),
                    {"cpu": "4", "memory": "8Gi"},
                    {"memory": "10Gi"},
                    None,
                    probe=None,
                )
            ],
            "helm",
            "platform",
            selector=reports,
            spec={
                "nodeSelector": {NODEGROUP: "batch"},
                "tolerations": [
                    {"effect": "NoSchedule", "key": "dedicated", "operator": "Equal", "value": "batch"}
                ],
            },
            version="2026.10.2",
        ),
        App(
            "platform",
            "event-router",
            15,
            [
                container(
                    "router",
                    img("platform", "event-router", "1.3.0"),
                    {"cpu": "300m", "memory": "512Mi"},
                    {"memory": "768Mi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "helm",
            "platform",
            selector=router,
            spec={"topologySpreadConstraints": [host_spread(router), zone_spread(router, "ScheduleAnyway")]},
            service_port=80,
            version="1.3.0",
        ),
        App(
            "platform",
            "image-resizer",
            10,
            [
                container(
                    "resizer",
                    img("platform", "image-resizer", "3.0.4"),
                    {"cpu": "750m", "memory": "1Gi"},
                    {"memory": "1536Mi"},
                    [("http", 8080)],
                    probe=None,
                )
            ],
            "helm",
            "platform",
            selector=resizer,
            spec={
                "topologySpreadConstraints": [host_spread(resizer), zone_spread(resizer, "ScheduleAnyway")]
            },
            service_port=80,
            version="3.0.4",
        ),
        App(
            "platform",
            "grafana",
            1,
            [
                container(
                    "grafana",
                    img("platform", "grafana", "12.1.1"),
                    {"cpu": "250m", "memory": "512Mi"},
                    {"memory": "1Gi"},
                    [("http", 3000)],
                    probe="/api/health",
                )
            ],
            "helm",
            "platform",
            spec={"serviceAccountName": "grafana"},
            service_port=80,
            version="12.1.1",
        ),
    ]


def app_labels(app: App) -> dict[str, str]:
    labels = {**app.selector, "app.kubernetes.io/instance": app.name}
    if app.manager == "helm":
        labels["app.kubernetes.io/managed-by"] = "Helm"
        labels["helm.sh/chart"] = f"{app.name}-{app.version.lstrip('v')}"
    labels["app.kubernetes.io/part-of"] = app.part_of
    labels["app.kubernetes.io/version"] = app.version
    return labels


#: workloads that do not talk to the API server, and so opt out of the service account token
NO_TOKEN = frozenset(
    {
        "shop/frontend",
        "shop/cart",
        "shop/search",
        "shop/notifications",
        "shop/recommendations",
        "payments/webhooks",
        "platform/image-resizer",
        "platform/event-router",
    }
)


def user_deployment(app: App) -> dict[str, Any]:
    """What the team applies (the last-applied-configuration of kubectl apply)."""
    labels = app_labels(app)
    spec = {**copy.deepcopy(app.spec), "containers": copy.deepcopy(app.containers)}
    if f"{app.namespace}/{app.name}" in NO_TOKEN:
        spec["automountServiceAccountToken"] = False
    tmeta: dict[str, Any] = {"labels": dict(app.selector)}
    if app.pod_annotations:
        tmeta["annotations"] = dict(app.pod_annotations)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": labels, "name": app.name, "namespace": app.namespace},
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
    ds_tolerations = [
        {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
        {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
        {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
        {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
        {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
    ]
    host_net = [
        {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable", "operator": "Exists"}
    ]
    proxy = container(
        "kube-proxy",
        SYSTEM_IMAGES[1][0],
        {"cpu": "100m"},
        None,
        None,
        probe=None,
        args=["--v=2", "--config=/var/lib/kube-proxy-config/config"],
    )
    proxy["securityContext"] = {"privileged": True}
    proxy["volumeMounts"] = [
        {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True},
        {"mountPath": "/var/lib/kube-proxy-config/", "name": "config"},
    ]
    shipper = container(
        "fluent-bit",
        SYSTEM_IMAGES[2][0],
        {"cpu": "100m", "memory": "128Mi"},
        {"memory": "256Mi"},
        [("http", 2020)],
        probe=None,
    )
    shipper["volumeMounts"] = [
        {"mountPath": "/fluent-bit/etc/conf", "name": "config"},
        {"mountPath": "/var/log", "name": "varlog"},
    ]

    def host_path(name: str, path: str, kind: str = "") -> dict[str, Any]:
        hp: dict[str, Any] = {"path": path, "type": kind}
        return {"hostPath": hp, "name": name}

    rng = random.Random(f"{SEED}-daemonsets")
    return [
        DaemonSet(
            "kube-system",
            "kube-proxy",
            {"k8s-app": "kube-proxy"},
            pod_spec_defaults(
                {
                    "containers": [proxy],
                    "hostNetwork": True,
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": "kube-proxy",
                    "tolerations": [{"operator": "Exists"}, *ds_tolerations, *host_net],
                    "volumes": [
                        host_path("lib-modules", "/lib/modules"),
                        {"configMap": {"defaultMode": 420, "name": "kube-proxy-config"}, "name": "config"},
                    ],
                }
            ),
            "7b9d5c6f48",
            2,
            rand_uid(rng),
        ),
        DaemonSet(
            "monitoring",
            "fluent-bit",
            {"app.kubernetes.io/instance": "fluent-bit", "app.kubernetes.io/name": "fluent-bit"},
            pod_spec_defaults(
                {
                    "containers": [shipper],
                    "priorityClassName": "system-node-critical",
                    "serviceAccountName": "fluent-bit",
                    "tolerations": [{"operator": "Exists"}, *ds_tolerations],
                    "volumes": [
                        {"configMap": {"defaultMode": 420, "name": "fluent-bit"}, "name": "config"},
                        host_path("varlog", "/var/log"),
                    ],
                }
            ),
            "5f8c7d9b6",
            4,
            rand_uid(rng),
        ),
    ]


def daemon_pod(ds: DaemonSet, node: str) -> dict[str, Any]:
    """A pod as the DaemonSet controller creates it: pinned to its node by a matchFields term."""
    spec = copy.deepcopy(ds.spec)
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
        }
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{ds.name}-",
            "labels": {
                **ds.labels,
                "controller-revision-hash": ds.revision_hash,
                "pod-template-generation": str(ds.generation),
            },
            "namespace": ds.namespace,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "DaemonSet",
                    "name": ds.name,
                    "uid": ds.uid,
                }
            ],
        },
        "spec": spec,
    }


# --------------------------------------------------------------------------------------------
# driving the simulation


class History:
    """The simulated cluster and what happened to it (for timestamps and managers later)."""

    def __init__(self) -> None:
        self.sim = Simulation(seed=SEED)
        self.addresses = Addresses(random.Random(f"{SEED}-ips"))
        self.plans = node_plans(self.addresses)
        self.daemonsets = daemonsets()
        self.apps = {f"{a.namespace}/{a.name}": a for a in app_catalog()}
        self.user_manifests: dict[str, dict[str, Any]] = {}
        #: Deployment key -> [(time, manager, operation, subresource, fields)] of user writes
        self.writes: dict[str, list[tuple[str, str, str, str, dict[str, Any]]]] = {}
        self.cordoned: str = ""
        self.cordon_time: str = ""

    @property
    def now(self) -> str:
        return ts(EPOCH + timedelta(seconds=self.sim.now))

    def at(self, when: datetime) -> None:
        target = (when - EPOCH).total_seconds()
        if target > self.sim.now:
            self.sim.advance(target - self.sim.now)

    def create(self, manifest: dict[str, Any]) -> KubeObject:
        obj = KINDS[manifest["kind"]].from_dict(copy.deepcopy(manifest))
        out = self.sim.create(obj)
        if isinstance(out, Rejection):
            raise SystemExit(f"{obj.ref()} refused: {out.message}")
        return out

    def settle(self) -> None:
        self.sim.run_until_quiet()

    def pending(self) -> list[Pod]:
        return sorted(
            (p for p in self.sim.cluster.pods.values() if not p.spec.node_name and not p.is_terminating),
            key=lambda p: p.key,
        )

    # ------------------------------------------------------------------ objects
    def namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        self.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )

    def add_node(self, plan: NodePlan) -> None:
        self.at(plan.created)
        node = Node.from_dict(node_manifest(plan))
        out = self.sim.controller("nodelifecycle").add(node)  # type: ignore[attr-defined]
        if isinstance(out, Rejection):
            raise SystemExit(f"node {plan.name} refused: {out.message}")
        self.sim.advance(4)  # the DaemonSet controller reacts
        for ds in self.daemonsets:
            self.create(daemon_pod(ds, plan.name))
        self.settle()

    def service(
        self,
        namespace: str,
        name: str,
        selector: dict[str, str] | None,
        ports: list[dict[str, Any]],
        labels: dict[str, str] | None = None,
        cluster_ip: str = "",
    ) -> None:
        key = f"{namespace}/{name}"
        rng = random.Random(f"{SEED}-svc-{key}")
        ip = cluster_ip or f"172.20.{rng.randint(1, 254)}.{rng.randint(1, 254)}"
        spec: dict[str, Any] = {
            "clusterIP": ip,
            "clusterIPs": [ip],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": ports,
            "sessionAffinity": "None",
            "type": "ClusterIP",
        }
        if selector:
            spec["selector"] = dict(selector)
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if labels:
            meta["labels"] = labels
        self.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": meta,
                "spec": spec,
                "status": {"loadBalancer": {}},
            }
        )

    def deploy(self, key: str) -> None:
        app = self.apps[key]
        user = user_deployment(app)
        stored = with_defaults(user)
        if app.manager == "kubectl":
            stored["metadata"]["annotations"] = {
                LAST_APPLIED: json.dumps(user, sort_keys=True, separators=(",", ":")) + "\n"
            }
        self.user_manifests[key] = user
        self.writes[key] = [(self.now, *self._apply_manager(app), user)]
        self.create(stored)
        if app.service_port is not None:
            port = app.containers[0]["ports"][0]
            proto_ports = [
                {
                    "name": port["name"],
                    "port": app.service_port,
                    "protocol": "TCP",
                    "targetPort": port["name"],
                }
            ]
            if app.name == "coredns":
                proto_ports = [
                    {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                    {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                    {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
                ]
                self.service(
                    "kube-system",
                    "kube-dns",
                    app.selector,
                    proto_ports,
                    {
                        "k8s-app": "kube-dns",
                        "kubernetes.io/cluster-service": "true",
                        "kubernetes.io/name": "CoreDNS",
                    },
                    cluster_ip="172.20.0.10",
                )
            else:
                self.service(app.namespace, app.name, app.selector, proto_ports, app_labels(app))
        self.settle()

    @staticmethod
    def _apply_manager(app: App) -> tuple[str, str, str]:
        if app.manager == "kubectl":
            return ("kubectl-client-side-apply", "Update", "")
        if app.manager == "argocd-controller":
            return ("argocd-controller", "Apply", "")
        return ("helm", "Update", "")

    def change(
        self,
        key: str,
        mutate: Callable[[Deployment], None],
        manager: tuple[str, str, str],
        fields: dict[str, Any],
    ) -> None:
        """A user's write to a Deployment's spec (generation + 1), as the API server stores it."""
        old = self.sim.cluster.get("Deployment", key)
        assert isinstance(old, Deployment)
        new = old.copy()
        mutate(new)
        new.metadata.generation = old.metadata.generation + 1
        errors = validate(new)
        assert not errors, errors
        self.sim.update(new)
        self.writes[key].append((self.now, *manager, fields))

    def set_image(self, key: str, tag: str) -> None:
        app = self.apps[key]
        user = self.user_manifests[key]

        def mutate(d: Deployment) -> None:
            data = d.to_dict()
            tpl = data["spec"]["template"]
            tpl["spec"]["containers"][0]["image"] = (
                tpl["spec"]["containers"][0]["image"].rsplit(":", 1)[0] + ":" + tag
            )
            data["metadata"]["labels"]["app.kubernetes.io/version"] = tag
            fresh = Deployment.from_dict(data)
            d.spec = fresh.spec
            d.metadata.labels = fresh.metadata.labels

        user["spec"]["template"]["spec"]["containers"][0]["image"] = (
            app.containers[0]["image"].rsplit(":", 1)[0] + ":" + tag
        )
        user["metadata"]["labels"]["app.kubernetes.io/version"] = tag
        app.version = tag
        self.change(key, mutate, self._apply_manager(app), user)

    def scale(self, key: str, replicas: int) -> None:
        def mutate(d: Deployment) -> None:
            d.spec.replicas = replicas

        self.change(key, mutate, ("kubectl", "Update", "scale"), {"f:spec": {"f:replicas": {}}})

    def bound_pods_of(self, key: str) -> tuple[int, int]:
        """(bound, pending) pods of the Deployment ``key``."""
        d = self.sim.cluster.get("Deployment", key)
        assert d is not None
        rs_uids = {
            rs.metadata.uid
            for rs in self.sim.cluster.objects("ReplicaSet").values()
            if (ref := rs.metadata.controller_ref()) is not None and ref.uid == d.metadata.uid
        }
        bound = pending = 0
        for p in self.sim.cluster.pods.values():
            ref = p.metadata.controller_ref()
            if ref is None or ref.uid not in rs_uids or p.is_terminating:
                continue
            if p.spec.node_name:
                bound += 1
            else:
                pending += 1
        return bound, pending

    def scale_to_fit(self, key: str, pending: int) -> None:
        """``kubectl scale`` so that exactly ``pending`` pods of the Deployment stay pending: ask for
        many, see how many the scheduler places, then settle on that number plus ``pending`` (the
        scale-down removes unassigned pods first, so the bound ones stay where they are)."""
        current = self.sim.cluster.get("Deployment", key)
        assert isinstance(current, Deployment) and current.spec.replicas is not None
        self.scale(key, current.spec.replicas + 40)
        self.settle()
        bound, _ = self.bound_pods_of(key)
        self.writes[key].pop()  # the probe is not part of the story
        self.scale(key, bound + pending)
        self.settle()
        assert self.bound_pods_of(key) == (bound, pending), self.bound_pods_of(key)

    # ------------------------------------------------------------------ the story
    def play(self) -> None:
        self.at(datetime(2026, 10, 5, 9, 2, 11, tzinfo=UTC))
        for ns in ("default", "kube-node-lease", "kube-public", "kube-system"):
            self.namespace(ns)
        self.service(
            "default",
            "kubernetes",
            None,
            [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}],
            {"component": "apiserver", "provider": "kubernetes"},
            cluster_ip="172.20.0.1",
        )
        self.at(datetime(2026, 10, 5, 9, 4, 40, tzinfo=UTC))
        self.namespace("monitoring")
        for plan in self.plans:
            if plan.created.month == 10 and plan.created.day == 5:
                self.add_node(plan)
        self.at(datetime(2026, 10, 5, 9, 47, 5, tzinfo=UTC))
        self.deploy("kube-system/coredns")
        self.deploy("kube-system/metrics-server")
        self.at(datetime(2026, 10, 5, 10, 31, 22, tzinfo=UTC))
        self.deploy("monitoring/kube-state-metrics")
        team_labels = {"pod-security.kubernetes.io/enforce": "baseline"}
        self.at(datetime(2026, 10, 7, 11, 15, 2, tzinfo=UTC))
        self.namespace("shop", {**team_labels, "example.com/team": "shop"})
        for name in ("frontend", "catalog-api", "cart", "search", "notifications", "recommendations"):
            self.sim.advance(41)
            self.deploy(f"shop/{name}")
        self.at(datetime(2026, 10, 12, 14, 3, 27, tzinfo=UTC))
        self.namespace("payments", {**team_labels, "example.com/team": "payments"})
        for name in ("api", "api-cache", "ledger", "webhooks"):
            self.sim.advance(95)
            self.deploy(f"payments/{name}")
        self.at(datetime(2026, 10, 15, 9, 30, 44, tzinfo=UTC))
        self.namespace("platform", {**team_labels, "example.com/team": "platform"})
        for name in ("ingest-worker", "report-builder", "event-router", "image-resizer", "grafana"):
            self.sim.advance(63)
            self.deploy(f"platform/{name}")
        for plan in self.plans:
            if plan.created.month == 10 and plan.created.day == 22:
                self.add_node(plan)
        self.at(dt(3, 10, 15, 40))
        self.set_image("shop/frontend", "1.14.2")
        self.settle()
        for plan in self.plans:
            if plan.created.month == 11 and plan.created.day == 6:
                self.add_node(plan)
        self.at(dt(10, 9, 12, 5))
        self.scale("platform/ingest-worker", 30)
        self.settle()
        self.sim.advance(300)
        self.scale("shop/recommendations", 12)
        self.settle()
        self.at(dt(18, 16, 20, 11))
        self.set_image("shop/catalog-api", "2.8.1")
        self.settle()
        assert not self.pending(), [p.key for p in self.pending()]
        # node maintenance: one general node in eu-west-1b is cordoned and drained, and left so
        self.at(dt(19, 8, 31, 7))
        self.cordoned = next(p.name for p in self.plans if p.zone == "eu-west-1b" and p.group == "general")
        self.cordon_time = self.now
        self.sim.controller("nodelifecycle").drain(self.cordoned)  # type: ignore[attr-defined]
        self.settle()
        assert not self.pending(), [p.key for p in self.pending()]
        # a canary: frontend 1.15.0 starts rolling out and is paused after its first step
        self.at(dt(20, 13, 52, 18))
        self.set_image("shop/frontend", "1.15.0")
        # caught mid-way: no time may pass (advancing the clock works the queue off), so the
        # pause is stored now and only its managedFields entry says when the user typed it
        self.run_until(lambda: self.new_rs_ready("shop/frontend") >= 1)

        def pause(d: Deployment) -> None:
            d.spec.paused = True

        self.change("shop/frontend", pause, ("kubectl-rollout", "Update", ""), {"f:spec": {"f:paused": {}}})
        self.writes["shop/frontend"][-1] = (ts(dt(20, 13, 55, 2)), *self.writes["shop/frontend"][-1][1:])
        self.settle()
        # search is scaled up: its two hard spread constraints leave one replica unplaceable
        self.at(dt(20, 14, 20, 36))
        self.scale_to_fit("shop/search", 1)
        # ledger is scaled up beyond what the highmem nodes hold: three pods wait for CPU
        self.at(dt(20, 14, 41, 9))
        self.scale_to_fit("payments/ledger", 3)
        self.at(dt(20, 14, 43, 30))
        pending = self.pending()
        assert len(pending) == 4, [p.key for p in pending]

    def new_rs_ready(self, key: str) -> int:
        d = self.sim.cluster.get("Deployment", key)
        assert isinstance(d, Deployment)
        rev = d.metadata.annotations.get("deployment.kubernetes.io/revision")
        for rs in self.sim.cluster.objects("ReplicaSet").values():
            ref = rs.metadata.controller_ref()
            if (
                ref is not None
                and ref.uid == d.metadata.uid
                and rs.metadata.annotations.get("deployment.kubernetes.io/revision") == rev
                and rs.spec.template.spec.containers[0].image.endswith("1.15.0")
            ):  # type: ignore[attr-defined]
                status = rs.status if isinstance(rs.status, dict) else {}
                return int(status.get("readyReplicas", 0))
        return 0

    def run_until(self, done: Callable[[], bool]) -> None:
        """Work the simulation one unit at a time until ``done()`` (a rollout caught mid-way).
        The simulator has no public single-step call, so this uses its loop's ``_turn``."""
        sim = self.sim
        while not done():
            if sim._turn():
                continue
            if not sim.clock.settling():
                raise SystemExit("the simulation went quiet before the condition held")
            sim.clock.step()


# --------------------------------------------------------------------------------------------
# managedFields


#: list fields merged by key (listType=map) and their keys; other lists are atomic
LIST_KEYS = {
    "addresses": ("type",),
    "conditions": ("type",),
    "containers": ("name",),
    "env": ("name",),
    "initContainers": ("name",),
    "podIPs": ("ip",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
    "volumeMounts": ("mountPath",),
    "volumes": ("name",),
}
#: fields the API always has (no "." entry of their own) and atomic structs ({} whatever they hold)
NO_DOT = frozenset({"metadata", "spec", "status", "strategy", "template", "containers", "conditions"})
ATOMIC = frozenset({"selector", "labelSelector", "namespaceSelector"})


def _element_key(field_name: str, item: dict[str, Any]) -> str:
    if field_name == "ports":
        names = ("containerPort", "protocol") if "containerPort" in item else ("port", "protocol")
    elif field_name == "ownerReferences":
        names = ("uid",)
    else:
        names = LIST_KEYS[field_name]
    return "k:" + json.dumps({n: item[n] for n in names if n in item}, sort_keys=True, separators=(",", ":"))


def fieldset(value: dict[str, Any], *, dot: bool = False) -> dict[str, Any]:
    """A FieldsV1 set naming every field of ``value`` (the fields a manager wrote)."""
    out: dict[str, Any] = {".": {}} if dot else {}
    for k in sorted(value):
        out[f"f:{k}"] = _field(k, value[k])
    return out


def _field(name: str, v: Any) -> dict[str, Any]:
    if isinstance(v, dict):
        if not v or name in ATOMIC:
            return {}
        return fieldset(v, dot=name not in NO_DOT)
    if (
        isinstance(v, list)
        and v
        and all(isinstance(x, dict) for x in v)
        and (name in LIST_KEYS or name in ("ports", "ownerReferences"))
    ):
        out: dict[str, Any] = {} if name in NO_DOT else {".": {}}
        for item in v:
            out[_element_key(name, item)] = {} if name == "ownerReferences" else fieldset(item, dot=True)
        return out
    if name == "finalizers" and isinstance(v, list):
        return {".": {}, **{f"v:{json.dumps(x)}": {} for x in v}}
    return {}


def managed(
    manager: str,
    operation: str,
    time: str,
    fields: dict[str, Any],
    api_version: str = "v1",
    subresource: str = "",
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
    }
    if subresource:
        entry["subresource"] = subresource
    entry["time"] = time
    return entry


def without(fields: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``fields`` less one field (ownership taken over by another manager's Update)."""
    out = copy.deepcopy(fields)
    node = out
    for part in path[:-1]:
        node = node.get(part, {})
    node.pop(path[-1], None)
    return out


# --------------------------------------------------------------------------------------------
# the dump: the simulation's objects as kubectl prints them


def qos_class(spec: dict[str, Any]) -> str:
    requests = limits = False
    guaranteed = True
    for c in spec.get("containers", []):
        res = c.get("resources", {})
        req, lim = res.get("requests", {}), res.get("limits", {})
        requests = requests or bool(req)
        limits = limits or bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or req.get(r, lim[r]) != lim[r]:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def image_ref(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{digest(image)}"


def image_size(image: str) -> int:
    return 20_000_000 + int(digest(image)[:8], 16) % 180_000_000


def cond(type_: str, status: str, time: str, **extra: str) -> dict[str, Any]:
    return {"lastProbeTime": None, "lastTransitionTime": time, **extra, "status": status, "type": type_}


class Dump:
    """Turns the simulated cluster into kubectl's List, adding what the API server, the kubelet
    and the controllers write that the simulation does not model."""

    def __init__(self, history: History) -> None:
        self.h = history
        self.sim = history.sim
        self.rng = random.Random(f"{SEED}-dump")
        self.plans = {p.name: p for p in history.plans}
        self.rv_base = 51_273_000
        self.max_rv = 0
        self.dump_ts = ts(DUMP_TIME)
        self.pod_ips: dict[str, str] = {}

    def rv(self, sim_rv: str) -> str:
        n = self.rv_base + int(sim_rv) * 23 + int(digest(sim_rv)[:4], 16) % 20
        self.max_rv = max(self.max_rv, n)
        return str(n)

    def common_meta(self, d: dict[str, Any], *, keep_generation: bool) -> dict[str, Any]:
        meta = d["metadata"]
        meta["resourceVersion"] = self.rv(meta["resourceVersion"])
        if not keep_generation:
            meta.pop("generation", None)
        return meta

    # ------------------------------------------------------------------ nodes
    def node(self, node: Node, late_rv: str | None = None) -> dict[str, Any]:
        d = node.to_dict()
        plan = self.plans[node.name]
        meta = d["metadata"]
        if late_rv is None:
            self.common_meta(d, keep_generation=False)
        else:
            meta["resourceVersion"] = late_rv
            meta.pop("generation", None)
        rng = random.Random(f"{SEED}-node-{node.name}")
        created = meta["creationTimestamp"]
        heartbeat = ts(DUMP_TIME - timedelta(seconds=rng.randint(5, 290)))
        ready_at = later(created, rng.randint(18, 40))
        pressure_at = later(created, rng.randint(3, 9))
        status = d["status"]
        status["addresses"] = [
            {"address": plan.ip, "type": "InternalIP"},
            {"address": plan.name, "type": "InternalDNS"},
            {"address": plan.name, "type": "Hostname"},
        ]
        status["conditions"] = [
            {
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": ready_at if t == "Ready" else pressure_at,
                "message": m,
                "reason": r,
                "status": s,
                "type": t,
            }
            for t, s, r, m in NODE_CONDITIONS
        ]
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
        status["features"] = {"supplementalGroupsPolicy": True}
        images = {name: size for name, size in SYSTEM_IMAGES}
        pulled = sorted(
            {
                c.image
                for pod in self.sim.cluster.pods.values()
                if pod.spec.node_name == node.name
                for c in pod.spec.containers
            }
            - set(images)
        )
        for image in pulled:
            images[image] = image_size(image)
        status["images"] = [
            {"names": [image_ref(name), name], "sizeBytes": size}
            for name, size in sorted(images.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        status["nodeInfo"] = {
            "architecture": "amd64",
            "bootID": rand_uid(rng),
            "containerRuntimeVersion": "containerd://2.1.4",
            "kernelVersion": "6.12.40-63.114.amzn2023.x86_64",
            "kubeletVersion": KUBELET_VERSION,
            "machineID": "ec2" + rand_hex(29, rng),
            "operatingSystem": "linux",
            "osImage": "Amazon Linux 2023.9.20250929",
            "systemUUID": "ec2" + rand_hex(5, rng) + "-" + "-".join(rand_hex(n, rng) for n in (4, 4, 4, 12)),
        }
        status["runtimeHandlers"] = [
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"},
        ]
        spec = d["spec"]
        kubelet_spec: dict[str, Any] = {"f:providerID": {}}
        if plan.group == "batch":
            kubelet_spec["f:taints"] = {}
        # the kubelet registered the node; the controller manager wrote the ttl annotation
        annotations = {k: v for k, v in meta["annotations"].items() if k != "node.alpha.kubernetes.io/ttl"}
        entries = [
            managed(
                "kubelet",
                "Update",
                created,
                {
                    "f:metadata": fieldset({"annotations": annotations, "labels": meta["labels"]}),
                    "f:spec": kubelet_spec,
                },
            ),
            managed(
                "kube-controller-manager",
                "Update",
                later(created, rng.randint(2, 6)),
                {"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}}},
            ),
        ]
        if spec.get("unschedulable"):
            # kubectl cordon, then the node lifecycle controller's unschedulable taint
            entries[1] = managed(
                "kube-controller-manager",
                "Update",
                self.h.cordon_time,
                {
                    "f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}},
                    "f:spec": {"f:taints": {}},
                },
            )
            entries.insert(
                1,
                managed("kubectl-cordon", "Update", self.h.cordon_time, {"f:spec": {"f:unschedulable": {}}}),
            )
        entries.append(
            managed("kubelet", "Update", heartbeat, {"f:status": fieldset(status)}, subresource="status")
        )
        meta["managedFields"] = entries
        return d

    # ------------------------------------------------------------------ pods
    def pod(self, pod: Pod, message: str = "", *, late: bool = False) -> dict[str, Any]:
        d = pod.to_dict()
        meta = d["metadata"]
        if not late:  # the late pods have their resourceVersion already
            self.common_meta(d, keep_generation=True)
        spec, created = d["spec"], meta["creationTimestamp"]
        rng = random.Random(f"{SEED}-pod-{pod.key}")
        # what the creator wrote; admission's additions (priority, default tolerations, the
        # token volume) are not attributed to it
        template_spec = {
            k: copy.deepcopy(v)
            for k, v in spec.items()
            if k not in ("nodeName", "priority", "preemptionPolicy", "tolerations")
        }
        if "tolerations" in spec:
            given = [t for t in spec["tolerations"] if "tolerationSeconds" not in t]
            if given:
                template_spec["tolerations"] = given
        template_spec["enableServiceLinks"] = True
        # what admission adds: the service account and (unless opted out) its token volume
        volume = "kube-api-access-" + "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
        spec["enableServiceLinks"] = True
        spec.setdefault("serviceAccountName", "default")
        spec["serviceAccount"] = spec["serviceAccountName"]
        if spec.get("automountServiceAccountToken") is not False:
            self.token_volume(spec, volume)
        qos = qos_class(spec)
        fields_kcm = {
            "f:metadata": fieldset(
                {
                    k: meta[k]
                    for k in ("generateName", "labels", "annotations", "ownerReferences")
                    if k in meta
                }
            ),
            "f:spec": fieldset(template_spec),
        }
        entries = [managed("kube-controller-manager", "Update", created, fields_kcm)]
        node_name = spec.get("nodeName")
        if not node_name:
            status: dict[str, Any] = {
                "conditions": [
                    cond("PodScheduled", "False", created, message=message, reason="Unschedulable")
                ],
                "phase": "Pending",
                "qosClass": qos,
            }
            # its last attempt came before the new node joined (the message counts the nodes then)
            joined = next(p.created for p in self.h.plans if p.late)
            last_try = ts(
                max(parse_ts(created) + timedelta(seconds=8), joined - timedelta(seconds=rng.randint(15, 60)))
            )
            entries.append(
                managed(
                    "kube-scheduler",
                    "Update",
                    last_try,
                    {
                        "f:status": {
                            "f:conditions": {
                                ".": {},
                                'k:{"type":"PodScheduled"}': {
                                    ".": {},
                                    "f:lastProbeTime": {},
                                    "f:lastTransitionTime": {},
                                    "f:message": {},
                                    "f:reason": {},
                                    "f:status": {},
                                    "f:type": {},
                                },
                            }
                        }
                    },
                    subresource="status",
                )
            )
        else:
            status = self.running_status(pod, spec, created, rng, qos)
            kubelet_fields = {k: v for k, v in status.items() if k != "qosClass"}
            ready_time = status["conditions"][2]["lastTransitionTime"]
            entries.append(
                managed(
                    "kubelet",
                    "Update",
                    ready_time,
                    {"f:status": fieldset(kubelet_fields)},
                    subresource="status",
                )
            )
        meta["managedFields"] = entries
        d["status"] = status
        return d

    @staticmethod
    def token_volume(spec: dict[str, Any], volume: str) -> None:
        """The ServiceAccount admission plugin's projected token volume, mounted in every container."""
        spec.setdefault("volumes", []).append(
            {
                "name": volume,
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                "name": "kube-root-ca.crt",
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace",
                                    }
                                ]
                            }
                        },
                    ],
                },
            }
        )
        for c in spec["containers"]:
            c.setdefault("volumeMounts", []).append({"mountPath": SA_MOUNT, "name": volume, "readOnly": True})

    def running_status(
        self, pod: Pod, spec: dict[str, Any], created: str, rng: random.Random, qos: str
    ) -> dict[str, Any]:
        plan = self.plans[spec["nodeName"]]
        if spec.get("hostNetwork"):
            ip = plan.ip
        else:
            ip = self.pod_ips.setdefault(pod.key, self.h.addresses.take(plan.zone))
        scheduled = later(created, rng.randint(0, 1))
        init = later(scheduled, 1)
        sandbox = later(init, rng.randint(1, 3))
        started = later(sandbox, rng.randint(1, 12))
        restarts = 0
        last_state: dict[str, Any] = {}
        if rng.random() < 0.05:
            restarts = rng.randint(1, 3)
            crash = min(
                parse_ts(started) + timedelta(hours=rng.randint(2, 300)), DUMP_TIME - timedelta(minutes=9)
            )
            crash = max(crash, parse_ts(started) + timedelta(seconds=30))
            last_state = {
                "terminated": {
                    "containerID": "containerd://" + rand_hex(64, rng),
                    "exitCode": 137,
                    "finishedAt": ts(crash),
                    "reason": "OOMKilled",
                    "startedAt": started,
                }
            }
            started = ts(crash + timedelta(seconds=rng.randint(1, 20)))
        ready = later(started, rng.randint(2, 15))
        statuses = []
        for c in spec["containers"]:
            image = c["image"]
            cs: dict[str, Any] = {
                "containerID": "containerd://" + rand_hex(64, rng),
                "image": image,
                "imageID": image_ref(image),
                "lastState": last_state,
                "name": c["name"],
                "ready": True,
                "restartCount": restarts,
                "started": True,
                "state": {"running": {"startedAt": started}},
            }
            statuses.append(cs)
        return {
            "conditions": [
                cond("PodReadyToStartContainers", "True", sandbox),
                cond("Initialized", "True", init),
                cond("Ready", "True", ready),
                cond("ContainersReady", "True", ready),
                cond("PodScheduled", "True", scheduled),
            ],
            "containerStatuses": statuses,
            "hostIP": plan.ip,
            "hostIPs": [{"ip": plan.ip}],
            "observedGeneration": 1,
            "phase": "Running",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "qosClass": qos,
            "startTime": scheduled,
        }

    # ------------------------------------------------------------------ workloads
    def pods_of_rs(self, uid: str) -> list[Pod]:
        return [
            p
            for p in self.sim.cluster.pods.values()
            if (r := p.metadata.controller_ref()) is not None and r.uid == uid
        ]

    def replica_sets_of(self, d: Deployment) -> list[ReplicaSet]:
        out = [
            rs
            for rs in self.sim.cluster.objects("ReplicaSet").values()
            if (r := rs.metadata.controller_ref()) is not None and r.uid == d.metadata.uid
        ]
        return sorted(out, key=lambda rs: (rs.metadata.creation_timestamp or "", rs.metadata.name))  # type: ignore[return-value]

    def last_pod_time(self, uids: set[str], default: str) -> str:
        times = [
            p.metadata.creation_timestamp or ""
            for p in self.sim.cluster.pods.values()
            if (r := p.metadata.controller_ref()) is not None and r.uid in uids
        ]
        return later(max([default, *times]), 14)

    def deployment(self, dep: Deployment) -> dict[str, Any]:
        d = dep.to_dict()
        meta = self.common_meta(d, keep_generation=True)
        key = dep.key
        created = meta["creationTimestamp"]
        rss = self.replica_sets_of(dep)
        new_rs = next(
            (
                rs
                for rs in rss
                if rs.metadata.annotations.get("deployment.kubernetes.io/revision")
                == dep.metadata.annotations.get("deployment.kubernetes.io/revision")
            ),
            rss[-1],
        )
        writes = self.h.writes[key]
        last_write = writes[-1][0]
        status = {k: v for k, v in dict(dep.status).items() if v}  # omitempty
        replicas = dep.spec.replicas or 0
        available = int(status.get("availableReplicas", 0))
        status_time = self.last_pod_time({rs.metadata.uid for rs in rss}, last_write)
        avail_ok = available >= replicas - max(0, replicas // 4)
        conditions = [
            {
                "lastTransitionTime": later(created, 9) if avail_ok else status_time,
                "lastUpdateTime": later(created, 9) if avail_ok else status_time,
                "message": "Deployment has minimum availability."
                if avail_ok
                else "Deployment does not have minimum availability.",
                "reason": "MinimumReplicasAvailable" if avail_ok else "MinimumReplicasUnavailable",
                "status": "True" if avail_ok else "False",
                "type": "Available",
            }
        ]
        rs_name = new_rs.metadata.name
        if dep.spec.paused:
            progressing = ("Unknown", "DeploymentPaused", "Deployment is paused", last_write, last_write)
        elif status.get("updatedReplicas") == replicas == available and status.get("replicas") == replicas:
            done = min(later(last_write, 25 + 5 * replicas), status_time)
            progressing = (
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{rs_name}" has successfully progressed.',
                later(created, 2),
                max(done, later(created, 9)),
            )
        elif (DUMP_TIME - parse_ts(last_write)).total_seconds() > 600:
            deadline = later(last_write, 601)
            progressing = (
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{rs_name}" has timed out progressing.',
                deadline,
                deadline,
            )
        else:
            progressing = (
                "True",
                "ReplicaSetUpdated",
                f'ReplicaSet "{rs_name}" is progressing.',
                later(created, 2),
                last_write,
            )
        conditions.append(
            {
                "lastTransitionTime": progressing[3],
                "lastUpdateTime": progressing[4],
                "message": progressing[2],
                "reason": progressing[1],
                "status": progressing[0],
                "type": "Progressing",
            }
        )
        status["conditions"] = conditions
        d["status"] = status
        # managedFields: one entry per (manager, operation, subresource), the latest write's time
        entries: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        for time, manager, operation, subresource, fields in writes:
            if "f:spec" in fields:  # kubectl scale, kubectl rollout pause: the fields themselves
                fv = fields
            elif operation == "Apply":  # server-side apply owns what the applied manifest names
                fv = {
                    "f:metadata": fieldset({"labels": fields["metadata"]["labels"]}),
                    "f:spec": fieldset(fields["spec"]),
                }
            else:  # a create or update owns every field it stored, the defaulted ones too
                meta_fields: dict[str, Any] = {"labels": fields["metadata"]["labels"]}
                if LAST_APPLIED in meta.get("annotations", {}):
                    meta_fields["annotations"] = {LAST_APPLIED: ""}
                fv = {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(with_defaults(fields)["spec"])}
            entries[(manager, operation, subresource)] = (time, fv)
        if any(k[2] == "scale" for k in entries):
            for k, (time, fv) in list(entries.items()):
                if k[2] != "scale":
                    entries[k] = (time, without(fv, ("f:spec", "f:replicas")))
        out = []
        for (manager, operation, subresource), (time, fv) in entries.items():
            api = "apps/v1" if subresource != "scale" else "autoscaling/v1"
            out.append(managed(manager, operation, time, fv, api, subresource))
        has_user_annotations = LAST_APPLIED in meta.get("annotations", {})
        revision_time = next(
            (w[0] for w in reversed(writes) if w[1] not in ("kubectl", "kubectl-rollout")), created
        )
        rev_fields = {"f:deployment.kubernetes.io/revision": {}}
        if not has_user_annotations:
            rev_fields = {".": {}, **rev_fields}
        out.append(
            managed(
                "kube-controller-manager",
                "Update",
                revision_time,
                {"f:metadata": {"f:annotations": rev_fields}},
                "apps/v1",
            )
        )
        out.append(
            managed(
                "kube-controller-manager",
                "Update",
                max(status_time, conditions[-1]["lastUpdateTime"]),
                {"f:status": fieldset(status)},
                "apps/v1",
                "status",
            )
        )
        meta["managedFields"] = out
        return d

    def replica_set(self, rs: ReplicaSet) -> dict[str, Any]:
        d = rs.to_dict()
        meta = self.common_meta(d, keep_generation=True)
        raw = dict(rs.status) if isinstance(rs.status, dict) else {}
        status = {"replicas": raw.get("replicas", 0)}
        status.update({k: v for k, v in raw.items() if v and k != "replicas"})
        d["status"] = status
        created = meta["creationTimestamp"]
        status_time = self.last_pod_time({rs.metadata.uid}, created)
        spec_fields = {k: v for k, v in d["spec"].items()}
        meta_fields = {k: meta[k] for k in ("annotations", "labels", "ownerReferences") if k in meta}
        meta["managedFields"] = [
            managed(
                "kube-controller-manager",
                "Update",
                status_time,
                {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(spec_fields)},
                "apps/v1",
            ),
            managed(
                "kube-controller-manager",
                "Update",
                status_time,
                {"f:status": fieldset(status)},
                "apps/v1",
                "status",
            ),
        ]
        return d

    def service(self, svc: Service) -> dict[str, Any]:
        d = svc.to_dict()
        meta = self.common_meta(d, keep_generation=False)
        key = svc.key
        app = self.h.apps.get(key) or (
            self.h.apps["kube-system/coredns"] if key == "kube-system/kube-dns" else None
        )
        user_spec = {
            k: v
            for k, v in d["spec"].items()
            if k not in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")
        }
        if app is None:
            manager, operation = "kube-apiserver", "Update"
        else:
            manager, operation, _ = History._apply_manager(app)
        if app is not None and app.manager == "kubectl":
            user = {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "labels": meta.get("labels", {}),
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                },
                "spec": {"ports": d["spec"]["ports"], "selector": d["spec"].get("selector", {})},
            }
            meta["annotations"] = {
                LAST_APPLIED: json.dumps(user, sort_keys=True, separators=(",", ":")) + "\n"
            }
        meta_fields = {k: meta[k] for k in ("annotations", "labels") if k in meta}
        if "annotations" in meta_fields:
            meta_fields["annotations"] = {k: "" for k in meta_fields["annotations"]}
        meta["managedFields"] = [
            managed(
                manager,
                operation,
                meta["creationTimestamp"],
                {"f:metadata": fieldset(meta_fields), "f:spec": fieldset(user_spec)},
            )
        ]
        return d

    def namespace(self, ns: Namespace) -> dict[str, Any]:
        d = ns.to_dict()
        meta = self.common_meta(d, keep_generation=False)
        manager = (
            "kube-apiserver" if ns.name.startswith("kube-") or ns.name == "default" else "kubectl-create"
        )
        meta["managedFields"] = [
            managed(
                manager,
                "Update",
                meta["creationTimestamp"],
                {"f:metadata": fieldset({"labels": meta["labels"]})},
            )
        ]
        return d

    # ------------------------------------------------------------------ the late node
    def late_objects(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The node the autoscaler added for the ledger pods, and its DaemonSet pods: written to
        the dump only, so that the scheduler has not yet had a chance to use it."""
        plan = next(p for p in self.h.plans if p.late)
        node = Node.from_dict(node_manifest(plan))
        node.metadata.uid = rand_uid(self.rng)
        node.metadata.creation_timestamp = ts(plan.created)
        pods = []
        rv = self.max_rv + 311
        for i, ds in enumerate(self.h.daemonsets):
            pod = Pod.from_dict(daemon_pod(ds, plan.name))
            pod.metadata.name = self.sim.generate_name(f"{ds.name}-", ds.namespace)
            out = admit_create(pod, self.sim.admission_context(), self.sim.chain)
            assert not isinstance(out, Rejection), out
            pod.metadata.uid = rand_uid(self.rng)
            pod.metadata.creation_timestamp = ts(plan.created + timedelta(seconds=6 + i))
            pod.metadata.generation = 1
            pod.metadata.resource_version = str(rv + 40 + 17 * i)
            pod.spec.node_name = plan.name
            pod.status.phase = "Running"
            pods.append(self.pod(pod, late=True))
        self.plans[plan.name] = plan
        node_dict = self.node(node, late_rv=str(rv + 120))
        # the kubelet reported for the first time minutes ago: the conditions' times are recent
        for c in node_dict["status"]["conditions"]:
            c["lastHeartbeatTime"] = ts(plan.created + timedelta(seconds=75))
            c["lastTransitionTime"] = ts(plan.created + timedelta(seconds=22 if c["type"] == "Ready" else 4))
        node_dict["metadata"]["managedFields"][-1]["time"] = ts(plan.created + timedelta(seconds=75))
        return [node_dict], pods

    # ------------------------------------------------------------------ all of it
    def items(self) -> tuple[list[dict[str, Any]], list[str], list[str]]:
        cluster = self.sim.cluster
        by_ns_name: Callable[[dict[str, Any]], tuple[str, str]] = lambda d: (  # noqa: E731
            d["metadata"].get("namespace", ""),
            d["metadata"]["name"],
        )
        nodes = [self.node(n) for n in cluster.nodes.values()]
        pending = {p.key for p in self.h.pending()}
        pods = [self.pod(p, self.sim.pending_reasons.get(p.key, "")) for p in cluster.pods.values()]
        late_nodes, late_pods = self.late_objects()
        nodes += late_nodes
        pods += late_pods
        deployments = [self.deployment(d) for d in cluster.objects("Deployment").values()]  # type: ignore[arg-type]
        replica_sets = [self.replica_set(rs) for rs in cluster.objects("ReplicaSet").values()]  # type: ignore[arg-type]
        services = [self.service(s) for s in cluster.objects("Service").values()]  # type: ignore[arg-type]
        namespaces = [self.namespace(ns) for ns in cluster.namespaces.values()]
        placeable = sorted(k for k in pending if not k.startswith("shop/search-"))
        unplaceable = sorted(k for k in pending if k.startswith("shop/search-"))
        return (
            sorted(nodes, key=lambda d: d["metadata"]["name"])
            + sorted(pods, key=by_ns_name)
            + sorted(deployments, key=by_ns_name)
            + sorted(replica_sets, key=by_ns_name)
            + sorted(services, key=by_ns_name)
            + sorted(namespaces, key=lambda d: d["metadata"]["name"]),
            placeable,
            unplaceable,
        )


# --------------------------------------------------------------------------------------------
# YAML as kubectl writes it: keys sorted, "quoted" ambiguous strings, multi-line strings as blocks


class KubectlDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    resolved = dumper.resolve(yaml.ScalarNode, value, (True, False))
    if value == "" or resolved != "tag:yaml.org,2002:str":
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


KubectlDumper.add_representer(str, _str)


def to_yaml(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=KubectlDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=100_000,
    )


# --------------------------------------------------------------------------------------------
# the checks


PTS_REASON = "node(s) didn't match pod topology spread constraints"


def rules_of(template: dict[str, Any]) -> list[str]:
    """A one-line account of a pod template's placement rules."""
    spec = template["spec"]
    rules = []
    for c in spec.get("topologySpreadConstraints", []):
        key = "zone" if c["topologyKey"] == ZONE else "hostname"
        mlk = " matchLabelKeys=[pod-template-hash]" if c.get("matchLabelKeys") else ""
        rules.append(f"{key} spread maxSkew {c['maxSkew']} {c['whenUnsatisfiable']}{mlk}")
    aff = spec.get("affinity", {})
    for kind, label in (("podAntiAffinity", "anti-affinity"), ("podAffinity", "pod affinity")):
        for when in ("required", "preferred"):
            for term in aff.get(kind, {}).get(f"{when}DuringSchedulingIgnoredDuringExecution", []):
                term = term.get("podAffinityTerm", term)
                key = "zone" if term["topologyKey"] == ZONE else "hostname"
                rules.append(f"{when} {label} ({key})")
    node_aff = aff.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    for term in (node_aff or {}).get("nodeSelectorTerms", []):
        for e in term.get("matchExpressions", []):
            if e["key"] == NODEGROUP:
                rules.append(f"node affinity {NODEGROUP} in {e['values']}")
    if spec.get("nodeSelector"):
        rules.append(f"nodeSelector {spec['nodeSelector']}")
    if any(t.get("key") == "dedicated" for t in spec.get("tolerations", [])):
        rules.append("tolerates dedicated=batch:NoSchedule")
    return rules


def check(path: Path, placeable: list[str], unplaceable: list[str]) -> None:
    """Load the dump back and check it is at rest and consistent with kubespread's scheduler."""
    manifests = load([path])
    assert not manifests.errors, [str(p) for p in manifests.errors]
    assert not manifests.warnings, [str(p) for p in manifests.warnings]
    cluster = cluster_from_manifests(manifests)
    before = {k: p.spec.node_name for k, p in cluster.pods.items()}
    rs_sizes = {k: rs.spec.replicas for k, rs in cluster.objects("ReplicaSet").items()}  # type: ignore[attr-defined]
    dep_sizes = {k: d.spec.replicas for k, d in cluster.objects("Deployment").items()}  # type: ignore[attr-defined]
    zones = Counter(n.labels[ZONE] for n in cluster.nodes.values())
    sim = Simulation(cluster, seed=SEED)
    sim.run_until_quiet()
    after = {k: p.spec.node_name for k, p in sim.cluster.pods.items()}
    assert set(after) == set(before), ("pods created or deleted", set(after) ^ set(before))
    moved = [k for k, n in before.items() if n and after[k] != n]
    assert not moved, moved
    assert sorted(k for k, n in before.items() if not n) == sorted(placeable + unplaceable)
    for k in placeable:
        assert after[k], (k, sim.pending_reasons.get(k))
    for k in unplaceable:
        assert not after[k] and PTS_REASON in sim.pending_reasons.get(k, ""), (k, sim.pending_reasons.get(k))
    now_rs = {k: rs.spec.replicas for k, rs in sim.cluster.objects("ReplicaSet").items()}  # type: ignore[attr-defined]
    now_dep = {k: d.spec.replicas for k, d in sim.cluster.objects("Deployment").items()}  # type: ignore[attr-defined]
    assert now_rs == rs_sizes and now_dep == dep_sizes
    for k, rs in sim.cluster.objects("ReplicaSet").items():
        active = [
            p
            for p in sim.cluster.pods.values()
            if (r := p.metadata.controller_ref()) and r.uid == rs.metadata.uid and not p.is_terminating
        ]
        assert len(active) == rs_sizes[k], (k, len(active), rs_sizes[k])

    # the new workload of examples/snapshot/checkout.yaml fits once the pending pods are placed
    checkout = load([CHECKOUT_FILE])
    assert not checkout.problems, [str(p) for p in checkout.problems]
    for obj in checkout:
        out = sim.create(obj.copy())
        assert not isinstance(out, Rejection), out
    sim.run_until_quiet()
    dep = sim.cluster.get("Deployment", "shop/checkout")
    assert dep is not None
    mine = [p for p in sim.cluster.pods.values() if p.labels.get("app.kubernetes.io/name") == "checkout"]
    assert len(mine) == dep.spec.replicas and all(p.spec.node_name for p in mine), [  # type: ignore[attr-defined]
        (p.key, sim.pending_reasons.get(p.key)) for p in mine if not p.spec.node_name
    ]
    checkout_zones = Counter(sim.cluster.nodes[p.spec.node_name].labels[ZONE] for p in mine)

    print(f"nodes: {len(cluster.nodes)} ({', '.join(f'{z} {n}' for z, n in sorted(zones.items()))})")
    groups = Counter((n.labels[ZONE], n.labels[NODEGROUP]) for n in cluster.nodes.values())
    for z in ZONES:
        print(f"  {z}: " + ", ".join(f"{g} {groups[(z, g)]}" for g in GROUPS))
    cordoned = [n.name for n in cluster.nodes.values() if n.spec.unschedulable]
    print(f"  cordoned: {', '.join(cordoned)}; tainted dedicated=batch:NoSchedule: the batch group")
    print(
        f"pods: {len(before)} ({sum(1 for n in before.values() if n)} bound, "
        f"{sum(1 for n in before.values() if not n)} pending)"
    )
    print("workloads:")
    for m in manifests.of_kind(Deployment):
        d = m.to_dict()
        rss = [
            rs
            for rs in manifests.of_kind(ReplicaSet)
            if rs.metadata.controller_ref()
            and rs.metadata.controller_ref().uid == m.metadata.uid  # type: ignore[union-attr]
            and rs.spec.replicas
        ]
        sizes = " + ".join(
            f"{rs.spec.replicas} x {rs.spec.template.spec.containers[0].image.rsplit(':', 1)[1]}"
            for rs in sorted(rss, key=lambda rs: rs.metadata.creation_timestamp or "")
        )
        extra = " (paused mid-rollout)" if m.spec.paused else ""
        rules = "; ".join(rules_of(d["spec"]["template"])) or "no placement rules"
        print(f"  {m.key}: replicas {m.spec.replicas} [{sizes}]{extra}: {rules}")
    print(
        "  DaemonSet pods on every node (the DaemonSets are not in the dump): kube-system/kube-proxy, "
        "monitoring/fluent-bit"
    )
    pods_by_key = {p.key: p for p in manifests.of_kind(Pod)}
    print("pending, placeable now (a node joined after they failed):")
    for k in placeable:
        print(f"  {k} -> {after[k]}\n    was: {pods_by_key[k].status.conditions[0].message}")
    print("pending, unplaceable:")
    for k in unplaceable:
        print(f"  {k}\n    dumped: {pods_by_key[k].status.conditions[0].message}")
        print(f"    now:    {sim.pending_reasons[k]}")
    print(f"checkout: all {len(mine)} pods placed, by zone {dict(sorted(checkout_zones.items()))}")


def check_cli(path: Path) -> None:
    exe = Path(sys.executable).parent / "kubespread"
    for resource in ("nodes", "pods"):
        done = subprocess.run(
            [str(exe), "get", resource, "-f", str(path)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        print(f"kubespread get {resource} -f {path.relative_to(ROOT)}: exit 0")


def main() -> None:
    history = History()
    history.play()
    items, placeable, unplaceable = Dump(history).items()
    text = to_yaml({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    CLUSTER_FILE.write_text(text, encoding="utf-8")
    size = len(text.encode())
    print(f"wrote {CLUSTER_FILE.relative_to(ROOT)}: {len(items)} objects, {size:,} bytes")
    assert size < MAX_BYTES, size
    check(CLUSTER_FILE, placeable, unplaceable)
    check_cli(CLUSTER_FILE)


if __name__ == "__main__":
    main()
