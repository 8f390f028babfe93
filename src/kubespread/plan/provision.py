"""``kubespread provision``: the fewest (then cheapest) nodes to add, from node templates, so
that kube-scheduler leaves nothing pending, proven on the model and confirmed by a replay.

The question is asked of the cluster as ``schedule`` settles it (:func:`settle`: the cluster
files' workloads run their pods, the dump's pending pods are placed, then the workload files
are created). When pods stay pending, every pod of the run (those the scheduler placed and
those it left pending; the dump's bound pods stay where they are) is solved at once on the
placement model (``kubespread.solve``) over the cluster's nodes and, per node template, up
to ``max_per_template`` identical new nodes (``solve.provision.solve_offers``: an "added"
boolean each, symmetry broken, fewest nodes then cheapest). A spread domain only new nodes
give (a template's zone the cluster lacks, a new node's hostname) counts only when a node
is added there, for the global minimum and for minDomains; which nodes count follows the
constraint's nodeAffinityPolicy and nodeTaintsPolicy, as the plugin's PreFilter counts them.

Then the **replay**: the chosen nodes (``<template>-1``, ``<template>-2``, ... with the
template's labels and their own hostname) are settled with the same objects
(:meth:`Baseline.fork` with them as extra existing objects), exactly as ``kubespread
schedule`` would run given the nodes in its cluster files: the real scheduler loop, pods one
at a time through its queue. An answer is reported only when the replay leaves nothing
pending (or no more than the model could not place). When the model's optimum needs a bind
order the scheduler does not take, that count vector is cut (a no-good: the replay depends
on the counts alone) and the model solved again, up to ``max_replays`` times; the result says
so. ``proven``: no addition with fewer nodes satisfies the model (but those cut because
their replay failed) — CP-SAT proved the last solve optimal, or its answer meets the lower
bound of the aggregated relaxation (``solve.provision.relaxation``) — and the replay holds.

Why the replay adds the nodes before the workloads are created, rather than to the settled
cluster with its pods pending: that is what ``kubespread schedule`` judges given the nodes
(and what a user checks the answer with), so the answer and that check cannot disagree.

Large models (more than ``_SMALL_MODEL`` node slots) are solved in steps: the relaxation's
bound and node counts, the model cut down to those counts (a few more when that finds
nothing), the whole model from the best answer so far or from a greedy run of the scheduler
that opens nodes as pods need them (``_greedy``). An answer the replay turns down is grown
where the pending pods then fit (``_grown``) rather than cut and solved again, and is not
proven the fewest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from kubespread.api.core import Node, Pod
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
from kubespread.api.resources import node_allocatable
from kubespread.cluster.state import ClusterState
from kubespread.cluster.workloads import WorkloadRef, controller_of, ownership
from kubespread.io.loader import LoadedObject
from kubespread.plan.nodegroups import (
    COST_ANNOTATION,
    NodeTemplate,
    ProvisionError,
    cluster_templates,
    new_nodes,
    node_template,
    replay,
)
from kubespread.plan.workloads import cluster_without, template_key, unbound
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.sim.baseline import Baseline, settle
from kubespread.sim.rows import JsonDoc
from kubespread.solve import PlacementModel, SolveError, build_groups
from kubespread.solve.model import Offer
from kubespread.solve.provision import NoAddition, OfferSolution, relaxation, solve_offers, truncated

#: costs are solved as integers: thousandths
_COST_SCALE: Final = 1000
#: the first, deterministic solve's share of the time limit (seconds, at most)
_QUICK_SECONDS: Final = 2.0
#: CP-SAT workers of the second solve, when the first does not prove its answer
_WORKERS: Final = 8
#: node slots (over every group) up to which the first solve is tried
_SMALL_MODEL: Final = 4000

__all__ = [
    "COST_ANNOTATION",
    "Addition",
    "NodeTemplate",
    "PendingAfter",
    "ProvisionError",
    "ProvisionRequest",
    "ProvisionResult",
    "cluster_templates",
    "new_nodes",
    "node_template",
    "provision",
    "provision_on",
    "replay",
]


@dataclass(frozen=True, slots=True)
class ProvisionRequest:
    """The question: the cluster and workload objects (settled as ``schedule`` settles them),
    the node templates, how many nodes of each at most, the scheduler profiles, the solver's
    time per solve and how many answers a replay may turn down."""

    objects: tuple[LoadedObject, ...]
    templates: tuple[NodeTemplate, ...] = ()
    max_per_template: int = 100
    profiles: Mapping[str, Profile] | None = None
    templates_from_cluster: bool = False
    time_limit: float = 10.0
    max_replays: int = 20
    compare_autoscaler: bool = False


@dataclass(frozen=True, slots=True)
class Addition:
    """Nodes of one template added: their names, the cost, and the pods landing there."""

    template: str
    zone: str
    count: int
    cost: float
    names: tuple[str, ...]
    pods: int

    def to_dict(self) -> JsonDoc:
        return {
            "template": self.template,
            "zone": self.zone,
            "count": self.count,
            "cost": _number(self.cost),
            "nodes": list(self.names),
            "pods": self.pods,
        }


@dataclass(frozen=True, slots=True)
class PendingAfter:
    """A pod still pending after the addition, and the scheduler's reason."""

    pod: str
    workload: str
    reason: str

    def to_dict(self) -> JsonDoc:
        return {"pod": self.pod, "workload": self.workload, "reason": self.reason}


