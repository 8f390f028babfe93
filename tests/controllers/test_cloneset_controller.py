"""The CloneSet controller: pods named by instance id, podsToDelete honoured before anything else
is deleted, scale-down victims ranked by pod-deletion-cost, status written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from builders import cluster_of, make_node, make_pod
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.kruise import CloneSet
from kubespread.api.meta import NAME_ALPHABET
from kubespread.controllers.cloneset import LABEL_CLONESET_INSTANCE_ID, CloneSetController
from kubespread.sim.engine import Simulation


def clone_set(
    replicas: int = 3, *, pods_to_delete: list[str] | None = None, **template_spec: Any
) -> CloneSet:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **template_spec},
        },
    }
    if pods_to_delete is not None:
        spec["scaleStrategy"] = {"podsToDelete": pods_to_delete}
    return CloneSet.from_dict(
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": spec,
        }
    )


def simulation(nodes: int = 3, *, cpu: str | None = None) -> Simulation:
    return Simulation(
        cluster_of([make_node(f"n{i}").capacity(cpu=cpu) for i in range(nodes)]),
        controllers=[CloneSetController()],
    )


def started(replicas: int = 3, nodes: int = 3, **template_spec: Any) -> Simulation:
    sim = simulation(nodes)
    assert isinstance(sim.create(clone_set(replicas, **template_spec)), CloneSet)
    sim.run_until_quiet()
    return sim


def get(sim: Simulation) -> CloneSet:
    cs = sim.cluster.get("CloneSet", "default/web")
    assert isinstance(cs, CloneSet)
    return cs


def change(sim: Simulation, edit: Callable[[CloneSet], None]) -> None:
    cs = get(sim).copy()
    edit(cs)
    sim.update(cs)


def scale(sim: Simulation, replicas: int) -> None:
    def edit(cs: CloneSet) -> None:
        cs.spec.replicas = replicas

    change(sim, edit)


def delete_named(sim: Simulation, *names: str) -> None:
    def edit(cs: CloneSet) -> None:
        cs.spec.scale_strategy = clone_set(pods_to_delete=list(names)).spec.scale_strategy

    change(sim, edit)


def set_cost(sim: Simulation, name: str, cost: int) -> None:
    pod = sim.cluster.pods[f"default/{name}"].copy()
    pod.metadata.annotations = {**pod.metadata.annotations, ANNOTATION_POD_DELETION_COST: str(cost)}
    sim.update(pod)


def live(sim: Simulation) -> list[Pod]:
    return sorted((p for p in sim.cluster.pods.values() if not p.is_terminating), key=lambda p: p.key)


def names(pods: list[Pod]) -> list[str]:
    return [p.metadata.name for p in pods]


def messages(sim: Simulation, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.reason == reason and e.kind == "CloneSet"]


def test_creates_pods_named_by_their_instance_id_and_reports_status() -> None:
    sim = started(3)
    cs = get(sim)
    pods = live(sim)
    assert len(pods) == len(sim.cluster.pods) == 3
    for pod in pods:
        name = pod.metadata.name
        instance_id = pod.metadata.labels[LABEL_CLONESET_INSTANCE_ID]
        assert name == f"web-{instance_id}"
        assert len(instance_id) == 5 and set(instance_id) <= set(NAME_ALPHABET)
        assert pod.metadata.generate_name == ""
        assert pod.metadata.labels == {"app": "web", LABEL_CLONESET_INSTANCE_ID: instance_id}
        ref = pod.metadata.controller_ref()
        assert ref is not None and (ref.kind, ref.name, ref.uid) == ("CloneSet", "web", cs.metadata.uid)
        assert ref.api_version == "apps.kruise.io/v1alpha1"
        assert pod.spec.node_name and pod.status.phase == "Running"
    assert len({p.metadata.labels[LABEL_CLONESET_INSTANCE_ID] for p in pods}) == 3
    assert sorted(messages(sim, "SuccessfulCreate")) == sorted(
        f"succeed to create pod {n}" for n in names(pods)
    )
    assert cs.status == {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}


def test_the_same_seed_draws_the_same_ids() -> None:
    def created(seed: int) -> list[str]:
        sim = Simulation(cluster_of([make_node("n1")]), controllers=[CloneSetController()], seed=seed)
        sim.create(clone_set(4))
        sim.run_until_quiet()
        return messages(sim, "SuccessfulCreate")

    assert created(3) == created(3)
    assert created(3) != created(4)


def test_scale_down_deletes_the_lowest_pod_deletion_cost_first() -> None:
    sim = started(4, nodes=4)
    a, b, c, d = names(live(sim))
    for name, cost in ((a, 50), (b, -3), (c, 7), (d, -9)):
        set_cost(sim, name, cost)
    sim.run_until_quiet()
    assert messages(sim, "SuccessfulDelete") == []  # annotating pods is no reason to delete any
    scale(sim, 2)
    sim.run_until_quiet()
    assert messages(sim, "SuccessfulDelete") == [f"succeed to delete pod {d}", f"succeed to delete pod {b}"]
    assert names(live(sim)) == sorted([a, c])
    assert len(sim.cluster.pods) == 2  # the victims' grace period is over
    assert get(sim).status["replicas"] == 2
    scale(sim, 1)
    sim.run_until_quiet()
    assert names(live(sim)) == [a]


def test_a_pending_pod_is_deleted_before_running_ones_whatever_their_cost() -> None:
    sim = simulation(1, cpu="2")
    sim.create(
        clone_set(3, containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}])
    )
    sim.run_until_quiet()
    pending = [p for p in live(sim) if not p.spec.node_name]
    running = [p for p in live(sim) if p.spec.node_name]
    assert len(pending) == 1 and len(running) == 2
    for pod in running:
        set_cost(sim, pod.metadata.name, -100)
    status = get(sim).status
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 2, 2)
    scale(sim, 2)
    sim.run_until_quiet()
    assert messages(sim, "SuccessfulDelete") == [f"succeed to delete pod {pending[0].metadata.name}"]
    assert names(live(sim)) == names(running)


def test_pods_to_delete_removes_the_named_pod_and_a_replacement_keeps_the_replicas() -> None:
    stranger = make_pod("other").label("app", "web").node("n0").phase("Running")
    sim = Simulation(
        cluster_of([make_node(f"n{i}") for i in range(3)], [stranger]), controllers=[CloneSetController()]
    )
    sim.create(clone_set(3))
    sim.run_until_quiet()
    before = names([p for p in live(sim) if p.metadata.name != "other"])
    victim = before[1]
    delete_named(sim, victim, "other", "web-gone1")
    sim.run_until_quiet()
    assert messages(sim, "SuccessfulDelete") == [f"succeed to delete pod {victim}"]
    after = names([p for p in live(sim) if p.metadata.name != "other"])
    assert len(after) == 3 and victim not in after
    assert set(before) - {victim} < set(after)
    (replacement,) = set(after) - set(before)
    assert messages(sim, "SuccessfulCreate")[-1] == f"succeed to create pod {replacement}"
    assert "default/other" in sim.cluster.pods  # named, but not the CloneSet's
    assert get(sim).status["replicas"] == 3


def test_pods_to_delete_count_towards_a_scale_down() -> None:
    sim = started(4, nodes=4)
    pods = names(live(sim))
    set_cost(sim, pods[2], -50)  # the one a plain scale-down would take

    def edit(cs: CloneSet) -> None:
        cs.spec.replicas = 3
        cs.spec.scale_strategy = clone_set(pods_to_delete=[pods[0]]).spec.scale_strategy

    change(sim, edit)
    sim.run_until_quiet()
    assert messages(sim, "SuccessfulDelete") == [f"succeed to delete pod {pods[0]}"]
    # the named pod was the one surplus: neither replaced nor followed by a ranked victim
    assert names(live(sim)) == pods[1:]
    assert len(messages(sim, "SuccessfulCreate")) == 4


def test_a_template_change_only_affects_new_pods() -> None:
    sim = started(2)
    old = names(live(sim))

    def edit(cs: CloneSet) -> None:
        cs.spec.template.spec.containers[0].image = "nginx:2"
        cs.spec.replicas = 3

    change(sim, edit)
    sim.run_until_quiet()
    images = {p.metadata.name: p.spec.containers[0].image for p in live(sim)}
    assert len(images) == 3
    assert all(images[n] == "nginx:1" for n in old)
    assert [i for n, i in images.items() if n not in old] == ["nginx:2"]


def test_min_ready_seconds_delays_availability() -> None:
    cs = clone_set(2)
    cs.spec.min_ready_seconds = 20
    sim = simulation(1)
    sim.create(cs)
    sim.advance(5)
    status = get(sim).status
    assert (status["readyReplicas"], status["availableReplicas"]) == (2, 0)
    sim.advance(15)
    assert get(sim).status["availableReplicas"] == 2


def test_a_refused_pod_is_reported_once() -> None:
    sim = simulation(1)
    sim.create(clone_set(3, priorityClassName="missing"))
    sim.run_until_quiet()
    assert sim.cluster.pods == {}
    failures = [e for e in sim.events if e.reason == "FailedCreate"]
    assert len(failures) == 1 and failures[0].type == "Warning"
    assert failures[0].message.startswith("failed to create pod: ")
    assert "no PriorityClass with name missing was found" in failures[0].message
    assert get(sim).status["replicas"] == 0


def test_deleting_the_clone_set_takes_its_pods() -> None:
    sim = started(2)
    sim.delete("CloneSet", "default/web")
    sim.run_until_quiet()
    assert sim.cluster.pods == {}
