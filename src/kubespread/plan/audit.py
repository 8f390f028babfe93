"""``kubespread audit``: every failure domain failed in turn, on a copy of one settled cluster.

A failure of a domain (a zone, a rack, a node: one value of a node label) is every node of
that domain failed at t=0 by the node lifecycle controller (``unreachable`` taints, pods not
Ready, NoExecute evictions after each pod's tolerationSeconds, 300 s by default), then the
clock advanced by ``after`` so that the controllers recreate the evicted pods and
kube-scheduler v1.35 places them: the ``simulate`` engine, steps for steps the scenario a
person would write by hand (``node: {name, action: fail}`` per node, then ``advance``).

**One settle, many runs.** The input is settled once (``sim.placement.place``, as
``schedule`` settles it) and dumped (``io.dump.cluster_objects``); the base simulation is
rebuilt from that dump exactly as ``simulate`` builds a scenario's cluster (as
``plan.rebalance`` does), once per process. Each run needs a pristine copy of the base:
``copy.deepcopy`` is not exact (timers and index listeners are closures over the original
simulation, so the copy's callbacks act on the base), a Simulation does not pickle for the
same reason, and rebuilding from the dump per run re-settles the whole cluster. So each run
is a **fork** of the process holding the base (copy-on-write: nothing is copied up front);
the child runs the failure and sends back the record (plain data, pickled). Locally the
process holding the base forks every run itself, ``processes`` at a time, costliest first,
or all at once when there are fewer than twice as many (``_fork_all``); what every run reads
of the base before failing anything (running replicas, each pod's workload) is read once,
before forking. With a Dask ``Client`` the runs go to a Dask cluster, costliest first
(``plan.audit_dask``): the dump is scattered once, pickled, each worker process rebuilds the
base on its first task, then forks per run; the parent builds no base of its own then (the
failures are read from the settled nodes, the base's workload counts from the records). Same
dump, same seed, same steps: the local and distributed runs give the same records.

**Per workload** (Deployment, StatefulSet, or a ReplicaSet no Deployment owns; desired =
``spec.replicas``): replicas running (bound to a reachable node, not terminating) against
desired, pending pods grouped by kube-scheduler's message with ``explain``'s hints for one
of them, the PodDisruptionBudgets selecting its pods that are broken (currentHealthy <
desiredHealthy), the time to recover (virtual seconds after the failure when the last of
its running pods was bound, 0 when it lost none; None when still short of desired, or of
what ran before the failure when it was short already), and the skew of
each of its spread constraints after (``scheduler.views.spread_rows``, the one home of
skew). A failure's **harm**: replicas unavailable (summed), then pods pending, then broken
budgets; failures are ranked by it.

**What-ifs** (``vary``): a grid of changes to every workload's pod template spread
constraints (maxSkew, whenUnsatisfiable, nodeTaintsPolicy, nodeAffinityPolicy, minDomains)
or replicas, applied to the input before it is settled (a stored Deployment then rolls to
the new template while settling); each combination is audited, and ranked: those that
survive every failure of the first key (every workload whole again) first, then the fewest
pending pods, then the fewest unavailable replicas.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from kubespread.api.core import DO_NOT_SCHEDULE, HONOR, IGNORE, SCHEDULE_ANYWAY
from kubespread.api.features import FeatureGates
from kubespread.api.keys import LABEL_HOSTNAME, LABEL_ZONE
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.io.dump import cluster_objects
from kubespread.io.loader import LoadedObject
from kubespread.plan.audit_forks import ForkError, fork_each, forked
from kubespread.plan.audit_reads import (
    WORKLOAD_KINDS,
    desired_replicas,
    did_you_mean,
    distinct_runs,
    read_pods,
    running_replicas,
    workload_key,
)
from kubespread.plan.audit_reads import budgets as read_budgets
from kubespread.plan.audit_reads import skews as read_skews
from kubespread.plan.audit_reuse import BaseReading, Heard, read_base, reading_after
from kubespread.plan.results import (
    AuditResult,
    AuditSeconds,
    FailureRecord,
    Harm,
    PendingReason,
    Variant,
    VaryResult,
    WorkloadCount,
    WorkloadOutcome,
)
from kubespread.scheduler.config import default_profiles, profiles_from_config
from kubespread.scheduler.profile import Profile
from kubespread.sim.baseline import Baseline, SettleError, settle
from kubespread.sim.engine import Simulation
from kubespread.sim.placement import NoProfile, explain_key
from kubespread.sim.run import run_step, settled_from
from kubespread.sim.scenario import Step

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "DEFAULT_AFTER",
    "DEFAULT_DOMAINS",
    "VARY_KEYS",
    "AuditError",
    "AuditInput",
    "AuditRequest",
    "AuditResult",
    "Failure",
    "FailureRecord",
    "Variant",
    "VaryResult",
    "audit",
    "audit_settled",
    "failures_of",
    "parse_after",
    "parse_domains",
    "parse_vary",
    "patch_workloads",
    "run_audit",
    "run_failure",
    "vary_audit",
]

DEFAULT_DOMAINS: Final = (LABEL_ZONE, LABEL_HOSTNAME)
#: virtual seconds a failure lasts before the verdict (the default tolerationSeconds, 300 s,
#: plus time for the replacements)
DEFAULT_AFTER: Final = 600.0
#: one ``--vary`` combination: a pod-template spread-constraint field (or ``replicas``) and the
#: value every workload gets; a change set, not a result row (it is also ``Variant.changes``)
Changes = dict[str, int | str]
#: what ``vary`` may change, and how a value is read
VARY_KEYS: Final[dict[str, Callable[[str], int | str]]] = {}


class AuditError(Exception):
    """The audit cannot run as asked (one line, for the user)."""


# ------------------------------------------------------------------ failures


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure domain: the nodes carrying ``key=value``, all failed at once."""

    key: str
    value: str
    nodes: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.key}={self.value}"


