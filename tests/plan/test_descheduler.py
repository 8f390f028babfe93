"""The descheduler baseline: cases ported from the descheduler's own
``topologyspreadconstraint_test.go`` (v0.36.0, TestTopologySpreadConstraint and
TestSortDomains; each test cites the case by name), then the semantics a rebalance planner
leans on (evictability, minDomains ignored, one eviction per pod, default constraints).

Pods are built as ``createTestPods`` builds them: ``pod-<n>`` numbered across the groups, in
namespace ns1, owned by a ReplicaSet, requesting 100m CPU; nodes as ``BuildTestNode``
(2 CPUs, 10 pods unless the case says otherwise). Each test asserts the evicted pods and the
domain each came from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from builders import HOSTNAME, NodeBuilder, PodBuilder, cluster_of, make_node, make_pod
from kubespread.cluster.state import ClusterState
from kubespread.plan.descheduler import DeschedulerArgs, descheduler_pass

NS = "ns1"
FOO = {"matchLabels": {"foo": "bar"}}
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
BOTH = DeschedulerArgs(constraints=("DoNotSchedule", "ScheduleAnyway"))
DEFAULT = DeschedulerArgs()


@dataclass
class Group:
    """One testPodList entry: ``count`` pods on ``node``, edited by ``edit``."""

    count: int
    node: str
    spread: list[dict[str, Any]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=lambda: {"foo": "bar"})
    node_selector: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    owned: bool = True
    terminating: bool = False


def zone_spread(max_skew: int = 1, key: str = "zone", **extra: Any) -> dict[str, Any]:
    """getDefaultTopologyConstraints: DoNotSchedule on ``zone`` selecting foo=bar."""
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": FOO,
        **extra,
    }


def pods_of(groups: list[Group]) -> list[PodBuilder]:
    out: list[PodBuilder] = []
    for g in groups:
        for _ in range(g.count):
            p = make_pod(f"pod-{len(out)}", NS).labels(**g.labels).req(cpu="100m").node(g.node)
            if g.owned:
                p.set("metadata.ownerReferences", [dict(RS_OWNER)])
            if g.spread:
                p.set("spec.topologySpreadConstraints", [dict(c) for c in g.spread])
            if g.node_selector:
                p.node_selector(**g.node_selector)
            for path, value in g.extra.items():
                p.set(path, value)
            if g.terminating:
                p.terminating()
            out.append(p)
    return out


def node(name: str, cpu: str = "2000m", pods: str = "10", **labels: str) -> NodeBuilder:
    b = make_node(name).capacity(cpu=cpu, memory="3Gi", pods=pods)
    for k, v in labels.items():
        b.label(k, v)
    return b


def zones(*spec: str, cpu: str = "2000m") -> list[NodeBuilder]:
    """n1, n2, ... in the zones given (zoneA, zoneB, ...)."""
    return [node(f"n{i + 1}", cpu=cpu, zone=z) for i, z in enumerate(spec)]


def run(
    nodes: list[NodeBuilder], groups: list[Group], args: DeschedulerArgs = DEFAULT
) -> tuple[list[str], ClusterState]:
    cluster = cluster_of(nodes, pods_of(groups))
    return descheduler_pass(cluster, {}, args), cluster


def origins(cluster: ClusterState, evicted: list[str], key: str = "zone") -> Counter[str]:
    """How many evicted pods came from each domain of ``key``."""
    return Counter(cluster.nodes[cluster.pods[k].spec.node_name].metadata.labels[key] for k in evicted)


def names(evicted: list[str]) -> set[str]:
    return {k.split("/", 1)[1] for k in evicted}


# ------------------------------------------------------------------ TestTopologySpreadConstraint


def test_sizes_2_1_move_0() -> None:
    """'2 domains, sizes [2,1], maxSkew=1, move 0 pods'"""
    evicted, _ = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", [zone_spread()]), Group(1, "n1"), Group(1, "n2")],
    )
    assert evicted == []


def test_sizes_3_1_move_1() -> None:
    """'2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]'"""
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", [zone_spread()]), Group(2, "n1"), Group(1, "n2")],
    )
    assert origins(cluster, evicted) == {"zoneA": 1}
    assert names(evicted) == {"pod-2"}  # the last of zone A's pods in name order


@pytest.mark.parametrize(("args", "expected"), [(BOTH, 1), (DeschedulerArgs(), 0)])
def test_soft_constraint_only_with_the_arg(args: DeschedulerArgs, expected: int) -> None:
    """'2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (soft constraints)';
    with the default args (DoNotSchedule only) the ScheduleAnyway constraint is not read."""
    soft = zone_spread(whenUnsatisfiable="ScheduleAnyway")
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", [soft]), Group(2, "n1"), Group(1, "n2")],
        args,
    )
    assert len(evicted) == expected
    assert set(origins(cluster, evicted)) <= {"zoneA"}


def test_bare_pods_are_not_counted() -> None:
    """'2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods': pods without
    ownerReferences are not evictable, so not even counted."""
    evicted, _ = run(
        zones("zoneA", "zoneB"),
        [
            Group(1, "n1", [zone_spread()], owned=False),
            Group(2, "n1", owned=False),
            Group(1, "n2", owned=False),
        ],
    )
    assert evicted == []


def test_sizes_5_2_move_1() -> None:
    """'2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]': half the skew beyond
    maxSkew, rounded up, is 1 (not the 2 that would reach the average)."""
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", [zone_spread()]), Group(4, "n1"), Group(2, "n2")],
    )
    assert origins(cluster, evicted) == {"zoneA": 1}


def test_sizes_4_0_move_2() -> None:
    """'2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]'"""
    evicted, cluster = run(zones("zoneA", "zoneB"), [Group(1, "n1", [zone_spread()]), Group(3, "n1")])
    assert origins(cluster, evicted) == {"zoneA": 2}
    assert names(evicted) == {"pod-2", "pod-3"}


def test_node_selector_and_affinity_pods_are_not_evicted() -> None:
    """'2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and
    nodeAffinity aren't evicted': the two pods with a nodeSelector make a constraint of their
    own (Honor keeps their affinity) whose only domain is zone A; the affinity pod is chosen
    but fits no zone B node, so only the plain pod goes."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}
                ]
            }
        }
    }
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [
            Group(2, "n1", [zone_spread()], node_selector={"zone": "zoneA"}),
            Group(1, "n1", [zone_spread()], extra={"spec.affinity": affinity}),
            Group(1, "n1", [zone_spread()]),
        ],
    )
    assert names(evicted) == {"pod-3"}
    assert origins(cluster, evicted) == {"zoneA": 1}


