"""Running a scenario: its steps applied to a Simulation, a snapshot after each.

A snapshot is what a user asks after each step: where every pod is, how each workload's
pods spread over the topology domains its constraints name (with the skew), which pods are
pending and why (the scheduler's FitError), and what happened (events, evictions,
refused objects), and each WorkloadSpread's subsets. ``SimulationResult.to_dict()`` is the
``-o json`` document: ``initial``, ``steps[]`` and ``final`` each with ``pods[]`` of
``{namespace, name, node, phase, labels, owner: {kind, name}, workloadSpread: {name, subset},
deletionCost}`` and ``workloadSpreads[]``
(subsets with their bound, replicas, missingReplicas and unschedulable state, and the raw
status), ``podDisruptionBudgets[]`` (expectedPods, desiredHealthy, currentHealthy,
disruptionsAllowed, disruptedPods), plus ``events[]``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubespread.admission.framework import AdmissionOptions, Operation, Rejection
from kubespread.api.apps import Deployment, Job, ReplicaSet, StatefulSet
from kubespread.api.core import Node, Pod
from kubespread.api.errors import DecodeError
from kubespread.api.keys import (
    ANNOTATION_POD_DELETION_COST,
    DEFAULT_SCHEDULER_NAME,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    zone_of,
)
from kubespread.api.kinds import KINDS
from kubespread.api.kruise import CloneSet, WorkloadSpread
from kubespread.api.meta import KubeObject
from kubespread.api.model import gc_paused
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.selectors import parse_selector
from kubespread.api.taints import Taint
from kubespread.api.validation import validate_update
from kubespread.cluster.errors import SimulationError
from kubespread.cluster.state import OBJECT_KINDS, ClusterState
from kubespread.cluster.workloads import NO_OWNER, Ownership, ownership
from kubespread.controllers.host import Controller
from kubespread.controllers.nodelifecycle import NodeLifecycleController
from kubespread.controllers.workloadspread.subsets import (
    matched_subset,
    subset_max,
    workload_of,
    workload_replicas,
)
from kubespread.io.loader import LoadedObject
from kubespread.scheduler import views
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import Decision
from kubespread.scheduler.views import Preemption
from kubespread.sim.baseline import SettleError, SettleHooks, settle
from kubespread.sim.engine import DEFAULT_MAX_PODS, Event, Simulation
from kubespread.sim.rows import (
    BudgetRow,
    JsonDoc,
    NodeState,
    PodRow,
    RefusedObject,
    SubsetRow,
    WorkloadSpreadRow,
)
from kubespread.sim.scenario import Scenario, ScenarioError, Step, parse_path, pod_limit_problems

__all__ = [
    "EVICTION_REASONS",
    "PendingPod",
    "SimulationResult",
    "Snapshot",
    "StepResult",
    "settled_from",
    "simulate",
    "snapshot",
]

#: event reasons that mean a running pod was pushed off its node
EVICTION_REASONS: Final = frozenset({"Evicted", "TaintManagerEviction", "Preempted", "EvictionByEvictionAPI"})
#: the kinds a pod's owner chain may pass through (ClusterState's kept objects)
OBJECT_KINDS_KEPT: Final = tuple(cls.KIND for cls in OBJECT_KINDS)


# ------------------------------------------------------------------ snapshots


class _Owners:
    """Each pod's ``Ownership``, read from the kept objects as they were when the snapshot was
    taken (the rows are built later), once per controller."""

    __slots__ = ("_objects", "_seen")

    def __init__(self, cluster: ClusterState) -> None:
        # pods, nodes and namespaces own no pod: only the kept objects are looked up
        self._objects = {kind: dict(cluster.objects(kind)) for kind in OBJECT_KINDS_KEPT}
        self._seen: dict[tuple[str, str, str], Ownership] = {}

    def of(self, pod: Pod) -> Ownership:
        ref = pod.metadata.controller_ref()
        if ref is None:
            return NO_OWNER
        mark = (pod.namespace, ref.kind, ref.name)
        found = self._seen.get(mark)
        if found is None:
            found = self._seen[mark] = ownership(self._get, pod)
        return found

    def _get(self, kind: str, key: str) -> KubeObject | None:
        return self._objects.get(kind, {}).get(key)


def _pod_row(owners: _Owners, pod: Pod) -> PodRow:
    owned = owners.of(pod)
    m = matched_subset(pod)
    return PodRow(
        namespace=pod.namespace,
        name=pod.metadata.name,
        node=pod.spec.node_name or None,
        phase=pod.status.phase or ("Running" if pod.spec.node_name else "Pending"),
        terminating=pod.is_terminating,
        labels=dict(pod.metadata.labels),
        # as in the spread rows: the controller is the workload, the top owner the owner
        owner=owned.top,
        workload=owned.controller,
        workload_spread=(m.name, m.subset) if m else None,
        deletion_cost=pod.metadata.annotations.get(ANNOTATION_POD_DELETION_COST),
    )


@dataclass(frozen=True, slots=True)
class PendingPod:
    """A pod left unbound after a step (not terminating, not finished) and the last
    FailedScheduling message for it ("" when the scheduler never tried it)."""

    namespace: str
    name: str
    message: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_dict(self) -> JsonDoc:
        return {"namespace": self.namespace, "name": self.name, "message": self.message}


class Snapshot:
    """The state after a step. ``pods`` (one row per pod, by key) is built when read, from the
    pod objects as they were (stored pods are replaced, never changed in place, so keeping
    them costs a reference each): a simulation of many steps pays for the rows only when its
    output asks for them."""

    def __init__(
        self,
        time: float,
        pods: list[Pod],
        distribution: list[dict[str, Any]] | None,
        pending: list[PendingPod],
        workload_spreads: list[WorkloadSpreadRow] | None = None,
        disruption_budgets: list[BudgetRow] | None = None,
        *,
        owners: _Owners,
        nodes: list[NodeState] | None = None,
    ) -> None:
        self.time = time
        #: the nodes that are not plainly up (failed, cordoned or tainted): what the report
        #: marks on its charts
        self.nodes = nodes if nodes is not None else []
        self._pods = pods
        self._owners = owners
        #: the spread rows of every workload (``scheduler.views.spread_rows``, as dicts); empty
        #: when the snapshot was taken without them (``distribution_taken`` False: a caller
        #: that said it would not read them; ``to_dict`` then raises LookupError)
        self.distribution = distribution if distribution is not None else []
        self.distribution_taken = distribution is not None
        self.pending = pending
        self.workload_spreads = workload_spreads if workload_spreads is not None else []
        self.disruption_budgets = disruption_budgets if disruption_budgets is not None else []

    @property
    def pods(self) -> list[PodRow]:
        """Every pod's row, by namespace/name (built anew at each read)."""
        owners = self._owners
        return [_pod_row(owners, p) for p in sorted(self._pods, key=_pod_key)]

    def to_dict(self) -> JsonDoc:
        if not self.distribution_taken:
            raise LookupError("this snapshot was taken without its distribution")
        return {
            "time": self.time,
            "pods": [p.to_dict() for p in self.pods],
            "distribution": self.distribution,
            "pending": [p.to_dict() for p in self.pending],
            "workloadSpreads": [w.to_dict() for w in self.workload_spreads],
            "podDisruptionBudgets": [b.to_dict() for b in self.disruption_budgets],
            "nodes": [n.to_dict() for n in self.nodes],
        }


