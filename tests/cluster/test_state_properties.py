"""Random operation sequences on ClusterState: after every step, every index equals a
recomputation from the object store, and an invalid operation raises ClusterError and
changes nothing.

The model below knows only names and bindings, to predict which operations are valid; the
recomputation reads ``state.pods`` / ``state.nodes`` and derives everything else the slow,
obvious way.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from cluster_builders import make_node
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kubespread.api.core import Pod
from kubespread.api.resources import Resources, node_allocatable, pod_non_zero_requests, pod_requests
from kubespread.api.selectors import EVERYTHING, LabelSelector, Selector, compile_label_selector
from kubespread.cluster import ClusterError, ClusterEvent, ClusterState, EventType, pod_host_ports

pytestmark = pytest.mark.slow

NODE_NAMES = [f"n{i}" for i in range(5)]
POD_NAMES = [f"p{i}" for i in range(8)]
NAMESPACES = ["default", "ns1", "ns2"]


def _compile(d: dict[str, Any]) -> Selector:
    return compile_label_selector(LabelSelector.from_dict(d))


# a few (namespaces, selector, include_terminating) keys; the test asks for them at random times
SELECTOR_CHOICES: list[tuple[frozenset[str] | None, Selector, bool]] = [
    (None, _compile({"matchLabels": {"app": "a"}}), True),
    (None, _compile({"matchLabels": {"app": "a"}}), False),
    (frozenset({"default", "ns1"}), _compile({"matchLabels": {"app": "b"}}), True),
    (None, _compile({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}), False),
    (
        frozenset({"ns2"}),
        _compile({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]}),
        True,
    ),
    (None, _compile({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "c"]}]}), True),
    (frozenset({"ns1"}), EVERYTHING, True),
]

labels_st = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b", "c"]), max_size=2)
cpu_st = st.sampled_from([None, "0", "100m", "250m", "1"])
mem_st = st.sampled_from([None, "64Mi", "1Gi"])
port_st = st.sampled_from([80, 443, 53])


@st.composite
def container_st(draw: st.DrawFn, name: str, init: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x"}
    req = {}
    cpu, mem = draw(cpu_st), draw(mem_st)
    if cpu:
        req["cpu"] = cpu
    if mem:
        req["memory"] = mem
    if draw(st.integers(0, 4)) == 0:
        req["example.com/gpu"] = "1"
    if req:
        c["resources"] = {"requests": req}
    if draw(st.integers(0, 3)) == 0:
        port = draw(port_st)
        c["ports"] = [
            {"containerPort": port, "hostPort": port, "protocol": draw(st.sampled_from(["", "UDP"]))}
        ]
    if init and draw(st.booleans()):
        c["restartPolicy"] = "Always"
    return c


@st.composite
def pod_st(draw: st.DrawFn, node_choices: list[str]) -> Pod:
    name = draw(st.sampled_from(POD_NAMES))
    ns = draw(st.sampled_from(NAMESPACES))
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": draw(labels_st)}
    if draw(st.integers(0, 5)) == 0:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [draw(container_st("c0"))]}
    if draw(st.integers(0, 3)) == 0:
        spec["initContainers"] = [draw(container_st("i0", init=True))]
    if draw(st.integers(0, 5)) == 0:
        spec["overhead"] = {"cpu": "10m"}
    node = draw(st.sampled_from(["", "", *node_choices]))
    if node:
        spec["nodeName"] = node
    phase = draw(st.sampled_from(["Running", "Running", "Pending", "Succeeded", "Failed"]))
    return Pod.from_dict({"metadata": meta, "spec": spec, "status": {"phase": phase}})


class ClusterStateMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = ClusterState()
        self.nodes: set[str] = set()
        self.bound: dict[str, str] = {}  # pod key -> node name ("" unbound)
        self.requested_keys: list[tuple[frozenset[str] | None, Selector, bool]] = []
        self.seen_binding: dict[str, str] = {}  # rebuilt from events only
        self.state.subscribe(self._on_event)

    def _on_event(self, e: ClusterEvent) -> None:
        if e.kind != "Pod":
            return
        if e.type is EventType.ADDED:
            self.seen_binding[e.obj.key] = ""
        elif e.type is EventType.BOUND:
            assert self.seen_binding[e.obj.key] == ""
            self.seen_binding[e.obj.key] = e.node_name
        elif e.type is EventType.UNBOUND:
            assert self.seen_binding[e.obj.key] == e.node_name
            self.seen_binding[e.obj.key] = ""
        elif e.type is EventType.DELETED:
            assert self.seen_binding.pop(e.obj.key) == ""

    # -- helpers
    def _fingerprint(self) -> Any:
        s = self.state
        return (
            {k: id(v) for k, v in s.pods.items()},
            {k: id(v) for k, v in s.nodes.items()},
            list(s.node_names),
            [s.node_vector(name).tolist() for name in ("requested_milli_cpu", "pod_count")],
        )

    def _expect_error(self, fn: Any, *args: Any) -> None:
        before = self._fingerprint()
        try:
            fn(*args)
        except ClusterError:
            pass
        else:
            raise AssertionError(f"{fn.__name__}{args} should have raised ClusterError")
        assert self._fingerprint() == before

    # -- nodes
    @rule(
        name=st.sampled_from(NODE_NAMES),
        labels=st.sampled_from([{}, {"zone": "a"}, {"zone": "b"}]),
        cpu=st.sampled_from(["2", "4"]),
    )
    def add_node(self, name: str, labels: dict[str, str], cpu: str) -> None:
        node = make_node(name, labels, cpu=cpu, pods="3", **{"example.com/gpu": "2"})
        if name in self.nodes:
            self._expect_error(self.state.add_node, node)
        else:
            self.state.add_node(node)
            self.nodes.add(name)

    @rule(name=st.sampled_from(NODE_NAMES), labels=st.sampled_from([{}, {"zone": "a"}, {"zone": "c"}]))
    def update_node(self, name: str, labels: dict[str, str]) -> None:
        node = make_node(name, labels, cpu="8")
        if name in self.nodes:
            self.state.update_node(node)
        else:
            self._expect_error(self.state.update_node, node)

    @rule(name=st.sampled_from(NODE_NAMES))
    def delete_node(self, name: str) -> None:
        if name in self.nodes and name not in self.bound.values():
            self.state.delete_node(name)
            self.nodes.remove(name)
        else:
            self._expect_error(self.state.delete_node, name)

    # -- pods
    @rule(data=st.data())
    def add_pod(self, data: st.DataObject) -> None:
        pod = data.draw(pod_st(NODE_NAMES))
        node = pod.spec.node_name
        if pod.key in self.bound or (node and node not in self.nodes):
            self._expect_error(self.state.add_pod, pod)
        else:
            self.state.add_pod(pod)
            self.bound[pod.key] = node

    @rule(data=st.data())
    def update_pod(self, data: st.DataObject) -> None:
        pod = data.draw(pod_st(NODE_NAMES))
        node = pod.spec.node_name
        if pod.key not in self.bound or (node and node not in self.nodes):
            self._expect_error(self.state.update_pod, pod)
        else:
            self.state.update_pod(pod)
            self.bound[pod.key] = node

    @precondition(lambda self: self.bound)
    @rule(data=st.data())
    def relabel_existing_pod(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.bound)))
        d = self.state.pods[key].to_dict()
        d["metadata"]["labels"] = data.draw(labels_st)
        self.state.update_pod(Pod.from_dict(d))

    @rule(name=st.sampled_from(POD_NAMES), ns=st.sampled_from(NAMESPACES))
    def delete_pod(self, name: str, ns: str) -> None:
        key = f"{ns}/{name}"
        if key in self.bound:
            self.state.delete_pod(key)
            del self.bound[key]
        else:
            self._expect_error(self.state.delete_pod, key)

    @rule(name=st.sampled_from(POD_NAMES), ns=st.sampled_from(NAMESPACES), node=st.sampled_from(NODE_NAMES))
    def bind(self, name: str, ns: str, node: str) -> None:
        key = f"{ns}/{name}"
        if key in self.bound and not self.bound[key] and node in self.nodes:
            self.state.bind(key, node)
            self.bound[key] = node
        else:
            self._expect_error(self.state.bind, key, node)

    @precondition(lambda self: any(self.bound.values()))
    @rule(data=st.data())
    def bind_existing(self, data: st.DataObject) -> None:
        """Unbind a bound pod and bind it again elsewhere (the common path, made likely)."""
        key = data.draw(st.sampled_from(sorted(k for k, n in self.bound.items() if n)))
        self.state.unbind(key)
        self.bound[key] = ""
        if self.nodes:
            node = data.draw(st.sampled_from(sorted(self.nodes)))
            self.state.bind(key, node)
            self.bound[key] = node

    @rule(name=st.sampled_from(POD_NAMES), ns=st.sampled_from(NAMESPACES))
    def unbind(self, name: str, ns: str) -> None:
        key = f"{ns}/{name}"
        if self.bound.get(key):
            self.state.unbind(key)
            self.bound[key] = ""
        else:
            self._expect_error(self.state.unbind, key)

    @rule(i=st.integers(0, len(SELECTOR_CHOICES) - 1))
    def request_counts(self, i: int) -> None:
        key = SELECTOR_CHOICES[i]
        self.state.pod_counts(*key[:2], include_terminating=key[2])
        if key not in self.requested_keys:
            self.requested_keys.append(key)

    # -- the check: every index against a recomputation from scratch
    @invariant()
    def indexes_match_recomputation(self) -> None:
        s = self.state
        pods, nodes = dict(s.pods), dict(s.nodes)
        assert set(nodes) == self.nodes
        assert {k: p.spec.node_name for k, p in pods.items()} == self.bound
        assert self.seen_binding == self.bound

        # node ids: dense, consistent both ways
        names = list(s.node_names)
        assert sorted(names) == sorted(nodes) and s.num_nodes == len(names)
        for i, name in enumerate(names):
            assert s.node_index(name) == i and s.node_info(name).index == i and s.node_info_at(i).name == name

        # nodes by label
        expect_nl: dict[str, dict[str, set[str]]] = {}
        for name, node in nodes.items():
            for k, v in node.labels.items():
                expect_nl.setdefault(k, {}).setdefault(v, set()).add(name)
        for k in {"zone", *expect_nl}:
            got = {v: set(m) for v, m in s.node_label_values(k).items()}
            assert got == expect_nl.get(k, {})
            codes, values = s.node_label_column(k)
            for i, name in enumerate(names):
                label = nodes[name].labels.get(k)
                assert (values[codes[i]] if codes[i] >= 0 else None) == label

        # pods by namespace, by label, unbound
        expect_ns: dict[str, set[str]] = {}
        expect_pl: dict[str, dict[str, set[str]]] = {}
        for key, p in pods.items():
            expect_ns.setdefault(p.namespace or "default", set()).add(key)
            for k, v in p.labels.items():
                expect_pl.setdefault(k, {}).setdefault(v, set()).add(key)
        for ns in NAMESPACES:
            got_ns = s.pods_in_namespace(ns)
            assert set(got_ns) == expect_ns.get(ns, set())
            assert all(got_ns[k] is pods[k] for k in got_ns)
        for k in ("app", "tier"):
            got_pl = {v: set(m) for v, m in s.pod_label_values(k).items()}
            assert got_pl == expect_pl.get(k, {})
            for members in s.pod_label_values(k).values():
                assert all(members[pk] is pods[pk] for pk in members)
        assert dict(s.unbound_pods) == {k: p for k, p in pods.items() if not p.spec.node_name}

        # NodeInfo facts and node vectors
        vec = {
            name: s.node_vector(name).tolist()
            for name in (
                "allocatable_milli_cpu",
                "allocatable_pods",
                "requested_milli_cpu",
                "requested_memory",
                "requested_ephemeral_storage",
                "non_zero_milli_cpu",
                "non_zero_memory",
                "pod_count",
            )
        }
        for i, name in enumerate(names):
            info = s.node_info(name)
            on_node = {k: p for k, p in pods.items() if p.spec.node_name == name}
            visible = {k: p for k, p in on_node.items() if not p.is_finished}
            assert dict(s.pods_on_node(name)) == on_node and info.all_pods == on_node
            assert info.pods == visible and info.pod_count == len(visible) == vec["pod_count"][i]
            requested = Resources()
            nz_cpu = nz_mem = 0
            ports: Counter = Counter()
            for p in visible.values():
                requested.add_in_place(pod_requests(p))
                nz = pod_non_zero_requests(p)
                nz_cpu += nz.milli_cpu
                nz_mem += nz.memory
                ports.update(pod_host_ports(p))
            assert info.requested == requested
            assert (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory) == (nz_cpu, nz_mem)
            assert info.used_ports == dict(ports)
            assert info.allocatable == node_allocatable(nodes[name])
            assert vec["allocatable_milli_cpu"][i] == info.allocatable.milli_cpu
            assert vec["allocatable_pods"][i] == info.allocatable.allowed_pod_number
            assert vec["requested_milli_cpu"][i] == requested.milli_cpu
            assert vec["requested_memory"][i] == requested.memory
            assert vec["requested_ephemeral_storage"][i] == requested.ephemeral_storage
            assert (vec["non_zero_milli_cpu"][i], vec["non_zero_memory"][i]) == (nz_cpu, nz_mem)

        # matching-pod counts, for every key asked for so far
        for namespaces, selector, include_terminating in self.requested_keys:
            expect = np.zeros(len(names), dtype=np.int64)
            for p in pods.values():
                if not p.spec.node_name or p.is_finished:
                    continue
                if p.is_terminating and not include_terminating:
                    continue
                if namespaces is not None and (p.namespace or "default") not in namespaces:
                    continue
                if selector.matches(p.labels):
                    expect[s.node_index(p.spec.node_name)] += 1
            got = s.pod_counts(namespaces, selector, include_terminating=include_terminating)
            assert got.tolist() == expect.tolist(), (namespaces, selector, include_terminating)


ClusterStateMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestClusterStateProperties = ClusterStateMachine.TestCase
