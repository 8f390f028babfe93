"""RequiredDuringExecution rules in the plugins: NodeAffinity (both selectors must hold, the
node-name PreFilterResult narrows by both), PodTopologySpread's nodeAffinityPolicy Honor, and
InterPodAffinity (the incoming pod's terms, existing pods' anti-affinity, existing pods'
required affinity in scoring), with kube's reasons."""

from __future__ import annotations

from typing import Any

import pytest

from builders import HOSTNAME, ZONE, PodBuilder, cluster_of, make_node, make_pod
from kubespread.scheduler.config import ConfigError, default_profile
from kubespread.scheduler.scheduler import schedule_one

IDE = "requiredDuringSchedulingIgnoredDuringExecution"
RDE = "requiredDuringSchedulingRequiredDuringExecution"
WEB = {"matchLabels": {"app": "web"}}
DB = {"matchLabels": {"app": "db"}}
NODE_REASON = "node(s) didn't match Pod's node affinity/selector"


def zones(*spec: str) -> list[Any]:
    """Nodes n1..nk in the given zones."""
    return [make_node(f"n{i}").zone(z) for i, z in enumerate(spec, 1)]


def in_zones(*values: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(values)}]}]
    }


def named(*names: str) -> dict[str, Any]:
    """One term per name (a metadata.name field requirement takes exactly one value)."""
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names
        ]
    }


def node_rules(pod: PodBuilder, ignored: dict | None, enforced: dict | None) -> PodBuilder:
    if ignored is not None:
        pod.set(f"spec.affinity.nodeAffinity.{IDE}", ignored)
    if enforced is not None:
        pod.set(f"spec.affinity.nodeAffinity.{RDE}", enforced)
    return pod


def term(selector: dict, key: str = HOSTNAME) -> dict[str, Any]:
    return {"labelSelector": selector, "topologyKey": key}


def schedule(cluster: Any, pod: PodBuilder) -> Any:
    return schedule_one(pod.obj(), cluster, default_profile())


def reasons(decision: Any) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {n: (r.status.plugin, r.status.reasons) for n, r in decision.rejections.items()}


# --- NodeAffinity ------------------------------------------------------------------------------------

NODE_CASES = [
    # (id, IDE selector, RDE selector, feasible)
    ("rde alone restricts", None, in_zones("b"), ["n2"]),
    ("both must hold", in_zones("a", "b"), in_zones("b", "c"), ["n2"]),
    ("disjoint: none", in_zones("a"), in_zones("c"), []),
    (
        "rde terms are ORed",
        None,
        {"nodeSelectorTerms": in_zones("a")["nodeSelectorTerms"] + in_zones("c")["nodeSelectorTerms"]},
        ["n1", "n3"],
    ),
    ("rde without terms matches nothing", None, {"nodeSelectorTerms": []}, []),
]


@pytest.mark.parametrize(
    ("name", "ignored", "enforced", "feasible"), NODE_CASES, ids=[c[0] for c in NODE_CASES]
)
def test_node_affinity_needs_both_selectors(
    name: str, ignored: Any, enforced: Any, feasible: list[str]
) -> None:
    cluster = cluster_of(zones("a", "b", "c"))
    d = schedule(cluster, node_rules(make_pod("p"), ignored, enforced))
    assert d.feasible == feasible
    for n in {"n1", "n2", "n3"} - set(feasible):
        assert reasons(d)[n] == ("NodeAffinity", (NODE_REASON,))
    if not feasible:
        assert d.fit_error == (
            f"0/3 nodes are available: 3 {NODE_REASON}. no new claims to deallocate, "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )


def test_node_names_in_both_forms_narrow_prefilter_to_their_intersection() -> None:
    cluster = cluster_of(zones("a", "a", "a"))
    d = schedule(cluster, node_rules(make_pod("p"), named("n1", "n2"), named("n2", "n3")))
    assert d.feasible == ["n2"]
    assert {r.stage for n, r in d.rejections.items()} == {"PreFilterResult"}


def test_node_names_in_disjoint_forms_conflict_at_prefilter() -> None:
    cluster = cluster_of(zones("a", "a", "a"))
    d = schedule(cluster, node_rules(make_pod("p"), named("n1"), named("n3")))
    assert d.pre_filter_status is not None
    assert d.pre_filter_status.reasons == ("pod affinity terms conflict",)
    # the rejection stops PreFilter before DynamicResources', whose PostFilter then fails
    # reading its state: kube-scheduler's message ends with that error's "not found"
    assert d.fit_error == "0/3 nodes are available: pod affinity terms conflict. not found"