#: the taints the node lifecycle controller and a cordon put on a node: a node state, not
#: a taint the user set
_STATE_TAINTS: Final = frozenset({TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE})


def node_states(cluster: ClusterState) -> list[NodeState]:
    """Each node that is not plainly up, by name: ``failed`` (its Ready condition is not True),
    ``cordoned`` (unschedulable), ``taints`` (the NoSchedule/NoExecute taints a user or a
    controller set, node states left out), with its zone."""
    out = []
    for name in sorted(cluster.nodes):
        node = cluster.nodes[name]
        ready = next((c.status for c in node.status.conditions if c.type == "Ready"), "True")
        taints = tuple(
            f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}"
            for t in node.spec.taints
            if t.key not in _STATE_TAINTS and t.effect in ("NoSchedule", "NoExecute")
        )
        failed, cordoned = ready != "True", bool(node.spec.unschedulable)
        if failed or cordoned or taints:
            out.append(NodeState(name, zone_of(node.metadata.labels) or "", failed, cordoned, taints))
    return out


def _pod_key(pod: Pod) -> str:
    return pod.key


def _disruption_budget_rows(sim: Simulation) -> list[BudgetRow]:
    """Each PodDisruptionBudget's status as the disruption controller last wrote it."""
    rows = []
    for _, pdb in sorted(sim.cluster.objects(PodDisruptionBudget.KIND).items()):
        assert isinstance(pdb, PodDisruptionBudget)
        st = pdb.status
        rows.append(
            BudgetRow(
                namespace=pdb.namespace,
                name=pdb.metadata.name,
                expected_pods=st.expected_pods,
                desired_healthy=st.desired_healthy,
                current_healthy=st.current_healthy,
                disruptions_allowed=st.disruptions_allowed,
                disrupted_pods=tuple(sorted(st.disrupted_pods)),
            )
        )
    return rows


