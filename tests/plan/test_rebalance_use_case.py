"""plan.rebalance.plan_rebalance: the ``rebalance`` command as one function, a
RebalanceRequest (a settled Baseline) in and a RebalancePlan, or with ``compare`` a
RebalanceComparison, out; without the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.io import load
from kubespread.plan.rebalance import (
    ALL,
    RebalanceComparison,
    RebalanceError,
    RebalancePlan,
    RebalanceRequest,
    plan_rebalance,
)
from kubespread.sim.baseline import Baseline, settle

STATES = Path(__file__).resolve().parents[2] / "examples" / "rebalance" / "states"


@pytest.fixture(scope="module")
def outage() -> Baseline:
    """The zone outage example's state: one zone back, the pods still in the other two."""
    return settle(load([STATES / "zone-outage-recovery.yaml"]))


def test_the_solvers_plan_balances_and_leaves_the_baseline_alone(outage: Baseline) -> None:
    pods = {k: outage.cluster.node_of(k) for k in outage.cluster.pods}
    plan = plan_rebalance(RebalanceRequest(outage, time_limit=5))
    assert isinstance(plan, RebalancePlan)
    assert plan.strategy == "kubespread" and plan.balanced and plan.proven
    assert plan.evictions == plan.minimum > 0
    assert {k: outage.cluster.node_of(k) for k in outage.cluster.pods} == pods
    assert plan.to_dict()["evictions"] == plan.evictions
    with pytest.raises(AttributeError):  # a result, frozen
        plan.cannot = "x"  # type: ignore[misc]
    doc = plan.scenario_doc("cluster.yaml", seed=0)
    assert doc["cluster"] == ["cluster.yaml"] and doc["steps"] == list(plan.steps)


def test_max_moves_bounds_the_plan(outage: Baseline) -> None:
    plan = plan_rebalance(RebalanceRequest(outage, max_moves=0, time_limit=5))
    assert isinstance(plan, RebalancePlan)
    assert plan.evictions == 0 and plan.cannot


def test_compare_replays_both_strategies_from_the_same_cluster(outage: Baseline) -> None:
    answer = plan_rebalance(RebalanceRequest(outage, strategy="compare", constraints=ALL, time_limit=5))
    assert isinstance(answer, RebalanceComparison)
    assert [p.strategy for p in answer.plans] == ["kubespread", "descheduler"]
    assert list(answer.to_dict()) == ["kubespread", "descheduler"]
    alone = plan_rebalance(RebalanceRequest(outage, strategy="descheduler", constraints=ALL))
    assert isinstance(alone, RebalancePlan)
    assert alone.to_dict() | {"seconds": 0} == answer.descheduler.to_dict() | {"seconds": 0}


def test_an_unknown_strategy_is_a_rebalance_error(outage: Baseline) -> None:
    with pytest.raises(RebalanceError, match="unknown strategy 'greedy'"):
        plan_rebalance(RebalanceRequest(outage, strategy="greedy"))
