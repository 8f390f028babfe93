"""``kubespread explain``: every node's verdict and scores, best first, and the hints the
specification gives for the failures seen."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kubespread.cli.app import app
from placement_inputs import docs_conflict_cluster, node, pod, spread, two_constraints_pod, write

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str, terminal: bool = False) -> tuple[int, str, str]:
    """``terminal``: as on an 80-column terminal (TTY_COMPATIBLE), where long lines wrap."""
    env = {"COLUMNS": "80", "TTY_COMPATIBLE": "1" if terminal else "0"}
    result = CliRunner().invoke(app, ["explain", *args, "--no-progress"], env=env)
    return result.exit_code, result.stdout, result.stderr


def explain_json(*args: str) -> dict:
    code, stdout, stderr = run(*args, "-o", "json")
    assert code == 0, stderr
    return json.loads(stdout)


def test_conflicting_constraints_name_the_plugin_and_the_docs_remedy(tmp_path: Path) -> None:
    files = ["-f", str(docs_conflict_cluster(tmp_path)), "-f", str(two_constraints_pod(tmp_path))]
    code, stdout, _ = run("default/mypod", *files, terminal=True)
    assert code == 0
    assert "default/mypod is unschedulable" in stdout
    assert "[1] PodTopologySpread: node(s) didn't match pod topology spread constraints" in stdout
    assert stdout.count("x Spread [1]") == 3
    text = " ".join(stdout.split())  # hints wrap at 80 columns
    assert "These spread constraints conflict" in text
    assert "Raise maxSkew, or set whenUnsatisfiable: ScheduleAnyway" in text
    assert max(len(line) for line in stdout.splitlines()) <= 80
    doc = explain_json("mypod", *files)
    assert not doc["scheduled"] and doc["selectedNode"] is None
    assert doc["fitError"] == (
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    assert (
        doc["fitErrorWithoutPostFilter"]
        == "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
    )
    assert {(n["plugin"], n["feasible"]) for n in doc["nodes"]} == {("PodTopologySpread", False)}
    zone, host = doc["spreadConstraints"]
    assert (zone["domains"], zone["globalMinimum"], zone["allowedDomains"]) == (
        {"zoneA": 3, "zoneB": 2},
        2,
        ["zoneB"],
    )
    assert host["allowedDomains"] == ["node2"]  # the two constraints leave no node in common


def test_a_single_constraint_gets_the_raise_maxskew_hint_not_the_conflict_one(tmp_path: Path) -> None:
    """nodeAffinityPolicy Ignore: zone b counts (0 pods) though the selector keeps the pod out."""
    cluster = write(
        tmp_path / "c.yaml",
        [node("n1", "a"), node("n2", "b"), pod("x1", {"foo": "bar"}, node_name="n1")],
    )
    one = write(
        tmp_path / "p.yaml",
        [
            pod(
                "p",
                {"foo": "bar"},
                topologySpreadConstraints=[spread("zone", nodeAffinityPolicy="Ignore")],
                nodeSelector={"zone": "a"},
            )
        ],
    )
    doc = explain_json("p", "-f", str(cluster), "-f", str(one))
    assert not doc["scheduled"]
    plugins = {n["name"]: n["plugin"] for n in doc["nodes"]}
    assert plugins == {"n1": "PodTopologySpread", "n2": "NodeAffinity"}
    # the node that passed more filters comes first
    assert [n["name"] for n in doc["nodes"]] == ["n1", "n2"]
    hints = " ".join(doc["hints"])
    assert "To let the pod in, raise maxSkew" in hints
    assert "conflict" not in hints
    assert "do not match the pod's nodeSelector" in hints


def test_nodes_missing_the_topology_key_are_said_to_be_bypassed(tmp_path: Path) -> None:
    cluster = write(tmp_path / "c.yaml", [node("n1", "a"), node("typo", None)])
    p = write(tmp_path / "p.yaml", [pod("p", {"foo": "bar"}, topologySpreadConstraints=[spread("zone")])])
    doc = explain_json("p", "-f", str(cluster), "-f", str(p))
    typo = next(n for n in doc["nodes"] if n["name"] == "typo")
    assert typo["reasons"] == [
        "node(s) didn't match pod topology spread constraints (missing required label)"
    ]
    assert any("bypasses them" in h and "typo" in h for h in doc["hints"])


def test_min_domains_forcing_the_global_minimum_to_zero_is_explained(tmp_path: Path) -> None:
    """2 zones but minDomains 3: the minimum is 0, so with one matching pod in each zone and
    maxSkew 1 the next pod fits nowhere."""
    cluster = write(
        tmp_path / "c.yaml",
        [
            node("n1", "a"),
            node("n2", "b"),
            pod("x1", {"foo": "bar"}, node_name="n1"),
            pod("x2", {"foo": "bar"}, node_name="n2"),
        ],
    )
    p = write(
        tmp_path / "p.yaml",
        [pod("p", {"foo": "bar"}, topologySpreadConstraints=[spread("zone", minDomains=3)])],
    )
    doc = explain_json("p", "-f", str(cluster), "-f", str(p))
    assert not doc["scheduled"]
    assert doc["spreadConstraints"][0]["globalMinimum"] == 0
    assert any("minDomains 3" in h and "global minimum is taken as 0" in h for h in doc["hints"])


def test_a_tainted_nodes_domain_still_counts_unless_honored(tmp_path: Path) -> None:
    """Zone c's only node is tainted: with nodeTaintsPolicy Ignore its empty domain holds the
    minimum at 0 and the pod is pending; with Honor it is left out and the pod fits."""
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    cluster = write(
        tmp_path / "c.yaml",
        [
            node("n1", "a"),
            node("n2", "b"),
            node("n3", "c", taints=taint),
            pod("x1", {"foo": "bar"}, node_name="n1"),
            pod("x2", {"foo": "bar"}, node_name="n2"),
        ],
    )
    ignore = write(
        tmp_path / "i.yaml", [pod("p", {"foo": "bar"}, topologySpreadConstraints=[spread("zone")])]
    )
    doc = explain_json("p", "-f", str(cluster), "-f", str(ignore))
    assert not doc["scheduled"]
    assert any(
        h.startswith("zone domain(s) c hold the global minimum of 0") and "(n3)" in h and "Honor" in h
        for h in doc["hints"]
    )
    assert doc["spreadConstraints"][0]["taintedDomainsCounted"] == {"c": ["n3"]}
    honor = write(
        tmp_path / "h.yaml",
        [pod("p", {"foo": "bar"}, topologySpreadConstraints=[spread("zone", nodeTaintsPolicy="Honor")])],
    )
    doc = explain_json("p", "-f", str(cluster), "-f", str(honor))
    assert doc["scheduled"]
    assert not any("nodeTaintsPolicy" in h for h in doc["hints"])


def test_required_anti_affinity_hint(tmp_path: Path) -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    cluster = write(
        tmp_path / "c.yaml", [node("n1", "a"), pod("db-0", {"app": "db"}, node_name="n1", affinity=anti)]
    )
    p = write(tmp_path / "p.yaml", [pod("db-1", {"app": "db"}, affinity=anti)])
    doc = explain_json("db-1", "-f", str(cluster), "-f", str(p))
    assert doc["nodes"][0]["plugin"] == "InterPodAffinity"
    (hint,) = [h for h in doc["hints"] if h.startswith("Required pod anti-affinity")]
    assert hint.startswith("Required pod anti-affinity on kubernetes.io/hostname closes 1 node(s)")
    assert "finer topologyKey" not in hint  # already one per node


def test_a_scheduled_pod_shows_scores_best_first_with_the_winner_marked(tmp_path: Path) -> None:
    files = ["-f", str(EXAMPLES / "cluster"), "-f", str(EXAMPLES / "workloads" / "web-deployment.yaml")]
    code, stdout, _ = run(str(EXAMPLES / "pods" / "one-constraint.yaml"), *files)
    assert code == 0
    winner_line = next(line for line in stdout.splitlines() if line.startswith("* "))
    doc = explain_json(str(EXAMPLES / "pods" / "one-constraint.yaml"), *files)
    assert doc["scheduled"] and doc["nodes"][0]["winner"]
    assert winner_line.split()[1] == doc["selectedNode"] == doc["nodes"][0]["name"]
    totals = [n["total"] for n in doc["nodes"] if n["feasible"]]
    assert totals == sorted(totals, reverse=True) and len(totals) > 1
    for n in doc["nodes"]:
        if n["feasible"]:
            assert n["total"] == sum(s["normalized"] * s["weight"] for s in n["scores"].values())
    assert "TaintToleration" in doc["plugins"]


def test_a_bound_pod_is_explained_without_itself_and_stays_bound(tmp_path: Path) -> None:
    """q (node spread, maxSkew 1) is bound to node2 beside p3. Taken off for the decision it
    no longer counts: node1=2 node2=1 node3=2, so node2 alone keeps the skew; counting itself
    every node would pass. The NodeName filter does not pin it to its own node either."""
    from kubespread.io import load
    from kubespread.sim.placement import explain_key, place

    cluster = docs_conflict_cluster(tmp_path)
    q = write(
        tmp_path / "q.yaml",
        [pod("q", {"foo": "bar"}, node_name="node2", topologySpreadConstraints=[spread("node")])],
    )
    doc = explain_json("q", "-f", str(cluster), "-f", str(q))
    assert doc["spreadConstraints"][0]["domains"] == {"node1": 2, "node2": 1, "node3": 2}
    assert [n["name"] for n in doc["nodes"] if n["feasible"]] == ["node2"]
    result = place(load([cluster, q]))
    assert explain_key(result.sim, "default/q").decision.selected == "node2"
    assert result.sim.cluster.pods["default/q"].spec.node_name == "node2"


def test_unknown_pods_and_bad_manifests_are_clear_errors(tmp_path: Path) -> None:
    cluster = docs_conflict_cluster(tmp_path)
    code, _, stderr = run("shop/nothing", "-f", str(cluster))
    assert code == 1
    assert "pod shop/nothing not found" in stderr
    two = write(tmp_path / "two.yaml", [pod("a", {}), pod("b", {})])
    code, _, stderr = run(str(two), "-f", str(cluster))
    assert code == 2
    assert "exactly one Pod" in stderr
    code, _, stderr = run(str(tmp_path / "missing.yaml"), "-f", str(cluster))
    assert code == 2 and "no such file" in stderr


SNAPSHOT_POD = ("shop/search-56795cc8ff-xkjnr", "-f", str(EXAMPLES / "snapshot" / "cluster.yaml"))


def test_timings_only_when_asked_and_their_shape() -> None:
    assert "timings" not in explain_json(*SNAPSHOT_POD)
    t = explain_json(*SNAPSHOT_POD, "--timings")["timings"]
    points = [p["name"] for p in t["extensionPoints"]]
    assert points == ["PreFilter", "Filter", "PostFilter"]  # unschedulable: no scoring
    assert [s["name"] for s in t["frameworkSteps"]] == ["Snapshot", "NodeOrder", "FitError"]
    plugins = [q for p in t["extensionPoints"] for q in p["plugins"]]
    assert {q["name"] for q in plugins} >= {"PodTopologySpread", "NodeResourcesFit", "DefaultPreemption"}
    assert all(set(q) == {"name", "extensionPoint", "status", "microseconds"} for q in plugins)
    by = {(q["extensionPoint"], q["name"]): q["status"] for q in plugins}
    assert by[("Filter", "NodeResourcesFit")] == "Unschedulable" and by[("Filter", "NodeName")] == "Success"
    # the parts add up to the cycle (each figure rounded to 0.1 µs)
    parts = t["pluginMicroseconds"] + t["frameworkMicroseconds"] + t["otherMicroseconds"]
    assert abs(parts - t["cycleMicroseconds"]) <= 0.3
    assert abs(sum(q["microseconds"] for q in plugins) - t["pluginMicroseconds"]) <= 0.1 * len(plugins)


def test_timings_in_yaml() -> None:
    code, stdout, stderr = run(*SNAPSHOT_POD, "--timings", "-o", "yaml")
    assert code == 0, stderr
    timings = yaml.safe_load(stdout)["timings"]
    filter_point = next(p for p in timings["extensionPoints"] if p["name"] == "Filter")
    by = {q["name"]: q["status"] for q in filter_point["plugins"]}
    assert by["PodTopologySpread"] == "Unschedulable" and by["NodeName"] == "Success"


def test_timings_table_adds_a_section_with_the_plugins_share_of_the_cycle() -> None:
    code, plain, _ = run(*SNAPSHOT_POD)
    assert code == 0 and "µs" not in plain
    code, stdout, _ = run(*SNAPSHOT_POD, "--timings")
    assert code == 0
    section = stdout[stdout.index("timings (this cycle") :].splitlines()
    assert section[1].split() == ["extension", "point", "plugin", "µs", "share", "status"]
    rows = {tuple(line.split()[:2]) for line in section[2:-1]}
    assert {("Filter", "PodTopologySpread"), ("PostFilter", "DefaultPreemption")} <= rows
    assert {("Filter", "(framework)"), ("Snapshot", "(framework)"), ("FitError", "(framework)")} <= rows
    assert re.fullmatch(
        r"plugins [\d,]+ µs of the [\d,]+ µs cycle \([\d.]+%\); framework [\d,]+ µs \([\d.]+%\); "
        r"in no row [\d,]+ µs \([\d.]+%\)",
        section[-1],
    )


def test_report_shows_the_time_per_plugin_without_timings_on_stdout(tmp_path: Path) -> None:
    code, stdout, _ = run(*SNAPSHOT_POD, "-o", "json", "--report", str(tmp_path))
    assert code == 0 and "timings" not in json.loads(stdout)
    page = (tmp_path / "report.html").read_text()
    assert "Time per plugin" in page and page.count("data:image/png;base64,") >= 2
