"""``kubespread check``: a release gate for changed manifests, on a settled cluster.

The cluster is settled as ``schedule`` settles it (:func:`kubespread.sim.baseline.settle`).
Every changed object is then applied in order through the simulated API server, the cluster
settling after each (``sim.run``'s ``apply`` step, the one home of create-or-update): an
object the cluster lacks is created, one it has (same kind, namespace and name) is updated,
which rolls a Deployment or StatefulSet whose template differs. The checks read the result:

- **admission**: every change is accepted as kube-apiserver would accept it (validation's
  field errors located at their own line; admission plugins' refusals at the object's);
- **placement**: every pod of every changed workload is bound (no pending pod, no failed
  create), each DoNotSchedule spread constraint within maxSkew (ScheduleAnyway: a warning);
- **rollout**: each updated Deployment/StatefulSet whose template changed rolls to completion
  (given the policy's timeout of virtual time), or the deadlock is described; then the
  (maxSurge, maxUnavailable) pairs are tried, each by its own simulation from the cluster as
  it was before the change, and the first that completes with every DoNotSchedule constraint
  kept is suggested;
- **failureSurvival**: every value of a node label (the zone) is lost in turn on copies of the
  changed cluster (``plan.audit``'s engine); each PodDisruptionBudget must still hold after
  the pods reschedule (and each changed workload its policy's minimum share); replicas left
  pending are warnings;
- **capacity** (when the policy asks): at least N more replicas of each changed workload's
  pod still fit (``plan.capacity.greedy``).

The result is one :class:`Case` per check and object (what a JUnit report lists) with its
typed :class:`Finding` s. A finding of severity ``error`` fails the gate; a ``warning`` fails
it only when strict.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from kubespread.admission.apiserver import creation_errors
from kubespread.api.apps import (
    Deployment,
    DeploymentStrategy,
    Job,
    ReplicaSet,
    RollingUpdateDeployment,
    StatefulSet,
)
from kubespread.api.core import DO_NOT_SCHEDULE, Pod
from kubespread.api.kruise import CloneSet
from kubespread.api.meta import KubeObject
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.schedconfig import KubeSchedulerConfiguration
from kubespread.cluster.errors import SimulationError
from kubespread.cluster.workloads import WorkloadRef, ownership
from kubespread.controllers.deployment import ANNOTATION_REVISION, resolve_fenceposts
from kubespread.io.loader import LoadedObject, describe_ref
from kubespread.plan.audit import AuditError, audit_settled
from kubespread.plan.capacity import greedy
from kubespread.plan.findings import (
    ADMISSION,
    CAPACITY,
    CHECKS,
    ERROR,
    FAILURE,
    PLACEMENT,
    ROLLOUT,
    WARNING,
    Case,
    CheckResult,
    Finding,
    Suggestion,
)
from kubespread.plan.policy import CheckPolicy
from kubespread.plan.workloads import unbound
from kubespread.scheduler.config import profiles_from_config
from kubespread.scheduler.views import spread_rows
from kubespread.sim.baseline import Baseline, SettleError, settle
from kubespread.sim.engine import DEFAULT_MAX_PODS, Simulation
from kubespread.sim.run import StepError, run_step
from kubespread.sim.scenario import Step, pod_limit_problems

__all__ = [
    "ADMISSION",
    "CAPACITY",
    "CHECKS",
    "ERROR",
    "FAILURE",
    "PLACEMENT",
    "ROLLOUT",
    "WARNING",
    "Case",
    "CheckError",
    "CheckRequest",
    "CheckResult",
    "Finding",
    "Suggestion",
    "check",
    "short_reason",
]

#: the kinds whose pods the placement check follows
_WORKLOAD_KINDS: Final = (
    Deployment.KIND,
    StatefulSet.KIND,
    ReplicaSet.KIND,
    Job.KIND,
    CloneSet.KIND,
    Pod.KIND,
)
#: the kinds that roll out a new template on update
_ROLLING_KINDS: Final = (Deployment.KIND, StatefulSet.KIND)
#: the largest maxSurge / maxUnavailable the strategy search tries
_SEARCH_UP_TO: Final = 4


class CheckError(Exception):
    """The check cannot run on this input (the cluster does not settle); ``problems`` are
    located messages, all of them."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# ------------------------------------------------------------------ the request


