"""The ranking kept between syncs (controllers/ranking.py ``VictimRanking``) picks, after any
sequence of pod changes, exactly the victim the ranking of all pods picks
(``deletion_order(first=1)``, kube's ActivePodsWithRanks min), and the ReplicaSet controller's
one-pod scale-downs in simulated rollouts are the ones that ranking of all pods would make."""

from __future__ import annotations

import random
from typing import Any

import pytest

from builders import cluster_of, make_node, make_pod
from kubespread.api.apps import Deployment
from kubespread.api.core import Pod
from kubespread.api.keys import ANNOTATION_POD_DELETION_COST
from kubespread.api.timestamps import timestamp
from kubespread.controllers.deployment import DeploymentController
from kubespread.controllers.pods import ReadyTimes, is_active
from kubespread.controllers.ranking import RelatedCounts, VictimRanking, deletion_order
from kubespread.controllers.replicaset import ReplicaSetController
from kubespread.sim.engine import Simulation

OWNERS = ("rs-a", "rs-b", "rs-c")
#: rs-a's related ReplicaSets (rs-c is another controller's)
MEMBERS = frozenset(("rs-a", "rs-b"))


def random_pod(rng: random.Random, name: str, owner: str, *, alike: bool) -> Pod:
    """A pod of ``owner`` with facts drawn for every ranking criterion; ``alike``: as a
    rollout's old pods are (assigned, running, ready together, no cost), nodes apart."""
    b = make_pod(name).label("app", "web").set("metadata.uid", f"uid-{name}-{rng.random()}")
    b.set("metadata.creationTimestamp", timestamp(0 if alike else rng.choice([0, 1, 400, 900, 950])))
    b.set(
        "metadata.ownerReferences",
        [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}],
    )
    if not alike and rng.random() < 0.4:
        b.set("metadata.annotations", {ANNOTATION_POD_DELETION_COST: rng.choice(["0", "5", "-3", "x"])})
    node = rng.choice(["n1", "n2", "n3", "n4"] if alike else ["", "n1", "n2", "n3", "n4"])
    if not node:
        return b.obj()
    b.node(node).phase("Running" if alike else rng.choice(["Running", "Running", "Pending", "Unknown"]))
    ready = alike or rng.random() < 0.7
    condition: dict[str, Any] = {"type": "Ready", "status": "True" if ready else "False"}
    if ready and (alike or rng.random() < 0.8):
        condition["lastTransitionTime"] = timestamp(100 if alike else rng.choice([100, 101, 600, 990]))
    b.set("status.conditions", [condition])
    if not alike and rng.random() < 0.2:
        b.set("status.containerStatuses", [{"name": "c", "restartCount": rng.choice([1, 3])}])
    if rng.random() < 0.1:
        b.set("metadata.deletionTimestamp", timestamp(999))  # terminating: not active
    return b.obj()


@pytest.mark.parametrize("seed", range(6))
def test_kept_ranking_picks_what_ranking_every_pod_picks(seed: int) -> None:
    rng = random.Random(seed)
    pods: dict[str, Pod] = {}
    ranking = VictimRanking(MEMBERS)

    def moved(owner: str, node: str) -> None:
        if owner in MEMBERS:
            ranking.dirty_nodes.add(node)

    counts = RelatedCounts("ReplicaSet", moved)
    ready = ReadyTimes()
    cache: dict[str, Any] = {}
    checked = 0
    for trial in range(40):
        alike = trial % 3 == 0
        for step in range(rng.randint(5, 60)):
            key = f"default/p-{rng.randrange(40):02d}"
            old = pods.get(key)
            if old is not None and rng.random() < 0.25:
                del pods[key]
                new = None
            else:
                new = pods[key] = random_pod(rng, key.split("/")[1], rng.choice(OWNERS), alike=alike)
            counts.set(key, new)
            for pod in (old, new):
                ref = pod.metadata.controller_ref() if pod is not None else None
                if ref is not None and ref.uid == "rs-a":
                    ranking.dirty_pods.add(key)
            if rng.random() < 0.3 or step == 0:
                continue  # let changes pile up between syncs
            now = 1000.0 + trial + step
            active = sorted(
                (p for p in pods.values() if p.metadata.controller_ref().uid == "rs-a" and is_active(p)),  # type: ignore[union-attr]
                key=lambda p: p.key,
            )
            related = [p for p in pods.values() if p.metadata.controller_ref().uid in MEMBERS]  # type: ignore[union-attr]

            def current(k: str) -> Pod | None:
                p = pods.get(k)
                if p is None or not is_active(p) or p.metadata.controller_ref().uid != "rs-a":  # type: ignore[union-attr]
                    return None
                return p

            ranking.refresh(current, counts, ready, cache)
            assert len(ranking) == len(active)
            got = ranking.victim(now)
            if not active:
                assert got is None
                continue
            want = deletion_order(active, related, now, ready, first=1)
            assert got is not None and got.key == want[0].key
            checked += 1
    assert checked > 200


