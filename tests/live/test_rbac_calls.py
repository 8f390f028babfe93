"""The printed ClusterRole allows every API call the live scheduler makes: each call the
in-memory API records (list, watch, get, create, patch, delete, with subresources) is mapped
to its RBAC (apiGroup, resource, verb) and checked against the rules. A call the role misses
is a 403 on a real cluster (the scheduler once could not write PodScheduled=False)."""

from __future__ import annotations

import threading
from typing import Any

from builders import ZONE, make_node, make_pod
from kubespread.live.kube import resource_for
from kubespread.live.leader import LeaderElector
from kubespread.live.manifests import webhook_manifests
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.scheduler.config import default_profile
from live.fake_api import FakeApi
from live.test_scheduler import drive, stopped

VERBS = {"list": "list", "watch": "watch", "get": "get", "create": "create", "replace": "update"}
VERBS |= {"patch": "patch", "delete": "delete"}


HTTP_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def rbac_of_path(method: str, path: str) -> tuple[str, str, str]:
    """'POST /api/v1/namespaces/d/pods/x/binding' -> ('', 'pods/binding', 'create')."""
    parts = path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    if rest[:1] == ["namespaces"] and len(rest) > 2:
        rest = rest[2:]
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    return group, resource, HTTP_VERBS[method]


def rbac_of(call: str) -> tuple[str, str, str] | None:
    """'patch Pod default/x status' -> ('', 'pods/status', 'patch')."""
    words = call.split()
    if words[0] == "request":
        return rbac_of_path(words[1], words[2])
    if words[0] not in VERBS or len(words) < 2:
        return None
    res = resource_for(words[1])
    group = res.api_version.rpartition("/")[0]
    sub = words[3] if len(words) > 3 else ""
    return group, res.plural + (f"/{sub}" if sub else ""), VERBS[words[0]]


def allowed(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


def test_every_call_of_the_scheduler_is_allowed_by_the_printed_role(stop: threading.Event) -> None:
    api = FakeApi()
    for i, zone in enumerate("aabb"):
        api.create(make_node(f"n{i}").zone(zone).capacity(cpu="2").dict())
    sel = {"matchLabels": {"app": "web"}}
    for i in range(3):
        pod = make_pod(f"web-{i}").set("spec.schedulerName", "kubespread").label("app", "web")
        api.create(pod.req(cpu="500m").spread(1, ZONE, selector=sel).dict())
    api.create(make_pod("huge").set("spec.schedulerName", "kubespread").req(cpu="64").dict())
    setup = len(api.calls)  # the test's own writes are not the scheduler's
    leader = LeaderElector(api, namespace="kube-system", name="kubespread", identity="t", stop=stop)
    leader.start()
    sched = SecondaryScheduler(api, {"kubespread": default_profile()}, stop=stop, identity="t")
    sched.start(timeout=2.0)
    assert drive(sched, lambda: sched.stats.bound == 3 and sched.stats.unschedulable >= 1)
    assert leader.leading.wait(2.0)
    stopped(sched)
    leader.join(2.0)
    rules = next(d for d in webhook_manifests() if d["kind"] == "ClusterRole")["rules"]
    needed = {r for c in api.calls[setup:] if (r := rbac_of(c)) is not None}
    # the scheduler's own writes are among them, so the check is not vacuous
    assert {("", "pods/binding", "create"), ("", "pods/status", "patch")} <= needed
    assert ("events.k8s.io", "events", "create") in needed
    missing = sorted(r for r in needed if not allowed(rules, *r))
    assert missing == []