@dataclass(frozen=True)
class ProvisionResult:
    """The answer: what to add, where the replay placed the run's pods, what stays pending;
    ``baseline``: the settled cluster before (its pending pods) and, when asked, the
    one-group-at-a-time autoscaler's answer (a plain document from ``plan.autoscaler``)."""

    additions: tuple[Addition, ...]
    proven: bool
    lower_bound: int
    pending_after: tuple[PendingAfter, ...]
    placements: Mapping[str, str]
    pending_before: tuple[str, ...]
    notes: tuple[str, ...] = ()
    replays: int = 0
    seconds: float = 0.0
    autoscaler: Mapping[str, Any] | None = None
    #: the replayed cluster (not in the JSON): the report draws it
    after: Baseline | None = field(default=None, repr=False, compare=False)
    before: Baseline | None = field(default=None, repr=False, compare=False)

    @property
    def nodes(self) -> int:
        return sum(a.count for a in self.additions)

    @property
    def cost(self) -> float:
        return sum(a.cost for a in self.additions)

    def to_dict(self) -> JsonDoc:
        baseline: dict[str, Any] = {"pending": list(self.pending_before)}
        if self.autoscaler is not None:
            baseline["autoscaler"] = dict(self.autoscaler)
        return {
            "add": [a.to_dict() for a in self.additions],
            "nodes": self.nodes,
            "cost": _number(self.cost),
            "proven": self.proven,
            "lowerBound": self.lower_bound,
            "pendingAfter": [p.to_dict() for p in self.pending_after],
            "placements": dict(self.placements),
            "notes": list(self.notes),
            "replays": self.replays,
            "solveSeconds": round(self.seconds, 3),
            "baseline": baseline,
        }


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 6)


def provision(request: ProvisionRequest) -> ProvisionResult:
    """Settle the objects, then :func:`provision_on` the Baseline. SettleError when they do not
    settle, ProvisionError when the question cannot be answered as asked."""
    baseline = settle(request.objects, profiles=request.profiles)
    return provision_on(baseline, request)


def _run_pods(baseline: Baseline) -> list[str]:
    """The pods of the run, in the cluster's order: every pod but those the input bound."""
    given = {lo.obj.key for lo in baseline.objects if isinstance(lo.obj, Pod) and lo.obj.spec.node_name}
    cluster = baseline.cluster
    return [
        k for k, p in cluster.pods.items() if k not in given and not p.is_terminating and not p.is_finished
    ]


def _pending(cluster: ClusterState) -> list[str]:
    return sorted(k for k, p in cluster.unbound_pods.items() if not p.is_terminating and not p.is_finished)


def _workload(pod: Pod) -> str:
    ref = controller_of(pod) or WorkloadRef(pod.namespace, "Pod", pod.metadata.name)
    return ref.short


def _templates(baseline: Baseline, request: ProvisionRequest) -> list[NodeTemplate]:
    templates = list(request.templates)
    if request.templates_from_cluster:
        given = {t.name for t in templates}
        templates += [t for t in cluster_templates(baseline.cluster) if t.name not in given]
    if not templates:
        raise ProvisionError("no node template: give --node-template FILE or --node-template-from-cluster")
    names = [t.name for t in templates]
    for name in names:
        if names.count(name) > 1:
            raise ProvisionError(
                f"two node templates are named {name!r}: a template's name names its node group"
            )
    return templates


