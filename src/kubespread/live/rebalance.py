"""Carrying out a rebalance plan on a live cluster, wave by wave, through the Eviction API.

The plan is ``plan.rebalance``'s (this module never decides which pod moves): the caller's
``planner`` turns a read of the cluster into a :class:`~kubespread.plan.rebalance.RebalancePlan`.
:class:`WaveExecutor` then, for each round (at most ``rounds``):

1. reads the cluster once (:func:`kubespread.live.source.read_from`) and asks the planner;
   a plan without evictions ends the run (balanced, or nothing the planner can do);
2. for each wave of the plan: evicts its pods through ``pods/<name>/eviction`` (policy/v1,
   with the uid the plan read as a precondition, so a pod recreated under the same name is
   never evicted); a 429 (a PodDisruptionBudget allows no disruption now) is waited on and
   retried with backoff (1 s doubling to 10 s) until ``eviction_timeout``; a 500 (the pod is
   under several budgets: the API server will never evict it) stops the run; a 404 or a 409
   on the uid means the pod is gone already: nothing is sent again;
3. waits until the evicted pods are gone and the workloads they belonged to have their
   replacements bound (by whichever scheduler the pods name), then compares the domains the
   replacements landed in with those the plan expected. A divergence ends the round: the
   next one plans again from the live state. A wave as planned goes on to the next wave.

Never twice for one planned move: every eviction is remembered by pod uid; a call whose
answer was lost (the API server restarting, a timeout) is followed by a read of the pod
before anything is sent again: gone, terminating or replaced means the eviction was applied.
``stop`` (Ctrl-C) is looked at between evictions and between waves; the report says what was
done. Each eviction is handed to ``on_eviction`` as it is decided (the command prints it as a
JSON line), with its time and outcome.

:class:`Rebalancer` runs an executor every ``every`` seconds (``--every``), as the descheduler
runs, only while it leads (a Lease, when given a :class:`~kubespread.live.leader.LeaderElector`),
reporting to :class:`~kubespread.live.metrics.RebalancerMetrics`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

from kubespread.api.selectors import Selector
from kubespread.io.loader import Manifests
from kubespread.live.kube import ApiError, KubeApi, LiveError
from kubespread.live.source import read_from

if TYPE_CHECKING:
    from kubespread.live.leader import LeaderElector
    from kubespread.live.metrics import RebalancerMetrics

__all__ = [
    "ApplyReport",
    "EvictionRecord",
    "EvictionStopped",
    "PlanLike",
    "Rebalancer",
    "WaveExecutor",
    "WaveRecord",
]

log = logging.getLogger("kubespread.rebalance")

#: a 429 is retried after this, doubling up to the most
RETRY_SECONDS: Final = 1.0
MAX_RETRY_SECONDS: Final = 10.0
#: how long one eviction may be refused with 429 (a budget that never frees) before the run stops
EVICTION_TIMEOUT_SECONDS: Final = 300.0
#: how long a wave waits for its pods to go and their replacements to be bound
WAVE_TIMEOUT_SECONDS: Final = 600.0
POLL_SECONDS: Final = 0.25

# outcomes of one planned eviction
EVICTED: Final = "evicted"
GONE: Final = "gone"  # the pod (that uid) was no longer there: nothing was sent
SKIPPED: Final = "skipped"  # outside --namespace/--selector, or --max-evictions reached
FAILED: Final = "failed"


class MoveLike(Protocol):
    """What the executor reads of a planned move (``plan.rebalance.Move``)."""

    @property
    def pod(self) -> str: ...

    @property
    def workload(self) -> str: ...

    @property
    def refused(self) -> str: ...

    @property
    def target_domains(self) -> dict[str, str]: ...


class PlanLike(Protocol):
    """What the executor reads of a plan (``plan.rebalance.RebalancePlan``)."""

    @property
    def waves(self) -> Sequence[Sequence[MoveLike]]: ...

    @property
    def balanced(self) -> bool: ...


class EvictionStopped(Exception):
    """An eviction the API server will not grant (500: several budgets; a 429 beyond the
    timeout; a refusal of the account): the run stops there."""


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class EvictionRecord:
    """One planned eviction and what came of it (a line of the JSON report)."""

    time: str
    round: int
    wave: int
    pod: str
    uid: str
    node: str
    workload: str
    outcome: str
    attempts: int = 0
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "time": self.time,
            "round": self.round,
            "wave": self.wave,
            "pod": self.pod,
            "uid": self.uid,
            "node": self.node,
            "workload": self.workload,
            "outcome": self.outcome,
            "attempts": self.attempts,
        }
        if self.message:
            doc["message"] = self.message
        return doc


@dataclass(frozen=True)
class WaveRecord:
    """One wave carried out: its evictions, how long until its replacements were bound, where
    they landed, and whether that is where the plan expected them."""

    round: int
    wave: int
    evicted: tuple[str, ...]
    seconds: float
    landed: Mapping[str, str]
    as_planned: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "wave": self.wave,
            "evicted": list(self.evicted),
            "seconds": round(self.seconds, 3),
            "landed": dict(self.landed),
            "asPlanned": self.as_planned,
        }


@dataclass(frozen=True)
class ApplyReport:
    """What a run did: every eviction decided, every wave, and why it ended."""

    evictions: tuple[EvictionRecord, ...]
    waves: tuple[WaveRecord, ...]
    rounds: int
    outcome: str
    balanced: bool

    @property
    def evicted(self) -> int:
        return sum(1 for e in self.evictions if e.outcome == EVICTED)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "balanced": self.balanced,
            "rounds": self.rounds,
            "evicted": self.evicted,
            "evictions": [e.to_dict() for e in self.evictions],
            "waves": [w.to_dict() for w in self.waves],
        }


@dataclass
class _Run:
    evictions: list[EvictionRecord] = field(default_factory=list)
    waves: list[WaveRecord] = field(default_factory=list)
    #: uids an eviction was sent for (granted, or its answer lost and the pod found gone)
    evicted_uids: set[str] = field(default_factory=set)


def _controller_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ns}/{ref.get('kind')}/{ref.get('name')}"
    return f"{ns}/Pod/{meta.get('name')}"


def _key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class WaveExecutor:
    """Carries out the planner's plans on the cluster ``api`` reaches (see the module notes).

    ``planner``: a read of the cluster -> the plan. ``namespace``/``selector``: only pods there
    (and matching) are evicted. The command's planner already plans within them
    (``plan.rebalance.Bounds``); a move outside, from another planner, is reported ``skipped``.
    ``max_evictions``: at most this many evictions in the whole run."""

    def __init__(
        self,
        api: KubeApi,
        planner: Callable[[Manifests], PlanLike],
        *,
        rounds: int = 3,
        max_evictions: int | None = None,
        namespace: str | None = None,
        selector: Selector | None = None,
        stop: threading.Event | None = None,
        on_eviction: Callable[[EvictionRecord], None] | None = None,
        eviction_timeout: float = EVICTION_TIMEOUT_SECONDS,
        wave_timeout: float = WAVE_TIMEOUT_SECONDS,
    ) -> None:
        self.api = api
        self.planner = planner
        self.rounds = rounds
        self.max_evictions = max_evictions
        self.namespace = namespace
        self.selector = selector
        self.stop = stop or threading.Event()
        self.on_eviction = on_eviction
        self.eviction_timeout = eviction_timeout
        self.wave_timeout = wave_timeout

    # ------------------------------------------------------------------ the run
    def run(self) -> ApplyReport:
        run = _Run()
        outcome, balanced, rounds = "rounds exhausted", False, 0
        try:
            # one read more than the rounds: the last one only says whether it is balanced
            for round_no in range(1, self.rounds + 2):
                if self.stop.is_set():
                    outcome = "stopped"
                    break
                manifests = self._read()
                if manifests is None:
                    outcome = "stopped"
                    break
                plan = self.planner(manifests)
                moves = [m for wave in plan.waves for m in wave if not m.refused]
                if not moves:
                    balanced = plan.balanced
                    outcome = "balanced" if balanced else "nothing the plan can move"
                    break
                if round_no > self.rounds:
                    outcome = "rounds exhausted"
                    break
                rounds = round_no
                outcome = self._round(run, round_no, plan, _uids(manifests))
                if outcome not in ("diverged", "planned waves done"):
                    break  # stopped, or --max-evictions reached
        except EvictionStopped as e:
            outcome = f"stopped: {e}"
        return ApplyReport(tuple(run.evictions), tuple(run.waves), rounds, outcome, balanced)

    def _round(self, run: _Run, round_no: int, plan: PlanLike, uids: Mapping[str, str]) -> str:
        for wave_no, wave in enumerate(plan.waves, start=1):
            if self.stop.is_set():
                return "stopped"
            moves = [m for m in wave if not m.refused]
            if not moves:
                continue
            before = self._pods_by_uid()
            started = time.monotonic()
            evicted: list[MoveLike] = []
            for move in moves:
                if self.stop.is_set():
                    break
                record = self._evict(run, round_no, wave_no, move, uids, before)
                run.evictions.append(record)
                if self.on_eviction is not None:
                    self.on_eviction(record)
                if record.outcome == EVICTED:
                    evicted.append(move)
            if not evicted:
                if self._budget_spent(run):
                    return "max evictions reached"
                if self.stop.is_set():
                    return "stopped"
                continue
            landed = self._wait_for_replacements(evicted, uids, before)
            seconds = time.monotonic() - started
            as_planned = _as_planned(evicted, landed, self._node_labels())
            run.waves.append(
                WaveRecord(round_no, wave_no, tuple(m.pod for m in evicted), seconds, landed, as_planned)
            )
            log.info(
                "round %d wave %d: %d evicted, replacements bound in %.2fs on %s%s",
                round_no,
                wave_no,
                len(evicted),
                seconds,
                ", ".join(f"{k}={v}" for k, v in sorted(landed.items())) or "-",
                "" if as_planned else " (not where the plan expected: planning again)",
            )
            if self._budget_spent(run):
                return "max evictions reached"
            if self.stop.is_set():
                return "stopped"
            if not as_planned:
                return "diverged"
        return "planned waves done"

    def _read(self) -> Manifests | None:
        """The cluster, read once for planning; while the API server is away (a restart), read
        again until it is back (None when stopped meanwhile)."""
        deadline = time.monotonic() + self.wave_timeout
        while True:
            try:
                return read_from(self.api)
            except LiveError as e:
                if "cannot reach" not in str(e) or time.monotonic() > deadline:
                    raise EvictionStopped(str(e)) from None
                log.info("%s; reading again", e)
                if self.stop.wait(POLL_SECONDS * 4):
                    return None

    def _budget_spent(self, run: _Run) -> bool:
        done = sum(1 for e in run.evictions if e.outcome == EVICTED)
        return self.max_evictions is not None and done >= self.max_evictions

    # ------------------------------------------------------------------ one eviction
    def _in_bounds(self, pod: Mapping[str, Any] | None) -> bool:
        if pod is None:
            return True
        meta = pod.get("metadata") or {}
        if self.namespace is not None and (meta.get("namespace") or "default") != self.namespace:
            return False
        return self.selector is None or self.selector.matches(meta.get("labels") or {})

    def _evict(
        self,
        run: _Run,
        round_no: int,
        wave_no: int,
        move: MoveLike,
        uids: Mapping[str, str],
        before: Mapping[str, Mapping[str, Any]],
    ) -> EvictionRecord:
        key = move.pod
        uid = uids.get(key, "")
        pod = before.get(uid) if uid else None
        node = str(((pod or {}).get("spec") or {}).get("nodeName") or "")

        def record(outcome: str, attempts: int = 0, message: str = "") -> EvictionRecord:
            return EvictionRecord(
                _stamp(), round_no, wave_no, key, uid, node, move.workload, outcome, attempts, message
            )

        if not self._in_bounds(pod):
            return record(SKIPPED, message="outside --namespace/--selector")
        if self._budget_spent(run):
            return record(SKIPPED, message="--max-evictions reached")
        if not uid or uid in run.evicted_uids or pod is None or _terminating(pod):
            return record(GONE, message="no longer there as planned (gone, replaced or terminating)")
        ns, name = key.split("/", 1)
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": ns},
            "deleteOptions": {"preconditions": {"uid": uid}},
        }
        attempts, wait = 0, RETRY_SECONDS
        deadline = time.monotonic() + self.eviction_timeout
        while True:
            attempts += 1
            try:
                self.api.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction", body=body)
            except ApiError as e:
                if e.status in (404, 409):
                    return record(GONE, attempts, e.message)
                if e.status == 500:
                    raise EvictionStopped(f"{key}: {e}") from None
                if e.denied:
                    raise EvictionStopped(e.advice(f"evicting {key}")) from None
                if e.status != 429 and self._applied(key, uid):
                    # the answer was lost (a restart, a timeout): the pod went, so it was granted
                    run.evicted_uids.add(uid)
                    return record(EVICTED, attempts, f"granted (answer lost: {e.message})")
                if time.monotonic() + wait > deadline:
                    raise EvictionStopped(
                        f"{key}: still refused after {self.eviction_timeout:.0f}s: {e}"
                    ) from None
                log.info("evicting %s: %s; again in %.0fs", key, e, wait)
                if self.stop.wait(wait):
                    return record(SKIPPED, attempts, f"stopped while waiting: {e.message}")
                wait = min(wait * 2, MAX_RETRY_SECONDS)
                continue
            run.evicted_uids.add(uid)
            log.info("evicted %s from %s", key, node)
            return record(EVICTED, attempts)

    def _applied(self, key: str, uid: str) -> bool:
        """After a lost answer: whether the pod (that uid) is gone or terminating (False when
        that cannot be read either: the call is made again, and it is safe, the uid precondition
        and the PDB check making a repeat of an applied eviction a 404/409 or a no-op on a
        terminating pod)."""
        try:
            pod = self.api.get("Pod", key, timeout=10.0)
        except ApiError as e:
            return e.status == 404
        return (pod.get("metadata") or {}).get("uid") != uid or _terminating(pod)

    # ------------------------------------------------------------------ waiting for the wave
    def _list(self, kind: str) -> list[dict[str, Any]]:
        """Every object of ``kind``; while the API server is away (a restart), listed again
        until it is back, for at most ``wave_timeout`` ([] when stopped meanwhile)."""
        deadline = time.monotonic() + self.wave_timeout
        while True:
            try:
                items, _ = self.api.list(kind)
                return items
            except ApiError as e:
                if e.denied:
                    raise EvictionStopped(e.advice(f"listing {kind}")) from None
                if time.monotonic() > deadline:
                    raise EvictionStopped(f"listing {kind}: {e}") from None
                if self.stop.wait(POLL_SECONDS * 4):
                    return []

    def _pods_by_uid(self) -> dict[str, dict[str, Any]]:
        return {(p.get("metadata") or {}).get("uid", ""): p for p in self._list("Pod")}

    def _node_labels(self) -> dict[str, dict[str, str]]:
        return {
            (n.get("metadata") or {}).get("name", ""): (n.get("metadata") or {}).get("labels") or {}
            for n in self._list("Node")
        }

    def _wait_for_replacements(
        self, evicted: Sequence[MoveLike], uids: Mapping[str, str], before: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, str]:
        """Until the evicted pods are gone and each workload has as many bound pods as before
        the wave, none pending: the replacements (pods not there before) -> their nodes."""
        gone_uids = {uids[m.pod] for m in evicted}
        workloads = Counter(m.workload for m in evicted)
        wanted = {w: _running(before.values(), w) for w in workloads}
        deadline = time.monotonic() + self.wave_timeout
        while True:
            now = self._pods_by_uid()
            new = {u: p for u, p in now.items() if u not in before and _controller_key(p) in workloads}
            landed = {_key(p): str(p["spec"]["nodeName"]) for p in new.values() if _bound(p)}
            done = not (gone_uids & now.keys()) and all(
                _running(now.values(), w) >= count and not _waiting(now.values(), w)
                for w, count in wanted.items()
            )
            if done or self.stop.is_set():
                return landed
            if time.monotonic() > deadline:
                raise EvictionStopped(
                    f"the replacements of {', '.join(m.pod for m in evicted)} were not bound "
                    f"within {self.wave_timeout:.0f}s"
                )
            time.sleep(POLL_SECONDS)


def _terminating(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _bound(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _running(pods: Iterable[Mapping[str, Any]], workload: str) -> int:
    """The workload's pods bound and not terminating."""
    return sum(1 for p in pods if _controller_key(p) == workload and _bound(p) and not _terminating(p))


