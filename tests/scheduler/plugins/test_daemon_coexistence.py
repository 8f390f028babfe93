"""InterPodAffinity's daemonCoexistence (the pod affinity design's "co-existing with daemons",
a kubespread extension): required anti-affinity, of both forms, ignores every pair of pods of
which one is in a daemon namespace; with the option off the answers are kube's."""

from __future__ import annotations

from typing import Any

import pytest

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_node, make_pod
from kubespread.api.schedconfig import InterPodAffinityArgs
from kubespread.scheduler.config import ConfigError, default_profile
from kubespread.scheduler.defaults import default_inter_pod_affinity_args
from kubespread.scheduler.plugins.interpodaffinity import InterPodAffinity
from kubespread.scheduler.plugins.interpodaffinity.common import existing_terms
from kubespread.scheduler.scheduler import schedule_one

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
EVERYONE = {"matchExpressions": [{"key": "app", "operator": "Exists"}]}

ON = {"InterPodAffinity": {"daemonCoexistence": True}}


def exclusive(pod: PodBuilder, form: str = IDE, key: str = HOSTNAME) -> PodBuilder:
    """Required anti-affinity against every pod with an app label, in every namespace."""
    term = {"labelSelector": EVERYONE, "namespaceSelector": {}, "topologyKey": key}
    return pod.affinity(f"podAntiAffinity.{form}", term)


def daemon(name: str, namespace: str = "kube-system") -> PodBuilder:
    return make_pod(name, namespace).label("app", "ds")


def nodes() -> list[Any]:
    return [make_node("n1").zone("a"), make_node("n2").zone("a"), make_node("n3").zone("b")]


def run(cluster: Any, pod: PodBuilder, args: dict | None = None) -> tuple[list[str], dict[str, tuple]]:
    d = schedule_one(pod.obj(), cluster, default_profile(args))
    return d.feasible, {n: r.status.reasons for n, r in d.rejections.items()}


# --- the incoming pod's anti-affinity does not count daemon pods ------------------------------------------


@pytest.mark.parametrize("form", [IDE, RDE])
def test_exclusive_pod_lands_beside_a_daemon_only_when_on(form: str) -> None:
    cluster = cluster_of(
        nodes(),
        [
            daemon("ds-1").node("n1"),
            make_pod("app", "default").label("app", "web").node("n2"),
            daemon("ds-3").node("n3"),
        ],
    )
    pod = exclusive(make_pod("x").label("app", "x"), form)
    feasible, why = run(cluster, pod)
    assert feasible == [] and why == {n: (ANTI,) for n in ("n1", "n2", "n3")}  # kube's answer
    feasible, why = run(cluster, pod, ON)
    assert feasible == ["n1", "n3"] and why == {"n2": (ANTI,)}


def test_a_zone_wide_term_ignores_daemons_in_the_zone() -> None:
    cluster = cluster_of(nodes(), [daemon("ds-1").node("n1"), make_pod("w").label("app", "web").node("n3")])
    pod = exclusive(make_pod("x").label("app", "x"), key=ZONE)
    assert run(cluster, pod)[0] == []
    assert run(cluster, pod, ON)[0] == ["n1", "n2"]


# --- existing pods' anti-affinity does not block daemons (symmetry) -----------------------------------------


def test_daemon_lands_beside_an_exclusive_pod_only_when_on() -> None:
    cluster = cluster_of(nodes(), [exclusive(make_pod("x").label("app", "x"), RDE).node("n1")])
    feasible, why = run(cluster, daemon("ds-new"))
    assert feasible == ["n2", "n3"] and why == {"n1": (EXISTING,)}
    assert run(cluster, daemon("ds-new"), ON)[0] == ["n1", "n2", "n3"]
    # everybody else is still kept away
    feasible, why = run(cluster, make_pod("w").label("app", "web"), ON)
    assert feasible == ["n2", "n3"] and why == {"n1": (EXISTING,)}


def test_a_daemons_own_anti_affinity_neither_blocks_nor_is_blocked_when_on() -> None:
    cluster = cluster_of(
        nodes(), [exclusive(daemon("ds-1")).node("n1"), make_pod("w").label("app", "web").node("n2")]
    )
    # an existing daemon's anti-affinity closes n1 to ordinary pods only under kube's rules
    feasible, why = run(cluster, make_pod("v").label("app", "web"))
    assert feasible == ["n2", "n3"] and why == {"n1": (EXISTING,)}
    assert run(cluster, make_pod("v").label("app", "web"), ON)[0] == ["n1", "n2", "n3"]
    # an incoming daemon's own anti-affinity counts no one when on
    incoming = exclusive(daemon("ds-2"))
    feasible, why = run(cluster, incoming)
    assert feasible == ["n3"] and why == {"n1": (ANTI,), "n2": (ANTI,)}
    assert run(cluster, incoming, ON)[0] == ["n1", "n2", "n3"]


