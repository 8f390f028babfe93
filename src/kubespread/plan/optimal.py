"""``kubespread schedule --optimal``: after the greedy run, the new pods solved at once.

When pods stay pending, every workload with a pending pod is taken, with all of its pods of
this run (those the greedy scheduler placed and those it left pending), and the pods are
placed by the CP-SAT model (``kubespread.solve``) on the final cluster without them (every
other pod fixed where it is). A workload's pods form groups of copies of one template: a
ReplicaSet's replicas are one group, a rollout's two ReplicaSets two, each StatefulSet pod a
group of its own. When that does not place them all, the scope widens to every pod of the
run (a workload the scheduler placed in full may have to move to make room).
The arrangement is re-checked with the scheduler's own Filter (``solve.verify_groups``).

A **bind order** then makes the greedy scheduler land them exactly there: the pods are
replayed one by one through ``schedule_one`` on a copy of that cluster; a pod goes where the
scheduler sends it when that node still has room for its group in the arrangement (copies
are interchangeable), otherwise it is pinned with a required node affinity on
``metadata.name`` to a node that still has room, and scheduled again; a pod no node takes
yet waits for the others and is tried again. When no waiting pod lands, a search for the
order with the fewest pins takes over (``_Search``: plain binds and pins from each state,
states in order of pins used, each once, within a budget of scheduler cycles and seconds).
The replay must reproduce the arrangement node for node: an error says that no order does,
or that the search was cut short.

When no arrangement places them all, the most the model places is reported, ``proven`` when
CP-SAT proved that no arrangement places them all, with the constraint families that bind
(each one relaxed in turn) and a minimal conflicting set (``solve.conflict``: one assumption
per constraint, the solver's infeasible subset shrunk until each member is needed).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubespread.api.core import Pod
from kubespread.api.keys import zone_of
from kubespread.cluster.state import ClusterState
from kubespread.controllers.statefulset import LABEL_POD_INDEX, LABEL_POD_NAME
from kubespread.plan.capacity import binding_limits
from kubespread.plan.workloads import cluster_without, template_key, unbound, workload_of
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.selection import NodeOrder
from kubespread.sim.placement import PlacementResult
from kubespread.sim.rows import JsonDoc
from kubespread.solve import SolveError, VerificationError, build_groups, conflict, solve, verify_groups

__all__ = [
    "BindStep",
    "Comparison",
    "OptimalResult",
    "ReplayCutShort",
    "ReplayError",
    "greedy_vs_optimal",
    "optimal",
    "per_zone",
    "pinned",
    "replay",
]

#: the scopes tried in turn
PENDING_WORKLOADS: Final = "pending workloads"
ALL_NEW_PODS: Final = "all new pods"


#: the bind-order search's budget (once the greedy replay is stuck): trial scheduler cycles
SEARCH_CYCLES: Final = 20_000
#: and seconds
SEARCH_SECONDS: Final = 20.0


class ReplayError(SolveError):
    """No order of plain and pinned binds makes the scheduler reproduce the arrangement."""


class ReplayCutShort(ReplayError):
    """The search for a bind order ran out of budget before it found one or proved that none
    exists."""


@dataclass(frozen=True, slots=True)
class BindStep:
    """One bind of the order that reproduces the optimal arrangement (``bindOrder[]``): the
    pod (namespace/name), its node, and whether it needs a pin (required node affinity
    ``metadata.name In [node]``) to land there."""

    pod: str
    node: str
    pinned: bool

    def to_dict(self) -> JsonDoc:
        return {"pod": self.pod, "node": self.node, "pinned": self.pinned}


@dataclass
class OptimalResult:
    """The ``optimal`` block of ``schedule -o json``; ``error`` says why nothing was solved."""

    workloads: list[str] = field(default_factory=list)
    scope: str = PENDING_WORKLOADS
    assignments: dict[str, str] = field(default_factory=dict)
    greedy: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    proven: bool = False
    bind_order: list[BindStep] = field(default_factory=list)
    limited_by: list[str] = field(default_factory=list)
    conflict: list[str] | None = None
    error: str = ""

    @property
    def title(self) -> str:
        return ", ".join(self.workloads)

    def to_dict(self) -> JsonDoc:
        doc: dict[str, Any] = {
            "workloads": self.workloads,
            "scope": self.scope,
            "assignments": self.assignments,
            "greedy": self.greedy,
            "pending": self.pending,
            "proven": self.proven,
            "bindOrder": [b.to_dict() for b in self.bind_order],
        }
        if self.limited_by:
            doc["limitedBy"] = self.limited_by
        if self.conflict is not None:
            doc["conflict"] = self.conflict
        if self.error:
            doc["error"] = self.error
        return doc


def pinned(pod: Pod, node: str) -> Pod:
    """The pod with a required node affinity ``metadata.name In [node]`` added to each of its
    node selector terms (ANDed with what they already ask)."""
    data = pod.to_dict()
    spec = data.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    pin = {"key": "metadata.name", "operator": "In", "values": [node]}
    required["nodeSelectorTerms"] = [{**t, "matchFields": [*t.get("matchFields", []), pin]} for t in terms]
    return Pod.from_dict(data)


def replay(
    cluster: ClusterState,
    pods: Sequence[Pod],
    profile: Profile,
    room: dict[tuple[int, str], int],
    group_of: dict[str, int],
    *,
    max_cycles: int = SEARCH_CYCLES,
    max_seconds: float = SEARCH_SECONDS,
) -> list[BindStep]:
    """The bind order: each pod through ``schedule_one`` on ``cluster`` (which it leaves as it
    found it), pinned where the scheduler's choice has no room left for its group in ``room``
    ((group, node) -> pods); a pod that lands nowhere yet is tried again after the others.
    When that gets stuck, a search (:class:`_Search`) for the order with the fewest pins.

    Before the search, groups whose pods differ only in who they are (a StatefulSet's names,
    hostnames and pod-name / pod-index labels) are replayed as one: any of them may take any
    of their nodes. That order is kept when the exact pods, replayed as a fresh kube-scheduler
    would, land where it says and the arrangement it makes passes the Filter
    (``verify_groups``); else the groups are searched as they are.

    Raises ReplayError when no order of plain and pinned binds reaches ``room``, and
    ReplayCutShort when the search used ``max_cycles`` scheduler cycles or ``max_seconds``
    before it found an order or proved that none exists."""
    sizes: dict[int, int] = {}
    for pod in pods:
        sizes[group_of[pod.key]] = sizes.get(group_of[pod.key], 0) + 1
    held: dict[int, int] = {}
    for (gi, _), k in room.items():
        if k:
            held[gi] = held.get(gi, 0) + k
    if held != sizes:
        raise ReplayError(f"replay: the arrangement holds {held} pods per group, not {sizes}")
    order, stuck = _greedy(cluster, pods, profile, room, group_of)
    if order is not None:
        return order
    budget = _Budget(max_cycles, time.monotonic() + max_seconds)
    proven = False
    merged = _merged(pods, group_of)
    if merged is not None:
        as_one = {k: merged[g] for k, g in group_of.items()}
        room_of_one: dict[tuple[int, str], int] = {}
        for (gi, node), k in room.items():
            room_of_one[(merged[gi], node)] = room_of_one.get((merged[gi], node), 0) + k
        try:
            order = _find(cluster, pods, profile, room_of_one, as_one, budget)
        except ReplayCutShort:
            pass
        except ReplayError:
            proven = True
        else:
            if _holds(cluster, pods, profile, group_of, order):
                return order
    search = _Search(cluster, pods, profile, room, group_of)
    try:
        return search.fewest_pins(stuck, budget)
    except ReplayCutShort as e:
        if not proven:
            raise
        raise ReplayCutShort(
            f"{e} (with the pods that differ only in name as interchangeable copies, no order "
            "reaches the arrangement)"
        ) from None


#: labels that only name a StatefulSet's pod (the controller's own)
_IDENTITY_LABELS: Final = (LABEL_POD_NAME, LABEL_POD_INDEX)


def _merged(pods: Sequence[Pod], group_of: dict[str, int]) -> dict[int, int] | None:
    """group -> the first group whose pods differ from its own only in who they are; None
    when no two groups do."""
    first: dict[Any, int] = {}
    out: dict[int, int] = {}
    for pod in pods:
        gi = group_of[pod.key]
        if gi in out:
            continue
        data = pod.to_dict()
        data["metadata"] = {
            "namespace": pod.namespace,
            "ownerReferences": data.get("metadata", {}).get("ownerReferences"),
            "labels": {k: v for k, v in pod.metadata.labels.items() if k not in _IDENTITY_LABELS},
        }
        spec = dict(data.get("spec", {}))
        spec.pop("hostname", None)
        spec.pop("nodeName", None)
        out[gi] = first.setdefault(repr((data["metadata"], sorted(spec.items(), key=str))), gi)
    return out if len(set(out.values())) < len(out) else None


def _find(
    cluster: ClusterState,
    pods: Sequence[Pod],
    profile: Profile,
    room: dict[tuple[int, str], int],
    group_of: dict[str, int],
    budget: _Budget,
) -> list[BindStep]:
    """The greedy replay, then the search when it is stuck."""
    order, stuck = _greedy(cluster, pods, profile, room, group_of)
    if order is not None:
        return order
    return _Search(cluster, pods, profile, room, group_of).fewest_pins(stuck, budget)


def _holds(
    cluster: ClusterState,
    pods: Sequence[Pod],
    profile: Profile,
    group_of: dict[str, int],
    order: list[BindStep],
) -> bool:
    """``order`` replayed exactly (these pods, pinned as it says) by a fresh kube-scheduler
    lands each pod where it says, and the arrangement it makes passes the Filter."""
    by_key = {p.key: p for p in pods}
    nodes = NodeOrder.of(cluster)
    added: list[str] = []
    try:
        for entry in order:
            pod = by_key[entry.pod]
            chosen = schedule_one(
                pinned(pod, entry.node) if entry.pinned else pod,
                cluster,
                profile,
                order=nodes,
                timed=False,
            ).selected
            if chosen != entry.node:
                return False
            cluster.add(pod)
            cluster.bind(pod.key, entry.node)
            added.append(pod.key)
    finally:
        for key in added:
            cluster.delete_pod(key)
    groups = list(dict.fromkeys(group_of[p.key] for p in pods))
    by_group: list[dict[str, int]] = [{} for _ in groups]
    for entry in order:
        counts = by_group[groups.index(group_of[entry.pod])]
        counts[entry.node] = counts.get(entry.node, 0) + 1
    templates = [next(p for p in pods if group_of[p.key] == g) for g in groups]
    try:
        verify_groups(cluster, templates, profile, by_group)
    except VerificationError:
        return False
    return True


def _greedy(
    cluster: ClusterState,
    pods: Sequence[Pod],
    profile: Profile,
    room: dict[tuple[int, str], int],
    group_of: dict[str, int],
) -> tuple[list[BindStep] | None, str]:
    """The first try: the pods in turn, each where the scheduler sends it, pinned when that
    node has no room for its group (:func:`_land`), deferred when no node takes it. The bind
    order, or None and the first pod no node took (``cluster`` back as it was either way)."""
    left = dict(room)
    order: list[BindStep] = []
    waiting = list(pods)
    nodes = NodeOrder.of(cluster)  # a fresh kube-scheduler's node order and start index
    while waiting:
        deferred: list[Pod] = []
        for pod in waiting:
            gi = group_of[pod.key]
            landed = _land(cluster, pod, profile, gi, left, nodes)
            if landed is None:
                deferred.append(pod)
                continue
            node, pin = landed
            cluster.add(pod)
            cluster.bind(pod.key, node)
            left[(gi, node)] -= 1
            order.append(BindStep(pod.key, node, pin))
        if len(deferred) == len(waiting):
            for entry in order:
                cluster.delete_pod(entry.pod)
            return None, deferred[0].key
        waiting = deferred
    for entry in order:
        cluster.delete_pod(entry.pod)
    return order, ""


def _land(
    cluster: ClusterState,
    pod: Pod,
    profile: Profile,
    gi: int,
    left: dict[tuple[int, str], int],
    nodes: NodeOrder,
) -> tuple[str, bool] | None:
    """Where the scheduler puts ``pod`` (as created, or pinned to a node with room): only the
    cycle that places it moves the start index, as only that pod would be created."""
    trial = nodes.fork()
    decision = schedule_one(pod, cluster, profile, order=trial, timed=False)
    chosen = decision.selected
    if chosen is not None and left.get((gi, chosen), 0) > 0:
        nodes.next_start = trial.next_start
        return chosen, False
    # every node with room: a pin can change what the Filter counts (spread's
    # nodeAffinityPolicy Honor), so one the pod fails unpinned may take it pinned
    for (g, node), k in left.items():
        if g != gi or k <= 0:
            continue
        trial = nodes.fork()
        if schedule_one(pinned(pod, node), cluster, profile, order=trial, timed=False).selected == node:
            nodes.next_start = trial.next_start
            return node, True
    return None


class _OutOfBudget(Exception):
    """The search used its scheduler cycles or its time."""


@dataclass(slots=True)
class _Budget:
    """What the searches of one replay may use: scheduler cycles, and time until ``deadline``
    (``time.monotonic``)."""

    cycles: int
    deadline: float
    spent: int = 0
    started: float = field(default_factory=time.monotonic)

    def spend(self) -> None:
        if self.spent >= self.cycles or time.monotonic() > self.deadline:
            raise _OutOfBudget
        self.spent += 1


#: a search state: the pods bound per slot (a (group, node) of the arrangement), and
#: nextStartNodeIndex (which node the next cycle starts from: it can break a tie otherwise)
_State = tuple[tuple[int, ...], int]
#: how a state was first reached: the state before and the move (slot, pinned)
_Step = tuple[_State, int, bool]


class _Search:
    """The search for a bind order once the greedy replay is stuck.

    Copies of a group are interchangeable, so a state is the pods bound per slot plus the
    start index; ``cluster`` goes from state to state by binding and deleting copies
    (:meth:`_goto`). The moves from a state: for each group with a pod waiting, its plain bind
    when the scheduler's choice has room for the group, and its pin to each node with room
    when the scheduler then takes it there (a pin to the plain choice included: it can move
    the start index otherwise). States are expanded in order of pins used (the pins of a
    state are tried once every state with fewer pins is), depth first among those with as
    many (the last found first: plain binds run on until stuck, then the latest turn is pinned
    first), each state once. The first complete state reached is an order with the fewest
    pins; when every reachable state is expanded without one, no order exists."""

    def __init__(
        self,
        cluster: ClusterState,
        pods: Sequence[Pod],
        profile: Profile,
        room: dict[tuple[int, str], int],
        group_of: dict[str, int],
    ) -> None:
        self.cluster = cluster
        self.profile = profile
        self.nodes = NodeOrder.of(cluster)  # a fresh kube-scheduler's node order and start index
        self.slots = [s for s, k in room.items() if k > 0]
        self.slot_of = {s: i for i, s in enumerate(self.slots)}
        self.want = tuple(room[s] for s in self.slots)
        self.pods = list(pods)
        self.group_of = group_of
        self.groups = list(dict.fromkeys(group_of[p.key] for p in pods))
        self.group_slots = {g: [i for i, (gi, _) in enumerate(self.slots) if gi == g] for g in self.groups}
        #: per group, its pods not in the cluster now (the next one bound is the last)
        self.free: dict[int, list[Pod]] = {g: [] for g in self.groups}
        for pod in reversed(self.pods):
            self.free[group_of[pod.key]].append(pod)
        #: per slot, the pods bound there now
        self.bound: list[list[Pod]] = [[] for _ in self.slots]
        self.budget = _Budget(0, 0.0)
        self._pins: dict[tuple[str, str], Pod] = {}

    def fewest_pins(self, stuck: str, budget: _Budget) -> list[BindStep]:
        """The order with the fewest pins (see the class notes) within ``budget``; ``stuck``,
        the pod the greedy replay placed nowhere, for the errors."""
        self.budget = budget
        cycles = budget.spent
        root: _State = (tuple(0 for _ in self.slots), 0)
        first: dict[_State, _Step | None] = {root: None}
        expanded: set[_State] = set()
        levels: list[list[tuple[_State, bool]]] = [[(root, False)]]  # (state, its pins?) per pins used
        pins = 0
        try:
            while pins < len(levels):
                stack = levels[pins]
                while stack:
                    state, pin_moves = stack.pop()
                    if pin_moves:
                        found = self._pin_moves(state)
                    else:
                        if state in expanded:
                            continue
                        expanded.add(state)
                        if state[0] == self.want:
                            self._goto(root[0])
                            return self._order(state, first)
                        found = self._plain_moves(state)
                        if len(levels) == pins + 1:
                            levels.append([])
                        levels[pins + 1].append((state, True))
                    for child, slot, pin in reversed(found):
                        if child not in first:
                            first[child] = (state, slot, pin)
                            stack.append((child, False))
                pins += 1
        except _OutOfBudget:
            self._goto(root[0])
            raise ReplayCutShort(
                f"replay: the scheduler places {stuck} on no node with room left, and the search for "
                f"another bind order was cut short ({budget.spent} scheduler cycles, "
                f"{time.monotonic() - budget.started:.1f} s) before it found one or proved none exists"
            ) from None
        self._goto(root[0])
        raise ReplayError(
            f"replay: the scheduler places {stuck} on no node with room left, and no order of "
            f"plain and pinned binds reaches the arrangement (every reachable state searched: "
            f"{len(expanded)}, in {budget.spent - cycles} scheduler cycles)"
        )

    def _plain_moves(self, state: _State) -> list[tuple[_State, int, bool]]:
        """Each waiting group's plain bind from ``state``, when its node has room."""
        self._goto(state[0])
        out = []
        for g in self.groups:
            if not self.free[g]:
                continue
            chosen, start = self._cycle(self.free[g][-1], state[1])
            slot = self.slot_of.get((g, chosen)) if chosen is not None else None
            if slot is not None and state[0][slot] < self.want[slot]:
                out.append((self._child(state, slot, start), slot, False))
        return out

    def _pin_moves(self, state: _State) -> list[tuple[_State, int, bool]]:
        """Each waiting group's pod pinned to each node with room for it, where it lands."""
        self._goto(state[0])
        out = []
        for g in self.groups:
            if not self.free[g]:
                continue
            pod = self.free[g][-1]
            for slot in self.group_slots[g]:
                if state[0][slot] >= self.want[slot]:
                    continue
                node = self.slots[slot][1]
                chosen, start = self._cycle(self._pinned(pod, node), state[1])
                if chosen == node:
                    out.append((self._child(state, slot, start), slot, True))
        return out

    @staticmethod
    def _child(state: _State, slot: int, start: int) -> _State:
        have = list(state[0])
        have[slot] += 1
        return tuple(have), start

    def _order(self, state: _State, first: dict[_State, _Step | None]) -> list[BindStep]:
        """The bind order that reached ``state``: the moves back to the start, then each
        group's pods in their order given to its moves."""
        moves: list[tuple[int, bool]] = []
        step = first[state]
        while step is not None:
            before, slot, pin = step
            moves.append((slot, pin))
            step = first[before]
        moves.reverse()
        queue = {g: [p.key for p in self.pods if self.group_of[p.key] == g] for g in self.groups}
        order = []
        for slot, pin in moves:
            gi, node = self.slots[slot]
            order.append(BindStep(queue[gi].pop(0), node, pin))
        return order

    def _cycle(self, pod: Pod, start: int) -> tuple[str | None, int]:
        """One trial scheduling cycle from start index ``start``: the node chosen and the
        start index after it."""
        self.budget.spend()
        trial = self.nodes.fork()
        trial.next_start = start
        chosen = schedule_one(pod, self.cluster, self.profile, order=trial, timed=False).selected
        return chosen, trial.next_start

    def _pinned(self, pod: Pod, node: str) -> Pod:
        key = (pod.key, node)
        if key not in self._pins:
            self._pins[key] = pinned(pod, node)
        return self._pins[key]

    def _goto(self, have: tuple[int, ...]) -> None:
        """Bind and delete copies until ``cluster`` holds ``have`` pods per slot."""
        for slot, k in enumerate(have):
            while len(self.bound[slot]) > k:
                pod = self.bound[slot].pop()
                self.cluster.delete_pod(pod.key)
                self.free[self.slots[slot][0]].append(pod)
        for slot, k in enumerate(have):
            gi, node = self.slots[slot]
            while len(self.bound[slot]) < k:
                pod = self.free[gi].pop()
                self.cluster.add(pod)
                self.cluster.bind(pod.key, node)
                self.bound[slot].append(pod)


