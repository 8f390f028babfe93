"""execution_violations: which running pods break a RequiredDuringExecution rule now, and
which pod is to blame (the one with the rule), as the pod affinity design decides."""

from __future__ import annotations

from typing import Any

import pytest

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_namespace, make_node, make_pod
from kubespread.controllers.required_during_execution import Violation, execution_violations

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
DB = {"matchLabels": {"app": "db"}}
WEB = {"matchLabels": {"app": "web"}}


def nodes() -> list[Any]:
    """n1, n2 in zone a; n3 in zone b; n4 without a zone."""
    return [make_node("n1").zone("a"), make_node("n2").zone("a"), make_node("n3").zone("b"), make_node("n4")]


def anti(pod: PodBuilder, selector: dict, key: str = HOSTNAME, form: str = RDE, **extra: Any) -> PodBuilder:
    return pod.affinity(f"podAntiAffinity.{form}", {"labelSelector": selector, "topologyKey": key, **extra})


def aff(pod: PodBuilder, selector: dict, key: str = ZONE, form: str = RDE, **extra: Any) -> PodBuilder:
    return pod.affinity(f"podAffinity.{form}", {"labelSelector": selector, "topologyKey": key, **extra})


def in_zone(pod: PodBuilder, zone: str, form: str = RDE) -> PodBuilder:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}
    return pod.set(f"spec.affinity.nodeAffinity.{form}", sel)


def found(cluster: Any, **kw: Any) -> list[tuple[str, str, int]]:
    return [(v.pod, v.kind, v.term) for v in execution_violations(cluster, **kw)]


# --- the three kinds of rule, broken by what the design names -------------------------------------


def test_relabelling_a_pod_breaks_the_other_pods_anti_affinity() -> None:
    guard = anti(make_pod("guard").label("app", "guard").node("n1"), DB)
    cluster = cluster_of(nodes(), [guard, make_pod("b").label("app", "web").node("n1")])
    assert execution_violations(cluster) == []
    cluster.update(make_pod("b").label("app", "db").node("n1").obj())
    # the pod with the rule is the one to evict, not the relabelled one
    assert execution_violations(cluster) == [
        Violation(
            "default/guard",
            "PodAntiAffinity",
            0,
            "pod anti-affinity term [0] (topologyKey kubernetes.io/hostname) "
            "matches pod default/b on node n1",
        )
    ]


def test_relabelling_a_node_breaks_node_affinity() -> None:
    cluster = cluster_of(nodes(), [in_zone(make_pod("p").node("n1"), "a")])
    assert execution_violations(cluster) == []
    cluster.update(make_node("n1").zone("b").obj())
    (v,) = execution_violations(cluster)
    assert (v.pod, v.kind, v.term) == ("default/p", "NodeAffinity", -1)
    assert "n1" in v.message and "node affinity" in v.message


def test_deleting_the_partner_breaks_affinity() -> None:
    p = aff(make_pod("p").label("app", "web").node("n1"), DB)
    cluster = cluster_of(nodes(), [p, make_pod("db").label("app", "db").node("n2")])
    assert execution_violations(cluster) == []
    cluster.delete("Pod", "default/db")
    assert execution_violations(cluster) == [
        Violation(
            "default/p",
            "PodAffinity",
            0,
            "pod affinity term [0] (topologyKey topology.kubernetes.io/zone) "
            "matches no other pod in topology.kubernetes.io/zone=a",
        )
    ]


def test_a_partner_in_another_domain_does_not_help() -> None:
    p = aff(make_pod("p").label("app", "web").node("n1"), DB)
    cluster = cluster_of(nodes(), [p, make_pod("db").label("app", "db").node("n3")])
    assert found(cluster) == [("default/p", "PodAffinity", 0)]


# --- IgnoredDuringExecution rules are never reported ----------------------------------------------


def test_ignored_during_execution_rules_are_never_reported() -> None:
    guard = anti(make_pod("guard").label("app", "guard").node("n1"), DB, form=IDE)
    lonely = aff(make_pod("p").label("app", "web").node("n1"), DB, form=IDE)
    moved = in_zone(make_pod("m").node("n3"), "a", form=IDE)
    cluster = cluster_of(nodes(), [guard, lonely, moved, make_pod("db").label("app", "db").node("n1")])
    assert execution_violations(cluster) == []
    # the same rules in the RDE form are all broken
    guard, lonely, moved = (
        anti(make_pod("guard").label("app", "guard").node("n1"), DB),
        aff(make_pod("p").label("app", "web").node("n3"), DB),
        in_zone(make_pod("m").node("n3"), "a"),
    )
    cluster = cluster_of(nodes(), [guard, lonely, moved, make_pod("db").label("app", "db").node("n1")])
    assert found(cluster) == [
        ("default/guard", "PodAntiAffinity", 0),
        ("default/m", "NodeAffinity", -1),
        ("default/p", "PodAffinity", 0),
    ]


# --- anti-affinity details ------------------------------------------------------------------------

ANTI_CASES = [
    # (id, the other pod, violated)
    ("same node", make_pod("o").label("app", "db").node("n1"), True),
    ("other node, hostname key", make_pod("o").label("app", "db").node("n2"), False),
    ("other namespace", make_pod("o", "team").label("app", "db").node("n1"), False),
    ("not matching", make_pod("o").label("app", "web").node("n1"), False),
    ("terminating", make_pod("o").label("app", "db").node("n1").terminating(), False),
    ("finished", make_pod("o").label("app", "db").node("n1").phase("Succeeded"), False),
    ("unbound", make_pod("o").label("app", "db"), False),
]


