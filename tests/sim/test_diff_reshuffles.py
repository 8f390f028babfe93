"""``diff`` tells pods that only traded nodes within their workload (ties broken the other way,
names drawn in another order) from real moves: per workload, only the net change of each
node's count of its pods is a move; the rest is ``reshuffled``."""

from __future__ import annotations

from kubespread.sim.diff import PodAt, PodMove, _reshuffles


def move(name: str, before: str | None, after: str | None, owner: str = "deploy/web") -> PodMove:
    change = "moved" if before and after and before != after else "same" if before == after else "placed"
    return PodMove("default", owner, PodAt(name, before, None), PodAt(name, after, None), change)


def changes(moves: list[PodMove]) -> list[str]:
    return [m.change for m in _reshuffles(moves)]


def test_a_swap_is_a_reshuffle() -> None:
    assert changes([move("a", "n1", "n2"), move("b", "n2", "n1")]) == ["reshuffled", "reshuffled"]


def test_a_net_move_stays_a_move() -> None:
    assert changes([move("a", "n1", "n2"), move("b", "n3", "n3")]) == ["moved", "same"]


def test_a_chain_is_one_move_and_one_reshuffle() -> None:
    # n1 -> n2 -> n3: one pod fewer on n1, one more on n3; n2 keeps its count
    assert sorted(changes([move("a", "n1", "n2"), move("b", "n2", "n3")])) == ["moved", "reshuffled"]


def test_workloads_are_counted_apart() -> None:
    moves = [move("a", "n1", "n2", "deploy/web"), move("b", "n2", "n1", "deploy/api")]
    assert changes(moves) == ["moved", "moved"]


def test_a_swap_beside_a_real_move() -> None:
    moves = [move("a", "n1", "n2"), move("b", "n2", "n1"), move("c", "n1", "n3")]
    assert sorted(changes(moves)) == ["moved", "reshuffled", "reshuffled"]
