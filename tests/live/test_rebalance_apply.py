"""live.rebalance.WaveExecutor over the in-memory FakeApi, with kubespread's own scheduler
binding the replacements and stand-ins for the ReplicaSet controller, the kubelets and the
disruption controller: a 0/6/6 zone skew under a PDB maxUnavailable 1 becomes 4/4/4 in waves
of one through the Eviction API, each eviction reported; a second run does nothing; a 429
is waited on, a 500 stops the run, a lost answer is not followed by a second eviction;
--max-evictions, --namespace and --selector bound it."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from builders import make_node
from kubespread.api.selectors import parse_selector
from kubespread.io.loader import Manifests
from kubespread.live import informer
from kubespread.live import rebalance as live_rebalance
from kubespread.live.kube import ApiError
from kubespread.live.rebalance import EVICTED, EvictionRecord, WaveExecutor
from kubespread.live.scheduler import SecondaryScheduler
from kubespread.plan.rebalance import RebalancePlan, rebalance
from kubespread.scheduler import queue as queue_module
from kubespread.scheduler.config import default_profile
from kubespread.sim.placement import place
from live.fake_api import FakeApi
from live.stand_ins import StandIns
from live.zone_spread import zone_spread_replicaset

OURS = "kubespread"
ZONE = "topology.kubernetes.io/zone"
NS = "default"


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue_module, "INITIAL_BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(queue_module, "MAX_BACKOFF_SECONDS", 0.05)
    monkeypatch.setattr(informer, "INITIAL_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(informer, "MAX_RETRY_SECONDS", 0.05)
    monkeypatch.setattr(live_rebalance, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(live_rebalance, "MAX_RETRY_SECONDS", 0.1)
    monkeypatch.setattr(live_rebalance, "POLL_SECONDS", 0.02)


def skewed_cluster(replicas: int = 12, *, pdb: bool = True) -> FakeApi:
    """Three zones of two 4-CPU nodes; a ReplicaSet ``web`` of 12 pods (spread by zone,
    maxSkew 1) bound 0/6/6; a PDB maxUnavailable 1 over it."""
    api = FakeApi()
    api.graceful = True
    for zone in "abc":
        for i in range(2):
            api.create(make_node(f"{zone}{i}").zone(zone).capacity(cpu="4").dict())
    pod = zone_spread_replicaset(api, NS, "web", replicas, cpu="500m", scheduler=OURS)
    for i in range(replicas):
        status = {
            "phase": "Running",
            "startTime": f"2026-01-01T00:{i:02d}:00Z",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        api.create({**pod(i, nodeName=f"{'bc'[i % 2]}{i // 2 % 2}"), "status": status})
    if pdb:
        api.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": NS},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
            }
        )
    return api


def planner(manifests: Manifests) -> RebalancePlan:
    """What ``kubespread rebalance`` plans from a read of the cluster."""
    placed = place(manifests, profiles={OURS: default_profile(), "default-scheduler": default_profile()})
    return rebalance(placed.baseline)


def zones(api: FakeApi) -> list[int]:
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in api.objects_of("Node")}
    running = Counter(
        nodes[p["spec"]["nodeName"]]
        for p in api.objects_of("Pod")
        if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
    )
    return [running.get(z, 0) for z in "abc"]


@pytest.fixture
def live(stop: threading.Event) -> Iterator[Any]:
    """Start the scheduler (kubespread's, binding) and the stand-ins on a cluster."""
    started: list[Any] = []

    def start(api: FakeApi) -> tuple[SecondaryScheduler, StandIns]:
        sched = SecondaryScheduler(api, {OURS: default_profile()}, stop=stop, identity="test-1")
        sched.start(timeout=2.0)
        runner = threading.Thread(target=sched.run, name="binder-loop", daemon=True)
        runner.start()
        others = StandIns(api, NS, stop, every=0.02, kubelet_delay=0.05)
        others.start()
        started.extend([sched, runner, others])
        return sched, others

    yield start
    stop.set()
    for thing in started:
        if isinstance(thing, threading.Thread):
            thing.join(2.0)


def executor(api: FakeApi, stop: threading.Event, lines: list[EvictionRecord], **kw: Any) -> WaveExecutor:
    return WaveExecutor(api, planner, stop=stop, on_eviction=lines.append, wave_timeout=20.0, **kw)


def test_a_0_6_6_skew_becomes_4_4_4_in_waves_of_one_and_a_second_run_does_nothing(
    stop: threading.Event, live: Any
) -> None:
    api = skewed_cluster()
    live(api)
    assert zones(api) == [0, 6, 6]
    lines: list[EvictionRecord] = []
    report = executor(api, stop, lines).run()
    assert report.outcome == "balanced", report.to_dict()
    assert report.balanced and zones(api) == [4, 4, 4]
    evicted = [e for e in report.evictions if e.outcome == EVICTED]
    assert len(evicted) == 4 and lines == list(report.evictions)
    assert all(len(w.evicted) == 1 for w in report.waves)  # maxUnavailable 1: waves of one
    assert all(w.as_planned for w in report.waves)
    assert len({e.uid for e in evicted}) == 4
    assert len(api.calls_matching("/eviction")) >= 4
    for e in evicted:
        assert e.node[0] in "bc" and e.workload == "default/ReplicaSet/web" and e.time.endswith("Z")
        assert e.to_dict()["outcome"] == "evicted"
    calls = len(api.calls_matching("/eviction"))
    again = executor(api, stop, []).run()
    assert again.outcome == "balanced" and not again.evictions and again.rounds == 0
    assert len(api.calls_matching("/eviction")) == calls  # nothing was sent


def test_a_429_is_waited_on_and_retried(stop: threading.Event, live: Any) -> None:
    api = skewed_cluster()
    live(api)
    api.fail_next(2, status=429, only="/eviction")
    report = executor(api, stop, [], max_evictions=1).run()
    assert report.outcome == "max evictions reached"
    (first, *_) = [e for e in report.evictions if e.outcome == EVICTED]
    assert first.attempts == 3
    assert zones(api) in ([1, 5, 6], [1, 6, 5])


def test_a_500_for_several_budgets_stops_the_run(stop: threading.Event, live: Any) -> None:
    """A second budget over the pods appears after the plan was made (the planner leaves
    pods under several budgets alone): the API server answers 500, and the run stops."""
    api = skewed_cluster()
    live(api)
    api.before_next(
        "/eviction",
        lambda: api.put(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web-too", "namespace": NS},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                "status": {"disruptionsAllowed": 1},
            }
        ),
    )
    report = executor(api, stop, []).run()
    assert report.outcome.startswith("stopped: ") and "more than one PodDisruptionBudget" in report.outcome
    assert report.evicted == 0 and zones(api) == [0, 6, 6]
    assert len(api.calls_matching("/eviction")) == 1


