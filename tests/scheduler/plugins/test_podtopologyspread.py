"""PodTopologySpread against hand-computed kube-scheduler v1.35 answers on small clusters."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_namespace, make_node, make_pod
from kubespread.api.apps import ReplicaSet, ReplicationController, StatefulSet
from kubespread.api.core import Service
from kubespread.api.schedconfig import PodTopologySpreadArgs
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import Code, CycleState, Status
from kubespread.scheduler.plugins.podtopologyspread import PodTopologySpread
from kubespread.scheduler.plugins.podtopologyspread.common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from kubespread.scheduler.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)

WEB = {"matchLabels": {"app": "web"}}
SKEW = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
MISSING = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)


def web(name: str, node: str, namespace: str = "default") -> PodBuilder:
    return make_pod(name, namespace).label("app", "web").node(node)


def run_filter(
    cluster: ClusterState, pod: PodBuilder, plugin: PodTopologySpread | None = None
) -> dict[str, Any]:
    """node name → None (passes) or the rejecting Status; "skip" when PreFilter skips."""
    plugin = plugin or PodTopologySpread()
    state, p = CycleState(cluster), pod.obj()
    _, status = plugin.pre_filter(state, p)
    if status.is_skip:
        return {"skip": True}
    result = plugin.filter_nodes(state, p, np.arange(cluster.num_nodes))
    out: dict[str, Any] = {}
    for i, name in enumerate(cluster.node_names):
        w = int(result.which[i])
        out[name] = None if w < 0 else result.statuses[w]
    return out


def run_score(
    cluster: ClusterState, pod: PodBuilder, feasible: list[str], plugin: PodTopologySpread | None = None
) -> dict[str, tuple[int, int]] | None:
    """node name → (raw, normalized) over the feasible nodes; None when PreScore skips."""
    plugin = plugin or PodTopologySpread()
    state, p = CycleState(cluster), pod.obj()
    nodes = np.array([cluster.node_index(n) for n in feasible])
    if plugin.pre_score(state, p, nodes).is_skip:
        return None
    raw = plugin.score_nodes(state, p, nodes)
    norm = plugin.normalize_scores(state, p, nodes, raw)
    return {n: (int(r), int(s)) for n, r, s in zip(feasible, raw, norm, strict=True)}


def zones(**by_zone: str) -> list:
    """Nodes named by keyword, zone by value; an empty value leaves the zone label off."""
    return [make_node(n).zone(z) if z else make_node(n) for n, z in by_zone.items()]


# ------------------------------------------------------------------------------------- Filter
FILTER_CASES = [
    pytest.param(
        zones(a="z1", b="z1", c="z2"),
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": SKEW, "b": SKEW, "c": None},
        id="zone-skew",
    ),
    pytest.param(
        zones(a="z1", c="z2", d=""),
        [],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": None, "c": None, "d": MISSING},
        id="node-without-key",
    ),
    pytest.param(
        zones(a="z1", b="z2"),
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": None, "b": None},
        id="balanced-no-min-domains",
    ),
    pytest.param(
        zones(a="z1", b="z2"),
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB, minDomains=3),
        {"a": SKEW, "b": SKEW},
        id="min-domains-global-min-zero",
    ),
    pytest.param(
        zones(a="z1", b="z2", c="z3"),
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB, minDomains=3),
        {"a": SKEW, "b": SKEW, "c": None},
        id="min-domains-reached",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a")],
        make_pod("in").label("app", "web").node_selector(**{ZONE: "z1"}).spread(1, ZONE, selector=WEB),
        {"a": None, "c": None},
        id="affinity-honor-drops-other-zones",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a")],
        make_pod("in")
        .label("app", "web")
        .node_selector(**{ZONE: "z1"})
        .spread(1, ZONE, selector=WEB, nodeAffinityPolicy="Ignore"),
        {"a": SKEW, "c": None},
        id="affinity-ignore",
    ),
    pytest.param(
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [web("p1", "a")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor"),
        {"a": None, "c": None},
        id="taints-honor-drops-tainted-domain",
    ),
    pytest.param(
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [web("p1", "a")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": SKEW, "c": None},
        id="taints-ignore-by-default",
    ),
    pytest.param(
        [make_node("a").zone("z1"), make_node("c").zone("z2").taint("dedicated", "x")],
        [web("p1", "a")],
        make_pod("in")
        .label("app", "web")
        .toleration("dedicated", operator="Exists")
        .spread(1, ZONE, selector=WEB, nodeTaintsPolicy="Honor"),
        {"a": SKEW, "c": None},
        id="taints-honor-tolerated",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a").terminating(), web("p2", "a").terminating()],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": None, "c": None},
        id="terminating-not-counted",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a", "other"), web("p2", "a", "other")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB),
        {"a": None, "c": None},
        id="other-namespace-not-counted",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a"), web("p2", "a")],
        make_pod("in").label("app", "db").spread(2, ZONE, selector=WEB),
        {"a": None, "c": None},
        id="no-self-match",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [web("p1", "a"), web("p2", "a")],
        make_pod("in").label("app", "web").spread(2, ZONE, selector=WEB),
        {"a": SKEW, "c": None},
        id="self-match",
    ),
    pytest.param(
        zones(a="z1", c="z2"),
        [make_pod("x").label("app", "db").node("a"), make_pod("y").node("a")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector={}),
        {"a": None, "c": None},
        id="empty-selector-counts-nothing",
    ),
    pytest.param(
        [make_node("a").zone("z1"), make_node("b").zone("z1").no_label(HOSTNAME), make_node("c").zone("z2")],
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB).spread(1, HOSTNAME, selector=WEB),
        {"a": SKEW, "b": SKEW, "c": None},
        id="first-failing-constraint-decides",
    ),
    pytest.param(
        [make_node("a").zone("z1"), make_node("b").zone("z2").no_label(HOSTNAME), make_node("c").zone("z2")],
        [web("p1", "a"), web("p2", "b")],
        make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB).spread(1, HOSTNAME, selector=WEB),
        {"a": SKEW, "b": MISSING, "c": None},
        id="nodes-without-every-key-not-counted",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "pod", "want"), FILTER_CASES)
def test_filter(nodes: list, pods: list, pod: PodBuilder, want: dict[str, Status | None]) -> None:
    assert run_filter(cluster_of(nodes, pods), pod) == want


def test_filter_per_node_form_agrees_with_batch() -> None:
    cluster = cluster_of(zones(a="z1", b="z1", c="z2", d=""), [web("p1", "a"), web("p2", "b")])
    plugin, pod = PodTopologySpread(), make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB).obj()
    state = CycleState(cluster)
    plugin.pre_filter(state, pod)
    got = {n: plugin.filter(state, pod, cluster.node_info(n)) for n in "abcd"}
    assert got == {"a": SKEW, "b": SKEW, "c": Status(), "d": MISSING}
    assert got["d"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_counts_follow_the_cluster_between_cycles() -> None:
    cluster = cluster_of(zones(a="z1", c="z2"))
    pod = make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB)
    assert run_filter(cluster, pod) == {"a": None, "c": None}
    cluster.add(web("p1", "c").obj())
    assert run_filter(cluster, pod) == {"a": None, "c": SKEW}


def test_pre_filter_skips_without_hard_constraints() -> None:
    cluster = cluster_of(zones(a="z1"))
    soft_only = make_pod("in").spread(1, ZONE, "ScheduleAnyway", selector=WEB)
    assert run_filter(cluster, soft_only) == {"skip": True}
    assert run_filter(cluster, make_pod("in").label("app", "web")) == {"skip": True}


# -------------------------------------------------------------------------------------- Score
def test_score_zone_counts_and_normalization() -> None:
    cluster = cluster_of(zones(a="z1", b="z1", c="z2"), [web("p1", "a"), web("p2", "b"), web("p3", "c")])
    pod = make_pod("in").label("app", "web").spread(1, ZONE, "ScheduleAnyway", selector=WEB)
    # two zones: weight log(4); z1 holds 2 pods, z2 one
    raw_z1, raw_z2 = round(2 * math.log(4)), round(1 * math.log(4))
    assert (raw_z1, raw_z2) == (3, 1)
    assert run_score(cluster, pod, ["a", "b", "c"]) == {"a": (3, 33), "b": (3, 33), "c": (1, 100)}


def test_score_hostname_counts_per_node_with_max_skew_term() -> None:
    cluster = cluster_of(zones(a="z1", b="z1", c="z1"), [web("p1", "a"), web("p2", "a"), web("p3", "b")])
    pod = make_pod("in").label("app", "web").spread(2, HOSTNAME, "ScheduleAnyway", selector=WEB)
    w = math.log(3 + 2)
    raws = [math.floor(c * w + 1 + 0.5) for c in (2, 1, 0)]
    assert raws == [4, 3, 1]
    top, low = 4, 1
    want = {n: (r, 100 * (top + low - r) // top) for n, r in zip("abc", raws, strict=True)}
    assert run_score(cluster, pod, ["a", "b", "c"]) == want


def test_score_ignores_nodes_without_key_and_counts_only_feasible_domains() -> None:
    # z3 (node e) is not feasible: it neither counts as a domain nor adds pods
    pods = [web("p1", "a"), web("p2", "e"), web("p3", "d")]
    cluster = cluster_of(zones(a="z1", c="z2", d="", e="z3"), pods)
    pod = make_pod("in").label("app", "web").spread(1, ZONE, "ScheduleAnyway", selector=WEB)
    got = run_score(cluster, pod, ["a", "c", "d"])
    assert got == {"a": (round(math.log(4)), 0), "c": (0, 100), "d": (0, 0)}


def test_score_all_zero_normalizes_to_max() -> None:
    cluster = cluster_of(zones(a="z1", c="z2"))
    pod = make_pod("in").label("app", "web").spread(1, ZONE, "ScheduleAnyway", selector=WEB)
    assert run_score(cluster, pod, ["a", "c"]) == {"a": (0, 100), "c": (0, 100)}


def test_score_taints_honor_leaves_pods_on_tainted_nodes_out() -> None:
    nodes = [make_node("a").zone("z1"), make_node("b").zone("z1").taint("k"), make_node("c").zone("z2")]
    cluster = cluster_of(nodes, [web("p1", "b"), web("p2", "b")])
    honor = (
        make_pod("in")
        .label("app", "web")
        .spread(1, ZONE, "ScheduleAnyway", selector=WEB, nodeTaintsPolicy="Honor")
    )
    ignore = make_pod("in").label("app", "web").spread(1, ZONE, "ScheduleAnyway", selector=WEB)
    assert run_score(cluster, honor, ["a", "c"]) == {"a": (0, 100), "c": (0, 100)}
    assert run_score(cluster, ignore, ["a", "c"]) == {"a": (round(2 * math.log(4)), 0), "c": (0, 100)}


def test_pre_score_skips_without_soft_constraints() -> None:
    cluster = cluster_of(zones(a="z1", c="z2"))
    assert run_score(cluster, make_pod("in").spread(1, ZONE, selector=WEB), ["a", "c"]) is None
    assert run_score(cluster, make_pod("in").label("app", "web"), ["a", "c"]) is None


# ---------------------------------------------------------------------------- default constraints
def service(name: str, selector: dict[str, str], namespace: str = "default") -> Service:
    meta = {"name": name, "namespace": namespace}
    spec = {"selector": selector}
    return Service.from_dict({"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec})


def owned(pod: PodBuilder, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": True}
    return pod.set("metadata.ownerReferences", [ref])


def workload(cls: type, name: str, selector: Any, namespace: str = "default") -> Any:
    return cls.from_dict(
        {
            "apiVersion": cls.API_VERSION,
            "kind": cls.KIND,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector},
        }
    )


SYSTEM_NODES = zones(a="z1", b="z2", c="")


def _system_want() -> dict[str, tuple[int, int]]:
    """hostname (maxSkew 3) and zone (maxSkew 5) constraints; 3 feasible nodes and 3 zone
    domains (c, without a zone, counts as the "" domain) so both weigh log(5); one pod on a."""
    w = math.log(5)
    raw = {"a": round((1 * w + 2) + (1 * w + 4)), "b": round(2.0 + 4.0), "c": round(2.0)}
    top, low = max(raw.values()), min(raw.values())
    return {n: (r, 100 * (top + low - r) // top) for n, r in raw.items()}


@pytest.mark.parametrize(
    ("objects", "pod"),
    [
        pytest.param([service("svc", {"app": "web"})], make_pod("in").label("app", "web"), id="service"),
        pytest.param(
            [workload(ReplicaSet, "rs", WEB)],
            owned(make_pod("in").label("app", "web"), "ReplicaSet", "rs"),
            id="replicaset",
        ),
        pytest.param(
            [workload(StatefulSet, "ss", WEB)],
            owned(make_pod("in").label("app", "web"), "StatefulSet", "ss"),
            id="statefulset",
        ),
        pytest.param(
            [workload(ReplicationController, "rc", {"app": "web"})],
            owned(make_pod("in").label("app", "web"), "ReplicationController", "rc", "v1"),
            id="rc",
        ),
    ],
)
def test_system_defaults_select_by_owner(objects: list, pod: PodBuilder) -> None:
    cluster = cluster_of(SYSTEM_NODES, [web("p1", "a")], objects=objects)
    assert _system_want() == {"a": (9, 22), "b": (6, 55), "c": (2, 100)}
    assert run_score(cluster, pod, ["a", "b", "c"]) == _system_want()
    assert run_filter(cluster, pod) == {"skip": True}


@pytest.mark.parametrize(
    ("objects", "pod"),
    [
        pytest.param([], make_pod("in").label("app", "web"), id="no-owner"),
        pytest.param(
            [service("svc", {"app": "web"}, "other")],
            make_pod("in").label("app", "web"),
            id="service-in-other-namespace",
        ),
        pytest.param(
            [service("svc", {"app": "db"})], make_pod("in").label("app", "web"), id="service-not-matching"
        ),
        pytest.param(
            [workload(ReplicaSet, "rs", WEB)],
            owned(make_pod("in").label("app", "web"), "ReplicaSet", "x"),
            id="owner-not-found",
        ),
        pytest.param(
            [workload(ReplicaSet, "rs", WEB)],
            owned(make_pod("in").label("app", "web"), "ReplicaSet", "rs", "extensions/v1beta1"),
            id="owner-other-group",
        ),
    ],
)
def test_system_defaults_need_a_selector(objects: list, pod: PodBuilder) -> None:
    cluster = cluster_of(SYSTEM_NODES, [web("p1", "a")], objects=objects)
    assert run_score(cluster, pod, ["a", "b", "c"]) is None


def test_own_constraints_replace_defaults() -> None:
    cluster = cluster_of(SYSTEM_NODES, [web("p1", "a")], objects=[service("svc", {"app": "web"})])
    pod = make_pod("in").label("app", "web").spread(1, ZONE, selector=WEB)
    assert run_score(cluster, pod, ["a", "b"]) is None  # only a hard constraint: no soft defaults
    assert run_filter(cluster, pod) == {"a": SKEW, "b": None, "c": MISSING}


def list_args(*constraints: dict[str, Any]) -> PodTopologySpreadArgs:
    doc = {"defaultingType": "List", "defaultConstraints": list(constraints)}
    return PodTopologySpreadArgs.from_dict(doc)


def test_list_defaults_filter_with_owner_selector() -> None:
    plugin = PodTopologySpread(
        list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": DO_NOT_SCHEDULE})
    )
    pods = [web("p1", "a"), make_pod("x").label("app", "db").node("b")]
    cluster = cluster_of(zones(a="z1", b="z2", c=""), pods, objects=[service("svc", {"app": "web"})])
    pod = make_pod("in").label("app", "web")
    assert run_filter(cluster, pod, plugin) == {"a": SKEW, "b": None, "c": MISSING}
    assert run_score(cluster, pod, ["a", "b"], plugin) is None
    assert run_filter(cluster, make_pod("lonely").label("app", "db"), plugin) == {"skip": True}


def test_list_defaults_score_require_every_key() -> None:
    plugin = PodTopologySpread(
        list_args({"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY})
    )
    svc = service("svc", {"app": "web"})
    cluster = cluster_of(zones(a="z1", b="z2", c=""), [web("p1", "a")], objects=[svc])
    got = run_score(cluster, make_pod("in").label("app", "web"), ["a", "b", "c"], plugin)
    assert got == {"a": (round(math.log(4)), 0), "b": (0, 100), "c": (0, 0)}


def test_empty_list_defaults_spread_nothing() -> None:
    plugin = PodTopologySpread(list_args())
    cluster = cluster_of(SYSTEM_NODES, [web("p1", "a")], objects=[service("svc", {"app": "web"})])
    assert run_score(cluster, make_pod("in").label("app", "web"), ["a", "b", "c"], plugin) is None


def test_namespaces_do_not_matter_beyond_the_pods() -> None:
    cluster = cluster_of(zones(a="z1", c="z2"), [web("p1", "a", "team")], namespaces=[make_namespace("team")])
    pod = make_pod("in", "team").label("app", "web").spread(1, ZONE, selector=WEB)
    assert run_filter(cluster, pod) == {"a": SKEW, "c": None}


def test_a_soft_constraint_on_a_key_no_node_carries_scores_every_node_zero_and_the_pod_is_placed() -> None:
    """kube-scheduler places such a pod: every node lacks the key, so every node is ignored by
    PodTopologySpread's Score (0) and the other plugins decide (it once raised IndexError)."""
    from kubespread.scheduler.scheduler import Scheduler

    cluster = cluster_of([make_node("n1"), make_node("n2"), make_node("n3")])
    pod = (
        make_pod("p")
        .label("app", "a")
        .spread(1, "example.com/no-such-key", SCHEDULE_ANYWAY, {"matchLabels": {"app": "a"}})
        .obj()
    )
    decision = Scheduler().schedule(pod, cluster)
    assert decision.selected in {"n1", "n2", "n3"}
    assert {decision.node_scores(n)["PodTopologySpread"]["normalized"] for n in ("n1", "n2", "n3")} == {0}