@dataclass(frozen=True)
class CheckRequest:
    """What to check: the ``cluster`` as it is (a dump, nodes, manifests) and the ``changes``
    to it, in order. ``domains`` and ``strict`` override the policy's when given.
    ``config``: the scheduler's (v1.35's defaults when None)."""

    cluster: tuple[LoadedObject, ...]
    changes: tuple[LoadedObject, ...]
    policy: CheckPolicy = field(default_factory=CheckPolicy)
    config: KubeSchedulerConfiguration | None = None
    domains: str | None = None
    strict: bool | None = None
    seed: int = 0
    max_pods: int | None = DEFAULT_MAX_PODS

    @property
    def failure_domains(self) -> str:
        return self.domains or self.policy.failure.domains

    @property
    def is_strict(self) -> bool:
        return self.policy.strict if self.strict is None else self.strict


@dataclass
class _Change:
    """One changed object as applied: whether it updated an existing object, and whether the
    update rolled a new template out (the revision it moved to)."""

    index: int
    lo: LoadedObject
    update: bool
    applied: bool = False
    rollout: bool = False

    @property
    def obj(self) -> KubeObject:
        return self.lo.obj

    @property
    def ref(self) -> str:
        return self.lo.ref

    def finding(self, check: str, message: str, *, at: str | None = None, **kw: Any) -> Finding:
        return Finding(
            check, kw.pop("severity", ERROR), self.ref, self.lo.source, self.lo.line_of(at), message, **kw
        )


Progress = Callable[[str], None]


def check(request: CheckRequest, *, on_progress: Progress | None = None) -> CheckResult:
    """Run every check the policy enables (see the module notes). CheckError when the cluster
    does not settle."""
    started = time.perf_counter()
    say = on_progress or (lambda _what: None)
    policy = request.policy
    profiles = profiles_from_config(request.config) if request.config is not None else None
    too_many = pod_limit_problems(list(request.changes), request.max_pods)
    if too_many:  # refused before anything runs, as settle refuses a new object's
        raise CheckError(too_many)
    say("settling the cluster")
    try:
        base = settle(request.cluster, profiles=profiles, seed=request.seed, max_pods=request.max_pods)
    except SettleError as e:
        raise CheckError(e.problems) from None
    # the changes are applied to ``base`` itself: a rollout's trials fork it, and a fork
    # settles the cluster's objects afresh, so they start from the cluster before the changes
    after = base
    changes = [
        _Change(i, lo, after.cluster.get(lo.obj.KIND, lo.obj.key) is not None)
        for i, lo in enumerate(request.changes)
    ]
    cases: list[Case] = []
    rollout_cases: list[Case] = []
    for change in changes:
        say(f"applying {change.ref}")
        admission = _apply_change(after.sim, change)
        if policy.admission:
            cases.append(_case(ADMISSION, change, admission))
        if policy.rollout.enabled and change.rollout:
            say(f"rolling out {change.ref}")
            rollout_cases.append(_case(ROLLOUT, change, _rollout(base, after.sim, changes, change, policy)))
    workloads = [c for c in changes if c.applied and c.obj.KIND in _WORKLOAD_KINDS]
    if policy.placement.enabled:
        cases += [_case(PLACEMENT, c, _placement(after.sim, c, policy)) for c in workloads]
    cases += rollout_cases
    if policy.failure.enabled:
        say(f"losing each {request.failure_domains} in turn")
        cases += _failure_survival(after.sim, request, changes, workloads)
    if policy.capacity.enabled:
        cases += [
            _case(CAPACITY, c, _capacity(after, c, policy.capacity.min_spare_replicas)) for c in workloads
        ]
    return CheckResult(
        tuple(cases), request.is_strict, request.failure_domains, round(time.perf_counter() - started, 2)
    )


