"""``WorkloadRef`` and ``Ownership``: one walk of the controller chain, and the same two
meanings (``workload`` the controller, ``owner`` the top) in every JSON row."""

from __future__ import annotations

from typing import Any

from builders import ZONE, cluster_of, make_node, make_pod
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.cluster.workloads import NO_OWNER, Ownership, WorkloadRef, controller_of, ownership
from kubespread.sim.run import simulate
from kubespread.sim.scenario import parse_scenario


def _rs(name: str, namespace: str = "shop", deployment: str | None = "checkout") -> ReplicaSet:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"{name}-uid"}
    if deployment:
        ref = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment,
            "uid": "d",
            "controller": True,
        }
        meta["ownerReferences"] = [ref]
    return ReplicaSet.from_dict(
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": {"selector": {}}}
    )


def _deploy(name: str = "checkout", namespace: str = "shop") -> Deployment:
    return Deployment.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "uid": "d"},
            "spec": {"selector": {}, "template": {}},
        }
    )


def _pod(
    name: str, kind: str | None = "ReplicaSet", owner: str = "checkout-1", namespace: str = "shop"
) -> Any:
    p = make_pod(name).set("metadata.namespace", namespace)
    if kind:
        ref = {
            "apiVersion": "apps/v1",
            "kind": kind,
            "name": owner,
            "uid": f"{owner}-uid",
            "controller": True,
        }
        p = p.set("metadata.ownerReferences", [ref])
    return p.obj()


def test_the_short_form_is_the_tables_spelling() -> None:
    assert WorkloadRef("shop", "Deployment", "checkout").short == "deploy/shop/checkout"
    assert WorkloadRef("default", "ReplicaSet", "web-1").short == "rs/web-1"
    assert WorkloadRef("default", "CronJob", "nightly").short == "cronjob/nightly"
    ref = WorkloadRef("shop", "StatefulSet", "db")
    assert ref.key == "shop/StatefulSet/db" and WorkloadRef.parse(ref.key) == ref


def test_refs_order_by_namespace_kind_name() -> None:
    refs = [WorkloadRef("b", "A", "a"), WorkloadRef("a", "B", "a"), WorkloadRef("a", "A", "b")]
    assert sorted(refs) == [
        WorkloadRef("a", "A", "b"),
        WorkloadRef("a", "B", "a"),
        WorkloadRef("b", "A", "a"),
    ]


def test_a_replicaset_pod_is_controlled_by_it_and_owned_by_its_deployment() -> None:
    pod = _pod("checkout-1-x")
    cluster = cluster_of([make_node("n1")], [pod], objects=[_deploy(), _rs("checkout-1")])
    rs, deploy = (
        WorkloadRef("shop", "ReplicaSet", "checkout-1"),
        WorkloadRef("shop", "Deployment", "checkout"),
    )
    assert ownership(cluster, pod) == Ownership(rs, deploy)
    assert controller_of(pod) == rs


def test_the_top_stops_at_the_controller_when_nothing_controls_it_or_it_is_missing() -> None:
    bare_rs = _rs("solo", deployment=None)
    pod, orphan = _pod("solo-x", owner="solo"), _pod("gone-x", owner="gone")
    cluster = cluster_of([make_node("n1")], [pod, orphan], objects=[bare_rs])
    solo = WorkloadRef("shop", "ReplicaSet", "solo")
    assert ownership(cluster, pod) == Ownership(solo, solo)
    gone = WorkloadRef("shop", "ReplicaSet", "gone")
    assert ownership(cluster.get, orphan) == Ownership(gone, gone)  # a lookup works as the cluster


def test_a_pod_without_a_controller_has_no_owner() -> None:
    pod = _pod("plain", kind=None)
    assert ownership(cluster_of([make_node("n1")], [pod]), pod) == NO_OWNER
    assert controller_of(pod) is None


def test_pod_rows_and_spread_rows_give_workload_and_owner_one_meaning() -> None:
    """``workload`` is the controller and ``owner`` the top owner in both row kinds."""
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    spread["labelSelector"] = {"matchLabels": {"app": "web"}}
    web = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx"}],
                    "topologySpreadConstraints": [spread],
                },
            },
        },
    }
    nodes = [make_node(f"{z}1").zone(f"zone-{z}").dict() for z in "ab"]
    doc = {"apiVersion": "kubespread.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "w"}}
    final = simulate(parse_scenario({**doc, "cluster": nodes, "steps": [{"apply": web}]})).final.to_dict()
    (row,) = [r for r in final["distribution"] if r["topologyKey"] == ZONE]
    controller = row["workload"]
    assert controller["kind"] == "ReplicaSet" and row["owner"] == {"kind": "Deployment", "name": "web"}
    assert final["pods"]
    for pod in final["pods"]:
        assert pod["workload"] == {"kind": "ReplicaSet", "name": controller["name"]}
        assert pod["owner"] == row["owner"]
