"""What changes between Kubernetes versions, each shown both ways on a small manifest (the
README's "What changes between versions" table names these tests)."""

from __future__ import annotations

from typing import Any

from builders import cluster_of, make_node, make_pod
from kubespread.admission.apiserver import create
from kubespread.admission.framework import AdmissionContext, AdmissionOptions
from kubespread.api.core import Pod
from kubespread.api.features import features_for
from kubespread.harness.evaluate import evaluate
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.plugins.interpodaffinity import InterPodAffinity
from kubespread.scheduler.queueing import (
    QUEUE,
    QUEUE_SKIP,
    ActionType,
    EventKind,
    EventResource,
    QueueingEvent,
    QueueingHint,
)
from kubespread.scheduler.scheduler import schedule_one

ZONE = "topology.kubernetes.io/zone"


def _node(name: str) -> dict[str, Any]:
    return make_node(name).dict()


def _pod(name: str, cpu: str, memory: str, node: str | None = None, priority: int = 0) -> dict[str, Any]:
    b = make_pod(name).req(cpu=cpu, memory=memory)
    if node:
        b.node(node)
    d = b.dict()
    d["spec"]["priority"] = priority
    return d


# ----------------------------------------------------------------- v1.36: kubernetes#135573
def _balanced_doc(version: str) -> dict[str, Any]:
    """a runs 3 cpu / 1Gi, b 2 cpu / 6Gi (4 cpu, 8Gi each); the new pod asks 1 cpu / 1Gi."""
    return {
        "kubeVersion": version,
        "nodes": [_node("a"), _node("b")],
        "pods": [_pod("on-a", "3", "1Gi", "a"), _pod("on-b", "2", "6Gi", "b")],
        "incoming": [_pod("new", "1", "1Gi")],
    }


def _balanced(result: dict[str, Any]) -> dict[str, int]:
    return {n["name"]: n["scores"]["NodeResourcesBalancedAllocation"]["normalized"] for n in result["nodes"]}


def test_balanced_allocation_scores_the_improvement_from_136() -> None:
    """v1.35 scores the balance with the pod: a (1.0, 0.25) → 62, b (0.75, 0.875) → 93, so b.
    v1.36 scores 50 + (50 + with - without) / 2: a's balance goes 68 → 62 (72), b's 87 → 93
    (78); with LeastAllocated, a now wins: the selected node changes."""
    old = evaluate(_balanced_doc("1.35"))["results"][0]
    new = evaluate(_balanced_doc("1.36"))["results"][0]
    assert _balanced(old) == {"a": 62, "b": 93} and old["selectedNode"] == "b"
    assert _balanced(new) == {"a": 72, "b": 78} and new["selectedNode"] == "a"
    for later in ("1.37", "1.38"):
        assert _balanced(evaluate(_balanced_doc(later))["results"][0]) == _balanced(new)
    assert _balanced(evaluate(_balanced_doc("1.33"))["results"][0]) == _balanced(old)


# ------------------------------------------ v1.34: MatchLabelKeysInPodTopologySpreadSelectorMerge
def _spread_pod(name: str, rev: str, node: str | None = None) -> Pod:
    b = make_pod(name).labels(app="web", rev=rev)
    b.spec["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["rev"],
        }
    ]
    if node:
        b.node(node)
    return b.obj()


def _admitted(pod: Pod, version: str) -> Pod:
    ctx = AdmissionContext.create(options=AdmissionOptions(features=features_for(version)))
    out = create(pod, ctx)
    assert isinstance(out, Pod), out
    return out