def failures_of(sim: Simulation, keys: Sequence[str], *, limit: int | None = None) -> list[Failure]:
    """Every domain of each key (the first ``limit`` per key, by value), in key order. A key
    no node carries is an AuditError."""
    nodes = sim.cluster.nodes
    if not nodes:
        raise AuditError("the cluster has no nodes: there is nothing to fail")
    out: list[Failure] = []
    for key in keys:
        domains: dict[str, list[str]] = {}
        for name in sorted(nodes):
            value = nodes[name].metadata.labels.get(key)
            if value is not None:
                domains.setdefault(value, []).append(name)
        if not domains:
            raise AuditError(f"--domains: no node carries the label {key!r}{did_you_mean(key, nodes)}")
        values = sorted(domains)[:limit] if limit is not None else sorted(domains)
        out += [Failure(key, v, tuple(domains[v])) for v in values]
    return out


# ------------------------------------------------------------------ the base, per process


@dataclass(frozen=True)
class AuditInput:
    """What every run starts from, picklable (sent once to a Dask cluster): the settled
    cluster's dump, the scheduler configuration and the seed. ``token`` names the base a
    process builds from it."""

    dump: tuple[KubeObject, ...]
    config: KubeSchedulerConfiguration | None = None
    seed: int = 0
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: the Kubernetes version every run answers as (None: 1.35)
    features: FeatureGates | None = None


@dataclass(frozen=True)
class _Base:
    """A process's base simulation and what every run reads of it before failing anything:
    the same in every fork, so read once (in the parent, before forking) rather than per run.
    ``before``: running replicas per workload; ``owners``: every pod's workload (a pod's owner
    never changes during a run: a run only reads new pods' owners); ``reading``: the record's
    reading of the base, which a run reuses for the workloads it leaves alone."""

    sim: Simulation
    before: dict[str, int]
    owners: dict[str, str | None]
    reading: BaseReading


_BASES: dict[str, _Base] = {}
_BASES_LOCK = threading.Lock()


def _base_facts(sim: Simulation) -> _Base:
    owners = {key: workload_key(sim, pod) for key, pod in sim.cluster.pods.items()}
    reading = read_base(sim, owners)
    # the running replicas the reading counted (a run reads them of the workloads it reports)
    return _Base(sim, dict(reading.pods.running), owners, reading)


def build_base(inp: AuditInput) -> Simulation:
    """What ``kubespread simulate`` builds from the dump (same code, same seed; a Simulation's
    cycles are untimed)."""
    profiles = profiles_of(inp.config, inp.features)
    return settled_from(inp.dump, profiles=profiles, seed=inp.seed, name="audit")


