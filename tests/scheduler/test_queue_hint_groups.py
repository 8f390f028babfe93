"""The scheduling queue asks a queueing hint once per group of unschedulable pods (one pod
template, the same rejecting plugins, one profile) and applies the answer to the whole group.
These tests hold it to asking every pod on its own, in the pool's order (kube's
movePodsToActiveOrBackoffQueue): on generated pods, rejections and event sequences, both queues
must move the same pods in the same order, to the same place, and pop them in the same order."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_node, make_pod
from kubespread.api.apps import ReplicaSet
from kubespread.api.core import Node, Pod, Service
from kubespread.api.features import features_for
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.hintkeys import PodTemplates, same_template
from kubespread.scheduler.loop import profile_registrations
from kubespread.scheduler.queue import QueuedPodInfo, QueueingStrategy, Registrations, SchedulingQueue
from kubespread.scheduler.queueing import (
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventRegistration,
    EventResource,
    QueueingEvent,
    node_update_actions,
    pod_update_actions,
)

REGISTRATIONS = profile_registrations(default_profile())
#: a second profile whose hints read more of the pending pod: v1.36's InterPodAffinity hint
#: fixes (its labels), DoNotSchedule default spread constraints (its Services and controller)
OTHER = "other-scheduler"
OTHER_REGISTRATIONS = profile_registrations(
    default_profile(
        {
            "PodTopologySpread": {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                ],
            }
        },
        features=features_for("1.36"),
    )
)
PLUGINS = sorted(REGISTRATIONS)
#: the plugins with queueing hints (the others move their pods on any change)
HINTED = sorted(name for name, regs in REGISTRATIONS.items() if any(r.hint is not None for r in regs))


#: the counting plugins reject most often, as in crowded clusters
WEIGHTS = [4 if name in ("PodTopologySpread", "InterPodAffinity") else 1 for name in HINTED]


def _registrations(pod: Pod) -> Registrations:
    return OTHER_REGISTRATIONS if pod.spec.scheduler_name == OTHER else REGISTRATIONS


RS_OWNER = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "web-1",
    "uid": "rs-uid",
    "controller": True,
}


class EachPod(SchedulingQueue):
    """The reference: every unschedulable pod asked on its own, in the pool's order."""

    def on_event(
        self, event: QueueingEvent, now: float, pre_check: Callable[[Pod], bool] | None = None
    ) -> list[QueuedPodInfo]:
        moved = []
        for _, key in list(self._unschedulable_order):
            info = self._infos[key]
            if pre_check is not None and (info.pod is None or not pre_check(info.pod)):
                continue
            strategy = self.worth_requeuing(info, event)
            if strategy is not QueueingStrategy.SKIP:
                self._requeue(info, strategy, now)
                moved.append(info)
        if self._in_flight:
            self._flight_events.append((event, ""))
        return moved


# --------------------------------------------------------------------------- generated objects
def _template(rng: random.Random, i: int) -> dict[str, Any]:
    """A pending pod's content: what the hints of the default profile read."""
    app = f"app{i % 3}"
    b = (
        make_pod("t")
        .label("app", app)
        .req(cpu=rng.choice(["100m", "2", "0"]), memory=rng.choice(["64Mi", "1Gi"]))
    )
    if rng.random() < 0.5:
        b.label("tier", rng.choice(["a", "b"]))
    if rng.random() < 0.7:
        b.spread(1, rng.choice([ZONE, HOSTNAME]), selector={"matchLabels": {"app": app}})
    if rng.random() < 0.5:
        b.pod_affinity(rng.choice([ZONE, HOSTNAME]), {"matchLabels": {"app": app}}, anti=rng.random() < 0.6)
    if rng.random() < 0.3:
        b.node_selector(disk=rng.choice(["ssd", "hdd"]))
    if rng.random() < 0.3:
        b.toleration(key="dedicated", operator="Exists")
    if rng.random() < 0.2:
        b.host_port(rng.choice([80, 8080]))
    if rng.random() < 0.3:
        b.set("metadata.ownerReferences", [RS_OWNER])
    if rng.random() < 0.2:
        b.set("spec.priority", rng.choice([0, 10]))
    if rng.random() < 0.3:
        b.set("metadata.namespace", "other")
    if rng.random() < 0.5:
        b.set("spec.schedulerName", OTHER)
    return b.d


