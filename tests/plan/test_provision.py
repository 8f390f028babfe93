"""plan.provision: the fewest nodes from templates so that the scheduler leaves nothing
pending, compared with the brute force (every addition vector up to a bound, each judged by
running the scheduler as ``schedule`` does), and replayed."""

from __future__ import annotations

import pytest

from kubespread.api.apps import Deployment
from kubespread.api.core import Node
from kubespread.io.loader import LoadedObject
from kubespread.plan.provision import (
    ProvisionError,
    ProvisionRequest,
    ProvisionResult,
    cluster_templates,
    node_template,
    provision,
)
from kubespread.sim.baseline import settle
from kubespread.solve.provision import lower_bound
from provision_cases import (
    HOSTNAME,
    ZONE,
    Case,
    brute_force,
    deployment,
    judged,
    node,
    pod,
    random_case,
    spread,
    template,
)


def answer(case: Case, bound: int = 3, **more: object) -> ProvisionResult:
    request = ProvisionRequest(case.loaded(), case.node_templates(), max_per_template=bound, **more)  # type: ignore[arg-type]
    return provision(request)


def vector(case: Case, result: ProvisionResult) -> tuple[int, ...]:
    counts = {a.template: a.count for a in result.additions}
    return tuple(counts.get(t["metadata"]["name"], 0) for t in case.templates)


def check_against_brute_force(case: Case, bound: int = 3) -> ProvisionResult:
    result = answer(case, bound)
    best = brute_force(case, bound)
    assert best is not None
    assert (result.nodes, result.cost) == best
    assert not result.pending_after
    assert judged(case, vector(case, result)) == 0  # the answer replayed as `schedule` runs it
    return result


#: nine replicas over zones, two nodes with room for four: a third zone only template c
#: offers. With c, three per zone (four nodes); without, five and four (three nodes).
ZONAL = Case(
    [node("a-1", "a"), node("b-1", "b"), deployment("web", 9, spreads=[spread(ZONE, app="web")])],
    [template("m-a", "a"), template("m-b", "b"), template("m-c", "c")],
)


def test_a_zone_no_node_is_added_to_is_no_domain() -> None:
    result = check_against_brute_force(ZONAL)
    assert relaxation_bound(ZONAL) == 3
    assert {a.zone: a.count for a in result.additions} == {"a": 1, "b": 2} or {
        a.zone: a.count for a in result.additions
    } == {"a": 2, "b": 1}
    assert result.proven and result.lower_bound == 3
    assert len(result.pending_before) == 5
    assert sum(a.pods for a in result.additions) == 5
    assert len(result.placements) == 9


def test_the_autoscaler_baseline_adds_more_one_group_per_loop() -> None:
    result = answer(ZONAL, 5, compare_autoscaler=True)
    auto = result.autoscaler
    assert auto is not None
    assert auto["nodes"] > result.nodes == 3
    assert auto["loops"] > 1
    assert auto["pendingAfter"] == []
    assert [a["loop"] for a in auto["add"]] == list(range(1, auto["loops"] + 1))


def test_required_anti_affinity_needs_a_node_per_pod() -> None:
    case = Case(
        [node("a-1", "a"), node("b-1", "b"), deployment("api", 5, anti=HOSTNAME)],
        [template("m-a", "a", cost=2), template("m-b", "b")],
    )
    result = check_against_brute_force(case)
    assert [(a.template, a.count) for a in result.additions] == [("m-b", 3)]


def test_skewed_existing_pods() -> None:
    """Zone a holds three web pods already (and room for one more); the new ones must go
    elsewhere until b and c catch up."""
    case = Case(
        [
            node("a-1", "a", cpu="4"),
            node("b-1", "b", cpu="1"),
            pod("old-1", "a-1", "web"),
            pod("old-2", "a-1", "web"),
            pod("old-3", "a-1", "web"),
            deployment("web", 4, spreads=[spread(ZONE, app="web")]),
        ],
        [template("m-a", "a"), template("m-b", "b"), template("m-c", "c")],
    )
    case.objects[-1]["spec"]["selector"] = {"matchLabels": {"app": "web"}}
    result = check_against_brute_force(case)
    assert result.nodes >= 1


