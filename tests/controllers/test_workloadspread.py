"""WorkloadSpread (shared/spec/workloadspread-proposal.md): the subset helpers (annotation,
bounds, injection, owner chains), the webhook (subset choice, optimistic status updates,
deletion/eviction/finish accounting, the resource check, validation of WorkloadSpreads) and the
controller (status, creatingPods timeout, deletion costs, adoption, Adaptive rescheduling and
recovery, CloneSet targets)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from builders import ZONE, cluster_of, make_node, web_rs_owner, web_workload_manifests
from kubespread.admission.framework import AdmissionContext, Operation, Rejection
from kubespread.api.apps import Deployment, ReplicaSet, StatefulSet
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST, ANNOTATION_WORKLOADSPREAD
from kubespread.api.kruise import CloneSet, WorkloadSpread, WorkloadSpreadSubset, WorkloadSpreadSubsetStatus
from kubespread.api.meta import KubeObject, OwnerReference
from kubespread.api.patch import PatchError
from kubespread.api.timestamps import timestamp
from kubespread.cluster.errors import Conflict
from kubespread.cluster.state import ClusterState
from kubespread.controllers import default_controllers
from kubespread.controllers.pods import is_active
from kubespread.controllers.workloadspread import (
    Matched,
    WorkloadSpreadOptions,
    WorkloadSpreadWebhook,
    inject,
    matched_subset,
)
from kubespread.controllers.workloadspread.subsets import (
    MissingOwner,
    owner_chain_reaches,
    reference_equal,
    subset_max,
)
from kubespread.sim.engine import Simulation
from kubespread.sim.run import run_step
from kubespread.sim.run import simulate as simulate_scenario
from kubespread.sim.scenario import parse_scenario

WS_KEY = "default/spread"
ADAPTIVE_NO_CHECK = {
    "type": "Adaptive",
    "adaptive": {"disableSimulationSchedule": True, "rescheduleCriticalSeconds": 30},
}


# --------------------------------------------------------------------------- builders
def zone_term(zone: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}


def subset(name: str, zone: str, max_replicas: int | str | None = None, **fields: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name, "requiredNodeSelectorTerm": zone_term(zone)}
    if max_replicas is not None:
        s["maxReplicas"] = max_replicas
    s.update(fields)
    return s


def spread(
    *subsets: dict[str, Any],
    strategy: dict[str, Any] | None = None,
    name: str = "spread",
    kind: str = "Deployment",
    status: list[dict[str, Any]] | None = None,
) -> WorkloadSpread:
    api_version = "apps.kruise.io/v1alpha1" if kind == "CloneSet" else "apps/v1"
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": api_version, "kind": kind, "name": "web"},
        "subsets": list(subsets),
    }
    if strategy is not None:
        spec["scheduleStrategy"] = strategy
    d: dict[str, Any] = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if status is not None:
        d["status"] = {"subsetStatuses": status}
    return WorkloadSpread.from_dict(d)


def template(cpu: str | None = None, scheduler: str | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "nginx"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"containers": [container]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"metadata": {"labels": {"app": "web"}}, "spec": spec}


def deployment(replicas: int, *, cpu: str | None = None, scheduler: str | None = None) -> Deployment:
    return Deployment.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template(cpu, scheduler),
            },
        }
    )


def clone_set(replicas: int) -> CloneSet:
    return CloneSet.from_dict(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template(),
            },
        }
    )


def simulation(*nodes: Any, flavour: str = "proposal") -> Simulation:
    """Default controllers (so the WorkloadSpread webhook is in the chain) on these nodes;
    by default zone-a's a1 and zone-b's b1, both roomy."""
    if not nodes:
        nodes = (make_node("a1").zone("zone-a"), make_node("b1").zone("zone-b"))
    options = WorkloadSpreadOptions(flavour=flavour)  # type: ignore[arg-type]
    return Simulation(cluster_of(list(nodes)), controllers=default_controllers(workloadspread=options))


def start(sim: Simulation, ws: WorkloadSpread, workload: KubeObject) -> None:
    assert isinstance(sim.create(ws), WorkloadSpread)
    assert isinstance(sim.create(workload), type(workload))
    sim.run_until_quiet()


# --------------------------------------------------------------------------- readers
def stored_spread(sim: Simulation) -> WorkloadSpread:
    ws = sim.cluster.get(WorkloadSpread.KIND, WS_KEY)
    assert isinstance(ws, WorkloadSpread)
    return ws


def statuses(source: Simulation | ClusterState) -> dict[str, WorkloadSpreadSubsetStatus]:
    cluster = source.cluster if isinstance(source, Simulation) else source
    ws = cluster.get(WorkloadSpread.KIND, WS_KEY)
    assert isinstance(ws, WorkloadSpread)
    return {s.name: s for s in ws.status.subset_statuses}


def subset_of(pod: Pod) -> str | None:
    m = matched_subset(pod)
    return m.subset if m is not None else None


def active_pods(sim: Simulation) -> list[Pod]:
    return sorted((p for p in sim.cluster.pods.values() if is_active(p)), key=lambda p: p.key)


def pods_in(sim: Simulation, name: str | None) -> list[Pod]:
    return [p for p in active_pods(sim) if subset_of(p) == name]


def cost(pod: Pod) -> str | None:
    return pod.metadata.annotations.get(ANNOTATION_POD_DELETION_COST)


def costs_by_subset(sim: Simulation) -> dict[str | None, list[str | None]]:
    out: dict[str | None, list[str | None]] = {}
    for pod in active_pods(sim):
        out.setdefault(subset_of(pod), []).append(cost(pod))
    return {k: sorted(v, key=str) for k, v in out.items()}


def required_zones(pod: Pod) -> list[list[str]]:
    """The zones each required node selector term of the pod asks for."""
    aff = pod.spec.affinity
    na = aff.node_affinity if aff is not None else None
    required = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if required is None:
        return []
    return [
        [v for e in t.match_expressions if e.key == ZONE for v in e.values]
        for t in required.node_selector_terms
    ]


def webhook_of(sim: Simulation) -> WorkloadSpreadWebhook:
    return next(p for p in sim.chain.validating if isinstance(p, WorkloadSpreadWebhook))


def ws_events(sim: Simulation, reason: str) -> list[Any]:
    return [e for e in sim.events if e.kind == WorkloadSpread.KIND and e.reason == reason]


def update_spread(sim: Simulation, change: Callable[[WorkloadSpread], None]) -> None:
    ws = stored_spread(sim).copy()
    change(ws)
    sim.update(ws)


def scale(sim: Simulation, kind: str, replicas: int) -> None:
    obj = sim.cluster.get(kind, "default/web")
    assert obj is not None
    updated = obj.copy()
    updated.spec.replicas = replicas  # type: ignore[attr-defined]
    sim.update(updated)


# =========================================================================== subsets.py
def annotated(value: str | None) -> Pod:
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "main", "image": "x"}]},
    }
    if value is not None:
        d["metadata"]["annotations"] = {ANNOTATION_WORKLOADSPREAD: value}
    return Pod.from_dict(d)


def test_matched_subset_reads_the_annotation() -> None:
    assert matched_subset(annotated('{"name":"spread","subset":"subset-a"}')) == Matched("spread", "subset-a")
    assert matched_subset(annotated('{"name":"s","subset":"b","uid":"u-1"}')) == Matched("s", "b", "u-1")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # member names match case-insensitively, as encoding/json matches them (Kruise's own
        # TestWorkloadSpreadMutatingPod writes {"Name": ..., "Subset": ...})
        ('{"Name":"spread","Subset":"subset-a"}', Matched("spread", "subset-a")),
        ('{"NAME":"spread","sUbSeT":"subset-a","UID":"u-1"}', Matched("spread", "subset-a", "u-1")),
        # Go's folding: U+017F (long s) folds with "s"; the dotless i U+0131 folds with nothing,
        # so "u\u0131d" is an unknown member
        ('{"name":"spread","\u017fub\u017fet":"subset-a"}', Matched("spread", "subset-a")),
        ('{"name":"spread","subset":"a","u\u0131d":"u-1"}', Matched("spread", "a")),
        # unknown members, of any type, are ignored
        ('{"name":"spread","subset":"a","extra":{"x":[1,2.5,true,null]},"n":7}', Matched("spread", "a")),
        # duplicates: the last one wins, whatever its case
        ('{"subset":"a","name":"one","Name":"two"}', Matched("two", "a")),
        # null leaves a field empty; a missing field is empty too (no error in Go)
        ('{"name":"spread","subset":"a","name":null}', Matched("spread", "a")),
        ('{"name":"spread"}', Matched("spread", "")),
        ('{"subset":"a"}', Matched("", "a")),
        ("{}", Matched("", "")),
        # a lone surrogate escape decodes as U+FFFD, as in Go
        ('{"name":"s\ud800","subset":"a"}', Matched("s\ufffd", "a")),
        (' \n{"name":"spread","subset":"a"}\t ', Matched("spread", "a")),
    ],
)
def test_matched_subset_reads_the_annotation_as_go_json_does(value: str, expected: Matched) -> None:
    assert matched_subset(annotated(value)) == expected


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "not json",
        "{",
        "[1, 2]",
        '[["name", "s"], ["subset", "a"]]',  # an array is not an object
        '"spread"',
        "null",  # Kruise's deletion path reads a nil annotation: nothing booked
        "7",
        # a member of the wrong type: Go reports it and Kruise drops the whole annotation
        '{"name":1,"subset":"a"}',
        '{"name":"s","subset":"b","uid":7}',
        '{"name":"s","Subset":["a"]}',
        '{"name":1,"name":"s","subset":"a"}',
        # not JSON to Go: NaN and Infinity, trailing data, single quotes, trailing commas
        '{"name":"s","subset":"a","x":NaN}',
        '{"name":"s","subset":"a","x":-Infinity}',
        '{"name":"s","subset":"a"} {}',
        "{'name':'s','subset':'a'}",
        '{"name":"s","subset":"a",}',
    ],
)
def test_matched_subset_is_none_for_a_missing_or_unreadable_annotation(value: str | None) -> None:
    assert matched_subset(annotated(value)) is None


def test_matched_to_json_round_trips_and_writes_the_uid_only_when_set() -> None:
    plain = Matched("spread", "subset-a")
    assert json.loads(plain.to_json()) == {"name": "spread", "subset": "subset-a"}
    with_uid = Matched("spread", "subset-a", "u-1")
    assert json.loads(with_uid.to_json()) == {"name": "spread", "subset": "subset-a", "uid": "u-1"}
    for m in (plain, with_uid):
        assert matched_subset(annotated(m.to_json())) == m


@pytest.mark.parametrize(
    ("max_replicas", "replicas", "expected"),
    [(3, 10, 3), (0, 10, 0), ("20%", 7, 2), ("50%", 4, 2), ("50%", 5, 3), ("100%", 7, 7), (None, 7, None)],
)
def test_subset_max_is_the_bound_in_pods_percentages_rounded_up(
    max_replicas: int | str | None, replicas: int, expected: int | None
) -> None:
    s = WorkloadSpreadSubset.from_dict(
        {"name": "a", **({"maxReplicas": max_replicas} if max_replicas is not None else {})}
    )
    assert subset_max(s, replicas) == expected


def base_pod(**spec: Any) -> Pod:
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "nginx",
                        "resources": {"requests": {"cpu": "100m"}},
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    },
                    {"name": "side", "image": "busybox"},
                ],
                **spec,
            },
        }
    )


def exists(key: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


ZONE_A_EXPR = {"key": ZONE, "operator": "In", "values": ["zone-a"]}


def one_subset(**fields: Any) -> tuple[WorkloadSpread, WorkloadSpreadSubset]:
    ws = spread(subset("subset-a", "zone-a", 3, **fields), subset("subset-b", "zone-b"))
    return ws, ws.spec.subsets[0]


def test_inject_ands_the_required_term_into_every_required_term_of_the_pod() -> None:
    pod = base_pod(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [exists("x"), exists("y")]
                }
            }
        }
    )
    ws, s = one_subset()
    out = inject(pod, ws, s).to_dict()
    terms = out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {"matchExpressions": [{"key": "x", "operator": "Exists"}, ZONE_A_EXPR]},
        {"matchExpressions": [{"key": "y", "operator": "Exists"}, ZONE_A_EXPR]},
    ]


def test_inject_makes_the_required_term_the_only_term_of_a_pod_without_one() -> None:
    ws, s = one_subset()
    out = inject(base_pod(), ws, s).to_dict()
    required = out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required == {"nodeSelectorTerms": [{"matchExpressions": [ZONE_A_EXPR]}]}


def test_inject_appends_preferred_terms_and_tolerations() -> None:
    pod = base_pod(
        tolerations=[{"key": "t1", "operator": "Exists"}],
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": exists("p")}]
            }
        },
    )
    ws, s = one_subset(
        preferredNodeSelectorTerms=[{"weight": 10, "preference": exists("q")}],
        tolerations=[{"key": "t2", "operator": "Exists", "effect": "NoSchedule"}],
    )
    out = inject(pod, ws, s).to_dict()["spec"]
    assert out["tolerations"] == [
        {"key": "t1", "operator": "Exists"},
        {"key": "t2", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert out["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 5, "preference": exists("p")},
        {"weight": 10, "preference": exists("q")},
    ]


def test_inject_applies_the_patch_as_a_strategic_merge() -> None:
    patch = {
        "metadata": {"labels": {"subset": "a"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "resources": {"limits": {"cpu": "2"}},
                    "env": [{"name": "B", "value": "patched"}, {"name": "C", "value": "3"}],
                }
            ]
        },
    }
    ws, s = one_subset(patch=patch)
    out = inject(base_pod(), ws, s).to_dict()
    assert out["metadata"]["labels"] == {"app": "web", "subset": "a"}
    main, side = out["spec"]["containers"]
    assert main["name"] == "main" and main["image"] == "nginx"
    assert main["resources"] == {"requests": {"cpu": "100m"}, "limits": {"cpu": "2"}}
    assert main["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "patched"},
        {"name": "C", "value": "3"},
    ]
    assert side == {"name": "side", "image": "busybox"}  # the other container is left as it was


def test_inject_sets_the_annotation_and_leaves_the_input_pod_unchanged() -> None:
    pod = base_pod(
        tolerations=[{"key": "t1", "operator": "Exists"}],
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [exists("x")]}
            }
        },
    )
    before = pod.to_dict()
    ws, s = one_subset(
        tolerations=[{"key": "t2", "operator": "Exists"}],
        preferredNodeSelectorTerms=[{"weight": 10, "preference": exists("q")}],
        patch={"metadata": {"labels": {"subset": "a"}}},
    )
    out = inject(pod, ws, s)
    assert matched_subset(out) == Matched("spread", "subset-a")
    assert json.loads(out.metadata.annotations[ANNOTATION_WORKLOADSPREAD]) == {
        "name": "spread",
        "subset": "subset-a",
    }
    assert pod.to_dict() == before
    assert ANNOTATION_WORKLOADSPREAD not in pod.metadata.annotations
    assert out.to_dict() != before


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"containers": [{"image": "no-name"}]}},  # no merge key
        {"spec": {"containers": "oops"}},  # scalar into a list
        {"spec": {"priority": "high"}},  # does not decode into a Pod
        {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "lots"}}}]}},
        {"$patch": "bogus"},
    ],
)
def test_inject_raises_patch_error_for_a_patch_that_does_not_apply(patch: dict[str, Any]) -> None:
    ws, s = one_subset(patch=patch)
    with pytest.raises(PatchError):
        inject(base_pod(), ws, s)


def ref(api_version: str, kind: str, name: str, uid: str) -> OwnerReference:
    return OwnerReference(api_version=api_version, kind=kind, name=name, uid=uid, controller=True)


def owner_world() -> ClusterState:
    dep = deployment(2)
    dep.metadata.uid = "dep-uid"
    rs = ReplicaSet.from_dict(web_workload_manifests(2, template())[1])
    return cluster_of([], objects=[dep, rs])


def test_owner_chain_reaches_the_deployment_through_its_replica_set() -> None:
    cluster = owner_world()
    target = spread(subset("a", "zone-a")).spec.target_ref
    assert target is not None
    pod_ref = ref("apps/v1", "ReplicaSet", "web-1", "rs-uid")
    assert owner_chain_reaches(target, pod_ref, "default", cluster.get)
    # a ReplicaSet of that name but another uid is not the one the pod names
    assert not owner_chain_reaches(
        target, ref("apps/v1", "ReplicaSet", "web-1", "other"), "default", cluster.get
    )
    # a ReplicaSet that does not exist reaches nothing
    assert not owner_chain_reaches(target, ref("apps/v1", "ReplicaSet", "web-2", "x"), "default", cluster.get)
    assert not owner_chain_reaches(target, None, "default", cluster.get)
    # the same chain does not reach a Deployment of another name
    other = spread(subset("a", "zone-a")).spec.target_ref
    assert other is not None
    other.name = "api"
    assert not owner_chain_reaches(other, pod_ref, "default", cluster.get)


def nothing(kind: str, key: str) -> KubeObject | None:
    return None


def test_owner_chain_reaches_a_job_and_not_a_job_of_another_name() -> None:
    job_target = spread(subset("a", "zone-a")).spec.target_ref
    assert job_target is not None
    job_target.api_version, job_target.kind, job_target.name = "batch/v1", "Job", "render"
    assert owner_chain_reaches(job_target, ref("batch/v1", "Job", "render", "j"), "default", nothing)
    assert not owner_chain_reaches(job_target, ref("batch/v1", "Job", "other", "j"), "default", nothing)
    # same name, another kind: a Deployment "render" is not the Job "render"
    assert not owner_chain_reaches(
        job_target, ref("apps/v1", "Deployment", "render", "d"), "default", nothing
    )


# =========================================================================== webhook (direct)
class FakeClient:
    """The webhook's client over a bare ClusterState: a fixed clock, every status write kept;
    ``conflicts`` writes are refused with Conflict first, after ``meanwhile`` changed the store."""

    def __init__(
        self,
        cluster: ClusterState,
        *,
        conflicts: int = 0,
        meanwhile: Callable[[ClusterState], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.time = 100.0
        self.conflicts = conflicts
        self.meanwhile = meanwhile
        self.calls = 0
        self.writes: list[WorkloadSpread] = []

    def now(self) -> float:
        return self.time

    def stamp(self, seconds: float) -> str:
        return timestamp(seconds)

    def update_status(self, ws: WorkloadSpread) -> None:
        self.calls += 1
        if self.conflicts:
            self.conflicts -= 1
            if self.meanwhile is not None:
                self.meanwhile(self.cluster)
            raise Conflict("the object has been modified")
        self.writes.append(ws.copy())
        self.cluster.update(ws)

    def get(self, kind: str, key: str) -> KubeObject | None:
        return self.cluster.get(kind, key)


def webhook_world(ws: WorkloadSpread, **client: Any) -> tuple[WorkloadSpreadWebhook, FakeClient]:
    cluster = owner_world()
    cluster.add(ws)
    fake = FakeClient(cluster, **client)
    return WorkloadSpreadWebhook(fake), fake


def rs_pod(name: str, annotations: dict[str, str] | None = None) -> Pod:
    """A pod of ReplicaSet web-1, whose controller is Deployment web."""
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "labels": {"app": "web"},
        "ownerReferences": [web_rs_owner()],
    }
    if annotations:
        meta["annotations"] = annotations
    return Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        }
    )


def missing(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"name": name, "missingReplicas": value, **fields}


UNSCHEDULABLE = {
    "subsetUnscheduledStatus": {"unschedulable": True, "unscheduledTime": timestamp(0), "failedCount": 1}
}


def test_webhook_books_the_pod_in_the_first_subset_that_misses_pods() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 2),
        subset("subset-b", "zone-b", 3),
        subset("subset-c", "zone-c"),
        status=[missing("subset-a", 0), missing("subset-b", 2), missing("subset-c", -1)],
    )
    webhook, fake = webhook_world(ws)
    pod = rs_pod("web-1-aaaaa")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "subset-b"
    assert required_zones(pod) == [["zone-b"]]
    assert fake.calls == 1
    after = statuses(fake.cluster)
    assert after["subset-b"].missing_replicas == 1
    assert after["subset-b"].creating_pods == {"web-1-aaaaa": timestamp(100)}
    assert after["subset-a"].creating_pods == {} and after["subset-a"].missing_replicas == 0
    assert after["subset-c"].creating_pods == {}


def test_webhook_skips_an_unschedulable_subset() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 2),
        subset("subset-b", "zone-b", 2),
        status=[missing("subset-a", 2, **UNSCHEDULABLE), missing("subset-b", 2)],
    )
    webhook, fake = webhook_world(ws)
    pod = rs_pod("web-1-aaaaa")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "subset-b"
    after = statuses(fake.cluster)
    assert (after["subset-a"].missing_replicas, after["subset-a"].creating_pods) == (2, {})
    assert (after["subset-b"].missing_replicas, list(after["subset-b"].creating_pods)) == (1, ["web-1-aaaaa"])


def test_webhook_does_not_record_a_pod_in_an_unbounded_subset() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 1),
        subset("subset-b", "zone-b"),
        status=[missing("subset-a", 0), missing("subset-b", -1)],
    )
    webhook, fake = webhook_world(ws)
    pod = rs_pod("web-1-aaaaa")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "subset-b"
    assert fake.calls == 0


def test_a_single_unbounded_subset_is_injected_without_a_status_write() -> None:
    webhook, fake = webhook_world(spread(subset("only", "zone-a")))
    pod = rs_pod("web-1-aaaaa")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "only"
    assert pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
    assert fake.calls == 0 and statuses(fake.cluster) == {}


def test_with_no_subset_left_the_pod_goes_unchanged() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 1),
        subset("subset-b", "zone-b", 1),
        status=[missing("subset-a", 0), missing("subset-b", 0)],
    )
    webhook, fake = webhook_world(ws)
    pod = rs_pod("web-1-aaaaa")
    before = pod.to_dict()
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert pod.to_dict() == before
    assert ANNOTATION_WORKLOADSPREAD not in pod.metadata.annotations
    assert fake.calls == 0


def test_pods_of_other_workloads_are_left_alone() -> None:
    webhook, fake = webhook_world(spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b")))
    api = ReplicaSet.from_dict(web_workload_manifests(1, template())[1])
    api.metadata.name, api.metadata.uid, api.metadata.owner_references = "api-1", "api-uid", []
    fake.cluster.add(api)
    stray = rs_pod("stray")  # of ReplicaSet api-1, which exists and has no controller
    stray.metadata.owner_references[0].name = "api-1"
    stray.metadata.owner_references[0].uid = "api-uid"
    orphan = rs_pod("orphan")
    orphan.metadata.owner_references = []
    daemon = rs_pod("daemon")  # a kind no WorkloadSpread targets: not looked up, so not missing
    daemon.metadata.owner_references[0].kind = "DaemonSet"
    daemon.metadata.owner_references[0].name = "gone"
    for pod in (stray, orphan, daemon):
        before = pod.to_dict()
        assert webhook.mutate(pod, AdmissionContext()) is None
        assert pod.to_dict() == before
    assert fake.calls == 0


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        # the pod's ReplicaSet does not exist (Kruise's "pod owner reference replicaset not found")
        (("apps/v1", "ReplicaSet", "web-2"), 'ReplicaSet.apps "web-2" not found'),
        (("batch/v1", "Job", "render"), 'Job.batch "render" not found'),
        (("apps.kruise.io/v1alpha1", "CloneSet", "cs"), 'CloneSet.apps.kruise.io "cs" not found'),
    ],
)
def test_a_pod_whose_owner_does_not_exist_is_refused_so_its_creator_retries(
    owner: tuple[str, str, str], message: str
) -> None:
    webhook, fake = webhook_world(spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b")))
    pod = rs_pod("web-2-aaaaa")
    ref_ = pod.metadata.owner_references[0]
    ref_.api_version, ref_.kind, ref_.name = owner
    before = pod.to_dict()
    outcome = webhook.mutate(pod, AdmissionContext())
    assert isinstance(outcome, Rejection)
    assert (outcome.code, outcome.reason) == (500, "InternalError")
    assert outcome.message == f'admission webhook "WorkloadSpread" denied the request: {message}'
    assert pod.to_dict() == before and fake.calls == 0


def test_a_missing_owner_further_up_the_chain_is_refused_but_the_target_itself_is_not_read() -> None:
    ws = spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b"))
    webhook, fake = webhook_world(ws)
    # ReplicaSet web-1 is controlled by Deployment web: the target, matched by reference even
    # when Deployment web does not exist (Kruise never reads the target itself)
    fake.cluster.delete(Deployment.KIND, "default/web")
    pod = rs_pod("web-1-aaaaa")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "subset-a"
    # a WorkloadSpread targeting another Deployment walks past web-1 to Deployment web, which
    # does not exist: refused, even though no WorkloadSpread would have taken the pod
    other = ws.copy()
    assert other.spec.target_ref is not None
    other.spec.target_ref.name = "api"
    fake.cluster.update(other)
    outcome = webhook.mutate(rs_pod("web-1-bbbbb"), AdmissionContext())
    assert isinstance(outcome, Rejection) and outcome.code == 500
    assert outcome.message.endswith('Deployment.apps "web" not found')


def test_owners_are_followed_by_name_in_the_webhook_and_by_uid_in_the_controller() -> None:
    cluster = owner_world()
    target = spread(subset("a", "zone-a")).spec.target_ref
    assert target is not None
    stale = ref("apps/v1", "ReplicaSet", "web-1", "other-uid")
    assert reference_equal(target, stale, "default", cluster.get) is True  # isReferenceEqual: by name
    assert not owner_chain_reaches(target, stale, "default", cluster.get)  # the controller: by uid
    missing_rs = ref("apps/v1", "ReplicaSet", "web-2", "x")
    assert reference_equal(target, missing_rs, "default", cluster.get) == MissingOwner(
        "apps/v1", "ReplicaSet", "web-2"
    )
    assert not owner_chain_reaches(target, missing_rs, "default", cluster.get)
    assert reference_equal(target, None, "default", cluster.get) is False


def test_an_inactive_pod_of_a_missing_owner_is_not_refused() -> None:
    webhook, _ = webhook_world(spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b")))
    pod = rs_pod("web-2-aaaaa")
    pod.metadata.owner_references[0].name = "web-2"
    pod.status.phase = "Succeeded"  # not active: skipped before any owner is read
    assert webhook.mutate(pod, AdmissionContext()) is None


def test_in_a_simulation_a_pod_of_a_missing_owner_is_refused_with_the_webhooks_message() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")), deployment(1))
    pod = rs_pod("lost-aaaaa")
    pod.metadata.owner_references[0].name = "lost"
    outcome = sim.create(pod)
    assert isinstance(outcome, Rejection) and outcome.code == 500
    assert outcome.message.endswith('ReplicaSet.apps "lost" not found')
    assert "default/lost-aaaaa" not in sim.cluster.pods


def test_a_conflicting_status_update_is_read_again_and_retried() -> None:
    def another_pod_booked(cluster: ClusterState) -> None:
        current = cluster.get(WorkloadSpread.KIND, WS_KEY)
        assert isinstance(current, WorkloadSpread)
        changed = current.copy()
        first = changed.status.subset_statuses[0]
        first.creating_pods = {**first.creating_pods, "web-1-other": timestamp(50)}
        first.missing_replicas -= 1
        cluster.update(changed)

    ws = spread(
        subset("subset-a", "zone-a", 3),
        subset("subset-b", "zone-b"),
        status=[missing("subset-a", 2), missing("subset-b", -1)],
    )
    webhook, fake = webhook_world(ws, conflicts=1, meanwhile=another_pod_booked)
    pod = rs_pod("web-1-mine")
    assert webhook.mutate(pod, AdmissionContext()) is None
    assert subset_of(pod) == "subset-a"
    assert webhook.conflicts == 1
    assert fake.calls == 2 and len(fake.writes) == 1
    a = statuses(fake.cluster)["subset-a"]
    assert a.creating_pods == {"web-1-other": timestamp(50), "web-1-mine": timestamp(100)}
    assert a.missing_replicas == 0


def test_a_status_that_keeps_conflicting_is_refused_with_409_after_5_tries() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 3),
        subset("subset-b", "zone-b"),
        status=[missing("subset-a", 2), missing("subset-b", -1)],
    )
    webhook, fake = webhook_world(ws, conflicts=1000)
    pod = rs_pod("web-1-mine")
    outcome = webhook.mutate(pod, AdmissionContext())
    assert isinstance(outcome, Rejection)
    assert (outcome.code, outcome.reason) == (409, "Conflict")
    assert fake.calls == 5 and webhook.conflicts == 5
    assert ANNOTATION_WORKLOADSPREAD not in pod.metadata.annotations
    assert statuses(fake.cluster)["subset-a"].missing_replicas == 2


def test_validate_delete_books_the_pod_in_deleting_pods_unless_already_recorded() -> None:
    booked = Matched("spread", "subset-a").to_json()
    ws = spread(
        subset("subset-a", "zone-a", 3),
        subset("subset-b", "zone-b"),
        status=[missing("subset-a", 0, creatingPods={"web-1-new": timestamp(90)}), missing("subset-b", -1)],
    )
    webhook, fake = webhook_world(ws)
    gone = rs_pod("web-1-old", {ANNOTATION_WORKLOADSPREAD: booked})
    assert webhook.validate(gone, AdmissionContext(operation=Operation.DELETE, old=gone)) is None
    a = statuses(fake.cluster)["subset-a"]
    assert a.deleting_pods == {"web-1-old": timestamp(100)}
    assert a.missing_replicas == 1
    # a pod still in creatingPods (or already in deletingPods) is not counted twice
    for name in ("web-1-new", "web-1-old"):
        pod = rs_pod(name, {ANNOTATION_WORKLOADSPREAD: booked})
        assert webhook.validate(pod, AdmissionContext(operation=Operation.DELETE, old=pod)) is None
    assert fake.calls == 1
    # a pod of the unbounded subset gives nothing back
    b_pod = rs_pod("web-1-b", {ANNOTATION_WORKLOADSPREAD: Matched("spread", "subset-b").to_json()})
    assert webhook.validate(b_pod, AdmissionContext(operation=Operation.DELETE, old=b_pod)) is None
    assert fake.calls == 1


def test_deleting_a_pod_whose_annotation_names_its_fields_in_capitals_gives_its_place_back() -> None:
    ws = spread(
        subset("subset-a", "zone-a", 3),
        subset("subset-b", "zone-b"),
        status=[missing("subset-a", 0), missing("subset-b", -1)],
    )
    webhook, fake = webhook_world(ws)
    # Kruise's "operation = delete, not matched workloadSpread subset": a subset that is not
    # there gives nothing back
    other = rs_pod("web-1-x", {ANNOTATION_WORKLOADSPREAD: '{"Name":"spread","Subset":"subset-x"}'})
    assert webhook.validate(other, AdmissionContext(operation=Operation.DELETE, old=other)) is None
    assert fake.calls == 0
    pod = rs_pod("web-1-old", {ANNOTATION_WORKLOADSPREAD: '{"Name":"spread","Subset":"subset-a"}'})
    assert webhook.validate(pod, AdmissionContext(operation=Operation.DELETE, old=pod)) is None
    a = statuses(fake.cluster)["subset-a"]
    assert (a.missing_replicas, a.deleting_pods) == (1, {"web-1-old": timestamp(100)})


# =========================================================================== webhook (in a simulation)
def test_pods_fill_the_subsets_in_order_and_the_rest_go_unchanged() -> None:
    # another scheduler: the pods stay Pending, so the controller cannot adopt the last one
    sim = simulation()
    start(
        sim,
        spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b", 1)),
        deployment(4, scheduler="elsewhere"),
    )
    pods = active_pods(sim)
    assert len(pods) == 4
    assert sorted(str(subset_of(p)) for p in pods) == ["None", "subset-a", "subset-a", "subset-b"]
    (left,) = pods_in(sim, None)
    assert ANNOTATION_WORKLOADSPREAD not in left.metadata.annotations
    assert left.spec.affinity is None  # no subset's term injected
    for p in pods_in(sim, "subset-b"):
        assert required_zones(p) == [["zone-b"]]
    after = statuses(sim)
    assert (after["subset-a"].replicas, after["subset-a"].missing_replicas) == (2, 0)
    assert (after["subset-b"].replicas, after["subset-b"].missing_replicas) == (1, 0)
    assert after["subset-a"].creating_pods == after["subset-b"].creating_pods == {}


@pytest.mark.parametrize("how", ["delete", "evict"])
def test_deleting_or_evicting_a_pod_gives_its_place_back_at_once(how: str) -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b")), deployment(3))
    assert statuses(sim)["subset-a"].missing_replicas == 0
    victim = pods_in(sim, "subset-a")[0]
    if how == "delete":
        assert sim.delete_pod(victim.key) is None
    else:
        assert sim.evict(victim.key, reason="Evicted", message="test") is None
    a = statuses(sim)["subset-a"]  # the webhook's write, before the controller runs
    assert a.deleting_pods == {victim.metadata.name: timestamp(sim.now)}
    assert a.missing_replicas == 1
    sim.run_until_quiet()
    a = statuses(sim)["subset-a"]
    assert (a.replicas, a.missing_replicas, a.deleting_pods) == (2, 0, {})
    assert len(pods_in(sim, "subset-a")) == 2 and victim.key not in {p.key for p in pods_in(sim, "subset-a")}


def test_deleting_a_pod_of_the_unbounded_subset_writes_nothing() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")), deployment(2))
    before = stored_spread(sim).metadata.resource_version
    sim.delete_pod(pods_in(sim, "subset-b")[0].key)
    assert stored_spread(sim).metadata.resource_version == before


@pytest.mark.parametrize(("flavour", "given_back"), [("proposal", 1), ("openkruise", 0)])
def test_a_pod_that_succeeds_gives_its_place_back_under_the_proposal(flavour: str, given_back: int) -> None:
    sim = simulation(flavour=flavour)
    start(sim, spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b")), deployment(3))
    assert statuses(sim)["subset-a"].missing_replicas == 0
    sim.set_pod_status(pods_in(sim, "subset-a")[0].key, "Succeeded")
    assert statuses(sim)["subset-a"].missing_replicas == given_back


@pytest.mark.parametrize(
    ("disable", "flavour", "chosen"),
    [(False, "proposal", "subset-b"), (True, "proposal", "subset-a"), (False, "openkruise", "subset-a")],
)
def test_adaptive_skips_a_subset_whose_nodes_cannot_take_the_pod(
    disable: bool, flavour: str, chosen: str
) -> None:
    sim = simulation(
        make_node("a1").zone("zone-a").capacity(cpu="500m"), make_node("b1").zone("zone-b"), flavour=flavour
    )
    strategy = {"type": "Adaptive", "adaptive": {"disableSimulationSchedule": disable}}
    start(
        sim,
        spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b"), strategy=strategy),
        deployment(1, cpu="1"),
    )
    (pod,) = active_pods(sim)
    assert subset_of(pod) == chosen
    assert bool(pod.spec.node_name) == (chosen == "subset-b")  # a1 has no room for it
    assert statuses(sim)["subset-a"].replicas == (1 if chosen == "subset-a" else 0)


def test_adaptive_takes_a_subset_whose_nodes_have_room() -> None:
    sim = simulation(make_node("a1").zone("zone-a").capacity(cpu="2"), make_node("b1").zone("zone-b"))
    strategy = {"type": "Adaptive", "adaptive": {"disableSimulationSchedule": False}}
    start(
        sim,
        spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b"), strategy=strategy),
        deployment(3, cpu="1"),
    )
    # two fit on a1; the third would not, but subset-a is full by then anyway
    assert [p.spec.node_name for p in pods_in(sim, "subset-a")] == ["a1", "a1"]
    assert [p.spec.node_name for p in pods_in(sim, "subset-b")] == ["b1"]


def spread_manifest(**target: str) -> dict[str, Any]:
    """WorkloadSpread spread (subset-a at most 1, subset-b) on Deployment web, ``target``'s
    fields changed."""
    d = spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")).to_dict()
    d["spec"]["targetRef"].update(target)
    return d


def node_manifest(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {ZONE: zone}}}


def run_steps(*steps: dict[str, Any]) -> list[list[dict[str, str]]]:
    """A scenario on nodes a1 (zone-a) and b1 (zone-b) that applies Deployment web (2) and the
    WorkloadSpread, then ``steps``: each step's rejections."""
    doc = {
        "apiVersion": "kubespread.io/v1alpha1",
        "kind": "Scenario",
        "cluster": [node_manifest("a1", "zone-a"), node_manifest("b1", "zone-b")],
        "steps": [{"apply": [deployment(2).to_dict(), spread_manifest()]}, *steps],
    }
    result = simulate_scenario(parse_scenario(doc))
    assert result.steps[0].rejections == []
    return [[r.to_dict() for r in step.rejections] for step in result.steps[1:]]