def test_match_label_keys_are_merged_by_the_apiserver_from_134_and_by_the_scheduler_before() -> None:
    """v1.34+: kube-apiserver appends ``rev In [2]`` to the stored selector. v1.33: the stored
    pod keeps its selector and kube-scheduler merges the key when it counts. The placement is
    the same either way: two rev=1 pods in zone a, none of rev 2 anywhere, so the rev=2 pod may
    go to either zone (without any merge it would have to go to b)."""
    assert [e.key for e in _admitted(_spread_pod("p", "2"), "1.35").spec.topology_spread_constraints[0]
            .label_selector.match_expressions] == ["rev"]  # fmt: skip
    stored_133 = _admitted(_spread_pod("p", "2"), "1.33")
    assert stored_133.spec.topology_spread_constraints[0].label_selector.match_expressions == []

    nodes = [make_node("a1").zone("a"), make_node("b1").zone("b")]
    existing = [_spread_pod("old-0", "1", "a1"), _spread_pod("old-1", "1", "a1")]
    for version, incoming in (("1.33", stored_133), ("1.35", _admitted(_spread_pod("p", "2"), "1.35"))):
        cluster = cluster_of(nodes, existing)
        decision = schedule_one(incoming, cluster, default_profile(features=features_for(version)))
        assert sorted(decision.feasible) == ["a1", "b1"], version
    # what the v1.35 scheduler would do with an unmerged pod (it leaves merging to the API
    # server): every app=web pod counts, and zone a is out
    cluster = cluster_of(nodes, existing)
    unmerged = schedule_one(stored_133, cluster, default_profile(features=features_for("1.35")))
    assert unmerged.feasible == ["b1"]


# ------------------------------------------------------------------ v1.37: kubernetes#140180
def _preemption_doc(version: str) -> dict[str, Any]:
    return {
        "kubeVersion": version,
        "nodes": [_node("n1")],
        "pods": [_pod("low", "3", "1Gi", "n1", priority=0)],
        "incoming": [_pod("high", "2", "1Gi", priority=1000)],
    }


def test_a_preempting_pod_says_where_from_137() -> None:
    old = evaluate(_preemption_doc("1.36"))["results"][0]
    new = evaluate(_preemption_doc("1.37"))["results"][0]
    assert old["preemption"]["nominatedNode"] == new["preemption"]["nominatedNode"] == "n1"
    assert old["fitError"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert new["fitError"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement "
        "for pod on node n1, preempting 1 victims"
    )


# ------------------------------------------------------------------------- v1.34: KEP-2837
def test_pod_level_resources_count_from_134() -> None:
    """PodLevelResources is Beta and on from v1.34. Before, kube-apiserver drops spec.resources
    of a new pod (dropDisabledPodLevelResources), so only its containers' 1 cpu counts and the
    pod fits a 4-cpu node; from v1.34 its pod-level 5 cpu do not."""
    nodes = [make_node("n1")]

    def pod() -> Pod:
        b = make_pod("big").req(cpu="1")
        b.spec["resources"] = {"requests": {"cpu": "5"}}
        return b.obj()

    old = _admitted(pod(), "1.33")
    assert old.spec.resources is None
    assert (
        schedule_one(old, cluster_of(nodes), default_profile(features=features_for("1.33"))).selected == "n1"
    )
    new = _admitted(pod(), "1.34")
    assert new.spec.resources is not None
    decision = schedule_one(new, cluster_of(nodes), default_profile(features=features_for("1.34")))
    assert decision.selected is None
    assert decision.fit_error_without_post_filter == "0/1 nodes are available: 1 Insufficient cpu."


# ------------------------------------------------------------------ v1.38: kubernetes#141785
def _pdb_doc(version: str) -> dict[str, Any]:
    """n1 (4 cpu) runs two labelled 2-cpu pods of priority 0; a budget with an empty selector
    allows no disruption; the new pod (priority 1000) needs 2 cpu: one victim."""
    low = [_pod(f"low-{i}", "2", "1Gi", "n1") for i in range(2)]
    for p in low:
        p["metadata"]["labels"] = {"app": "batch"}
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "all", "namespace": "default"},
        "spec": {"selector": {}, "maxUnavailable": 0},
        "status": {"disruptionsAllowed": 0},
    }
    return {
        "kubeVersion": version,
        "nodes": [_node("n1")],
        "pods": low,
        "podDisruptionBudgets": [pdb],
        "incoming": [_pod("high", "2", "1Gi", priority=1000)],
    }


def test_preemption_counts_an_empty_pdb_selector_from_138() -> None:
    """Up to v1.37 preemption skips a budget whose selector is empty: evicting breaks
    nothing. From v1.38 the budget selects both pods, and the victim breaks it."""
    old = evaluate(_pdb_doc("1.37"))["results"][0]["preemption"]
    new = evaluate(_pdb_doc("1.38"))["results"][0]["preemption"]
    assert old["nominatedNode"] == new["nominatedNode"] == "n1"
    assert len(old["victims"]) == len(new["victims"]) == 1
    assert (old["pdbViolations"], new["pdbViolations"]) == (0, 1)