def test_spread_honors_the_rde_node_affinity() -> None:
    """nodeAffinityPolicy Honor: zones outside the RDE selector are no domains, so the empty
    zones b and c do not make zone a's one pod a skew of 2."""
    cluster = cluster_of(zones("a", "b", "c"), [make_pod("e").label("app", "web").node("n1")])
    spread = make_pod("p").label("app", "web").spread(1, ZONE, selector=WEB)
    d = schedule(cluster, node_rules(spread, None, in_zones("a")))
    assert d.selected == "n1"
    # the same pod honouring nothing about zones is refused n1 by the spread
    d = schedule(cluster, make_pod("q").label("app", "web").spread(1, ZONE, selector=WEB))
    assert reasons(d)["n1"][0] == "PodTopologySpread" and d.selected in ("n2", "n3")


# --- InterPodAffinity ---------------------------------------------------------------------------------

ANTI = "node(s) didn't match pod anti-affinity rules"
AFF = "node(s) didn't match pod affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"


def test_incoming_rde_anti_affinity_blocks_like_the_ignored_form() -> None:
    cluster = cluster_of(zones("a", "a", "b"), [make_pod("db").label("app", "db").node("n1")])
    for form in (IDE, RDE):
        d = schedule(cluster, make_pod("p").affinity(f"podAntiAffinity.{form}", term(DB, ZONE)))
        assert d.feasible == ["n3"]
        assert reasons(d)["n1"] == ("InterPodAffinity", (ANTI,)) == reasons(d)["n2"]


def test_incoming_rde_affinity_needs_a_partner_and_ands_with_the_ignored_terms() -> None:
    cluster = cluster_of(
        zones("a", "a", "b"),
        [make_pod("db").labels(app="db", tier="x").node("n1"), make_pod("db2").labels(app="db").node("n3")],
    )
    d = schedule(cluster, make_pod("p").affinity(f"podAffinity.{RDE}", term(DB, ZONE)))
    assert d.feasible == ["n1", "n2", "n3"]
    # ANDed: a partner must match both terms, only db does (zone a)
    both = (
        make_pod("p")
        .affinity(f"podAffinity.{IDE}", term(DB, ZONE))
        .affinity(f"podAffinity.{RDE}", term({"matchLabels": {"tier": "x"}}, ZONE))
    )
    d = schedule(cluster, both)
    assert d.feasible == ["n1", "n2"]
    assert reasons(d)["n3"] == ("InterPodAffinity", (AFF,))


def test_first_pod_of_a_self_affine_rde_group_is_let_through() -> None:
    cluster = cluster_of(zones("a", "b"))
    d = schedule(cluster, make_pod("p").label("app", "web").affinity(f"podAffinity.{RDE}", term(WEB, ZONE)))
    assert d.feasible == ["n1", "n2"]
    d = schedule(cluster, make_pod("q").label("app", "x").affinity(f"podAffinity.{RDE}", term(WEB, ZONE)))
    assert d.feasible == [] and d.fit_error == (
        f"0/2 nodes are available: 2 {AFF}. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_existing_pods_rde_anti_affinity_is_symmetric() -> None:
    guard = (
        make_pod("guard").label("app", "db").node("n1").affinity(f"podAntiAffinity.{RDE}", term(WEB, ZONE))
    )
    cluster = cluster_of(zones("a", "a", "b"), [guard])
    d = schedule(cluster, make_pod("p").label("app", "web"))
    assert d.feasible == ["n3"]
    assert reasons(d)["n1"] == ("InterPodAffinity", (EXISTING,)) == reasons(d)["n2"]
    assert d.fit_error == ""


def test_existing_pods_rde_affinity_scores_with_hard_pod_affinity_weight() -> None:
    """An existing pod's required affinity term that the incoming pod matches draws it to the
    existing pod's domain, for either form."""
    for form in (IDE, RDE):
        fan = make_pod("fan").label("app", "x").node("n3").affinity(f"podAffinity.{form}", term(WEB, ZONE))
        cluster = cluster_of(zones("a", "a", "b"), [fan])
        d = schedule(cluster, make_pod("p").label("app", "web"))
        assert d.selected == "n3"
        assert [d.node_scores(n)["InterPodAffinity"]["normalized"] for n in ("n1", "n2", "n3")] == [0, 0, 100]


# --- the scheduler's addedAffinity (a NodeAffinity) -----------------------------------------------


def test_added_affinity_rde_is_enforced_and_validated() -> None:
    cluster = cluster_of(zones("a", "b", "c"))
    args = {"NodeAffinity": {"addedAffinity": {RDE: in_zones("a", "b")}}}
    d = schedule_one(make_pod("p").obj(), cluster, default_profile(args))
    assert d.feasible == ["n1", "n2"]
    assert reasons(d)["n3"] == ("NodeAffinity", ("node(s) didn't match scheduler-enforced node affinity",))
    bad = {"NodeAffinity": {"addedAffinity": {RDE: {"nodeSelectorTerms": []}}}}
    with pytest.raises(ConfigError, match=f"addedAffinity.{RDE}.nodeSelectorTerms"):
        default_profile(bad)