#: one-field changes of a template: pods that differ in one thing a hint may read
_VARIANTS: tuple[Callable[[dict[str, Any]], None], ...] = (
    lambda d: d["metadata"].setdefault("labels", {}).__setitem__("tier", "a"),
    lambda d: d["metadata"].setdefault("labels", {}).__setitem__("app", "app1"),
    lambda d: d["metadata"].__setitem__("namespace", "other"),
    lambda d: d["metadata"].__setitem__("ownerReferences", [RS_OWNER]),
    lambda d: d["spec"].__setitem__("schedulerName", OTHER),
    lambda d: d["spec"]["containers"][0]["resources"]["requests"].__setitem__("cpu", "3"),
    lambda d: d["spec"].__setitem__("tolerations", [{"key": "dedicated", "operator": "Exists"}]),
)


def _templates(rng: random.Random) -> list[dict[str, Any]]:
    """A few templates, some of them one change away from another."""
    out = [_template(rng, i) for i in range(rng.randint(1, 3))]
    for _ in range(rng.randint(0, 4)):
        d = copy.deepcopy(rng.choice(out))
        rng.choice(_VARIANTS)(d)
        out.append(d)
    return out


def _pod(template: dict[str, Any], name: str) -> Pod:
    d = PodBuilder(name)
    d.d = {**template, "metadata": {**template["metadata"], "name": name, "uid": f"uid-{name}"}}
    return d.obj()


def _node(rng: random.Random, name: str) -> Node:
    b = make_node(name).zone(rng.choice(["z1", "z2"])).capacity(cpu=rng.choice(["1", "4"]), memory="4Gi")
    if rng.random() < 0.5:
        b.label("disk", rng.choice(["ssd", "hdd"]))
    if rng.random() < 0.3:
        b.taint("dedicated", "x")
    if rng.random() < 0.2:
        b.unschedulable()
    if rng.random() < 0.1:
        b.no_label(ZONE)
    return b.obj()


def _bound(rng: random.Random, name: str, node: str) -> Pod:
    b = make_pod(name, rng.choice(["default", "default", "other"]))
    b.label("app", rng.choice(["app0", "app1", "app2", "x"])).node(node)
    if rng.random() < 0.5:
        b.label("tier", "a")
    b.req(cpu=rng.choice(["100m", "1"]))
    if rng.random() < 0.2:
        b.host_port(80)
    if rng.random() < 0.2:
        b.pod_affinity(HOSTNAME, {"matchLabels": {"app": rng.choice(["app0", "app1"])}}, anti=True)
    return b.obj()


def _cluster() -> ClusterState:
    """What hints read of the cluster: the Service and ReplicaSet that default spread
    constraints derive their selector from."""
    service = Service.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"selector": {"tier": "a"}},
        }
    )
    rs = ReplicaSet.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "default", "uid": "rs-uid"},
            "spec": {"selector": {"matchLabels": {"app": "app1"}}, "template": {}},
        }
    )
    return cluster_of([], objects=[service, rs])