def profiles_of(
    config: KubeSchedulerConfiguration | None, features: FeatureGates | None
) -> dict[str, Profile] | None:
    """The profiles a run rebuilds: the configuration's, or the default ones, as ``features``'
    version (None and no configuration: the simulation's own defaults, v1.35's)."""
    if config is not None:
        return profiles_from_config(config, features=features)
    return default_profiles(features=features) if features is not None else None


def base_of(inp: AuditInput) -> Simulation:
    """This process's base for ``inp``, built on first use; never run itself (runs fork).
    One base is kept per process (a long-lived Dask worker audits one cluster after another)."""
    return _base_of(inp).sim


def _base_of(inp: AuditInput) -> _Base:
    with _BASES_LOCK:
        base = _BASES.get(inp.token)
        if base is None:
            _BASES.clear()
            # the collector paused: a Dask helper's input was just unpickled (paused too), young
            # objects that the build's first collections would walk again, to find nothing
            # (1,000 nodes: 0.5-0.8 s to build, 0.3 s paused, as from the dump's own objects);
            # in a command's process what it made is frozen after (gc_paused)
            with gc_paused():
                base = _BASES[inp.token] = _base_facts(build_base(inp))
        return base


def _record_of(base: _Base, failure: Failure, after: float) -> FailureRecord:
    return failure_record(
        base.sim, failure, after, before=base.before, owners=base.owners, reading=base.reading
    )


def run_failure(inp: AuditInput, failure: Failure, after: float, copy: str = "fork") -> FailureRecord:
    """One failure's record (see the module notes), from a pristine copy of the base:
    ``copy="fork"`` forks this process's base, ``"rebuild"`` builds a new one from the dump."""
    if copy == "rebuild":
        return failure_record(build_base(inp), failure, after)
    try:
        return forked(_record_of, _base_of(inp), failure, after)  # type: ignore[no-any-return]
    except ForkError as e:
        raise AuditError(f"a failure run {e}") from None


def _fork_all(
    base: _Base,
    failures: Sequence[Failure],
    after: float,
    processes: int,
    finished: Callable[[], None],
) -> list[FailureRecord]:
    """Every failure's record, each run in a child forked from this process (it inherits the
    base: nothing is sent to it), the costliest first (most pods on the failed nodes: a zone
    before a node, so that the last runs are short ones). At most ``processes`` run at once,
    or all of them when there are fewer than twice as many: three zone runs of equal length
    on two cores take two rounds one by one, but one and a half run at once (the kernel
    shares the cores among them; each child's memory grows only by what its run changes).
    The children send back their records, pickled, through pipes read as they come."""
    if len(failures) < 2 * processes:
        processes = len(failures)
    order = costliest_first(base.sim, failures)
    calls = [(_record_of, (base, failures[i], after)) for i in order]
    try:
        records = fork_each(calls, processes, finished)
    except ForkError as e:
        raise AuditError(f"a failure run {e}") from None
    out: list[FailureRecord] = [records[0]] * len(failures)
    for i, record in zip(order, records, strict=True):
        out[i] = record
    return out


def costliest_first(sim: Simulation, failures: Sequence[Failure]) -> list[int]:
    """The indexes of ``failures``, the costliest run first: the most pods on the failed nodes
    (a zone before a node), ties in the order given. What a run costs grows with the pods it
    evicts and places again; starting the long runs first keeps the last round short."""
    cost: dict[str, int] = {}
    for pod in sim.cluster.pods.values():
        if pod.spec.node_name:
            cost[pod.spec.node_name] = cost.get(pod.spec.node_name, 0) + 1
    return sorted(range(len(failures)), key=lambda i: -sum(cost.get(n, 0) for n in failures[i].nodes))


# ------------------------------------------------------------------ one run


def _hints(sim: Simulation, key: str) -> tuple[str, ...]:
    try:
        return tuple(explain_key(sim, key).hints)
    except (NoProfile, KeyError):
        return ()