def test_a_lost_answer_is_not_followed_by_a_second_eviction(stop: threading.Event, live: Any) -> None:
    """The API server applies the eviction and its answer is lost (a restart): the pod is read
    before anything is sent again; it is terminating, so the eviction is counted, once."""
    api = skewed_cluster()
    live(api)
    api.lose_answer_next(1, only="/eviction")
    report = executor(api, stop, [], max_evictions=1).run()
    (done,) = [e for e in report.evictions if e.outcome == EVICTED]
    assert "answer lost" in done.message
    assert len(api.calls_matching("/eviction")) == 1


def test_bounds_and_a_stop_are_said_in_the_report(stop: threading.Event, live: Any) -> None:
    api = skewed_cluster()
    live(api)
    report = executor(api, stop, [], namespace="elsewhere").run()
    assert report.evicted == 0
    assert {e.outcome for e in report.evictions} == {"skipped"}
    assert not api.calls_matching("/eviction")
    report = executor(api, stop, [], selector=parse_selector("app=other")).run()
    assert report.evicted == 0 and not api.calls_matching("/eviction")
    halt = threading.Event()
    halt.set()
    report = WaveExecutor(api, planner, stop=halt).run()
    assert report.outcome == "stopped" and not report.evictions


def test_a_pod_replaced_since_the_plan_is_not_evicted(stop: threading.Event, live: Any) -> None:
    """The plan read one uid; the pod under that name is another by the time of the eviction
    (recreated): the uid precondition refuses it (409), nothing else is evicted for it."""
    api = skewed_cluster()
    live(api)
    names: list[str] = []

    def recreate() -> None:
        calls = api.calls_matching("/eviction")
        name = calls[-1].rsplit("/", 2)[-2] if calls else ""
        names.append(name)
        old = api.stored("Pod", f"{NS}/{name}")
        api.remove("Pod", f"{NS}/{name}")
        fresh = {**old, "metadata": {k: v for k, v in old["metadata"].items() if k != "uid"}}
        api.put(fresh)

    api.before_next("/eviction", recreate)
    report = executor(api, stop, [], max_evictions=1).run()
    first = report.evictions[0]
    assert first.outcome == "gone" and "Precondition" in first.message
    assert first.pod == f"{NS}/{names[0]}"


@pytest.mark.parametrize("status", [403])
def test_a_refused_account_stops_the_run(stop: threading.Event, live: Any, status: int) -> None:
    api = skewed_cluster()
    live(api)
    api.fail_next(1, status=status, only="/eviction")
    report = executor(api, stop, []).run()
    assert report.outcome.startswith("stopped: evicting default/web-")
    assert "403 Forbidden" in report.outcome


def test_an_api_server_away_between_rounds_is_waited_for(stop: threading.Event, live: Any) -> None:
    api = skewed_cluster()
    live(api)

    def away_briefly() -> None:
        api.unreachable = True
        threading.Timer(0.3, lambda: setattr(api, "unreachable", False)).start()

    api.before_next("list Node", away_briefly)
    started = time.monotonic()
    report = executor(api, stop, [], max_evictions=1).run()
    assert report.evicted == 1 and time.monotonic() - started >= 0.3


def test_an_eviction_error_is_api_error() -> None:
    assert issubclass(live_rebalance.EvictionStopped, Exception)
    assert ApiError(429, "TooManyRequests", "x").status == 429


