"""Every example of examples/rebalance: the plan against the descheduler baseline, as the
examples' README tells it; kubespread's evictions are never more than the baseline's."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.plan.rebalance import RebalancePlan, rebalance
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rebalance"

#: example: (kubespread evictions, balanced, descheduler evictions, balanced, loops)
EXPECTED = {
    "zone-outage-recovery": (2, True, 2, True, False),
    "zone-and-hostname": (2, True, 4, True, False),
    "node-affinity": (2, True, 2, True, False),
    "full-target-node": (0, False, 2, False, False),
    "tainted-nodes": (0, True, 0, True, False),
    "min-domains": (0, False, 0, False, False),
    "pods-without-controller": (0, True, 2, True, True),
}


def _plans(name: str) -> tuple[RebalancePlan, RebalancePlan]:
    result = simulate(load_scenario(EXAMPLES / f"{name}.yaml"))
    assert result.sim is not None
    ours = rebalance(result.sim)
    theirs = rebalance(result.sim, strategy="descheduler")
    return ours, theirs


def test_every_example_is_listed() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example(name: str) -> None:
    ours, theirs = _plans(name)
    got = (ours.evictions, ours.balanced, theirs.evictions, theirs.balanced, theirs.loop)
    assert got == EXPECTED[name]
    assert ours.evictions <= theirs.evictions
    if ours.evictions:
        assert ours.proven and all(m.as_planned for wave in ours.waves for m in wave)
    if not ours.balanced:
        assert ours.cannot.startswith("cannot be balanced: ")
    if name == "full-target-node":
        assert "resources" in ours.cannot and "topology spread" in ours.cannot
        assert len(theirs.pending) == 1  # the descheduler's second eviction stays pending
    if name == "min-domains":
        assert "minDomains 3" in ours.cannot
