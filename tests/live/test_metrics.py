"""live.metrics over HTTP: the live scheduler, the webhook handlers and the controller host run
over the in-memory API, then /metrics is scraped and parsed as Prometheus parses it: kube-
scheduler's names, labels and buckets, one observation per plugin call, attempts by result,
the queue by pool; webhook reviews by verdict; reconciles by result; /healthz and /readyz."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from builders import make_pod
from kubespread.admission.framework import AdmissionOptions
from kubespread.live import informer
from kubespread.live import workloadspread as live_ws
from kubespread.live.metrics import (
    ControllerMetrics,
    Health,
    MetricsConfigError,
    MetricsServer,
    SchedulerMetrics,
    WebhookMetrics,
    parse_bind_address,
)
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.live.webhook import AdmissionHandlers
from kubespread.live.webhook_server import serve
from kubespread.live.workloadspread import LiveController
from kubespread.scheduler import queue as queue_module
from kubespread.scheduler.config import default_profile
from kubespread.scheduler.scheduler import Decision
from live.test_controller_host import EXPECTED, STATUS_WRITE, WS_KEY, subset_statuses, world
from live.test_scheduler import OURS, cluster_api, web_pod
from live.test_webhook import anti_affinity_pod, review, rs_pod

INF = float("inf")


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue_module, "INITIAL_BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(queue_module, "MAX_BACKOFF_SECONDS", 0.05)
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)
    monkeypatch.setattr(live_ws, "SETTLE_SECONDS", 0.1)


# --------------------------------------------------------------------------- scraping
def get(server: MetricsServer, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


Samples = list[tuple[str, dict[str, str], float]]


def scrape(server: MetricsServer) -> Samples:
    status, text = get(server, "/metrics")
    assert status == 200
    return [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples]


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when none)."""
    return sum(v for n, lab, v in samples if n == name and labels.items() <= lab.items())


def bucket_bounds(samples: Samples, name: str, **labels: str) -> list[float]:
    """The ``le`` bounds of one series of histogram ``name``."""
    series = [lab for n, lab, _ in samples if n == f"{name}_bucket" and labels.items() <= lab.items()]
    assert series, f"no {name} series with {labels}"
    first = {k: v for k, v in series[0].items() if k != "le"}
    return sorted(float(lab["le"]) for lab in series if {k: v for k, v in lab.items() if k != "le"} == first)


def exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


