"""schedule_one, the FitError message and the configuration layer (defaulting, multiPoint
expansion, weights, validation), on profiles built from the simple plugins."""

from __future__ import annotations

import random

import numpy as np
import pytest

from builders import HOSTNAME, ZONE, cluster_of, make_node, make_pod
from kubespread.api.schedconfig import KubeSchedulerConfiguration, KubeSchedulerProfile
from kubespread.scheduler.config import DEFAULT_MULTI_POINT, ConfigError, build_profile, profiles_from_config
from kubespread.scheduler.framework import Code, CycleState, StateKey, StateNotFoundError, Status
from kubespread.scheduler.scheduler import Rejection, fit_error_message, schedule_one


def profile_with(*names: str, weights: dict[str, int] | None = None, args: dict | None = None):
    """A profile running only these plugins (plus PrioritySort), via multiPoint."""
    weights = weights or {}
    enabled = [
        {"name": n, **({"weight": weights[n]} if n in weights else {})} for n in ("PrioritySort", *names)
    ]
    prof = {
        "schedulerName": "test",
        "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": n, "args": a} for n, a in (args or {}).items()],
    }
    return build_profile(KubeSchedulerProfile.from_dict(prof))


NODES = [
    make_node("n1").zone("a"),
    make_node("n2").zone("a").taint("dedicated", "gpu"),
    make_node("n3").zone("b").unschedulable(),
    make_node("n4").zone("b"),
]


def test_first_failing_filter_in_profile_order_rejects_the_node() -> None:
    cluster = cluster_of(NODES)
    pod = make_pod("p").node_selector(**{ZONE: "a"}).obj()
    d = schedule_one(pod, cluster, profile_with("NodeUnschedulable", "TaintToleration", "NodeAffinity"))
    assert d.feasible == ["n1"]
    assert d.rejections["n2"] == Rejection(
        "Filter",
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration"),
    )
    # n3 is both unschedulable and in zone b: NodeUnschedulable runs first
    assert d.rejections["n3"].status.plugin == "NodeUnschedulable"
    assert d.rejections["n4"].status.plugin == "NodeAffinity"
    assert d.selected == "n1" and d.selection_reason == "onlyFeasibleNode" and not d.scores


def test_fit_error_counts_reasons_over_nodes_sorted_as_strings() -> None:
    cluster = cluster_of(NODES)
    pod = make_pod("p").node_selector(**{ZONE: "c"}).obj()
    d = schedule_one(pod, cluster, profile_with("NodeUnschedulable", "NodeAffinity"))
    assert not d.scheduled
    assert d.fit_error == (
        "0/4 nodes are available: 1 node(s) were unschedulable, "
        "3 node(s) didn't match Pod's node affinity/selector."
    )
    # Go sorts the "N reason" strings, so 10 sorts before 2
    rej = {f"n{i}": Rejection("Filter", Status(Code.UNSCHEDULABLE, ("b",))) for i in range(10)}
    rej |= {f"m{i}": Rejection("Filter", Status(Code.UNSCHEDULABLE, ("a",))) for i in range(2)}
    assert fit_error_message(12, rej, None) == "0/12 nodes are available: 10 b, 2 a."


def test_fit_error_counts_every_reason_of_every_node() -> None:
    """Nodes with several reasons, reasons shared between statuses, one reason twice in a
    status, shared and separate status objects: each reason counted once per node per time it
    is given."""
    rng = random.Random(7)
    pool = [("a",), ("b",), ("a", "c"), ("c", "c"), ("b", "a", "d"), ()]
    shared = [Status(Code.UNSCHEDULABLE, r) for r in pool]
    rej = {}
    expected: dict[str, int] = {}
    for i in range(300):
        reasons = rng.choice(pool)
        status = shared[pool.index(reasons)] if rng.random() < 0.5 else Status(Code.UNSCHEDULABLE, reasons)
        rej[f"n{i}"] = Rejection("Filter", status)
        for r in reasons:
            expected[r] = expected.get(r, 0) + 1
    parts = sorted(f"{n} {r}" for r, n in expected.items())
    assert fit_error_message(300, rej, None) == f"0/300 nodes are available: {', '.join(parts)}."


