"""DefaultPreemption end to end, through the conformance interface (``evaluate``): cases
translated from kube-scheduler's own preemption unit tests (default_preemption_test.go:
TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers;
preemption_test.go), each turned into a whole cluster so that the filters of the default
profile reject the nodes for the reasons those tests stub.

The resource sizes and priorities are the Go tests' own: small 100m/100, medium 200m/200,
large 300m/300, very large 500m/500; negative -100, low 0, mid 100, high 1000, very high
10000. Their nodes have 32 pods of room unless a test gives one pod.

``preemption_diff`` is compare.py's rule for the new field, as the README states it: same
nominated node, the same victims (as a set), the same number of PDB violations.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from builders import make_node, make_pod
from kubespread.harness.evaluate import evaluate
from kubespread.scheduler.plugins.defaultpreemption.preemption import (
    PICK_FIRST,
    PICK_ONLY,
    PICK_REASONS,
    Candidate,
    filter_pods_with_pdb_violation,
    num_candidates,
    pick_one_node,
    pick_one_node_why,
)
from shared_corpus import SHARED, load_script

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = ("100m", "100"), ("200m", "200"), ("300m", "300"), ("500m", "500")
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CLAIMS = "no new claims to deallocate"
EPOCH = "1970-01-01T00:00:"


def node(name: str, res: tuple[str, str] = VERY_LARGE, pods: str = "32", **labels: str) -> dict[str, Any]:
    n = make_node(name).capacity(cpu=res[0], memory=res[1], pods=pods)
    for k, v in labels.items():
        n.label(k, v)
    return n.dict()


def pod(
    name: str,
    priority: int | None = None,
    res: tuple[str, str] | None = None,
    on: str | None = None,
    start: int | None = None,
    namespace: str = "default",
    **labels: str,
) -> dict[str, Any]:
    p = make_pod(name, namespace)
    if res is not None:
        p.req(cpu=res[0], memory=res[1])
    if priority is not None:
        p.set("spec.priority", priority)
    if on is not None:
        p.node(on)
    if start is not None:
        p.set("status.startTime", f"{EPOCH}{start:02d}Z")
    for k, v in labels.items():
        p.label(k, v)
    return p.dict()


def pdb(
    name: str,
    match: dict[str, str] | None,
    allowed: int = 0,
    disrupted: tuple[str, ...] = (),
    namespace: str = "default",
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if match is not None:
        spec["selector"] = {"matchLabels": match}
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = dict.fromkeys(disrupted, "2026-01-01T00:00:00Z")
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def run(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    incoming: list[dict[str, Any]],
    pdbs: list[dict[str, Any]] | None = None,
    *,
    mode: str = "evaluate",
    config: dict[str, Any] | None = None,
    seed: int | None = None,
) -> list[dict[str, Any]]:
    doc: dict[str, Any] = {"mode": mode, "nodes": nodes, "pods": pods, "incoming": incoming}
    if pdbs:
        doc["podDisruptionBudgets"] = pdbs
    if config:
        doc["config"] = config
    results: list[dict[str, Any]] = evaluate(copy.deepcopy(doc), seed=seed)["results"]
    return results


def preemption_diff(expected: dict[str, Any], actual: dict[str, Any] | None) -> list[str]:
    """The rule compare.py gets for ``preemption`` (README: nominated node, victims as a set,
    PDB violations)."""
    if actual is None:
        return ["preemption: missing"]
    out = []
    for key, norm in (("nominatedNode", None), ("victims", sorted), ("pdbViolations", None)):
        want, got = expected.get(key), actual.get(key)
        if norm is not None:
            want, got = norm(want or []), norm(got or [])
        if want != got:
            out.append(f"{key}: expected {want}, got {got}")
    return out


def expect(
    result: dict[str, Any], nominated: str | None, victims: Sequence[str] = (), violations: int = 0
) -> None:
    assert not result["scheduled"], result.get("selectedNode")
    want = {
        "nominatedNode": nominated,
        "victims": [f"default/{v}" for v in victims],
        "pdbViolations": violations,
    }
    assert preemption_diff(want, result.get("preemption")) == []


def fit_error_tail(result: dict[str, Any]) -> str:
    """The PostFilter part of the fitError (after "preemption: ")."""
    msg: str = result["fitError"]
    return msg.split("preemption: ", 1)[1] if "preemption: " in msg else ""


# ---------------------------------------------------------------- TestPostFilter
ONE_POD = ("4", "8Gi")


def test_pod_with_higher_priority_can_be_made_schedulable() -> None:
    [r] = run([node("node1", ONE_POD, pods="1")], [pod("p1", on="node1")], [pod("p", HIGH)])
    expect(r, "node1", ["p1"])
    # success: the PostFilter adds nothing to the message
    assert r["fitError"] == "0/1 nodes are available: 1 Too many pods."
    assert r["postFilter"]["status"] == {"code": "Success", "plugin": "DefaultPreemption"}


def test_pod_with_tied_priority_is_still_unschedulable() -> None:
    [r] = run([node("node1", ONE_POD, pods="1")], [pod("p1", on="node1")], [pod("p")])
    expect(r, None)
    assert fit_error_tail(r) == f"0/1 nodes are available: 1 {NO_VICTIMS}."


def test_preemption_respects_unresolvable_statuses() -> None:
    # node1 out for good (node selector): not worth preempting on
    n = node("node1", ONE_POD, pods="1")
    p = pod("p", HIGH)
    p["spec"]["nodeSelector"] = {"disk": "ssd"}
    [r] = run([n], [pod("p1", on="node1")], [p])
    expect(r, None)
    assert fit_error_tail(r) == f"0/1 nodes are available: 1 {NOT_HELPFUL}."


def test_pod_can_be_made_schedulable_on_one_node() -> None:
    nodes = [node("node1", ONE_POD, pods="1"), node("node2", ONE_POD, pods="1")]
    [r] = run(nodes, [pod("p1", HIGH, on="node1"), pod("p2", LOW, on="node2")], [pod("p", MID)])
    expect(r, "node2", ["p2"])


def test_pod_can_be_made_schedulable_on_the_min_highest_priority_node() -> None:
    nodes = [node("node1", ONE_POD, pods="1"), node("node2", ONE_POD, pods="1")]
    pods = [
        pod("p1", HIGH, on="node1", pdb="non-violating"),
        pod("p2", LOW, on="node1", pdb="violating"),
        pod("p3", MID, on="node2", pdb="violating"),
    ]
    pdbs = [
        pdb("violating-pdb", {"pdb": "violating"}, 0),
        pdb("non-violating-pdb", {"pdb": "non-violating"}, 2**31 - 1),
    ]
    [r] = run(nodes, pods, [pod("p", VERY_HIGH)], pdbs)
    expect(r, "node2", ["p3"], 1)


#: the Go tests stub these nodes' status as Unschedulable; a request above a node's whole
#: allocatable is UnschedulableAndUnresolvable in v1.35, so here the node is large enough in
#: itself and a pod of the preemptor's priority ("keep-N") holds the room that is missing
NODE_RES = ("400m", "1000")


def keep(n: str) -> dict[str, Any]:
    return pod(f"keep-{n}", HIGH, MEDIUM, n)


def test_no_candidate_when_not_enough_resource_after_removing_lower_priority_pods() -> None:
    nodes = [node("node1", NODE_RES), node("node2", NODE_RES)]
    pods = [pod("p1", on="node1"), pod("p2", on="node2"), keep("node1"), keep("node2")]
    [r] = run(nodes, pods, [pod("p", HIGH, LARGE)])
    expect(r, None)
    assert r["fitError"] == (
        f"0/2 nodes are available: 2 Insufficient cpu. {NO_CLAIMS}, "
        "preemption: 0/2 nodes are available: 2 Insufficient cpu."
    )


def test_no_candidate_with_mixed_reasons() -> None:
    nodes = [node("node1", ONE_POD, pods="1"), node("node2", NODE_RES), node("node3", ONE_POD, pods="1")]
    pods = [pod("p1", HIGH, on="node1"), pod("p2", on="node2"), keep("node2"), pod("p3", HIGH, on="node3")]
    [r] = run(nodes, pods, [pod("p", HIGH, LARGE)])
    expect(r, None)
    assert fit_error_tail(r) == f"0/3 nodes are available: 1 Insufficient cpu, 2 {NO_VICTIMS}."


def test_no_candidate_with_unresolvable_nodes_and_nodes_without_enough_cpu() -> None:
    nodes = [node(f"node{i}", NODE_RES, **({"pool": "a"} if i <= 2 else {})) for i in range(1, 5)]
    p = pod("p", HIGH, LARGE)
    p["spec"]["nodeSelector"] = {"pool": "a"}
    pods = [pod("p1", on="node1"), pod("p2", on="node2"), keep("node1"), keep("node2")]
    [r] = run(nodes, pods, [p])
    expect(r, None)
    assert fit_error_tail(r) == f"0/4 nodes are available: 2 Insufficient cpu, 2 {NOT_HELPFUL}."


# ---------------------------------------------------------------- eligibility
def test_preemption_policy_never_is_not_eligible() -> None:
    p = pod("p", HIGH)
    p["spec"]["preemptionPolicy"] = "Never"
    [r] = run([node("node1", ONE_POD, pods="1")], [pod("p1", on="node1")], [p])
    expect(r, None)
    assert fit_error_tail(r) == "not eligible due to preemptionPolicy=Never."


def test_a_terminating_victim_on_the_nominated_node_blocks_a_second_preemption() -> None:
    victim = pod("p1", LOW, on="node1")
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    victim["status"] = {
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    }
    p = pod("p", HIGH)
    p["status"] = {"nominatedNodeName": "node1"}
    [r] = run([node("node1", ONE_POD, pods="1")], [victim], [p])
    expect(r, None)
    assert fit_error_tail(r) == "not eligible due to a terminating pod on the nominated node."


# ---------------------------------------------------------------- TestDryRunPreemption
def two_nodes() -> list[dict[str, Any]]:
    return [node("node1"), node("node2")]


def test_a_pod_that_fits_on_both_nodes_when_lower_priority_pods_are_preempted() -> None:
    pods = [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, LARGE)])
    expect(r, "node1", ["p1"])  # a tie on every criterion: the first candidate


def test_higher_priority_pods_running_means_no_preemption() -> None:
    pods = [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")]
    [r] = run(two_nodes(), pods, [pod("p", LOW, LARGE)])
    expect(r, None)
    assert fit_error_tail(r) == f"0/2 nodes are available: 2 {NO_VICTIMS}."


def test_medium_priority_pod_is_preempted_but_the_small_lower_priority_one_stays() -> None:
    pods = [
        pod("p1.1", LOW, SMALL, "node1"),
        pod("p1.2", MID, LARGE, "node1"),
        pod("p2", MID, LARGE, "node2"),
    ]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, LARGE)])
    expect(r, "node1", ["p1.2"])


def test_mixed_priority_pods_are_preempted() -> None:
    pods = [
        pod("p1.1", MID, SMALL, "node1"),
        pod("p1.2", LOW, SMALL, "node1"),
        pod("p1.3", MID, MEDIUM, "node1"),
        pod("p1.4", HIGH, SMALL, "node1"),
        pod("p2", HIGH, LARGE, "node2"),
    ]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, LARGE)])
    expect(r, "node1", ["p1.2", "p1.3"])
    # victims are listed most important first
    assert r["preemption"]["victims"] == ["default/p1.3", "default/p1.2"]


def test_mixed_priority_pods_the_later_start_is_preempted_among_equals() -> None:
    pods = [
        pod("p1.1", LOW, SMALL, "node1", start=5),
        pod("p1.2", LOW, SMALL, "node1", start=4),
        pod("p1.3", MID, MEDIUM, "node1", start=3),
        pod("p1.4", HIGH, SMALL, "node1", start=2),
        pod("p2", HIGH, LARGE, "node2", start=1),
    ]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, LARGE)])
    expect(r, "node1", ["p1.1", "p1.3"])


def test_pod_with_anti_affinity_is_preempted() -> None:
    hostname = "kubernetes.io/hostname"
    anti = make_pod("p1.1").label("foo", "").req(cpu=SMALL[0], memory=SMALL[1]).node("node1")
    anti.set("spec.priority", LOW)
    anti.affinity(
        "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        {
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            "topologyKey": hostname,
        },
    )
    pods = [
        anti.dict(),
        pod("p1.2", MID, SMALL, "node1"),
        pod("p1.3", HIGH, SMALL, "node1"),
        pod("p2", HIGH, VERY_LARGE, "node2"),  # node2 full of a pod that may not be preempted
    ]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, SMALL, foo="")])
    expect(r, "node1", ["p1.1"])


def test_preemption_resolves_a_pod_topology_spread_failure() -> None:
    nodes = [
        node("node-a", hostname="node-a", zone="zone1"),
        node("node-b", hostname="node-b", zone="zone1"),
        node("node-x", hostname="node-x", zone="zone2"),
    ]
    pods = [
        pod("pod-a1", MID, on="node-a", foo=""),
        pod("pod-a2", LOW, on="node-a", foo=""),
        pod("pod-b1", LOW, on="node-b", foo=""),
        pod("pod-x1", HIGH, on="node-x", foo=""),
        pod("pod-x2", HIGH, on="node-x", foo=""),
    ]
    p = make_pod("p").label("foo", "").set("spec.priority", HIGH)
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    p.spread(1, "zone", selector=sel).spread(1, "hostname", selector=sel)
    [r] = run(nodes, pods, [p.dict()])
    expect(r, "node-a", ["pod-a2"])
    nodes_out = {n["name"]: n for n in r["nodes"]}
    assert nodes_out["node-x"]["filter"]["plugin"] == "PodTopologySpread"


def test_filters_that_still_fail_without_victims_keep_their_reasons() -> None:
    pods = [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")]
    nodes = [node("node1", VERY_LARGE).copy(), node("node2")]
    nodes[0]["spec"]["taints"] = [{"key": "k", "effect": "NoSchedule"}]  # unresolvable: not a candidate
    [r] = run(nodes, pods, [pod("p", HIGH, LARGE)])
    expect(r, "node2", ["p2"])


def test_preemption_with_violation_of_the_same_pdb() -> None:
    pods = [pod("p1.1", MID, MEDIUM, "node1", app="foo"), pod("p1.2", MID, MEDIUM, "node1", app="foo")]
    [r] = run([node("node1")], pods, [pod("p", HIGH, VERY_LARGE)], [pdb("pdb", {"app": "foo"}, 1)])
    expect(r, "node1", ["p1.1", "p1.2"], 1)


def test_a_disrupted_pod_that_is_not_a_victim_changes_nothing() -> None:
    pods = [pod("p1.1", MID, MEDIUM, "node1", app="foo"), pod("p1.2", MID, MEDIUM, "node1", app="foo")]
    budget = pdb("pdb", {"app": "foo"}, 1, disrupted=("p2",))
    [r] = run([node("node1")], pods, [pod("p", HIGH, VERY_LARGE)], [budget])
    expect(r, "node1", ["p1.1", "p1.2"], 1)


def test_a_victim_already_in_disrupted_pods_is_not_counted_again() -> None:
    pods = [pod("p1.1", MID, MEDIUM, "node1", app="foo"), pod("p1.2", MID, MEDIUM, "node1", app="foo")]
    budget = pdb("pdb", {"app": "foo"}, 1, disrupted=("p1.2",))
    [r] = run([node("node1")], pods, [pod("p", HIGH, VERY_LARGE)], [budget])
    expect(r, "node1", ["p1.1", "p1.2"], 0)


def test_a_disrupted_victim_is_non_violating_while_the_others_use_the_budget() -> None:
    pods = [pod(f"p1.{i}", MID, MEDIUM, "node1", app="foo") for i in (1, 2, 3)]
    budget = pdb("pdb", {"app": "foo"}, 1, disrupted=("p1.3",))
    [r] = run([node("node1", ("600m", "600"))], pods, [pod("p", HIGH, ("600m", "600"))], [budget])
    expect(r, "node1", ["p1.1", "p1.2", "p1.3"], 1)


FIVE = ["node1", "node2", "node3", "node4", "node5"]
FEW = {"defaultPreemption": {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}}


def test_candidates_limited_by_default_preemption_args() -> None:
    pods = [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)]
    [r] = run([node(n) for n in FIVE], pods, [pod("p", HIGH, LARGE)], config=FEW)
    expect(r, "node1", ["p1"])


def test_the_dry_run_looks_past_the_candidate_count_for_a_non_violating_node() -> None:
    pods = [
        pod("p1", MID, LARGE, "node1", app="foo"),
        pod("p2", MID, LARGE, "node2", app="foo"),
        pod("p3", MID, LARGE, "node3"),
        pod("p4", MID, LARGE, "node4"),
        pod("p5", MID, LARGE, "node5", app="foo"),
    ]
    config = {"defaultPreemption": {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}}
    [r] = run(
        [node(n) for n in FIVE], pods, [pod("p", HIGH, LARGE)], [pdb("pdb", {"app": "foo"}, 0)], config=config
    )
    expect(r, "node3", ["p3"], 0)


def test_a_seed_moves_the_dry_runs_offset() -> None:
    """Only the first candidates are tried (2 of 5 here): where they start decides the tie."""
    pods = [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)]
    chosen = set()
    for seed in range(12):
        [r] = run([node(n) for n in FIVE], pods, [pod("p", HIGH, LARGE)], config=FEW, seed=seed)
        chosen.add(r["preemption"]["nominatedNode"])
    assert len(chosen) > 1
    [r] = run([node(n) for n in FIVE], pods, [pod("p", HIGH, LARGE)], config=FEW, seed=3)
    [again] = run([node(n) for n in FIVE], pods, [pod("p", HIGH, LARGE)], config=FEW, seed=3)
    assert r["preemption"] == again["preemption"]


# ---------------------------------------------------------------- TestSelectBestCandidate
def three_nodes() -> list[dict[str, Any]]:
    return [node("node1"), node("node2"), node("node3")]


def test_node_with_min_highest_priority_pod_is_picked() -> None:
    pods = [
        pod("p1.1", MID, MEDIUM, "node1", start=0),
        pod("p1.2", MID, LARGE, "node1", start=0),
        pod("p2.1", MID, MEDIUM, "node2", start=0),
        pod("p2.2", LOW, MEDIUM, "node2", start=0),
        pod("p3.1", LOW, MEDIUM, "node3", start=0),
        pod("p3.2", LOW, MEDIUM, "node3", start=0),
    ]
    [r] = run(three_nodes(), pods, [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node3", ["p3.1", "p3.2"])


def test_when_highest_priorities_are_the_same_the_minimum_sum_is_picked() -> None:
    pods = [
        pod("p1.1", MID, MEDIUM, "node1", start=0),
        pod("p1.2", MID, LARGE, "node1", start=0),
        pod("p2.1", MID, LARGE, "node2", start=0),
        pod("p2.2", LOW, MEDIUM, "node2", start=0),
        pod("p3.1", MID, MEDIUM, "node3", start=0),
        pod("p3.2", MID, MEDIUM, "node3", start=0),
    ]
    [r] = run(three_nodes(), pods, [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node2", ["p2.1", "p2.2"])


def test_when_highest_priority_and_sum_are_the_same_the_fewest_pods_are_picked() -> None:
    pods = [
        pod("p1.1", MID, SMALL, "node1", start=0),
        pod("p1.2", MID, SMALL, "node1", start=0),
        pod("p1.3", MID, SMALL, "node1", start=0),
        pod("p2.1", MID, LARGE, "node2", start=0),
        pod("p2.2", MID, SMALL, "node2", start=0),
        pod("p3.1", MID, SMALL, "node3", start=0),
        pod("p3.2", MID, SMALL, "node3", start=0),
        pod("p3.3", MID, SMALL, "node3", start=0),
        pod("p3.4", MID, SMALL, "node3", start=0),
    ]
    # node3's five smalls need all to go; node1 and node2 tie on two priority criteria
    [r] = run(three_nodes(), pods, [pod("p", HIGH, VERY_LARGE)])
    assert r["preemption"]["nominatedNode"] in ("node1", "node2")


def test_negative_priorities_sum_with_the_offset() -> None:
    """Without the MaxInt32+1 offset, more pods of negative priority would look cheaper."""
    pods = [
        pod("p1.1", NEG, MEDIUM, "node1", start=0),
        pod("p1.2", NEG, LARGE, "node1", start=0),
        pod("p2.1", NEG, VERY_LARGE, "node2", start=0),
    ]
    [r] = run([node("node1"), node("node2")], pods, [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node2", ["p2.1"])


def test_the_latest_start_among_the_highest_priority_victims_is_picked() -> None:
    pods = [
        pod("p1.1", MID, LARGE, "node1", start=1),
        pod("p1.2", LOW, MEDIUM, "node1", start=5),
        pod("p2.1", MID, LARGE, "node2", start=3),
        pod("p2.2", LOW, MEDIUM, "node2", start=0),
        pod("p3.1", MID, LARGE, "node3", start=2),
        pod("p3.2", LOW, MEDIUM, "node3", start=9),
    ]
    [r] = run(three_nodes(), pods, [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node2", ["p2.1", "p2.2"])


def test_pdb_violations_come_first_in_the_choice() -> None:
    pods = [pod("p1", LOW, VERY_LARGE, "node1", app="x"), pod("p2", MID, VERY_LARGE, "node2")]
    [r] = run([node("node1"), node("node2")], pods, [pod("p", HIGH, VERY_LARGE)], [pdb("b", {"app": "x"})])
    expect(r, "node2", ["p2"])


# ---------------------------------------------------------------- sequence mode
def test_sequence_mode_deletes_the_victims_and_nominates_the_preemptor() -> None:
    nodes = [node("node1"), node("node2")]
    pods = [pod("p1", MID, VERY_LARGE, "node1"), pod("p2", HIGH, VERY_LARGE, "node2")]
    incoming = [pod("p", HIGH, VERY_LARGE), pod("q", LOW, SMALL), pod("r", VERY_HIGH, SMALL)]
    results = run(nodes, pods, incoming, mode="sequence")
    expect(results[0], "node1", ["p1"])
    # p1 is gone and p is not bound, but nominated: a pod of lower priority counts it there
    # (RunFilterPluginsWithNominatedPods), and finds nothing it may preempt
    q = results[1]
    expect(q, None)
    by_node = {n["name"]: n for n in q["nodes"]}
    assert by_node["node1"]["filter"]["reasons"] == ["Insufficient cpu", "Insufficient memory"]
    # a pod of higher priority does not count it: node1 is free for it
    assert results[2]["scheduled"] and results[2]["selectedNode"] == "node1"


def test_sequence_mode_preemptors_of_equal_priority_spread_over_nodes() -> None:
    """TestDryRunPreemption's "offset across multiple scheduling cycles", in sequence: each
    preemptor is nominated where it evicted, so the next one, of the same priority, finds
    that node taken and preempts on the next candidate."""
    pods = [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)]
    incoming = [pod(f"tp{i}", HIGH, LARGE) for i in range(1, 4)]
    results = run([node(n) for n in FIVE], pods, incoming, mode="sequence", config=FEW)
    for r, n in zip(results, ("node1", "node2", "node3"), strict=True):
        expect(r, n, [n.replace("node", "p")])
    # in evaluate mode each is judged against the initial cluster: all pick node1
    results = run([node(n) for n in FIVE], pods, incoming, config=FEW)
    assert [r["preemption"]["nominatedNode"] for r in results] == ["node1"] * 3


def test_evaluate_mode_keeps_the_victims() -> None:
    nodes = [node("node1")]
    pods = [pod("p1", MID, VERY_LARGE, "node1")]
    results = run(nodes, pods, [pod("p", HIGH, VERY_LARGE), pod("q", HIGH, VERY_LARGE)])
    expect(results[0], "node1", ["p1"])
    expect(results[1], "node1", ["p1"])


# ---------------------------------------------------------------- no priorities
def test_an_unschedulable_pod_without_priorities_has_an_empty_preemption() -> None:
    [r] = run([node("node1")], [pod("p1", res=VERY_LARGE, on="node1")], [pod("p", res=SMALL)])
    assert r["preemption"] == {"nominatedNode": None, "victims": [], "pdbViolations": 0}
    [ok] = run([node("node1")], [], [pod("p", res=SMALL)])
    assert "preemption" not in ok


# ---------------------------------------------------------------- pieces
def _obj(d: dict[str, Any]) -> Any:
    from kubespread.api.core import Pod
    from kubespread.api.policy import PodDisruptionBudget

    return (Pod if d["kind"] == "Pod" else PodDisruptionBudget).from_dict(d)


def test_filter_pods_with_pdb_violation() -> None:
    pods = [_obj(pod(f"a{i}", app="a")) for i in range(3)] + [_obj(pod("b", app="b")), _obj(pod("bare"))]
    other_ns = _obj(pod("a9", namespace="other", app="a"))
    budgets = [
        _obj(pdb("a", {"app": "a"}, 1)),
        _obj(pdb("empty", {})),  # an empty selector selects nothing here
        _obj(pdb("nil", None)),
    ]
    violating, fine = filter_pods_with_pdb_violation([*pods, other_ns], budgets)
    assert [p.metadata.name for p in violating] == ["a1", "a2"]
    assert [p.metadata.name for p in fine] == ["a0", "b", "bare", "a9"]


@pytest.mark.parametrize(
    ("nodes", "pct", "absolute", "want"),
    [
        (10, 10, 100, 10),
        (1000, 10, 100, 100),
        (5000, 10, 100, 500),
        (5, 40, 1, 2),
        (5, 40, 2, 2),
        (0, 10, 100, 0),
    ],
)
def test_num_candidates(nodes: int, pct: int, absolute: int, want: int) -> None:
    assert num_candidates(nodes, pct, absolute) == want


def test_pick_one_node_order_of_criteria() -> None:
    def cand(name: str, prios: list[int], violations: int = 0, starts: list[int] | None = None) -> Candidate:
        victims = tuple(
            _obj(pod(f"{name}-{i}", pr, start=None if starts is None else starts[i]))
            for i, pr in enumerate(prios)
        )
        return Candidate(name, victims, violations)

    assert pick_one_node([]) is None
    got = pick_one_node([cand("a", [5], 1), cand("b", [50])])
    assert got is not None and got.node == "b"
    got = pick_one_node([cand("a", [50, 1]), cand("b", [40, 40, 40])])
    assert got is not None and got.node == "b"
    got = pick_one_node([cand("a", [50, 10]), cand("b", [50, 5, 4])])
    assert got is not None and got.node == "a"  # with the MaxInt32+1 offset, two victims sum less than three
    got = pick_one_node([cand("a", [50, 5], starts=[1, 1]), cand("b", [50, 5], starts=[2, 0])])
    assert got is not None and got.node == "b"
    got = pick_one_node([cand("a", [50]), cand("b", [50])])
    assert got is not None and got.node == "a"


def test_pick_one_node_says_which_criterion_decided() -> None:
    def cand(name: str, prios: list[int], violations: int = 0, starts: list[int] | None = None) -> Candidate:
        victims = tuple(
            _obj(pod(f"{name}-{i}", pr, start=None if starts is None else starts[i]))
            for i, pr in enumerate(prios)
        )
        return Candidate(name, victims, violations)

    def why(*candidates: Candidate) -> tuple[str, str]:
        got, reason = pick_one_node_why(candidates)
        assert got is not None
        return got.node, reason

    assert pick_one_node_why([]) == (None, "")
    assert why(cand("a", [5])) == ("a", PICK_ONLY)
    assert why(cand("a", [5], 1), cand("b", [50])) == ("b", PICK_REASONS[0])
    assert why(cand("a", [50, 1]), cand("b", [40, 40, 40])) == ("b", PICK_REASONS[1])
    assert why(cand("a", [50, 10]), cand("b", [50, 5, 4])) == ("a", PICK_REASONS[2])
    assert why(cand("a", [50, 5], starts=[1, 1]), cand("b", [50, 5], starts=[2, 0])) == ("b", PICK_REASONS[4])
    assert why(cand("a", [50]), cand("b", [50])) == ("a", PICK_FIRST)


def test_compare_rules_accept_the_preemption_field() -> None:
    """compare.py (read-only here) ignores fields it does not know: an answer with
    ``preemption`` still matches the expected answers of the corpus."""
    compare = load_script(SHARED / "conformance" / "compare.py")
    [r] = run([node("node1", ONE_POD, pods="1")], [pod("p1", on="node1")], [pod("p", HIGH)])
    expected = {"results": [{k: v for k, v in r.items() if k != "preemption"}]}
    assert compare.diff_case(expected, {"results": [r]}) == []
    assert preemption_diff(r["preemption"], {**r["preemption"], "victims": []}) != []


# ---------------------------------------------------------------- the dry run leaves no trace
def test_the_dry_run_restores_the_cluster_and_only_derived_listeners_hear_it() -> None:
    from builders import cluster_of
    from kubespread.cluster.events import ClusterEvent
    from kubespread.scheduler.config import default_profile
    from kubespread.scheduler.scheduler import schedule_one

    anti = make_pod("v2").label("app", "x").req(cpu="200m", memory="200").node("node1")
    anti.set("spec.priority", LOW).affinity(
        "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"},
    )
    cluster = cluster_of(
        [make_node("node1").capacity(cpu="500m", memory="500")],
        [make_pod("v1").req(cpu="300m", memory="300").node("node1").set("spec.priority", LOW), anti],
    )
    before = dict(cluster.pods)
    info = cluster.node_info("node1")
    requested = repr(info.requested)
    heard: list[ClusterEvent] = []
    derived: list[ClusterEvent] = []
    cluster.subscribe(heard.append)
    cluster.subscribe(derived.append, derived=True)
    # v2's anti-affinity refuses p: InterPodAffinity's PreFilter state changes without v2, so
    # the dry run takes the pods off the cluster for real
    p = make_pod("p").label("app", "x").req(cpu="300m", memory="300").set("spec.priority", HIGH).obj()
    d = schedule_one(p, cluster, default_profile())
    assert d.preemption is not None and d.preemption.nominated_node == "node1"
    assert [v.key for v in d.preemption.victims] == ["default/v1", "default/v2"]
    assert heard == [] and derived  # the tentative changes reached the plugin indexes only
    assert all(cluster.pods[k] is pod for k, pod in before.items())
    assert repr(info.requested) == requested and set(info.pods) == set(before)
    assert cluster.unbound_pods == {}
    # the same question again gets the same answer (the indexes were put back too)
    again = schedule_one(p, cluster, default_profile())
    assert again.preemption == d.preemption


def test_victims_with_affinity_to_the_preemptor_are_not_spared() -> None:
    """kube-scheduler does not consider the preemptor's affinity to its victims: with every
    lower-priority pod gone, a pod that needs one of them does not fit, so no candidate."""
    p = make_pod("p").label("app", "web").req(cpu=LARGE[0], memory=LARGE[1]).set("spec.priority", HIGH)
    p.affinity(
        "podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"},
    )
    pods = [pod("db", LOW, LARGE, "node1", app="db"), pod("other", HIGH, LARGE, "node2", app="db")]
    [r] = run(two_nodes(), pods, [p.dict()])
    # node1: the db pod is the only victim and the affinity needs it; node2: nothing to preempt
    expect(r, None)
    tail = fit_error_tail(r)
    assert tail.startswith("0/2 nodes are available: ") and NO_VICTIMS in tail
    assert "didn't match pod affinity rules" in tail


def test_namespaced_pdbs_only_count_their_namespace() -> None:
    pods = [pod("v", MID, VERY_LARGE, "node1", app="foo")]
    [r] = run(
        [node("node1")], pods, [pod("p", HIGH, VERY_LARGE)], [pdb("b", {"app": "foo"}, namespace="other")]
    )
    expect(r, "node1", ["v"], 0)
    [r] = run([node("node1")], pods, [pod("p", HIGH, VERY_LARGE)], [pdb("b", {"app": "foo"})])
    expect(r, "node1", ["v"], 1)


def test_a_nominated_pod_the_cluster_holds_as_pending_is_counted_and_put_back() -> None:
    from builders import cluster_of
    from kubespread.scheduler.config import default_profile
    from kubespread.scheduler.scheduler import schedule_one

    waiting = make_pod("w").req(cpu="500m", memory="500").set("spec.priority", HIGH)
    waiting.set("status.nominatedNodeName", "node1")
    cluster = cluster_of([make_node("node1").capacity(cpu="500m", memory="500")], [waiting])
    held = cluster.pods["default/w"]
    q = make_pod("q").req(cpu="100m", memory="100").set("spec.priority", LOW).obj()
    d = schedule_one(q, cluster, default_profile(), nominated={"node1": [held]})
    assert not d.scheduled
    assert d.rejections["node1"].status.reasons == ("Insufficient cpu", "Insufficient memory")
    assert cluster.pods["default/w"] is held and cluster.node_of("default/w") == ""
    # without the nomination, or for a pod of higher priority, the node is free
    assert schedule_one(q, cluster, default_profile()).selected == "node1"
    hi = make_pod("hi").req(cpu="100m", memory="100").set("spec.priority", VERY_HIGH).obj()
    assert schedule_one(hi, cluster, default_profile(), nominated={"node1": [held]}).selected == "node1"


# TestSelectBestCandidate's remaining cases: (name, victims per node as (name, priority,
# size, start), the node picked); the preemptor asks for 500m/500 at high priority (very high
# where noted), every node has 500m/500
S, M, L = SMALL, MEDIUM, LARGE
BEST_CANDIDATE_CASES = [
    (
        "min number of pods when highest priority and sum are the same",
        HIGH,
        {
            "node1": [("p1.1", MID, S, 0), ("p1.2", NEG, S, 0), ("p1.3", MID, S, 0), ("p1.4", NEG, S, 0)],
            "node2": [("p2.1", MID, L, 0), ("p2.2", NEG, M, 0)],
            "node3": [("p3.1", MID, M, 0), ("p3.2", NEG, S, 0), ("p3.3", LOW, S, 0)],
        },
        "node2",
    ),
    (
        "sum of adjusted priorities is considered",
        HIGH,
        {
            "node1": [("p1.1", MID, S, 0), ("p1.2", NEG, S, 0), ("p1.3", NEG, S, 0)],
            "node2": [("p2.1", MID, L, 0), ("p2.2", NEG, M, 0)],
            "node3": [("p3.1", MID, M, 0), ("p3.2", NEG, S, 0), ("p3.3", LOW, S, 0)],
        },
        "node2",
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        VERY_HIGH,
        {
            "node1": [("p1.1", MID, S, 0), ("p1.2", LOW, S, 0), ("p1.3", LOW, S, 0)],
            "node2": [("p2.1", HIGH, L, 0)],
            "node3": [("p3.1", MID, M, 0), ("p3.2", LOW, S, 0), ("p3.3", LOW, S, 0), ("p3.4", LOW, M, 0)],
            "node4": [("p4.1", MID, M, 0), ("p4.2", MID, S, 0), ("p4.3", MID, S, 0), ("p4.4", NEG, S, 0)],
        },
        "node1",
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        HIGH,
        {
            "node1": [("p1.1", MID, M, 2), ("p1.2", MID, M, 2)],
            "node2": [("p2.1", MID, M, 3), ("p2.2", MID, M, 3)],
            "node3": [("p3.1", MID, M, 1), ("p3.2", MID, M, 1)],
        },
        "node2",
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        HIGH,
        {
            "node1": [("p1.1", MID, M, 4), ("p1.2", MID, M, 2)],
            "node2": [("p2.1", MID, M, 5), ("p2.2", MID, M, 1)],
            "node3": [("p3.1", MID, M, 3), ("p3.2", MID, M, 6)],
        },
        "node3",
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        HIGH,
        {
            "node1": [("p1.1", LOW, M, 4), ("p1.2", MID, M, 2)],
            "node2": [("p2.1", MID, M, 6), ("p2.2", LOW, M, 1)],
            "node3": [("p3.1", LOW, M, 3), ("p3.2", MID, M, 5)],
        },
        "node2",
    ),
]


@pytest.mark.parametrize(
    ("priority", "layout", "picked"),
    [c[1:] for c in BEST_CANDIDATE_CASES],
    ids=[c[0] for c in BEST_CANDIDATE_CASES],
)
def test_select_best_candidate(priority: int, layout: dict[str, list[Any]], picked: str) -> None:
    pods = [pod(n, pr, size, on, start=t) for on, victims in layout.items() for n, pr, size, t in victims]
    [r] = run([node(n) for n in layout], pods, [pod("p", priority, VERY_LARGE)])
    expect(r, picked, [v[0] for v in layout[picked]])


# ---------------------------------------------------------------- TestPreempt
def preempt_pods() -> list[dict[str, Any]]:
    return [
        pod("p1.1", LOW, SMALL, "node1"),
        pod("p1.2", LOW, SMALL, "node1"),
        pod("p2.1", HIGH, LARGE, "node2"),
        pod("p3.1", MID, MEDIUM, "node3"),
    ]


def test_basic_preemption_logic() -> None:
    [r] = run(three_nodes(), preempt_pods(), [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node1", ["p1.1", "p1.2"])


def test_no_preempting_in_pod_with_policy_never() -> None:
    p = pod("p", HIGH, VERY_LARGE)
    p["spec"]["preemptionPolicy"] = "Never"
    [r] = run(three_nodes(), preempt_pods(), [p])
    expect(r, None)
    p["spec"]["preemptionPolicy"] = "PreemptLowerPriority"
    [r] = run(three_nodes(), preempt_pods(), [p])
    expect(r, "node1", ["p1.1", "p1.2"])


def test_preemption_for_topology_spread_constraints() -> None:
    nodes = [
        node("node-a", hostname="node-a", zone="zone1"),
        node("node-b", hostname="node-b", zone="zone1"),
        node("node-x", hostname="node-x", zone="zone2"),
    ]
    pods = [
        pod("p-a1", HIGH, on="node-a", foo=""),
        pod("p-a2", HIGH, on="node-a", foo=""),
        pod("p-b1", LOW, on="node-b", foo=""),
        pod("p-x1", HIGH, on="node-x", foo=""),
        pod("p-x2", HIGH, on="node-x", foo=""),
    ]
    p = make_pod("p").label("foo", "").set("spec.priority", HIGH)
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    p.spread(1, "zone", selector=sel).spread(1, "hostname", selector=sel)
    [r] = run(nodes, pods, [p.dict()])
    expect(r, "node-b", ["p-b1"])


def test_the_smaller_sum_of_victim_priorities_wins() -> None:
    pods = [
        pod("p1.1", MID, SMALL, "node1"),
        pod("p1.2", LOW, SMALL, "node1"),
        pod("p2.1", MID, LARGE, "node2"),
    ]
    [r] = run(two_nodes(), pods, [pod("p", HIGH, VERY_LARGE)])
    expect(r, "node2", ["p2.1"])


def test_a_pdb_without_a_namespace_is_in_default_like_the_pods() -> None:
    budget = pdb("b", {"app": "foo"})
    del budget["metadata"]["namespace"]
    p1 = pod("v", MID, VERY_LARGE, "node1", app="foo")
    del p1["metadata"]["namespace"]
    [r] = run([node("node1")], [p1], [pod("p", HIGH, VERY_LARGE)], [budget])
    expect(r, "node1", ["v"], 1)