def wait_for(done: Callable[[], bool], timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if done():
            return True
        time.sleep(0.01)
    return done()


@pytest.fixture
def servers() -> Iterator[list[MetricsServer]]:
    """Metrics servers started by the test, shut down after it."""
    started: list[MetricsServer] = []
    yield started
    for s in started:
        s.shutdown()


def serving(servers: list[MetricsServer], registry: Any, health: Health) -> MetricsServer:
    server = MetricsServer(registry, health, host="127.0.0.1", port=0).start()
    servers.append(server)
    return server


# --------------------------------------------------------------------------- the scheduler
def test_the_scheduler_reports_kube_schedulers_metrics(
    stop: threading.Event, servers: list[MetricsServer]
) -> None:
    mine = [f"web-{i}" for i in range(6)]
    huge = make_pod("huge").set("spec.schedulerName", OURS).req(cpu="1000").dict()
    gated = make_pod("gated").set("spec.schedulerName", OURS).set("spec.schedulingGates", [{"name": "wait"}])
    api = cluster_api(*(web_pod(n) for n in mine), huge, gated.dict())
    metrics = SchedulerMetrics()
    sched = SecondaryScheduler(api, {OURS: default_profile()}, stop=stop, identity="test-1", metrics=metrics)
    decisions: list[Decision] = []
    sched.loop.observers.append(decisions.append)
    server = serving(servers, metrics.registry, metrics.health)

    status, text = get(server, "/readyz")
    assert status == 500
    assert "[-]informer-sync failed: not started" in text and "[-]started failed" in text
    assert get(server, "/healthz") == (200, "ok\n")

    sched.start(timeout=2.0)
    runner = threading.Thread(target=sched.run, daemon=True)
    runner.start()
    assert wait_for(lambda: sched.stats.bound == len(mine) and sched.stats.unschedulable >= 1)
    assert wait_for(lambda: get(server, "/readyz")[0] == 200)
    stop.set()
    runner.join(2.0)
    samples = scrape(server)

    # attempts by result, as many as the scheduler made
    attempts = "scheduler_schedule_attempts_total"
    assert value(samples, attempts, result="scheduled", profile=OURS) == sched.stats.bound == len(mine)
    assert value(samples, attempts, result="unschedulable", profile=OURS) == sched.stats.unschedulable
    assert value(samples, attempts, result="error") == 0
    latency = "scheduler_scheduling_attempt_duration_seconds_count"
    assert value(samples, latency, result="scheduled", profile=OURS) == len(mine)
    assert value(samples, latency, result="unschedulable") == sched.stats.unschedulable

    # every plugin call of every cycle, under kube's extension point names
    calls: dict[tuple[str, str], int] = {}
    for d in decisions:
        assert d.timings is not None
        for point, per_plugin in d.timings.plugins.items():
            label = "ScoreExtensionNormalize" if point == "NormalizeScore" else point
            for plugin in per_plugin:
                calls[plugin, label] = calls.get((plugin, label), 0) + 1
    plugin_count = "scheduler_plugin_execution_duration_seconds_count"
    scraped = {
        (lab["plugin"], lab["extension_point"]): value(
            samples, plugin_count, plugin=lab["plugin"], extension_point=lab["extension_point"]
        )
        for n, lab, _ in samples
        if n == plugin_count
    }
    assert scraped == {**calls, ("DefaultBinder", "Bind"): len(mine)}
    for expected in [
        ("PodTopologySpread", "PreFilter"),
        ("PodTopologySpread", "Filter"),
        ("NodeResourcesFit", "Filter"),
        ("DefaultPreemption", "PostFilter"),
        ("PodTopologySpread", "PreScore"),
        ("PodTopologySpread", "Score"),
        ("PodTopologySpread", "ScoreExtensionNormalize"),
    ]:
        assert scraped.get(expected, 0) > 0, expected
    # the huge pod fits nowhere: NodeResourcesFit rejected it (more cpu than any node has: unresolvable)
    fit = {"plugin": "NodeResourcesFit", "extension_point": "Filter"}
    assert (
        value(samples, plugin_count, **fit, status="UnschedulableAndUnresolvable")
        == sched.stats.unschedulable
    )
    # the spread Filter rejects nodes for skew: Unschedulable, never its missing-label code
    spread = {"plugin": "PodTopologySpread", "extension_point": "Filter"}
    assert value(samples, plugin_count, **spread, status="Unschedulable") > 0
    assert value(samples, plugin_count, **spread, status="UnschedulableAndUnresolvable") == 0
    point_count = "scheduler_framework_extension_point_duration_seconds_count"
    for point in ("PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Bind"):
        assert value(samples, point_count, extension_point=point, profile=OURS) > 0, point
    assert value(samples, point_count, extension_point="Bind", status="Success") == len(mine)
    assert value(samples, point_count, extension_point="Filter", status="Unschedulable") >= 1

    # kube's buckets
    assert bucket_bounds(samples, "scheduler_plugin_execution_duration_seconds") == pytest.approx(
        [*exponential(0.00001, 1.5, 20), INF]
    )
    assert bucket_bounds(samples, "scheduler_framework_extension_point_duration_seconds") == pytest.approx(
        [*exponential(0.0001, 2, 12), INF]
    )
    assert bucket_bounds(samples, "scheduler_scheduling_attempt_duration_seconds") == pytest.approx(
        [*exponential(0.001, 2, 15), INF]
    )

    # the queue: the gated pod, and the huge pod waiting for a change that helps
    pending = "scheduler_pending_pods"
    assert value(samples, pending, queue="gated") == 1
    assert sum(value(samples, pending, queue=q) for q in ("active", "backoff", "unschedulable")) == 1
    assert value(samples, "process_cpu_seconds_total") > 0


@pytest.mark.slow
def test_a_failed_bind_is_an_error_attempt_at_the_bind_extension_point(
    stop: threading.Event, servers: list[MetricsServer]
) -> None:
    api = cluster_api(web_pod("web-0"))
    api.fail_next(1, status=500, only="binding")
    metrics = SchedulerMetrics()
    sched = SecondaryScheduler(api, {OURS: default_profile()}, stop=stop, identity="test-1", metrics=metrics)
    server = serving(servers, metrics.registry, metrics.health)
    sched.start(timeout=2.0)
    runner = threading.Thread(target=sched.run, daemon=True)
    runner.start()
    assert wait_for(lambda: sched.stats.bound == 1)
    stop.set()
    runner.join(2.0)
    samples = scrape(server)
    assert value(samples, "scheduler_schedule_attempts_total", result="error", profile=OURS) == 1
    assert value(samples, "scheduler_schedule_attempts_total", result="scheduled", profile=OURS) == 1
    point_count = "scheduler_framework_extension_point_duration_seconds_count"
    assert value(samples, point_count, extension_point="Bind", status="Error", profile=OURS) == 1
    plugin_count = "scheduler_plugin_execution_duration_seconds_count"
    assert value(samples, plugin_count, plugin="DefaultBinder", extension_point="Bind", status="Error") == 1


def test_two_schedulers_in_one_process_keep_their_own_counts(stop: threading.Event) -> None:
    a, b = SchedulerMetrics(), SchedulerMetrics()
    a.schedule_attempts.labels("scheduled", OURS).inc()
    assert (
        a.registry.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": "scheduled", "profile": OURS}
        )
        == 1
    )
    assert (
        b.registry.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": "scheduled", "profile": OURS}
        )
        is None
    )


