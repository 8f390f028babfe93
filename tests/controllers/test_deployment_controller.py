"""The Deployment controller: the pod-template-hash ReplicaSet, RollingUpdate within its bounds
(and stuck where the real one is stuck), Recreate, proportional scaling, history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builders import HOSTNAME, cluster_of, make_node
from kubespread.api.apps import Deployment, ReplicaSet
from kubespread.api.keys import LABEL_POD_TEMPLATE_HASH
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.deployment import (
    ANNOTATION_REVISION,
    ANNOTATION_REVISION_HISTORY,
    DeploymentController,
    resolve_fenceposts,
)
from kubespread.controllers.pods import is_active, is_ready, template_hash
from kubespread.controllers.replicaset import ReplicaSetController
from kubespread.sim.engine import Simulation

SAFE = set("bcdfghjklmnpqrstvwxz2456789")


def deployment(replicas: int = 3, *, strategy: dict[str, Any] | None = None, **spec: Any) -> Deployment:
    d: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            **spec,
        },
    }
    if strategy is not None:
        d["spec"]["strategy"] = strategy
    return Deployment.from_dict(d)


def simulation(nodes: int = 3, **kw: Any) -> Simulation:
    return Simulation(
        cluster_of([make_node(f"n{i}") for i in range(nodes)]),
        controllers=[DeploymentController(), ReplicaSetController()],
        **kw,
    )


def change(sim: Simulation, edit: Any) -> None:
    d = sim.cluster.get("Deployment", "default/web").copy()
    edit(d)
    sim.update(d)


def set_image(image: str) -> Any:
    def edit(d: Deployment) -> None:
        d.spec.template.spec.containers[0].image = image

    return edit


def replica_sets(sim: Simulation) -> dict[str, ReplicaSet]:
    return {rs.metadata.name: rs for rs in sim.cluster.objects("ReplicaSet").values()}  # type: ignore[misc]


def pods_of(sim: Simulation, rs: ReplicaSet, *, live: bool = True) -> list[str]:
    return sorted(p.metadata.name for p in sim.pods_of(rs.metadata.uid) if not live or not p.is_terminating)


def scaling_messages(sim: Simulation) -> list[str]:
    return [e.message for e in sim.events if e.reason == "ScalingReplicaSet"]


def test_creation_makes_the_hash_named_replica_set_and_labelled_pods() -> None:
    sim = simulation()
    d = sim.create(deployment())
    assert isinstance(d, Deployment)
    sim.run_until_quiet()
    pod_hash = template_hash(d.spec.template)
    assert set(pod_hash) <= SAFE and 1 <= len(pod_hash) <= 10
    (rs,) = replica_sets(sim).values()
    assert rs.metadata.name == f"web-{pod_hash}"
    assert rs.spec.replicas == 3
    assert rs.spec.selector.match_labels == {"app": "web", LABEL_POD_TEMPLATE_HASH: pod_hash}
    assert rs.spec.template.metadata.labels == {"app": "web", LABEL_POD_TEMPLATE_HASH: pod_hash}
    assert rs.metadata.annotations[ANNOTATION_REVISION] == "1"
    ref = rs.metadata.controller_ref()
    assert ref is not None and (ref.kind, ref.uid) == ("Deployment", d.metadata.uid)
    pods = list(sim.cluster.pods.values())
    assert len(pods) == 3
    assert all(p.metadata.labels[LABEL_POD_TEMPLATE_HASH] == pod_hash and p.spec.node_name for p in pods)
    assert scaling_messages(sim) == [f"Scaled up replica set web-{pod_hash} from 0 to 3"]
    stored = sim.cluster.get("Deployment", "default/web")
    assert stored.metadata.annotations[ANNOTATION_REVISION] == "1"
    assert stored.status["availableReplicas"] == stored.status["updatedReplicas"] == 3


def test_the_hash_follows_the_template() -> None:
    a, b = deployment(), deployment()
    b.spec.template.spec.containers[0].image = "nginx:2"
    assert template_hash(a.spec.template) == template_hash(deployment().spec.template)
    assert template_hash(a.spec.template) != template_hash(b.spec.template)
    assert template_hash(a.spec.template, 1) != template_hash(a.spec.template)
    # the hash label itself (the ReplicaSet's template) does not change it
    labelled = a.spec.template.copy()
    labelled.metadata.labels[LABEL_POD_TEMPLATE_HASH] = "x"
    assert template_hash(labelled) == template_hash(a.spec.template)


@pytest.mark.slow
def test_the_hash_is_identical_in_fresh_processes() -> None:
    template = deployment().spec.template
    script = (
        "import json, sys\n"
        "from kubespread.api.core import PodTemplateSpec\n"
        "from kubespread.controllers.pods import template_hash\n"
        "print(template_hash(PodTemplateSpec.from_dict(json.loads(sys.argv[1]))))\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": src}
        run = subprocess.run(
            [sys.executable, "-c", script, json.dumps(template.to_dict())],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(run.stdout.strip())
    assert outputs == {template_hash(template)}


def test_fenceposts_round_surge_up_and_unavailable_down() -> None:
    assert resolve_fenceposts(deployment(3)) == (1, 0)
    assert resolve_fenceposts(deployment(10)) == (3, 2)
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}
    assert resolve_fenceposts(deployment(3, strategy=rolling)) == (0, 1)  # both 0: one may be unavailable
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 2}}
    assert resolve_fenceposts(deployment(3, strategy=rolling)) == (2, 2)


def test_rolling_update_stays_within_surge_and_unavailability() -> None:
    sim = simulation()
    sim.create(deployment(3))
    sim.run_until_quiet()
    (old,) = replica_sets(sim).values()
    worst = {"most": 0, "fewest_available": 3}

    def watch(event: ClusterEvent) -> None:
        if event.kind != "Pod":
            return
        pods = [p for p in sim.cluster.pods.values() if is_active(p)]
        available = [p for p in pods if p.spec.node_name and p.status.phase == "Running" and is_ready(p)]
        worst["most"] = max(worst["most"], len(pods))
        worst["fewest_available"] = min(worst["fewest_available"], len(available))

    sim.cluster.subscribe(watch)
    change(sim, set_image("nginx:2"))
    sim.run_until_quiet()
    # 3 replicas: maxSurge 25% -> 1, maxUnavailable 25% -> 0
    assert worst == {"most": 4, "fewest_available": 3}
    rss = replica_sets(sim)
    (new,) = (rs for name, rs in rss.items() if name != old.metadata.name)
    assert rss[old.metadata.name].spec.replicas == 0
    assert pods_of(sim, rss[old.metadata.name], live=False) == []
    assert len(pods_of(sim, new)) == 3 and new.spec.replicas == 3
    assert new.metadata.annotations[ANNOTATION_REVISION] == "2"
    assert scaling_messages(sim)[1:] == [
        f"Scaled up replica set {new.metadata.name} from 0 to 1",
        f"Scaled down replica set {old.metadata.name} from 3 to 2",
        f"Scaled up replica set {new.metadata.name} from 1 to 2",
        f"Scaled down replica set {old.metadata.name} from 2 to 1",
        f"Scaled up replica set {new.metadata.name} from 2 to 3",
        f"Scaled down replica set {old.metadata.name} from 1 to 0",
    ]


def test_required_anti_affinity_on_as_many_nodes_as_replicas_cannot_roll() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
            ]
        }
    }
    d = deployment(2)
    d.spec.template = type(d.spec.template).from_dict(
        {**d.spec.template.to_dict(), "spec": {**d.spec.template.spec.to_dict(), "affinity": anti}}
    )
    sim = simulation(nodes=2)
    sim.create(d)
    sim.run_until_quiet()
    (old,) = replica_sets(sim).values()
    change(sim, set_image("nginx:2"))
    sim.run_until_quiet()
    sim.advance(600)
    rss = replica_sets(sim)
    (new,) = (rs for name, rs in rss.items() if name != old.metadata.name)
    # maxUnavailable 25% of 2 rounds down to 0: no old pod may go before a new one is available
    assert (rss[old.metadata.name].spec.replicas, new.spec.replicas) == (2, 1)
    old_pods = [p for p in sim.pods_of(old.metadata.uid)]
    new_pods = [p for p in sim.pods_of(new.metadata.uid)]
    assert len(old_pods) == 2 and all(p.status.phase == "Running" and not p.is_terminating for p in old_pods)
    assert len(new_pods) == 1 and new_pods[0].spec.node_name == ""
    assert not [e for e in sim.events if e.reason == "SuccessfulDelete"]


def test_recreate_removes_every_old_pod_before_creating_new_ones() -> None:
    sim = simulation()
    sim.create(deployment(3, strategy={"type": "Recreate"}))
    sim.run_until_quiet()
    (old,) = replica_sets(sim).values()
    overlap: list[str] = []

    def watch(event: ClusterEvent) -> None:
        if event.kind == "Pod" and event.type is EventType.ADDED and sim.pods_of(old.metadata.uid):
            overlap.append(event.obj.metadata.name)

    sim.cluster.subscribe(watch)
    change(sim, set_image("nginx:2"))
    sim.run_until_quiet()
    assert overlap == []
    rss = replica_sets(sim)
    (new,) = (rs for name, rs in rss.items() if name != old.metadata.name)
    assert rss[old.metadata.name].spec.replicas == 0 and new.spec.replicas == 3
    assert len(pods_of(sim, new)) == 3
    assert scaling_messages(sim)[1:] == [
        f"Scaled down replica set {old.metadata.name} from 3 to 0",
        f"Scaled up replica set {new.metadata.name} from 0 to 3",
    ]
    assert sim.now >= 30  # the old pods' graceful termination


def test_returning_to_an_old_template_reuses_its_replica_set() -> None:
    sim = simulation()
    sim.create(deployment(2))
    sim.run_until_quiet()
    (first,) = replica_sets(sim)
    change(sim, set_image("nginx:2"))
    sim.run_until_quiet()
    change(sim, set_image("nginx:1"))
    sim.run_until_quiet()
    rss = replica_sets(sim)
    assert len(rss) == 2
    assert rss[first].spec.replicas == 2
    assert rss[first].metadata.annotations[ANNOTATION_REVISION] == "3"
    assert rss[first].metadata.annotations[ANNOTATION_REVISION_HISTORY] == "1"
    assert sim.cluster.get("Deployment", "default/web").metadata.annotations[ANNOTATION_REVISION] == "3"


def test_scaling_mid_rollout_is_proportional() -> None:
    sim = simulation()
    sim.create(deployment(10))
    sim.run_until_quiet()
    (old,) = replica_sets(sim)

    def unschedulable(d: Deployment) -> None:
        d.spec.template.spec.node_selector = {"no": "such-node"}

    change(sim, unschedulable)
    sim.run_until_quiet()
    rss = replica_sets(sim)
    (new,) = (name for name in rss if name != old)
    # surge 3, unavailable 2: old 10 -> 8, new 0 -> 5 (total 13), then stuck on pending pods
    assert (rss[old].spec.replicas, rss[new].spec.replicas) == (8, 5)

    def twenty(d: Deployment) -> None:
        d.spec.replicas = 20

    change(sim, twenty)
    sim.run_until_quiet()
    rss = replica_sets(sim)
    # 25 allowed (20 + 5 surge), 12 to add: old 8*25/13 -> 15, new 5*25/13 -> 10
    assert (rss[old].spec.replicas, rss[new].spec.replicas) == (15, 10)
    assert scaling_messages(sim)[-2:] == [
        f"Scaled up replica set {old} from 8 to 15",
        f"Scaled up replica set {new} from 5 to 10",
    ]


def test_scaling_a_settled_deployment_scales_its_replica_set() -> None:
    sim = simulation()
    sim.create(deployment(3))
    sim.run_until_quiet()
    (rs,) = replica_sets(sim)

    def five(d: Deployment) -> None:
        d.spec.replicas = 5

    change(sim, five)
    sim.run_until_quiet()
    assert replica_sets(sim)[rs].spec.replicas == 5
    assert len(sim.cluster.pods) == 5
    assert scaling_messages(sim)[-1] == f"Scaled up replica set {rs} from 3 to 5"


def test_paused_deployment_does_not_roll_until_resumed() -> None:
    sim = simulation()
    sim.create(deployment(2))
    sim.run_until_quiet()

    def pause_and_change(d: Deployment) -> None:
        d.spec.paused = True
        d.spec.template.spec.containers[0].image = "nginx:2"

    change(sim, pause_and_change)
    sim.run_until_quiet()
    assert len(replica_sets(sim)) == 1

    def resume(d: Deployment) -> None:
        d.spec.paused = False

    change(sim, resume)
    sim.run_until_quiet()
    rss = replica_sets(sim)
    assert len(rss) == 2
    assert sorted(rs.spec.replicas for rs in rss.values()) == [0, 2]


def test_old_replica_sets_beyond_the_history_limit_are_deleted() -> None:
    sim = simulation()
    sim.create(deployment(1, revisionHistoryLimit=1))
    sim.run_until_quiet()
    names = [next(iter(replica_sets(sim)))]
    for image in ("nginx:2", "nginx:3"):
        change(sim, set_image(image))
        sim.run_until_quiet()
        names.append(next(n for n in replica_sets(sim) if n not in names))
    assert sorted(replica_sets(sim)) == sorted(names[1:])  # the oldest revision is gone
    assert replica_sets(sim)[names[2]].spec.replicas == 1


def test_deleting_the_deployment_deletes_its_replica_sets_and_pods() -> None:
    sim = simulation()
    sim.create(deployment(2))
    sim.run_until_quiet()
    sim.delete("Deployment", "default/web")
    sim.run_until_quiet()
    assert replica_sets(sim) == {}
    assert sim.cluster.pods == {}


def test_a_deployment_loaded_without_admission_still_finds_its_replica_set() -> None:
    d = deployment(3)
    d.metadata.uid = "d-uid"
    assert d.spec.template.spec.scheduler_name == ""  # not defaulted; its ReplicaSet's template is
    sim = Simulation(
        cluster_of([make_node("n1")], objects=[d]),
        controllers=[DeploymentController(), ReplicaSetController()],
    )
    sim.run_until_quiet()
    (rs,) = replica_sets(sim).values()
    assert rs.spec.template.spec.scheduler_name == "default-scheduler"
    assert rs.metadata.name == f"web-{template_hash(d.spec.template)}"
    assert len(sim.cluster.pods) == 3
    assert "collisionCount" not in sim.cluster.get("Deployment", "default/web").status


def test_a_name_taken_by_another_replica_set_bumps_the_collision_count() -> None:
    d = deployment(2)
    taken = ReplicaSet.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": f"web-{template_hash(d.spec.template)}", "namespace": "default", "uid": "x"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "other"}},
                "template": {
                    "metadata": {"labels": {"app": "other"}},
                    "spec": {"containers": [{"name": "c", "image": "other"}]},
                },
            },
        }
    )
    sim = Simulation(
        cluster_of([make_node("n1")], objects=[taken]),
        controllers=[DeploymentController(), ReplicaSetController()],
    )
    sim.create(d)
    sim.run_until_quiet()
    rss = replica_sets(sim)
    assert sim.cluster.get("Deployment", "default/web").status["collisionCount"] == 1
    ours = f"web-{template_hash(d.spec.template, 1)}"
    assert sorted(rss) == sorted([taken.metadata.name, ours])
    assert rss[ours].spec.replicas == 2 and rss[taken.metadata.name].spec.replicas == 0
    assert len(sim.cluster.pods) == 2


def _story(skip_idle: bool) -> tuple[Simulation, int]:
    """Rollouts, a stuck one, scaling mid-rollout, a pause, a Recreate and the history limit,
    with the idle syncs skipped or all run; also how many syncs ran."""
    controller = DeploymentController()
    controller.skip_idle_syncs = skip_idle
    ran = [0]
    full_sync = controller._sync

    def counted(stored: Deployment) -> None:
        ran[0] += 1
        full_sync(stored)

    controller._sync = counted  # type: ignore[method-assign]
    sim = Simulation(
        cluster_of([make_node(f"n{i}") for i in range(4)]),
        controllers=[controller, ReplicaSetController()],
    )
    sim.create(deployment(6, revisionHistoryLimit=2, minReadySeconds=5))
    sim.run_until_quiet()
    edits = [
        set_image("nginx:2"),
        lambda d: setattr(d.spec.template.spec, "node_selector", {"no": "such-node"}),
        lambda d: setattr(d.spec, "replicas", 9),
        lambda d: (setattr(d.spec, "paused", True), set_image("nginx:3")(d)),
        lambda d: setattr(d.spec, "paused", False),
        lambda d: setattr(d.spec.template.spec, "node_selector", {}),
        lambda d: (setattr(d.spec, "strategy", None), setattr(d.spec, "replicas", 4)),
        set_image("nginx:1"),
    ]
    for edit in edits:
        change(sim, edit)
        sim.advance(30)
    return sim, ran[0]


def test_skipping_idle_syncs_changes_nothing() -> None:
    """A sync whose Deployment and ReplicaSets are the very objects its last no-op sync read is
    skipped: the run is the same as when every sync runs, event for event, object for object."""
    skipped, fewer = _story(skip_idle=True)
    every, all_syncs = _story(skip_idle=False)
    assert fewer < all_syncs  # the story does make idle syncs
    assert skipped.events == every.events
    assert _manifests(skipped) == _manifests(every)


def _manifests(sim: Simulation) -> dict[str, dict[str, Any]]:
    objects = [
        *sim.cluster.pods.values(),
        *(o for kind in ("Deployment", "ReplicaSet") for o in sim.cluster.objects(kind).values()),
    ]
    return {f"{o.KIND} {o.key}": o.to_dict() for o in objects}
