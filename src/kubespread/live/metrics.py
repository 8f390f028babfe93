"""Prometheus metrics and health endpoints of the live components, in one home.

Each component has its own :class:`~prometheus_client.CollectorRegistry` (never the global
default one), so several run side by side in one process, as the tests do. A
:class:`MetricsServer` serves a registry and a :class:`Health` over plain HTTP:

- ``/metrics``: the registry, Prometheus text format (OpenMetrics when asked);
- ``/healthz``: liveness, the component's loop is turning (its :meth:`Health.beat` is recent)
  and the threads it depends on are alive;
- ``/readyz``: readiness, liveness plus every readiness check: the loop has turned once, the
  watch caches have listed once and still run, and the webhook's HTTPS server serves.

A failing probe answers 500 with one ``[-]name failed: why`` line per check, as kube
components do; ``?verbose`` lists every check.

The names, labels and buckets follow the components kubespread stands in for:

- :class:`SchedulerMetrics`: kube-scheduler v1.35's (``pkg/scheduler/metrics/metrics.go``),
  fed by every Decision's :class:`~kubespread.scheduler.timings.CycleTimings`. Unlike kube,
  plugin durations are not sampled (kube records 10% of cycles), and the Filter plugins judge
  every node in one call, so ``plugin_execution_duration_seconds{extension_point="Filter"}``
  has one observation per plugin per cycle with the most severe status it gave any node
  (kube: one per node, per call). kube records no ``Filter`` sample in
  ``framework_extension_point_duration_seconds`` (it runs Filter per node, in parallel);
  kubespread does, for the whole pass. NormalizeScore is labelled as kube labels it,
  ``ScoreExtensionNormalize``;
- :class:`WebhookMetrics`: ``kubespread_webhook_*``, in the style of kube-apiserver's
  ``apiserver_admission_webhook_*``;
- :class:`RebalancerMetrics`: ``kubespread_rebalance_*``, as the descheduler reports its
  evictions and loop;
- :class:`ControllerMetrics`: controller-runtime's ``controller_runtime_reconcile_*``, as
  OpenKruise's WorkloadSpread controller (a controller-runtime one) reports them.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    make_wsgi_app,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.live.ports import CONTROLLER_METRICS_PORT, SCHEDULER_METRICS_PORT, WEBHOOK_METRICS_PORT
from kubespread.scheduler.timings import NORMALIZE_SCORE

if TYPE_CHECKING:
    from kubespread.live.informer import ClusterCache, Reflector
    from kubespread.scheduler.loop import PreparedPreemption, SchedulingLoop
    from kubespread.scheduler.queue import SchedulingQueue
    from kubespread.scheduler.scheduler import Decision

# kube components expose no *_created series: neither do we (a process-wide switch of the library)
disable_created_metrics()

__all__ = [
    "CONTROLLER_METRICS_PORT",
    "SCHEDULER_METRICS_PORT",
    "WEBHOOK_METRICS_PORT",
    "ControllerMetrics",
    "Health",
    "MetricsConfigError",
    "MetricsServer",
    "ObservedController",
    "ObservedScheduler",
    "RebalancerMetrics",
    "SchedulerMetrics",
    "WebhookMetrics",
    "exponential_buckets",
    "parse_bind_address",
    "reflectors_synced",
    "serve_metrics",
]


# What the metrics read of the components they observe. The components (live.scheduler's
# SecondaryScheduler, live.workloadspread's LiveController) import this module to report to
# it; it knows them only by these shapes, so the import goes one way.
class ObservedScheduler(Protocol):
    """What :meth:`SchedulerMetrics.attach` reads of the live scheduler."""

    @property
    def loop(self) -> SchedulingLoop: ...

    @property
    def cache(self) -> ClusterCache: ...

    @property
    def queue(self) -> SchedulingQueue: ...

    @property
    def reflectors(self) -> Sequence[Reflector]: ...


class ObservedController(Protocol):
    """What :meth:`ControllerMetrics.attach` reads of a live controller's host."""

    @property
    def reflectors(self) -> Sequence[Reflector]: ...