def _windows(*, extra_node: bool = False) -> list[NodeBuilder]:
    nodes = [node(f"n{i}", node=f"linNode{c}", os="linux") for i, c in zip((1, 2, 3), "ABC", strict=True)]
    nodes += [node(f"n{i}", node=f"winNode{c}", os="windows") for i, c in zip((4, 5, 6), "ABC", strict=True)]
    if extra_node:
        nodes.append(node("n7", node="winNodeD", os="windows"))
    return nodes


def test_windows_nodes_4_3_1_evicts_one_from_node_4() -> None:
    """'6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4': the linux
    nodes are no domain (nodeAffinityPolicy Honor and os=windows), so 3 domains [4,3,1]."""
    spread = [zone_spread(key="node")]
    win = {"os": "windows"}
    evicted, cluster = run(
        _windows(),
        [
            Group(4, "n4", spread, node_selector=win),
            Group(3, "n5", spread, node_selector=win),
            Group(1, "n6", spread, node_selector=win),
        ],
    )
    assert origins(cluster, evicted, "node") == {"winNodeA": 1}


def test_windows_nodes_pinned_pods_stay() -> None:
    """'6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA
    can only be scheduled on this node and nodeFit is true'"""
    spread = [zone_spread(key="node")]
    win = {"os": "windows"}
    evicted, _ = run(
        _windows(),
        [
            Group(4, "n4", spread, node_selector={"node": "winNodeA"}),
            Group(3, "n5", spread, node_selector=win),
            Group(1, "n6", spread, node_selector=win),
        ],
    )
    assert evicted == []


