"""plan.capacity: greedy is cluster-capacity (clones one by one through the scheduler), the
maximum is the brute-force optimum, and limitedBy names what binds."""

from __future__ import annotations

import pytest

from builders import cluster_of, make_node, make_pod
from capacity_cases import CASES, WEB, ZONE, brute_force
from kubespread.api.core import Pod
from kubespread.cluster.state import ClusterState
from kubespread.harness.evaluate import schedule_in_turn
from kubespread.plan.capacity import greedy, maximum
from kubespread.scheduler import default_profile
from kubespread.solve import clones


def one_by_one(cluster: ClusterState, template: Pod, limit: int) -> int:
    """The scheduler's sequence mode on the clones, counted up to the first pending one."""
    placed = 0
    for decision in schedule_in_turn(cluster, default_profile(), clones(template, limit), bind=True):
        if decision.selected is None:
            break
        placed += 1
    return placed


@pytest.mark.parametrize("name", sorted(CASES))
def test_greedy_is_one_by_one_scheduling_and_leaves_the_cluster_alone(name: str) -> None:
    cluster, template = CASES[name]()
    before = set(cluster.pods)
    found = greedy(cluster, template, default_profile(), 20)
    assert set(cluster.pods) == before
    assert found == one_by_one(CASES[name]()[0], template, 20)


def test_the_scheduler_strands_replicas_the_solver_places() -> None:
    cluster, template = CASES["two spreads"]()
    profile = default_profile()
    result = maximum(cluster, template, profile, max_count=20, time_limit=5)
    assert greedy(cluster, template, profile, 20) == 5
    assert result.maximum == 7 == brute_force(cluster, template, profile, per_node=4)
    assert result.proven
    assert result.per_domain == {ZONE: {"b": 4, "c": 3}}
    assert result.limited_by == [f"topology spread {ZONE} maxSkew 1"]


def test_max_caps_both_answers() -> None:
    cluster = cluster_of([make_node("a1").zone("a"), make_node("b1").zone("b")])
    template = make_pod("web").labels(app="web").req(cpu="100m").obj()
    assert greedy(cluster, template, default_profile(), 5) == 5
    result = maximum(cluster, template, default_profile(), max_count=5)
    assert (result.maximum, result.limited_by) == (5, ["max 5"])


def test_resources_bind_by_name() -> None:
    cluster = cluster_of(
        [make_node("a1").zone("a").capacity(cpu="2"), make_node("b1").zone("b").capacity(cpu="1")]
    )
    template = make_pod("web").labels(app="web").req(cpu="1").spread(1, ZONE, selector=WEB).obj()
    result = maximum(cluster, template, default_profile(), max_count=50)
    assert result.maximum == 3
    # 2 + 1 is also what spread allows: only the cpu binds
    assert result.limited_by == ["cpu on nodes a1,b1"]


def test_many_full_nodes_are_counted_not_all_listed() -> None:
    cluster = cluster_of([make_node(f"n{i}").capacity(cpu="1") for i in range(7)])
    template = make_pod("web").labels(app="web").req(cpu="1").obj()
    result = maximum(cluster, template, default_profile(), max_count=50)
    assert result.maximum == 7
    assert result.limited_by == ["cpu on 7 nodes (n0,n1,n2,n3,n4,...)"]
    assert result.per_domain == {"kubernetes.io/hostname": {f"n{i}": 1 for i in range(7)}}


def test_a_re_solve_out_of_time_leaves_that_limit_undecided_not_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """limitedBy re-solves with a family removed get a share of the time; one that finds
    nothing in time (UNKNOWN at 5,000 nodes) must not abort the proven answer."""
    import kubespread.plan.capacity as capacity
    from kubespread.solve import SolveError

    real = capacity.solve
    calls = [0]

    def first_only(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        if calls[0] > 1:
            raise SolveError("the solver found no arrangement (UNKNOWN) within 0.1 s")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(capacity, "solve", first_only)
    cluster, template = CASES["two spreads"]()
    result = maximum(cluster, template, default_profile(), max_count=20, time_limit=5)
    assert result.maximum == 7 and result.proven
    assert result.limited_by
    assert all("not decided within the time limit" in x for x in result.limited_by)