def _workload_spread_rows(sim: Simulation) -> list[WorkloadSpreadRow]:
    """Each WorkloadSpread's subsets as its status says, with the bound it resolves to now
    (a percentage of the workload's replicas) and the subset's pods by node."""
    rows = []
    for _, ws in sorted(sim.cluster.objects(WorkloadSpread.KIND).items()):
        assert isinstance(ws, WorkloadSpread)
        get = sim.cluster.get
        replicas = workload_replicas(workload_of(ws, get), ws)
        status = {s.name: s for s in ws.status.subset_statuses}
        target = ws.spec.target_ref
        subsets = []
        for subset in ws.spec.subsets:
            st = status.get(subset.name)
            unscheduled = st.subset_unscheduled_status if st is not None else None
            subsets.append(
                SubsetRow(
                    name=subset.name,
                    max_replicas=subset.max_replicas,
                    limit=subset_max(subset, replicas),
                    replicas=st.replicas if st is not None else 0,
                    missing_replicas=st.missing_replicas if st is not None else None,
                    creating_pods=len(st.creating_pods) if st is not None else 0,
                    deleting_pods=len(st.deleting_pods) if st is not None else 0,
                    unschedulable=bool(unscheduled and unscheduled.unschedulable),
                    unscheduled_time=unscheduled.unscheduled_time if unscheduled else None,
                    failed_count=unscheduled.failed_count if unscheduled else 0,
                )
            )
        rows.append(
            WorkloadSpreadRow(
                namespace=ws.namespace,
                name=ws.metadata.name,
                target=(target.kind, target.name) if target else None,
                workload_replicas=replicas,
                subsets=tuple(subsets),
                status=ws.status.to_dict(),
            )
        )
    return rows


def untried_reason(sim: Simulation, pod: Pod) -> str:
    """Why a pending pod has no FailedScheduling message: no scheduler here has a profile for
    its schedulerName (kube leaves it pending, silently), its scheduling gates (kube's
    SchedulingGated condition), or it has not been tried yet."""
    name = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
    if name not in sim.profiles:
        return f'not scheduled: no scheduler profile for schedulerName "{name}"'
    gates = [g.name for g in pod.spec.scheduling_gates]
    if gates:
        return f"Scheduling is blocked due to non-empty scheduling gates: {', '.join(gates)}"
    return "not tried yet"


def snapshot(sim: Simulation, *, distribution: bool = True) -> Snapshot:
    """The state worth showing: every pod, the spread of each workload (per ReplicaSet, so the
    revisions of a rollout show apart) per constraint as the scheduler counts it, with the raw
    view beside it (``kubespread.scheduler.views.spread_rows``), pending pods and why.
    ``distribution`` False: without the spread of every workload, which a caller that never
    reads it need not pay for (every workload of a 100,000-pod dump)."""
    cluster = sim.cluster
    rows = [row.to_dict() for row in views.spread_rows(cluster, sim.profiles)] if distribution else None
    reasons = sim.pending_reasons
    pending = [
        PendingPod(p.namespace, p.metadata.name, reasons.get(key) or untried_reason(sim, p))
        for key, p in sorted(cluster.unbound_pods.items())
        if not p.is_terminating and not p.is_finished
    ]
    return Snapshot(
        sim.now,
        list(cluster.pods.values()),
        rows,
        pending,
        _workload_spread_rows(sim),
        _disruption_budget_rows(sim),
        owners=_Owners(cluster),
        nodes=node_states(cluster),
    )


@dataclass
class StepResult:
    index: int
    action: str
    description: str
    snapshot: Snapshot
    events: list[Event]
    rejections: list[RefusedObject] = field(default_factory=list)
    #: preemptions made in the step, or whose preemptor ran in it (Simulation.preemptions_since)
    preemptions: list[Preemption] = field(default_factory=list)

    @property
    def evictions(self) -> list[Event]:
        return [e for e in self.events if e.reason in EVICTION_REASONS]

    def to_dict(self) -> JsonDoc:
        return {
            "index": self.index,
            "action": self.action,
            "description": self.description,
            **self.snapshot.to_dict(),
            "events": [e.to_dict() for e in self.events],
            "evictions": [e.to_dict() for e in self.evictions],
            "rejections": [r.to_dict() for r in self.rejections],
            "preemptions": [p.to_dict() for p in self.preemptions],
        }