TARGET_REF_CHANGED = (
    "spec.targetRef: Invalid value: {json}: change TargetReference is not permitted for WorkloadSpread"
)


def test_a_scenario_may_not_change_a_workload_spreads_target_ref_by_apply_or_set() -> None:
    ws_ref = "WorkloadSpread default/spread"
    set_ = {"kind": "WorkloadSpread", "namespace": "default", "name": "spread"}
    rejections = run_steps(
        {"apply": spread_manifest(name="api")},
        {"set": {**set_, "path": "spec.targetRef.kind", "value": "ReplicaSet"}},
        # the version may change within the group (OpenKruise compares group, kind and name)
        {"set": {**set_, "path": "spec.targetRef.apiVersion", "value": "apps/v1beta2"}},
        # reported with the spec's own problems, as Kruise's webhook aggregates them
        {"set": {**set_, "path": "spec.targetRef.apiVersion", "value": "apps.kruise.io/v1alpha1"}},
    )
    refs = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web"},
    ]
    for got, ref_ in zip(rejections[:2], refs, strict=True):
        message = TARGET_REF_CHANGED.format(json=json.dumps(ref_, separators=(",", ":")))
        assert got == [{"object": ws_ref, "message": f"{ws_ref} is invalid: {message}"}], got
    assert rejections[2] == []
    kruise = json.dumps(
        {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "Deployment", "name": "web"}, separators=(",", ":")
    )
    assert rejections[3] == [
        {
            "object": ws_ref,
            "message": f"{ws_ref} is invalid: spec.targetRef: Invalid value: {kruise}: "
            f"TargetReference is not valid for Deployment.; {TARGET_REF_CHANGED.format(json=kruise)}",
        }
    ]


