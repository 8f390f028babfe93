"""Regenerate the ``-o json`` goldens of every command on the bundled examples.

Each case of ``CASES`` is one command line run in-process from the repository's root; its
stdout, parsed and masked (``mask``), is written to ``tests/data/json-goldens/NAME.json``
(``.json.gz`` when the text is over ``GZIP_OVER`` bytes, so the repository does not carry
megabytes of JSON). ``tests/cli/test_json_goldens.py`` runs the same cases and compares:
the JSON users see stays field for field what it was when the goldens were made. Run it
only when a change to the JSON is meant (and say so in the README).

    .venv/bin/python scripts/make_json_goldens.py [NAME ...]
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kubespread.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
GOLDENS = ROOT / "tests" / "data" / "json-goldens"
GZIP_OVER = 200_000
SNAPSHOT = "-f examples/snapshot/cluster.yaml"
CHECKOUT = "-f examples/snapshot/checkout.yaml"
PREEMPTION = (
    "-f examples/scenarios/nodes-3-zones-1-node.yaml"
    " -f examples/preemption/batch.yaml -f examples/preemption/critical.yaml"
)
ZONE_FAILURE = "-f examples/scenarios/nodes-3-zones.yaml -f examples/scenarios/zone-failure-deployments.yaml"
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
STATES = "-f examples/rebalance/states"
VARY = "nodeTaintsPolicy=Ignore,Honor"
DIFF = "-f examples/diff/nodes.yaml --before examples/diff/web.yaml --after examples/diff/web-honor.yaml"

#: name -> command line (after ``kubespread``); every command with ``-o json`` but bench
#: (its input is a ../shared benchmark and its numbers are timings)
CASES: dict[str, str] = {
    "schedule-snapshot": f"schedule {SNAPSHOT} {CHECKOUT} -o json",
    "schedule-preemption": f"schedule {PREEMPTION} -o json",
    "explain-snapshot": f"explain shop/search-56795cc8ff-xkjnr {SNAPSHOT} -o json",
    "explain-preemptor": f"explain default/payments-5d7c7db849-nndwb {PREEMPTION} -o json",
    "diff": f"diff {DIFF} -o json",
    "validate-snapshot": f"validate {SNAPSHOT} -o json",
    "validate-broken": "validate -f tests/data/broken/spread-maxskew-zero.yaml -o json",
    "get-nodes": "get nodes -f examples/cluster -o json",
    "get-pods": "get pods -f examples/cluster -o json",
    "simulate-preemption": "simulate examples/scenarios/preemption.yaml -o json",
    "simulate-drain-with-pdb": "simulate examples/scenarios/drain-with-pdb.yaml -o json",
    "simulate-workloadspread-subsets": "simulate examples/scenarios/workloadspread-subsets.yaml -o json",
    "simulate-runs": "simulate examples/scenarios/scale-down-imbalance.yaml --runs 3 -o json",
    "capacity-snapshot": f"capacity {SNAPSHOT} {CHECKOUT} -o json",
    "provision-example": (
        "provision -f examples/provision/cluster.yaml -f examples/provision/web.yaml"
        " --node-template examples/provision/templates.yaml --compare autoscaler -o json"
    ),
    "rebalance-zone-outage-recovery": f"rebalance {STATES}/zone-outage-recovery.yaml -o json",
    "rebalance-zone-and-hostname": f"rebalance {STATES}/zone-and-hostname.yaml -o json",
    "rebalance-pods-without-controller": f"rebalance {STATES}/pods-without-controller.yaml -o json",
    "audit-snapshot": f"audit {SNAPSHOT} -o json --processes 2",
    "audit-zone-failure": f"audit {ZONE_FAILURE} --domains {ZONE},{HOST} -o json --processes 2",
    "audit-vary": f"audit {ZONE_FAILURE} --domains {ZONE} --vary {VARY} -o json --processes 2",
}

#: object members whose values change from run to run or machine to machine: wall-clock
#: times (audit's and rebalance's ``seconds``, ``solveSeconds``, explain's ``timings``), the
#: version, and the processes audit used. Their presence stays compared, their value becomes "<masked>".
VOLATILE = frozenset({"seconds", "solveSeconds", "timings", "version", "processes"})
MASKED = "<masked>"


def mask(value: Any) -> Any:
    """``value`` with every ``VOLATILE`` member's value replaced and the repository's absolute
    path written as ``<root>`` in strings (file names the commands echo)."""
    if isinstance(value, dict):
        return {k: MASKED if k in VOLATILE else mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, str):
        return value.replace(str(ROOT), "<root>")
    return value


def run(name: str) -> Any:
    """The masked JSON ``CASES[name]`` prints, run in the repository's root."""
    cwd = Path.cwd()
    try:
        os.chdir(ROOT)
        result = CliRunner().invoke(app, shlex.split(CASES[name]))
    finally:
        os.chdir(cwd)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise RuntimeError(f"{name}: {result.exception!r}")
    return mask(json.loads(result.stdout))


def golden_path(name: str) -> Path:
    plain = GOLDENS / f"{name}.json"
    return plain if plain.exists() else GOLDENS / f"{name}.json.gz"


def load(name: str) -> Any:
    path = golden_path(name)
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return json.loads(text)


def write(name: str, doc: Any) -> Path:
    GOLDENS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    for old in (GOLDENS / f"{name}.json", GOLDENS / f"{name}.json.gz"):
        old.unlink(missing_ok=True)
    if len(text) <= GZIP_OVER:
        path = GOLDENS / f"{name}.json"
        path.write_text(text)
    else:
        path = GOLDENS / f"{name}.json.gz"
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return path


def main(names: list[str]) -> None:
    for name in names or list(CASES):
        path = write(name, run(name))
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