def test_shared_term_carried_by_a_daemon_and_an_ordinary_pod() -> None:
    """Both carry the same term (one entry of the index): only the daemon's node reopens."""
    cluster = cluster_of(
        nodes(),
        [exclusive(daemon("ds-1")).node("n1"), exclusive(make_pod("x", "team").label("app", "x")).node("n2")],
    )
    assert len(existing_terms(cluster).by_role["required_anti_affinity"]) == 1
    feasible, why = run(cluster, make_pod("w").label("app", "web"), ON)
    assert feasible == ["n1", "n3"] and why == {"n2": (EXISTING,)}


def test_the_index_follows_pods_leaving_a_daemon_namespace() -> None:
    cluster = cluster_of(nodes(), [exclusive(daemon("ds-1")).node("n1")])
    assert run(cluster, make_pod("w").label("app", "web"), ON)[0] == ["n1", "n2", "n3"]
    index = existing_terms(cluster)
    assert (
        sum(len(v) for v in index.carried_in(frozenset({"kube-system"}), "required_anti_affinity").values())
        == 1
    )
    cluster.delete("Pod", "kube-system/ds-1")
    assert index.carried_in(frozenset({"kube-system"}), "required_anti_affinity") == {}
    cluster.add(exclusive(make_pod("x", "default").label("app", "x")).node("n1").obj())
    assert run(cluster, make_pod("w").label("app", "web"), ON)[0] == ["n2", "n3"]


# --- which namespaces, and what stays unchanged ----------------------------------------------------------


def test_custom_daemon_namespaces_replace_kube_system() -> None:
    cluster = cluster_of(nodes(), [daemon("ds-1").node("n1"), daemon("agent", "monitoring").node("n2")])
    pod = exclusive(make_pod("x").label("app", "x"))
    args = {"InterPodAffinity": {"daemonCoexistence": True, "daemonNamespaces": ["monitoring"]}}
    feasible, why = run(cluster, pod, args)
    assert feasible == ["n2", "n3"] and why == {"n1": (ANTI,)}


def test_daemon_namespaces_without_the_switch_change_nothing() -> None:
    cluster = cluster_of(nodes(), [daemon("ds-1").node("n1")])
    pod = exclusive(make_pod("x").label("app", "x"))
    args = {"InterPodAffinity": {"daemonNamespaces": ["kube-system"]}}
    assert run(cluster, pod, args)[0] == run(cluster, pod)[0] == ["n2", "n3"]


def test_required_affinity_to_a_daemon_still_holds() -> None:
    cluster = cluster_of(nodes(), [daemon("ds-1").node("n1")])
    term = {
        "labelSelector": {"matchLabels": {"app": "ds"}},
        "namespaces": ["kube-system"],
        "topologyKey": HOSTNAME,
    }
    pod = make_pod("p").affinity(f"podAffinity.{IDE}", term)
    assert run(cluster, pod, ON)[0] == run(cluster, pod)[0] == ["n1"]


def test_preferred_anti_affinity_still_avoids_daemons() -> None:
    cluster = cluster_of(nodes(), [daemon("ds-1").node("n1")])
    term = {"labelSelector": EVERYONE, "namespaceSelector": {}, "topologyKey": HOSTNAME}
    pod = make_pod("p").affinity(
        "podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        {"weight": 100, "podAffinityTerm": term},
    )
    d = schedule_one(pod.obj(), cluster, default_profile(ON))
    assert d.node_scores("n1")["InterPodAffinity"]["normalized"] == 0
    assert d.node_scores("n2")["InterPodAffinity"]["normalized"] == 100


# --- configuration -------------------------------------------------------------------------------------


def test_defaults_fill_kube_system_only_when_switched_on() -> None:
    assert default_inter_pod_affinity_args(
        InterPodAffinityArgs(daemon_coexistence=True)
    ).daemon_namespaces == ["kube-system"]
    off = default_inter_pod_affinity_args(InterPodAffinityArgs())
    assert off.daemon_namespaces == [] and "daemonNamespaces" not in off.to_dict()
    assert InterPodAffinity().daemon_namespaces == frozenset()
    assert InterPodAffinity(InterPodAffinityArgs(daemon_coexistence=True)).daemon_namespaces == {
        "kube-system"
    }
    assert "daemon" not in repr(InterPodAffinity())


@pytest.mark.parametrize(
    ("namespaces", "field"),
    [
        (["Kube_System"], "daemonNamespaces[0]"),
        (["kube-system", ""], "daemonNamespaces[1]"),
        (["a", "a"], "daemonNamespaces[1]"),
    ],
)
def test_bad_daemon_namespaces_are_refused(namespaces: list[str], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        default_profile({"InterPodAffinity": {"daemonCoexistence": True, "daemonNamespaces": namespaces}})
    assert f"profiles[0].pluginConfig[0].args.{field}" in str(err.value)