@dataclass
class SimulationResult:
    name: str
    seed: int
    initial: StepResult
    steps: list[StepResult]
    final: Snapshot
    events: list[Event]
    #: the simulation as the last step left it (for explaining a pod); not part of to_dict
    sim: Simulation | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> JsonDoc:
        return {
            "scenario": self.name,
            "seed": self.seed,
            "initial": self.initial.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "final": self.final.to_dict(),
            "events": [e.to_dict() for e in self.events],
        }


# ------------------------------------------------------------------ steps


class StepError(Exception):
    """A step that cannot be carried out in the state the cluster is in."""


def _require(sim: Simulation, args: dict[str, Any]) -> KubeObject:
    kind = args["kind"]
    cls = KINDS[kind]
    key = f"{args.get('namespace') or 'default'}/{args['name']}" if cls.NAMESPACED else args["name"]
    obj = sim.cluster.get(kind, key)
    if obj is None:
        raise StepError(f"{kind} {key} not found")
    return obj


def _pod_update_problem(old: KubeObject, new: KubeObject) -> str | None:
    if isinstance(old, Pod) and isinstance(new, Pod) and old.spec.to_dict() != new.spec.to_dict():
        return (
            f'Pod "{old.metadata.name}" is invalid: spec: Forbidden: pod updates may not change fields '
            "other than labels, annotations and a few scheduling fields (kubespread: replace the pod instead)"
        )
    return None


def _store_update(sim: Simulation, old: KubeObject, new: KubeObject, rejections: list[RefusedObject]) -> None:
    """Validate and store an edited object, keeping its identity and status."""
    meta = new.metadata
    meta.uid, meta.creation_timestamp = old.metadata.uid, old.metadata.creation_timestamp
    meta.namespace = old.metadata.namespace
    old_spec = getattr(old, "spec", None)
    new_spec = getattr(new, "spec", None)
    if old_spec is not None and new_spec is not None and old_spec.to_dict() != new_spec.to_dict():
        meta.generation = (old.metadata.generation or 1) + 1
    problem = _pod_update_problem(old, new)
    errors = [] if problem else validate_update(new, old)
    if problem or errors:
        message = problem or f"{new.ref()} is invalid: " + "; ".join(map(str, errors))
        rejections.append(RefusedObject(new.ref(), message))
        return
    refused = sim.admit_change(new, sim.admission_context(Operation.UPDATE, old=old))
    if refused is not None:
        rejections.append(RefusedObject(new.ref(), refused.message))
        return
    sim.update(new)


def _apply(sim: Simulation, step: Step, rejections: list[RefusedObject]) -> None:
    for given in step.objects:
        obj = given.copy()
        existing = sim.cluster.get(obj.KIND, obj.key)
        if existing is not None:
            if hasattr(existing, "status") and hasattr(obj, "status") and not obj.present("status"):
                obj.status = copy.deepcopy(existing.status)
            _store_update(sim, existing, obj, rejections)
            continue
        outcome: KubeObject | Rejection
        if isinstance(obj, Node) and _has(sim, "nodelifecycle"):
            outcome = _node_lifecycle(sim).add(obj)
        else:
            outcome = sim.create(obj)
        if isinstance(outcome, Rejection):
            rejections.append(RefusedObject(obj.ref(), outcome.message))
            sim.record(obj, "FailedCreate", outcome.message, type="Warning")


def _has(sim: Simulation, name: str) -> bool:
    return any(c.name == name for c in sim.controllers)


def _set_path(data: Any, parts: list[str | int], value: Any) -> None:
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(data, list) or part >= len(data):
                raise StepError(f"index [{part}] out of range")
            data = data[part]
        else:
            if not isinstance(data, dict):
                raise StepError(f"{part}: not an object")
            data = data.setdefault(part, [] if isinstance(nxt, int) else {})
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(data, list) or last > len(data):
            raise StepError(f"index [{last}] out of range")
        if last == len(data):
            data.append(value)
        else:
            data[last] = value
    else:
        if not isinstance(data, dict):
            raise StepError(f"{last}: not an object")
        data[last] = value