def test_min_domains_needs_the_missing_zone() -> None:
    """minDomains 3 with two zones: the minimum is 0, one pod per zone, until a node in zone c
    makes the third domain."""
    case = Case(
        [
            node("a-1", "a"),
            node("b-1", "b"),
            deployment("web", 4, spreads=[spread(ZONE, app="web", minDomains=3)]),
        ],
        [template("m-a", "a"), template("m-b", "b"), template("m-c", "c")],
    )
    result = check_against_brute_force(case)
    assert [(a.template, a.count) for a in result.additions] == [("m-c", 1)]


def test_zone_and_hostname_spread_beside_a_tainted_group() -> None:
    """The tainted group is cheaper but the pods do not tolerate it; with nodeTaintsPolicy
    Ignore (the default) its nodes would still count as hostname domains."""
    case = Case(
        [
            node("a-1", "a"),
            node("b-1", "b"),
            node("gpu-1", "a", taint="gpu"),
            deployment("web", 6, spreads=[spread(ZONE, app="web"), spread(HOSTNAME, app="web")]),
        ],
        [template("gpu-a", "a", cost=0.5, taint="gpu"), template("m-a", "a"), template("m-b", "b")],
    )
    result = check_against_brute_force(case)
    assert all(a.template != "gpu-a" for a in result.additions)


def test_fewest_nodes_then_the_cheapest() -> None:
    case = Case(
        [node("a-1", "a", cpu="1"), deployment("web", 3)],
        [template("big-a", "a", cost=3), template("small-a", "a", cost=1.5)],
    )
    result = check_against_brute_force(case)
    assert [(a.template, a.count, a.cost) for a in result.additions] == [("small-a", 1, 1.5)]


def test_the_models_optimum_that_does_not_replay_is_cut() -> None:
    """A random case where the final-state optimum needs a bind order kube-scheduler does not
    take: the answer is the next smallest that replays, and says so."""
    case = random_case(118)
    result = check_against_brute_force(case)
    assert result.replays == 2
    assert any("did not replay" in n for n in result.notes)


def test_nothing_pending_adds_nothing() -> None:
    case = Case([node("a-1", "a"), deployment("web", 2)], [template("m-a", "a")])
    result = answer(case)
    assert (result.nodes, result.proven, result.pending_before, result.pending_after) == (0, True, (), ())
    assert len(result.placements) == 2


def test_pods_no_addition_places_are_reported_pending() -> None:
    """Anti-affinity per zone and two zones offered: two of the five stay pending."""
    case = Case(
        [node("a-1", "a", cpu="1"), deployment("api", 5, anti=ZONE)],
        [template("m-a", "a"), template("m-b", "b")],
    )
    result = answer(case)
    assert [(a.template, a.count) for a in result.additions] == [("m-b", 1)]
    assert len(result.pending_after) == 3
    assert all(p.reason for p in result.pending_after)


def test_a_workload_no_template_hosts_is_named() -> None:
    case = Case(
        [node("a-1", "a", cpu="1"), deployment("web", 3, cpu="1")],
        [template("gpu-a", "a", taint="gpu"), template("tiny-b", "b", cpu="500m")],
    )
    with pytest.raises(
        ProvisionError, match=r"Deployment default/web: no node template can host its pods"
    ) as e:
        answer(case)
    assert "gpu-a: node(s) had untolerated taint" in str(e.value)
    assert "tiny-b: Insufficient cpu" in str(e.value)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (deployment("web", 1), "a node template must be a Node, not a Deployment"),
        (
            {**template("t", "a"), "metadata": {"name": "t", "labels": {}}},
            "has no topology.kubernetes.io/zone",
        ),
        (
            {
                **template("t", "a"),
                "metadata": {"name": "t", "labels": {ZONE: "a"}, "annotations": {"kubespread.io/cost": "-1"}},
            },
            "must be a number 0 or more",
        ),
    ],
)
def test_bad_templates(doc: dict[str, object], message: str) -> None:
    obj = Deployment.from_dict(doc) if doc["kind"] == "Deployment" else Node.from_dict(doc)
    with pytest.raises(ProvisionError, match=message):
        node_template(LoadedObject(obj, "t.yaml", 3))


def test_max_per_template_below_one_is_refused() -> None:
    with pytest.raises(ProvisionError, match="at least 1"):
        answer(ZONAL, 0)