METRICS_PATH: Final = "/metrics"
HEALTHZ_PATH: Final = "/healthz"
READYZ_PATH: Final = "/readyz"
#: a loop that has not turned for this long is not alive (a scheduling loop turns at least every
#: half second when idle; one API call may hang until its timeout)
STALE_AFTER_SECONDS: Final = 60.0


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    """Prometheus' ExponentialBuckets, as client_golang (and so kube) computes them."""
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return out


# --- the bind address ------------------------------------------------------------------------------------


class MetricsConfigError(Exception):
    """A metrics address that cannot be used: the CLI prints it and exits."""


def parse_bind_address(text: str) -> tuple[str, int] | None:
    """``HOST:PORT``, ``:PORT`` (every interface), ``[IPv6]:PORT``; ``0`` turns metrics off
    (None), as controller-runtime's ``--metrics-bind-address 0`` does. Port 0 binds a free port
    (the log says which)."""
    text = text.strip()
    if text == "0":
        return None
    host, sep, port_text = text.rpartition(":")
    if not sep or not port_text.isdigit():
        raise MetricsConfigError(
            f"{text!r}: not HOST:PORT (e.g. 0.0.0.0:{SCHEDULER_METRICS_PORT}), or 0 to turn metrics off"
        )
    port = int(port_text)
    if port > 65535:
        raise MetricsConfigError(f"{text!r}: port {port} is out of range (0-65535)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise MetricsConfigError(f"{text!r}: write an IPv6 address in brackets, [{host}]:{port}")
    return host or "0.0.0.0", port


# --- health ----------------------------------------------------------------------------------------------

#: a check answers None when it passes, else why it fails
Check = Callable[[], str | None]


class Health:
    """Liveness and readiness of one component, as ``/healthz`` and ``/readyz`` report them.

    The component's loop calls :meth:`beat` on every turn; until the first beat the component
    is starting (alive: a first list may take a while, and has its own timeout)."""

    def __init__(
        self, *, stale_after: float = STALE_AFTER_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stale_after = stale_after
        self._clock = clock
        self._last_beat: float | None = None
        self._liveness: list[tuple[str, Check]] = [("loop", self._loop_turning)]
        self._readiness: list[tuple[str, Check]] = []

    def beat(self) -> None:
        self._last_beat = self._clock()

    def _loop_turning(self) -> str | None:
        if self._last_beat is None:
            return None
        idle = self._clock() - self._last_beat
        return f"no turn for {idle:.0f}s" if idle > self.stale_after else None

    def add_liveness(self, name: str, check: Check) -> None:
        self._liveness.append((name, check))

    def add_readiness(self, name: str, check: Check) -> None:
        self._readiness.append((name, check))

    def healthz(self) -> list[tuple[str, str | None]]:
        return [(name, _run(check)) for name, check in self._liveness]

    def readyz(self) -> list[tuple[str, str | None]]:
        started = None if self._last_beat is not None else "the loop has not started"
        return [*self.healthz(), ("started", started), *((name, _run(c)) for name, c in self._readiness)]


def _run(check: Check) -> str | None:
    try:
        return check()
    except Exception as e:  # a check that breaks is a failing check, not a broken endpoint
        return f"check raised {type(e).__name__}"


def reflectors_synced(reflectors: Callable[[], Sequence[Any]]) -> Check:
    """Readiness of watch caches: every reflector (``reflectors()``, read at each probe: they
    are started after the server) has listed once and its thread still runs."""

    def check() -> str | None:
        current = reflectors()
        if not current:
            return "not started"
        waiting = sorted(r.kind for r in current if not r.synced.is_set())
        if waiting:
            return "not listed yet: " + ", ".join(waiting)
        dead = sorted(r.kind for r in current if not r.is_alive())
        return "stopped: " + ", ".join(dead) if dead else None

    return check


def _health_report(results: list[tuple[str, str | None]], what: str, verbose: bool) -> tuple[bool, str]:
    ok = all(reason is None for _, reason in results)
    if ok and not verbose:
        return True, "ok"
    lines = [f"[+]{name} ok" if reason is None else f"[-]{name} failed: {reason}" for name, reason in results]
    lines.append(f"{what} check passed" if ok else f"{what} check failed")
    return ok, "\n".join(lines)


# --- the server ------------------------------------------------------------------------------------------


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # scrapes every few seconds: not logged
        pass


class MetricsServer:
    """``/metrics``, ``/healthz`` and ``/readyz`` over plain HTTP, one thread per request.

    Binding happens in the constructor, so a port in use is a :class:`MetricsConfigError` before
    the component starts; :meth:`start` serves in a daemon thread, :meth:`shutdown` stops."""

    def __init__(
        self, registry: CollectorRegistry, health: Health, *, host: str = "0.0.0.0", port: int = 0
    ) -> None:
        self.health = health
        self._metrics = make_wsgi_app(registry)
        server_class: type[_Server] = _Server
        if ":" in host:
            server_class = type("_Server6", (_Server,), {"address_family": socket.AF_INET6})
        try:
            self._server = make_server(host, port, self._app, server_class, _QuietHandler)
        except OSError as e:
            raise MetricsConfigError(f"metrics address {host}:{port}: {e.strerror or e}") from None
        self.host = host
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> MetricsServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics-server", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == METRICS_PATH:
            return self._metrics(environ, start_response)
        if path in (HEALTHZ_PATH, READYZ_PATH):
            verbose = "verbose" in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            if path == HEALTHZ_PATH:
                ok, text = _health_report(self.health.healthz(), "healthz", verbose)
            else:
                ok, text = _health_report(self.health.readyz(), "readyz", verbose)
            return _plain(start_response, "200 OK" if ok else "500 Internal Server Error", text)
        return _plain(start_response, "404 Not Found", "not found")


def _plain(start_response: Callable[..., Any], status: str, text: str) -> list[bytes]:
    body = (text + "\n").encode()
    start_response(
        status,
        [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("X-Content-Type-Options", "nosniff"),
        ],
    )
    return [body]


def serve_metrics(
    registry: CollectorRegistry, health: Health, address: tuple[str, int] | None
) -> MetricsServer | None:
    """Bind and start a server at ``address`` (None: metrics off, nothing served)."""
    if address is None:
        return None
    host, port = address
    return MetricsServer(registry, health, host=host, port=port).start()


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)  # process_cpu_seconds_total, process_resident_memory_bytes, ...
    return registry


# --- the scheduler ---------------------------------------------------------------------------------------

#: kube-scheduler's extension_point label of a NormalizeScore call
_POINT_LABEL: Final = {NORMALIZE_SCORE: "ScoreExtensionNormalize"}
BIND: Final = "Bind"
DEFAULT_BINDER: Final = "DefaultBinder"
#: scheduler_pending_pods' queue label values, kube's
QUEUES: Final = ("active", "backoff", "unschedulable", "gated")


class _PendingPods(Collector):
    """scheduler_pending_pods, counted at scrape time from the queue (no gauge to keep in step)."""

    def __init__(self, count: Callable[[], Mapping[str, int]]) -> None:
        self._count = count

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
            "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
            "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
            "number of unschedulable pods that the scheduler never attempted to schedule because "
            "they are gated.",
            labels=["queue"],
        )
        counts = self._count()
        for queue in QUEUES:
            family.add_metric([queue], counts.get(queue, 0))
        yield family

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("scheduler_pending_pods", "", labels=["queue"])