class Run:
    """Two queues fed the same operations; every outcome compared."""

    def __init__(self, seed: int, *, pairs: bool = False) -> None:
        self.rng = random.Random(seed)
        self.cluster = _cluster()
        self.now = 0.0
        self.grouped = SchedulingQueue(registrations=_registrations)
        self.each = EachPod(registrations=_registrations)
        self.templates = _templates(self.rng)
        #: ``pairs``: one template and a one-field variant of it, most pods rejected by the same
        #: plugins: the pods a wrong template id would wrongly group, side by side
        self.fixed: list[str] | None = None
        if pairs:
            base = _template(self.rng, 0)
            # where labels, namespace and owner matter: v1.36's hints, default constraints
            if self.rng.random() < 0.7:
                base["spec"]["schedulerName"] = OTHER
            if self.rng.random() < 0.5:
                base["spec"].pop("topologySpreadConstraints", None)
            variant = copy.deepcopy(base)
            self.rng.choice(_VARIANTS)(variant)
            self.templates = [base, variant]
            self.fixed = sorted(set(self.rng.choices(HINTED, WEIGHTS, k=self.rng.choice([1, 2]))))
        self.pending: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.bound: dict[str, Pod] = {}
        self.serial = 0

    def both(self, call: Callable[[SchedulingQueue], Any]) -> None:
        a, b = call(self.grouped), call(self.each)
        if isinstance(a, list):
            assert [(i.key, self.grouped.where(i.key)) for i in a] == [
                (i.key, self.each.where(i.key)) for i in b
            ]
        else:
            assert (a is None) == (b is None)
        self.check()

    def check(self) -> None:
        for key in self.pending:
            assert self.grouped.where(key) == self.each.where(key), key

    def event(self, event: QueueingEvent, pre_check: Callable[[Pod], bool] | None = None) -> None:
        self.both(lambda q: q.on_event(event, self.now, pre_check))

    # ------------------------------------------------------------------ operations
    def add_pending(self) -> None:
        self.serial += 1
        pod = _pod(self.rng.choice(self.templates), f"p{self.serial}")
        self.pending[pod.key] = pod
        self.both(lambda q: q.add(pod, self.now))

    def attempt(self) -> None:
        """Pop one pod; fail it, rejected by random plugins, maybe with events while in flight."""
        a, b = self.grouped.pop(), self.each.pop()
        assert (a and a.key) == (b and b.key)
        if a is None:
            return
        key = a.key
        rng = self.rng
        r = rng.random()
        if self.fixed is not None and r < 0.9:
            rejected = self.fixed
        elif r < 0.05:
            rejected = []
        elif r < 0.1:
            rejected = rng.sample(PLUGINS, 2)
        else:
            rejected = sorted(set(rng.choices(HINTED, WEIGHTS, k=rng.choice([1, 1, 1, 2]))))
        pending = [p for p in rejected if rng.random() < 0.1]
        if self.rng.random() < 0.2:
            self.random_event()
        self.both(lambda q: q.record_rejection(key, [p for p in rejected if p not in pending], pending))
        self.both(lambda q: q.failed(key, self.now))

    def update_pending(self) -> None:
        if not self.pending:
            return
        key = self.rng.choice(sorted(self.pending))
        old = self.pending[key]
        d = old.to_dict()
        choice = self.rng.random()
        if choice < 0.4:
            d["metadata"].setdefault("labels", {})["tier"] = self.rng.choice(["a", "b", "c"])
            if self.rng.random() < 0.3:
                d["metadata"]["ownerReferences"] = [RS_OWNER]
        elif choice < 0.7:
            d["spec"].setdefault("tolerations", []).append({"key": "dedicated", "operator": "Exists"})
        else:
            d["metadata"].setdefault("annotations", {})["note"] = str(self.serial)
        pod = Pod.from_dict(d)
        self.pending[key] = pod
        self.both(lambda q: q.update(pod, self.now))

    def random_event(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.2 or not self.nodes:
            self.serial += 1
            node = _node(rng, f"n{self.serial}")
            self.nodes[node.key] = node
            self.event(QueueingEvent(EventKind(EventResource.NODE, ActionType.ADD), None, node, self.cluster))
        elif r < 0.4:
            name = rng.choice(sorted(self.nodes))
            old = self.nodes[name]
            new = _node(rng, name)
            self.nodes[name] = new
            for action in node_update_actions(old, new):
                self.event(QueueingEvent(EventKind(EventResource.NODE, action), old, new, self.cluster))
        elif r < 0.45:
            name = rng.choice(sorted(self.nodes))
            gone = self.nodes.pop(name)
            self.event(
                QueueingEvent(EventKind(EventResource.NODE, ActionType.DELETE), gone, None, self.cluster)
            )
        elif r < 0.65 or not self.bound:
            self.serial += 1
            pod = _bound(rng, f"b{self.serial}", rng.choice(sorted(self.nodes)))
            self.bound[pod.key] = pod
            self.event(QueueingEvent(EventKind(EventResource.POD, ActionType.ADD), None, pod, self.cluster))
        elif r < 0.8:
            key = rng.choice(sorted(self.bound))
            old = self.bound[key]
            d = old.to_dict()
            if rng.random() < 0.5:
                d["metadata"]["labels"]["app"] = rng.choice(["app0", "app1", "app2", "x"])
            else:
                d["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "10m"}}
            new = self.bound[key] = Pod.from_dict(d)
            for action in pod_update_actions(old, new):
                self.event(QueueingEvent(EventKind(EventResource.POD, action), old, new, self.cluster))
        elif r < 0.9:
            gone = self.bound.pop(rng.choice(sorted(self.bound)))
            self.event(
                QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), gone, None, self.cluster)
            )
        elif r < 0.95 and self.pending:
            # a nominated pending pod goes: only pods of no higher priority are asked
            gone = self.pending[rng.choice(sorted(self.pending))]
            limit = gone.spec.priority or 0
            self.event(
                QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), gone, None, self.cluster),
                lambda pod: (pod.spec.priority or 0) <= limit,
            )
        elif self.grouped._unschedulable:
            # an event about an unschedulable pod itself (hints compare its key)
            key = rng.choice(sorted(self.grouped._unschedulable))
            old = self.pending[key]
            d = old.to_dict()
            d["spec"].setdefault("tolerations", []).append({"key": "node.kubernetes.io/unschedulable"})
            d["metadata"].setdefault("labels", {})["app"] = "x"
            new = Pod.from_dict(d)
            for action in (ActionType.UPDATE_POD_TOLERATION, ActionType.UPDATE_POD_LABEL):
                self.event(QueueingEvent(EventKind(EventResource.POD, action), old, new, self.cluster))

    def step(self) -> None:
        r = self.rng.random()
        if r < 0.12:
            self.add_pending()
        elif r < 0.55:
            self.attempt()
        elif r < 0.6:
            self.update_pending()
        elif r < 0.65:
            self.now += self.rng.choice([0.5, 2.0, 20.0])
            self.both(lambda q: q.flush_backoff_completed(self.now))
        elif r < 0.66:
            self.both(lambda q: q.move_all_to_active_or_backoff(self.now))
        else:
            self.random_event()

    def drain(self) -> None:
        """Pop everything active, in order: the same pods, the same order."""
        while True:
            a, b = self.grouped.pop(), self.each.pop()
            assert (a and a.key) == (b and b.key)
            if a is None:
                return


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_asking_once_per_group_moves_what_asking_every_pod_moves(seed: int) -> None:
    _play(Run(seed))


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_pods_one_field_apart_are_asked_apart(seed: int) -> None:
    _play(Run(seed, pairs=True))


