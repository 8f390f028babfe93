"""``kubespread rebalance -f CLUSTER``: the fewest evictions that restore every spread
constraint, in PodDisruptionBudget-safe waves, replayed through the scheduler before they
are shown (``kubespread.plan.rebalance``); ``--strategy descheduler`` replays the
descheduler's RemovePodsViolatingTopologySpreadConstraint instead, ``compare`` both."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from kubespread.cli.common import Output, err, kube_features, out, print_data, run_placement, short_ns, table
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    OutputOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
    not_negative,
    positive_seconds,
)
from kubespread.cli.render.workload import workload_label
from kubespread.cluster.workloads import WorkloadRef
from kubespread.io.loader import Validation
from kubespread.report.plots import short_key

if TYPE_CHECKING:
    from kubespread.plan.rebalance import RebalancePlan
    from kubespread.plan.results import ConstraintKey

__all__ = ["rebalance_command"]


class Constraints(StrEnum):
    hard = "hard"
    all = "all"


class Strategy(StrEnum):
    kubespread = "kubespread"
    descheduler = "descheduler"
    compare = "compare"


def _fix(text: str) -> str:
    """``zone maxSkew 1`` for ``topology.kubernetes.io/zone maxSkew 1``."""
    key, _, rest = text.partition(" ")
    return f"{short_key(key)} {rest}".strip()


def _workload_and_key(key: ConstraintKey) -> tuple[str, str]:
    """(``rs/web-b6c9d9ffd``, ``zone``) for ``default/ReplicaSet/web-b6c9d9ffd topology...zone``."""
    return workload_label(WorkloadRef(key.namespace, key.kind, key.name)), short_key(key.topology_key)


def _where(node: str | None, domains: dict[str, str]) -> str:
    if not node:
        return "(pending)"
    shown = [v for k, v in domains.items() if k != "kubernetes.io/hostname"]
    return f"{node} ({', '.join(shown)})" if shown else node


def _print(plan: RebalancePlan) -> None:
    n = plan.evictions
    waves = len(plan.waves)
    head = f"rebalance ({plan.strategy}): {n} eviction{'s' if n != 1 else ''}"
    head += f" in {waves} wave{'s' if waves != 1 else ''}"
    if plan.strategy == "kubespread" and plan.minimum is not None:
        head += ", proven minimal" if plan.proven else f" (the solver's minimum: {plan.minimum}; not proven)"
    if plan.loop:
        head += ", loops (the same placement again)"
    out.print(Text(head, style="bold"), soft_wrap=True)
    for i, wave in enumerate(plan.waves, 1):
        t = table("pod", "from", "to", "fixes", title=f"wave {i}")
        for m in wave:
            to = f"refused: {m.refused}" if m.refused else _where(m.to_node, m.to_domains)
            ns, name = m.pod.split("/", 1)
            fixes = ", ".join(_fix(f) for f in m.fixes) or "-"
            t.add_row(short_ns(ns, name), _where(m.from_node, m.from_domains), to, fixes)
        out.print(t)
    if plan.before or plan.after:
        t = table(
            "workload",
            "key",
            ("maxSkew", "right"),
            ("before", "right"),
            ("after", "right"),
            "domains after",
            title="skew per constraint",
        )
        for key in sorted(set(plan.before) | set(plan.after), key=str):  # the JSON's member order
            b, a = plan.before.get(key), plan.after.get(key)
            row = a or b
            domains = " ".join(f"{d}={c}" for d, c in (a.domains if a else {}).items()) or "-"
            workload, short = _workload_and_key(key)
            t.add_row(
                workload,
                short,
                "-" if row is None else str(row.max_skew),
                "-" if b is None else str(b.skew),
                "-" if a is None else str(a.skew),
                domains,
            )
        out.print(t)
    if plan.pending:
        out.print(
            Text(f"pending after the replay: {', '.join(plan.pending)}", style="yellow"), soft_wrap=True
        )
    if plan.cannot:
        out.print(Text(plan.cannot, style="red"), soft_wrap=True)
    elif plan.balanced:
        out.print(Text("every constraint within maxSkew after the replay", style="green"))


def _write_scenario(path: Path, plan: RebalancePlan, seed: int, config: Path | None) -> None:
    """The replay as a scenario (its cluster, the settled dump, beside it)."""
    import yaml

    from kubespread.io.dump import dump_objects

    cluster_file = path.with_name(f"{path.stem}-cluster.yaml")
    doc = plan.scenario_doc(cluster_file.name, seed=seed, name=f"rebalance-{plan.strategy}")
    if config is not None:
        doc["scheduler"] = str(config.resolve())
    try:
        cluster_file.write_text(dump_objects(plan.dump))
        header = (
            f"# kubespread rebalance ({plan.strategy}): {plan.evictions} evictions"
            f" in {len(plan.waves)} waves.\n"
            f"#   kubespread simulate {path.name}\n"
        )
        path.write_text(header + yaml.safe_dump(doc, sort_keys=False))
    except OSError as e:
        err.print(f"error: cannot write {path}: {e.strerror or e}", markup=False)
        raise typer.Exit(1) from None
    err.print(f"scenario: {path} (cluster: {cluster_file.name})", markup=False, highlight=False)


def rebalance_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: OutputOption = Output.table,
    constraints: Annotated[
        Constraints,
        typer.Option(
            "--constraints", metavar="MODE", help="hard: DoNotSchedule constraints; all: ScheduleAnyway too."
        ),
    ] = Constraints.hard,
    max_moves: Annotated[
        int | None,
        typer.Option("--max-moves", metavar="N", callback=not_negative, help="Evict at most N pods."),
    ] = None,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit", metavar="SECONDS", callback=positive_seconds, help="Seconds the solver may take."
        ),
    ] = 10.0,
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            metavar="STRATEGY",
            help="kubespread: the solver's plan; descheduler: the descheduler's plugin; compare: both.",
        ),
    ] = Strategy.kubespread,
    apply_scenario: Annotated[
        Path | None,
        typer.Option("--apply-scenario", metavar="FILE", help="Write the replay as a scenario for simulate."),
    ] = None,
    scheduler_config: SchedulerConfigOption = None,
    seed: SeedOption = 0,
    validate: ValidateOption = Validation.STRICT,
    kube_version: KubeVersionOption = None,
) -> None:
    """Plan the fewest evictions that bring every topology spread constraint back within
    maxSkew, in waves no PodDisruptionBudget forbids, and replay them through the scheduler."""
    from kubespread.plan.rebalance import (
        ALL,
        HARD,
        RebalanceComparison,
        RebalanceError,
        RebalanceRequest,
        plan_rebalance,
    )

    result = run_placement(
        files,
        scheduler_config,
        seed,
        False,
        kubeconfig,
        context,
        validate,
        command="rebalance",
        features=kube_features(kube_version, kubeconfig, context),
    )
    request = RebalanceRequest(
        result.baseline,
        constraints=ALL if constraints is Constraints.all else HARD,
        max_moves=max_moves,
        time_limit=time_limit,
        strategy=strategy.value,
        seed=seed,
    )
    try:
        answer = plan_rebalance(request)
    except RebalanceError as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(1) from None
    plans = answer.plans if isinstance(answer, RebalanceComparison) else (answer,)
    if apply_scenario is not None:
        if isinstance(answer, RebalanceComparison):
            for plan in plans:
                _write_scenario(
                    apply_scenario.with_name(f"{apply_scenario.stem}-{plan.strategy}{apply_scenario.suffix}"),
                    plan,
                    seed,
                    scheduler_config,
                )
        else:
            _write_scenario(apply_scenario, answer, seed, scheduler_config)
    if output is Output.table:
        for i, plan in enumerate(plans):
            if i:
                out.print()
            _print(plan)
        if isinstance(answer, RebalanceComparison):
            ours, theirs = answer.kubespread, answer.descheduler
            out.print()
            out.print(
                f"kubespread {ours.evictions} evictions ({'balanced' if ours.balanced else 'not balanced'}); "
                f"descheduler {theirs.evictions} ({'balanced' if theirs.balanced else 'not balanced'}"
                f"{', loops' if theirs.loop else ''})",
                soft_wrap=True,
            )
    else:
        print_data(answer.to_dict(), output)
    if any(p.cannot for p in plans if p.strategy == "kubespread"):
        raise typer.Exit(3)
