"""The StatefulSet controller: ordinal names, OrderedReady creation and reverse scale-down,
Parallel, recreation under the same name, rolling updates with a partition."""

from __future__ import annotations

from typing import Any

from builders import cluster_of, make_node
from kubespread.api.apps import StatefulSet
from kubespread.api.features import FeatureGates, features_for
from kubespread.cluster.events import ClusterEvent, EventType
from kubespread.controllers.pods import is_running_and_ready
from kubespread.controllers.statefulset import (
    LABEL_POD_INDEX,
    LABEL_POD_NAME,
    LABEL_REVISION_HASH,
    StatefulSetController,
)
from kubespread.sim.engine import Simulation


def stateful_set(replicas: int = 3, **spec: Any) -> StatefulSet:
    return StatefulSet.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "pg:1", "resources": {"requests": {"cpu": "1"}}}
                        ]
                    },
                },
                **spec,
            },
        }
    )


def simulation(*nodes: Any) -> Simulation:
    return Simulation(
        cluster_of(list(nodes) or [make_node("n1"), make_node("n2")]), controllers=[StatefulSetController()]
    )


def change(sim: Simulation, edit: Any) -> None:
    sts = sim.cluster.get("StatefulSet", "default/db").copy()
    edit(sts)
    sim.update(sts)


def names(sim: Simulation) -> list[str]:
    return sorted(p.metadata.name for p in sim.cluster.pods.values())


def messages(sim: Simulation, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.reason == reason]


def test_ordered_ready_creates_each_pod_after_its_predecessor_is_running_and_ready() -> None:
    sim = simulation()
    created_when: dict[str, bool] = {}

    def watch(event: ClusterEvent) -> None:
        if event.kind == "Pod" and event.type is EventType.ADDED:
            ordinal = int(event.obj.metadata.name.rsplit("-", 1)[1])
            before = sim.cluster.pods.get(f"default/db-{ordinal - 1}")
            created_when[event.obj.metadata.name] = ordinal == 0 or (
                before is not None and is_running_and_ready(before)
            )

    sim.cluster.subscribe(watch)
    sim.create(stateful_set(3))
    sim.run_until_quiet()
    assert created_when == {"db-0": True, "db-1": True, "db-2": True}
    assert messages(sim, "SuccessfulCreate") == [
        f"create Pod db-{i} in StatefulSet db successful" for i in range(3)
    ]
    pod = sim.cluster.pods["default/db-1"]
    assert pod.metadata.labels[LABEL_POD_NAME] == "db-1"
    assert pod.metadata.labels[LABEL_POD_INDEX] == "1"
    assert pod.metadata.labels[LABEL_REVISION_HASH].startswith("db-")
    assert pod.to_dict()["spec"]["hostname"] == "db-1"
    assert pod.to_dict()["spec"]["subdomain"] == "db"
    status = sim.cluster.get("StatefulSet", "default/db").status
    assert status["readyReplicas"] == status["replicas"] == 3
    assert status["currentRevision"] == status["updateRevision"] == pod.metadata.labels[LABEL_REVISION_HASH]


def test_ordered_ready_waits_for_a_pending_pod() -> None:
    sim = simulation(make_node("n1").capacity(cpu="1"))
    sim.create(stateful_set(3))
    sim.run_until_quiet()
    assert names(sim) == ["db-0", "db-1"]  # db-1 cannot be scheduled: db-2 is never created
    assert sim.cluster.pods["default/db-1"].spec.node_name == ""


def test_parallel_creates_all_at_once() -> None:
    sim = simulation(make_node("n1").capacity(cpu="1"))
    sim.create(stateful_set(3, podManagementPolicy="Parallel"))
    sim.run_until_quiet()
    assert names(sim) == ["db-0", "db-1", "db-2"]


def test_scale_down_removes_the_highest_ordinal_first_one_at_a_time() -> None:
    sim = simulation()
    sim.create(stateful_set(3))
    sim.run_until_quiet()
    start = sim.now

    def one(sts: StatefulSet) -> None:
        sts.spec.replicas = 1

    change(sim, one)
    sim.run_until_quiet()
    killing = [(e.time - start, e.name) for e in sim.events if e.reason == "Killing"]
    assert killing == [(0, "db-2"), (30, "db-1")]  # db-1 only once db-2 has terminated
    assert names(sim) == ["db-0"]


def test_parallel_scale_down_does_not_wait() -> None:
    sim = simulation()
    sim.create(stateful_set(3, podManagementPolicy="Parallel"))
    sim.run_until_quiet()

    def zero(sts: StatefulSet) -> None:
        sts.spec.replicas = 0

    change(sim, zero)
    sim.advance(1)
    assert all(p.is_terminating for p in sim.cluster.pods.values())
    assert len(sim.cluster.pods) == 3


def test_a_deleted_pod_comes_back_under_its_name() -> None:
    sim = simulation()
    sim.create(stateful_set(2))
    sim.run_until_quiet()
    uid = sim.cluster.pods["default/db-0"].metadata.uid
    sim.delete("Pod", "default/db-0")
    sim.run_until_quiet()
    assert names(sim) == ["db-0", "db-1"]
    assert sim.cluster.pods["default/db-0"].metadata.uid != uid
    assert is_running_and_ready(sim.cluster.pods["default/db-0"])