def _set(sim: Simulation, step: Step, rejections: list[RefusedObject]) -> None:
    old = _require(sim, step.args)
    data = old.to_dict()
    parts = parse_path(step.args["path"])
    assert parts is not None  # checked when the scenario was loaded
    _set_path(data, parts, step.args["value"])
    try:
        new = type(old).from_dict(data)
    except DecodeError as e:
        raise StepError(f"{e.field}: {e.message}") from None
    _store_update(sim, old, new, rejections)


def _scale(sim: Simulation, step: Step, rejections: list[RefusedObject]) -> None:
    old = _require(sim, step.args)
    new = old.copy()
    # the scenario admits scale steps of SCALABLE_KINDS only
    if isinstance(new, Job):
        new.spec.parallelism = step.args["replicas"]
    else:
        assert isinstance(new, Deployment | ReplicaSet | StatefulSet | CloneSet), new.KIND
        new.spec.replicas = step.args["replicas"]
    _store_update(sim, old, new, rejections)


def _label(sim: Simulation, step: Step, rejections: list[RefusedObject]) -> None:
    old = _require(sim, step.args)
    new = copy.copy(old)
    new.metadata = copy.copy(old.metadata)
    labels = dict(old.metadata.labels)
    labels.update(step.args.get("set", {}))
    for k in step.args.get("remove", []):
        labels.pop(k, None)
    new.metadata.labels = labels
    errors = validate_update(new, old)
    if errors:
        rejections.append(RefusedObject(new.ref(), "; ".join(map(str, errors))))
        return
    sim.update(new)


def _node_lifecycle(sim: Simulation) -> NodeLifecycleController:
    """The simulation's node lifecycle controller (callers check it runs: ``_has``)."""
    controller = sim.controller("nodelifecycle")
    assert isinstance(controller, NodeLifecycleController), type(controller)
    return controller


def _delete(sim: Simulation, step: Step) -> None:
    obj = _require(sim, step.args)
    if isinstance(obj, Node) and _has(sim, "nodelifecycle"):
        _node_lifecycle(sim).delete(obj.key)
    else:
        sim.delete(obj.KIND, obj.key)


def _node(sim: Simulation, step: Step) -> None:
    """One node by name, or every node a label selector matches (by name, in one step: a
    zone fails at once)."""
    action = step.args["action"]
    if "selector" in step.args:
        selector = parse_selector(step.args["selector"])
        names = sorted(n for n, node in sim.cluster.nodes.items() if selector.matches(node.metadata.labels))
        if not names:
            raise StepError(f"no node matches {step.args['selector']}")
    else:
        names = [step.args["name"]]
        if names[0] not in sim.cluster.nodes:
            raise StepError(f"node {names[0]} not found")
    if not _has(sim, "nodelifecycle"):
        raise StepError("no node lifecycle controller runs in this simulation")
    lifecycle = _node_lifecycle(sim)
    for name in names:
        if action == "taint":
            lifecycle.taint(name, _step_taint(step))
        elif action == "untaint":
            t = step.args["taint"]
            lifecycle.untaint(name, t["key"], t.get("effect", ""))
        else:
            getattr(lifecycle, action)(name)


def _step_taint(step: Step) -> Taint:
    """The taint a ``node: {action: taint, taint: {key, value, effect}}`` step sets."""
    t = step.args["taint"]
    return Taint(key=t["key"], value=t.get("value", ""), effect=t["effect"])


#: the reason of the Warning event an ``evict`` step's eviction records
EVICT_REASON: Final = "Evicted"


def _evict(sim: Simulation, step: Step, rejections: list[RefusedObject]) -> None:
    """Every pod of the step through the Eviction API, in order, before the cluster settles
    (one wave): a PodDisruptionBudget's refusal (429) is a rejection, not an error."""
    for key in step.args["pods"]:
        if key not in sim.cluster.pods:
            raise StepError(f"pod {key} not found")
        refused = sim.evict(key, reason=EVICT_REASON, message="evicted by the scenario (Eviction API)")
        if refused is not None:
            rejections.append(RefusedObject(f"Pod {key}", refused.message))


def run_step(sim: Simulation, step: Step) -> list[RefusedObject]:
    """Carry out one step and let the cluster settle (``advance`` lets time pass instead).
    Returns the objects the API server refused."""
    rejections: list[RefusedObject] = []
    match step.action:
        case "apply":
            _apply(sim, step, rejections)
        case "scale":
            _scale(sim, step, rejections)
        case "set":
            _set(sim, step, rejections)
        case "label":
            _label(sim, step, rejections)
        case "delete":
            _delete(sim, step)
        case "node":
            _node(sim, step)
        case "evict":
            _evict(sim, step, rejections)
        case "advance":
            sim.advance(step.seconds)
            return rejections
    sim.run_until_quiet()
    return rejections