def deployment(name: str, replicas: int, image: str, rng: random.Random) -> Deployment:
    surge, unavailable = rng.choice([("25%", "25%"), (1, 0), (0, 1), (2, 3)])
    return Deployment.from_dict(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "strategy": {"rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": image}]},
                },
            },
        }
    )


@pytest.mark.parametrize("seed", range(8))
def test_rollouts_delete_the_pods_ranking_every_pod_would(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deployments rolled out, scaled down pod by pod and disturbed (pods' deletion costs
    changed, pods deleted) on a few nodes, so pods share nodes: every victim the kept ranking
    picks is checked against the ranking of all the ReplicaSet's active pods, related pods
    counted afresh."""
    rng = random.Random(seed)
    picks: list[str] = []
    original = ReplicaSetController._ranked_victim

    def checked(self: ReplicaSetController, rs: Any) -> Pod | None:
        got = original(self, rs)
        assert self.sim is not None
        want = deletion_order(self._active_claimed(rs), self._related(rs), self.sim.now, self.ready, first=1)
        assert got is not None and got.key == want[0].key
        picks.append(got.key)
        return got

    monkeypatch.setattr(ReplicaSetController, "_ranked_victim", checked)
    sim = Simulation(
        cluster_of([make_node(f"n{i}") for i in range(8)]),
        controllers=[DeploymentController(), ReplicaSetController()],
    )
    names = ["web", "api"]
    for name in names:
        sim.create(deployment(name, rng.randint(4, 14), "img:0", rng))
    sim.run_until_quiet()
    for round_ in range(1, 9):
        for name in names:
            stored = sim.cluster.get("Deployment", f"default/{name}")
            assert isinstance(stored, Deployment)
            rolled = stored.copy()
            rolled.spec = deployment(name, rng.randint(3, 14), f"img:{round_}", rng).spec
            sim.update(rolled)
            sim.advance(rng.choice([0, 1, 5]))
        pods = sorted(sim.cluster.pods.values(), key=lambda p: p.key)
        for pod in rng.sample(pods, min(3, len(pods))):
            costed = pod.copy()
            costed.metadata.annotations = {ANNOTATION_POD_DELETION_COST: str(rng.choice([-1, 0, 7]))}
            sim.update(costed)
        if pods and rng.random() < 0.5:
            sim.delete_pod(rng.choice(pods).key)
        sim.advance(rng.choice([1, 30]))
        for name in names:  # one pod at a time, as a rollout shrinks its old ReplicaSet
            d = sim.cluster.get("Deployment", f"default/{name}")
            assert isinstance(d, Deployment) and d.spec.replicas is not None
            for replicas in range(d.spec.replicas - 1, max(d.spec.replicas - 4, 0), -1):
                smaller = d.copy()
                smaller.spec.replicas = replicas
                sim.update(smaller)
                sim.advance(1)
        sim.run_until_quiet()
    assert len(picks) > 40, len(picks)