def test_a_finished_pod_is_replaced() -> None:
    sim = simulation()
    sim.create(stateful_set(1))
    sim.run_until_quiet()
    uid = sim.cluster.pods["default/db-0"].metadata.uid
    sim.set_pod_status("default/db-0", "Failed")
    sim.run_until_quiet()
    assert sim.cluster.pods["default/db-0"].metadata.uid != uid
    assert messages(sim, "RecreatingFailedPod") == ["StatefulSet default/db is recreating failed Pod db-0"]


def test_ordinals_start_is_honoured() -> None:
    sim = simulation()
    sim.create(stateful_set(2, ordinals={"start": 5}))
    sim.run_until_quiet()
    assert names(sim) == ["db-5", "db-6"]
    assert sim.cluster.pods["default/db-5"].metadata.labels[LABEL_POD_INDEX] == "5"


def test_rolling_update_replaces_pods_from_the_highest_ordinal() -> None:
    sim = simulation()
    sim.create(stateful_set(3))
    sim.run_until_quiet()
    old_rev = sim.cluster.pods["default/db-0"].metadata.labels[LABEL_REVISION_HASH]

    def image(sts: StatefulSet) -> None:
        sts.spec.template.spec.containers[0].image = "pg:2"

    change(sim, image)
    sim.run_until_quiet()
    assert [e.name for e in sim.events if e.reason == "Killing"] == ["db-2", "db-1", "db-0"]
    revisions = {p.metadata.labels[LABEL_REVISION_HASH] for p in sim.cluster.pods.values()}
    (new_rev,) = revisions
    assert new_rev != old_rev
    assert all(p.spec.containers[0].image == "pg:2" for p in sim.cluster.pods.values())
    status = sim.cluster.get("StatefulSet", "default/db").status
    assert status["currentRevision"] == status["updateRevision"] == new_rev
    assert status["updatedReplicas"] == 3


def test_partition_keeps_lower_ordinals_at_the_old_revision() -> None:
    sim = simulation()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    sim.create(stateful_set(3, updateStrategy=strategy))
    sim.run_until_quiet()
    old_rev = sim.cluster.pods["default/db-0"].metadata.labels[LABEL_REVISION_HASH]

    def image(sts: StatefulSet) -> None:
        sts.spec.template.spec.containers[0].image = "pg:2"

    change(sim, image)
    sim.run_until_quiet()

    def revision(name: str) -> str:
        return sim.cluster.pods[f"default/{name}"].metadata.labels[LABEL_REVISION_HASH]

    assert revision("db-0") == revision("db-1") == old_rev
    assert revision("db-2") != old_rev
    sim.delete("Pod", "default/db-0")  # recreated at the revision its ordinal keeps
    sim.run_until_quiet()
    assert revision("db-0") == old_rev
    assert sim.cluster.pods["default/db-0"].spec.containers[0].image == "pg:1"
    status = sim.cluster.get("StatefulSet", "default/db").status
    assert status["currentRevision"] == old_rev and status["updatedReplicas"] == 1


def test_on_delete_leaves_pods_alone_until_deleted() -> None:
    sim = simulation()
    sim.create(stateful_set(2, updateStrategy={"type": "OnDelete"}))
    sim.run_until_quiet()

    def image(sts: StatefulSet) -> None:
        sts.spec.template.spec.containers[0].image = "pg:2"

    change(sim, image)
    sim.run_until_quiet()
    assert not [e for e in sim.events if e.reason == "Killing"]
    sim.delete("Pod", "default/db-1")
    sim.run_until_quiet()
    assert sim.cluster.pods["default/db-1"].spec.containers[0].image == "pg:2"
    assert sim.cluster.pods["default/db-0"].spec.containers[0].image == "pg:1"


def _first_killed_together(features: FeatureGates) -> list[str]:
    """The pods the rolling update deletes at the same instant, first of all (maxUnavailable 2)."""
    sim = Simulation(
        cluster_of([make_node("n1"), make_node("n2")]),
        controllers=[StatefulSetController()],
        features=features,
    )
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}
    sim.create(stateful_set(4, updateStrategy=strategy))
    sim.run_until_quiet()

    def image(sts: StatefulSet) -> None:
        sts.spec.template.spec.containers[0].image = "pg:2"

    change(sim, image)
    sim.run_until_quiet()
    killed = [e for e in sim.events if e.reason == "Killing"]
    return [e.name for e in killed if e.time == killed[0].time]


def test_max_unavailable_is_honoured_only_where_the_gate_is_on() -> None:
    """MaxUnavailableStatefulSet is Beta but off in v1.35 and v1.36 (kubernetes#137904): the
    controller replaces one pod at a time whatever rollingUpdate.maxUnavailable says; with the
    gate on (by default from v1.37), two go at once."""
    assert _first_killed_together(features_for("1.35")) == ["db-3"]
    on = features_for("1.35").with_overrides(MaxUnavailableStatefulSet=True)
    assert _first_killed_together(on) == ["db-3", "db-2"]
    assert _first_killed_together(features_for("1.37")) == ["db-3", "db-2"]  # on by default
