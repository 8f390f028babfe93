"""``kubespread diff -f CLUSTER --before A --after B``: how placements and spread change between
two versions of the same manifests (or two scheduler configurations).

The comparison is the ``diff`` use case (``kubespread.sim.diff.diff``): this module loads
both versions, calls it and shows the result."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from kubespread.api.features import FeatureGates
from kubespread.cli.common import (
    Output,
    err,
    kube_features,
    out,
    placing,
    print_data,
    schedule_request,
    short_ns,
    table,
)
from kubespread.cli.options import (
    FilesOption,
    KubeVersionOption,
    MaxPodsOption,
    OutputOption,
    ProgressOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
)
from kubespread.cli.options import kube_version as parse_kube_version
from kubespread.cli.render.placement import node_namer
from kubespread.cli.render.spread import domains_text, skew_text
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.sim.diff import PlacementDiff, PodAt, PodMove

__all__ = ["diff_command"]


def _where(p: PodAt | None, short: Any) -> str:
    if p is None:
        return "-"
    if p.node is None:
        return "pending"
    return f"{short(p.node)} ({p.zone or '-'})"


def _print_messages(moves: list[PodMove]) -> None:
    """Each version's FailedScheduling text of the pods pending in both for other reasons:
    the table's ``message`` says only that they differ."""
    if not moves:
        return
    out.print()
    out.print(Text("why pending (FailedScheduling, before and after)", style="bold"))
    for p in moves:
        assert p.before is not None and p.after is not None
        out.print(Text(short_ns(p.namespace, p.name)))
        out.print(Text(f"  before: {p.before.message or '-'}"), soft_wrap=True)
        out.print(Text(f"  after:  {p.after.message or '-'}"), soft_wrap=True)


def _print_diff(d: PlacementDiff) -> None:
    short, note = node_namer(d.node_names)
    changed = d.changed
    reshuffled = sum(1 for p in changed if p.change == "reshuffled")
    traded = f" ({reshuffled} only reshuffled: traded nodes within their workload)" if reshuffled else ""
    head = (
        f"{len(d.pods)} pod(s): {len(changed)} changed{traded}, {len(d.pods) - len(changed)} on the "
        f"same node; pending {d.before.pending} -> {d.after.pending}"
    )
    out.print(Text(head + (f" ({note})" if note else ""), style="bold"))
    if changed:
        t = table("pod", "change", "before", "after")
        for p in changed:
            t.add_row(
                short_ns(p.namespace, p.name), p.change, _where(p.before, short), _where(p.after, short)
            )
        out.print(t)
    _print_messages([p for p in changed if p.change == "message"])
    rows = [r for r in d.spread if r.changed]
    out.print()
    if not rows:
        out.print("spread: the same before and after")
        return
    out.print(Text("spread (as the scheduler counts it; skew/maxSkew)", style="bold"))
    t = table("workload", "key", "before", ("skew", "right"), "after", ("skew", "right"))
    for r in rows:
        shorten = short if "hostname" in r.topology_key else str
        kind, name = r.owner.split("/", 1)
        sides = [None if s is None else s.to_dict() for s in (r.before, r.after)]
        defaulted = any(s and s["defaulted"] for s in sides)
        key = r.topology_key.rsplit("/", 1)[-1] + (" (default)" if defaulted else "")
        cells = [f"{kind}/{short_ns(r.namespace, name)}", key]
        for s in sides:
            if s is None:
                cells += ["-", "-"]
            elif s["skew"] is None:
                cells += [domains_text(s["rawDomains"], shorten), "-"]
            else:
                cells += [
                    domains_text(s["domains"], shorten, s["leftOutDomains"], s["rawDomains"]),
                    skew_text(s),
                ]
        t.add_row(*cells)
    out.print(t)


def diff_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    before: Annotated[
        list[Path],
        typer.Option("--before", metavar="FILE", help="The first version of the manifests. Repeatable."),
    ] = [],  # noqa: B006
    after: Annotated[
        list[Path],
        typer.Option("--after", metavar="FILE", help="The second version of the manifests. Repeatable."),
    ] = [],  # noqa: B006
    scheduler_config: SchedulerConfigOption = None,
    before_config: Annotated[
        Path | None,
        typer.Option("--before-config", metavar="FILE", help="The first scheduler configuration."),
    ] = None,
    after_config: Annotated[
        Path | None,
        typer.Option("--after-config", metavar="FILE", help="The second scheduler configuration."),
    ] = None,
    output: OutputOption = Output.table,
    seed: SeedOption = 0,
    progress: ProgressOption = True,
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
    kube_version: KubeVersionOption = None,
    against: Annotated[
        FeatureGates | None,
        typer.Option(
            "--against",
            metavar="VERSION",
            parser=parse_kube_version,
            help="Compare with another Kubernetes version (an upgrade: --kube-version 1.35 "
            "--against 1.37): the same manifests and configuration, scheduled as each.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """How placements and spread change between two versions of the same manifests, two
    scheduler configurations, or two Kubernetes versions: both are scheduled as `schedule`
    does, with the same seed.

    The cluster (-f) is the same for both; --before and --after are added to it (the old and
    the new Deployment, say), --before-config and --after-config replace --scheduler-config,
    --against VERSION schedules it again as that version (the first: --kube-version).
    Shown: each pod whose node changed, and the spread of each workload and constraint whose
    counts or skew changed."""
    if bool(before) != bool(after) or (before_config is None) != (after_config is None):
        err.print("error: give both --before and --after, or both --before-config and --after-config")
        raise typer.Exit(2)
    if not before and before_config is None and against is None:
        err.print(
            "error: nothing to compare: give --before and --after, --before-config and --after-config, "
            "or --against VERSION"
        )
        raise typer.Exit(2)
    if before_config is not None and scheduler_config is not None:
        err.print("error: --scheduler-config and --before-config/--after-config exclude each other")
        raise typer.Exit(2)
    from kubespread.sim.diff import DiffRequest, diff

    first = kube_features(kube_version)
    second = against if against is not None else first
    before_request, after_request = (
        schedule_request(
            [*files, *version],
            config if config is not None else scheduler_config,
            seed,
            validate=validate,
            max_pods=max_pods,
            command="diff",
            features=gates,
        )
        for version, config, gates in ((before, before_config, first), (after, after_config, second))
    )
    with placing(progress) as on_step:
        d = diff(DiffRequest(before_request, after_request), on_step=on_step)
    if output is Output.table:
        _print_diff(d)
    else:
        print_data(d.to_dict(), output)
    refused = [
        (side, r) for side, res in zip(("before", "after"), d.results, strict=True) for r in res.rejections
    ]
    for side, r in refused:
        err.print(f"refused ({side}) {r.source}: {r.object}: {r.message}", markup=False, highlight=False)
    if refused:
        err.print(f"error: the API server refused {len(refused)} object(s)", markup=False)
        raise typer.Exit(1)
