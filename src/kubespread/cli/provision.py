"""``kubespread provision -f CLUSTER... -f WORKLOAD... --node-template NODE.yaml``: the fewest
(then cheapest) nodes to add so that kube-scheduler leaves nothing pending.

Parses, loads, calls :func:`kubespread.plan.provision.provision` and renders its
:class:`~kubespread.plan.provision.ProvisionResult`; the planning is all there.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
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
    profiles_or_exit,
    table,
    warn_assumed_namespaces,
)
from kubespread.cli.options import (
    FilesOption,
    KubeVersionOption,
    OutputOption,
    ReportOption,
    SchedulerConfigOption,
    ValidateOption,
    at_least_one,
    positive_seconds,
)
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.plan.provision import NodeTemplate, ProvisionResult

__all__ = ["provision_command"]


class Compare(StrEnum):
    autoscaler = "autoscaler"


TemplateOption = Annotated[
    list[Path],
    typer.Option(
        "--node-template",
        metavar="FILE",
        help="A Node manifest (labels incl. topology.kubernetes.io/zone, taints, allocatable; "
        "optional kubespread.io/cost annotation, default 1): one node group. Repeatable; a file "
        "may hold several Nodes.",
    ),
]
FromClusterOption = Annotated[
    bool,
    typer.Option(
        "--node-template-from-cluster",
        help="Also take one template per (zone, instance type) the cluster has.",
    ),
]
MaxPerTemplateOption = Annotated[
    int,
    typer.Option(
        "--max-per-template",
        metavar="N",
        callback=at_least_one,
        help="At most this many new nodes per template.",
    ),
]
TimeLimitOption = Annotated[
    float,
    typer.Option(
        "--time-limit",
        metavar="SECONDS",
        callback=positive_seconds,
        help="Seconds the solver may take per solve.",
    ),
]
MaxReplaysOption = Annotated[
    int,
    typer.Option(
        "--max-replays",
        metavar="N",
        callback=at_least_one,
        help="How many of the model's answers the replay may turn down before giving up.",
    ),
]
CompareOption = Annotated[
    Compare | None,
    typer.Option(
        "--compare",
        metavar="BASELINE",
        help="autoscaler: also show what cluster-autoscaler would add (its binpacking estimator and "
        "least-waste expander, one node group per loop), replayed.",
    ),
]


def _fail(message: str) -> typer.Exit:
    err.print(f"error: {message}", markup=False, highlight=False)
    return typer.Exit(1)


def _templates(paths: list[Path], validate: Validation) -> list[NodeTemplate]:
    from kubespread.plan.provision import ProvisionError, node_template

    templates = []
    for path in paths:
        manifests = load_or_exit([path], validate=validate)
        if not manifests.objects:
            raise _fail(f"{path}: a node template file must hold a Node; it holds nothing")
        for lo in manifests.objects:
            try:
                templates.append(node_template(lo))
            except ProvisionError as e:
                raise _fail(str(e)) from None
    return templates


def _number(x: float) -> str:
    return f"{x:g}"


def _render(result: ProvisionResult) -> None:
    if not result.pending_before:
        out.print("nothing is pending: no node to add")
        return
    if result.proven:
        how = "proven minimum"
    elif result.lower_bound < result.nodes:
        how = f"best found; at least {result.lower_bound}"
    else:
        how = "best found within the time limit"
    n, before = result.nodes, len(result.pending_before)
    landed = "nothing pending" if not result.pending_after else f"{len(result.pending_after)} still pending"
    out.print(
        f"{before} pod{'s' if before != 1 else ''} pending; add {n} node{'s' if n != 1 else ''} "
        f"(cost {_number(result.cost)}), {how}; replayed: {landed}"
    )
    if result.additions:
        t = table("template", "zone", ("count", "right"), ("cost", "right"), ("pods", "right"))
        for a in result.additions:
            t.add_row(a.template, a.zone, str(a.count), _number(a.cost), str(a.pods))
        out.print(t)
    for note in result.notes:
        out.print(f"note: {note}")
    if result.pending_after:
        out.print("still pending (no addition within the bounds places them):")
        for p in result.pending_after:
            out.print(f"  {p.pod} ({p.workload}): {p.reason or 'pending'}")
    auto = result.autoscaler
    if auto is not None:
        nodes = auto["nodes"]
        left = len(auto["pendingAfter"])
        landed = "nothing pending" if not left else f"{left} still pending"
        loops = auto["loops"]
        out.print(
            f"cluster-autoscaler (binpacking, least-waste): add {nodes} node{'s' if nodes != 1 else ''} "
            f"(cost {_number(auto['cost'])})\n  in {loops} loop{'s' if loops != 1 else ''}, one node group "
            f"each; replayed: {landed}"
        )
        if auto["add"]:
            t = table("template", "zone", ("count", "right"), ("cost", "right"), ("loop", "right"))
            for a in auto["add"]:
                t.add_row(a["template"], a["zone"], str(a["count"]), _number(a["cost"]), str(a["loop"]))
            out.print(t)


def provision_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    node_templates: TemplateOption = [],  # noqa: B006
    from_cluster: FromClusterOption = False,
    max_per_template: MaxPerTemplateOption = 100,
    compare: CompareOption = None,
    output: OutputOption = Output.table,
    time_limit: TimeLimitOption = 10.0,
    max_replays: MaxReplaysOption = 20,
    report: ReportOption = None,
    scheduler_config: SchedulerConfigOption = None,
    validate: ValidateOption = Validation.STRICT,
    kube_version: KubeVersionOption = None,
) -> None:
    """The fewest nodes (then the cheapest) to add from node templates so that kube-scheduler,
    placing the pods one at a time, leaves nothing pending. The -f files are the cluster and
    the workloads, settled as ``schedule`` settles them; the answer is solved on the
    placement model (proven when CP-SAT proves it) and replayed with the real scheduler."""
    if not node_templates and not from_cluster:
        err.print("error: give at least one --node-template FILE, or --node-template-from-cluster")
        raise typer.Exit(2)
    from kubespread.plan.provision import ProvisionError, ProvisionRequest, provision
    from kubespread.sim.baseline import SettleError

    manifests = load_or_exit(files, validate=validate)
    warn_assumed_namespaces(manifests)
    templates = _templates(node_templates, validate)
    profiles = profiles_or_exit(scheduler_config, validate, kube_features(kube_version))
    request = ProvisionRequest(
        tuple(manifests.objects),
        tuple(templates),
        max_per_template=max_per_template,
        profiles=profiles,
        templates_from_cluster=from_cluster,
        time_limit=time_limit,
        max_replays=max_replays,
        compare_autoscaler=compare is Compare.autoscaler,
    )
    try:
        result = provision(request)
    except SettleError as e:
        print_problems(e.problems, "in the input; nothing was provisioned")
        raise typer.Exit(1) from None
    except ProvisionError as e:
        raise _fail(str(e)) from None
    if report is not None:
        _write_report(report, result)
    if output is Output.table:
        _render(result)
    else:
        print_data(result.to_dict(), output)


def _write_report(directory: Path, result: ProvisionResult) -> None:
    from kubespread.report.provision import write_provision_report

    try:
        path = write_provision_report(directory, result)
    except OSError as e:
        raise _fail(f"{directory}: cannot write the report: {e.strerror or e}") from None
    err.print(f"report: {path}", markup=False, highlight=False)
