"""PostFilter: DynamicResources and DefaultPreemption finish kube-scheduler's FitError message
(``... no new claims to deallocate, preemption: 0/N nodes are available: ...``), or leave it
without that part when preemption succeeds (the pod is nominated; see test_preemption.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from builders import NodeBuilder, PodBuilder, cluster_of, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.config import default_profile, profiles_from_config
from kubespread.scheduler.framework import (
    Code,
    CycleState,
    NodeStatuses,
    PostFilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    Status,
)
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.registry import plugin_class
from kubespread.scheduler.scheduler import Decision, schedule_one

NO_CLAIMS = "no new claims to deallocate"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
TAINT = "node(s) had untolerated taint(s)"
CORDONED = "node(s) were unschedulable"
CPU = "Insufficient cpu"


def full(name: str) -> NodeBuilder:
    """A node with one cpu, all of it taken by the pod ``used-<name>`` (see ``users``)."""
    return make_node(name).capacity(cpu="1")


def users(*nodes: str, priority: int | None = None) -> list[PodBuilder]:
    out = []
    for n in nodes:
        p = make_pod(f"used-{n}").req(cpu="1").node(n)
        if priority is not None:
            p.set("spec.priority", priority)
        out.append(p)
    return out


def incoming(priority: int | None = None, **spec: Any) -> Pod:
    p = make_pod("p").req(cpu="1")
    if priority is not None:
        p.set("spec.priority", priority)
    for k, v in spec.items():
        p.set(f"spec.{k}", v)
    return p.obj()


def decide(cluster: ClusterState, pod: Pod, profile: Profile | None = None) -> Decision:
    d = schedule_one(pod, cluster, profile or default_profile())
    assert not d.scheduled
    return d


def test_the_default_profile_runs_dynamic_resources_then_default_preemption() -> None:
    assert default_profile().enabled("postFilter") == ["DynamicResources", "DefaultPreemption"]


def test_no_victims_anywhere_gives_kube_schedulers_full_message() -> None:
    cluster = cluster_of([full("n1"), full("n2"), full("n3")], users("n1", "n2", "n3"))
    d = decide(cluster, incoming())
    filters = f"0/3 nodes are available: 3 {CPU}."
    assert d.fit_error_without_post_filter == filters
    assert d.fit_error == f"{filters} {NO_CLAIMS}, preemption: 0/3 nodes are available: 3 {NO_VICTIMS}."
    assert d.post_filter_status == Status(
        Code.UNSCHEDULABLE,
        (NO_CLAIMS, f"preemption: 0/3 nodes are available: 3 {NO_VICTIMS}."),
        "DynamicResources",
    )
    out = d.to_dict()
    assert out["fitError"] == d.fit_error and out["fitErrorWithoutPostFilter"] == filters
    assert out["postFilter"] == {
        "status": {
            "code": "Unschedulable",
            "plugin": "DynamicResources",
            "reasons": list(d.post_filter_status.reasons),
        }
    }


def test_pods_of_equal_or_higher_priority_are_no_victims() -> None:
    cluster = cluster_of([full("n1"), full("n2")], users("n1", priority=100) + users("n2", priority=50))
    d = decide(cluster, incoming(priority=50))
    assert d.fit_error.endswith(f"preemption: 0/2 nodes are available: 2 {NO_VICTIMS}.")


def test_preemption_policy_never_is_not_eligible_even_with_victims() -> None:
    cluster = cluster_of([full("n1")], users("n1", priority=-5))
    d = decide(cluster, incoming(priority=10, preemptionPolicy="Never"))
    assert d.fit_error == (
        f"0/1 nodes are available: 1 {CPU}. {NO_CLAIMS}, "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


@pytest.mark.parametrize(
    ("n_full", "n_tainted", "filters", "preemption"),
    [
        # digits first: the counts decide the order of the two reasons, not the reasons
        (2, 1, f"1 {TAINT}, 2 {CPU}", f"1 {NOT_HELPFUL}, 2 {NO_VICTIMS}"),
        (1, 4, f"1 {CPU}, 4 {TAINT}", f"1 {NO_VICTIMS}, 4 {NOT_HELPFUL}"),
        # sorted as strings (Go's sort.Strings): "10 ..." comes before "2 ..."
        (2, 10, f"10 {TAINT}, 2 {CPU}", f"10 {NOT_HELPFUL}, 2 {NO_VICTIMS}"),
        (10, 2, f"10 {CPU}, 2 {TAINT}", f"10 {NO_VICTIMS}, 2 {NOT_HELPFUL}"),
    ],
)
def test_unschedulable_and_unresolvable_nodes_are_not_worth_preempting_on(
    n_full: int, n_tainted: int, filters: str, preemption: str
) -> None:
    fulls = [f"f{i}" for i in range(n_full)]
    # a lower-priority pod on a node preemption cannot help with changes nothing
    tainted = [make_node(f"t{i}").taint("dedicated", "gpu") for i in range(n_tainted)]
    low = [make_pod("low").node("t0").set("spec.priority", -1)]
    cluster = cluster_of([full(n) for n in fulls] + tainted, users(*fulls) + low)
    d = decide(cluster, incoming())
    n = n_full + n_tainted
    assert d.fit_error == (
        f"0/{n} nodes are available: {filters}. "
        f"{NO_CLAIMS}, preemption: 0/{n} nodes are available: {preemption}."
    )


def test_cordoned_nodes_only_mean_preemption_is_not_helpful() -> None:
    cluster = cluster_of([make_node("n1").unschedulable(), make_node("n2").unschedulable()])
    d = decide(cluster, incoming())
    assert d.fit_error == (
        f"0/2 nodes are available: 2 {CORDONED}. {NO_CLAIMS}, "
        f"preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."
    )


def test_a_lower_priority_pod_on_a_potential_node_is_preempted() -> None:
    """The dry run finds the victim; DefaultPreemption succeeds, so the message has no
    PostFilter part (its status message is empty) and the pod is nominated."""
    cluster = cluster_of(
        [full("n1"), full("n2"), make_node("n3").taint("dedicated", "gpu")],
        users("n1") + users("n2", priority=-1),
    )
    d = decide(cluster, incoming())
    assert d.post_filter_status == Status(Code.SUCCESS, (), "DefaultPreemption")
    assert d.fit_error == d.fit_error_without_post_filter == f"0/3 nodes are available: 1 {TAINT}, 2 {CPU}."
    assert d.to_dict()["preemption"] == {
        "nominatedNode": "n2",
        "victims": ["default/used-n2"],
        "pdbViolations": 0,
    }
    # the same with the incoming pod's priority raised above everyone's
    cluster = cluster_of([full("n1")], users("n1"))
    d = decide(cluster, incoming(priority=1))
    assert d.fit_error == f"0/1 nodes are available: 1 {CPU}."


# ---------------------------------------------------------------- PreFilter rejections
def test_an_unresolvable_prefilter_rejection_ends_with_dynamic_resources_not_found() -> None:
    """NodeAffinity's conflict stops the PreFilter loop before DynamicResources' PreFilter, so
    its PostFilter finds no state: an Error ("not found") that ends the PostFilter loop."""
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
    d = decide(cluster, pod)
    assert d.fit_error_without_post_filter == "0/2 nodes are available: pod affinity terms conflict."
    assert d.fit_error == "0/2 nodes are available: pod affinity terms conflict. not found"
    assert d.post_filter_status == Status(Code.ERROR, ("not found",), "DynamicResources")


class _Refuse(PreFilterPlugin):
    """Rejects every pod at PreFilter as Unschedulable: preemption might still help."""

    name = "Refuse"

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return None, Status.unschedulable("refused by the test")


def _profile(
    pre_filter: tuple[Any, ...], post_filter: tuple[Any, ...], filter: tuple[Any, ...] = ()
) -> Profile:
    return Profile(scheduler_name="t", pre_filter=pre_filter, filter=filter, post_filter=post_filter)


def test_an_unschedulable_prefilter_rejection_makes_every_node_a_potential_one() -> None:
    dra, dp = plugin_class("DynamicResources")(), plugin_class("DefaultPreemption")()
    prof = _profile((_Refuse(), dra), (dra, dp))
    cluster = cluster_of([make_node("a"), make_node("b")], [make_pod("x").node("a")])
    d = schedule_one(incoming(), cluster, prof)
    assert d.pre_filter_status == Status(Code.UNSCHEDULABLE, ("refused by the test",), "Refuse")
    # Unschedulable lets the later PreFilter plugins run: DynamicResources has its state
    assert d.fit_error == (
        f"0/2 nodes are available: refused by the test. {NO_CLAIMS}, "
        f"preemption: 0/2 nodes are available: 2 {NO_VICTIMS}."
    )
    # a lower-priority pod on "a": the dry run runs the filters only (not PreFilter), which
    # pass with it back, so no victim is needed: kube-scheduler's "expected at least one
    # victim" error
    cluster = cluster_of([make_node("a"), make_node("b")], [make_pod("x").node("a").set("spec.priority", -1)])
    d = schedule_one(incoming(), cluster, prof)
    assert d.post_filter_status == Status(
        Code.ERROR, ('preemption: expected at least one victim pod on node "a"',), "DefaultPreemption"
    )
    assert d.preemption is not None and d.preemption.nominated_node is None


def test_nodes_a_prefilter_result_leaves_out_are_not_worth_preempting_on() -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    pod = (
        make_pod("p")
        .req(cpu="1")
        .affinity(
            "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [term]}
        )
        .obj()
    )
    cluster = cluster_of([full("n1"), make_node("n2"), make_node("n3")], users("n1"))
    d = decide(cluster, pod)
    assert d.fit_error == (
        f"0/3 nodes are available: 1 {CPU}, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        f"{NO_CLAIMS}, preemption: 0/3 nodes are available: 1 {NO_VICTIMS}, 2 {NOT_HELPFUL}."
    )


# ---------------------------------------------------------------- configuration
def _configured(post_filter: dict[str, Any]) -> Profile:
    cfg = KubeSchedulerConfiguration.from_dict(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "s", "plugins": {"postFilter": post_filter}}],
        }
    )
    return profiles_from_config(cfg)["s"]


@pytest.mark.parametrize(
    ("disabled", "suffix"),
    [
        (["DefaultPreemption"], f" {NO_CLAIMS}"),
        (["DynamicResources"], f" preemption: 0/1 nodes are available: 1 {NO_VICTIMS}."),
        (["*"], ""),
    ],
)
def test_disabling_post_filter_plugins_in_a_configuration_removes_their_part(
    disabled: list[str], suffix: str
) -> None:
    prof = _configured({"disabled": [{"name": n} for n in disabled]})
    assert not set(disabled) & set(prof.enabled("postFilter"))
    cluster = cluster_of([full("n1")], users("n1"))
    d = decide(cluster, incoming(), prof)
    assert d.fit_error == f"0/1 nodes are available: 1 {CPU}.{suffix}"
    if not suffix:
        assert d.post_filter_status is None


def test_a_plugin_without_post_filter_cannot_be_enabled_there() -> None:
    from kubespread.scheduler.config import ConfigError

    with pytest.raises(ConfigError, match="plugin does not extend postFilter"):
        _configured({"enabled": [{"name": "NodeName"}]})


# ---------------------------------------------------------------- what kubespread cannot say
def test_a_pod_with_resource_claims_leaves_the_post_filter_part_out() -> None:
    cluster = cluster_of([full("n1")], users("n1"))
    d = decide(cluster, incoming(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}]))
    assert d.post_filter_status is None and d.fit_error == f"0/1 nodes are available: 1 {CPU}."


def _preempted(name: str, node: str, *, by_scheduler: bool = True) -> PodBuilder:
    cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    if not by_scheduler:
        cond["reason"] = "DeletionByTaintManager"
    return (
        make_pod(name)
        .req(cpu="1")
        .node(node)
        .set("spec.priority", 0)
        .terminating()
        .set("status.conditions", [cond])
    )


def test_a_pod_still_preempting_on_its_nominated_node_is_not_eligible() -> None:
    cluster = cluster_of([full("n1"), full("n2")], [_preempted("victim", "n1"), *users("n2")])
    pod = make_pod("p").req(cpu="1").set("spec.priority", 10).set("status.nominatedNodeName", "n1").obj()
    d = decide(cluster, pod)
    assert d.fit_error == (
        f"0/2 nodes are available: 2 {CPU}. {NO_CLAIMS}, "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    # terminating for another reason: the pod is a victim like any other
    cluster = cluster_of(
        [full("n1"), full("n2")], [_preempted("victim", "n1", by_scheduler=False), *users("n2")]
    )
    d = decide(cluster, pod)
    assert d.post_filter_status is not None and d.post_filter_status.is_success
    assert d.preemption is not None
    assert (d.preemption.nominated_node, [v.key for v in d.preemption.victims]) == ("n1", ["default/victim"])


def test_an_empty_cluster_runs_no_post_filter() -> None:
    d = decide(ClusterState(), incoming())
    assert d.post_filter_status is None and d.fit_error == "0/0 nodes are available:"


# ---------------------------------------------------------------- the PostFilter loop
class _Says(PostFilterPlugin):
    def __init__(self, name: str, status: Status | None) -> None:
        super().__init__()
        self.name = name  # type: ignore[misc]
        self.status = status
        self.calls = 0

    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
        self.calls += 1
        return self.status


@pytest.mark.parametrize(
    ("first", "want", "second_runs"),
    [
        (Status.unschedulable("a", "b"), Status(Code.UNSCHEDULABLE, ("a", "b", "c"), "First"), True),
        (Status.unresolvable("stop"), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("stop",), "First"), False),
        (Status.error("boom"), Status(Code.ERROR, ("boom",), "First"), False),
        (None, None, False),
    ],
)
def test_post_filter_plugins_run_in_order_until_one_decides(
    first: Status | None, want: Status | None, second_runs: bool
) -> None:
    a, b = _Says("First", first), _Says("Second", Status.unschedulable("c"))
    prof = _profile((), (a, b), (plugin_class("NodeUnschedulable")(),))
    d = schedule_one(make_pod("p").obj(), cluster_of([make_node("n").unschedulable()]), prof)
    assert d.post_filter_status == want
    assert b.calls == int(second_runs)
    base = f"0/1 nodes are available: 1 {CORDONED}."
    assert d.fit_error == (base if want is None else f"{base} {want.message}")


def test_post_filter_sees_every_node_with_its_rejection_status() -> None:
    seen: list[NodeStatuses] = []

    class Spy(PostFilterPlugin):
        name = "Spy"

        def post_filter(self, state: CycleState, pod: Pod, statuses: NodeStatuses) -> Status | None:
            seen.append(statuses)
            return None

    cluster = cluster_of([full("n1"), make_node("n2").taint("k", "v")], users("n1"))
    prof = dataclasses.replace(default_profile(), post_filter=(Spy(),))
    d = schedule_one(incoming(), cluster, prof)
    assert not d.scheduled and len(seen) == 1
    assert seen[0].nodes_with_code(Code.UNSCHEDULABLE).tolist() == [0]
    assert seen[0].nodes_with_code(Code.UNSCHEDULABLE_AND_UNRESOLVABLE).tolist() == [1]
    st = seen[0].status_at(1)
    assert st is not None and st.plugin == "TaintToleration"