def test_the_target_ref_check_leaves_the_stored_workload_spread_as_it_was() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")), deployment(2))
    before = stored_spread(sim).to_dict()
    step = parse_scenario(
        {
            "apiVersion": "kubespread.io/v1alpha1",
            "kind": "Scenario",
            "steps": [{"apply": spread_manifest(name="api")}],
        }
    ).steps[0]
    (rejection,) = run_step(sim, step)
    assert "change TargetReference is not permitted for WorkloadSpread" in rejection.message
    assert stored_spread(sim).to_dict() == before


def test_a_second_workloadspread_on_the_same_workload_is_refused() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 2)), deployment(1))
    refused = sim.create(spread(subset("subset-a", "zone-a", 1), name="another"))
    assert isinstance(refused, Rejection)
    assert refused.code == 422
    assert "conflict with other WorkloadSpread spread" in refused.message
    assert [c["field"] for c in refused.causes] == ["spec.targetRef"]
    assert sim.cluster.get(WorkloadSpread.KIND, "default/another") is None
    # another workload may have its own
    other = spread(subset("subset-a", "zone-a", 1), name="another")
    assert other.spec.target_ref is not None
    other.spec.target_ref.name = "api"
    assert isinstance(sim.create(other), WorkloadSpread)


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        (
            {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "-1"}}}]}},
            "greater than",
        ),
        (
            {"spec": {"containers": [{"name": "main", "resources": {"limits": {"memory": "lots"}}}]}},
            "quantities",
        ),
        ({"spec": {"containers": [{"name": "main", "image": ""}]}}, "image"),
        ({"metadata": {"labels": {"tier": "not a label!"}}}, "valid label"),
        (  # a mount of a volume the template does not declare
            {
                "spec": {
                    "containers": [{"name": "main", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]
                }
            },
            'spec.containers[0].volumeMounts[0].name: Not found: "data"',
        ),
    ],
)
def test_a_subset_patch_that_makes_the_pod_invalid_is_refused(patch: dict[str, Any], fragment: str) -> None:
    sim = simulation()
    assert isinstance(sim.create(deployment(1)), Deployment)
    refused = sim.create(spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b", patch=patch)))
    assert isinstance(refused, Rejection), refused
    assert refused.code == 422
    assert refused.causes and all(c["field"].startswith("spec.subsets[1].patch") for c in refused.causes)
    assert fragment in refused.message
    assert sim.cluster.get(WorkloadSpread.KIND, WS_KEY) is None


def test_a_subset_patch_that_keeps_the_pod_valid_is_accepted_and_applied() -> None:
    sim = simulation()
    patch = {
        "metadata": {"labels": {"tier": "b"}},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}]},
    }
    start(
        sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b", patch=patch)), deployment(2)
    )
    (b,) = pods_in(sim, "subset-b")
    assert b.metadata.labels["tier"] == "b" and b.metadata.labels["app"] == "web"
    assert b.spec.containers[0].resources.to_dict() == {"limits": {"cpu": "2"}}
    (a,) = pods_in(sim, "subset-a")
    assert "tier" not in a.metadata.labels