class SchedulerMetrics:
    """kube-scheduler's metrics from the live scheduler's decisions and bindings.

    :meth:`attach` hooks it in: it observes every Decision of the scheduling loop (the cycle's
    extension points and plugins, the attempt of a pod found unschedulable), is told of every
    binding (the ``Bind`` extension point, ``DefaultBinder``, and the attempt, scheduled or
    error), and counts the queue's pods at each scrape. Preemption: every cycle that ran
    DefaultPreemption's PostFilter is an attempt (kube counts in PostFilter, candidate or not);
    each preemption carried out observes its candidate's victims (terminating ones included),
    when it is prepared, as v1.35 does in both its sync and async paths."""

    def __init__(self, registry: CollectorRegistry | None = None, health: Health | None = None) -> None:
        self.registry = registry if registry is not None else _registry()
        self.health = health if health is not None else Health()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
            "not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self._children: dict[tuple[int, tuple[str, ...]], Histogram] = {}
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )

        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )

    # ------------------------------------------------------------------ hooking in
    def attach(self, scheduler: ObservedScheduler) -> None:
        """Observe ``scheduler``'s loop; count its queue at each scrape; ready once its watch
        caches have listed."""
        scheduler.loop.observers.append(self.observe)
        self.registry.register(_PendingPods(lambda: pending_pods(scheduler)))
        self.health.add_readiness("informer-sync", reflectors_synced(lambda: scheduler.reflectors))

    # ------------------------------------------------------------------ recording
    def observe(self, decision: Decision) -> None:
        """A SchedulingLoop observer: the cycle's timings; an unschedulable pod's attempt ends here."""
        t = decision.timings
        profile = _profile(decision)
        if t is not None:
            for point, ns in t.points.items():
                status = t.point_status.get(point, "Success")
                self._child(self.extension_point_duration, (point, status, profile)).observe(ns / 1e9)
            for point, per_plugin in t.plugins.items():
                label = _POINT_LABEL.get(point, point)
                statuses = t.statuses.get(point, {})
                for plugin, ns in per_plugin.items():
                    status = statuses.get(plugin, "Success")
                    self._child(self.plugin_duration, (plugin, label, status)).observe(ns / 1e9)
            self.algorithm_duration.observe(t.cycle_ns / 1e9)
        if decision.preemption is not None:
            self.preemption_attempts.inc()
        if decision.selected is None:
            errored = t is not None and "Error" in t.point_status.values()
            self._attempt("error" if errored else "unschedulable", profile, _cycle_seconds(decision))

    def preempting(self, prepared: PreparedPreemption) -> None:
        """A preemption is carried out: its candidate's victims."""
        self.preemption_victims.observe(len(prepared.result.victims))

    def bound(self, decision: Decision, started_ns: int, ok: bool) -> None:
        """The binding POSTed at ``started_ns`` (perf_counter_ns) answered: ``ok`` or an error
        (a conflict included: kube's DefaultBinder returns it as an Error)."""
        seconds = (time.perf_counter_ns() - started_ns) / 1e9
        profile = _profile(decision)
        status = "Success" if ok else "Error"
        self.extension_point_duration.labels(BIND, status, profile).observe(seconds)
        self.plugin_duration.labels(DEFAULT_BINDER, BIND, status).observe(seconds)
        self._attempt("scheduled" if ok else "error", profile, _cycle_seconds(decision) + seconds)

    def _child(self, histogram: Histogram, labels: tuple[str, ...]) -> Histogram:
        """``histogram.labels(*labels)``, kept: a cycle makes some 25 observations, and the
        library's lookup (validation, a lock) would cost more than the observations do."""
        key = (id(histogram), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = histogram.labels(*labels)
        return child

    def _attempt(self, result: str, profile: str, seconds: float) -> None:
        self.schedule_attempts.labels(result, profile).inc()
        self.attempt_duration.labels(result, profile).observe(seconds)


def _profile(decision: Decision) -> str:
    return decision.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME


def _cycle_seconds(decision: Decision) -> float:
    return decision.timings.cycle_ns / 1e9 if decision.timings is not None else 0.0


def pending_pods(scheduler: ObservedScheduler) -> dict[str, int]:
    """The scheduler's queued pods by pool (active, backoff, unschedulable, gated)."""
    counts = dict.fromkeys(QUEUES, 0)
    with scheduler.cache.lock:
        queue = scheduler.queue
        for key in scheduler.cache.cluster.unbound_pods:
            where = queue.where(key)
            if where:
                counts[where] = counts.get(where, 0) + 1
    return counts


# --- the webhook -----------------------------------------------------------------------------------------

#: seconds; kube-apiserver's admission webhook buckets (0.005 ... 25) with finer ones below 5 ms,
#: where a webhook answering from its cache spends its time
WEBHOOK_BUCKETS: Final = (
    *(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0),
)


class WebhookMetrics:
    """Admission reviews answered, by path, operation and verdict, and their latency."""

    def __init__(self, registry: CollectorRegistry | None = None, health: Health | None = None) -> None:
        self.registry = registry if registry is not None else _registry()
        self.health = health if health is not None else Health()
        self.requests = Counter(
            "kubespread_webhook_requests",
            "Admission reviews answered, by path, operation, verdict and code (200 allowed; the "
            "refusal's code; 400 a review that could not be read).",
            ["path", "operation", "allowed", "code"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "kubespread_webhook_request_duration_seconds",
            "Time to answer an admission review, reading it included.",
            ["path", "operation"],
            buckets=WEBHOOK_BUCKETS,
            registry=self.registry,
        )

    def review(self, path: str, operation: str, allowed: bool, code: int, seconds: float) -> None:
        op = operation or "unknown"
        self.requests.labels(path, op, "true" if allowed else "false", str(code)).inc()
        self.duration.labels(path, op).observe(seconds)


# --- the controller --------------------------------------------------------------------------------------

#: controller-runtime's reconcile_time_seconds buckets
RECONCILE_BUCKETS: Final = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    *(1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60),
)


#: controller-runtime's result label values
RECONCILE_RESULTS: Final = ("success", "error", "requeue", "requeue_after")


class ControllerMetrics:
    """controller-runtime's reconcile metrics: result success, error (retried after a delay) or
    requeue (a status write refused by a conflict: synced again at once)."""

    def __init__(self, registry: CollectorRegistry | None = None, health: Health | None = None) -> None:
        self.registry = registry if registry is not None else _registry()
        self.health = health if health is not None else Health()
        self.total = Counter(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=self.registry,
        )
        self.errors = Counter(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=self.registry,
        )
        self.time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=RECONCILE_BUCKETS,
            registry=self.registry,
        )

    def attach(self, host: ObservedController, controller: str) -> None:
        """Ready once the host's watch caches have listed; ``controller``'s series start at 0,
        as controller-runtime creates them when a controller starts (reconciles are reported
        by the host)."""
        self.health.add_readiness("informer-sync", reflectors_synced(lambda: host.reflectors))
        for result in RECONCILE_RESULTS:
            self.total.labels(controller, result)
        self.errors.labels(controller)

    def reconciled(self, controller: str, result: str, seconds: float) -> None:
        self.total.labels(controller, result).inc()
        if result == "error":
            self.errors.labels(controller).inc()
        self.time.labels(controller).observe(seconds)