@dataclass(frozen=True, slots=True)
class _Scope:
    """The pods solved together, grouped into copies of one template."""

    members: list[str]
    groups: list[list[str]]
    names: list[str]


def _scope(pods: Mapping[str, Pod], keys: list[str]) -> _Scope:
    shapes: dict[Any, list[str]] = {}
    for k in keys:
        shapes.setdefault(template_key(pods[k]), []).append(k)
    groups = list(shapes.values())
    per_workload: dict[str, int] = {}
    for g in groups:
        w = workload_of(pods[g[0]])
        per_workload[w] = per_workload.get(w, 0) + 1
    names = []
    for g in groups:
        w = workload_of(pods[g[0]])
        names.append(w if per_workload[w] == 1 else (g[0] if len(g) == 1 else f"{g[0]} (+{len(g) - 1})"))
    return _Scope(keys, groups, names)


def optimal(
    result: PlacementResult, *, time_limit: float = 10.0, search_cycles: int = SEARCH_CYCLES
) -> OptimalResult | None:
    """Solve the pending workloads at once, then every new pod when that is not enough (see
    the module notes); None when nothing is pending. ``search_cycles``: the bind-order
    search's budget of scheduler cycles (:func:`replay`)."""
    sim = result.sim
    cluster = sim.cluster
    pods = cluster.pods
    pending_keys = [k for k in (p.key for p in result.final.pending) if k in pods]
    if not pending_keys:
        return None
    run_order = [
        k
        for k in dict.fromkeys([*(p.key for p in result.placements), *pending_keys])
        if k in pods and (k in pending_keys or cluster.node_of(k))
    ]
    workloads = list(dict.fromkeys(workload_of(pods[k]) for k in pending_keys))
    first = [k for k in run_order if workload_of(pods[k]) in set(workloads)]
    scopes = [(PENDING_WORKLOADS, first)]
    if len(run_order) > len(first):
        scopes.append((ALL_NEW_PODS, run_order))
    out = OptimalResult()
    for scope_name, keys in scopes:
        out = _solve_scope(result, keys, scope_name, time_limit, search_cycles)
        if out.error or not out.pending:
            break
    return out