def test_a_subset_patch_may_mount_a_volume_it_declares() -> None:
    sim = simulation()
    mount = {"name": "data", "mountPath": "/d"}
    patch = {
        "spec": {
            "volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [{"name": "main", "volumeMounts": [mount]}],
        }
    }
    start(
        sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b", patch=patch)), deployment(2)
    )
    (b,) = pods_in(sim, "subset-b")
    assert b.spec.containers[0].extra["volumeMounts"] == [mount]


def _claim_workload(kind: str, claim: str) -> KubeObject:
    """Kruise's Test_validateWorkloadSpreadSubsets workloads: a CloneSet or StatefulSet whose
    container mounts ``vol-1--0``, which only a volumeClaimTemplate (named ``claim``) provides."""
    tmpl = template()
    tmpl["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "vol-1--0", "mountPath": "/logs", "subPath": "logs"}
    ]
    spec = {
        "replicas": 6,
        "selector": {"matchLabels": {"app": "web"}},
        "template": tmpl,
        "volumeClaimTemplates": [{"metadata": {"name": claim}}],
    }
    if kind == "CloneSet":
        return CloneSet.from_dict(
            {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": kind,
                "metadata": {"name": "web", "namespace": "default"},
                "spec": spec,
            }
        )
    spec["serviceName"] = "web"
    return StatefulSet.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }
    )