def _case(check_name: str, change: _Change, findings: Sequence[Finding]) -> Case:
    return Case(check_name, change.ref, change.lo.source, change.lo.line, tuple(findings))


# ------------------------------------------------------------------ applying, admission


def _revision(obj: KubeObject | None) -> str | None:
    """The template revision a rolling workload is at: a Deployment's revision annotation, a
    StatefulSet's update revision."""
    if isinstance(obj, Deployment):
        return obj.metadata.annotations.get(ANNOTATION_REVISION)
    if isinstance(obj, StatefulSet) and isinstance(obj.status, Mapping):
        value = obj.status.get("updateRevision")
        return None if value is None else str(value)
    return None


def _apply_change(sim: Simulation, change: _Change) -> list[Finding]:
    """Apply ``change`` (create or update) and let the cluster settle; the admission findings:
    field errors at their lines (nothing applied), else the API server's refusal."""
    obj = change.obj
    errors = creation_errors(obj)
    if errors:
        return [change.finding(ADMISSION, str(fe), at=fe.field or None) for fe in errors]
    before = _revision(sim.cluster.get(obj.KIND, obj.key))
    try:
        refused = run_step(sim, Step(change.index, "apply", objects=[obj.copy()]))
    except (StepError, SimulationError) as e:
        return [change.finding(ADMISSION, str(e))]
    if refused:
        return [change.finding(ADMISSION, r.message) for r in refused]
    change.applied = True
    if change.update and obj.KIND in _ROLLING_KINDS:
        change.rollout = _revision(sim.cluster.get(obj.KIND, obj.key)) != before
    return []


# ------------------------------------------------------------------ placement


def _workload_ref(obj: KubeObject) -> WorkloadRef:
    return WorkloadRef(obj.namespace, obj.KIND, obj.metadata.name)


def _pods_of(sim: Simulation, ref: WorkloadRef) -> list[Pod]:
    """The live pods of a workload (by top owner), a bare pod being its own."""
    out = []
    for key, pod in sorted(sim.cluster.pods.items()):
        if pod.is_terminating or pod.is_finished:
            continue
        if ref.kind == Pod.KIND:
            if key == f"{ref.namespace}/{ref.name}":
                out.append(pod)
        elif ownership(sim.cluster, pod).top == ref:
            out.append(pod)
    return out


def _failed_creates(sim: Simulation, ref: WorkloadRef) -> list[str]:
    """The FailedCreate messages of the workload or of the controllers under it (its
    ReplicaSets), once each."""
    messages: dict[str, None] = {}
    for e in sim.events:
        if e.reason != "FailedCreate" or (e.namespace or "default") != ref.namespace:
            continue
        if e.kind == ref.kind and e.name == ref.name:
            messages[e.message] = None
            continue
        obj = sim.cluster.get(e.kind, f"{ref.namespace}/{e.name}")
        if obj is not None and ownership(sim.cluster, obj).top == ref:
            messages[e.message] = None
    return list(messages)


#: where kube-scheduler's FitError goes on to say what preemption and DRA found: the gate
#: quotes the filters' verdict only (``explain`` shows the rest)
_FIT_TAIL: Final = (" no new claims to deallocate", " preemption:")


def short_reason(message: str) -> str:
    """kube-scheduler's FitError cut to the filters' verdict (``0/6 nodes are available: 6
    node(s) didn't match pod anti-affinity rules``)."""
    cut = min((i for t in _FIT_TAIL if (i := message.find(t)) >= 0), default=len(message))
    return message[:cut].rstrip(" .,")


def _pending_reason(sim: Simulation, pod: Pod) -> str:
    message = sim.pending_reasons.get(pod.key, "")
    return (
        short_reason(message) if message else "not tried by any scheduler (gated, or no such schedulerName)"
    )


def _pending_groups(sim: Simulation, pods: Sequence[Pod]) -> dict[str, list[str]]:
    """Unbound pods by the scheduler's last message."""
    groups: dict[str, list[str]] = {}
    for pod in pods:
        if not pod.spec.node_name:
            groups.setdefault(_pending_reason(sim, pod), []).append(pod.key)
    return groups