def test_templates_from_the_cluster() -> None:
    case = Case(
        [
            node("a-1", "a", **{"node.kubernetes.io/instance-type": "m5"}),
            node(
                "a-2",
                "a",
                taint="node.kubernetes.io/unreachable",
                **{"node.kubernetes.io/instance-type": "m5"},
            ),
            node("b-1", "b", **{"node.kubernetes.io/instance-type": "c5"}),
        ],
        [],
    )
    baseline = settle(case.loaded())
    found = cluster_templates(baseline.cluster)
    assert [(t.name, t.zone) for t in found] == [("m5-a", "a"), ("c5-b", "b")]
    assert all(HOSTNAME not in t.node.metadata.labels for t in found)
    request = ProvisionRequest(ZONAL.loaded(), (), max_per_template=3, templates_from_cluster=True)
    assert provision(request).nodes == 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 125))
def test_random_small_instances_match_the_brute_force(seed: int) -> None:
    case = random_case(seed)
    best = brute_force(case, 3)
    try:
        result = answer(case)
    except ProvisionError:
        assert best is None  # nothing within the bounds, or no template hosts a workload
        return
    if best is None:
        assert result.pending_after
        return
    assert (result.nodes, result.cost) == best
    assert not result.pending_after
    assert judged(case, vector(case, result)) == 0
    assert relaxation_bound(case) <= best[0]


def relaxation_bound(case: Case) -> int:
    """The aggregated relaxation's bound on the case's model (what large models report as
    their gap): never above the true minimum."""
    from kubespread.plan import provision as plan

    baseline = settle(case.loaded())
    run = plan._run_pods(baseline)
    if not run:
        return 0
    profile = plan._profile(baseline, [baseline.cluster.pods[k] for k in run])
    problem = plan._problem(baseline, list(case.node_templates()), run, profile, 3)
    return lower_bound(plan._without_full_nodes(problem.model), time_limit=5)


def _policy_cases() -> dict[str, Case]:
    """Which nodes count as domains: node inclusion policies, a tainted zone, minDomains
    beside anti-affinity."""
    honor = {"nodeTaintsPolicy": "Honor"}
    cases = {
        "nodeTaintsPolicy Honor beside a tainted group": Case(
            [
                node("a-1", "a"),
                node("b-1", "b"),
                node("gpu-1", "a", taint="gpu"),
                deployment(
                    "web", 7, spreads=[spread(ZONE, app="web", **honor), spread(HOSTNAME, app="web", **honor)]
                ),
            ],
            [
                template("gpu-a", "a", cost=0.5, taint="gpu"),
                template("m-a", "a"),
                template("m-b", "b"),
                template("m-c", "c"),
            ],
        ),
        "a tainted node makes zone c a domain (Ignore)": Case(
            [
                node("a-1", "a"),
                node("b-1", "b"),
                node("gpu-c", "c", taint="gpu"),
                deployment("web", 6, spreads=[spread(ZONE, app="web")]),
            ],
            [template("m-a", "a"), template("m-b", "b"), template("m-c", "c")],
        ),
        "nodeAffinityPolicy Honor with a nodeSelector": Case(
            [
                node("a-1", "a", pool="x"),
                node("b-1", "b", pool="y"),
                deployment(
                    "web",
                    6,
                    spreads=[spread(ZONE, app="web", nodeAffinityPolicy="Honor")],
                    selector={"pool": "x"},
                ),
            ],
            [template("m-a", "a"), template("m-b", "b"), template("m-c", "c")],
        ),
        "anti-affinity beside minDomains": Case(
            [
                node("a-1", "a", cpu="4"),
                node("b-1", "b", cpu="4"),
                deployment("web", 4, anti=HOSTNAME),
                deployment("api", 5, spreads=[spread(ZONE, app="api", minDomains=3)]),
            ],
            [template("m-a", "a"), template("m-b", "b"), template("m-c", "c", cost=3)],
        ),
    }
    selector = cases["nodeAffinityPolicy Honor with a nodeSelector"]
    for t in (selector.templates[0], selector.templates[2]):
        t["metadata"]["labels"]["pool"] = "x"
    return cases


POLICY_CASES = _policy_cases()


@pytest.mark.parametrize("name", list(POLICY_CASES))
def test_which_nodes_count_as_domains(name: str) -> None:
    check_against_brute_force(POLICY_CASES[name])