def _solve_scope(
    result: PlacementResult, keys: list[str], scope_name: str, time_limit: float, search_cycles: int
) -> OptimalResult:
    sim = result.sim
    cluster = sim.cluster
    pods = cluster.pods
    scope = _scope(pods, keys)
    out = OptimalResult(
        workloads=list(dict.fromkeys(workload_of(pods[k]) for k in keys)),
        scope=scope_name,
        greedy={k: cluster.node_of(k) for k in keys if cluster.node_of(k)},
    )
    schedulers = {pods[k].spec.scheduler_name or "default-scheduler" for k in keys}
    if len(schedulers) > 1:
        out.error = (
            f"the pods name different schedulers ({', '.join(sorted(schedulers))}); solve one at a time"
        )
        return out
    (scheduler,) = schedulers
    profile = sim.profiles.get(scheduler)
    if profile is None:
        out.error = f"no scheduler profile {scheduler!r}"
        return out
    base = cluster_without(cluster, set(keys))
    templates = [unbound(pods[g[0]]) for g in scope.groups]
    wanted = [(name, t, len(g)) for name, t, g in zip(scope.names, templates, scope.groups, strict=True)]
    hint = [_counts(out.greedy, g) for g in scope.groups]
    try:
        model = build_groups(base, wanted, profile)
        answer = solve(model, time_limit=time_limit, hint=hint)
        verify_groups(base, templates, profile, answer.by_group)
    except SolveError as e:
        out.error = str(e)
        return out
    out.proven = answer.proven
    if answer.placed < len(keys):
        out.pending = sorted(keys)
        if answer.proven:
            out.limited_by = binding_limits(
                model, answer.placed, max(0.1, time_limit / 4), set(answer.saturated)
            )
        out.limited_by.insert(0, f"at most {answer.placed} of {len(keys)} fit")
        out.conflict = conflict(model, time_limit=time_limit)
        if out.conflict is not None:
            out.proven = True  # the assumptions' solve proved "all of them" infeasible
        return out
    group_of = {k: gi for gi, g in enumerate(scope.groups) for k in g}
    room = {(gi, node): k for gi, counts in enumerate(answer.by_group) for node, k in counts.items()}
    try:
        out.bind_order = replay(
            base,
            [unbound(pods[k]) for k in keys],
            profile,
            room,
            group_of,
            max_cycles=search_cycles,
            max_seconds=time_limit,
        )
    except ReplayError as e:
        out.error = str(e)
        return out
    out.assignments = {e.pod: e.node for e in out.bind_order}
    return out


