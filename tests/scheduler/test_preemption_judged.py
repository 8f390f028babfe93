"""Preemption's dry run judges a node on copies of its NodeInfo when every Filter plugin says
that gives the verdict (``FilterPlugin.judges_without``), and takes the pods off the cluster
otherwise: both ways must give the same answer. Seeded random clusters (priorities, zone
spreads, required and preferred anti-affinity, host ports, PDBs, nominated pods) are
decided both ways and compared, and the preemption cases' files too."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from builders import cluster_of, make_node, make_pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.harness.evaluate import evaluate
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.decision import Decision
from kubespread.scheduler.scheduler import ProfileHandle, schedule_one

CASES = sorted((Path(__file__).resolve().parents[1] / "data" / "preemption").glob("*.input.json"))
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ProfileHandle, "removal_filters", lambda self, pod: None)


def _answer(d: Decision) -> tuple[Any, ...]:
    pre = d.preemption
    victims = None if pre is None else [v.key for v in pre.victims]
    return (
        d.selected,
        d.fit_error,
        None if pre is None else (pre.nominated_node, victims, pre.pdb_violations, pre.reason, pre.eligible),
    )


def _pod(rng: random.Random, name: str, app: str, node: str | None) -> Any:
    p = make_pod(name).label("app", app).req(cpu=f"{rng.choice((100, 300, 500))}m", memory="100")
    p.set("spec.priority", rng.choice((0, 10, 100, 1000)))
    if rng.random() < 0.3:
        p.set(
            "spec.topologySpreadConstraints",
            [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": rng.choice(("a", "b", "c"))}},
                }
            ],
        )
    if rng.random() < 0.25:
        kind = rng.choice(("podAntiAffinity", "podAffinity"))
        p.affinity(
            f"{kind}.requiredDuringSchedulingIgnoredDuringExecution",
            {"labelSelector": {"matchLabels": {"app": rng.choice(("a", "b", "c"))}}, "topologyKey": HOST},
        )
    if rng.random() < 0.2:
        p.affinity(
            "podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            {
                "weight": 10,
                "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST},
            },
        )
    if rng.random() < 0.15:
        p.set(
            "spec.containers",
            [
                {
                    "name": "c",
                    "image": "x",
                    "ports": [{"containerPort": 80, "hostPort": 8080}],
                    "resources": {"requests": {"cpu": "100m", "memory": "100"}},
                }
            ],
        )
    if node is not None:
        p.node(node)
        p.set("status.startTime", f"2026-01-01T00:00:{rng.randrange(60):02d}Z")
    return p


def _case(seed: int) -> tuple[Any, Any, dict[str, list[Any]]]:
    rng = random.Random(seed)
    nodes = [
        make_node(f"n{i}")
        .capacity(cpu="1", memory="2000", pods="8")
        .label(ZONE, f"z{i % 3}")
        .label(HOST, f"n{i}")
        for i in range(rng.randrange(3, 9))
    ]
    pods = [
        _pod(rng, f"p{j}", rng.choice(("a", "b", "c")), f"n{rng.randrange(len(nodes))}")
        for j in range(rng.randrange(5, 25))
    ]
    pdbs = [
        PodDisruptionBudget.from_dict(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": app}}},
                "status": {"disruptionsAllowed": rng.randrange(2)},
            }
        )
        for app in ("a", "b")
        if rng.random() < 0.5
    ]
    incoming = _pod(rng, "incoming", rng.choice(("a", "b", "c")), None)
    incoming.set("spec.priority", rng.choice((100, 1000, 2000)))
    nominated: dict[str, list[Any]] = {}
    if rng.random() < 0.2:
        other = _pod(rng, "nominated", "a", None).set("spec.priority", 5000).obj()
        nominated[f"n{rng.randrange(len(nodes))}"] = [other]
    return cluster_of(nodes, pods, objects=pdbs), incoming.obj(), nominated


@pytest.mark.parametrize("seed", range(150))
def test_judged_and_taken_off_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, incoming, nominated = _case(seed)
    fast = _answer(schedule_one(incoming, cluster, default_profile(), nominated=nominated or None))
    _slow(monkeypatch)
    slow = _answer(schedule_one(incoming, cluster, default_profile(), nominated=nominated or None))
    assert fast == slow


def test_the_random_cases_preempt_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeds above are worth comparing: many preempt, with nodes judged either way."""
    from kubespread.scheduler import scheduler

    judged = {True: 0, False: 0}
    on_node = scheduler._RemovalFilters.on_node

    def counted(self: Any, node_index: int, gone: Any) -> Any:
        verdict = on_node(self, node_index, gone)
        judged[verdict is not None] += 1
        return verdict

    monkeypatch.setattr(scheduler._RemovalFilters, "on_node", counted)
    preempting = 0
    for seed in range(150):
        cluster, incoming, nominated = _case(seed)
        pre = schedule_one(incoming, cluster, default_profile(), nominated=nominated or None).preemption
        preempting += bool(pre is not None and pre.nominated_node)
    assert preempting >= 20
    assert judged[True] >= 40 and judged[False] >= 40, judged


@pytest.mark.parametrize("case", CASES, ids=[c.name.removesuffix(".input.json") for c in CASES])
def test_the_preemption_cases_agree(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = evaluate(json.loads(case.read_text()))
    _slow(monkeypatch)
    assert evaluate(json.loads(case.read_text())) == fast