def _placement(sim: Simulation, change: _Change, policy: CheckPolicy) -> list[Finding]:
    ref = _workload_ref(change.obj)
    pods = _pods_of(sim, ref)
    found = [
        change.finding(PLACEMENT, f"cannot create pods: {message}", at="spec.template")
        for message in _failed_creates(sim, ref)
    ]
    for message, keys in _pending_groups(sim, pods).items():
        names = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
        found.append(
            change.finding(PLACEMENT, f"{len(keys)} of {len(pods)} pod(s) pending ({names}): {message}")
        )
    if not pods and not found and ref.kind != Pod.KIND and _desired(change.obj) > 0:
        found.append(change.finding(PLACEMENT, "no pod was created", at="spec.template"))
    ignore_anyway = policy.placement.schedule_anyway == "ignore"
    seen: set[tuple[str, str, int]] = set()
    for row in spread_rows(sim.cluster, sim.profiles, pods):
        view = row.view
        if view is None or view.within:
            continue
        c = view.constraint
        hard = view.when_unsatisfiable == DO_NOT_SCHEDULE
        if not hard and ignore_anyway:
            continue
        mark = (c.topology_key, view.when_unsatisfiable, c.max_skew)
        if mark in seen:  # one finding per constraint, not per ReplicaSet of a rollout
            continue
        seen.add(mark)
        domains = ", ".join(f"{d}={n}" for d, n in sorted(view.domains.items()))
        found.append(
            change.finding(
                PLACEMENT,
                f"spread over {c.topology_key} has skew {view.skew} > maxSkew {c.max_skew} "
                f"({view.when_unsatisfiable}; {domains})",
                at="spec.template.spec.topologySpreadConstraints",
                severity=ERROR if hard else WARNING,
            )
        )
    return found


def _desired(obj: KubeObject) -> int:
    if isinstance(obj, Job):
        return 1 if obj.spec.parallelism is None else obj.spec.parallelism
    replicas = getattr(getattr(obj, "spec", None), "replicas", None)
    return 1 if replicas is None else int(replicas)


# ------------------------------------------------------------------ rollout


@dataclass(frozen=True, slots=True)
class _Rollout:
    """How a rollout ended: ``complete``, else why it is stuck; the virtual seconds it ran."""

    complete: bool
    seconds: float
    stuck: str = ""


def _status(obj: KubeObject | None) -> Mapping[str, Any]:
    status = getattr(obj, "status", None)
    return status if isinstance(status, Mapping) else {}


def _is_complete(obj: KubeObject | None) -> bool:
    st = _status(obj)
    if isinstance(obj, Deployment):
        want = _desired(obj)
        return bool(
            st.get("updatedReplicas", 0) == want
            and st.get("replicas", 0) == want
            and st.get("availableReplicas", 0) == want
            and st.get("observedGeneration", 0) >= obj.metadata.generation
        )
    if isinstance(obj, StatefulSet):
        if _get(obj.spec.update_strategy, "type") == "OnDelete":
            return True  # its pods take the new template when someone deletes them
        want = _desired(obj)
        partition = int(_get(_get(obj.spec.update_strategy, "rollingUpdate"), "partition") or 0)
        return bool(
            st.get("replicas", 0) == want
            and st.get("readyReplicas", 0) == want
            and st.get("updatedReplicas", 0) >= want - partition
        )
    return True


