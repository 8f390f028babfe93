"""``kubespread audit -f CLUSTER``: every zone, rack and node failed in turn on a copy of the
settled cluster, ranked by harm (``kubespread.plan.audit``); ``--vary`` audits a grid of
spread settings and names the one that survives every failure with the fewest pending pods."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from kubespread.cli.common import (
    Output,
    err,
    kube_features,
    load_or_exit,
    out,
    print_data,
    progress_bar,
    require_nodes,
    run_placement,
    scheduler_profiles_or_exit,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    OutputOption,
    ReportOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
    at_least_one,
)
from kubespread.io.loader import Validation
from kubespread.plan.results import AuditResult, FailureRecord, VaryResult

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from kubespread.api.schedconfig import KubeSchedulerConfiguration

__all__ = ["audit_command"]

#: workloads named per failure in the table
WORST_SHOWN = 2


def _config(path: Path | None, validate: Validation) -> KubeSchedulerConfiguration | None:
    """The KubeSchedulerConfiguration object (every run's process rebuilds its profiles)."""
    from kubespread.api.schedconfig import KubeSchedulerConfiguration

    if path is None:
        return None
    scheduler_profiles_or_exit(path, validate)  # exits 1 on a bad file
    config = load_or_exit([path], validate=validate).objects[0].obj
    assert isinstance(config, KubeSchedulerConfiguration)
    return config


def _short_workload(key: str) -> str:
    """``shop/search`` for ``shop/Deployment/search`` (the JSON keeps the kind)."""
    namespace, _, name = key.split("/", 2)
    return f"{namespace}/{name}"


def _worst(record: FailureRecord) -> str:
    hurt = [w for w in record.workloads if w.unavailable or w.pending]
    hurt.sort(key=lambda w: (-w.lost, -w.unavailable, -w.pending, w.owner))
    shown = [f"{_short_workload(w.owner)} {w.running}/{w.desired}" for w in hurt[:WORST_SHOWN]]
    if len(hurt) > WORST_SHOWN:
        shown.append(f"+{len(hurt) - WORST_SHOWN} more")
    return ", ".join(shown) or "-"


def _short_domain(record: FailureRecord, short_value: Callable[[str], str]) -> str:
    """``zone=eu-west-1a``: the key without its prefix (the header line names it whole)."""
    return f"{record.key.rsplit('/', 1)[-1]}={short_value(record.value)}"


def _recovery(record: FailureRecord) -> str:
    times = [w.recovery_seconds for w in record.workloads]
    if any(t is None for t in times):
        return "never"
    return f"{max((t for t in times if t is not None), default=0):g}s"


def failures_table(doc: AuditResult, title: str = "") -> Table:
    """One row per failure, most harmful first."""
    from kubespread.cli.render.placement import node_namer

    namers = {}  # per key: node names without their shared DNS suffix
    for key in dict.fromkeys(r.key for r in doc.failures):
        namers[key] = node_namer(sorted({r.value for r in doc.failures if r.key == key}))
    t = Table(title=title or None, title_justify="left", box=None, pad_edge=False)
    for col in ("#", "failure", "nodes", "lost", "pending", "pdbs", "whole", "worst workloads"):
        t.add_column(col, no_wrap=col != "worst workloads", justify="right" if col == "#" else "left")
    for r in doc.failures:
        h = r.harm
        style = "red" if h.unrecovered else None
        t.add_row(
            str(r.rank),
            _short_domain(r, namers[r.key][0]),
            str(len(r.nodes)),
            str(h.lost),
            str(h.pending),
            str(h.pdbs_broken),
            _recovery(r),
            _worst(r),
            style=style,
        )
    return t


def _notes(doc: AuditResult) -> list[str]:
    from kubespread.cli.render.placement import node_namer

    keys = dict.fromkeys(r.key for r in doc.failures)
    names = (sorted({r.value for r in doc.failures if r.key == k}) for k in keys)
    return [note for n in names if (note := node_namer(n)[1])]


def _print_reasons(doc: AuditResult) -> None:
    """The pending reasons of the most harmful failure (the others' are in the JSON and report)."""
    worst = next((r for r in doc.failures if r.harm.pending), None)
    if worst is None:
        return
    out.print(Text(f"pending after {worst.domain} fails:", style="bold"))
    for w in worst.workloads:
        for reason in w.pending_reasons:
            out.print(f"  {w.owner}: {len(reason.pods)} pending: {reason.message}", markup=False)
            for hint in reason.hints:  # every one: the last are often the ones that fix it
                out.print(Text(f"    hint: {hint}", style="dim"), soft_wrap=True)


def _print_audit(doc: AuditResult) -> None:
    n = len(doc.failures)
    out.print(
        Text(
            f"audit: {n} failure{'s' if n != 1 else ''} of {', '.join(doc.domains)}, {doc.after:g}s each",
            style="bold",
        )
    )
    out.print(failures_table(doc))
    for note in _notes(doc):
        out.print(Text(note, style="dim"), soft_wrap=True)
    out.print(
        Text(
            "lost: replicas that ran before the failure and not after; pdbs: budgets broken; "
            "whole: when the last replacement ran (never: still short)",
            style="dim",
        )
    )
    _print_reasons(doc)
    survived = sum(1 for r in doc.failures if not r.harm.unrecovered)
    style = "green" if survived == n else "yellow"
    out.print(Text(f"every workload whole again after {survived} of {n} failures", style=style))


def _changes(changes: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in changes.items()) or "(as given)"


def _print_vary(doc: VaryResult) -> None:
    first = doc.domains[0]
    t = Table(
        title=f"settings ranked: survives every {first} failure, then fewest pending",
        title_justify="left",
        box=None,
        pad_edge=False,
    )
    for col in ("#", "setting", "survives", "not whole", "pending", "lost"):
        t.add_column(col, no_wrap=col != "setting")
    for v in doc.variants:
        if v.error is not None:
            t.add_row(str(v.rank), _changes(v.changes), "refused", "-", "-", "-", style="dim")
            continue
        t.add_row(
            str(v.rank),
            _changes(v.changes),
            "yes" if v.survives else "no",
            str(v.failed),
            str(v.pending),
            str(v.unavailable),
            style="green" if v.survives else None,
        )
    out.print(t)
    for v in doc.variants:
        if v.error is not None:
            out.print(Text(f"{_changes(v.changes)}: {v.error}", style="dim"), soft_wrap=True)
    best = doc.variants[0] if doc.variants and doc.variants[0].error is None else None
    if best is None:
        out.print(Text("no setting could be audited", style="red"))
    elif best.survives:
        out.print(
            Text(f"best: {_changes(best.changes)}: survives every {first} failure", style="green"),
            soft_wrap=True,
        )
    else:
        out.print(
            Text(
                f"no setting survives every {first} failure; least harm: {_changes(best.changes)}",
                style="yellow",
            ),
            soft_wrap=True,
        )


def _at_least_one(value: int | None) -> int | None:
    return None if value is None else at_least_one(value)


def audit_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    domains: Annotated[
        str,
        typer.Option(
            "--domains",
            metavar="KEYS",
            help="Node label keys (comma-separated) whose domains fail in turn: every zone, every node.",
        ),
    ] = "topology.kubernetes.io/zone,kubernetes.io/hostname",
    after: Annotated[
        str,
        typer.Option(
            "--after", metavar="DURATION", help="Virtual time each failure lasts before the verdict."
        ),
    ] = "10m",
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            metavar="N",
            callback=_at_least_one,
            help="Fail at most the first N domains of each key.",
        ),
    ] = None,
    vary: Annotated[
        list[str] | None,
        typer.Option(
            "--vary",
            metavar="CHANGE",
            help="FIELD=V1,V2; audit every combination: maxSkew, whenUnsatisfiable, nodeTaintsPolicy, "
            "nodeAffinityPolicy, minDomains (every workload's spread constraints) or replicas. Repeatable.",
        ),
    ] = None,
    processes: Annotated[
        int | None,
        typer.Option(
            "--processes",
            metavar="N",
            callback=_at_least_one,
            help="Local processes (default: the CPU count).",
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", metavar="ADDRESS", help="Run on this Dask scheduler (tcp://host:8786)."),
    ] = None,
    output: OutputOption = Output.table,
    report: ReportOption = None,
    scheduler_config: SchedulerConfigOption = None,
    seed: SeedOption = 0,
    validate: ValidateOption = Validation.STRICT,
    kube_version: KubeVersionOption = None,
) -> None:
    """Fail every zone, rack and node in turn (the node controller's taints and evictions on
    the virtual clock) and show which workloads lose replicas, stay pending and why, break
    PodDisruptionBudgets or recover, failures ranked by harm."""
    from kubespread.plan.audit import (
        AuditError,
        AuditRequest,
        parse_after,
        parse_domains,
        parse_vary,
        run_audit,
    )

    try:
        keys = parse_domains(domains)
        seconds = parse_after(after)
    except AuditError as e:
        raise typer.BadParameter(str(e)) from None
    try:
        grid = parse_vary(vary or []) if vary else []
    except AuditError as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(2) from None
    features = kube_features(kube_version, kubeconfig, context)
    if vary:
        config = _config(scheduler_config, validate)
        manifests = load_or_exit(files, kubeconfig=kubeconfig, context=context, validate=validate)
        require_nodes(manifests, "audit")
        settled, objects = None, manifests.objects
    else:
        result = run_placement(
            files,
            scheduler_config,
            seed,
            False,
            kubeconfig,
            context,
            validate,
            command="audit",
            features=features,
            distributions=False,  # the audit reads the settled cluster, not its snapshots
        )
        config = _config(scheduler_config, validate)
        settled, objects = result.baseline, []
    bar = progress_bar(True)
    task = bar.add_task("failures", total=None)

    def on_done(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total, refresh=True)

    request = AuditRequest(
        settled=settled,
        objects=objects,
        grid=grid,
        domains=keys,
        after=seconds,
        limit=limit,
        config=config,
        seed=seed,
        processes=processes or os.cpu_count() or 1,
        cluster=cluster,
        on_done=on_done,
        features=features,
    )
    try:
        with bar:
            doc = run_audit(request)
    except AuditError as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(1) from None
    if report is not None:
        from kubespread.report.audit import write_audit_report

        path = write_audit_report(report, doc)
        err.print(f"report: {path}", markup=False, highlight=False)
    if output is not Output.table:
        print_data(doc.to_dict(), output)
    elif isinstance(doc, AuditResult):
        _print_audit(doc)
    else:
        _print_vary(doc)
