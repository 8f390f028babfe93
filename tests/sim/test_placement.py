"""sim.placement: what counts as existing, all-or-nothing validation, the snapshot's clock, and
the long-pending pod that used to overflow the backoff."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubespread.api.core import Pod
from kubespread.api.timestamps import virtual_seconds
from kubespread.io import load
from kubespread.scheduler.queue import MAX_BACKOFF_SECONDS, QueuedPodInfo
from kubespread.sim.placement import NoProfile, PlacementError, explain_key, is_existing, place
from placement_inputs import node, pod, spread, write


def test_what_exists_and_what_is_created() -> None:
    bare = Pod.from_dict(pod("a", {}))
    bound = Pod.from_dict(pod("b", {}, node_name="n1"))
    dumped = Pod.from_dict({**pod("c", {}), "metadata": {"name": "c", "uid": "u-1"}})
    stamped = Pod.from_dict(
        {**pod("d", {}), "metadata": {"name": "d", "creationTimestamp": "2026-11-01T00:00:00Z"}}
    )
    assert [is_existing(p) for p in (bare, bound, dumped, stamped)] == [False, True, True, True]


def test_new_objects_are_created_through_the_api_server_existing_ones_are_not(tmp_path: Path) -> None:
    """A new pod gets the API server's defaults (matchLabelKeys merged into its selector); a
    dumped pending pod is taken as stored."""
    c = spread("zone", matchLabelKeys=["app"])
    new = pod("new", {"foo": "bar", "app": "x"}, topologySpreadConstraints=[c])
    old = pod("old", {"foo": "bar", "app": "x"}, topologySpreadConstraints=[c])
    old["metadata"]["uid"] = "u-old"
    path = write(tmp_path / "in.yaml", [node("n1", "a"), new, old])
    result = place(load([path]))
    merged = result.sim.cluster.pods["default/new"].spec.topology_spread_constraints[0].label_selector
    kept = result.sim.cluster.pods["default/old"].spec.topology_spread_constraints[0].label_selector
    assert [e.key for e in merged.match_expressions] == ["app"]
    assert kept.match_expressions == []
    assert [s.description for s in result.steps] == ["create Pod default/new"]


def test_nothing_runs_when_the_cluster_does_not_hold_together(tmp_path: Path) -> None:
    path = write(tmp_path / "in.yaml", [pod("lost", {}, node_name="nowhere"), pod("bad", {"a": "-x-"})])
    with pytest.raises(PlacementError) as e:
        place(load([path]))
    text = "\n".join(e.value.problems)
    assert "nowhere" in text
    assert "metadata.labels" in text


def test_a_snapshot_is_simulated_from_its_own_time(tmp_path: Path) -> None:
    n = node("n1", "a")
    n["metadata"]["creationTimestamp"] = "2026-11-20T14:45:31Z"
    result = place(load([write(tmp_path / "in.yaml", [n])]))
    assert result.sim.now == virtual_seconds("2026-11-20T14:45:31Z")
    assert place(load([write(tmp_path / "plain.yaml", [node("n1", "a")])])).sim.now == 0


def test_backoff_is_capped_for_a_pod_pending_for_days() -> None:
    info = QueuedPodInfo("default/p", 0, 0.0, attempts=5000, last_failure=100.0)
    assert info.backoff_expiry() == 100.0 + MAX_BACKOFF_SECONDS


def test_pods_of_kubespreads_own_scheduler_name_are_decided_as_it_decides(tmp_path: Path) -> None:
    """`kubespread scheduler` serves schedulerName kubespread with the default profile when it
    has no --config: schedule/explain of a live cluster decide its pods the same way. A name
    no profile serves stays pending and explain says which configuration to give."""
    ours = pod("ours", {}, schedulerName="kubespread")
    theirs = pod("theirs", {}, schedulerName="gpu-scheduler")
    result = place(load([write(tmp_path / "in.yaml", [node("n1", "a"), ours, theirs])]))
    cluster = result.sim.cluster
    assert cluster.pods["default/ours"].spec.node_name == "n1"
    assert explain_key(result.sim, "default/ours").to_dict()["selectedNode"] == "n1"
    assert not cluster.pods["default/theirs"].spec.node_name
    with pytest.raises(NoProfile, match=r"'gpu-scheduler'.*--scheduler-config"):
        explain_key(result.sim, "default/theirs")


def test_snapshots_without_distributions_place_and_spread_alike(tmp_path: Path) -> None:
    """``distributions=False`` (the table of ``schedule``): the same placements, pending pods
    and involved spread; the final snapshot is the last step's; reading a distribution that
    was not taken says so rather than writing an empty one."""
    c = spread("zone")
    objs = [
        node("n1", "a"),
        node("n2", "b"),
        *(pod(f"p{i}", {"app": "x"}, topologySpreadConstraints=[c]) for i in range(3)),
    ]
    path = write(tmp_path / "in.yaml", objs)
    full, lean = place(load([path])), place(load([path]), distributions=False)
    assert [p.to_dict() for p in lean.placements] == [p.to_dict() for p in full.placements]
    assert [p.to_dict() for p in lean.final.pending] == [p.to_dict() for p in full.final.pending]
    assert [r.to_dict() for r in lean.spread()] == [r.to_dict() for r in full.spread()]
    assert full.final is full.steps[-1].snapshot and full.final.distribution
    assert not lean.initial.snapshot.distribution_taken and not lean.final.distribution
    with pytest.raises(LookupError):
        lean.to_dict()
    with pytest.raises(LookupError):
        lean.initial.snapshot.to_dict()
