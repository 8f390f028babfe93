"""How many more replicas of a pod fit: cluster-capacity's answer and the proven maximum.

``greedy`` is cluster-capacity's semantics: clones of the template scheduled one after
another by the real scheduler, each bound before the next, until the first stays pending.
The scheduler places each clone on its best-scored node with no look-ahead, so it can strand
capacity (a zone filled early, then spread forbids the rest). ``maximum`` asks the CP-SAT
model how many fit in any arrangement, re-checks that arrangement with the scheduler's
Filter, and says which constraint families bind (relaxing one at a time and re-solving).

Both count on a settled cluster (:class:`kubespread.sim.baseline.Baseline`): its
Deployments' and StatefulSets' pods created and its pending pods placed, as ``schedule``
leaves them, so the room they take is not counted free. A bare ClusterState is taken as
settled already (the solver's tests build one pod by pod).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates
from kubespread.api.keys import DEFAULT_SCHEDULER_NAME, LABEL_HOSTNAME, LABEL_ZONE
from kubespread.api.meta import KubeObject
from kubespread.cluster.state import ClusterState
from kubespread.cluster.trial import trial
from kubespread.io.loader import LoadedObject
from kubespread.scheduler import default_profile
from kubespread.scheduler.profile import Profile
from kubespread.scheduler.scheduler import schedule_one
from kubespread.scheduler.selection import NodeOrder
from kubespread.sim.baseline import Baseline, SettleError, settle
from kubespread.sim.rows import JsonDoc
from kubespread.solve import (
    AFFINITY,
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

__all__ = [
    "DEFAULT_MAX",
    "CapacityAnswer",
    "CapacityError",
    "CapacityRequest",
    "CapacityResult",
    "binding_limits",
    "capacity",
    "greedy",
    "greedy_counts",
    "maximum",
]

#: how many clones to try when no --max is given (cluster-capacity has no limit; a bound
#: keeps a template that requests nothing from running forever)
DEFAULT_MAX: Final = 1000


@dataclass(frozen=True, slots=True)
class CapacityResult:
    """The solver's maximum, where it puts the replicas, and what stops more."""

    maximum: int
    proven: bool
    counts: dict[str, int]
    per_domain: dict[str, dict[str, int]]
    limited_by: list[str]
    seconds: float


#: what the answers count on: a settled Baseline, or a ClusterState taken as settled
Settled = Baseline | ClusterState


def _cluster(base: Settled) -> ClusterState:
    return base.cluster if isinstance(base, Baseline) else base


def greedy(base: Settled, template: Pod, profile: Profile, max_count: int = DEFAULT_MAX) -> int:
    """cluster-capacity: schedule clones one by one (each bound before the next) until one
    stays pending or ``max_count`` are placed; the cluster is left as it was."""
    return sum(greedy_counts(base, template, profile, max_count).values())


def greedy_counts(
    base: Settled, template: Pod, profile: Profile, max_count: int = DEFAULT_MAX
) -> dict[str, int]:
    """:func:`greedy`'s clones per node (the solver starts its search from it), placed as a
    fresh kube-scheduler places them (its node order, sampling and pick among ties), in a
    trial that takes them away again."""
    cluster = _cluster(base)
    pods = iter_clones(template, max_count, set(cluster.pods))
    counts: dict[str, int] = {}
    order = NodeOrder.of(cluster)
    with trial(cluster):
        for pod in pods:
            decision = schedule_one(pod, cluster, profile, order=order)
            if decision.selected is None:
                break
            cluster.add(pod)
            cluster.bind(pod.key, decision.selected)
            counts[decision.selected] = counts.get(decision.selected, 0) + 1
    return counts


def _per_domain(model: PlacementModel, counts: dict[str, int], keys: list[str]) -> dict[str, dict[str, int]]:
    labels = {n.name: n.labels for g in model.groups for n in g.nodes}
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


def _has(model: PlacementModel, family: str) -> bool:
    if family == SPREAD:
        return any(g.spreads for g in model.groups)
    if family == ANTI_AFFINITY:
        return any(g.anti for g in model.groups)
    if family == AFFINITY:
        return any(g.affinity is not None for g in model.groups)
    return True


def binding_limits(
    model: PlacementModel, best: int, time_limit: float, saturated: Collection[str] | None = None
) -> list[str]:
    """What binds at the maximum: each family whose removal lets more pods fit; for
    resources, the resources that stop the ``saturated`` nodes (all nodes when None)."""
    out: list[str] = []
    many = len(model.groups) > 1
    for family in FAMILIES:
        if not _has(model, family):
            continue
        loose = _try_solve(relaxed(model, family), time_limit)
        if loose is None:
            out.append(f"{family}: not decided within the time limit")
            continue
        if loose.placed <= best:
            continue
        if family == RESOURCES:
            by_resource: dict[str, list[str]] = {}
            for g in model.groups:
                for n in g.nodes:
                    if saturated is not None and n.name not in saturated:
                        continue
                    for r in n.limited_by:
                        names = by_resource.setdefault(r, [])
                        if n.name not in names:
                            names.append(n.name)
            out.extend(f"{r} on {_nodes(names)}" for r, names in sorted(by_resource.items()))
            if not by_resource:
                out.append("resources")
        elif family == SPREAD:
            out.extend(_binding_spreads(model, best, time_limit))
        elif family == ANTI_AFFINITY:
            out.extend(
                dict.fromkeys((f"{g.name}: " if many else "") + t.name for g in model.groups for t in g.anti)
            )
        else:
            out.extend(
                (f"{g.name}: " if many else "") + g.affinity.name
                for g in model.groups
                if g.affinity is not None
            )
    return out