def _get(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def _run_rollout(sim: Simulation, change: _Change, timeout: float, started: float) -> _Rollout:
    """The rollout ``change`` started (its update applied, the cluster quiet): complete now,
    or after ``timeout`` more virtual seconds, or stuck (why)."""
    obj = change.obj
    if not _is_complete(sim.cluster.get(obj.KIND, obj.key)):
        sim.advance(timeout)
    current = sim.cluster.get(obj.KIND, obj.key)
    if _is_complete(current):
        return _Rollout(True, _finished_at(sim, change, started) - started)
    return _Rollout(False, sim.now - started, _stuck(sim, current))


def _finished_at(sim: Simulation, change: _Change, started: float) -> float:
    """When the rollout's last pod was bound (the change's time when none was)."""
    ref = _workload_ref(change.obj)
    keys = {p.key for p in _pods_of(sim, ref)}
    times = [
        e.time
        for e in sim.events
        if e.reason == "Scheduled" and f"{e.namespace or 'default'}/{e.name}" in keys
    ]
    return max([started, *times])


def _stuck(sim: Simulation, obj: KubeObject | None) -> str:
    """Why a rollout does not move: the first new pod pending and the scheduler's reason, and
    why no old pod may go."""
    if obj is None:
        return "the workload is gone"
    ref = _workload_ref(obj)
    pods = _pods_of(sim, ref)
    want = _desired(obj)
    st = _status(obj)
    new = [p for p in pods if _is_new(sim, obj, p)]
    ready = sum(1 for p in new if p.spec.node_name)
    step = f"stuck at step {ready + 1} of {want}"
    pending = [p for p in new if not p.spec.node_name]
    if pending:
        head = f"{step}: new pod {pending[0].key} pending because {_pending_reason(sim, pending[0])}"
    else:
        failed = _failed_creates(sim, ref)
        head = f"{step}: no new pod can be created" + (f" ({failed[-1]})" if failed else "")
    if isinstance(obj, Deployment) and _recreates(obj):
        return f"{head}; Recreate took every old pod down first"
    if isinstance(obj, Deployment):
        _, unavailable = resolve_fenceposts(obj)
        available = int(st.get("availableReplicas", 0))
        if unavailable == 0:
            why = "old pods cannot go because maxUnavailable is 0"
        else:
            why = (
                f"old pods cannot go because {available} of {want} are available and maxUnavailable "
                f"{unavailable} keeps at least {want - unavailable}"
            )
        return f"{head}; {why}"
    return f"{head}; the StatefulSet waits for it before replacing the next pod"


def _recreates(obj: Deployment) -> bool:
    return obj.spec.strategy is not None and obj.spec.strategy.type == "Recreate"


def _is_new(sim: Simulation, obj: KubeObject, pod: Pod) -> bool:
    """Whether ``pod`` is of the workload's new template."""
    if isinstance(obj, Deployment):
        controller = ownership(sim.cluster, pod).controller
        rs = sim.cluster.get(ReplicaSet.KIND, f"{obj.namespace}/{controller.name}") if controller else None
        revision = obj.metadata.annotations.get(ANNOTATION_REVISION)
        return rs is not None and rs.metadata.annotations.get(ANNOTATION_REVISION) == revision
    update = _status(obj).get("updateRevision")
    return pod.metadata.labels.get("controller-revision-hash") == update


def _rollout(
    base: Baseline, sim: Simulation, changes: Sequence[_Change], change: _Change, policy: CheckPolicy
) -> list[Finding]:
    """The rollout ``change`` started on ``sim``: complete, or a finding saying where it is
    stuck, with the first strategy that completes (when the policy asks for the search)."""
    started = sim.now
    outcome = _run_rollout(sim, change, policy.rollout.timeout_seconds, started)
    if outcome.complete:
        return []
    suggestion = None
    # a Recreate rollout has no maxSurge/maxUnavailable to change
    search = policy.rollout.suggest and not (isinstance(change.obj, Deployment) and _recreates(change.obj))
    if search:
        suggestion = _search(base, changes, change, policy)
    message = f"rollout {outcome.stuck}"
    if suggestion is not None:
        message += f"; {suggestion.describe()} completes (simulated, {suggestion.seconds:g}s)"
    elif search:
        message += "; no maxSurge/maxUnavailable tried completes"
    return [change.finding(ROLLOUT, message, at="spec.strategy", suggestion=suggestion)]


def _candidates(obj: KubeObject) -> list[tuple[int | None, int]]:
    """(maxSurge, maxUnavailable) pairs to try, fewest unavailable first, then least surge;
    the workload's own strategy left out."""
    want = _desired(obj)
    top = min(max(want, 1), _SEARCH_UP_TO)
    if isinstance(obj, Deployment):
        own = resolve_fenceposts(obj)
        pairs: list[tuple[int | None, int]] = [
            (s, u) for u in range(top + 1) for s in range(top + 1) if (s, u) != (0, 0) and (s, u) != own
        ]
        return pairs
    own_u = _get(_get(getattr(obj, "spec", None), "update_strategy"), "rollingUpdate")
    current = _get(own_u, "maxUnavailable") or 1
    return [(None, u) for u in range(1, top + 1) if u != current]


def _with_strategy(obj: KubeObject, surge: int | None, unavailable: int) -> KubeObject:
    new = obj.copy()
    if isinstance(new, Deployment):
        new.spec.strategy = DeploymentStrategy(
            type="RollingUpdate",
            rolling_update=RollingUpdateDeployment(max_unavailable=unavailable, max_surge=surge),
        )
    elif isinstance(new, StatefulSet):
        strategy = (
            dict(new.spec.update_strategy or {}) if isinstance(new.spec.update_strategy, Mapping) else {}
        )
        rolling = dict(strategy.get("rollingUpdate") or {})
        rolling["maxUnavailable"] = unavailable
        new.spec.update_strategy = {**strategy, "type": "RollingUpdate", "rollingUpdate": rolling}
    return new


def _search(
    base: Baseline, changes: Sequence[_Change], change: _Change, policy: CheckPolicy
) -> Suggestion | None:
    """The first strategy (``_candidates``' order) whose rollout completes with every
    DoNotSchedule constraint of the workload within maxSkew and no pod pending, each tried on
    a fresh copy of the cluster with the changes before this one applied."""
    trials = 0
    for surge, unavailable in _candidates(change.obj)[: policy.rollout.max_trials]:
        trials += 1
        sim = base.fork().sim
        trial = _with_strategy(change.obj, surge, unavailable)
        try:
            for earlier in changes[: change.index]:
                if earlier.applied:
                    run_step(sim, Step(earlier.index, "apply", objects=[earlier.obj.copy()]))
            started = sim.now
            if run_step(sim, Step(change.index, "apply", objects=[trial])):
                continue
            tried = replace(change, lo=replace(change.lo, obj=trial))
            outcome = _run_rollout(sim, tried, policy.rollout.timeout_seconds, started)
        except (StepError, SimulationError):  # this strategy's run cannot go on: not a suggestion
            continue
        if outcome.complete and _keeps_constraints(sim, tried):
            return Suggestion(surge, unavailable, round(outcome.seconds, 1), trials)
    return None


def _keeps_constraints(sim: Simulation, change: _Change) -> bool:
    pods = _pods_of(sim, _workload_ref(change.obj))
    if any(not p.spec.node_name for p in pods):
        return False
    return all(
        row.view is None or row.view.within or row.view.when_unsatisfiable != DO_NOT_SCHEDULE
        for row in spread_rows(sim.cluster, sim.profiles, pods)
    )


# ------------------------------------------------------------------ failure survival


def _required(share: int | str, desired: int) -> int:
    if isinstance(share, int):
        return min(share, desired)
    return math.ceil(desired * int(share.rstrip("%")) / 100)


def _failure_survival(
    sim: Simulation, request: CheckRequest, changes: Sequence[_Change], workloads: Sequence[_Change]
) -> list[Case]:
    """Each PodDisruptionBudget and each changed workload after every domain of the key is
    lost in turn (``plan.audit``'s runs)."""
    key = request.failure_domains
    policy = request.policy.failure
    if not any(key in node.metadata.labels for node in sim.cluster.nodes.values()):
        # nothing to lose: said on each changed workload, not a failure of the gate
        message = f"no node carries the label {key}: no domain loss was simulated"
        return [_case(FAILURE, c, [c.finding(FAILURE, message, severity=WARNING)]) for c in workloads]
    try:
        result = audit_settled(
            sim, domains=[key], after=policy.after_seconds, config=request.config, seed=request.seed
        )
    except AuditError as e:
        raise CheckError([f"failure survival: {e}"]) from None
    located = _locator(request, changes)
    changed = {_workload_ref(c.obj).key: c for c in workloads}
    # per object: (severity, what the loss does) -> the domain values that do it, so that a
    # verdict every zone shares is said once
    seen: dict[str, dict[tuple[str, str], list[str]]] = {
        **{name: {} for name in sorted(sim.cluster.objects(PodDisruptionBudget.KIND))},
        **{wl: {} for wl in changed},
    }
    for record in sorted(result.failures, key=lambda r: r.value):
        for budget in record.pdbs_broken:
            what = (
                f"leaves {budget.current_healthy} healthy pod(s) where the budget needs "
                f"{budget.desired_healthy}"
            )
            seen.setdefault(budget.name, {}).setdefault((ERROR, what), []).append(record.value)
        for outcome in record.workloads:
            if outcome.owner not in changed:
                continue
            verdicts = seen[outcome.owner]
            if policy.min_available is not None:
                need = _required(policy.min_available, outcome.desired)
                if outcome.running < need:
                    what = (
                        f"leaves {outcome.running} of {outcome.desired} replica(s) running; the policy's "
                        f"minAvailable {policy.min_available} needs {need}"
                    )
                    verdicts.setdefault((ERROR, what), []).append(record.value)
            for reason in outcome.pending_reasons:
                what = f"leaves {len(reason.pods)} replica(s) pending: {short_reason(reason.message)}"
                verdicts.setdefault((WARNING, what), []).append(record.value)

    def findings(
        obj: str, file: str | None, line: int | None, verdicts: dict[tuple[str, str], list[str]]
    ) -> tuple[Finding, ...]:
        return tuple(
            Finding(FAILURE, severity, obj, file, line, f"losing {key}={_either(values)} {what}")
            for (severity, what), values in verdicts.items()
        )

    cases = []
    for name in sorted(sim.cluster.objects(PodDisruptionBudget.KIND)):
        file, line = located(PodDisruptionBudget.KIND, name)
        cases.append(
            Case(FAILURE, _budget_ref(name), file, line, findings(_budget_ref(name), file, line, seen[name]))
        )
    for c in workloads:
        cases.append(
            _case(FAILURE, c, findings(c.ref, c.lo.source, c.lo.line, seen[_workload_ref(c.obj).key]))
        )
    return cases


def _either(values: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def _budget_ref(key: str) -> str:
    namespace, _, name = key.partition("/")
    return describe_ref(PodDisruptionBudget.KIND, namespace, name)


def _locator(
    request: CheckRequest, changes: Sequence[_Change]
) -> Callable[[str, str], tuple[str | None, int | None]]:
    """Where an object is written: its last change, else the cluster's file."""
    where: dict[tuple[str, str], LoadedObject] = {}
    for lo in request.cluster:
        where[(lo.obj.KIND, lo.obj.key)] = lo
    for c in changes:
        where[(c.obj.KIND, c.obj.key)] = c.lo

    def locate(kind: str, key: str) -> tuple[str | None, int | None]:
        lo = where.get((kind, key))
        return (None, None) if lo is None else (lo.source, lo.line)

    return locate


# ------------------------------------------------------------------ capacity


def _capacity(after: Baseline, change: _Change, spare: int) -> list[Finding]:
    """At least ``spare`` more replicas of the workload's pod fit (cluster-capacity's greedy
    count, on the changed cluster; nothing is left changed)."""
    pods = [p for p in _pods_of(after.sim, _workload_ref(change.obj)) if p.spec.node_name]
    if not pods:
        return [change.finding(CAPACITY, "no running pod to measure headroom with")]
    template = unbound(pods[0])
    profile = after.profiles.get(template.spec.scheduler_name or "default-scheduler")
    if profile is None:
        return [change.finding(CAPACITY, f"no scheduler profile named {template.spec.scheduler_name!r}")]
    fit = greedy(after, template, profile, max_count=spare)
    if fit >= spare:
        return []
    return [
        change.finding(
            CAPACITY,
            f"only {fit} more replica(s) fit; the policy's minSpareReplicas is {spare}",
            at="spec.replicas",
        )
    ]
