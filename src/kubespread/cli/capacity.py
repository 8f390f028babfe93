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

from typing import TYPE_CHECKING, Annotated

import typer

from kubespread.cli.common import (
    Output,
    err,
    kube_features,
    load_or_exit,
    out,
    print_data,
    print_problems,
    require_nodes,
    scheduler_profiles_or_exit,
    table,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    OutputOption,
    SchedulerConfigOption,
    ValidateOption,
    at_least_one,
    positive_seconds,
)
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.plan.capacity import CapacityAnswer

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


def _table(answer: CapacityAnswer) -> None:
    t = table("", ("replicas", "right"), "", title=f"capacity for {answer.template}")
    t.add_row("greedy", str(answer.greedy), "one by one with the scheduler, until the first pending")
    proven = "proven optimal" if answer.proven else "best found within the time limit"
    t.add_row("maximum", str(answer.maximum), proven)
    out.print(t)
    for key, domains in answer.per_domain.items():
        shown = ", ".join(f"{d}={n}" for d, n in domains.items()) or "-"
        out.print(f"per {key}: {shown}")
    if answer.limited_by:
        out.print("limited by: " + "; ".join(answer.limited_by))


def capacity_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: OutputOption = Output.table,
    max_count: MaxOption = 1000,
    time_limit: TimeLimitOption = 10.0,
    scheduler_config: SchedulerConfigOption = None,
    validate: ValidateOption = Validation.STRICT,
    kube_version: KubeVersionOption = None,
) -> None:
    """How many more replicas of a pod fit: cluster-capacity's one-by-one count (greedy) and
    the proven maximum over every arrangement, with what limits it. The last -f is the
    template (a Pod, or a Deployment/ReplicaSet/StatefulSet: its pod template); the others
    are the cluster, settled as ``schedule`` settles it (its workloads run their pods, its
    pending pods are placed), whose pods (the workload's replicas among them) stay where
    they are. With --kubeconfig (or --context) the cluster is read once from the API server
    (nothing is written) and -f TEMPLATE alone is the template."""
    live = kubeconfig is not None or context is not None
    if len(files) < (1 if live else 2):
        err.print(
            "error: give the cluster and the template: -f CLUSTER [-f CLUSTER ...] -f TEMPLATE, "
            "or --kubeconfig FILE -f TEMPLATE"
        )
        raise typer.Exit(2)
    from kubespread.plan.capacity import CapacityError, CapacityRequest, capacity

    cluster_manifests = load_or_exit(files[:-1], kubeconfig=kubeconfig, context=context, validate=validate)
    require_nodes(cluster_manifests, "capacity")
    template_manifests = load_or_exit(files[-1:], validate=validate)
    features = kube_features(kube_version)
    profiles = scheduler_profiles_or_exit(scheduler_config, validate, features)
    request = CapacityRequest(
        features=features,
        cluster=cluster_manifests.objects,
        template=template_manifests.objects,
        template_file=str(files[-1]),
        profiles=profiles,
        max_count=max_count,
        time_limit=time_limit,
    )
    try:
        answer = capacity(request)
    except CapacityError as e:
        if e.problems:
            print_problems(list(e.problems), e.message)
        else:
            err.print(f"error: {e.message}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if output is Output.table:
        _table(answer)
    else:
        print_data(answer.to_dict(), output)
