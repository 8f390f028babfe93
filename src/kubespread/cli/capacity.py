"""``kubespread capacity -f CLUSTER -f TEMPLATE``: how many more replicas of a pod fit.

Two answers side by side: ``greedy``, what cluster-capacity reports (clones scheduled one by
one by the real scheduler until the first stays pending), and ``maximum``, the most any
arrangement holds (CP-SAT; ``proven`` when optimal), re-checked with the scheduler's Filter,
with what binds there (``limitedBy``) and the replicas per domain (``perDomain``).

The cluster files settle as ``schedule`` settles them (:func:`kubespread.sim.baseline.settle`):
their Deployments and StatefulSets run their pods and a dump's pending pods are placed
before anything is counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubespread.cli.common import (
    Output,
    err,
    load_or_exit,
    out,
    print_data,
    print_problems,
    require_nodes,
    scheduler_profiles_or_exit,
    table,
)
from kubespread.cli.options import (
    FilesOption,
    OutputOption,
    SchedulerConfigOption,
    ValidateOption,
    at_least_one,
    positive_seconds,
)
from kubespread.io.loader import LoadedObject, Validation

if TYPE_CHECKING:
    from kubespread.api.core import Pod
    from kubespread.api.meta import KubeObject
    from kubespread.io import Manifests
    from kubespread.scheduler.profile import Profile
    from kubespread.sim.baseline import Baseline

__all__ = ["capacity_command"]

MaxOption = Annotated[
    int,
    typer.Option(
        "--max",
        metavar="N",
        callback=at_least_one,
        help="Stop counting at this many replicas (both answers).",
    ),
]


TimeLimitOption = Annotated[
    float,
    typer.Option(
        "--time-limit",
        metavar="SECONDS",
        callback=positive_seconds,
        help="Seconds the solver may take for the maximum.",
    ),
]

#: the kinds whose pod template a TEMPLATE file may give
_WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet")


def _fail(message: str) -> typer.Exit:
    err.print(f"error: {message}", markup=False, highlight=False)
    return typer.Exit(1)


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


def _template(manifests: Manifests, path: Path, baseline: Baseline) -> tuple[Pod, str]:
    """The one Pod of the file, or the pod a Deployment/ReplicaSet/StatefulSet would create;
    and how to name it (``Deployment default/web``)."""
    from kubespread.api.core import Pod
    from kubespread.controllers.pods import pod_from_template

    objs = list(manifests)
    if len(objs) != 1:
        raise _fail(f"{path}: TEMPLATE must hold exactly one Pod, Deployment, ReplicaSet or StatefulSet")
    obj = objs[0]
    if isinstance(obj, Pod):
        return obj, f"Pod {obj.key}"
    if obj.KIND in _WORKLOADS:
        owner = _owner(obj, baseline)
        template = owner.spec.template  # type: ignore[attr-defined]
        return pod_from_template(template, owner, name=obj.metadata.name), f"{obj.KIND} {obj.key}"
    kind = obj.KIND or "untyped object"
    raise _fail(f"{path}: TEMPLATE is a {kind}: give a Pod or a workload ({', '.join(_WORKLOADS)})")


def _admitted(template: Pod, cluster_manifests: Manifests, source: LoadedObject) -> Pod:
    """The template as the API server would store each replica: defaulted (requests from
    limits), through the admission chain (priority, default tolerations) and with
    matchLabelKeys merged; a kubectl dump's pod is stored already. Refused: exit 1, the
    message located at the refused field in ``source`` (a workload's: under spec.template)."""
    from kubespread.admission.apiserver import create, is_stored
    from kubespread.admission.framework import AdmissionContext, Rejection
    from kubespread.api.apps import PriorityClass

    if is_stored(template):
        return template
    ctx = AdmissionContext.create(priority_classes=cluster_manifests.of_kind(PriorityClass))
    outcome = create(template.copy(), ctx)
    if isinstance(outcome, Rejection):
        field = next((c.get("field") for c in outcome.causes if c.get("field")), None)
        if field and source.obj.KIND != "Pod":
            field = f"spec.template.{field}"
        where = f"{source.where(field)}: {source.ref}"
        raise _fail(f"{where}: the API server would refuse the template's pods: {outcome.message}")
    assert isinstance(outcome, type(template))
    return outcome


def _settled(manifests: Manifests, profiles: dict[str, Profile] | None) -> Baseline:
    """The cluster files settled as ``schedule`` settles them; every problem printed, exit 1."""
    from kubespread.sim.baseline import SettleError, settle

    try:
        return settle(manifests, profiles=profiles)
    except SettleError as e:
        print_problems(e.problems, "in the cluster files; nothing was counted")
        raise typer.Exit(1) from None


def _table(doc: dict[str, Any]) -> None:
    t = table("", ("replicas", "right"), "", title=f"capacity for {doc['template']}")
    t.add_row("greedy", str(doc["greedy"]), "one by one with the scheduler, until the first pending")
    proven = "proven optimal" if doc["proven"] else "best found within the time limit"
    t.add_row("maximum", str(doc["maximum"]), proven)
    out.print(t)
    for key, domains in doc["perDomain"].items():
        shown = ", ".join(f"{d}={n}" for d, n in domains.items()) or "-"
        out.print(f"per {key}: {shown}")
    if doc["limitedBy"]:
        out.print("limited by: " + "; ".join(doc["limitedBy"]))


def _profile(template: Pod, profiles: dict[str, Profile] | None) -> Profile:
    """The profile the template's schedulerName names (v1.35's defaults without a config)."""
    from kubespread.api.keys import DEFAULT_SCHEDULER_NAME
    from kubespread.scheduler import default_profile

    name = template.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
    if profiles is None:
        if name != DEFAULT_SCHEDULER_NAME:
            raise _fail(f'the template asks for scheduler "{name}": give its --scheduler-config')
        return default_profile()
    if name not in profiles:
        known = ", ".join(sorted(profiles))
        raise _fail(f'the template asks for scheduler "{name}", which --scheduler-config lacks ({known})')
    return profiles[name]


def capacity_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    output: OutputOption = Output.table,
    max_count: MaxOption = 1000,
    time_limit: TimeLimitOption = 10.0,
    scheduler_config: SchedulerConfigOption = None,
    validate: ValidateOption = Validation.STRICT,
) -> None:
    """How many more replicas of a pod fit: cluster-capacity's one-by-one count (greedy) and
    the proven maximum over every arrangement, with what limits it. The last -f is the
    template (a Pod, or a Deployment/ReplicaSet/StatefulSet: its pod template); the others
    are the cluster, settled as ``schedule`` settles it (its workloads run their pods, its
    pending pods are placed), whose pods (the workload's replicas among them) stay where
    they are."""
    if len(files) < 2:
        err.print("error: give the cluster and the template: -f CLUSTER [-f CLUSTER ...] -f TEMPLATE")
        raise typer.Exit(2)
    from kubespread.plan.capacity import greedy_counts, maximum
    from kubespread.solve import SolveError

    cluster_manifests = load_or_exit(files[:-1], validate=validate)
    require_nodes(cluster_manifests, "capacity")
    template_manifests = load_or_exit(files[-1:], validate=validate)
    profiles = scheduler_profiles_or_exit(scheduler_config, validate)
    baseline = _settled(cluster_manifests, profiles)
    template, label = _template(template_manifests, files[-1], baseline)
    template = _admitted(template, cluster_manifests, template_manifests.objects[0])
    profile = _profile(template, profiles)
    try:
        start = greedy_counts(baseline, template, profile, max_count)
        found = sum(start.values())
        best = maximum(baseline, template, profile, max_count=max_count, time_limit=time_limit, hint=start)
    except SolveError as e:
        raise _fail(str(e)) from None
    doc: dict[str, Any] = {
        "template": label,
        "greedy": found,
        "maximum": best.maximum,
        "proven": best.proven,
        "limitedBy": best.limited_by,
        "perDomain": best.per_domain,
        "placement": best.counts,
        "solveSeconds": round(best.seconds, 3),
    }
    if output is Output.table:
        _table(doc)
    else:
        print_data(doc, output)
