#!/usr/bin/env python3
"""Regenerate examples/rebalance/README.md and states/: each example's state (the dump
``kubespread simulate EXAMPLE --dump`` writes, in states/), then the rebalance plan and the
descheduler baseline, replayed (the same code as ``kubespread rebalance --strategy
compare``). Run it after changing the planner, the descheduler model or an example:

    .venv/bin/python scripts/make_rebalance_examples.py
"""

from __future__ import annotations

from pathlib import Path

from kubespread.io.dump import cluster_objects, dump_objects
from kubespread.plan.rebalance import RebalancePlan, rebalance
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "rebalance"

INTRO = """\
# Rebalancing examples

Each scenario here ends in a state where running pods are past a topology spread
constraint's maxSkew, or where a balancer would think so, reproducing a descheduler issue.
Run one, then plan (states/ holds each example's end state, so the second command alone
also works: `kubespread rebalance -f examples/rebalance/states/min-domains.yaml`):

    kubespread simulate examples/rebalance/zone-outage-recovery.yaml --dump state.yaml
    kubespread rebalance -f state.yaml --strategy compare

Both plans are replayed through the simulation (Eviction API, controllers, kube-scheduler
v1.35). "balanced" means every DoNotSchedule constraint within maxSkew after the replay with
no replica left pending. This file is written by `scripts/make_rebalance_examples.py`.

| example | kubespread | descheduler (RemovePodsViolatingTopologySpreadConstraint) |
|---|---|---|
"""


def _describe(plan: RebalancePlan) -> str:
    parts = [f"{plan.evictions} eviction{'s' if plan.evictions != 1 else ''}"]
    if plan.waves:
        parts.append(f"{len(plan.waves)} wave{'s' if len(plan.waves) != 1 else ''}")
    parts.append("balanced" if plan.balanced else "not balanced")
    if plan.strategy == "kubespread" and plan.proven and plan.evictions:
        parts.append("proven minimal")
    if plan.loop:
        parts.append("loops: the replacements land where the pods were")
    if plan.pending:
        n = len(plan.pending)
        parts.append(f"{n} replica{'s' if n != 1 else ''} pending")
    if plan.strategy == "kubespread" and plan.cannot:
        parts.append(f"`{plan.cannot}`")
    return ", ".join(parts)


def _summary(path: Path) -> str:
    """The first sentence of the example's leading comment."""
    words: list[str] = []
    for line in path.read_text().splitlines():
        if not line.startswith("#") or line.startswith("#   "):
            break
        words.append(line.lstrip("#").strip())
    text = " ".join(words)
    return text.split(". ")[0].rstrip(".") + "."


def main() -> None:
    rows = []
    for path in sorted(FOLDER.glob("*.yaml")):
        result = simulate(load_scenario(path))
        assert result.sim is not None
        (FOLDER / "states").mkdir(exist_ok=True)
        (FOLDER / "states" / path.name).write_text(dump_objects(cluster_objects(result.sim.cluster)))
        ours = rebalance(result.sim)
        theirs = rebalance(result.sim, strategy="descheduler")
        first = _summary(path)
        rows.append(f"| [{path.stem}]({path.name}): {first} | {_describe(ours)} | {_describe(theirs)} |")
    (FOLDER / "README.md").write_text(INTRO + "\n".join(rows) + "\n")
    print(f"wrote {FOLDER / 'README.md'} ({len(rows)} examples)")


if __name__ == "__main__":
    main()
