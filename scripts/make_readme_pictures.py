#!/usr/bin/env python3
"""Regenerate the README's pictures from the current code (the report's own drawing):
docs/zone-failure-pods-per-zone.png, the pods per zone through
examples/scenarios/zone-failure.yaml, failed nodes shaded.

    .venv/bin/python scripts/make_readme_pictures.py
"""

from __future__ import annotations

from pathlib import Path

from kubespread.report import plots
from kubespread.sim.run import simulate
from kubespread.sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def zone_failure_steps() -> list[dict]:
    """The scenario's steps as the report draws them (labels as ``simulate --report``)."""
    doc = simulate(load_scenario(ROOT / "examples" / "scenarios" / "zone-failure.yaml")).to_dict()
    steps = [{**doc["initial"], "label": "initial cluster"}]
    steps += [{**s, "label": f"step {s['index'] + 1}: {s['description']}"} for s in doc["steps"]]
    return steps


def main() -> None:
    png = plots.pods_per_domain_png(zone_failure_steps())
    assert png is not None
    out = ROOT / "docs" / "zone-failure-pods-per-zone.png"
    out.write_bytes(png)
    print(f"wrote {out} ({len(png):,} bytes)")


if __name__ == "__main__":
    main()