ANNOTATION_PATCH = {"metadata": {"annotations": {"some-key": "some-value"}}}


@pytest.mark.parametrize("kind", ["CloneSet", "StatefulSet"])
def test_a_subset_patch_on_a_workload_mounting_a_claim_volume_is_valid(kind: str) -> None:
    """Kruise's "good cloneset" / "good sts": the patched template is validated with a volume
    per volumeClaimTemplate, so the mount of the claim's volume is not an unknown volume."""
    sim = simulation()
    workload = _claim_workload(kind, "vol-1--0")
    assert isinstance(sim.create(workload), type(workload))
    ws = spread(subset("test", "zone-a", patch=ANNOTATION_PATCH), kind=kind)
    assert isinstance(sim.create(ws), WorkloadSpread)


@pytest.mark.parametrize("kind", ["CloneSet", "StatefulSet"])
def test_a_subset_patch_on_a_workload_mounting_a_volume_nothing_provides_is_refused(kind: str) -> None:
    """Kruise's "bad cloneset" / "bad sts" (the claim is "bad-boy"): one error, the mount of an
    unknown volume in the patched pod. The workload is put in the cluster directly: the API
    server (or Kruise's CloneSet webhook) would have refused it."""
    sim = simulation()
    workload = _claim_workload(kind, "bad-boy")
    workload.metadata.uid = "uid-web"
    sim.cluster.add(workload)
    refused = sim.create(spread(subset("test", "zone-a", patch=ANNOTATION_PATCH), kind=kind))
    assert isinstance(refused, Rejection), refused
    assert [c["field"] for c in refused.causes] == ["spec.subsets[0].patch"]
    assert 'volumeMounts[0].name: Not found: "vol-1--0"' in refused.message