def _waiting(pods: Iterable[Mapping[str, Any]], workload: str) -> bool:
    """Whether one of the workload's pods is pending (not bound, not terminating)."""
    return any(_controller_key(p) == workload and not _bound(p) and not _terminating(p) for p in pods)


def _uids(manifests: Manifests) -> dict[str, str]:
    """Pod key -> the uid the plan was made from."""
    return {o.obj.key: o.obj.metadata.uid for o in manifests.objects if o.obj.KIND == "Pod"}


def _as_planned(
    evicted: Iterable[MoveLike], landed: Mapping[str, str], labels: Mapping[str, Mapping[str, str]]
) -> bool:
    """The replacements' domains (of the keys the plan targets) are, as a multiset per
    workload, those the plan expected; moves without a target count as landed anywhere."""
    expected: Counter[tuple[tuple[str, str], ...]] = Counter()
    keys: set[str] = set()
    for m in evicted:
        if m.target_domains:
            expected[tuple(sorted(m.target_domains.items()))] += 1
            keys |= m.target_domains.keys()
    if not expected:
        return True
    got: Counter[tuple[tuple[str, str], ...]] = Counter()
    for node in landed.values():
        node_labels = labels.get(node, {})
        got[tuple(sorted((k, node_labels.get(k, "")) for k in keys))] += 1
    return all(got[d] >= n for d, n in expected.items())