def test_windows_nodes_new_node_takes_two() -> None:
    """'7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node
    added'"""
    spread = [zone_spread(key="node")]
    win = {"os": "windows"}
    evicted, cluster = run(
        _windows(extra_node=True),
        [
            Group(3, "n4", spread, node_selector=win),
            Group(3, "n5", spread, node_selector=win),
            Group(2, "n6", spread, node_selector=win),
        ],
    )
    assert origins(cluster, evicted, "node") == {"winNodeA": 1, "winNodeB": 1}


def test_sizes_0_1_100_move_66() -> None:
    """'3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]'"""
    evicted, cluster = run(
        [node(f"n{i}", pods="200", zone=z) for i, z in ((1, "zoneA"), (2, "zoneB"), (3, "zoneC"))],
        [Group(1, "n2", [zone_spread()]), Group(100, "n3")],
    )
    assert origins(cluster, evicted) == {"zoneC": 66}


def test_sizes_0_1_3_5_move_3() -> None:
    """'4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]'"""
    evicted, cluster = run(
        zones("zoneA", "zoneB", "zoneC", "zoneD"),
        [Group(1, "n2", [zone_spread()]), Group(3, "n3"), Group(5, "n4")],
    )
    assert origins(cluster, evicted) == {"zoneD": 3}


def test_max_skew_2_sizes_2_6_move_1() -> None:
    """'2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]'"""
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", [zone_spread(2)]), Group(1, "n1"), Group(6, "n2")],
    )
    assert origins(cluster, evicted) == {"zoneB": 1}


def test_node_fit_taint_blocks() -> None:
    """'2 domains size [2 6], maxSkew=2, can't move any because of node taints'"""
    nodes = [node("n1", zone="zoneA").taint("hardware", "gpu"), node("n2", zone="zoneB")]
    evicted, _ = run(nodes, [Group(1, "n1", [zone_spread(2)]), Group(1, "n1"), Group(6, "n2")])
    assert evicted == []


def test_node_fit_cpu_blocks() -> None:
    """'2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough
    CPU': zone A's one node is full (200m, two 100m pods)."""
    nodes = [node("n1", cpu="200m", zone="zoneA"), node("n2", zone="zoneB")]
    evicted, _ = run(nodes, [Group(1, "n1", [zone_spread(2)]), Group(1, "n1"), Group(6, "n2")])
    assert evicted == []


@pytest.mark.parametrize(
    ("node_fit", "expected"),
    [(True, {}), (False, {"zoneC": 1})],
)
def test_topology_balance_node_fit(node_fit: bool, expected: dict[str, int]) -> None:
    """'3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA;
    nothing should be moved' and '... args.NodeFit is false, and not enough cpu on zoneA; 1
    should be moved to force scale-up'"""
    nodes = [
        node("n1", cpu="250m", pods="9", zone="zoneA"),
        node("n2", cpu="1000m", pods="9", zone="zoneB"),
        node("n3", cpu="1000m", pods="9", zone="zoneC"),
    ]
    spread = [zone_spread()]
    evicted, cluster = run(
        nodes,
        [Group(2, "n1", spread), Group(3, "n2", spread), Group(4, "n3", spread)],
        DeschedulerArgs(topology_balance_node_fit=node_fit),
    )
    assert origins(cluster, evicted) == expected


def test_node_fit_per_node_not_per_zone() -> None:
    """'3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough
    cpu on ZoneA; nothing should be moved': zone A has room in total (200m) but on no one node."""
    nodes = [
        node("A1", cpu="150m", pods="9", zone="zoneA"),
        node("B1", cpu="1000m", pods="9", zone="zoneB"),
        node("C1", cpu="1000m", pods="9", zone="zoneC"),
        node("A2", cpu="50m", pods="9", zone="zoneA"),
        node("B2", cpu="1000m", pods="9", zone="zoneB"),
        node("C2", cpu="1000m", pods="9", zone="zoneC"),
    ]
    spread = [zone_spread()]
    evicted, _ = run(
        nodes,
        [
            Group(1, "A1", spread),
            Group(1, "B1", spread),
            Group(1, "B2", spread),
            Group(2, "C1", spread),
            Group(1, "C2", spread),
        ],
    )
    assert evicted == []