# --------------------------------------------------------------------------- the webhook
def test_the_webhook_counts_reviews_by_path_operation_and_verdict(servers: list[MetricsServer]) -> None:
    metrics = WebhookMetrics()
    handlers = AdmissionHandlers(
        None,
        options=AdmissionOptions(hard_anti_affinity_limit=True),
        merge_match_label_keys=False,
        metrics=metrics,
    )
    for i in range(3):
        assert handlers.handle("/mutate-pods", review(rs_pod(), uid=f"m{i}"))[0] == 200
    refused = anti_affinity_pod(namespaceSelector={})
    for i in range(2):
        status, answer = handlers.handle("/validate-pods", review(refused, uid=f"v{i}"))
        assert status == 200 and isinstance(answer, dict) and answer["response"]["allowed"] is False
    assert handlers.handle("/validate-pods", b"{}")[0] == 400
    assert handlers.handle("/healthz", b"", method="GET")[0] == 200  # not a review: not counted
    server = serving(servers, metrics.registry, metrics.health)
    samples = scrape(server)

    total = "kubespread_webhook_requests_total"
    assert value(samples, total, path="/mutate-pods", operation="CREATE", allowed="true", code="200") == 3
    assert value(samples, total, path="/validate-pods", operation="CREATE", allowed="false", code="403") == 2
    assert value(samples, total, path="/validate-pods", operation="unknown", allowed="false", code="400") == 1
    assert value(samples, total) == 6
    duration = "kubespread_webhook_request_duration_seconds"
    assert value(samples, f"{duration}_count", path="/mutate-pods", operation="CREATE") == 3
    assert value(samples, f"{duration}_count") == 6
    assert bucket_bounds(samples, duration) == pytest.approx(
        [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, INF]
    )


@pytest.mark.slow
def test_the_webhook_is_ready_while_its_https_server_serves(
    tls_files: tuple[Path, Path], servers: list[MetricsServer]
) -> None:
    cert, key = tls_files
    metrics = WebhookMetrics()
    handlers = AdmissionHandlers(
        None, options=AdmissionOptions(), merge_match_label_keys=False, metrics=metrics
    )
    server = serving(servers, metrics.registry, metrics.health)
    assert get(server, "/readyz")[0] == 500  # not serving yet
    stop = threading.Event()
    thread = threading.Thread(
        target=serve,
        kwargs={"handlers": handlers, "cert": cert, "key": key, "host": "127.0.0.1", "port": 0,
                "stop": stop, "health": metrics.health},
        daemon=True,
    )  # fmt: skip
    thread.start()
    assert wait_for(lambda: get(server, "/readyz") == (200, "ok\n"))
    status, text = get(server, "/readyz?verbose")
    assert status == 200 and "[+]https ok" in text and "readyz check passed" in text
    stop.set()
    thread.join(5.0)
    status, text = get(server, "/healthz")
    assert status == 500 and "[-]https failed: the HTTPS server is not serving" in text


