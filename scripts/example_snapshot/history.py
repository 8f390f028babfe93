"""The cluster's history, played on kubespread's simulator through its public API."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, cast

from kubespread.admission.framework import Rejection
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.core import Node, Pod
from kubespread.api.kinds import KINDS
from kubespread.api.meta import KubeObject
from kubespread.api.validation import validate
from kubespread.cluster import ClusterEvent
from kubespread.sim import EPOCH, Simulation

from .catalog import (
    App,
    NodePlan,
    app_catalog,
    app_labels,
    daemon_pod,
    daemonsets,
    node_manifest,
    node_plans,
    user_deployment,
    with_defaults,
)
from .common import LAST_APPLIED, SEED, Addresses, dt, ts

#: a user's write to a Deployment: (time, manager, operation, subresource, the fields it wrote)
Write = tuple[str, str, str, str, dict[str, Any]]


class NodeLifecycle(Protocol):
    """What the simulation's node lifecycle controller offers that a cluster's admin does."""

    def add(self, node: Node) -> Node | Rejection: ...

    def drain(self, name: str) -> list[str]: ...


def controlled_by(obj: KubeObject, uids: set[str]) -> bool:
    ref = obj.metadata.controller_ref()
    return ref is not None and ref.uid in uids


class History:
    """The simulated cluster and what happened to it (for timestamps and managers later)."""

    def __init__(self) -> None:
        self.sim = Simulation(seed=SEED)
        self.addresses = Addresses(random.Random(f"{SEED}-ips"))
        self.plans = node_plans(self.addresses)
        self.daemonsets = daemonsets()
        self.apps = {a.key: a for a in app_catalog()}
        #: Service key -> the workload it fronts
        self.service_apps: dict[str, App] = {}
        self.user_manifests: dict[str, dict[str, Any]] = {}
        #: Deployment key -> the user writes to it
        self.writes: dict[str, list[Write]] = {}
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

    def settle_catching(self, done: Callable[[], bool], action: Callable[[], None]) -> None:
        """Settle, doing ``action`` as soon as ``done()`` holds: a rollout caught mid-way.

        The simulator has no public single step, so a cluster listener does it: it checks
        ``done()`` after every change and acts within the change that made it true. Being the
        last listener, it acts after every controller has seen that change, which is where a
        step-by-step loop would act (the change that makes it true here, a ReplicaSet's status
        write, is the last thing of its sync)."""
        caught = False

        def listener(event: ClusterEvent) -> None:
            nonlocal caught
            if not caught and done():
                caught = True
                unsubscribe()
                action()

        unsubscribe = self.sim.cluster.subscribe(listener)
        self.settle()
        if not caught:
            unsubscribe()
            raise SystemExit("the simulation went quiet before the condition held")

    def pending(self) -> list[Pod]:
        return sorted(
            (p for p in self.sim.cluster.pods.values() if not p.spec.node_name and not p.is_terminating),
            key=lambda p: p.key,
        )

    def replica_sets_of(self, d: Deployment) -> list[ReplicaSet]:
        """The Deployment's ReplicaSets, oldest first."""
        out = [
            rs
            for rs in self.sim.cluster.objects("ReplicaSet").values()
            if isinstance(rs, ReplicaSet) and controlled_by(rs, {d.metadata.uid})
        ]
        return sorted(out, key=lambda rs: (rs.metadata.creation_timestamp or "", rs.metadata.name))

    def deployment(self, key: str) -> Deployment:
        d = self.sim.cluster.get("Deployment", key)
        assert isinstance(d, Deployment), key
        return d

    def node_lifecycle(self) -> NodeLifecycle:
        return cast(NodeLifecycle, self.sim.controller("nodelifecycle"))

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
        out = self.node_lifecycle().add(Node.from_dict(node_manifest(plan)))
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

    def app_service(self, app: App) -> None:
        """The workload's Service: its port to the first container port, or as the catalog says."""
        svc = app.service
        assert svc is not None
        ports = svc.get("ports")
        if ports is None:
            target = app.containers[0]["ports"][0]["name"]
            ports = [{"name": target, "port": svc["port"], "protocol": "TCP", "targetPort": target}]
        name = svc.get("name", app.name)
        labels = svc.get("labels") or app_labels(app)
        self.service(app.namespace, name, app.selector, ports, labels, cluster_ip=svc.get("clusterIP", ""))
        self.service_apps[f"{app.namespace}/{name}"] = app

    def deploy(self, key: str) -> None:
        app = self.apps[key]
        user = user_deployment(app)
        stored = with_defaults(user)
        if app.manager == "kubectl":
            stored["metadata"]["annotations"] = {
                LAST_APPLIED: json.dumps(user, sort_keys=True, separators=(",", ":")) + "\n"
            }
        self.user_manifests[key] = user
        self.writes[key] = [(self.now, *app.writer, user)]
        self.create(stored)
        if app.service is not None:
            self.app_service(app)
        self.settle()

    def change(
        self,
        key: str,
        mutate: Callable[[Deployment], None],
        manager: tuple[str, str, str],
        fields: dict[str, Any],
    ) -> None:
        """A user's write to a Deployment's spec (generation + 1), as the API server stores it."""
        old = self.deployment(key)
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

        def retag(image: str) -> str:
            return image.rsplit(":", 1)[0] + ":" + tag

        def mutate(d: Deployment) -> None:
            data = d.to_dict()
            container = data["spec"]["template"]["spec"]["containers"][0]
            container["image"] = retag(container["image"])
            data["metadata"]["labels"]["app.kubernetes.io/version"] = tag
            fresh = Deployment.from_dict(data)
            d.spec = fresh.spec
            d.metadata.labels = fresh.metadata.labels

        user["spec"]["template"]["spec"]["containers"][0]["image"] = retag(app.containers[0]["image"])
        user["metadata"]["labels"]["app.kubernetes.io/version"] = tag
        app.version = tag
        self.change(key, mutate, app.writer, user)

    def scale(self, key: str, replicas: int) -> None:
        def mutate(d: Deployment) -> None:
            d.spec.replicas = replicas

        self.change(key, mutate, ("kubectl", "Update", "scale"), {"f:spec": {"f:replicas": {}}})

    def pause(self, key: str) -> None:
        def mutate(d: Deployment) -> None:
            d.spec.paused = True

        self.change(key, mutate, ("kubectl-rollout", "Update", ""), {"f:spec": {"f:paused": {}}})

    def bound_pods_of(self, key: str) -> tuple[int, int]:
        """(bound, pending) pods of the Deployment ``key``."""
        rs_uids = {rs.metadata.uid for rs in self.replica_sets_of(self.deployment(key))}
        bound = pending = 0
        for p in self.sim.cluster.pods.values():
            if not controlled_by(p, rs_uids) or p.is_terminating:
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
        replicas = self.deployment(key).spec.replicas
        assert replicas is not None
        self.scale(key, replicas + 40)
        self.settle()
        bound, _ = self.bound_pods_of(key)
        self.writes[key].pop()  # the probe is not part of the story
        self.scale(key, bound + pending)
        self.settle()
        assert self.bound_pods_of(key) == (bound, pending), self.bound_pods_of(key)

    def new_rs_ready(self, key: str, tag: str) -> int:
        """Ready pods of the Deployment's current ReplicaSet, if it runs image ``tag``."""
        d = self.deployment(key)
        current = d.metadata.annotations.get("deployment.kubernetes.io/revision")
        for rs in self.replica_sets_of(d):
            revision = rs.metadata.annotations.get("deployment.kubernetes.io/revision")
            if revision == current and rs.spec.template.spec.containers[0].image.endswith(tag):
                status = rs.status if isinstance(rs.status, dict) else {}
                return int(status.get("readyReplicas", 0))
        return 0

    # ------------------------------------------------------------------ the story
    def play(self) -> None:
        self.setup()
        self.teams()
        self.day_two()
        self.before_the_dump()

    def add_nodes_of(self, month: int, day: int) -> None:
        for plan in self.plans:
            if plan.created.month == month and plan.created.day == day:
                self.add_node(plan)

    def setup(self) -> None:
        """The cluster is created: its namespaces, nodes and add-ons."""
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
        self.add_nodes_of(10, 5)
        self.at(datetime(2026, 10, 5, 9, 47, 5, tzinfo=UTC))
        self.deploy("kube-system/coredns")
        self.deploy("kube-system/metrics-server")
        self.at(datetime(2026, 10, 5, 10, 31, 22, tzinfo=UTC))
        self.deploy("monitoring/kube-state-metrics")

    def teams(self) -> None:
        """The teams move in, one namespace each, a workload every minute or two."""
        team_labels = {"pod-security.kubernetes.io/enforce": "baseline"}
        for when, team, gap in (
            (datetime(2026, 10, 7, 11, 15, 2, tzinfo=UTC), "shop", 41),
            (datetime(2026, 10, 12, 14, 3, 27, tzinfo=UTC), "payments", 95),
            (datetime(2026, 10, 15, 9, 30, 44, tzinfo=UTC), "platform", 63),
        ):
            self.at(when)
            self.namespace(team, {**team_labels, "example.com/team": team})
            for app in self.apps.values():
                if app.namespace == team:
                    self.sim.advance(gap)
                    self.deploy(app.key)

    def day_two(self) -> None:
        """Six weeks of operations: node scale-ups, rollouts, scale-ups, a drained node."""
        self.add_nodes_of(10, 22)
        self.at(dt(3, 10, 15, 40))
        self.set_image("shop/frontend", "1.14.2")
        self.settle()
        self.add_nodes_of(11, 6)
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
        self.node_lifecycle().drain(self.cordoned)
        self.settle()
        assert not self.pending(), [p.key for p in self.pending()]

    def before_the_dump(self) -> None:
        """The last hour: a paused canary, and two scale-ups that leave pods pending."""
        # a canary: frontend 1.15.0 starts rolling out and is paused after its first step;
        # caught mid-way: no time may pass (advancing the clock works the queue off), so the
        # pause is stored then and only its managedFields entry says when the user typed it
        self.at(dt(20, 13, 52, 18))
        self.set_image("shop/frontend", "1.15.0")
        self.settle_catching(
            lambda: self.new_rs_ready("shop/frontend", "1.15.0") >= 1, lambda: self.pause("shop/frontend")
        )
        self.writes["shop/frontend"][-1] = (ts(dt(20, 13, 55, 2)), *self.writes["shop/frontend"][-1][1:])
        # search is scaled up: its two hard spread constraints leave one replica unplaceable
        self.at(dt(20, 14, 20, 36))
        self.scale_to_fit("shop/search", 1)
        # ledger is scaled up beyond what the highmem nodes hold: three pods wait for CPU
        self.at(dt(20, 14, 41, 9))
        self.scale_to_fit("payments/ledger", 3)
        self.at(dt(20, 14, 43, 30))
        pending = self.pending()
        assert len(pending) == 4, [p.key for p in pending]