def test_a_clone_set_may_mount_the_volume_of_its_claim_template() -> None:
    """Kruise's CloneSet webhook counts volumeClaimTemplates as volumes of the template."""
    sim = simulation()
    assert isinstance(sim.create(_claim_workload("CloneSet", "vol-1--0")), CloneSet)
    refused = sim.create(_claim_workload("CloneSet", "bad-boy"))
    assert isinstance(refused, Rejection)
    assert [c["field"] for c in refused.causes] == ["spec.template.spec.containers[0].volumeMounts[0].name"]


# =========================================================================== controller
def test_status_counts_each_subsets_active_pods_and_what_it_still_misses() -> None:
    sim = simulation(
        make_node("a1").zone("zone-a"), make_node("b1").zone("zone-b"), make_node("c1").zone("zone-c")
    )
    names = ("subset-a", "subset-b", "subset-c")
    start(
        sim,
        spread(
            subset("subset-a", "zone-a", "40%"),
            subset("subset-b", "zone-b", "50%"),
            subset("subset-c", "zone-c"),
        ),
        deployment(3),
    )
    # 40% of 3 → 2, 50% of 3 → 2: subset-b still misses one
    after = statuses(sim)
    assert [(after[n].replicas, after[n].missing_replicas) for n in names] == [(2, 0), (1, 1), (0, -1)]
    assert [len(pods_in(sim, n)) for n in names] == [2, 1, 0]
    scale(sim, Deployment.KIND, 10)  # 40% → 4, 50% → 5, the last one to subset-c
    sim.run_until_quiet()
    bounds = {"subset-a": 4, "subset-b": 5, "subset-c": None}
    after = statuses(sim)
    assert list(after) == list(bounds)
    for name, bound in bounds.items():
        active = len(pods_in(sim, name))
        assert after[name].replicas == active
        assert after[name].missing_replicas == (-1 if bound is None else max(bound - active, 0))
        assert after[name].creating_pods == {} and after[name].deleting_pods == {}
    assert [after[n].replicas for n in names] == [4, 5, 1]
    scale(sim, Deployment.KIND, 2)  # 40% → 1, 50% → 1: the surplus (-100) and subset-c (0) go
    sim.run_until_quiet()
    after = statuses(sim)
    assert [(after[n].replicas, after[n].missing_replicas) for n in names] == [(1, 0), (1, 0), (0, -1)]
    assert [len(pods_in(sim, n)) for n in names] == [1, 1, 0]