# --------------------------------------------------------------------------- the controller
def test_the_controller_counts_reconciles_by_result(
    stop: threading.Event, servers: list[MetricsServer]
) -> None:
    api = world()
    # the webhook writes the WorkloadSpread just before the controller's first status write
    api.before_next(
        STATUS_WRITE,
        lambda: api.patch("WorkloadSpread", WS_KEY, {"metadata": {"annotations": {"touched": "yes"}}}),
    )
    metrics = ControllerMetrics()
    host = LiveController(api, stop=stop, metrics=metrics)
    server = serving(servers, metrics.registry, metrics.health)
    assert get(server, "/readyz")[0] == 500
    host.start(timeout=2.0)
    runner = threading.Thread(target=host.run, daemon=True)
    runner.start()
    assert wait_for(lambda: subset_statuses(api) == EXPECTED)
    assert wait_for(lambda: get(server, "/readyz")[0] == 200)
    assert get(server, "/healthz") == (200, "ok\n")
    stop.set()
    runner.join(2.0)
    samples = scrape(server)

    total = "controller_runtime_reconcile_total"
    name = "workloadspread-controller"
    assert host.conflicts >= 1
    assert value(samples, total, controller=name, result="requeue") == host.conflicts
    assert value(samples, total, controller=name, result="success") == host.syncs - host.conflicts
    assert value(samples, total, controller=name, result="error") == 0
    # every result's series is there from the start, as controller-runtime's are
    results = {lab["result"] for n, lab, _ in samples if n == total}
    assert results == {"success", "error", "requeue", "requeue_after"}
    assert [v for n, _, v in samples if n == "controller_runtime_reconcile_errors_total"] == [0]
    assert value(samples, "controller_runtime_reconcile_time_seconds_count", controller=name) == host.syncs
    assert bucket_bounds(samples, "controller_runtime_reconcile_time_seconds") == pytest.approx(
        [
            *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8),
            *(0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25),
            *(30, 40, 50, 60, INF),
        ]
    )


def test_a_sync_that_fails_on_the_api_is_an_error_reconcile(stop: threading.Event) -> None:
    api = world()
    api.fail_next(1, status=500, only=STATUS_WRITE)
    metrics = ControllerMetrics()
    host = LiveController(api, stop=stop, metrics=metrics)
    host.start(timeout=2.0)
    end = time.monotonic() + 2.0
    while not api.calls_matching(STATUS_WRITE) and time.monotonic() < end:
        host.run_once(timeout=0.02)
    registry = metrics.registry
    labels = {"controller": "workloadspread-controller"}
    assert registry.get_sample_value("controller_runtime_reconcile_total", {**labels, "result": "error"}) == 1
    assert registry.get_sample_value("controller_runtime_reconcile_errors_total", labels) == 1


# --------------------------------------------------------------------------- health and addresses
def test_a_loop_that_stops_turning_is_not_alive() -> None:
    now = [0.0]
    health = Health(stale_after=60, clock=lambda: now[0])
    assert health.healthz() == [("loop", None)]  # starting
    assert ("started", "the loop has not started") in health.readyz()
    health.beat()
    now[0] = 59.0
    assert health.healthz() == [("loop", None)]
    now[0] = 61.0
    assert health.healthz() == [("loop", "no turn for 61s")]


def test_a_check_that_raises_fails_its_probe_without_breaking_it(servers: list[MetricsServer]) -> None:
    health = Health()
    health.beat()

    def broken() -> str | None:
        raise RuntimeError("boom")

    health.add_readiness("broken", broken)
    server = serving(servers, SchedulerMetrics().registry, health)
    status, text = get(server, "/readyz")
    assert status == 500 and "[-]broken failed: check raised RuntimeError" in text
    assert get(server, "/healthz") == (200, "ok\n")
    assert get(server, "/nope")[0] == 404


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", None),
        (":10251", ("0.0.0.0", 10251)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("[::1]:9090", ("::1", 9090)),
        ("localhost:8080", ("localhost", 8080)),
    ],
)
def test_bind_addresses(text: str, expected: tuple[str, int] | None) -> None:
    assert parse_bind_address(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10251", "not HOST:PORT"),
        ("host:", "not HOST:PORT"),
        ("host:http", "not HOST:PORT"),
        ("host:70000", "port 70000 is out of range"),
        ("::1:80", "IPv6 address in brackets"),
    ],
)
def test_bad_bind_addresses_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MetricsConfigError, match=message):
        parse_bind_address(text)


def test_a_port_in_use_is_a_config_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsConfigError, match=f"127.0.0.1:{port}: .*in use"):
            MetricsServer(SchedulerMetrics().registry, Health(), host="127.0.0.1", port=port)
