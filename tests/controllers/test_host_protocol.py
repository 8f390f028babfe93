"""The ControllerHost protocol is what controllers get: the simulation and the live host both
provide it, and the rules controllers borrow from the scheduler come from scheduler.predicates."""

from __future__ import annotations

import inspect

from builders import make_node, make_pod
from kubespread.api.core import Namespace, Node
from kubespread.controllers.host import ControllerHost
from kubespread.live.workloadspread import LiveController
from kubespread.scheduler.predicates import node_filter
from kubespread.sim.engine import Simulation


def test_every_host_provides_the_whole_protocol() -> None:
    wanted = {name for name, _ in inspect.getmembers(ControllerHost) if not name.startswith("_")}
    assert {"cluster", "now", "enqueue", "after", "create", "update", "evict", "record"} <= wanted
    live = LiveController(api=None)  # type: ignore[arg-type]  # nothing here calls the API
    for host in (Simulation(controllers=[]), live):
        missing = {name for name in wanted if not hasattr(host, name)}
        assert not missing, (type(host).__name__, missing)


def test_live_host_timers_can_be_cancelled() -> None:
    host = LiveController(api=None)  # type: ignore[arg-type]  # no API call is made here
    fired: list[str] = []
    keep = host.after(0, lambda: fired.append("keep"))
    drop = host.after(0, lambda: fired.append("drop"))
    drop.cancel()
    assert keep is not drop
    host.run_once()
    assert fired == ["keep"]


def test_namespace_is_defaulted_once_by_the_object() -> None:
    assert make_pod("p", namespace="").obj().namespace == "default"
    assert make_pod("p", namespace="shop").obj().namespace == "shop"
    assert make_pod("p", namespace="").obj().metadata.namespace == ""  # as written
    assert make_node("n").obj().namespace == ""  # cluster-scoped
    assert Namespace.from_dict({"metadata": {"name": "x"}}).namespace == ""


def test_node_filter_applies_cordon_affinity_and_taints() -> None:
    pod = make_pod("p").node_selector(disk="ssd").toleration("dedicated", "web", "NoSchedule").obj()
    admits = node_filter(pod)
    ok: Node = make_node("ok").label("disk", "ssd").obj()
    wrong_label: Node = make_node("hdd").label("disk", "hdd").obj()
    cordoned: Node = make_node("c").label("disk", "ssd").obj()
    cordoned.spec.unschedulable = True
    tolerated: Node = make_node("t").label("disk", "ssd").taint("dedicated", "web", "NoSchedule").obj()
    untolerated: Node = make_node("u").label("disk", "ssd").taint("gpu", "", "NoSchedule").obj()
    assert [admits(n) for n in (ok, wrong_label, cordoned, tolerated, untolerated)] == [
        True,
        False,
        False,
        True,
        False,
    ]