def test_a_parse_is_reused_only_while_the_constraints_are_unchanged() -> None:
    """parse_constraints and pod_terms remember their parse per list/affinity object; the API
    server's matchLabelKeys merge changes a new pod's selectors in place, and a parse made
    before it must not be reused after it."""
    from kubespread.admission.match_label_keys import merge_match_label_keys
    from kubespread.api.core import Pod
    from kubespread.scheduler.plugins.interpodaffinity.common import pod_terms
    from kubespread.scheduler.plugins.podtopologyspread.common import parse_constraints

    term = {
        "labelSelector": {"matchLabels": {"app": "web"}},
        "topologyKey": "zone",
        "matchLabelKeys": ["rev"],
    }
    pod = Pod.from_dict(
        {
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web", "rev": "2"}},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "matchLabelKeys": ["rev"],
                    }
                ],
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
            },
        }
    )
    old_rev = {"app": "web", "rev": "1"}
    constraints = pod.spec.topology_spread_constraints
    assert parse_constraints(constraints, "DoNotSchedule")[0].selector.matches(old_rev)
    assert pod_terms(pod).required_anti_affinity[0].selector.matches(old_rev)
    assert parse_constraints(constraints, "DoNotSchedule") == parse_constraints(constraints, "DoNotSchedule")
    merge_match_label_keys(pod)
    assert not parse_constraints(constraints, "DoNotSchedule")[0].selector.matches(old_rev)
    assert not pod_terms(pod).required_anti_affinity[0].selector.matches(old_rev)
    assert parse_constraints(constraints, "DoNotSchedule")[0].selector.matches({"app": "web", "rev": "2"})