def _binding_spreads(model: PlacementModel, best: int, time_limit: float) -> list[str]:
    """The spread constraints whose removal alone lets more fit (all of them when only
    removing them together does)."""
    many = len(model.groups) > 1
    each = [(gi, i) for gi, g in enumerate(model.groups) for i in range(len(g.spreads))]
    names = [
        (f"{model.groups[gi].name}: " if many else "") + model.groups[gi].spreads[i].name for gi, i in each
    ]
    if len(each) == 1:
        return names
    out = []
    for (gi, i), name in zip(each, names, strict=True):
        groups = list(model.groups)
        g = groups[gi]
        groups[gi] = replace(g, spreads=g.spreads[:i] + g.spreads[i + 1 :])
        found = _try_solve(PlacementModel(groups, model.room, model.relaxed), time_limit)
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
    base: Settled,
    template: Pod,
    profile: Profile,
    *,
    max_count: int = DEFAULT_MAX,
    time_limit: float = 10.0,
    hint: dict[str, int] | None = None,
) -> CapacityResult:
    """The most copies of ``template`` the cluster holds (at most ``max_count``), proven when
    CP-SAT reports OPTIMAL, re-checked with the scheduler's Filter. ``hint``: greedy's
    arrangement (:func:`greedy_counts`), a feasible start for the search."""
    cluster = _cluster(base)
    model = build_model(cluster, template, profile, max_count)
    group = model.groups[0]
    result = solve(model, time_limit=time_limit, hint=None if hint is None else [hint])
    verify(cluster, template, profile, result.counts)
    limited_by: list[str] = []
    if result.placed >= max_count:
        limited_by.append(f"max {max_count}")
    elif result.proven:
        # limitedBy names the resources of the nodes the optimum fills up
        limited_by = binding_limits(model, result.placed, max(0.1, time_limit / 4), set(result.saturated))
    if not group.nodes:
        limited_by = ["no feasible node"]
    keys = [s.topology_key for s in group.spreads] + group.anti_keys
    if group.affinity is not None:
        keys += list(group.affinity.keys)
    if not keys and any(LABEL_ZONE in n.labels for n in group.nodes):
        keys = [LABEL_ZONE]
    keys = [k for k in dict.fromkeys(keys) if k != LABEL_HOSTNAME] or [LABEL_HOSTNAME]
    return CapacityResult(
        maximum=result.placed,
        proven=result.proven,
        counts=result.counts,
        per_domain=_per_domain(model, result.counts, keys),
        limited_by=limited_by,
        seconds=result.seconds,
    )


# ------------------------------------------------------------------ the command


#: the kinds whose pod template a TEMPLATE file may give
TEMPLATE_KINDS: Final = ("Deployment", "ReplicaSet", "StatefulSet")