def test_highest_total_wins_and_ties_go_to_the_smallest_name() -> None:
    nodes = [make_node(n) for n in ("c", "a", "b")]
    cluster = cluster_of(nodes)
    prof = profile_with("NodeAffinity", weights={"NodeAffinity": 2})
    pref = {
        "weight": 5,
        "preference": {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": ["b", "c"]}]},
    }
    pod = make_pod("p").affinity("nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", pref).obj()
    d = schedule_one(pod, cluster, prof)
    assert d.scored == ["c", "a", "b"]
    assert list(d.totals) == [200, 0, 200]
    assert d.node_scores("b")["NodeAffinity"] == {"raw": 5, "normalized": 100, "weight": 2, "weighted": 200}
    assert d.selected == "b"
    picks = {schedule_one(pod, cluster, prof, rng=random.Random(s)).selected for s in range(20)}
    assert picks == {"b", "c"}


def test_score_plugin_skipped_at_prescore_is_reported_and_scores_nothing() -> None:
    cluster = cluster_of([make_node("a"), make_node("b")])
    d = schedule_one(make_pod("p").obj(), cluster, profile_with("NodeAffinity", "TaintToleration"))
    assert d.skipped_score_plugins == ["NodeAffinity"]
    assert set(d.scores) == {"TaintToleration"}
    assert list(d.totals) == [100, 100] and d.selected == "a"


def test_node_name_match_fields_narrow_the_nodes_at_prefilter() -> None:
    cluster = cluster_of([make_node("a"), make_node("b"), make_node("c")])
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
    pod = (
        make_pod("p")
        .affinity(
            "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [term]}
        )
        .obj()
    )
    d = schedule_one(pod, cluster, profile_with("NodeAffinity"))
    assert d.feasible == ["b"]
    assert d.rejections["a"].stage == "PreFilterResult"
    assert d.rejections["a"].status.reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    assert d.fit_error == ""


def test_conflicting_match_fields_reject_the_pod_at_prefilter() -> None:
    cluster = cluster_of([make_node("a"), make_node("b")])
    term = {
        "matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]},
            {"key": "metadata.name", "operator": "In", "values": ["b"]},
        ]
    }
    pod = (
        make_pod("p")
        .affinity(
            "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [term]}
        )
        .obj()
    )
    d = schedule_one(pod, cluster, profile_with("NodeAffinity"))
    assert not d.scheduled
    assert d.pre_filter_status is not None and d.pre_filter_status.plugin == "NodeAffinity"
    assert {r.stage for r in d.rejections.values()} == {"PreFilter"}
    assert d.fit_error == "0/2 nodes are available: pod affinity terms conflict."


# ---------------------------------------------------------------- configuration
def test_default_profile_order_and_weights() -> None:
    (prof,) = profiles_from_config(KubeSchedulerConfiguration()).values()
    assert prof.scheduler_name == "default-scheduler"
    assert prof.enabled("filter") == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert prof.enabled("score") == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ]
    assert dict(prof.weights) == {n: w for n, w in DEFAULT_MULTI_POINT if w is not None}
    assert prof.enabled("queueSort") == ["PrioritySort"]
    assert prof.enabled("preEnqueue") == ["SchedulingGates"]


