"""schedule --optimal: the pending workload solved at once, a bind order the scheduler
replays, each pod passing the Filter; a proven infeasible case says what binds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ortools.sat.python import cp_model
from typer.testing import CliRunner

from capacity_cases import CASES
from kubespread.cli.app import app
from kubespread.io.loader import load
from kubespread.plan.capacity import maximum
from kubespread.plan.optimal import BindStep, ReplayCutShort, ReplayError, optimal, pinned, replay
from kubespread.plan.workloads import cluster_without as _without
from kubespread.plan.workloads import unbound as _unbound
from kubespread.scheduler import default_profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.selection import NodeOrder
from kubespread.sim.placement import place
from kubespread.solve import RESOURCES, build_model, conflict
from kubespread.solve.conflicts import _with_assumptions
from placement_inputs import node, write

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _deployment(replicas: int, *, cpu: str = "1", spreads: tuple[str, ...] = (ZONE, HOST)) -> dict[str, Any]:
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": k,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
        for k in spreads
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
                    "topologySpreadConstraints": constraints,
                },
            },
        },
    }


def _two_spreads(tmp_path: Path, replicas: int = 7) -> list[Path]:
    """tests/capacity_cases.two_spreads as a schedule input: greedy places 5, 7 fit."""
    cluster = write(
        tmp_path / "cluster.yaml",
        [node("n0", "b", cpu="3"), node("n1", "c", cpu="3"), node("n2", "b", cpu="3")],
    )
    return [cluster, write(tmp_path / "web.yaml", [_deployment(replicas)])]


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["schedule", *args, "--no-progress", "--optimal"], env={"COLUMNS": "100"})
    return r.exit_code, r.stdout


def test_optimal_places_every_pod_greedy_strands_and_the_replay_reproduces_it(tmp_path: Path) -> None:
    files = _two_spreads(tmp_path)
    result = place(load(files))
    assert len(result.final.pending) == 2
    solved = optimal(result)
    assert solved is not None and not solved.error and not solved.pending
    assert len(solved.assignments) == 7 and solved.proven
    per_node: dict[str, int] = {}
    for n in solved.assignments.values():
        per_node[n] = per_node.get(n, 0) + 1
    assert sorted(per_node.values()) == [2, 2, 3]
    _check_arrangement_and_bind_order(result, solved)


def test_json_and_table(tmp_path: Path) -> None:
    files = _two_spreads(tmp_path)
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))), "-o", "json")
    assert code == 0
    doc = json.loads(stdout)["optimal"]
    assert set(doc) >= {"assignments", "pending", "proven", "bindOrder"}
    assert doc["pending"] == [] and doc["proven"] and len(doc["assignments"]) == 7
    assert all(set(e) == {"pod", "node", "pinned"} for e in doc["bindOrder"])
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))))
    assert code == 0
    assert "optimal (workload default/ReplicaSet/" in stdout and "bind order" in stdout
    assert "pending workloads solved at once" in stdout


def test_infeasible_is_proven_with_what_binds(tmp_path: Path) -> None:
    # 8 replicas: 9 CPUs, but the zone spread holds at most 7 (b: 4, c: 3)
    files = _two_spreads(tmp_path, replicas=8)
    solved = optimal(place(load(files)))
    assert solved is not None and not solved.error
    assert solved.proven and solved.assignments == {} and len(solved.pending) == 8
    assert solved.limited_by[0] == "at most 7 of 8 fit"
    assert f"topology spread {ZONE} maxSkew 1" in solved.limited_by
    # minimal: the zone spread alone holds 7 of 8 on the 3+3+3 CPUs; without resources 8 fit
    assert solved.conflict == ["resources", f"topology spread {ZONE} maxSkew 1"]
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))), "-o", "json")
    assert code == 0
    doc = json.loads(stdout)["optimal"]
    assert (doc["proven"], doc["assignments"], doc["bindOrder"]) == (True, {}, [])
    assert doc["conflict"] == solved.conflict and len(doc["pending"]) == 8


def test_nothing_pending_means_nothing_to_solve(tmp_path: Path) -> None:
    files = _two_spreads(tmp_path, replicas=3)
    assert optimal(place(load(files))) is None
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))), "-o", "json")
    assert code == 0 and json.loads(stdout)["optimal"] is None


def test_every_pending_workload_at_once_and_no_feasible_node(tmp_path: Path) -> None:
    """Two bare pods no node admits: both are solved together (no node: an empty conflict,
    proven)."""
    cluster = write(tmp_path / "cluster.yaml", [node("n0", "b")])
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "pause"}]},
        }
        for name in ("a", "b")
    ]
    solved = optimal(place(load([cluster, write(tmp_path / "pods.yaml", pods)])))
    assert solved is not None and not solved.error
    assert solved.workloads == ["default/Pod/a", "default/Pod/b"]
    assert (solved.pending, solved.conflict, solved.proven) == (["default/a", "default/b"], [], True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_conflict_agrees_with_the_maximum(name: str) -> None:
    """All of ``maximum`` copies fit (no conflict); one more does not, the conflict alone
    forbids it, and it is minimal: without any one of its members the rest allow it."""
    cluster, template = CASES[name]()
    profile = default_profile()
    best = maximum(cluster, template, profile, max_count=20).maximum
    assert conflict(build_model(cluster, template, profile, best)) is None
    model = build_model(cluster, template, profile, best + 1)
    found = conflict(model)
    assert found
    names = model.constraint_names()
    assert names[0] == RESOURCES
    members = [names.index(c) for c in found]
    assert _with_assumptions(model, members, 5)[0] == cp_model.INFEASIBLE
    for i in members:
        rest = [j for j in members if j != i]
        assert _with_assumptions(model, rest, 5)[0] in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_the_report_shows_greedy_and_optimal_per_zone_side_by_side(tmp_path: Path) -> None:
    files = _two_spreads(tmp_path)
    code, _ = _run(*(a for f in files for a in ("-f", str(f))), "--report", str(tmp_path / "out"))
    assert code == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Greedy vs optimal: default/ReplicaSet/" in page and ", per zone" in page and ", per node" in page
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))), "-o", "json")
    doc = json.loads(stdout)["optimal"]
    zone_of_node: dict[str, str] = {}
    for obj in yaml.safe_load_all((tmp_path / "cluster.yaml").read_text()):
        if obj and obj.get("kind") == "Node":
            zone_of_node[obj["metadata"]["name"]] = obj["metadata"]["labels"].get(
                "topology.kubernetes.io/zone", "-"
            )
    per_zone: dict[str, list[int]] = {}
    for which, key in ((0, "greedy"), (1, "assignments")):
        for node_name in doc[key].values():
            per_zone.setdefault(zone_of_node[node_name], [0, 0])[which] += 1
    # each zone's row in the page carries the same two numbers as the JSON
    for zone, (g, o) in per_zone.items():
        assert f"<td>{zone}</td><td>{g}</td><td>{o}</td>" in page.replace("\n", "").replace(" ", "")


def _check_arrangement_and_bind_order(result: Any, solved: Any) -> None:
    """Each pod passes the Filter in the final state with itself taken off, and the bind
    order replayed through the scheduler (pins as given) lands every pod where it says."""
    cluster = result.sim.cluster
    profile = result.sim.profiles["default-scheduler"]
    members = set(solved.assignments)
    base = _without(cluster, members)
    for key, n in solved.assignments.items():
        base.add_pod(_unbound(cluster.pods[key]))
        base.bind(key, n)
    for key, n in solved.assignments.items():
        pod = base.pods[key]
        base.delete_pod(key)
        assert n in schedule_one(_unbound(pod), base, profile).feasible, key
        base.add_pod(pod)
    again = _without(cluster, members)
    assert [e.pod for e in solved.bind_order] and len(solved.bind_order) == len(members)
    nodes = NodeOrder.of(again)  # a fresh kube-scheduler: its node order, start index, heap pick
    for entry in solved.bind_order:
        pod = _unbound(cluster.pods[entry.pod])
        if entry.pinned:
            pod = pinned(pod, entry.node)
        chosen = schedule_one(pod, again, profile, order=nodes).selected
        assert chosen == entry.node == solved.assignments[entry.pod]
        again.add_pod(pod)
        again.bind(pod.key, entry.node)


def _db(replicas: int) -> dict[str, Any]:
    doc = _deployment(replicas, spreads=())
    doc["metadata"]["name"] = "db"
    doc["spec"]["selector"] = {"matchLabels": {"app": "db"}}
    doc["spec"]["template"]["metadata"]["labels"] = {"app": "db"}
    return doc


def test_a_fully_placed_workload_moves_when_that_makes_room(tmp_path: Path) -> None:
    """web (7, zone + hostname spread) and db (2, no rules) on 9 CPUs: the scheduler places
    db wherever it scores best and strands web; web alone cannot get 7 around db's pods,
    so the scope widens to every new pod, and all 9 fit."""
    cluster = write(
        tmp_path / "cluster.yaml",
        [node("n0", "b", cpu="3"), node("n1", "c", cpu="3"), node("n2", "b", cpu="3")],
    )
    files = [cluster, write(tmp_path / "apps.yaml", [_db(2), _deployment(7)])]
    result = place(load(files))
    assert result.final.pending
    solved = optimal(result)
    assert solved is not None and not solved.error, solved
    assert solved.scope == "all new pods" and not solved.pending and len(solved.assignments) == 9
    assert len(solved.workloads) == 2
    _check_arrangement_and_bind_order(result, solved)


def test_two_pending_workloads_are_solved_together(tmp_path: Path) -> None:
    """web (zone + hostname spread) and api (hostname anti-affinity to web, zone spread),
    both left pending by the greedy run, are placed in one model."""
    nodes = [node(f"n{i}", "bc"[i % 2], cpu="2") for i in range(4)]
    api = _deployment(3, spreads=(ZONE,))
    api["metadata"]["name"] = "api"
    api["spec"]["selector"] = {"matchLabels": {"app": "api"}}
    template = api["spec"]["template"]
    template["metadata"]["labels"] = {"app": "api"}
    template["spec"]["topologySpreadConstraints"][0]["labelSelector"] = {"matchLabels": {"app": "api"}}
    template["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}
            ]
        }
    }
    files = [write(tmp_path / "cluster.yaml", nodes), write(tmp_path / "apps.yaml", [_deployment(5), api])]
    result = place(load(files))
    solved = optimal(result)
    assert solved is not None and not solved.error, solved
    placed = len(solved.assignments)
    if not solved.pending:
        assert placed == 8
        _check_arrangement_and_bind_order(result, solved)
        web_nodes = {n for k, n in solved.assignments.items() if "/web-" in k}
        api_nodes = {n for k, n in solved.assignments.items() if "/api-" in k}
        assert not web_nodes & api_nodes  # the anti-affinity holds both ways
    else:
        assert solved.proven and solved.conflict is not None


def test_statefulset_pods_are_groups_of_one(tmp_path: Path) -> None:
    """A StatefulSet's pods differ (names, hostnames, pod-index labels): each is its own
    group, and the solver still places every one the greedy run strands."""
    sts = _deployment(7)
    sts["kind"] = "StatefulSet"
    sts["spec"]["serviceName"] = "web"
    sts["spec"]["podManagementPolicy"] = "Parallel"
    files = [
        write(
            tmp_path / "cluster.yaml",
            [node("n0", "b", cpu="3"), node("n1", "c", cpu="3"), node("n2", "b", cpu="3")],
        ),
        write(tmp_path / "sts.yaml", [sts]),
    ]
    result = place(load(files))
    assert len(result.final.pending) == 2
    solved = optimal(result)
    assert solved is not None and not solved.error, solved
    assert solved.workloads == ["default/StatefulSet/web"] and len(solved.assignments) == 7
    _check_arrangement_and_bind_order(result, solved)


def _web(replicas: int, min_domains: int) -> dict[str, Any]:
    """web with a zone spread of ``minDomains`` and a hostname spread, both maxSkew 1."""
    doc = _deployment(replicas)
    doc["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["minDomains"] = min_domains
    return doc


#: instances where the greedy replay of the solver's arrangement gets stuck (issue 33 item 7:
#: it answered "the scheduler places ... on no node with room left", proven, nothing pending,
#: no assignments), while an order with pins reaches it. A pin narrows the zone spread's
#: domains to the pinned node's zone (nodeAffinityPolicy Honor), fewer than minDomains, so
#: a pinned pod may only open an empty zone: the pins have to come early, before the greedy
#: replay knows it needs them. (replicas, minDomains, nodes as (name, zone, cpu) in file order)
STUCK: dict[str, tuple[int, int, list[tuple[str, str, str]]]] = {
    "12 replicas, zone minDomains 2 + hostname": (
        12,
        2,
        [
            ("n7", "c", "4"),
            ("n0", "a", "2"),
            ("n4", "b", "3"),
            ("n6", "c", "4"),
            ("n1", "a", "1"),
            ("n5", "b", "4"),
            ("n3", "a", "2"),
            ("n8", "c", "3"),
            ("n2", "a", "1"),
        ],
    ),
    "8 replicas, zone minDomains 3 + hostname": (
        8,
        3,
        [
            ("n2", "a", "3"),
            ("n5", "c", "2"),
            ("n0", "a", "3"),
            ("n4", "c", "2"),
            ("n3", "b", "2"),
            ("n1", "a", "4"),
        ],
    ),
}


def _stuck_files(tmp_path: Path, name: str, kind: str) -> list[Path]:
    replicas, min_domains, nodes = STUCK[name]
    cluster = write(tmp_path / "cluster.yaml", [node(n, z, cpu=c) for n, z, c in nodes])
    app = _web(replicas, min_domains)
    if kind == "StatefulSet":  # groups of one, replayed as interchangeable copies first
        app["kind"] = kind
        app["spec"] |= {"serviceName": "web", "podManagementPolicy": "Parallel"}
    return [cluster, write(tmp_path / "app.yaml", [app])]


@pytest.mark.parametrize(
    ("name", "kind"),
    [(name, "Deployment") for name in sorted(STUCK)]
    + [("8 replicas, zone minDomains 3 + hostname", "StatefulSet")],
)
def test_a_stuck_replay_searches_for_a_bind_order_with_pins(tmp_path: Path, name: str, kind: str) -> None:
    files = _stuck_files(tmp_path, name, kind)
    replicas = STUCK[name][0]
    result = place(load(files))
    assert result.final.pending
    # the greedy replay alone is stuck: without a budget for the search, the answer says the
    # search was cut short (not that no order exists)
    cut = optimal(result, search_cycles=0)
    assert cut is not None and cut.proven and not cut.pending and not cut.assignments
    assert cut.error.startswith("replay: the scheduler places default/web-")
    assert "cut short" in cut.error and "no order" not in cut.error
    solved = optimal(result)
    assert solved is not None and not solved.error and not solved.pending, solved
    assert len(solved.assignments) == replicas and solved.proven
    assert any(e.pinned for e in solved.bind_order)
    _check_arrangement_and_bind_order(result, solved)
    code, stdout = _run(*(a for f in files for a in ("-f", str(f))), "-o", "json")
    assert code == 0
    doc = json.loads(stdout)["optimal"]
    assert "error" not in doc and doc["bindOrder"] == [b.to_dict() for b in solved.bind_order]


def _replay_case(tmp_path: Path, nodes: list[tuple[str, str, str]], room: dict[str, int]) -> Any:
    """replay() of web (zone minDomains 2 + hostname spread) into ``room`` pods per node."""
    replicas = sum(room.values())
    cluster = write(tmp_path / "cluster.yaml", [node(n, z, cpu=c) for n, z, c in nodes])
    result = place(load([cluster, write(tmp_path / "app.yaml", [_web(replicas, 2)])]))
    state = result.sim.cluster
    keys = [k for k, p in state.pods.items() if p.metadata.labels.get("app") == "web"]
    assert len(keys) == replicas

    def run(**budget: Any) -> list[BindStep]:
        return replay(
            _without(state, set(keys)),
            [_unbound(state.pods[k]) for k in keys],
            result.sim.profiles["default-scheduler"],
            {(0, n): k for n, k in room.items()},
            dict.fromkeys(keys, 0),
            **budget,
        )

    return run


def test_an_arrangement_no_bind_order_reaches_is_an_error(tmp_path: Path) -> None:
    """Zones a (n0, n1: 3 CPU) and b (n2, n4: 2, n3: 3); 12 pods as a 3, 3, b 2, 2, 2: a
    final state every pod passes, which no order reaches. The hostname spread lets a node take
    its 3rd pod only once every node has 2, so zone b holds 6 while a holds 4; but b's 6th pod
    is then 2 over a's 4 (the zone spread refuses it), and pinned it sees zone b alone, one
    domain under minDomains 2, so the minimum counts as 0 and it is refused too."""
    run = _replay_case(
        tmp_path,
        [("n4", "b", "2"), ("n0", "a", "3"), ("n2", "b", "2"), ("n1", "a", "3"), ("n3", "b", "3")],
        {"n0": 3, "n1": 3, "n2": 2, "n3": 2, "n4": 2},
    )
    with pytest.raises(ReplayError) as no_order:
        run()
    assert not isinstance(no_order.value, ReplayCutShort)
    assert "no order of plain and pinned binds reaches the arrangement" in str(no_order.value)
    assert "every reachable state searched" in str(no_order.value)
    with pytest.raises(ReplayCutShort, match=r"cut short .* before it found one or proved none exists"):
        run(max_cycles=10)