def test_the_controllers_status_write_leaves_the_object_it_read_unchanged() -> None:
    sim = simulation()
    assert isinstance(
        sim.create(spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b"))), WorkloadSpread
    )
    stale = stored_spread(sim)  # a reader's object, before the controller's first sync
    read_at = stale.metadata.resource_version
    sim.run_until_quiet()
    assert statuses(sim)["subset-a"].missing_replicas == 2  # the controller wrote the status
    assert stored_spread(sim).metadata.resource_version != read_at
    assert stale.metadata.resource_version == read_at
    assert stale.status.subset_statuses == []
    with pytest.raises(Conflict):
        sim.update(stale.copy(), precondition=True)  # a write from a stale read must conflict


def test_a_creating_pod_that_never_appears_is_dropped_after_30_seconds() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 3), subset("subset-b", "zone-b")), deployment(2))
    assert statuses(sim)["subset-a"].missing_replicas == 1

    def book_a_ghost(ws: WorkloadSpread) -> None:
        a = ws.status.subset_statuses[0]
        a.creating_pods = {"ghost": timestamp(sim.now)}
        a.missing_replicas -= 1

    booked_at = sim.now
    update_spread(sim, book_a_ghost)
    sim.run_until_quiet()
    a = statuses(sim)["subset-a"]
    assert (a.creating_pods, a.missing_replicas) == ({"ghost": timestamp(booked_at)}, 0)
    sim.advance(29)
    assert statuses(sim)["subset-a"].creating_pods == {"ghost": timestamp(booked_at)}
    assert ws_events(sim, "CreatePodFailed") == []
    sim.advance(1)
    a = statuses(sim)["subset-a"]
    assert (a.creating_pods, a.missing_replicas) == ({}, 1)
    (event,) = ws_events(sim, "CreatePodFailed")
    assert event.type == "Warning" and "default/ghost" in event.message


def test_deletion_costs_follow_the_proposal_and_a_lowered_bound_marks_the_surplus() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 3), subset("subset-b", "zone-b")), deployment(5))
    assert costs_by_subset(sim) == {"subset-a": ["100", "100", "100"], "subset-b": [None, None]}
    names = sorted(p.metadata.name for p in active_pods(sim))

    def lower(ws: WorkloadSpread) -> None:
        ws.spec.subsets[0].max_replicas = 1

    update_spread(sim, lower)
    sim.run_until_quiet()
    assert sorted(p.metadata.name for p in active_pods(sim)) == names  # nothing recreated
    assert costs_by_subset(sim) == {"subset-a": ["-100", "-100", "100"], "subset-b": [None, None]}
    a = statuses(sim)["subset-a"]
    assert (a.replicas, a.missing_replicas) == (3, 0)
    # the scale-down takes subset-a's surplus first, then the unbounded subset's pods
    scale(sim, Deployment.KIND, 3)
    sim.run_until_quiet()
    assert costs_by_subset(sim) == {"subset-a": ["100"], "subset-b": [None, None]}


def test_pods_of_no_subset_cost_minus_100() -> None:
    sim = simulation()
    start(
        sim,
        spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b", 1)),
        deployment(4, scheduler="elsewhere"),
    )
    assert costs_by_subset(sim) == {"subset-a": ["100", "100"], "subset-b": ["100"], None: ["-100"]}