def _profile(baseline: Baseline, pods: Sequence[Pod]) -> Profile:
    names = sorted({p.spec.scheduler_name or DEFAULT_SCHEDULER_NAME for p in pods})
    if len(names) > 1:
        raise ProvisionError(
            f"the pending pods name different schedulers ({', '.join(names)}); provision one at a time"
        )
    profile = baseline.profiles.get(names[0])
    if profile is None:
        raise ProvisionError(
            f'the pending pods ask for scheduler "{names[0]}", which no --scheduler-config gives'
        )
    return profile


@dataclass(frozen=True, slots=True)
class _Problem:
    """The model, its offered nodes per template, and the run's pods by group."""

    model: PlacementModel
    offered: tuple[tuple[Node, ...], ...]
    groups: tuple[tuple[str, ...], ...]
    base: ClusterState
    templates: tuple[str, ...]


def _problem(
    baseline: Baseline, templates: Sequence[NodeTemplate], run: Sequence[str], profile: Profile, limit: int
) -> _Problem:
    cluster = baseline.cluster
    base = cluster_without(cluster, set(run))
    taken = set(cluster.nodes)
    offered: list[tuple[Node, ...]] = []
    for t in templates:
        nodes = tuple(new_nodes(t, limit, taken))
        taken |= {n.metadata.name for n in nodes}
        offered.append(nodes)
        for node in nodes:
            base.add_node(node)
    pods = cluster.pods
    shapes: dict[Any, list[str]] = {}
    for k in run:
        shapes.setdefault(template_key(pods[k]), []).append(k)
    groups = tuple(tuple(g) for g in shapes.values())
    wanted = [(_workload(pods[g[0]]), unbound(pods[g[0]]), len(g)) for g in groups]
    model = build_groups(base, wanted, profile)
    offers = tuple(
        Offer(t.name, tuple(n.metadata.name for n in nodes), round(t.cost * _COST_SCALE))
        for t, nodes in zip(templates, offered, strict=True)
    )
    is_offered = {n for o in offers for n in o.nodes}
    labels = {name: base.nodes[name].metadata.labels for name in base.nodes}
    for g in model.groups:
        for i, s in enumerate(g.spreads):
            key = s.topology_key
            real = {labels[n][key] for n in s.counted if n not in is_offered and key in labels[n]}
            only_offered: dict[str, list[str]] = {}
            for n in s.counted:
                d = labels[n].get(key)
                if n in is_offered and d is not None and d not in real:
                    only_offered.setdefault(d, []).append(n)
            g.spreads[i] = replace(s, offered={d: tuple(sorted(ns)) for d, ns in only_offered.items()})
    model.offers = offers
    return _Problem(model, tuple(offered), groups, base, tuple(t.name for t in templates))


def _unhostable(problem: _Problem, pending: set[str], cluster: ClusterState, profile: Profile) -> None:
    """ProvisionError naming a workload with pending pods that no template's node admits,
    with the scheduler's reasons on one node of each template."""
    offered = {n.metadata.name for nodes in problem.offered for n in nodes}
    for g, keys in zip(problem.model.groups, problem.groups, strict=True):
        if not pending & set(keys) or any(n.name in offered and n.capacity > 0 for n in g.nodes):
            continue
        pod = unbound(cluster.pods[keys[0]])
        decision = schedule_one(pod, problem.base, profile)
        reasons = []
        for template, nodes in zip(problem.templates, problem.offered, strict=True):
            rejection = decision.rejections.get(nodes[0].metadata.name) if nodes else None
            why = (
                "; ".join(rejection.status.reasons) if rejection is not None else "no room beside the others"
            )
            reasons.append(f"{template}: {why}")
        owner = ownership(cluster, cluster.pods[keys[0]])
        ref = owner.top or owner.controller or WorkloadRef(pod.namespace, "Pod", pod.metadata.name)
        raise ProvisionError(
            f"{ref.kind} {ref.namespace}/{ref.name}: no node template can host its pods "
            f"({' | '.join(reasons)})"
        )