class CapacityError(Exception):
    """``capacity`` cannot count as asked: ``message`` is one located line; ``problems`` are
    the cluster files' located problems when they do not settle (then ``message`` says what
    they stopped)."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.problems = tuple(problems)


@dataclass(frozen=True, slots=True)
class CapacityRequest:
    """What ``kubespread capacity`` counts on: the cluster files' objects (settled as
    ``schedule`` settles them), the TEMPLATE file's objects and how to name that file in a
    message, the scheduler profiles (None: v1.35's defaults), and the bounds."""

    cluster: Sequence[LoadedObject]
    template: Sequence[LoadedObject]
    template_file: str
    profiles: Mapping[str, Profile] | None = None
    max_count: int = DEFAULT_MAX
    time_limit: float = 10.0
    #: the Kubernetes version the cluster settles and the template is admitted as (None: the
    #: profiles', else 1.35)
    features: FeatureGates | None = None


@dataclass(frozen=True, slots=True)
class CapacityAnswer:
    """Both answers for one template (``label``: ``Deployment default/web``): the greedy
    count and the solver's :class:`CapacityResult`."""

    template: str
    greedy: int
    maximum: int
    proven: bool
    limited_by: tuple[str, ...]
    per_domain: Mapping[str, Mapping[str, int]]
    placement: Mapping[str, int]
    seconds: float

    def to_dict(self) -> JsonDoc:
        """The ``-o json`` document (its member names are documented in the README)."""
        return {
            "template": self.template,
            "greedy": self.greedy,
            "maximum": self.maximum,
            "proven": self.proven,
            "limitedBy": list(self.limited_by),
            "perDomain": {k: dict(v) for k, v in self.per_domain.items()},
            "placement": dict(self.placement),
            "solveSeconds": round(self.seconds, 3),
        }


def _owner(workload: KubeObject, baseline: Baseline) -> KubeObject:
    """The workload its pods are controlled by: the template file's, with the uid the settled
    cluster gives the same workload (a snapshot's, or the one the API server gave a manifest
    of the cluster files), else a made-up one (a manifest has none, and a controller
    reference must name one)."""
    settled = baseline.cluster.get(workload.KIND, workload.key)
    if settled is not None and settled.metadata.uid:
        uid = settled.metadata.uid
    else:
        uid = workload.metadata.uid or f"capacity-{workload.KIND.lower()}-{workload.metadata.name}"
    owner = workload.copy()
    owner.metadata.uid = uid
    return owner


def template_pod(request: CapacityRequest, baseline: Baseline) -> tuple[Pod, str]:
    """The one Pod of the TEMPLATE file, or the pod its Deployment/ReplicaSet/StatefulSet
    would create; and how to name it (``Deployment default/web``)."""
    from kubespread.controllers.pods import pod_from_template

    where = request.template_file
    if len(request.template) != 1:
        raise CapacityError(
            f"{where}: TEMPLATE must hold exactly one Pod, Deployment, ReplicaSet or StatefulSet"
        )
    obj = request.template[0].obj
    if isinstance(obj, Pod):
        return obj, f"Pod {obj.key}"
    if obj.KIND in TEMPLATE_KINDS:
        owner = _owner(obj, baseline)
        template = owner.spec.template  # type: ignore[attr-defined]
        return pod_from_template(template, owner, name=obj.metadata.name), f"{obj.KIND} {obj.key}"
    kind = obj.KIND or "untyped object"
    kinds = ", ".join(TEMPLATE_KINDS)
    raise CapacityError(f"{where}: TEMPLATE is a {kind}: give a Pod or a workload ({kinds})")


def admitted(template: Pod, request: CapacityRequest) -> Pod:
    """The template as the API server would store each replica: defaulted (requests from
    limits), through the admission chain (priority, default tolerations) and with
    matchLabelKeys merged; a kubectl dump's pod is stored already. Refused: CapacityError
    located at the refused field of the TEMPLATE object (a workload's: under spec.template)."""
    from kubespread.admission.apiserver import create, is_stored
    from kubespread.admission.framework import AdmissionContext, AdmissionOptions, Rejection
    from kubespread.api.apps import PriorityClass

    if is_stored(template):
        return template
    classes = [lo.obj for lo in request.cluster if isinstance(lo.obj, PriorityClass)]
    features = request.features
    if features is None and request.profiles:
        features = next(iter(request.profiles.values())).features
    options = AdmissionOptions(features=features or FeatureGates())
    outcome = create(template.copy(), AdmissionContext.create(priority_classes=classes, options=options))
    if isinstance(outcome, Rejection):
        source = request.template[0]
        found = next((c.get("field") for c in outcome.causes if c.get("field")), None)
        if found and source.obj.KIND != "Pod":
            found = f"spec.template.{found}"
        where = f"{source.where(found)}: {source.ref}"
        raise CapacityError(f"{where}: the API server would refuse the template's pods: {outcome.message}")
    assert isinstance(outcome, Pod)
    return outcome


def profile_for(template: Pod, profiles: Mapping[str, Profile] | None) -> Profile:
    """The profile the template's schedulerName names (v1.35's defaults without a config)."""
    name = template.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
    if profiles is None:
        if name != DEFAULT_SCHEDULER_NAME:
            raise CapacityError(f'the template asks for scheduler "{name}": give its --scheduler-config')
        return default_profile()
    if name not in profiles:
        known = ", ".join(sorted(profiles))
        raise CapacityError(
            f'the template asks for scheduler "{name}", which --scheduler-config lacks ({known})'
        )
    return profiles[name]


def capacity(request: CapacityRequest) -> CapacityAnswer:
    """``kubespread capacity``: settle the cluster files (their workloads run their pods,
    their pending pods are placed), make the template's pod as the API server would store
    it, pick its profile, then count greedily and solve for the maximum (greedy's
    arrangement as the solver's start). CapacityError for anything the user must fix."""
    try:
        baseline = settle(request.cluster, profiles=request.profiles, features=request.features)
    except SettleError as e:
        raise CapacityError("in the cluster files; nothing was counted", e.problems) from None
    pod, label = template_pod(request, baseline)
    pod = admitted(pod, request)
    profile = profile_for(pod, request.profiles)
    try:
        start = greedy_counts(baseline, pod, profile, request.max_count)
        best = maximum(
            baseline, pod, profile, max_count=request.max_count, time_limit=request.time_limit, hint=start
        )
    except SolveError as e:
        raise CapacityError(str(e)) from None
    return CapacityAnswer(
        template=label,
        greedy=sum(start.values()),
        maximum=best.maximum,
        proven=best.proven,
        limited_by=tuple(best.limited_by),
        per_domain=best.per_domain,
        placement=best.counts,
        seconds=best.seconds,
    )