def failure_record(
    sim: Simulation,
    failure: Failure,
    after: float,
    *,
    before: Mapping[str, int] | None = None,
    owners: Mapping[str, str | None] | None = None,
    reading: BaseReading | None = None,
) -> FailureRecord:
    """Fail ``failure``'s nodes on ``sim`` (changed in place), advance ``after`` seconds, and
    read the record (the JSON's ``failures[]`` entry, rank left out). ``before`` (the running
    replicas now) and ``owners`` (pod key → workload key) when the caller read them already
    (every fork of one base shares them); with ``reading`` (``sim``'s, before the run) only
    the workloads the run may have changed are read again (``plan.audit_reuse``)."""
    started = sim.now
    first_event = len(sim.events)
    if before is None:
        before = running_replicas(sim, owners)
    owners = dict(owners or {})
    steps = [Step(i, "node", {"name": n, "action": "fail"}) for i, n in enumerate(failure.nodes)]
    steps.append(Step(len(steps), "advance", seconds=after))
    heard = Heard(sim.cluster) if reading is not None else None
    try:
        for step in steps:
            run_step(sim, step)
    finally:
        if heard is not None:
            heard.stop()
    desired = desired_replicas(sim)
    bound_at: dict[str, float] = {}
    for e in sim.events[first_event:]:
        if e.reason == "Scheduled" and e.kind == "Pod":
            bound_at[f"{e.namespace or 'default'}/{e.name}"] = e.time - started
    found = None
    if reading is not None and heard is not None:
        found = reading_after(reading, heard, sim, desired, owners, bound_at)
    if found is None:  # every workload read
        found = (
            read_pods(sim, sorted(sim.cluster.pods), owners, desired, bound_at),
            read_skews(sim, set(desired), owners),
        )
    pods, skews = found
    running = {wl: pods.running.get(wl, 0) for wl in desired}
    recovered_at = {wl: pods.recovered_at.get(wl, 0.0) for wl in desired}
    pending, budgets_of = pods.pending, pods.budgets_of
    budgets = read_budgets(sim)
    workloads: list[WorkloadOutcome] = []
    for wl, want in desired.items():
        have = running[wl]
        whole = have >= min(want, before.get(wl, 0))  # desired, or as many as before when short already
        reasons = tuple(
            PendingReason(message, tuple(pods), _hints(sim, pods[0]))
            for message, pods in sorted(pending.get(wl, {}).items())
        )
        workloads.append(
            WorkloadOutcome(
                owner=wl,
                desired=want,
                running_before=before.get(wl, 0),
                running=have,
                unavailable=max(want - have, 0),
                lost=max(min(want, before.get(wl, 0)) - have, 0),
                pending=sum(len(r.pods) for r in reasons),
                pending_reasons=reasons,
                pdbs_broken=tuple(sorted(b for b in budgets_of.get(wl, ()) if budgets[b].broken)),
                recovery_seconds=recovered_at[wl] if whole else None,
                skew=tuple(skews.get(wl, [])),
            )
        )
    broken = tuple(b for b in budgets.values() if b.broken)
    harm = Harm(
        lost=sum(w.lost for w in workloads),
        unavailable=sum(w.unavailable for w in workloads),
        pending=sum(w.pending for w in workloads),
        pdbs_broken=len(broken),
        unrecovered=sum(1 for w in workloads if w.recovery_seconds is None),
    )
    return FailureRecord(
        domain=failure.name,
        key=failure.key,
        value=failure.value,
        nodes=failure.nodes,
        harm=harm,
        pdbs_broken=broken,
        workloads=tuple(workloads),
    )


def _harm_order(record: FailureRecord, keys: Sequence[str]) -> tuple[Any, ...]:
    """Most harm first; ties in the order of the keys given, then by value."""
    h = record.harm
    return (
        -h.lost,
        -h.unavailable,
        -h.pending,
        -h.pdbs_broken,
        -h.unrecovered,
        keys.index(record.key),
        record.value,
    )


# ------------------------------------------------------------------ the audit