def _without_full_nodes(model: PlacementModel) -> PlacementModel:
    """The model without the nodes a group's pods cannot use (full ones stay in a placement
    model for relaxing resources; a provisioning model never relaxes)."""
    groups = [replace(g, nodes=[n for n in g.nodes if n.capacity > 0]) for g in model.groups]
    used = {n.name for g in groups for n in g.nodes}
    room = {n: r for n, r in model.room.items() if n in used}
    return PlacementModel(groups, room, model.relaxed, model.balance, model.offers)


def _greedy(
    cluster: ClusterState,
    problem: _Problem,
    run: Sequence[str],
    profile: Profile,
    sizes: Sequence[tuple[int, float]],
) -> list[dict[str, int]]:
    """A start for the solver on large models: the run's pods through ``schedule_one`` in
    turn, each bound where the scheduler sends it; a pod no node takes opens the next node of
    the first template (largest first, then cheapest: ``sizes``) where it then passes the
    filters. The arrangement, per group, with each template's opened nodes renamed in order
    of load (the symmetry breaking's order)."""
    base = cluster_without(cluster, set(run))
    opened: list[list[str]] = [[] for _ in problem.offered]
    order = sorted(range(len(problem.offered)), key=lambda t: sizes[t])
    node_of: dict[str, str] = {}
    pods = cluster.pods
    for k in run:
        pod = unbound(pods[k])
        chosen = schedule_one(pod, base, profile, timed=False).selected
        if chosen is None:
            for t in order:
                if len(opened[t]) >= len(problem.offered[t]):
                    continue
                fresh = problem.offered[t][len(opened[t])]
                base.add_node(fresh)
                if fresh.metadata.name in schedule_one(pod, base, profile, timed=False).feasible:
                    opened[t].append(fresh.metadata.name)
                    chosen = fresh.metadata.name
                    break
                base.delete_node(fresh.metadata.name)
        if chosen is None:
            continue
        base.add_pod(pod)
        base.bind(pod.key, chosen)
        node_of[k] = chosen
    load: dict[str, int] = {}
    for name in node_of.values():
        load[name] = load.get(name, 0) + 1
    rename: dict[str, str] = {}
    for t, names in enumerate(opened):
        ranked = sorted(names, key=lambda n: -load.get(n, 0))
        rename |= {n: problem.offered[t][i].metadata.name for i, n in enumerate(ranked)}
    out: list[dict[str, int]] = []
    for keys in problem.groups:
        counts: dict[str, int] = {}
        for k in keys:
            if k in node_of:
                name = rename.get(node_of[k], node_of[k])
                counts[name] = counts.get(name, 0) + 1
        out.append(counts)
    return out


def _grown(
    after: Baseline,
    problem: _Problem,
    added: Sequence[int],
    profile: Profile,
    sizes: Sequence[tuple[int, float]],
) -> tuple[int, ...]:
    """``added`` grown from the replay's cluster: each pod it left pending scheduled again,
    one no node takes opening the next node of the first template (largest first, then
    cheapest) it then passes the filters on."""
    counts = list(added)
    order = sorted(range(len(problem.offered)), key=lambda t: sizes[t])
    with after.trial() as cluster:
        for key in _pending(cluster):
            pod = cluster.pods[key]
            chosen = schedule_one(pod, cluster, profile, timed=False).selected
            if chosen is None:
                for t in order:
                    if counts[t] >= len(problem.offered[t]):
                        continue
                    fresh = problem.offered[t][counts[t]]
                    cluster.add(fresh)
                    if fresh.metadata.name in schedule_one(pod, cluster, profile, timed=False).feasible:
                        counts[t] += 1
                        chosen = fresh.metadata.name
                        break
                    cluster.delete_node(fresh.metadata.name)
            if chosen is not None:
                cluster.bind(key, chosen)
    return tuple(counts)


