"""ClusterState.lowest_priority: the lowest priority on the nodes' NodeInfos, kept as pods
are bound, updated, finished and deleted (preemption asks it before looking at any pod)."""

from __future__ import annotations

from builders import cluster_of, make_node, make_pod


def test_lowest_priority_follows_the_pods_on_nodes() -> None:
    cluster = cluster_of([make_node("n1"), make_node("n2")])
    assert cluster.lowest_priority() is None
    cluster.add_pod(make_pod("pending").set("spec.priority", -5).obj())
    assert cluster.lowest_priority() is None  # not on a node
    cluster.add_pod(make_pod("a").node("n1").set("spec.priority", 100).obj())
    cluster.add_pod(make_pod("b").node("n2").obj())  # no priority: 0
    assert cluster.lowest_priority() == 0
    cluster.bind("default/pending", "n1")
    assert cluster.lowest_priority() == -5
    cluster.update_pod(
        make_pod("pending").node("n1").set("spec.priority", -5).set("status.phase", "Succeeded").obj()
    )
    assert cluster.lowest_priority() == 0  # finished: off kube-scheduler's NodeInfo
    cluster.unbind("default/b")
    assert cluster.lowest_priority() == 100
    cluster.delete_pod("default/a")
    assert cluster.lowest_priority() is None