def test_user_score_weight_overrides_and_disabling_removes_a_point() -> None:
    cfg = KubeSchedulerConfiguration.from_dict(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "s",
                    "plugins": {
                        "score": {
                            "enabled": [{"name": "PodTopologySpread", "weight": 7}],
                            "disabled": [{"name": "ImageLocality"}],
                        },
                        "filter": {"disabled": [{"name": "NodePorts"}]},
                    },
                }
            ],
        }
    )
    prof = profiles_from_config(cfg)["s"]
    assert prof.weight("PodTopologySpread") == 7
    assert "ImageLocality" not in prof.enabled("score")
    assert "NodePorts" not in prof.enabled("filter") and "NodePorts" in prof.enabled("preFilter")
    # the re-enabled plugin moves to the front of the score point (an override)
    assert prof.enabled("score")[0] == "PodTopologySpread"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {
                "PodTopologySpread": {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"a": "b"}},
                        }
                    ],
                }
            },
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: "
            "constraint must not define a selector, as they deduced for each pod",
        ),
        (
            {
                "PodTopologySpread": {
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                    ]
                }
            },
            'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": '
            "when .defaultConstraints are not empty",
        ),
        (
            {
                "PodTopologySpread": {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 0, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
                    ],
                }
            },
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: "
            "Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {"InterPodAffinity": {"hardPodAffinityWeight": 101}},
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: "
            "Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {
                "NodeResourcesFit": {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "requestedToCapacityRatio": {
                            "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 11}]
                        },
                    }
                }
            },
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: "
            "Invalid value: 40: values must be sorted in increasing order",
        ),
    ],
)
def test_invalid_plugin_args_are_refused_with_their_field_path(args: dict, message: str) -> None:
    prof = {"pluginConfig": [{"name": n, "args": a} for n, a in args.items()]}
    with pytest.raises(ConfigError) as e:
        build_profile(KubeSchedulerProfile.from_dict(prof))
    assert message in [str(x) for x in e.value.errors]


def test_unknown_plugin_is_refused() -> None:
    with pytest.raises(ConfigError, match="Nope"):
        build_profile(
            KubeSchedulerProfile.from_dict({"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}})
        )


def test_filter_result_vectors_align_with_the_node_ids() -> None:
    cluster = cluster_of(NODES)
    prof = profile_with("TaintToleration")
    d = schedule_one(make_pod("p").obj(), cluster, prof)
    assert d.feasible == ["n1", "n3", "n4"] and isinstance(d.totals, np.ndarray)


def test_ties_go_to_the_heap_top_the_smallest_name_or_a_seeded_choice_among_the_tied() -> None:
    """Node ids follow insertion order, not names: the every-node cycle still goes by name;
    kube's goes to the first node found (the heap's top over the found order)."""
    from kubespread.scheduler import Scheduler

    names = ["n5", "n10", "n2", "n1", "n3"]
    cluster = cluster_of([make_node(n) for n in names] + [make_node("n0").taint("k", "v", "NoSchedule")])
    pod = make_pod("p").obj()
    assert Scheduler(every_node=True).schedule(pod, cluster).selected == "n1"
    kube = Scheduler()
    decision = kube.schedule(pod, cluster)
    assert decision.selected == "n5" and decision.tie_break == "heap" and len(decision.tied_ids) == 5
    # the start index moved past the 6 nodes processed (5 found, n0 rejected): back to n5
    assert kube.order is not None and kube.order.next_start == 0
    tied = sorted(names)
    for seed in range(6):
        want_rng = random.Random(seed)
        sched = Scheduler(seed=seed)
        picks = [sched.schedule(pod, cluster).selected for _ in range(5)]
        assert picks == [want_rng.choice(tied) for _ in range(5)]
    # a node that wins on score is chosen whatever its name, seeded or not
    for n in ("n1", "n10", "n2", "n3"):
        cluster.add(make_pod(f"x{n}").req(cpu="1").node(n).obj())
    assert Scheduler(every_node=True).schedule(pod, cluster).selected == "n5"
    assert {Scheduler(seed=s).schedule(pod, cluster).selected for s in range(6)} == {"n5"}


def test_cycle_state_reads_back_what_was_written_under_a_typed_key() -> None:
    state = CycleState(cluster_of(NODES))
    key: StateKey[list[str]] = StateKey("PreScoreTest", list)
    with pytest.raises(StateNotFoundError, match="'PreScoreTest' not found in the cycle state"):
        state.read(key)
    with pytest.raises(KeyError):  # StateNotFoundError is a KeyError
        state.read(key)
    state.write(key, ["a"])
    assert state.read(key) == ["a"]
    # another key of the same name but another type: the value is checked, not trusted
    with pytest.raises(TypeError, match="holds list, not int"):
        state.read(StateKey("PreScoreTest", int))
