"""The failure-domain audit (``kubespread.plan.audit``): its verdict for a zone failure is
what ``simulate`` gives for the same failure written by hand; failures are ranked by harm;
``vary`` finds the setting that survives; the fork copy, the rebuilt copy and a Dask cluster
all give the same records."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from kubespread.io.loader import LoadedObject, load, load_data
from kubespread.plan.audit import (
    AuditError,
    AuditResult,
    FailureRecord,
    audit,
    audit_settled,
    parse_vary,
    patch_workloads,
    vary_audit,
)
from kubespread.plan.results import WorkloadOutcome
from kubespread.sim.placement import place
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
AFTER = 600.0


def zone_failure_input() -> list[LoadedObject]:
    m = load([str(EXAMPLES / "nodes-3-zones.yaml"), str(EXAMPLES / "zone-failure-deployments.yaml")])
    assert not m.errors
    return m.objects


def node(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def deployment(name: str, replicas: int, spec_extra: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                    **spec_extra,
                },
            },
        },
    }


def objects(*docs: dict[str, Any]) -> list[LoadedObject]:
    m = load_data(list(docs), "<test>")
    assert not m.errors, m.errors
    return m.objects


def by_workload(record: FailureRecord) -> dict[str, WorkloadOutcome]:
    return {w.owner.rsplit("/", 1)[-1]: w for w in record.workloads}


def record_of(doc: AuditResult, domain: str) -> FailureRecord:
    return next(r for r in doc.failures if r.domain == domain)


@pytest.fixture(scope="module")
def zone_audit() -> AuditResult:
    return audit(zone_failure_input(), domains=[ZONE], after=AFTER, processes=1)


def test_a_zone_failure_matches_simulate_by_hand(zone_audit: AuditResult) -> None:
    """examples/scenarios/zone-failure.yaml's cluster and Deployments, zone-c failed and 10
    minutes passed, as a scenario: the same replicas running and pending per workload."""
    scenario = load_scenario(EXAMPLES / "zone-failure.yaml")
    scenario.steps = scenario.steps[:4]  # apply, fail c1, fail c2, advance
    scenario.steps[3].seconds = AFTER
    final = simulate(scenario).final
    failed = {"c1", "c2"}
    running: dict[str, int] = {}
    for p in final.pods:
        if p.node and p.node not in failed and not p.terminating and p.owner:
            running[p.owner.name] = running.get(p.owner.name, 0) + 1
    pending: dict[str, int] = {}
    for p in final.pending:
        name = p.name.split("-")[0] if not p.name.startswith("min-domains") else "min-domains"
        pending[name] = pending.get(name, 0) + 1

    got = by_workload(record_of(zone_audit, f"{ZONE}=zone-c"))
    for name in ("strict", "honor", "min-domains"):
        assert got[name].running == running.get(name, 0), name
        assert got[name].pending == pending.get(name, 0), name
    # the example's story: strict and min-domains strand 2 replacements, honor spreads 3/3
    assert (got["strict"].running, got["strict"].pending) == (4, 2)
    assert (got["min-domains"].running, got["min-domains"].pending) == (4, 2)
    assert (got["honor"].running, got["honor"].pending) == (6, 0)
    assert got["honor"].skew[0].domains == {"zone-a": 3, "zone-b": 3}
    assert got["honor"].recovery_seconds == 300.0  # the default tolerationSeconds
    assert got["strict"].recovery_seconds is None
    reason = got["strict"].pending_reasons[0]
    assert "didn't match pod topology spread constraints" in reason.message
    assert any("maxSkew" in h for h in reason.hints)


def test_every_zone_is_failed_and_the_harm_adds_up(zone_audit: AuditResult) -> None:
    assert [r.domain for r in zone_audit.failures] == [f"{ZONE}=zone-{z}" for z in "abc"]
    for r in zone_audit.failures:
        assert r.harm.to_dict() == {
            "lost": 4,
            "unavailable": 4,
            "pending": 4,
            "pdbsBroken": 0,
            "unrecovered": 2,
        }
    assert {w.owner: w.desired for w in zone_audit.workloads} == {
        "default/Deployment/honor": 6,
        "default/Deployment/min-domains": 6,
        "default/Deployment/strict": 6,
    }


def test_failures_are_ranked_by_harm() -> None:
    """web may only run in zone-a: zone-a's failure strands it; zone-b's harms nothing."""
    web = deployment("web", 2, {"nodeSelector": {ZONE: "zone-a"}})
    doc = audit(objects(node("b1", "zone-b"), node("a1", "zone-a"), web), domains=[ZONE, HOST], after=AFTER)
    assert [r.domain for r in doc.failures][:2] == [f"{ZONE}=zone-a", f"{HOST}=a1"]
    first = doc.failures[0]
    assert first.rank == 1 and first.harm.unavailable == 2 and first.harm.pending == 2
    assert "node affinity" in first.workloads[0].pending_reasons[0].message
    last = doc.failures[-1]
    assert last.harm.to_dict() == {
        "lost": 0,
        "unavailable": 0,
        "pending": 0,
        "pdbsBroken": 0,
        "unrecovered": 0,
    }
    assert by_workload(last)["web"].recovery_seconds == 0.0


def test_a_broken_budget_is_reported() -> None:
    web = deployment("web", 2, {"nodeSelector": {ZONE: "zone-a"}})
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }
    doc = audit(objects(node("a1", "zone-a"), node("b1", "zone-b"), web, pdb), domains=[ZONE], after=AFTER)
    first = doc.failures[0]
    assert first.domain == f"{ZONE}=zone-a"
    assert [b.name for b in first.pdbs_broken] == ["default/web"]
    assert by_workload(first)["web"].pdbs_broken == ("default/web",)
    assert doc.failures[1].pdbs_broken == ()


def test_fork_and_rebuild_give_the_same_records() -> None:
    """The fork of the settled base is exact: the same as a simulation rebuilt per run."""
    sim = place(zone_failure_input()).sim
    forked = audit_settled(sim, domains=[ZONE, HOST], after=AFTER, processes=2, copy="fork")
    rebuilt = audit_settled(sim, domains=[ZONE, HOST], after=AFTER, processes=1, copy="rebuild")
    assert forked.failures == rebuilt.failures and forked.workloads == rebuilt.workloads


def test_every_number_of_processes_gives_the_same_records() -> None:
    """Runs forked one at a time, two at a time, and all at once (fewer failures than twice
    the processes) read the base's facts once, before forking: the records are those of a
    simulation rebuilt per run, which reads them itself."""
    sim = place(zone_failure_input()).sim
    rebuilt = audit_settled(sim, domains=[ZONE], after=AFTER, processes=1, copy="rebuild")
    for processes in (1, 2, 5):
        forked = audit_settled(sim, domains=[ZONE], after=AFTER, processes=processes)
        assert forked.failures == rebuilt.failures and forked.workloads == rebuilt.workloads


def test_domains_of_the_same_nodes_share_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zone of one node and that node's hostname fail the same nodes: one run answers for
    both, and every record is the one its own run gives (each failure run separately on a
    rebuilt base), ranks and domains included."""
    from dataclasses import replace

    from kubespread.io.dump import cluster_objects
    from kubespread.plan import audit as audit_module
    from kubespread.plan.audit import AuditInput, build_base, failure_record, failures_of
    from kubespread.plan.audit_reads import distinct_runs

    docs = [node("n1", "a"), node("n2", "b"), node("n3", "b")]
    spread = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
    spread["labelSelector"] = {"matchLabels": {"app": "web"}}
    docs.append(deployment("web", 6, {"topologySpreadConstraints": [spread]}))
    sim = place(objects(*docs)).sim
    failures = failures_of(sim, [ZONE, HOST])
    assert [f.nodes for f in failures] == [("n1",), ("n2", "n3"), ("n1",), ("n2",), ("n3",)]
    assert distinct_runs([f.nodes for f in failures]) == ([0, 1, 3, 4], [0, 1, 0, 2, 3])
    runs: list[str] = []
    run_all = audit_module._run_all

    def counted(inp: Any, run: Any, *args: Any, **kwargs: Any) -> Any:
        runs.extend(f.name for f in run)
        return run_all(inp, run, *args, **kwargs)

    monkeypatch.setattr(audit_module, "_run_all", counted)
    doc = audit_settled(sim, domains=[ZONE, HOST], after=AFTER, processes=2)
    assert sorted(runs) == sorted([f"{ZONE}=a", f"{ZONE}=b", f"{HOST}=n2", f"{HOST}=n3"])
    inp = AuditInput(tuple(cluster_objects(sim.cluster)), features=sim.features)
    alone = {f.name: failure_record(build_base(inp), f, AFTER) for f in failures}  # each its own run
    assert {r.domain for r in doc.failures} == set(alone)
    for r in doc.failures:
        assert replace(r, rank=None) == alone[r.domain]
    assert [r.domain for r in doc.failures] == [
        r.domain for r in sorted(doc.failures, key=lambda r: audit_module._harm_order(r, [ZONE, HOST]))
    ]