# ------------------------------------------------------------------ v1.38: kubernetes#141340
def test_an_empty_spread_selector_counts_every_pod_from_138() -> None:
    """labelSelector: {} — up to v1.37 the counts are 0 (countPodsMatchSelector returns 0 for
    an empty selector), so both zones are within maxSkew; from v1.38 the two pods of zone a
    count, and only zone b is."""

    def spreading() -> Pod:
        b = make_pod("new").label("app", "web")
        b.spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
        ]
        return b.obj()

    nodes = [make_node("a1").zone("a"), make_node("b1").zone("b")]
    existing = [make_pod("x").label("app", "db").node("a1"), make_pod("y").node("a1")]
    feasible = {
        version: schedule_one(
            spreading(), cluster_of(nodes, existing), default_profile(features=features_for(version))
        ).feasible
        for version in ("1.37", "1.38")
    }
    assert feasible == {"1.37": ["a1", "b1"], "1.38": ["b1"]}


# --------------------------------------------------- v1.36: kubernetes#135325, kubernetes#135394
def _affinity_plugin(version: str) -> InterPodAffinity:
    plugin = default_profile(features=features_for(version)).plugins["InterPodAffinity"]
    assert isinstance(plugin, InterPodAffinity)
    return plugin


def _hints(event: QueueingEvent, pod: Pod) -> dict[str, QueueingHint]:
    return {v: _affinity_plugin(v).hint_after_pod_change(pod, event) for v in ("1.35", "1.36")}


def test_inter_pod_affinity_requeues_on_the_pods_own_label_change_from_136() -> None:
    """A pending pod rejected by InterPodAffinity changes its labels: v1.35 skips it (the
    changed pod is unscheduled), v1.36 queues it (#135394)."""
    before = make_pod("web").label("app", "web").obj()
    after = make_pod("web").label("app", "web2").obj()
    event = QueueingEvent(EventKind(EventResource.POD, ActionType.UPDATE_POD_LABEL), before, after)
    assert _hints(event, after) == {"1.35": QUEUE_SKIP, "1.36": QUEUE}


def test_inter_pod_affinity_requeues_when_a_deleted_pods_anti_affinity_matched_it_from_136() -> None:
    """The bound pod that goes has required anti-affinity against app=web; the pending web pod
    has no affinity of its own: v1.35 skips, v1.36 queues (#135325)."""
    gone = make_pod("guard").node("n1").dict()
    gone["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE}
            ]
        }
    }
    event = QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), Pod.from_dict(gone), None)
    assert _hints(event, make_pod("web").label("app", "web").obj()) == {"1.35": QUEUE_SKIP, "1.36": QUEUE}


# ------------------------------------------------------------------ v1.37: kubernetes#139161
def _two_anti_terms() -> list[dict[str, Any]]:
    return [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE},
        {"labelSelector": {"matchLabels": {"tier": "cache"}}, "topologyKey": ZONE},
    ]


def _anti_hints(event: QueueingEvent, pod: Pod) -> dict[str, QueueingHint]:
    return {v: _affinity_plugin(v).hint_after_pod_change(pod, event) for v in ("1.36", "1.37")}


def test_a_deleted_pod_matching_one_of_two_anti_affinity_terms_requeues_from_137() -> None:
    """The pending pod keeps off app=db and tier=cache; the bound pod that goes is app=db only.
    Filter rejects on any one term, but up to v1.36 the hint asks the gone pod to match every
    term and skips; v1.37 queues (#139161)."""
    pending = make_pod("web").label("app", "web").dict()
    pending["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _two_anti_terms()}
    }
    gone = make_pod("db").label("app", "db").node("n1").obj()
    event = QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), gone, None)
    assert _anti_hints(event, Pod.from_dict(pending)) == {"1.36": QUEUE_SKIP, "1.37": QUEUE}