def _play(run: Run) -> None:
    for _ in range(12):
        run.add_pending()
    if run.fixed is not None:  # every pod unschedulable at once, then the changes
        for _ in range(12):
            run.attempt()
    for _ in range(150):
        run.step()
    run.now += 100.0
    run.both(lambda q: q.flush_backoff_completed(run.now))
    run.drain()


def test_one_deployment_asks_once_per_event() -> None:
    """Sixty replicas of one template rejected by the same plugin: one question per event."""
    asked: list[str] = []

    def hint(pod: Pod, event: QueueingEvent) -> Any:
        asked.append(pod.key)
        return QUEUE_SKIP

    regs = {"Fit": [EventRegistration(EventKind(EventResource.NODE, ActionType.ADD), hint)]}
    q = SchedulingQueue(registrations=lambda pod: regs)
    template = make_pod("t").label("app", "web").req(cpu="1").d
    for i in range(60):
        q.add(_pod(template, f"w{i}"), 0.0)
    while (info := q.pop()) is not None:
        q.record_rejection(info.key, ["Fit"])
        q.failed(info.key, 0.0)
    q.on_event(QueueingEvent(EventKind(EventResource.NODE, ActionType.ADD), None, make_node("n").obj()), 5.0)
    assert len(asked) == 1
    # a pod whose labels differ is a template of its own
    other = {**template, "metadata": {**template["metadata"], "labels": {"app": "db"}}}
    q.add(_pod(other, "db0"), 0.0)
    info = q.pop()
    assert info is not None
    q.record_rejection(info.key, ["Fit"])
    q.failed(info.key, 0.0)
    asked.clear()
    q.on_event(QueueingEvent(EventKind(EventResource.NODE, ActionType.ADD), None, make_node("m").obj()), 5.0)
    assert len(asked) == 2


def test_templates_are_by_content_not_identity() -> None:
    templates = PodTemplates()
    base = (
        make_pod("t")
        .label("app", "web")
        .req(cpu="1")
        .spread(1, ZONE, selector={"matchLabels": {"app": "web"}})
        .d
    )
    a, b = _pod(base, "a"), _pod(base, "b")
    assert a is not b and same_template(a, b)
    assert templates.id_of(a) == templates.id_of(b)
    for change in (
        lambda d: d["metadata"].__setitem__("namespace", "other"),
        lambda d: d["metadata"]["labels"].__setitem__("app", "db"),
        lambda d: d["metadata"].__setitem__("annotations", {"x": "y"}),
        lambda d: d["metadata"].__setitem__("ownerReferences", [RS_OWNER]),
        lambda d: d["spec"]["containers"][0]["resources"]["requests"].__setitem__("cpu", "2"),
        lambda d: d["spec"]["topologySpreadConstraints"][0].__setitem__("maxSkew", 2),
        lambda d: d["spec"].__setitem__("tolerations", [{"key": "k", "operator": "Exists"}]),
        lambda d: d["spec"].__setitem__("nodeSelector", {"disk": "ssd"}),
        lambda d: d["spec"].__setitem__("priority", 5),
    ):
        c = b.to_dict()
        change(c)
        other = Pod.from_dict(c)
        assert not same_template(a, other)
        assert templates.id_of(other) != templates.id_of(a)
    # name, uid and status are no part of it
    c = b.to_dict()
    c["metadata"]["uid"] = "else"
    c["status"] = {"nominatedNodeName": "n1"}
    assert templates.id_of(Pod.from_dict(c)) == templates.id_of(a)