def test_two_nodes_per_zone_move_1() -> None:
    """'2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1'"""
    nodes = [node(n, cpu="1000m", pods="9", zone=f"zone{n[0]}") for n in ("A1", "A2", "B1", "B2")]
    spread = [zone_spread()]
    evicted, cluster = run(
        nodes,
        [Group(1, "A1", spread), Group(4, "A2", spread), Group(2, "B1", spread), Group(1, "B2", spread)],
    )
    assert names(evicted) == {"pod-4"}
    assert origins(cluster, evicted) == {"zoneA": 1}


def test_multiple_constraints() -> None:
    """'Multiple constraints (6 nodes/2 zones, 4 pods)' (issue #564): a soft zone constraint
    and a hard hostname one; only the zone one is out of balance."""
    nodes = [
        make_node(f"n{i}").zone("zoneA" if i <= 3 else "zoneB").capacity(cpu="2000m", pods="10")
        for i in range(1, 7)
    ]
    whoami = {"matchLabels": {"app": "whoami"}}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": whoami,
        },
        {
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": whoami,
        },
    ]
    app = {"app": "whoami"}
    evicted, cluster = run(nodes, [Group(1, f"n{i}", spread, labels=app) for i in range(1, 5)], BOTH)
    assert origins(cluster, evicted, "topology.kubernetes.io/zone") == {"zoneA": 1}
    assert run(nodes, [Group(1, f"n{i}", spread, labels=app) for i in range(1, 5)])[0] == []


def test_sizes_8_7_0_names() -> None:
    """'3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]': the pods evicted are
    the last of each domain in name order (pod-10 sorts before pod-8)."""
    spread = [zone_spread()]
    evicted, cluster = run(zones("zoneA", "zoneB", "zoneC"), [Group(8, "n1", spread), Group(7, "n2", spread)])
    assert names(evicted) == {"pod-5", "pod-6", "pod-7", "pod-8", "pod-9"}
    assert origins(cluster, evicted) == {"zoneA": 3, "zoneB": 2}


def test_sizes_5_5_5_move_0() -> None:
    """'3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]'"""
    spread = [zone_spread()]
    evicted, _ = run(zones("zoneA", "zoneB", "zoneC"), [Group(5, f"n{i}", spread) for i in (1, 2, 3)])
    assert evicted == []


TOLERATION = {"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("effect", "tolerations", "expected"),
    [
        # '2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint'
        ("NoSchedule", [TOLERATION], {"pod-0"}),
        # '2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node'
        ("NoSchedule", [], set()),
        # '2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint'
        ("PreferNoSchedule", [], {"pod-0"}),
    ],
)
def test_tainted_small_domain(effect: str, tolerations: list[dict[str, str]], expected: set[str]) -> None:
    """The plain pod (the nodeSelector one sorts first, so stays) goes when it may land on
    zone B's tainted node; nodeTaintsPolicy Ignore keeps zone B a domain either way."""
    nodes = [node("n1", zone="zoneA"), node("n2", zone="zoneB").taint("taint-test", "test", effect)]
    extra = {"spec.tolerations": tolerations} if tolerations else {}
    evicted, _ = run(
        nodes,
        [Group(1, "n1", [zone_spread()], extra=extra), Group(1, "n1", node_selector={"zone": "zoneA"})],
    )
    assert names(evicted) == expected


@pytest.mark.parametrize(("hashes", "expected"), [(("foo", "foo"), {"pod-1"}), (("foo", "bar"), set())])
def test_match_label_keys(hashes: tuple[str, str], expected: set[str]) -> None:
    """'2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same
    replicaset' and '... move 0 pods given matchLabelKeys on two different replicasets'"""
    spread = [zone_spread(matchLabelKeys=["pod-template-hash"])]
    evicted, _ = run(
        zones("zoneA", "zoneB"),
        [Group(1, "n1", spread, labels={"foo": "bar", "pod-template-hash": h}) for h in hashes],
    )
    assert names(evicted) == expected