def _solve(
    model: PlacementModel,
    request: ProvisionRequest,
    excluded: Sequence[tuple[int, ...]],
    start: Callable[[], list[dict[str, int]]],
) -> OfferSolution:
    """A short deterministic solve (one worker) on a small model. When that does not prove
    its answer (or the model is large): the aggregated relaxation (``solve.provision.
    relaxation``) for a lower bound and how many nodes of each template it uses; the model
    cut down to those (and a few more) solved with more workers; then the whole model from
    the best answer so far (or the greedy start) for the rest of the time limit. An answer
    as small as the bound is the fewest nodes: proven (the cost, the least found)."""
    began = time.perf_counter()
    best: OfferSolution | None = None
    bound = 0
    if sum(len(g.nodes) for g in model.groups) <= _SMALL_MODEL:
        try:
            best = solve_offers(model, time_limit=min(request.time_limit, _QUICK_SECONDS), exclude=excluded)
            bound = best.lower_bound
        except NoAddition as e:
            bound = e.lower_bound
        if best is not None and best.proven:
            return best
    found, vector = relaxation(model, time_limit=min(_QUICK_SECONDS, request.time_limit / 4))
    bound = max(bound, found)

    def done(answer: OfferSolution) -> bool:
        return answer.nodes <= bound

    def left() -> float:
        return request.time_limit - (time.perf_counter() - began)

    if vector is not None and (best is None or not done(best)):
        for extra in (0, 2):
            limits = [
                min(len(o.nodes), k + extra + k // 10 * (extra > 0))
                for o, k in zip(model.offers, vector, strict=True)
            ]
            try:
                cut = solve_offers(
                    truncated(model, limits),
                    time_limit=max(1.0, left() - (1.0 if extra == 0 else 0.0)),
                    exclude=excluded,
                    workers=_WORKERS,
                    at_least=bound,
                )
            except NoAddition:
                continue
            cut = replace(cut, proven=False, lower_bound=0)
            if best is None or cut.nodes < best.nodes:
                best = cut
            break
    if best is None or not done(best):
        spent = time.perf_counter() - began
        hint = best.by_group if best is not None else start()  # the greedy: not on the solver's clock
        began += time.perf_counter() - began - spent
        rest = max(1.0, request.time_limit - spent)
        try:
            whole = solve_offers(
                model, time_limit=rest, exclude=excluded, hint=hint, workers=_WORKERS, at_least=bound
            )
            bound = max(bound, whole.lower_bound)
            if best is None or (whole.nodes, not whole.proven) <= (best.nodes, not best.proven):
                best = whole
        except NoAddition as e:
            bound = max(bound, e.lower_bound)
            if best is None:
                raise
    proven = best.proven or best.nodes <= bound
    seconds = time.perf_counter() - began  # every solve's time, the greedy start's not
    return replace(best, lower_bound=min(bound, best.nodes), proven=proven, seconds=seconds)


def _opened(model: PlacementModel, hint: Sequence[Mapping[str, int]]) -> int:
    offered = {n for o in model.offers for n in o.nodes}
    return len({n for counts in hint for n, k in counts.items() if k and n in offered})


def _label(offers: Sequence[Offer], added: Sequence[int]) -> str:
    parts = [f"{o.template} x{k}" for o, k in zip(offers, added, strict=True) if k]
    return ", ".join(parts) or "nothing"


def provision_on(baseline: Baseline, request: ProvisionRequest) -> ProvisionResult:
    """The answer on a settled cluster (see the module notes)."""
    if request.max_per_template < 1:
        raise ProvisionError(f"--max-per-template must be at least 1, got {request.max_per_template}")
    templates = _templates(baseline, request)
    cluster = baseline.cluster
    pending_before = tuple(_pending(cluster))
    run = _run_pods(baseline)
    autoscaler = None
    if request.compare_autoscaler:
        from kubespread.plan.autoscaler import estimate

        autoscaler = estimate(baseline, templates, request.max_per_template).to_dict()
    if not pending_before:
        return ProvisionResult(
            (),
            True,
            0,
            (),
            _placements(cluster, run),
            (),
            autoscaler=autoscaler,
            after=baseline,
            before=baseline,
        )
    pods = cluster.pods
    profile = _profile(baseline, [pods[k] for k in run])
    problem = _problem(baseline, templates, run, profile, request.max_per_template)
    _unhostable(problem, set(pending_before), cluster, profile)
    model = _without_full_nodes(problem.model)
    excluded: list[tuple[int, ...]] = []
    notes: list[str] = []
    sizes = [(-node_allocatable(t.node).milli_cpu, t.cost) for t in templates]
    greedy: list[list[dict[str, int]]] = []

    def start() -> list[dict[str, int]]:
        if not greedy:
            greedy.append(_greedy(cluster, problem, run, profile, sizes))
        return greedy[0]

    seconds = 0.0
    large = sum(len(g.nodes) for g in model.groups) > _SMALL_MODEL
    for attempt in range(1, request.max_replays + 1):
        try:
            answer = _solve(model, request, excluded, start)
        except SolveError as e:
            if excluded:
                raise ProvisionError(
                    f"no addition within the bounds replays: {len(excluded)} the model found were "
                    f"turned down by the replay ({e})"
                ) from None
            raise ProvisionError(str(e)) from None
        seconds += answer.seconds
        chosen = [nodes[:k] for nodes, k in zip(problem.offered, answer.added, strict=True)]
        after = replay(baseline, [n for nodes in chosen for n in nodes])
        left = _pending(after.cluster)
        unplaced = model.count - answer.placed
        if len(left) <= unplaced:
            if attempt > 1:
                notes.append(
                    f"the model's smallest addition did not replay ({len(excluded)} turned down); "
                    f"this is the smallest that does"
                )
            return _result(
                baseline, after, templates, problem, answer, chosen, run, notes, attempt, seconds, autoscaler
            )
        if large:
            # a large model: solving again without this vector would take as long and end
            # much the same; grow it where the pods left pending fit instead
            grown = answer
            for _ in range(request.max_replays):
                more = _grown(after, problem, grown.added, profile, sizes)
                if more == grown.added:
                    break
                grown = replace(grown, added=more, proven=False)
                chosen = [nodes[:k] for nodes, k in zip(problem.offered, more, strict=True)]
                after = replay(baseline, [n for nodes in chosen for n in nodes])
                if len(_pending(after.cluster)) <= unplaced:
                    notes.append(
                        f"{_label(model.offers, answer.added)}: the model places every pod but "
                        f"kube-scheduler, one pod at a time, leaves {len(left) - unplaced} pending (e.g. "
                        f"{left[0]}); grown by {grown.nodes - answer.nodes} node(s) where they then fit "
                        "(not proven the fewest)"
                    )
                    return _result(
                        baseline,
                        after,
                        templates,
                        problem,
                        grown,
                        chosen,
                        run,
                        notes,
                        attempt,
                        seconds,
                        autoscaler,
                    )
        excluded.append(answer.added)
        notes.append(
            f"{_label(model.offers, answer.added)}: the model places every pod but kube-scheduler, one "
            f"pod at a time, leaves {len(left) - unplaced} pending (e.g. {left[0]}): cut, solved again"
        )
    raise ProvisionError(
        f"no addition the model found replayed within {request.max_replays} tries "
        f"(last: {notes[-1] if notes else '-'}); raise --max-replays"
    )


def _placements(cluster: ClusterState, run: Sequence[str]) -> dict[str, str]:
    out = {}
    for k in run:
        node = cluster.node_of(k) if k in cluster.pods else None
        if node:
            out[k] = node
    return dict(sorted(out.items()))


def _result(
    baseline: Baseline,
    after: Baseline,
    templates: Sequence[NodeTemplate],
    problem: _Problem,
    answer: OfferSolution,
    chosen: Sequence[Sequence[Node]],
    run: Sequence[str],
    notes: list[str],
    replays: int,
    seconds: float,
    autoscaler: Mapping[str, Any] | None,
) -> ProvisionResult:
    cluster = after.cluster
    run_after = _run_pods(after)
    placements = _placements(cluster, run_after)
    per_node: dict[str, int] = {}
    for node in placements.values():
        per_node[node] = per_node.get(node, 0) + 1
    additions = []
    for t, nodes in zip(templates, chosen, strict=True):
        if not nodes:
            continue
        names = tuple(n.metadata.name for n in nodes)
        additions.append(
            Addition(
                t.name, t.zone, len(nodes), t.cost * len(nodes), names, sum(per_node.get(n, 0) for n in names)
            )
        )
    pending_after = tuple(
        PendingAfter(k, _workload(cluster.pods[k]), after.sim.pending_reasons.get(k, ""))
        for k in _pending(cluster)
    )
    return ProvisionResult(
        tuple(additions),
        answer.proven,
        answer.lower_bound,
        pending_after,
        placements,
        tuple(_pending(baseline.cluster)),
        tuple(notes),
        replays,
        seconds,
        autoscaler,
        after=after,
        before=baseline,
    )
