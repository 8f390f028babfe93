"""The Dask path's worker side (``kubespread.plan.audit_dask``) without a cluster: a run from
the packed input gives the record a base rebuilt from the original input gives, and a process
unpickles an input once and keeps only the last one. (``test_audit.py`` runs the whole audit
on a LocalCluster against the local way.)"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from test_audit import AFTER, HOST, ZONE, zone_failure_input

from kubespread.io.dump import cluster_objects
from kubespread.io.loader import LoadedObject
from kubespread.plan.audit import AuditInput, failures_of, run_failure
from kubespread.plan.audit_dask import packed, run_packed, unpacked
from kubespread.sim.placement import place


def _input(objs: list[LoadedObject]) -> AuditInput:
    sim = place(objs).sim
    return AuditInput(tuple(cluster_objects(sim.cluster)), seed=0, features=sim.features)


def _dicts(inp: AuditInput) -> list[dict[str, Any]]:
    return [o.to_dict() for o in inp.dump]


def test_a_run_from_the_packed_input_is_the_rebuilt_bases_run() -> None:
    inp = _input(zone_failure_input())
    data = packed(inp)
    failures = failures_of(place(zone_failure_input()).sim, [ZONE, HOST], limit=2)
    for failure in failures:
        rebuilt = run_failure(inp, failure, AFTER, "rebuild")
        assert run_packed(run_failure, inp.token, data, failure, AFTER, "fork") == rebuilt
    assert gc.isenabled()


def test_a_process_unpickles_an_input_once_and_keeps_the_last() -> None:
    a = _input(zone_failure_input())
    b = _input([lo for lo in zone_failure_input() if lo.obj.kind == "Node"])
    first = unpacked(a.token, packed(a))
    assert _dicts(first) == _dicts(a)
    assert unpacked(a.token, b"") is first  # kept: the bytes are not read again
    second = unpacked(b.token, packed(b))
    assert _dicts(second) == _dicts(b) != _dicts(a)
    again = unpacked(a.token, packed(a))
    assert again is not first and _dicts(again) == _dicts(a)
    assert gc.isenabled()


def test_pickling_either_way_freezes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector is paused, not frozen after: a worker's previous base, alive while the
    next input is unpickled, would otherwise stay frozen with its cycles for good."""
    from kubespread.api import model

    monkeypatch.setattr(model, "_FREEZE_OVER", 0)  # gc_paused would freeze anything it built
    inp = _input(zone_failure_input())
    frozen = gc.get_freeze_count()
    unpacked(inp.token, packed(inp))
    assert gc.get_freeze_count() <= frozen  # freed ones leave it; nothing joins it
    assert gc.isenabled()
