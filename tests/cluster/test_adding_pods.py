"""``ClusterState.adding_pods``: the request vectors written once per node on leaving are the
ones written pod by pod, whatever was added, removed or deleted inside; with a listener they
are written as each pod comes."""

from __future__ import annotations

from typing import Any

from cluster_builders import make_node, make_pod
from hypothesis import given, settings
from hypothesis import strategies as st

from kubespread.cluster import NODE_VECTORS, ClusterError, ClusterState

NODES = [f"n{i}" for i in range(4)]

op_st = st.one_of(
    st.tuples(st.just("node"), st.sampled_from(NODES)),
    st.tuples(st.just("delete_node"), st.sampled_from(NODES)),
    st.tuples(
        st.just("pod"),
        st.integers(0, 9),
        st.sampled_from(["", *NODES]),
        st.sampled_from([None, "100m", "2", "9223372036854775808"]),
        st.sampled_from(["Running", "Succeeded"]),
    ),
    st.tuples(st.just("delete_pod"), st.integers(0, 9)),
    st.tuples(st.just("bind"), st.integers(0, 9), st.sampled_from(NODES)),
)


def _apply(state: ClusterState, op: tuple[Any, ...]) -> None:
    try:
        if op[0] == "node":
            state.add_node(make_node(op[1]))
        elif op[0] == "delete_node":
            state.delete_node(op[1])
        elif op[0] == "pod":
            state.add_pod(make_pod(f"p{op[1]}", node=op[2], cpu=op[3], memory="1Gi", phase=op[4]))
        elif op[0] == "delete_pod":
            state.delete_pod(f"default/p{op[1]}")
        else:
            state.bind(f"default/p{op[1]}", op[2])
    except ClusterError:
        pass


def _vectors(state: ClusterState) -> dict[str, list[int]]:
    return {name: state.node_vector(name).tolist() for name in NODE_VECTORS}


@settings(max_examples=150, deadline=None)
@given(st.lists(op_st, max_size=30), st.booleans())
def test_vectors_written_on_leaving_are_those_written_pod_by_pod(ops: list[Any], listened: bool) -> None:
    one_by_one, together = ClusterState(), ClusterState()
    heard: list[Any] = []
    if listened:  # a listener may read the vectors at each event: they are kept current
        together.subscribe(lambda e: heard.append(_vectors(together)))
        one_by_one.subscribe(lambda e: heard.append(_vectors(one_by_one)))
    for op in ops:
        _apply(one_by_one, op)
    with together.adding_pods():
        for op in ops:
            _apply(together, op)
    assert _vectors(together) == _vectors(one_by_one)
    assert list(together.node_names) == list(one_by_one.node_names)
    if listened:
        assert heard[len(heard) // 2 :] == heard[: len(heard) // 2]