@pytest.mark.parametrize(("name", "other", "violated"), ANTI_CASES, ids=[c[0] for c in ANTI_CASES])
def test_anti_affinity_counts_running_matching_pods_in_the_domain(
    name: str, other: PodBuilder, violated: bool
) -> None:
    guard = anti(make_pod("guard").label("app", "guard").node("n1"), DB)
    cluster = cluster_of(nodes(), [guard, other])
    assert found(cluster) == ([("default/guard", "PodAntiAffinity", 0)] if violated else [])


def test_a_pod_never_conflicts_with_itself() -> None:
    cluster = cluster_of(nodes(), [anti(make_pod("db").label("app", "db").node("n1"), DB)])
    assert execution_violations(cluster) == []


def test_a_zone_key_reaches_the_whole_zone_and_a_keyless_node_has_no_domain() -> None:
    guard = anti(make_pod("guard").node("n1"), DB, key=ZONE)
    cluster = cluster_of(nodes(), [guard, make_pod("db").label("app", "db").node("n2")])
    (v,) = execution_violations(cluster)
    assert v.message.endswith("matches pod default/db on node n2")
    keyless = anti(make_pod("guard").node("n4"), DB, key=ZONE)
    assert (
        execution_violations(cluster_of(nodes(), [keyless, make_pod("db").label("app", "db").node("n4")]))
        == []
    )


def test_namespace_selector_terms_match_through_namespace_labels() -> None:
    guard = anti(make_pod("guard").node("n1"), DB, namespaceSelector={"matchLabels": {"team": "x"}})
    cluster = cluster_of(
        nodes(),
        [
            guard,
            make_pod("a", "ns-x").label("app", "db").node("n1"),
            make_pod("b", "ns-y").label("app", "db").node("n1"),
        ],
        namespaces=[make_namespace("ns-x", team="x"), make_namespace("ns-y", team="y")],
    )
    (v,) = execution_violations(cluster)
    assert "ns-x/a" in v.message


def test_daemon_namespaces_are_exempt_both_ways() -> None:
    everyone = {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
    guard = anti(make_pod("guard").label("app", "x").node("n1"), everyone, namespaceSelector={})
    ds = make_pod("ds", "kube-system").label("app", "ds").node("n1")
    daemon_guard = anti(
        make_pod("agent", "kube-system").label("app", "ds").node("n2"), everyone, namespaceSelector={}
    )
    web = make_pod("web").label("app", "web").node("n2")
    cluster = cluster_of(nodes(), [guard, ds, daemon_guard, web])
    assert found(cluster) == [
        ("default/guard", "PodAntiAffinity", 0),
        ("kube-system/agent", "PodAntiAffinity", 0),
    ]
    assert found(cluster, daemon_namespaces=frozenset({"kube-system"})) == []


# --- affinity details -----------------------------------------------------------------------------


def test_a_lone_self_affine_pod_is_not_evicted_until_a_group_exists_elsewhere() -> None:
    first = aff(make_pod("w1").label("app", "web").node("n1"), WEB)
    cluster = cluster_of(nodes(), [first])
    assert execution_violations(cluster) == []
    # a second member in zone b: w1 is no longer alone, and zone a holds none
    cluster.add(make_pod("w2").label("app", "web").node("n3").obj())
    assert found(cluster) == [("default/w1", "PodAffinity", 0)]
    # a lone pod that does not match its own term has nothing to wait for
    other = aff(make_pod("x").label("app", "x").node("n1"), WEB)
    assert found(cluster_of(nodes(), [other])) == [("default/x", "PodAffinity", 0)]


def test_affinity_on_a_node_without_the_key_is_broken() -> None:
    p = aff(make_pod("p").label("app", "web").node("n4"), WEB)
    (v,) = execution_violations(cluster_of(nodes(), [p, make_pod("w").label("app", "web").node("n1")]))
    assert v.kind == "PodAffinity" and v.message.endswith("node n4 has no label topology.kubernetes.io/zone")


def test_each_term_is_judged_alone() -> None:
    p = aff(aff(make_pod("p").label("app", "web").node("n1"), DB), WEB, key=HOSTNAME)
    cluster = cluster_of(
        nodes(),
        [p, make_pod("db").label("app", "db").node("n2"), make_pod("w").label("app", "web").node("n3")],
    )
    # term 0 (db in zone a) holds; term 1 (web on n1) does not
    assert found(cluster) == [("default/p", "PodAffinity", 1)]


# --- which pods are checked, and the order --------------------------------------------------------


@pytest.mark.parametrize(
    "pod",
    [
        in_zone(make_pod("p").node("n3"), "a").terminating(),
        in_zone(make_pod("p").node("n3"), "a").phase("Failed"),
        in_zone(make_pod("p"), "a"),
    ],
    ids=["terminating", "finished", "unbound"],
)
def test_only_running_pods_are_checked(pod: PodBuilder) -> None:
    assert execution_violations(cluster_of(nodes(), [pod])) == []


def test_output_is_sorted_by_pod_kind_and_term() -> None:
    z = in_zone(make_pod("z").label("app", "z").node("n3"), "a")
    z = aff(
        anti(anti(z, {"matchLabels": {"app": "db"}}), {"matchLabels": {"app": "y"}}),
        {"matchLabels": {"app": "none"}},
    )
    a = in_zone(make_pod("a").node("n3"), "a")
    pods = [z, a, make_pod("y").label("app", "y").node("n3"), make_pod("db").label("app", "db").node("n3")]
    expected = [
        ("default/a", "NodeAffinity", -1),
        ("default/z", "NodeAffinity", -1),
        ("default/z", "PodAffinity", 0),
        ("default/z", "PodAntiAffinity", 0),
        ("default/z", "PodAntiAffinity", 1),
    ]
    assert found(cluster_of(nodes(), pods)) == expected
    assert found(cluster_of(nodes(), list(reversed(pods)))) == expected