def test_forked_runs_come_back_in_the_order_asked() -> None:
    """The costliest runs start first (a zone before its nodes), the records come back in
    the order of the failures given, each from its own run."""
    from kubespread.io.dump import cluster_objects
    from kubespread.plan.audit import AuditInput, _base_of, _fork_all, failures_of

    sim = place(zone_failure_input()).sim
    base = _base_of(AuditInput(tuple(cluster_objects(sim.cluster)), seed=0, features=sim.features))
    failures = list(reversed(failures_of(base.sim, [HOST, ZONE])))  # the nodes' first
    done: list[int] = []
    records = _fork_all(base, failures, AFTER, 2, lambda: done.append(1))
    assert [r.domain for r in records] == [f.name for f in failures]
    assert len(done) == len(failures)
    assert {r.nodes for r in records if r.key == ZONE} == {f.nodes for f in failures if f.key == ZONE}


def test_the_costliest_failure_runs_first() -> None:
    """A run's cost grows with the pods on the failed nodes: zones before nodes, each zone and
    node by its pods, ties in the order given."""
    from kubespread.plan.audit import costliest_first, failures_of

    sim = place(zone_failure_input()).sim
    failures = failures_of(sim, [HOST, ZONE])
    pods = {n: len(sim.cluster.pods_on_node(n)) for n in sim.cluster.nodes}
    cost = [sum(pods[n] for n in f.nodes) for f in failures]
    order = costliest_first(sim, failures)
    assert sorted(order) == list(range(len(failures)))
    assert [cost[i] for i in order] == sorted(cost, reverse=True)
    assert {failures[i].key for i in order[:3]} == {ZONE}
    for a, b in itertools.pairwise(order):
        assert cost[a] > cost[b] or a < b


