"""The Dask path's worker side (``kubespread.plan.audit_dask``) without a cluster: a run from
the packed input, by this process's helper, gives the record a base rebuilt from the original
input gives; a process unpickles an input once and keeps only the last one; the chunks cover
every run once, costliest first. (``test_audit.py`` runs the whole audit on a LocalCluster
against the local way.)"""

from __future__ import annotations

import gc
import itertools
import operator
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_audit import AFTER, HOST, ZONE, zone_failure_input

from kubespread.io.dump import cluster_objects
from kubespread.io.loader import LoadedObject
from kubespread.plan.audit import AuditInput, failures_of, run_failure
from kubespread.plan.audit_dask import chunks, packed, private_dir, run_chunk, unpacked
from kubespread.plan.audit_forks import ForkError
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
    rebuilt = [run_failure(inp, failure, AFTER, "rebuild") for failure in failures]
    calls = [(failure, AFTER, "fork") for failure in failures]
    assert run_chunk(run_failure, inp.token, data, calls, 1) == rebuilt
    assert run_chunk(run_failure, inp.token, data, calls[::-1], len(calls)) == rebuilt[::-1]
    assert gc.isenabled()


def test_a_runs_error_is_raised_by_its_task() -> None:
    data = packed(1.0)
    assert run_chunk(operator.truediv, "one", data, [(2.0,), (4.0,)], 2) == [0.5, 0.25]
    with pytest.raises(ZeroDivisionError):
        run_chunk(operator.truediv, "one", data, [(2.0,), (0.0,)], 1)
    assert run_chunk(operator.truediv, "one", data, [(8.0,)], 1) == [0.125]  # the helper lives on


def test_the_helper_collects_as_a_command_and_freezes_nothing() -> None:
    """The helper's runs collect at the command's thresholds (at Python's defaults the zone
    runs at 1,000 nodes took 11.3 s on Dask against 8.7 s forked by the command); it lives on
    from audit to audit, so ``gc_paused`` freezes nothing there."""
    from kubespread.api.model import COMMAND_GC_THRESHOLDS

    asked = "(__import__('gc').get_threshold(), __import__('kubespread.api.model').api.model._FREEZING)"
    assert run_chunk(eval, "ask", packed(asked), [()], 1) == [(COMMAND_GC_THRESHOLDS, False)]


@given(st.integers(0, 300), st.lists(st.integers(1, 4), min_size=1, max_size=5))
def test_the_chunks_cover_every_run_once_costliest_first(n: int, threads: list[int]) -> None:
    ranked = list(range(n))[::-1]
    tasks = chunks(ranked, threads)
    if n < 2 * sum(threads):  # one task per worker, dealt in turn, all at once
        assert sorted(i for _, share, _ in tasks for i in share) == sorted(ranked)
        assert [w for w, _, _ in tasks] == list(range(min(n, len(threads))))
        assert all(at_once == len(share) for _, share, at_once in tasks)
        assert all(share == ranked[w :: len(threads)] for w, share, _ in tasks)
    else:  # any worker, one run at a time, shrinking
        assert [i for _, share, _ in tasks for i in share] == ranked
        sizes = [len(share) for _, share, _ in tasks]
        assert all(a >= b for a, b in itertools.pairwise(sizes)) and sizes[-1] == 1
        assert all(w is None and at_once == 1 for w, _, at_once in tasks)
        assert len(tasks) < 2 * sum(threads) * (2 + n.bit_length())


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


def test_the_helpers_directory_is_this_users_alone(tmp_path: Path) -> None:
    """The socket's directory is made 0700, and one that others can enter, or a link to one,
    is refused (another user could otherwise take the socket's name and be sent the dump)."""
    made = Path(private_dir(str(tmp_path)))
    assert made.parent == tmp_path and stat.S_IMODE(made.stat().st_mode) == 0o700
    assert private_dir(str(tmp_path)) == str(made)  # found again, as it is
    made.chmod(0o755)
    with pytest.raises(ForkError, match="not a directory of this user's alone"):
        private_dir(str(tmp_path))
    made.chmod(0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(elsewhere, linked / made.name)
    with pytest.raises(ForkError, match="not a link"):
        private_dir(str(linked))
