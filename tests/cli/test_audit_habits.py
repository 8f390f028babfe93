"""``audit`` as a new user meets it: every hint for a pending reason is shown (the minDomains
and nodeTaintsPolicy ones came third and fourth, and were cut), ``--domains zone`` points at
``topology.kubernetes.io/zone``, and "lost" counts only the replicas a failure took."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubespread.cli.app import app
from kubespread.io import load
from kubespread.plan.audit import audit

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
CLUSTER = ["-f", str(EXAMPLES / "nodes-3-zones.yaml"), "-f", str(EXAMPLES / "zone-failure-deployments.yaml")]
ZONE = "topology.kubernetes.io/zone"

#: three replicas of 3 CPUs pinned to zone-a's two 4-CPU nodes: one is pending before any failure
SHORT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      nodeSelector: {topology.kubernetes.io/zone: zone-a}
      containers: [{name: app, image: "app:1", resources: {requests: {cpu: "3"}}}]
"""


def test_every_hint_of_a_pending_reason_is_shown() -> None:
    r = CliRunner().invoke(app, ["audit", *CLUSTER, "--domains", ZONE])
    assert r.exit_code == 0, r.output
    hints = [line.strip() for line in r.stdout.splitlines() if line.strip().startswith("hint:")]
    assert any(h.startswith("hint: minDomains 3 on topology.kubernetes.io/zone") for h in hints)
    assert any("nodeTaintsPolicy: Ignore (the default)" in h for h in hints)
    assert len(hints) == 8  # four per workload, all of them


def test_a_bare_label_name_suggests_the_well_known_key() -> None:
    r = CliRunner().invoke(app, ["audit", *CLUSTER, "--domains", "zone"])
    assert r.exit_code == 1
    assert "no node carries the label 'zone'; did you mean topology.kubernetes.io/zone?" in r.stderr


def test_lost_counts_only_what_the_failure_took(tmp_path: Path) -> None:
    short = tmp_path / "big.yaml"
    short.write_text(SHORT)
    objects = load([str(EXAMPLES / "nodes-3-zones.yaml"), str(short)]).objects
    result = audit(objects, domains=[ZONE])
    by_zone = {r.value: r for r in result.failures}
    elsewhere = next(w for w in by_zone["zone-c"].workloads if w.owner == "default/Deployment/big")
    assert (elsewhere.running_before, elsewhere.running, elsewhere.unavailable, elsewhere.lost) == (
        2,
        2,
        1,
        0,
    )
    assert by_zone["zone-c"].harm.lost == 0 and by_zone["zone-c"].harm.unavailable == 1
    hit = next(w for w in by_zone["zone-a"].workloads if w.owner == "default/Deployment/big")
    assert (hit.running, hit.lost) == (0, 2)
    assert result.failures[0].value == "zone-a"  # ranked by what was lost