def test_the_workloads_are_the_bases_before_any_failure() -> None:
    """The audit's workload counts come from the records (the parent need not build the
    base): each workload's desired and running replicas as the rebuilt base has them."""
    from kubespread.io.dump import cluster_objects
    from kubespread.plan.audit import AuditInput, build_base
    from kubespread.plan.audit_reads import desired_replicas, running_replicas

    objs = zone_failure_input() + objects(deployment("short", 2, {"nodeSelector": {"disk": "none"}}))
    sim = place(objs).sim
    base = build_base(AuditInput(tuple(cluster_objects(sim.cluster)), seed=0, features=sim.features))
    running = running_replicas(base)
    expected = [(wl, n, running.get(wl, 0)) for wl, n in desired_replicas(base).items()]
    for copy in ("fork", "rebuild"):
        doc = audit_settled(sim, domains=[ZONE], after=AFTER, processes=1, copy=copy)
        assert [(w.owner, w.desired, w.running) for w in doc.workloads] == expected
    assert any(n > r for _, n, r in expected)


def test_only_the_runs_build_a_base_when_each_rebuilds(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``copy="rebuild"`` (and so with a Dask cluster, whose workers build it) the
    audit builds no base of its own: one per run."""
    from kubespread.plan import audit as audit_module

    built: list[int] = []
    real = audit_module.build_base
    monkeypatch.setattr(audit_module, "build_base", lambda inp: built.append(1) or real(inp))
    sim = place(zone_failure_input()).sim
    doc = audit_settled(sim, domains=[ZONE], after=AFTER, processes=1, copy="rebuild")
    assert len(built) == len(doc.failures) == 3


def test_a_forked_child_freezes_what_it_inherits() -> None:
    """A child's collections leave the inherited objects alone (gc.freeze in the child); the
    caller's collector is untouched."""
    import gc

    from kubespread.plan.audit_forks import fork_each, forked

    def state() -> tuple[int, int]:  # (frozen, still collected) as the child sees them
        return gc.get_freeze_count(), len(gc.get_objects())

    before = gc.get_freeze_count()
    inherited = len(gc.get_objects())  # collected here, frozen already not counted
    for frozen, collected in (forked(state), fork_each([(state, ())], 1, lambda: None)[0]):
        assert frozen >= before + inherited // 2
        assert collected < inherited // 10
    assert gc.get_freeze_count() == before


def test_a_base_is_built_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The base is built with the collector paused (a Dask helper's just-unpickled input
    would be walked by the build's first collections); frozen after in a command's process
    alone, so that a library caller or a long-lived helper keeps no earlier base's cycles."""
    import gc

    from kubespread.api import model
    from kubespread.plan import audit as audit_module

    sim = place(zone_failure_input()).sim
    monkeypatch.setattr(model, "_FREEZE_OVER", 0)  # freeze any paused build, however small
    collecting: list[bool] = []
    real = audit_module.build_base
    watched = lambda inp: collecting.append(gc.isenabled()) or real(inp)  # noqa: E731
    monkeypatch.setattr(audit_module, "build_base", watched)
    frozen = gc.get_freeze_count()
    for _ in range(2):  # a library caller, audit after audit
        doc = audit_settled(sim, domains=[ZONE], after=AFTER, processes=1)
        assert len(doc.failures) == 3
    assert collecting == [False, False] and gc.isenabled()
    assert gc.get_freeze_count() <= frozen  # nothing joined the frozen
    monkeypatch.setattr(model, "_FREEZING", True)  # a command's process (collect_less)
    audit_module.base_of(audit_module.AuditInput(tuple(audit_module.cluster_objects(sim.cluster)), seed=0))
    assert gc.get_freeze_count() > frozen
    gc.unfreeze()  # back in the collector's generations, as the rest of the tests expect
    with audit_module._BASES_LOCK:
        audit_module._BASES.clear()


def test_a_run_that_fails_is_an_audit_error() -> None:
    from kubespread.io.dump import cluster_objects
    from kubespread.plan.audit import AuditInput, Failure, _base_of, _fork_all, failures_of

    sim = place(zone_failure_input()).sim
    base = _base_of(AuditInput(tuple(cluster_objects(sim.cluster)), seed=0, features=sim.features))
    failures = [*failures_of(base.sim, [ZONE]), Failure(HOST, "nowhere", ("nowhere",))]
    with pytest.raises(AuditError, match="a failure run failed"):
        _fork_all(base, failures, AFTER, 2, lambda: None)


def test_vary_picks_the_setting_that_survives() -> None:
    strict = [lo for lo in zone_failure_input() if lo.obj.kind == "Node" or lo.obj.metadata.name == "strict"]
    grid = parse_vary(["nodeTaintsPolicy=Ignore,Honor"])
    doc = vary_audit(strict, grid, domains=[ZONE], after=AFTER, processes=2)
    ranked = [(v.changes, v.survives, v.pending) for v in doc.variants]
    assert ranked == [({"nodeTaintsPolicy": "Honor"}, True, 0), ({"nodeTaintsPolicy": "Ignore"}, False, 6)]
    assert doc.best == {"nodeTaintsPolicy": "Honor"}


def test_parse_vary_makes_the_grid_and_refuses_bad_parts() -> None:
    assert parse_vary([]) == [{}]
    assert parse_vary(["maxSkew=1,2", "replicas=3"]) == [
        {"maxSkew": 1, "replicas": 3},
        {"maxSkew": 2, "replicas": 3},
    ]
    for bad in ("maxSkew=0", "colour=red", "maxSkew", "nodeTaintsPolicy=honour", "minDomains=x"):
        with pytest.raises(AuditError):
            parse_vary([bad])


def test_patch_touches_only_workloads_no_controller_owns() -> None:
    inp = zone_failure_input()
    patched = patch_workloads(inp, {"maxSkew": 2, "replicas": 4})
    for before, after in zip(inp, patched, strict=True):
        if before.obj.kind != "Deployment":
            assert after is before
            continue
        d = after.obj.to_dict()["spec"]
        assert d["replicas"] == 4
        assert {c["maxSkew"] for c in d["template"]["spec"]["topologySpreadConstraints"]} == {2}


def test_bad_input_is_an_audit_error() -> None:
    sim = place(zone_failure_input()).sim
    with pytest.raises(AuditError, match="no node carries the label 'rack'"):
        audit_settled(sim, domains=["rack"])
    with pytest.raises(AuditError, match="--after"):
        audit_settled(sim, domains=[ZONE], after=0)
    empty = place(objects(deployment("web", 1, {}))).sim
    with pytest.raises(AuditError, match="no nodes"):
        audit_settled(empty, domains=[ZONE])


@pytest.mark.slow
def test_a_dask_cluster_gives_the_local_json() -> None:
    distributed = pytest.importorskip(
        "distributed", reason="Dask distributed is not installed (kubespread[audit-dask])"
    )
    sim = place(zone_failure_input()).sim
    local = audit_settled(sim, domains=[ZONE, HOST], after=AFTER, processes=2)
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as c,
        distributed.Client(c) as client,
    ):
        remote = audit_settled(sim, domains=[ZONE, HOST], after=AFTER, client=client)
        assert len(client.scheduler_info()["workers"]) == 2
    local_doc, remote_doc = local.to_dict(), remote.to_dict()
    local_doc.pop("seconds"), remote_doc.pop("seconds")
    assert json.dumps(local_doc, sort_keys=True) == json.dumps(remote_doc, sort_keys=True)


def test_every_zone_of_the_snapshot_matches_a_scenario_written_to_disk(tmp_path: Path) -> None:
    """The by-hand route in full: the settled snapshot dumped to YAML, a scenario file that
    fails each zone's nodes and advances; ``simulate`` reads both from disk."""
    import yaml

    from kubespread.io.dump import cluster_objects, dump_objects

    snapshot = Path(__file__).resolve().parents[2] / "examples" / "snapshot" / "cluster.yaml"
    sim = place(load([str(snapshot)]).objects).sim
    (tmp_path / "cluster.yaml").write_text(dump_objects(cluster_objects(sim.cluster)))
    doc = audit_settled(sim, domains=[ZONE], after=AFTER, processes=2)
    for record in doc.failures:
        steps: list[dict[str, Any]] = [{"node": {"name": n, "action": "fail"}} for n in record.nodes]
        steps.append({"advance": f"{AFTER:g}s"})
        scenario = {
            "apiVersion": "kubespread.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "by-hand"},
            "cluster": ["cluster.yaml"],
            "steps": steps,
        }
        path = tmp_path / f"{record.value}.yaml"
        path.write_text(yaml.safe_dump(scenario))
        final = simulate(load_scenario(path)).final
        failed = set(record.nodes)
        running: dict[str, int] = {}
        for p in final.pods:
            if p.node and p.node not in failed and not p.terminating and p.owner:
                key = f"{p.namespace}/{p.owner.kind}/{p.owner.name}"
                running[key] = running.get(key, 0) + 1
        got = {w.owner: w.running for w in record.workloads}
        assert got == {k: running.get(k, 0) for k in got}, record.domain
        pending = sorted(p.key for p in final.pending)
        audited = sorted(k for w in record.workloads for r in w.pending_reasons for k in r.pods)
        assert audited == pending, record.domain
        assert record.harm.pending > 0  # every zone of the snapshot strands someone