class Rebalancer:
    """``rebalance --apply --every``: a fresh :class:`WaveExecutor` (``make_executor``) every
    ``every`` seconds until ``stop``, only while leading when a ``leader`` is given; each run
    logged and counted. A run that stops on an eviction the API server will not grant is
    logged and the next run tries again (the cluster may have changed)."""

    def __init__(
        self,
        make_executor: Callable[[], WaveExecutor],
        *,
        every: float,
        stop: threading.Event,
        metrics: RebalancerMetrics | None = None,
    ) -> None:
        self.make_executor = make_executor
        self.every = every
        self.stop = stop
        self.metrics = metrics
        self.reports: list[ApplyReport] = []

    def _beat(self) -> None:
        if self.metrics is not None:
            self.metrics.health.beat()

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` (True when stopped meanwhile), beating: a long interval is not a
        stuck loop."""
        deadline = time.monotonic() + seconds
        while not self.stop.is_set():
            self._beat()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.stop.wait(min(left, 1.0))
        return True

    def run(self, leader: LeaderElector | None = None) -> None:
        while not self.stop.is_set():
            self._beat()
            if leader is not None and not leader.leading.is_set():
                if leader.lost.is_set():
                    return
                leader.leading.wait(0.5)
                continue
            started = time.monotonic()
            report = self.make_executor().run()
            seconds = time.monotonic() - started
            self.reports.append(report)
            if self.metrics is not None:
                for e in report.evictions:
                    self.metrics.evicted(e.outcome, e.pod.split("/", 1)[0])
                self.metrics.ran(report.outcome, seconds, [w.seconds for w in report.waves])
            log.info(
                "run %d: %s; %d evicted in %d waves, %.1fs; next in %.0fs",
                len(self.reports),
                report.outcome,
                report.evicted,
                len(report.waves),
                seconds,
                self.every,
            )
            if self._wait(self.every):
                return