def test_terminating_pods_are_not_counted() -> None:
    """'2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved'"""
    spread = [zone_spread()]
    evicted, _ = run(
        zones("zoneA", "zoneB"),
        [Group(2, "n1", spread), Group(2, "n1", spread, terminating=True), Group(2, "n2", spread)],
    )
    assert evicted == []


def test_tainted_nodes_issue_839() -> None:
    """'2 domains, sizes [3, 1], maxSkew=1, Tainted nodes; nothing should be moved' (issue
    #839): the pods' node affinity (app_service Exists) leaves the tainted control-plane and
    infra nodes out of the hostname domains (nodeAffinityPolicy Honor): [2, 2]."""
    nodes = [
        make_node("controlplane1")
        .label("zone", "zoneA")
        .label(HOSTNAME, "cp-1")
        .taint("node-role.kubernetes.io/controlplane", "true")
        .taint("node-role.kubernetes.io/etcd", "true"),
        make_node("infraservices1")
        .label("zone", "zoneA")
        .label("infra_service", "true")
        .label(HOSTNAME, "infra-1")
        .taint("infra_service"),
        make_node("app1").label("zone", "zoneA").label("app_service", "true").label(HOSTNAME, "app-1"),
        make_node("app2").label("zone", "zoneB").label("app_service", "true").label(HOSTNAME, "app-2"),
    ]
    service = {"app.kubernetes.io/name": "service"}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": service},
        }
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "app_service", "operator": "Exists"}]}]
            }
        }
    }
    groups = [
        Group(2, n, spread, labels=service, extra={"spec.affinity": affinity}) for n in ("app1", "app2")
    ]
    evicted, _ = run(nodes, groups)
    assert evicted == []


def test_node_affinity_policy_ignore_one_constraint() -> None:
    """'3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should
    move 1 for [1, 1, 1]' (the constraints set nodeAffinityPolicy Ignore, so the pods' differing
    nodeSelectors make one constraint): the pod that fits zone C goes, not the zone-pinned one."""
    arch = "kubernetes.io/arch"
    nodes = [
        node(n, cpu="1000m", pods="9", zone=f"zone{n[0]}", **{arch: "arm64"}) for n in ("A1", "B1", "C1")
    ]
    spread = [zone_spread(nodeAffinityPolicy="Ignore")]
    evicted, cluster = run(
        nodes,
        [
            Group(1, "A1", spread, node_selector={arch: "arm64"}),
            Group(1, "A1", spread, node_selector={"zone": "zoneA", arch: "arm64"}),
            Group(1, "B1", spread, node_selector={arch: "arm64"}),
        ],
    )
    assert names(evicted) == {"pod-0"}
    assert origins(cluster, evicted) == {"zoneA": 1}


# ------------------------------------------------------------------ TestSortDomains


def test_highest_priority_goes_first() -> None:
    """TestSortDomains 'multiple domains with different priorities and selectors': priority
    ascending within a domain, and eviction takes from the back, so of two pods without node
    affinity the *higher*-priority one is evicted; a pod with a nodeSelector goes last."""
    spread = [zone_spread()]
    groups = [
        Group(1, "n1", spread, extra={"spec.priority": 5}),
        Group(1, "n1", spread, extra={"spec.priority": 20}),
        Group(1, "n1", spread, extra={"spec.priority": 1000}, node_selector={"zone": "zoneA"}),
    ]
    nodes = zones("zoneA", "zoneB")
    evicted, _ = run(nodes, groups)
    assert names(evicted) == {"pod-1"}
    # the nodeSelector pod's constraint is one of its own (Honor): zone A is its only domain.
    # nil priority sorts before any priority, so a pod without one is evicted last
    evicted, _ = run(nodes, [groups[0], Group(1, "n1", spread)])
    assert names(evicted) == {"pod-0"}


# ------------------------------------------------------------------ what a planner leans on