def test_an_update_leaving_one_of_two_anti_affinity_terms_requeues_from_137() -> None:
    """A bound app=db pod relabelled to app=api no longer matches the pending pod's first term
    (and never matched the second): v1.36 skips (it never matched every term), v1.37 queues."""
    pending = make_pod("web").label("app", "web").dict()
    pending["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _two_anti_terms()}
    }
    before = make_pod("db").label("app", "db").node("n1").obj()
    after = make_pod("db").label("app", "api").node("n1").obj()
    event = QueueingEvent(EventKind(EventResource.POD, ActionType.UPDATE_POD_LABEL), before, after)
    assert _anti_hints(event, Pod.from_dict(pending)) == {"1.36": QUEUE_SKIP, "1.37": QUEUE}


def test_a_deleted_pods_anti_affinity_with_one_matching_term_requeues_from_137() -> None:
    """The reverse (#135325's case): the gone pod's two anti-affinity terms, of which the pending
    app=db pod matches one: v1.36 skips, v1.37 queues."""
    gone = make_pod("guard").node("n1").dict()
    gone["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _two_anti_terms()}
    }
    event = QueueingEvent(EventKind(EventResource.POD, ActionType.DELETE), Pod.from_dict(gone), None)
    assert _anti_hints(event, make_pod("db").label("app", "db").obj()) == {"1.36": QUEUE_SKIP, "1.37": QUEUE}


def test_the_v133_scheduler_ignores_pod_level_requests_in_an_evaluate_input() -> None:
    """An input document's pods as the v1.33 scheduler reads them: spec.resources does not
    count (SkipPodLevelResources), on the incoming pod and on the pods already bound."""
    bound = _pod("bound", "1", "1Gi", "n1")
    bound["spec"]["resources"] = {"requests": {"cpu": "3"}}
    new = _pod("new", "1", "1Gi")
    new["spec"]["resources"] = {"requests": {"cpu": "2"}}
    doc = {"nodes": [_node("n1")], "pods": [bound], "incoming": [new]}
    fits = {v: evaluate(doc | {"kubeVersion": v})["results"][0].get("selectedNode") for v in ("1.33", "1.34")}
    assert fits == {"1.33": "n1", "1.34": None}


# ------------------------------------------------ v1.35: kubernetes#134740; v1.34: #131345
def _taint_doc(version: str) -> dict[str, Any]:
    """Two nodes tainted differently, one without room: the pod fits none."""
    nodes = [
        make_node("a").taint("dedicated", "infra").dict(),
        make_node("b").taint("maintenance").dict(),
        _node("c"),
    ]
    return {"kubeVersion": version, "nodes": nodes, "pods": [], "incoming": [_pod("new", "64", "1Gi")]}


def test_the_taint_is_named_in_the_rejection_up_to_134() -> None:
    """v1.34.1 names each node's first untolerated taint, and the FitError counts them apart;
    v1.35 says only that the node had untolerated taints."""
    filters = {}
    for version in ("1.34", "1.35"):
        result = evaluate(_taint_doc(version))["results"][0]
        filters[version] = {n["name"]: n["filter"]["reasons"] for n in result["nodes"]}
        filters[version + " fitError"] = result["fitErrorWithoutPostFilter"]
    assert filters["1.34"] == {
        "a": ["node(s) had untolerated taint {dedicated: infra}"],
        "b": ["node(s) had untolerated taint {maintenance: }"],
        "c": ["Insufficient cpu"],
    }
    assert filters["1.34 fitError"] == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: infra}, "
        "1 node(s) had untolerated taint {maintenance: }."
    )
    assert filters["1.35"]["a"] == filters["1.35"]["b"] == ["node(s) had untolerated taint(s)"]
    assert filters["1.35 fitError"] == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
    )


def test_fit_rejects_beyond_allocatable_as_unresolvable_from_134() -> None:
    """Node c (4 cpu) can never hold a 64-cpu pod: v1.34 says so (UnschedulableAndUnresolvable,
    and preemption does not try c), v1.33 rejects it as Unschedulable and preemption tries it."""
    answers = {v: evaluate(_taint_doc(v))["results"][0] for v in ("1.33", "1.34")}
    codes = {v: next(n["filter"]["code"] for n in a["nodes"] if n["name"] == "c") for v, a in answers.items()}
    assert codes == {"1.33": "Unschedulable", "1.34": "UnschedulableAndUnresolvable"}
    assert "1 No preemption victims found for incoming pod" in answers["1.33"]["fitError"]
    assert "3 Preemption is not helpful for scheduling" in answers["1.34"]["fitError"]
