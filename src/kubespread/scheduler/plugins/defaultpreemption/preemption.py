"""The preemption evaluator (framework/preemption and DefaultPreemption's victim selection):
which lower-priority pods to evict on which node so that a pod fits.

* ``select_victims_on_node``: take every lower-priority pod off the node and run the filters;
  if the pod fits, put them back one by one, the PDB-violating ones first, each group most
  important first, keeping each that still lets the pod fit. The rest are the victims.
* ``dry_run``: ``select_victims_on_node`` over the potential nodes from an offset, until
  enough candidates are found (one that violates no PDB at least).
* ``pick_one_node``: pickOneNodeForPreemption's criteria in order.

The filters run on the cluster itself: the pods are taken off and put back inside
``ClusterState.hypothetical`` (only the plugins' derived indexes follow), and each run
computes PreFilter afresh, which is what kube-scheduler's PreFilter AddPod/RemovePod
extensions amount to.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from kubespread.api.core import Pod
from kubespread.api.policy import PodDisruptionBudget
from kubespread.api.selectors import compile_label_selector
from kubespread.cluster.nodeinfo import NodeInfo
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.framework import FrameworkHandle, RemovalFilter, RemovalFilters, Status

__all__ = [
    "MIN_CANDIDATE_NODES_ABSOLUTE",
    "MIN_CANDIDATE_NODES_PERCENTAGE",
    "PICK_FIRST",
    "PICK_ONLY",
    "PICK_REASONS",
    "Candidate",
    "DryRun",
    "dry_run",
    "filter_pods_with_pdb_violation",
    "importance_key",
    "num_candidates",
    "pick_one_node",
    "pick_one_node_why",
    "pod_priority",
    "select_victims_on_node",
    "start_time",
    "violated_budgets",
]

#: DefaultPreemptionArgs' defaults
MIN_CANDIDATE_NODES_PERCENTAGE: Final = 10
MIN_CANDIDATE_NODES_ABSOLUTE: Final = 100
MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
#: MaxInt32 + 1: added to each victim's priority so that every term of the sum is positive
_PRIORITY_OFFSET: Final = 2**31


def pod_priority(pod: Pod) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return pod.spec.priority or 0


def start_time(pod: Pod) -> float:
    """GetPodStartTime as a number of seconds: status.startTime; a pod without one (bound but
    not started) counts as starting now, later than any recorded time: +inf."""
    stamp = pod.status.start_time
    if not stamp:
        return math.inf
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def importance_key(pod: Pod) -> tuple[int, float]:
    """Sorting by this key puts the more important pod first (MoreImportantPod): higher
    priority, then the earlier start."""
    return (-pod_priority(pod), start_time(pod))


def violated_budgets(
    pods: Iterable[Pod], pdbs: Sequence[PodDisruptionBudget], *, empty_selects_all: bool = False
) -> list[list[str]]:
    """Per pod, in the order given, the names of the budgets evicting it would break. Each
    budget starts from its status.disruptionsAllowed; a pod it selects (same namespace; a nil
    selector selects none, nor does an empty one unless ``empty_selects_all``: v1.38's
    kubernetes#141785) and that is not already in status.disruptedPods uses one disruption;
    the pod breaks every budget it uses that goes below zero."""
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    selectors = [compile_label_selector(pdb.spec.selector) for pdb in pdbs]
    out: list[list[str]] = []
    for pod in pods:
        broken: list[str] = []
        labels = pod.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                sel = selectors[i]
                if (sel.empty and not empty_selects_all) or not sel.matches(labels):
                    continue
                if pod.metadata.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    broken.append(pdb.metadata.name)
        out.append(broken)
    return out


def filter_pods_with_pdb_violation(
    pods: Iterable[Pod], pdbs: Sequence[PodDisruptionBudget], *, empty_selects_all: bool = False
) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), each in the order given (see ``violated_budgets``)."""
    pods = list(pods)
    violating: list[Pod] = []
    fine: list[Pod] = []
    budgets = violated_budgets(pods, pdbs, empty_selects_all=empty_selects_all)
    for pod, broken in zip(pods, budgets, strict=True):
        (violating if broken else fine).append(pod)
    return violating, fine


def _off_node(pod: Pod) -> Pod:
    """The pod as if taken off its node: a shallow copy without spec.nodeName."""
    new = copy.copy(pod)
    spec = copy.copy(pod.spec)
    spec.node_name = ""
    new.spec = spec
    return new


def select_victims_on_node(
    handle: FrameworkHandle,
    cluster: ClusterState,
    pod: Pod,
    info: NodeInfo,
    pdbs: Sequence[PodDisruptionBudget],
    removal: RemovalFilters | None = None,
    *,
    empty_selects_all: bool = False,
) -> tuple[list[Pod], int, Status]:
    """SelectVictimsOnNode: (victims most important first, how many violate a PDB, status).
    The status is UnschedulableAndUnresolvable when the node has no lower-priority pod, the
    filters' rejection when the pod does not fit even without them, else Success. The
    cluster is left as it was. With ``removal`` (the handle's ``removal_filters``), a node
    whose filters can tell is judged on copies of its NodeInfo; the others, by taking the
    pods off the cluster and putting them back."""
    priority = pod_priority(pod)
    potential = [p for p in info.pods.values() if pod_priority(p) < priority]
    if not potential:
        return [], 0, Status.unresolvable(MSG_NO_VICTIMS)
    verdict = removal.on_node(info.index, potential) if removal is not None else None
    if verdict is not None:
        return _select_judged(verdict, potential, pdbs, empty_selects_all=empty_selects_all)
    index = info.index
    off: set[str] = set()

    def take_off(p: Pod) -> None:
        cluster.update_pod(_off_node(p))
        off.add(p.key)

    def put_back(p: Pod) -> None:
        cluster.update_pod(p)  # the very object that was there
        off.discard(p.key)

    with cluster.hypothetical():
        try:
            for p in potential:
                take_off(p)
            status = handle.run_filters(pod, index)
            if not status.is_success:
                return [], 0, status
            victims, violations = _reprieve(
                potential,
                pdbs,
                empty_selects_all,
                put_back=put_back,
                fits=lambda: handle.run_filters(pod, index).is_success,
                take_off=take_off,
            )
        finally:
            for p in potential:
                if p.key in off:
                    put_back(p)
    return victims, violations, Status()


def _select_judged(
    verdict: RemovalFilter,
    potential: list[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    *,
    empty_selects_all: bool = False,
) -> tuple[list[Pod], int, Status]:
    """select_victims_on_node's search with the filters' verdict for a set of pods gone."""
    status = verdict(potential)
    if not status.is_success:
        return [], 0, status
    off = list(potential)
    victims, violations = _reprieve(
        potential,
        pdbs,
        empty_selects_all,
        put_back=off.remove,
        fits=lambda: verdict(off).is_success,
        take_off=off.append,
    )
    return victims, violations, Status()


def _reprieve(
    potential: list[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    empty_selects_all: bool,
    *,
    put_back: Callable[[Pod], object],
    fits: Callable[[], bool],
    take_off: Callable[[Pod], object],
) -> tuple[list[Pod], int]:
    """SelectVictimsOnNode's reprieve, once for both ways of judging a node: with every
    lower-priority pod gone, put each back (the PDB-violating ones first, most important
    first) and keep it only if the pod still fits; (victims most important first, how many
    of them violate a PDB)."""
    potential.sort(key=importance_key)
    violating, fine = filter_pods_with_pdb_violation(potential, pdbs, empty_selects_all=empty_selects_all)
    victims: list[Pod] = []
    violations = 0
    for group, counts in ((violating, True), (fine, False)):
        for p in group:
            put_back(p)
            if not fits():
                take_off(p)
                victims.append(p)
                violations += counts
    if violating and fine:
        victims.sort(key=importance_key)
    return victims, violations


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where the pod fits once ``victims`` (most important first) are gone."""

    node: str
    victims: tuple[Pod, ...]
    pdb_violations: int


@dataclass(slots=True)
class DryRun:
    """DryRunPreemption's answer: the candidates (non-violating first) and, per node tried
    without success, why."""

    candidates: list[Candidate]
    statuses: dict[str, Status]


def num_candidates(
    num_nodes: int,
    percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
    absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE,
) -> int:
    """calculateNumCandidates: percentage of the nodes (integer division), at least
    ``absolute``, at most all of them."""
    return min(max(num_nodes * percentage // 100, absolute), num_nodes)


def dry_run(
    handle: FrameworkHandle,
    cluster: ClusterState,
    pod: Pod,
    potential: Sequence[NodeInfo],
    pdbs: Sequence[PodDisruptionBudget],
    offset: int,
    wanted: int,
    *,
    empty_selects_all: bool = False,
) -> DryRun:
    """DryRunPreemption, one node after another from ``offset`` (wrapping): it stops once it
    has ``wanted`` candidates of which at least one violates no PDB."""
    fine: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, Status] = {}
    n = len(potential)
    removal = handle.removal_filters(pod) if n else None
    for i in range(n):
        info = potential[(offset + i) % n]
        victims, violations, status = select_victims_on_node(
            handle, cluster, pod, info, pdbs, removal, empty_selects_all=empty_selects_all
        )
        if status.is_success and victims:
            c = Candidate(info.name, tuple(victims), violations)
            if violations == 0:
                if len(fine) < wanted:
                    fine.append(c)
            elif len(violating) < wanted:
                violating.append(c)
            if fine and len(fine) + len(violating) >= wanted:
                break
            continue
        if status.is_success:
            status = Status.error(f'expected at least one victim pod on node "{info.name}"')
        statuses[info.name] = status
    return DryRun(fine + violating, statuses)


def _earliest_top_start(victims: Sequence[Pod]) -> float:
    """GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    top = max(pod_priority(p) for p in victims)
    return min(start_time(p) for p in victims if pod_priority(p) == top)


#: why pickOneNodeForPreemption chose its node: the criterion that left one candidate
PICK_REASONS: Final = (
    "fewest PodDisruptionBudget violations",
    "lowest priority of its most important victim",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start of its most important victims",
)
PICK_ONLY: Final = "the only node where preemption helps"
PICK_FIRST: Final = "tied on every criterion: the first candidate"


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption: the candidate with the fewest PDB violations; among those
    the lowest highest-priority victim; then the smallest sum of victim priorities (each
    offset by MaxInt32+1); then the fewest victims; then the latest earliest start among
    the highest-priority victims; then the first in candidate order."""
    return pick_one_node_why(candidates)[0]


def pick_one_node_why(candidates: Sequence[Candidate]) -> tuple[Candidate | None, str]:
    """pick_one_node and why that node won: the criterion (PICK_REASONS) that left it alone,
    PICK_ONLY for a single candidate, PICK_FIRST when every criterion tied."""
    if not candidates:
        return None, ""
    if len(candidates) == 1:
        return candidates[0], PICK_ONLY

    def sum_priorities(c: Candidate) -> int:
        return sum(pod_priority(p) + _PRIORITY_OFFSET for p in c.victims)

    criteria: tuple[Callable[[Candidate], float], ...] = (
        lambda c: -c.pdb_violations,
        lambda c: -pod_priority(c.victims[0]),
        lambda c: -sum_priorities(c),
        lambda c: -len(c.victims),
        lambda c: _earliest_top_start(c.victims),
    )
    remaining = list(candidates)
    for score, why in zip(criteria, PICK_REASONS, strict=True):
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return remaining[0], why
    return remaining[0], PICK_FIRST