def simulate(
    scenario: Scenario,
    *,
    controllers: Sequence[Controller] | None = None,
    admission: AdmissionOptions | None = None,
    on_step: Callable[[Step], None] | None = None,
    on_decision: Callable[[Decision], None] | None = None,
    max_pods: int | None = DEFAULT_MAX_PODS,
    after_step: Callable[[Simulation, StepResult], None] | None = None,
    random_ties: bool = False,
    distributions: bool = True,
) -> SimulationResult:
    """Run every step of ``scenario``; ScenarioError (located) when a step cannot be carried out.

    The ``cluster:`` settles as ``schedule`` settles its input
    (:func:`kubespread.sim.baseline.settle`: what exists as it is, each new object created
    through the API server, so a Deployment there runs its pods), except that the clock
    starts at 0 rather than at a dump's latest timestamp (a scenario's times read from 0).

    ``admission``: the API server's options (default: the design's hard anti-affinity limit
    on). ``on_decision`` sees every scheduling decision (progress within a long step); ``max_pods``
    bounds the pods that may exist at once (:func:`~kubespread.sim.scenario.pod_limit_problems`
    refuses a workload asking for more before anything runs). ``after_step`` sees the
    simulation as each step (the initial settling first) left it, with that step's result:
    what can only be asked then (why a pod is pending at that step). ``random_ties`` draws the
    scheduler's pick among equally scored nodes from the scenario's seed (``Simulation``), as
    the race of kube-scheduler's threads would, instead of the deterministic pick.
    ``distributions`` False: the snapshots keep no spread of every workload (``snapshot``'s
    ``distribution``), for a caller that never reads them."""
    problems = pod_limit_problems(scenario.cluster, max_pods, scenario)
    if problems:
        raise ScenarioError(problems)

    def started(sim: Simulation, _new: int) -> None:
        if on_decision is not None:
            sim.decision_observers.append(on_decision)

    try:
        baseline = settle(
            scenario.cluster,
            profiles=scenario.profiles,
            seed=scenario.seed,
            controllers=controllers,
            admission=admission,
            max_pods=max_pods,
            start=0.0,
            random_ties=random_ties,
            origin=f"{scenario.source}: cluster",
            hooks=SettleHooks(started=started),
        )
    except SettleError as e:
        raise ScenarioError(e.problems) from None
    sim = baseline.sim
    initial = StepResult(
        -1,
        "initial",
        "the cluster as given, settled",
        snapshot(sim, distribution=distributions),
        list(sim.events),
        list(baseline.rejections),
        sim.preemptions_since(0),
    )
    if after_step is not None:
        after_step(sim, initial)
    results = []
    for step in scenario.steps:
        if on_step is not None:
            on_step(step)
        first = len(sim.events)
        try:
            # a step keeps most of what it builds (pods, events, indexes) and makes next to no
            # cycles: the collections found 135 objects in benchmarks/scenario.py's 5,000 nodes,
            # for 5% of its CPU; what a big step built is frozen after it (gc_paused)
            with gc_paused():
                rejections = run_step(sim, step)
        except (StepError, SimulationError) as e:
            raise ScenarioError([f"{scenario.source}: {step.where}: {e}"]) from None
        results.append(
            StepResult(
                step.index,
                step.action,
                step.describe(),
                snapshot(sim, distribution=distributions),
                sim.events[first:],
                rejections,
                sim.preemptions_since(first),
            )
        )
        if after_step is not None:
            after_step(sim, results[-1])
    return SimulationResult(
        scenario.name,
        scenario.seed,
        initial,
        results,
        snapshot(sim, distribution=distributions),
        list(sim.events),
        sim,
    )


def settled_from(
    objects: Sequence[KubeObject], *, profiles: dict[str, Profile] | None, seed: int, name: str = "dump"
) -> Simulation:
    """The simulation ``kubespread simulate`` builds from a dump of these objects (a scenario
    with no step: the same code and seed, so a plan replayed here replays alike there); its
    snapshots, which no caller reads, without the spread of every workload."""
    scenario = Scenario(
        name=name,
        seed=seed,
        profiles=profiles,
        cluster=[LoadedObject(o, "<dump>") for o in objects],
        steps=[],
    )
    sim = simulate(scenario, distributions=False).sim
    assert sim is not None
    return sim
