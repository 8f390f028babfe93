"""The printed roles allow every API call each live component makes: each call the in-memory
API records (list, watch, get, create, patch, delete, with subresources) is mapped to its RBAC
(apiGroup, resource, verb) and checked against that component's rules. A call the role misses
is a 403 on a real cluster (the scheduler once could not write PodScheduled=False)."""

from __future__ import annotations

import threading
from typing import Any

from builders import ZONE, make_node, make_pod
from kubespread.admission.framework import AdmissionOptions
from kubespread.controllers.workloadspread import WorkloadSpreadWebhook
from kubespread.live.kube import resource_for
from kubespread.live.leader import LeaderElector
from kubespread.live.manifests import DEFAULT_COMPONENTS, manifests
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.live.webhook import AdmissionHandlers
from kubespread.live.workloadspread import LiveWorkloadSpreadClient
from kubespread.scheduler.config import default_profile
from live.fake_api import FakeApi
from live.test_controller_host import EXPECTED, rs_pod, run_until, started, subset_statuses, world
from live.test_controller_host import fast as fast  # autouse: quick retries and settling
from live.test_controller_host import stopped as host_stopped
from live.test_scheduler import drive, stopped
from live.test_webhook import review

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


def rules_of(account: str) -> list[dict[str, Any]]:
    """The ClusterRole's rules and the Role's (in the components' namespace) of ``account``."""
    docs = manifests([*DEFAULT_COMPONENTS, "rebalancer"])
    return [
        rule
        for d in docs
        if d["kind"] in ("ClusterRole", "Role") and d["metadata"]["name"] == account
        for rule in d["rules"]
    ]


def missing_rules(api: FakeApi, since: int, account: str) -> tuple[set[tuple[str, str, str]], list[Any]]:
    needed = {r for c in api.calls[since:] if (r := rbac_of(c)) is not None}
    rules = rules_of(account)
    return needed, sorted(r for r in needed if not allowed(rules, *r))


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
    rules = rules_of("kubespread-scheduler")
    needed = {r for c in api.calls[setup:] if (r := rbac_of(c)) is not None}
    # the scheduler's own writes are among them, so the check is not vacuous
    assert {("", "pods/binding", "create"), ("", "pods/status", "patch")} <= needed
    assert ("events.k8s.io", "events", "create") in needed
    missing = sorted(r for r in needed if not allowed(rules, *r))
    assert missing == []


def test_every_call_of_the_controller_is_allowed_by_its_role(stop: threading.Event) -> None:
    api = world(unmarked=True)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    setup = len(api.calls)
    host = started(api, stop)
    assert run_until(host, lambda: subset_statuses(api) == EXPECTED)
    assert run_until(host, lambda: bool(api.calls_matching("patch Namespace default")))
    host.delete_pod("default/web-1-aaaaa")  # a subset's pod rescheduled
    host_stopped(host)
    needed, missing = missing_rules(api, setup, "kubespread-controller")
    assert {("", "pods", "patch"), ("", "namespaces", "patch"), ("", "pods", "delete")} <= needed
    assert ("apps.kruise.io", "workloadspreads/status", "update") in needed
    assert missing == []


def test_every_call_of_the_webhook_is_allowed_by_its_role(stop: threading.Event) -> None:
    api = world()
    setup = len(api.calls)
    client = LiveWorkloadSpreadClient(api)
    client.start(stop, timeout=2.0)
    handlers = AdmissionHandlers(
        WorkloadSpreadWebhook(client, cluster_lock=client.cache.lock),
        options=AdmissionOptions(),
        merge_match_label_keys=False,
    )
    pod = rs_pod("", "", None)
    del pod["metadata"]["name"], pod["spec"]["nodeName"]
    pod["metadata"]["generateName"] = "web-1-"
    status, answer = handlers.handle("/mutate-pods", review(pod))
    assert status == 200 and isinstance(answer, dict) and answer["response"]["allowed"]
    old = api.stored("Pod", "default/web-1-ccccc")
    handlers.handle("/validate-pods", review(None, operation="DELETE", old=old))
    handlers.handle("/validate-pods", review({"metadata": {}}, sub="eviction", name="web-1-aaaaa"))
    needed, missing = missing_rules(api, setup, "kubespread-webhook")
    assert ("apps.kruise.io", "workloadspreads/status", "update") in needed
    assert ("", "pods", "get") in needed
    assert missing == []


def test_every_call_of_the_rebalancer_is_allowed_by_the_printed_role(stop: threading.Event) -> None:
    """rebalance --apply: the reads of a whole cluster, an eviction, the wait for its
    replacement (none comes here: no scheduler runs; the wave times out)."""
    from kubespread.live.rebalance import WaveExecutor
    from live.test_rebalance_apply import planner, skewed_cluster

    api = skewed_cluster()
    api.patch(
        "PodDisruptionBudget", "default/web", {"status": {"disruptionsAllowed": 1}}, subresource="status"
    )
    since = len(api.calls)
    ran = WaveExecutor(api, planner, stop=stop, max_evictions=1, wave_timeout=0.3, eviction_timeout=1).run()
    needed, missing = missing_rules(api, since, "kubespread-rebalancer")
    assert ("", "pods/eviction", "create") in needed and ran.evicted == 1
    assert not missing
    rules = rules_of("kubespread-rebalancer")
    assert not allowed(rules, "", "pods", "delete")  # evictions only: budgets are asked