def _counts(greedy: dict[str, str], keys: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        node = greedy.get(k)
        if node:
            out[node] = out.get(node, 0) + 1
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """One node (or zone: ``node`` empty) of ``--optimal``'s side-by-side view: the solved
    workloads' pods there under kube-scheduler's placement and under the optimal one."""

    node: str
    zone: str
    greedy: int
    optimal: int


def greedy_vs_optimal(result: PlacementResult, solved: OptimalResult) -> list[Comparison]:
    """Per node (by name) that holds a solved pod in either arrangement: what ``schedule
    --optimal``'s table and report show. Empty when nothing was solved (an error, or pods
    left pending by the optimal arrangement too)."""
    if solved.error or solved.pending:
        return []
    nodes = result.sim.cluster.nodes
    greedy_counts = _per_node(solved.greedy)
    optimal_counts = _per_node(solved.assignments)
    return [
        Comparison(
            name,
            zone_of(nodes[name].metadata.labels) or "-",
            greedy_counts.get(name, 0),
            optimal_counts.get(name, 0),
        )
        for name in sorted(set(greedy_counts) | set(optimal_counts))
    ]


def per_zone(rows: Sequence[Comparison]) -> list[Comparison]:
    """The per-node comparison summed per zone (``node`` empty), by zone."""
    zones: dict[str, tuple[int, int]] = {}
    for r in rows:
        g, o = zones.get(r.zone, (0, 0))
        zones[r.zone] = (g + r.greedy, o + r.optimal)
    return [Comparison("", z, g, o) for z, (g, o) in sorted(zones.items())]


def _per_node(assignments: Mapping[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in assignments.values():
        counts[node] = counts.get(node, 0) + 1
    return counts