def _run_all(
    inp: AuditInput,
    failures: Sequence[Failure],
    after: float,
    *,
    processes: int,
    client: Any = None,
    copy: str = "fork",
    order: Sequence[int] = (),
    on_done: Callable[[int, int], None] | None = None,
) -> list[FailureRecord]:
    """Every failure's record, in the order of ``failures``; ``on_done(done, total)`` after
    each one finishes (in any order). ``order``: the failures' indexes, costliest first (for
    a Dask cluster; local forks work it out from the base)."""
    n = len(failures)
    done = 0

    def finished() -> None:
        nonlocal done
        done += 1
        if on_done is not None:
            on_done(done, n)

    if client is not None:
        from kubespread.plan.audit_dask import run_on_dask

        calls = [(f, after, copy) for f in failures]
        try:
            return run_on_dask(client, run_failure, inp, inp.token, calls, order, finished)
        except ForkError as e:
            raise AuditError(f"a failure run {e}") from None
    if copy == "fork":  # built here, before the children fork: they inherit it
        return _fork_all(_base_of(inp), failures, after, max(processes, 1), finished)
    if processes <= 1 or n <= 1:
        records = []
        for f in failures:
            records.append(run_failure(inp, f, after, copy))
            finished()
        return records
    from concurrent.futures import ProcessPoolExecutor  # only here: it imports logging, multiprocessing
    from concurrent.futures import as_completed as completed

    with ProcessPoolExecutor(max_workers=min(processes, n)) as pool:
        jobs = [pool.submit(run_failure, inp, f, after, copy) for f in failures]
        for _ in completed(jobs):
            finished()
        return [job.result() for job in jobs]


def audit_settled(
    settled: Baseline | Simulation,
    *,
    domains: Sequence[str] = DEFAULT_DOMAINS,
    after: float = DEFAULT_AFTER,
    config: KubeSchedulerConfiguration | None = None,
    seed: int | None = None,
    limit: int | None = None,
    processes: int = 1,
    client: Any = None,
    copy: str = "fork",
    on_done: Callable[[int, int], None] | None = None,
) -> AuditResult:
    """Audit the settled cluster (a Baseline, or the Simulation ``place`` left): the ``-o
    json`` document (``domains``, ``after``, ``workloads`` with desired/running before,
    ``failures`` ranked by harm, ``seconds``: the failure runs' and the whole audit's wall
    time). ``config``: the scheduler configuration it runs (its profiles are rebuilt from it
    in every process). ``seed``: the runs' (default: the Baseline's, else 0). ``copy``: how
    each run gets a pristine base, ``fork`` (the default) or ``rebuild``; either way from a
    dump of the settled cluster, which crosses process and machine boundaries."""
    if isinstance(settled, Baseline):
        sim, seed = settled.sim, settled.seed if seed is None else seed
    else:
        sim, seed = settled, 0 if seed is None else seed
    if after <= 0:
        raise AuditError(f"--after must be more than 0 seconds, got {after:g}")
    if copy == "fork" and not hasattr(os, "fork"):  # Windows: no fork, each run rebuilds
        copy = "rebuild"
    started = time.perf_counter()
    inp = AuditInput(tuple(cluster_objects(sim.cluster)), config, seed, features=sim.features)
    # the failures from the settled cluster's nodes: the base's, rebuilt from their dump; the
    # base itself is built here only when the runs fork from this process
    failures = failures_of(sim, domains, limit=limit)
    if copy == "fork" and client is None:
        _base_of(inp)
    ran = time.perf_counter()
    firsts, which = distinct_runs([f.nodes for f in failures])
    runs = [failures[i] for i in firsts]  # one run per distinct set of nodes
    made = _run_all(
        inp,
        runs,
        after,
        processes=processes,
        client=client,
        copy=copy,
        order=costliest_first(sim, runs),
        on_done=on_done,
    )
    records = [
        replace(made[j], domain=f.name, key=f.key, value=f.value)
        for f, j in zip(failures, which, strict=True)
    ]
    ran = time.perf_counter() - ran
    records.sort(key=lambda r: _harm_order(r, domains))
    ranked = tuple(replace(record, rank=rank) for rank, record in enumerate(records, 1))
    with _BASES_LOCK:
        _BASES.pop(inp.token, None)
    return AuditResult(
        domains=tuple(domains),
        after=after,
        seed=seed,
        workloads=_workload_counts(records),
        failures=ranked,
        seconds=AuditSeconds(round(ran, 2), round(time.perf_counter() - started, 2)),
    )


def _workload_counts(records: Sequence[FailureRecord]) -> tuple[WorkloadCount, ...]:
    """Every workload's desired and running replicas before the failures, as each record
    lists them (read from the base in every run: the parent need not build it)."""
    if not records:
        return ()
    return tuple(WorkloadCount(w.owner, w.desired, w.running_before) for w in records[0].workloads)