def test_every_runs_again_on_a_timer_and_reports_to_its_metrics(stop: threading.Event, live: Any) -> None:
    """``--every``: the first run evens the skew, the next ones find nothing to do; the
    metrics count the evictions and the runs, and the loop beats while it waits."""
    from kubespread.live.metrics import RebalancerMetrics
    from kubespread.live.rebalance import Rebalancer

    api = skewed_cluster()
    live(api)
    metrics = RebalancerMetrics()
    loop = Rebalancer(lambda: executor(api, stop, []), every=0.1, stop=stop, metrics=metrics)
    runner = threading.Thread(target=loop.run, daemon=True)
    runner.start()
    deadline = time.monotonic() + 20
    while len(loop.reports) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    runner.join(5)
    assert not runner.is_alive()
    first, second, *_ = loop.reports
    assert first.evicted == 4 and first.outcome == "balanced"
    assert second.outcome == "balanced" and not second.evictions
    sample = metrics.registry.get_sample_value
    assert sample("kubespread_rebalance_pods_evicted_total", {"result": "evicted", "namespace": NS}) == 4
    assert sample("kubespread_rebalance_runs_total", {"outcome": "balanced"}) == len(loop.reports)
    assert sample("kubespread_rebalance_wave_duration_seconds_count") == 4
    assert sample("kubespread_rebalance_runs_total", {"outcome": "stopped"}) == 0
    assert zones(api) == [4, 4, 4]


def test_every_waits_for_the_lease(stop: threading.Event) -> None:
    from kubespread.live.rebalance import Rebalancer

    class NotLeading:
        leading = threading.Event()
        lost = threading.Event()

    made: list[int] = []
    loop = Rebalancer(lambda: made.append(1) or None, every=0.01, stop=stop)  # type: ignore[func-returns-value]
    leader = NotLeading()
    runner = threading.Thread(target=loop.run, args=(leader,), daemon=True)
    runner.start()
    time.sleep(0.3)
    assert not made  # no run without the Lease
    leader.lost.set()
    runner.join(2)
    assert not runner.is_alive()


def test_one_round_still_says_whether_it_is_balanced(stop: threading.Event, live: Any) -> None:
    """--rounds 1: the plan's waves are carried out, and one more read says balanced."""
    api = skewed_cluster()
    live(api)
    report = executor(api, stop, [], rounds=1).run()
    assert report.outcome == "balanced" and report.rounds == 1 and report.evicted == 4


def test_the_command_prints_a_json_line_per_eviction_and_a_summary(
    stop: threading.Event, live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kubespread rebalance --kubeconfig ... --apply`` end to end on the in-memory API: the
    command's planner (its settle and plan_rebalance), its JSON lines and its summary."""
    import json
    import signal

    from typer.testing import CliRunner

    from kubespread.cli.app import app
    from kubespread.live.kube import KubeApi

    api = skewed_cluster()
    live(api)
    monkeypatch.setattr(KubeApi, "connect", classmethod(lambda cls, kubeconfig=None, context=None: api))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = CliRunner().invoke(app, ["rebalance", "--kubeconfig", "fake", "--apply"])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["outcome"] for e in lines] == ["evicted"] * 4
    assert {e["workload"] for e in lines} == {"default/ReplicaSet/web"}
    assert "rebalance --apply: balanced; 4 evicted in 4 waves" in result.stderr
    assert zones(api) == [4, 4, 4]


def test_the_command_bounds_what_it_plans_and_answers_as_the_version(
    stop: threading.Event, live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--apply -l``: pods outside the selector are not planned to move (no line at all; they
    once were planned and reported ``skipped``); the live re-plans answer as --kube-version, else
    as the API server's /version (the in-memory one says 1.35)."""
    import signal

    from typer.testing import CliRunner

    from kubespread.cli.app import app
    from kubespread.live.kube import KubeApi
    from kubespread.scheduler import config

    api = skewed_cluster()
    live(api)
    monkeypatch.setattr(KubeApi, "connect", classmethod(lambda cls, kubeconfig=None, context=None: api))
    versions: list[str] = []
    real = config.default_profiles

    def recording(*, features: Any = None) -> Any:
        versions.append(str(features.version))
        return real(features=features)

    monkeypatch.setattr(config, "default_profiles", recording)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    runner = CliRunner()
    try:
        other = runner.invoke(
            app, ["rebalance", "--kubeconfig", "fake", "--apply", "-l", "app=other", "--kube-version", "1.33"]
        )
        assert other.exit_code == 0, other.output
        assert not [line for line in other.stdout.splitlines() if line.startswith("{")]
        assert "0 evicted" in other.stderr and not api.calls_matching("/eviction")
        web = runner.invoke(app, ["rebalance", "--kubeconfig", "fake", "--apply", "-n", NS, "-l", "app=web"])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    assert web.exit_code == 0, web.output
    assert "balanced; 4 evicted in 4 waves" in web.stderr and zones(api) == [4, 4, 4]
    assert versions == ["1.33", "1.35"]
