"""How many more replicas of a pod fit: cluster-capacity's answer and the proven maximum.

``greedy`` is cluster-capacity's semantics: clones of the template scheduled one after
another by the real scheduler, each bound before the next, until the first stays pending.
The scheduler places each clone on its best-scored node with no look-ahead, so it can strand
capacity (a zone filled early, then spread forbids the rest). ``maximum`` asks the CP-SAT
model how many fit in any arrangement, re-checks that arrangement with the scheduler's
Filter, and says which constraint families bind (relaxing one at a time and re-solving).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubespread.api.core import Pod
from kubespread.api.keys import LABEL_HOSTNAME
from kubespread.cluster.state import ClusterState
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.solve import (
    ANTI_AFFINITY,
    FAMILIES,
    RESOURCES,
    SPREAD,
    Placement,
    PlacementModel,
    SolveError,
    VerificationError,
    build_model,
    iter_clones,
    relaxed,
    solve,
    verify,
)

__all__ = ["DEFAULT_MAX", "CapacityResult", "binding_limits", "greedy", "maximum"]

#: how many clones to try when no --max is given (cluster-capacity has no limit; a bound
#: keeps a template that requests nothing from running forever)
DEFAULT_MAX: Final = 1000

_ZONE: Final = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class CapacityResult:
    """The solver's maximum, where it puts the replicas, and what stops more."""

    maximum: int
    proven: bool
    counts: dict[str, int]
    per_domain: dict[str, dict[str, int]]
    limited_by: list[str]
    seconds: float


def greedy(cluster: ClusterState, template: Pod, profile: Profile, max_count: int = DEFAULT_MAX) -> int:
    """cluster-capacity: schedule clones one by one (each bound before the next) until one
    stays pending or ``max_count`` are placed; the cluster is left as it was."""
    pods = iter_clones(template, max_count, set(cluster.pods))
    bound: list[Pod] = []
    with cluster.hypothetical():
        try:
            for pod in pods:
                decision = schedule_one(pod, cluster, profile)
                if decision.selected is None:
                    break
                cluster.add(pod)
                cluster.bind(pod.key, decision.selected)
                bound.append(pod)
        finally:
            for pod in bound:
                cluster.delete_pod(pod.key)
    return len(bound)


def _per_domain(model: PlacementModel, counts: dict[str, int], keys: list[str]) -> dict[str, dict[str, int]]:
    labels = {n.name: n.labels for n in model.nodes}
    out: dict[str, dict[str, int]] = {}
    for key in keys:
        row: dict[str, int] = {}
        for node, k in counts.items():
            value = labels[node].get(key)
            if value is not None:
                row[value] = row.get(value, 0) + k
        out[key] = dict(sorted(row.items()))
    return out


def _nodes(names: list[str], shown: int = 5) -> str:
    """``nodes a1,b1``, or ``40 nodes (a1,a2,a3,a4,a5,...)``: a line stays readable."""
    if len(names) <= shown:
        return f"nodes {','.join(names)}"
    return f"{len(names)} nodes ({','.join(names[:shown])},...)"


def binding_limits(model: PlacementModel, best: int, time_limit: float) -> list[str]:
    """What binds at the maximum: each family whose removal lets more replicas fit."""
    out: list[str] = []
    for family in FAMILIES:
        if family == SPREAD and not model.spreads:
            continue
        if family == ANTI_AFFINITY and not model.anti_keys:
            continue
        loose = _try_solve(relaxed(model, family), time_limit)
        if loose is None:
            out.append(f"{family}: not decided within the time limit")
            continue
        if loose.placed <= best:
            continue
        if family == RESOURCES:
            full = [n for n in model.nodes if n.limited_by]
            by_resource: dict[str, list[str]] = {}
            for n in full:
                for r in n.limited_by:
                    by_resource.setdefault(r, []).append(n.name)
            out.extend(f"{r} on {_nodes(names)}" for r, names in sorted(by_resource.items()))
            if not by_resource:
                out.append("resources")
        elif family == SPREAD:
            out.extend(_binding_spreads(model, best, time_limit))
        else:
            out.extend(f"pod anti-affinity {k}" for k in model.anti_keys)
    return out


def _binding_spreads(model: PlacementModel, best: int, time_limit: float) -> list[str]:
    """The spread constraints whose removal alone lets more fit (all of them when only
    removing them together does)."""
    names = [f"topology spread {s.topology_key} maxSkew {s.max_skew}" for s in model.spreads]
    if len(model.spreads) == 1:
        return names
    out = []
    for i, name in enumerate(names):
        spreads = model.spreads[:i] + model.spreads[i + 1 :]
        loose = PlacementModel(model.count, model.nodes, spreads, model.anti_keys, model.relaxed)
        found = _try_solve(loose, time_limit)
        if found is None or found.placed > best:
            out.append(name if found is not None else f"{name}: not decided within the time limit")
    return out or names


def _try_solve(model: PlacementModel, time_limit: float) -> Placement | None:
    """A re-solve for ``limitedBy``: None when the solver found nothing within its share of
    the time (the main answer stands; only this explanation is left undecided). A model the
    scheduler disagrees with still raises."""
    try:
        return solve(model, time_limit=time_limit)
    except VerificationError:
        raise
    except SolveError:
        return None


def maximum(
    cluster: ClusterState,
    template: Pod,
    profile: Profile,
    *,
    max_count: int = DEFAULT_MAX,
    time_limit: float = 10.0,
) -> CapacityResult:
    """The most copies of ``template`` the cluster holds (at most ``max_count``), proven when
    CP-SAT reports OPTIMAL, re-checked with the scheduler's Filter."""
    model = build_model(cluster, template, profile, max_count)
    # limitedBy names the resources of the nodes the optimum fills up
    result = solve(model, time_limit=time_limit)
    verify(cluster, template, profile, result.counts)
    saturated = set(result.saturated)
    model_for_limits = PlacementModel(
        model.count,
        [n if n.name in saturated else type(n)(n.name, n.labels, n.capacity, ()) for n in model.nodes],
        model.spreads,
        model.anti_keys,
    )
    limited_by: list[str] = []
    if result.placed >= max_count:
        limited_by.append(f"max {max_count}")
    elif result.proven:
        limited_by = binding_limits(model_for_limits, result.placed, max(0.1, time_limit / 4))
    if not model.nodes:
        limited_by = ["no feasible node"]
    keys = [s.topology_key for s in model.spreads] + model.anti_keys
    if not keys and any(_ZONE in n.labels for n in model.nodes):
        keys = [_ZONE]
    keys = [k for k in dict.fromkeys(keys) if k != LABEL_HOSTNAME] or [LABEL_HOSTNAME]
    return CapacityResult(
        maximum=result.placed,
        proven=result.proven,
        counts=result.counts,
        per_domain=_per_domain(model, result.counts, keys),
        limited_by=limited_by,
        seconds=result.seconds,
    )