# --- the rebalancer --------------------------------------------------------------------------------------

#: how a run of ``rebalance --apply`` ended, as the runs counter labels it (its report's outcome
#: up to the first colon: the reason after it is logged, not a label)
REBALANCE_OUTCOMES: Final = (
    "balanced",
    "nothing the plan can move",
    "rounds exhausted",
    "max evictions reached",
    "stopped",
)


class RebalancerMetrics:
    """``rebalance --apply --every``'s metrics, in the descheduler's manner (it exports
    ``descheduler_pods_evicted_total`` and ``descheduler_loop_duration_seconds``), prefixed
    ``kubespread_rebalance_``: evictions by result and namespace, runs by outcome, each run's
    and each wave's duration (a wave: its first eviction to its replacements bound)."""

    def __init__(self, registry: CollectorRegistry | None = None, health: Health | None = None) -> None:
        self.registry = registry if registry is not None else _registry()
        self.health = health if health is not None else Health()
        r = self.registry
        self.evictions = Counter(
            "kubespread_rebalance_pods_evicted",
            "Planned evictions by result (evicted, gone, skipped) and namespace",
            ["result", "namespace"],
            registry=r,
        )
        self.runs = Counter(
            "kubespread_rebalance_runs", "Runs of the rebalancer, by how they ended", ["outcome"], registry=r
        )
        for outcome in REBALANCE_OUTCOMES:
            self.runs.labels(outcome)
        self.run_duration = Histogram(
            "kubespread_rebalance_loop_duration_seconds",
            "Time taken by one run: reading, planning, its waves",
            buckets=exponential_buckets(0.1, 2, 14),
            registry=r,
        )
        self.wave_duration = Histogram(
            "kubespread_rebalance_wave_duration_seconds",
            "From a wave's first eviction to its replacements bound",
            buckets=exponential_buckets(0.1, 2, 14),
            registry=r,
        )

    def evicted(self, result: str, namespace: str) -> None:
        self.evictions.labels(result, namespace).inc()

    def ran(self, outcome: str, seconds: float, waves: Iterable[float]) -> None:
        self.runs.labels(outcome.split(":", 1)[0]).inc()
        self.run_duration.observe(seconds)
        for w in waves:
            self.wave_duration.observe(w)