def test_min_domains_is_ignored() -> None:
    """minDomains 3 over two zones makes kube-scheduler's global minimum 0 (skew 2 > 1 with
    [2, 1]); the descheduler never reads it: max - min = 1, nothing to do (issue #855)."""
    spread = [zone_spread(minDomains=3)]
    evicted, _ = run(zones("zoneA", "zoneB"), [Group(2, "n1", spread), Group(1, "n2", spread)])
    assert evicted == []


def test_default_constraints_are_not_applied() -> None:
    """Pods without their own constraints are never balanced (the scheduler's defaults are
    a profile setting the descheduler does not know)."""
    evicted, _ = run(zones("zoneA", "zoneB"), [Group(4, "n1")])
    assert evicted == []


def test_non_evictable_pods_are_invisible() -> None:
    """DaemonSet pods, pods with an emptyDir and system-critical pods match the selector but
    are not listed, so zone B looks empty: [2, 0] and one eviction, where counting every
    matching pod ([2, 3]) would find balance."""
    ds = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds", "controller": True}]
    spread = [zone_spread()]
    evicted, cluster = run(
        zones("zoneA", "zoneB"),
        [
            Group(2, "n1", spread),
            Group(1, "n2", spread, extra={"metadata.ownerReferences": ds}),
            Group(1, "n2", spread, extra={"spec.volumes": [{"name": "scratch", "emptyDir": {}}]}),
            Group(1, "n2", spread, extra={"spec.priority": 2_000_000_000}),
        ],
    )
    assert origins(cluster, evicted) == {"zoneA": 1}


def test_evict_annotation_overrides_protection() -> None:
    """descheduler.alpha.kubernetes.io/evict makes even a bare pod evictable (and counted)."""
    annotated = {"metadata.annotations": {"descheduler.alpha.kubernetes.io/evict": "true"}}
    evicted, _ = run(zones("zoneA", "zoneB"), [Group(4, "n1", [zone_spread()], owned=False, extra=annotated)])
    assert len(evicted) == 2


def test_namespaces() -> None:
    """No namespace is excluded by default (kube-system pods are balanced like others when
    nothing else protects them); ``namespaces_excluded`` leaves them out entirely."""
    nodes = zones("zoneA", "zoneB")
    pods = [
        make_pod(f"p{i}", "kube-system")
        .labels(foo="bar")
        .node("n1")
        .set("metadata.ownerReferences", [RS_OWNER])
        for i in range(4)
    ]
    for p in pods:
        p.set("spec.topologySpreadConstraints", [zone_spread()])
    cluster = cluster_of(nodes, pods)
    assert len(descheduler_pass(cluster, {})) == 2
    assert (
        descheduler_pass(cluster, {}, DeschedulerArgs(namespaces_excluded=frozenset({"kube-system"}))) == []
    )


def test_constraints_do_not_see_each_other() -> None:
    """Two constraints over one surplus: each counts the cluster as it was, so each picks its
    own pods (zone picks the last of zone A's, hostname the last of n1's); a pod both pick is
    evicted once."""
    nodes = [
        make_node(n).zone(z).capacity(cpu="2000m", pods="10")
        for n, z in (("n1", "a"), ("n2", "a"), ("n3", "b"))
    ]
    app = {"matchLabels": {"app": "w"}}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": app,
        },
        {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": app},
    ]
    # n1: pod-0..pod-3, n2: pod-4; zones [5, 0] -> 2 (pod-3, pod-4); hosts [4, 1, 0] -> 2 (pod-2, pod-3)
    evicted, _ = run(
        nodes, [Group(4, "n1", spread, labels={"app": "w"}), Group(1, "n2", spread, labels={"app": "w"})]
    )
    assert names(evicted) == {"pod-2", "pod-3", "pod-4"}
    assert len(evicted) == len(set(evicted)) == 3


def test_not_ready_nodes_and_single_node() -> None:
    """Only Ready nodes count, and a cycle with fewer than two is skipped."""
    not_ready = node("n2", zone="zoneB")
    not_ready.d["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    evicted, _ = run([node("n1", zone="zoneA"), not_ready], [Group(4, "n1", [zone_spread()])])
    assert evicted == []