def audit(
    objects: Sequence[LoadedObject],
    *,
    config: KubeSchedulerConfiguration | None = None,
    seed: int = 0,
    features: FeatureGates | None = None,
    **options: Any,
) -> AuditResult:
    """Settle ``objects`` as ``schedule`` does (:func:`kubespread.sim.baseline.settle`), as
    ``features``' version, then :func:`audit_settled`. SettleError when the input does not
    make a cluster."""
    baseline = settle(objects, profiles=profiles_of(config, features), seed=seed, features=features)
    return audit_settled(baseline, config=config, seed=seed, **options)


# ------------------------------------------------------------------ what-ifs


def _int_at_least(low: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        value = int(text)
        if value < low:
            raise ValueError(f"must be at least {low}")
        return value

    return read


def _one_of(*allowed: str) -> Callable[[str], str]:
    def read(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return text

    return read


VARY_KEYS.update(
    {
        "maxSkew": _int_at_least(1),
        "whenUnsatisfiable": _one_of(DO_NOT_SCHEDULE, SCHEDULE_ANYWAY),
        "nodeTaintsPolicy": _one_of(HONOR, IGNORE),
        "nodeAffinityPolicy": _one_of(HONOR, IGNORE),
        "minDomains": _int_at_least(1),
        "replicas": _int_at_least(0),
    }
)


def parse_vary(specs: Iterable[str]) -> list[Changes]:
    """``["maxSkew=1,2", "nodeTaintsPolicy=Honor,Ignore"]`` → every combination, in order
    (``[{}]`` for none). AuditError names the bad part."""
    axes: dict[str, list[int | str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip()
        if not sep or not values.strip():
            raise AuditError(f"--vary {spec!r}: expected KEY=VALUE[,VALUE...]")
        read = VARY_KEYS.get(key)
        if read is None:
            raise AuditError(f"--vary {spec!r}: unknown key {key!r} (one of {', '.join(VARY_KEYS)})")
        try:
            parsed = [read(v.strip()) for v in values.split(",")]
        except ValueError as e:
            raise AuditError(f"--vary {spec!r}: {e}") from None
        axes.setdefault(key, [])
        axes[key] += [v for v in parsed if v not in axes[key]]
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]


def patch_workloads(objects: Sequence[LoadedObject], changes: Mapping[str, Any]) -> list[LoadedObject]:
    """The input with ``changes`` applied to every workload no controller owns (Deployment,
    StatefulSet, ReplicaSet): ``replicas`` to spec.replicas, the others to each spread
    constraint of its pod template."""
    if not changes:
        return list(objects)
    out = []
    for lo in objects:
        obj = lo.obj
        if obj.kind not in WORKLOAD_KINDS or obj.metadata.controller_ref() is not None:
            out.append(lo)
            continue
        data = obj.to_dict()
        spec = data.setdefault("spec", {})
        for key, value in changes.items():
            if key == "replicas":
                spec["replicas"] = value
                continue
            pod_spec = spec.get("template", {}).get("spec", {})
            for c in pod_spec.get("topologySpreadConstraints") or []:
                c[key] = value
        out.append(LoadedObject(type(obj).from_dict(data), lo.source, lo.line))
    return out


def _variant_summary(changes: Mapping[str, Any], doc: AuditResult) -> Variant:
    first_key = doc.domains[0]
    records = [r for r in doc.failures if r.key == first_key]
    return Variant(
        changes=dict(changes),
        survives=all(r.harm.unrecovered == 0 for r in records),
        failed=sum(1 for r in records if r.harm.unrecovered),
        pending=sum(r.harm.pending for r in records),
        unavailable=sum(r.harm.unavailable for r in records),
        audit=doc,
    )


def _variant_order(v: Variant) -> tuple[Any, ...]:
    if v.error is not None:
        return (2, 0, 0)
    return (0 if v.survives else 1, v.pending, v.unavailable)


def vary_audit(
    objects: Sequence[LoadedObject],
    grid: Sequence[Mapping[str, Any]],
    *,
    config: KubeSchedulerConfiguration | None = None,
    seed: int = 0,
    on_variant: Callable[[int, int, Mapping[str, Any]], None] | None = None,
    **options: Any,
) -> VaryResult:
    """Audit each combination of ``grid`` (see the module notes), ranked; a combination the
    API server refuses is kept with its ``error``."""
    variants = []
    for i, changes in enumerate(grid):
        if on_variant is not None:
            on_variant(i, len(grid), changes)
        try:
            doc = audit(patch_workloads(objects, changes), config=config, seed=seed, **options)
        except SettleError as e:
            variants.append(Variant(changes=dict(changes), survives=False, error="; ".join(e.problems)))
            continue
        variants.append(_variant_summary(changes, doc))
    variants.sort(key=_variant_order)
    ranked = tuple(replace(v, rank=rank) for rank, v in enumerate(variants, 1))
    best = next((v.changes for v in ranked if v.error is None), None)
    return VaryResult(
        domains=tuple(options.get("domains", DEFAULT_DOMAINS)),
        after=options.get("after", DEFAULT_AFTER),
        variants=ranked,
        best=best,
    )


# ------------------------------------------------------------------ the command


def parse_domains(value: str) -> tuple[str, ...]:
    """``--domains``: comma-separated node label keys, in order, each once."""
    keys = [k.strip() for k in value.split(",") if k.strip()]
    if not keys:
        raise AuditError("--domains: give at least one node label key")
    return tuple(dict.fromkeys(keys))


def parse_after(value: str) -> float:
    """``--after``: a duration (``10m``, ``600s``) of more than 0 seconds, in seconds."""
    from kubespread.api.duration import parse_duration

    seconds = parse_duration(value)
    if seconds is None:
        raise AuditError(f"--after: must be a duration such as 10m or 600s, got {value!r}")
    if seconds <= 0:
        raise AuditError(f"--after: must be more than 0 seconds, got {value!r}")
    return seconds


@dataclass(frozen=True)
class AuditRequest:
    """What ``kubespread audit`` runs: the settled cluster (``settled``), or, with a ``grid``
    of what-ifs (:func:`parse_vary`), the input ``objects`` each combination patches and
    settles; the failure domains' keys, how long each failure lasts, at most ``limit``
    domains per key; the scheduler configuration every run rebuilds its profiles from; the
    seed; ``processes`` local workers, or the Dask scheduler at ``cluster`` (an address);
    ``on_done(done, total)`` after each failure run."""

    settled: Baseline | None = None
    objects: Sequence[LoadedObject] = ()
    grid: Sequence[Changes] = ()
    domains: Sequence[str] = DEFAULT_DOMAINS
    after: float = DEFAULT_AFTER
    limit: int | None = None
    config: KubeSchedulerConfiguration | None = None
    seed: int = 0
    processes: int = 1
    cluster: str | None = None
    on_done: Callable[[int, int], None] | None = None
    #: the Kubernetes version the what-ifs settle as (a settled cluster carries its own)
    features: FeatureGates | None = None


def dask_client(address: str) -> Client:
    """A Dask ``distributed.Client`` connected to ``address``; AuditError when Dask is not
    installed or the scheduler does not answer (the extra is optional)."""
    try:
        from distributed import Client
    except ImportError:
        raise AuditError("--cluster needs Dask distributed: pip install 'kubespread[audit-dask]'") from None
    try:
        return Client(address, timeout=30)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as e:
        raise AuditError(f"--cluster {address}: cannot connect: {e}") from None


def run_audit(request: AuditRequest) -> AuditResult | VaryResult:
    """``kubespread audit``: every failure of the settled cluster ranked by harm
    (:func:`audit_settled`), or with a ``grid`` every combination audited and ranked
    (:func:`vary_audit`). AuditError when it cannot run as asked; with a grid, a combination
    the API server refuses is a Variant with its error, and input that does not settle at
    all is SettleError only through :func:`audit`."""
    if request.grid and not request.objects:
        raise AuditError("--vary needs the input objects: each combination patches and settles them")
    if not request.grid and request.settled is None:
        raise AuditError("nothing to audit: give the settled cluster")
    client = None if request.cluster is None else dask_client(request.cluster)
    options: dict[str, Any] = {
        "domains": list(request.domains),
        "after": request.after,
        "limit": request.limit,
        "processes": request.processes,
        "client": client,
        "on_done": request.on_done,
    }
    try:
        if request.grid:
            return vary_audit(
                request.objects,
                request.grid,
                config=request.config,
                seed=request.seed,
                features=request.features,
                **options,
            )
        assert request.settled is not None
        return audit_settled(request.settled, config=request.config, seed=request.seed, **options)
    finally:
        if client is not None:
            client.close()  # type: ignore[no-untyped-call]