def test_an_unbounded_subsets_pods_cost_0() -> None:
    sim = simulation()
    start(sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")), deployment(3))
    b_pods = pods_in(sim, "subset-b")
    assert len(b_pods) == 2
    assert all(cost(p) in (None, "0") for p in b_pods)


def test_openkruise_flavour_grades_the_costs_by_subset_index() -> None:
    sim = simulation(flavour="openkruise")
    start(
        sim,
        spread(subset("subset-a", "zone-a", 3), subset("subset-b", "zone-b", 1)),
        deployment(5, scheduler="elsewhere"),
    )
    # n = 2: subset 0 within → 200, subset 1 within → 100, no subset → -100·3
    assert costs_by_subset(sim) == {"subset-a": ["200", "200", "200"], "subset-b": ["100"], None: ["-300"]}

    def lower(ws: WorkloadSpread) -> None:
        ws.spec.subsets[0].max_replicas = 1

    update_spread(sim, lower)
    sim.run_until_quiet()
    # subset 0's surplus → -100·1
    assert costs_by_subset(sim) == {"subset-a": ["-100", "-100", "200"], "subset-b": ["100"], None: ["-300"]}


def test_openkruise_flavour_gives_an_unbounded_subset_a_positive_cost() -> None:
    sim = simulation(flavour="openkruise")
    start(sim, spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b")), deployment(3))
    assert costs_by_subset(sim) == {"subset-a": ["200"], "subset-b": ["100", "100"]}


def test_running_pods_are_adopted_into_the_subset_their_node_matches() -> None:
    sim = simulation(
        make_node("a1").zone("zone-a"), make_node("b1").zone("zone-b"), make_node("c1").zone("zone-c")
    )
    assert isinstance(sim.create(deployment(6)), Deployment)
    sim.run_until_quiet()
    nodes = {p.key: p.spec.node_name for p in active_pods(sim)}
    assert all(ANNOTATION_WORKLOADSPREAD not in p.metadata.annotations for p in active_pods(sim))
    assert {"a1", "b1", "c1"} <= set(nodes.values())
    assert isinstance(
        sim.create(spread(subset("subset-a", "zone-a", 10), subset("subset-b", "zone-b"))), WorkloadSpread
    )
    sim.run_until_quiet()
    expected = {"a1": "subset-a", "b1": "subset-b", "c1": None}
    for pod in active_pods(sim):
        assert nodes[pod.key] == pod.spec.node_name  # the same pods, annotated in place
        assert subset_of(pod) == expected[pod.spec.node_name]
    on_a = sum(n == "a1" for n in nodes.values())
    on_b = sum(n == "b1" for n in nodes.values())
    after = statuses(sim)
    assert (after["subset-a"].replicas, after["subset-a"].missing_replicas) == (on_a, 10 - on_a)
    assert (after["subset-b"].replicas, after["subset-b"].missing_replicas) == (on_b, -1)
    assert costs_by_subset(sim)[None] == ["-100"] * (6 - on_a - on_b)


def test_adoption_prefers_the_subset_whose_preferred_terms_the_node_matches_and_applies_its_labels() -> None:
    sim = simulation(make_node("a1").zone("zone-a").label("disk", "ssd"), make_node("b1").zone("zone-b"))
    assert isinstance(sim.create(deployment(4)), Deployment)
    sim.run_until_quiet()
    on_a = sorted(p.key for p in active_pods(sim) if p.spec.node_name == "a1")
    assert on_a
    ssd = {
        "weight": 1,
        "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
    }
    ws = spread(
        subset("plain", "zone-a", 5),
        subset(
            "fast",
            "zone-a",
            5,
            preferredNodeSelectorTerms=[ssd],
            patch={"metadata": {"labels": {"tier": "x"}}},
        ),
        subset("subset-b", "zone-b", 5),
    )
    assert isinstance(sim.create(ws), WorkloadSpread)
    sim.run_until_quiet()
    assert sorted(p.key for p in pods_in(sim, "fast")) == on_a
    assert pods_in(sim, "plain") == []
    assert all(p.metadata.labels.get("tier") == "x" for p in pods_in(sim, "fast"))
    assert all("tier" not in p.metadata.labels for p in pods_in(sim, "subset-b"))
    assert statuses(sim)["fast"].replicas == len(on_a)


def adaptive_sim(flavour: str = "proposal") -> Simulation:
    """zone-a's a1 has room for one 400m pod, subset-a wants 3; the webhook does not check."""
    sim = simulation(
        make_node("a1").zone("zone-a").capacity(cpu="500m"), make_node("b1").zone("zone-b"), flavour=flavour
    )
    start(
        sim,
        spread(subset("subset-a", "zone-a", 3), subset("subset-b", "zone-b"), strategy=ADAPTIVE_NO_CHECK),
        deployment(3, cpu="400m"),
    )
    return sim


def unscheduled(sim: Simulation, name: str) -> Any:
    return statuses(sim)[name].subset_unscheduled_status


def test_adaptive_reschedules_pods_pending_too_long_into_the_next_subset() -> None:
    sim = adaptive_sim()
    pending = [p for p in pods_in(sim, "subset-a") if not p.spec.node_name]
    assert len(pending) == 2 and len(pods_in(sim, "subset-a")) == 3
    sim.advance(29)
    assert sorted(p.key for p in pods_in(sim, "subset-a") if not p.spec.node_name) == sorted(
        p.key for p in pending
    )
    assert unscheduled(sim, "subset-a") is None
    sim.advance(1)
    sim.run_until_quiet()
    live = {p.key for p in active_pods(sim)}
    assert not live & {p.key for p in pending}
    u = unscheduled(sim, "subset-a")
    assert u is not None and u.unschedulable is True and u.failed_count == 1
    assert u.unscheduled_time == timestamp(30)
    assert [p.spec.node_name for p in pods_in(sim, "subset-a")] == ["a1"]
    assert [p.spec.node_name for p in pods_in(sim, "subset-b")] == ["b1", "b1"]
    assert len(ws_events(sim, "RescheduleUnschedulablePod")) == 2
    assert len(ws_events(sim, "SubsetUnschedulable")) == 1


@pytest.mark.parametrize(("flavour", "recovery"), [("proposal", 600), ("openkruise", 300)])
def test_an_unschedulable_subset_recovers_after_the_window(flavour: str, recovery: int) -> None:
    sim = adaptive_sim(flavour)
    sim.advance(30)
    sim.run_until_quiet()
    assert unscheduled(sim, "subset-a").unschedulable is True
    sim.advance(recovery - 1)
    assert unscheduled(sim, "subset-a").unschedulable is True
    sim.advance(1)
    u = unscheduled(sim, "subset-a")
    assert u.unschedulable is False and u.failed_count == 1
    assert len(ws_events(sim, "RecoverSchedulable")) == 1


def test_the_last_subset_is_never_marked_unschedulable() -> None:
    sim = simulation(
        make_node("a1").zone("zone-a").capacity(cpu="500m"),
        make_node("b1").zone("zone-b").capacity(cpu="500m"),
    )
    start(
        sim,
        spread(subset("subset-a", "zone-a", 1), subset("subset-b", "zone-b"), strategy=ADAPTIVE_NO_CHECK),
        deployment(3, cpu="400m"),
    )
    stuck = [p.key for p in pods_in(sim, "subset-b") if not p.spec.node_name]
    assert len(stuck) == 1 and len(pods_in(sim, "subset-b")) == 2
    sim.advance(120)
    assert unscheduled(sim, "subset-b") is None
    assert unscheduled(sim, "subset-a") is None
    assert [p.key for p in pods_in(sim, "subset-b") if not p.spec.node_name] == stuck  # not deleted
    assert ws_events(sim, "SubsetUnschedulable") == [] and ws_events(sim, "RescheduleUnschedulablePod") == []


def test_a_cloneset_target_gets_deletion_costs_and_scales_down_the_unbounded_subset_first() -> None:
    sim = simulation()
    start(
        sim,
        spread(subset("subset-a", "zone-a", 2), subset("subset-b", "zone-b"), kind="CloneSet"),
        clone_set(4),
    )
    assert costs_by_subset(sim) == {"subset-a": ["100", "100"], "subset-b": [None, None]}
    kept = sorted(p.key for p in pods_in(sim, "subset-a"))
    scale(sim, CloneSet.KIND, 2)
    sim.run_until_quiet()
    assert sorted(p.key for p in active_pods(sim)) == kept
    after = statuses(sim)
    assert (after["subset-a"].replicas, after["subset-b"].replicas) == (2, 0)


# =========================================================================== targetFilter
def _filtered(replicas_path: str | None = None, **selector: Any) -> WorkloadSpread:
    ws = spread(subset("subset-a", "zone-a", "50%"), subset("subset-b", "zone-b"))
    d = ws.to_dict()
    d["spec"]["targetFilter"] = {"selector": {"matchLabels": selector}}
    if replicas_path is not None:
        d["spec"]["targetFilter"]["replicasPathList"] = [replicas_path]
    return WorkloadSpread.from_dict(d)


def test_a_target_filter_leaves_the_pods_it_does_not_select_alone() -> None:
    """Kruise's IsPodSelected: only the target's pods the filter selects are booked in a subset
    and counted; here it selects none of the Deployment's (app=web) pods."""
    sim = simulation()
    start(sim, _filtered(app="other"), deployment(4))
    assert all(subset_of(p) is None for p in active_pods(sim))
    assert {name: s.missing_replicas for name, s in statuses(sim).items()} == {"subset-a": 2, "subset-b": -1}


def test_a_target_filter_selecting_the_pods_spreads_them() -> None:
    sim = simulation()
    start(sim, _filtered(app="web"), deployment(4))
    assert len(pods_in(sim, "subset-a")) == 2 and len(pods_in(sim, "subset-b")) == 2


def test_replicas_path_list_is_what_percentages_are_of() -> None:
    """GetReplicasFromWorkloadWithTargetFilter: the integers at the paths, summed, replace the
    workload's replicas. spec.replicas (4): subset-a's 50% is 2 pods. A path that leads to no
    integer counts 0, so 50% is 0 and subset-b (unbounded) takes all four."""
    sim = simulation()
    start(sim, _filtered("spec.replicas", app="web"), deployment(4))
    assert len(pods_in(sim, "subset-a")) == 2
    sim = simulation()
    start(sim, _filtered("spec.template.spec.containers.0.ports.0.containerPort", app="web"), deployment(4))
    assert len(pods_in(sim, "subset-a")) == 0 and len(pods_in(sim, "subset-b")) == 4


def test_a_target_filter_whose_selector_does_not_parse_is_refused() -> None:
    ws = _filtered(app="web").to_dict()
    ws["spec"]["targetFilter"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Nope"}]}
    refused = simulation().create(WorkloadSpread.from_dict(ws))
    assert isinstance(refused, Rejection)
    assert [c["field"] for c in refused.causes] == ["spec.targetFilter"]
