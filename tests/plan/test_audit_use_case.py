"""plan.audit.run_audit: the ``audit`` command as one function, an AuditRequest in and an
AuditResult (or with a ``--vary`` grid a VaryResult) out, errors as AuditError; and the
option values it reads (``parse_domains``, ``parse_after``) checked where they are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.io import Manifests, load
from kubespread.plan.audit import AuditError, AuditRequest, parse_after, parse_domains, parse_vary, run_audit
from kubespread.plan.results import AuditResult, VaryResult
from kubespread.sim.baseline import Baseline, settle

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return load([SCENARIOS / "nodes-3-zones.yaml", SCENARIOS / "zone-failure-deployments.yaml"])


@pytest.fixture(scope="module")
def baseline(manifests: Manifests) -> Baseline:
    return settle(manifests)


def test_every_zone_fails_in_turn_ranked_by_harm(baseline: Baseline) -> None:
    calls: list[tuple[int, int]] = []
    result = run_audit(
        AuditRequest(settled=baseline, domains=(ZONE,), on_done=lambda d, n: calls.append((d, n)))
    )
    assert isinstance(result, AuditResult)
    assert result.domains == (ZONE,) and result.after == 600.0
    assert [r.rank for r in result.failures] == [1, 2, 3]
    assert calls == [(1, 3), (2, 3), (3, 3)]
    harms = [(r.harm.unavailable, r.harm.pending) for r in result.failures]
    assert harms == sorted(harms, reverse=True)
    # rows are whole workloads: their top owner, the Deployment
    owners = {w.owner for w in result.workloads}
    assert owners == {w.owner for r in result.failures for w in r.workloads}
    assert all(o.startswith("default/Deployment/") for o in owners)
    assert all("owner" in w and "workload" not in w for w in result.to_dict()["workloads"])


def test_limit_and_after_reach_the_runs(baseline: Baseline) -> None:
    result = run_audit(AuditRequest(settled=baseline, domains=(ZONE,), after=30.0, limit=1))
    assert isinstance(result, AuditResult)
    assert [r.value for r in result.failures] == ["zone-a"] and result.after == 30.0


def test_a_grid_audits_every_combination_of_the_input(manifests: Manifests) -> None:
    grid = parse_vary(["nodeTaintsPolicy=Ignore,Honor"])
    result = run_audit(AuditRequest(objects=manifests.objects, grid=grid, domains=(ZONE,), limit=1))
    assert isinstance(result, VaryResult)
    assert sorted(v.changes["nodeTaintsPolicy"] for v in result.variants) == ["Honor", "Ignore"]
    assert [v.rank for v in result.variants] == [1, 2]
    assert result.best == result.variants[0].changes


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (AuditRequest(), "nothing to audit"),
        (AuditRequest(grid=[{"maxSkew": 1}]), "--vary needs the input objects"),
    ],
)
def test_a_request_without_a_cluster_is_an_audit_error(request_: AuditRequest, message: str) -> None:
    with pytest.raises(AuditError, match=message):
        run_audit(request_)


def test_a_key_no_node_carries_is_an_audit_error(baseline: Baseline) -> None:
    with pytest.raises(AuditError, match="no node carries the label 'rack'"):
        run_audit(AuditRequest(settled=baseline, domains=("rack",)))


def test_the_option_values() -> None:
    assert parse_domains(f" {ZONE},rack,{ZONE}, ") == (ZONE, "rack")
    assert parse_after("10m") == 600.0
    with pytest.raises(AuditError, match="at least one node label key"):
        parse_domains(" , ")
    with pytest.raises(AuditError, match="must be a duration"):
        parse_after("soon")
    with pytest.raises(AuditError, match="more than 0 seconds"):
        parse_after("0s")
