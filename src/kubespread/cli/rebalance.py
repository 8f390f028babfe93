"""``kubespread rebalance -f CLUSTER``: the fewest evictions that restore every spread
constraint, in PodDisruptionBudget-safe waves, replayed through the scheduler before they
are shown (``kubespread.plan.rebalance``); ``--strategy descheduler`` replays the
descheduler's RemovePodsViolatingTopologySpreadConstraint instead, ``compare`` both.

``--apply`` carries the plan out on the live cluster (``kubespread.live.rebalance``): read,
plan, evict wave by wave through the Eviction API, re-plan on divergence; one JSON line per
eviction on stdout, a summary on stderr. ``--every`` does so on a timer, leader-elected and
with metrics, as the descheduler runs. Without ``--apply`` (``--dry-run``) nothing is
written: the plan is printed."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from kubespread.api.features import FeatureGates
from kubespread.api.model import long_lived
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
    at_least_one,
    not_negative,
    positive_seconds,
)
from kubespread.cli.render.workload import workload_label
from kubespread.cli.runtime import (
    LogLevel,
    LogLevelOption,
    connect_or_exit,
    metrics_option,
    metrics_served,
    parse_metrics_address_or_exit,
    require_live_extra,
    setup_logging,
    stop_on_signals,
)
from kubespread.cluster.workloads import WorkloadRef
from kubespread.io.loader import Validation
from kubespread.live.manifests import COMPONENTS_NAMESPACE
from kubespread.live.ports import REBALANCER_METRICS_PORT
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
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Carry the plan out on the cluster (--kubeconfig, or in a pod its account) through the "
            "Eviction API, wave by wave.",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what --apply would do; write nothing (the default).")
    ] = False,
    max_evictions: Annotated[
        int | None,
        typer.Option(
            "--max-evictions", metavar="N", callback=not_negative, help="--apply: evict at most N pods."
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", metavar="NS", help="--apply: evict only pods of this namespace."),
    ] = None,
    selector: Annotated[
        str | None,
        typer.Option(
            "--selector", "-l", metavar="SELECTOR", help="--apply: evict only pods these labels select."
        ),
    ] = None,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            metavar="N",
            callback=at_least_one,
            help="--apply: plan again from the live state at most N times (a wave landed elsewhere).",
        ),
    ] = 3,
    every: Annotated[
        str | None,
        typer.Option(
            "--every", metavar="DURATION", help="--apply again and again, this long apart (10m, 1h)."
        ),
    ] = None,
    leader_elect: Annotated[
        bool, typer.Option("--leader-elect", help="--every: run only while holding a Lease.")
    ] = False,
    lease_namespace: Annotated[
        str, typer.Option("--leader-elect-namespace", metavar="NAMESPACE", help="Namespace of the Lease.")
    ] = COMPONENTS_NAMESPACE,
    metrics_bind_address: Annotated[
        str, metrics_option(REBALANCER_METRICS_PORT)
    ] = f"0.0.0.0:{REBALANCER_METRICS_PORT}",
    log_level: LogLevelOption = LogLevel.info,
    kube_version: KubeVersionOption = None,
) -> None:
    """Plan the fewest evictions that bring every topology spread constraint back within
    maxSkew, in waves no PodDisruptionBudget forbids, and replay them through the scheduler;
    --apply carries them out on the cluster."""
    if apply or every is not None:
        _check_apply_usage(apply, dry_run, files, strategy, apply_scenario, output, every)
        _apply(
            kubeconfig=kubeconfig,
            context=context,
            constraints=constraints,
            max_moves=max_moves,
            time_limit=time_limit,
            scheduler_config=scheduler_config,
            seed=seed,
            validate=validate,
            max_evictions=max_evictions,
            namespace=namespace,
            selector=selector,
            rounds=rounds,
            every=every,
            leader_elect=leader_elect,
            lease_namespace=lease_namespace,
            metrics_bind_address=metrics_bind_address,
            log_level=log_level,
            kube_version=kube_version,
        )
        return
    if leader_elect or any(v is not None for v in (max_evictions, namespace, selector)):
        err.print(
            "error: --max-evictions, --namespace, --selector and --leader-elect bound --apply: add --apply",
            markup=False,
        )
        raise typer.Exit(2)
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


# ------------------------------------------------------------------ --apply


def _usage(message: str) -> None:
    err.print(f"error: {message}", markup=False, highlight=False)
    raise typer.Exit(2)


def _check_apply_usage(
    apply: bool,
    dry_run: bool,
    files: list[Path],
    strategy: Strategy,
    apply_scenario: Path | None,
    output: Output,
    every: str | None,
) -> None:
    """--apply reads the live cluster and carries out kubespread's own plan: what does not go
    with it is a usage error (exit 2), said before anything connects."""
    if not apply:
        _usage("--every repeats --apply: add --apply")
    if dry_run:
        _usage("--apply and --dry-run: choose one")
    if files:
        _usage("--apply plans from the live cluster (--kubeconfig), not from -f files")
    if strategy is not Strategy.kubespread:
        _usage(f"--apply carries out kubespread's plan, not --strategy {strategy.value}")
    if apply_scenario is not None:
        _usage("--apply-scenario writes the replay of a plan: run it without --apply")
    if output is not Output.table:
        _usage("--apply writes one JSON line per eviction on stdout already: leave -o out")
    if every is not None:
        from kubespread.api.duration import parse_duration

        seconds = parse_duration(every)
        if seconds is None or seconds <= 0:
            _usage(f"--every {every!r}: not a duration (10m, 1h30m, 90s)")


def _apply(
    *,
    kubeconfig: Path | None,
    context: str | None,
    constraints: Constraints,
    max_moves: int | None,
    time_limit: float,
    scheduler_config: Path | None,
    seed: int,
    validate: Validation,
    max_evictions: int | None,
    namespace: str | None,
    selector: str | None,
    rounds: int,
    every: str | None,
    leader_elect: bool,
    lease_namespace: str,
    metrics_bind_address: str,
    log_level: LogLevel,
    kube_version: FeatureGates | None = None,
) -> None:
    """Carry kubespread's plan out on the live cluster (once, or ``--every``); each plan only
    moves pods within ``namespace``/``selector``, and answers as ``--kube-version`` (else the
    API server's /version), as the plan without --apply does."""
    import json
    import sys

    require_live_extra()
    from kubespread.api.duration import parse_duration
    from kubespread.api.selectors import parse_selector
    from kubespread.cli.common import scheduler_profiles_or_exit, server_features
    from kubespread.io.loader import Manifests
    from kubespread.live.kube import ApiError
    from kubespread.live.leader import LeaderElector
    from kubespread.live.metrics import RebalancerMetrics
    from kubespread.live.rebalance import (
        ApplyReport,
        EvictionRecord,
        EvictionStopped,
        Rebalancer,
        WaveExecutor,
    )
    from kubespread.live.scheduler import instance_name
    from kubespread.plan.rebalance import ALL, HARD, Bounds, RebalancePlan, RebalanceRequest, plan_rebalance
    from kubespread.scheduler.config import default_profiles
    from kubespread.sim.placement import PlacementError, place

    chosen = None
    if selector is not None:
        try:
            chosen = parse_selector(selector)
        except ValueError as e:
            _usage(f"--selector {selector!r}: {e}")
    setup_logging(log_level)
    interval = parse_duration(every) if every is not None else None
    address = parse_metrics_address_or_exit(metrics_bind_address) if interval is not None else None
    api = connect_or_exit(kubeconfig, context)
    features = kube_version
    if features is None:  # the API server's /version, as every live command answers
        try:
            features = server_features(api.server_version())
        except ApiError as e:
            err.print(f"error: cluster {api.context or api.host}: {e.message}", markup=False, highlight=False)
            raise typer.Exit(1) from None
    profiles = scheduler_profiles_or_exit(scheduler_config, validate, features) or default_profiles(
        features=features
    )
    bounds = Bounds(namespace, chosen) if namespace is not None or chosen is not None else None
    stop = stop_on_signals()

    def planner(manifests: Manifests) -> RebalancePlan:
        try:
            placed = place(manifests, profiles=profiles, seed=seed)
        except PlacementError as e:
            raise EvictionStopped(f"the cluster as read cannot be placed: {e.problems[0]}") from None
        answer = plan_rebalance(
            RebalanceRequest(
                placed.baseline,
                constraints=ALL if constraints is Constraints.all else HARD,
                max_moves=max_moves,
                time_limit=time_limit,
                seed=seed,
                bounds=bounds,
            )
        )
        assert isinstance(answer, RebalancePlan)
        return answer

    def print_line(record: EvictionRecord) -> None:
        sys.stdout.write(json.dumps(record.to_dict(), separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def executor() -> WaveExecutor:
        return WaveExecutor(
            api,
            planner,
            rounds=rounds,
            max_evictions=max_evictions,
            namespace=namespace,
            selector=chosen,
            stop=stop,
            on_eviction=print_line,
        )

    def summary(report: ApplyReport) -> str:
        waves = ", ".join(f"{w.seconds:.1f}s" for w in report.waves)
        return (
            f"rebalance --apply: {report.outcome}; {report.evicted} evicted in {len(report.waves)} waves"
            + (f" ({waves})" if waves else "")
            + f", {report.rounds} rounds"
        )

    if interval is None:
        report = executor().run()
        err.print(summary(report), markup=False, highlight=False)
        if report.outcome.startswith("stopped: "):
            raise typer.Exit(1)
        return
    metrics = RebalancerMetrics()
    long_lived()  # it runs until stopped: what it builds and drops must not stay frozen
    with metrics_served(metrics, address, "rebalance"):
        leader = None
        if leader_elect:
            leader = LeaderElector(
                api,
                namespace=lease_namespace,
                name="kubespread-rebalancer",
                identity=instance_name(),
                stop=stop,
            )
            leader.start()
        loop = Rebalancer(executor, every=interval, stop=stop, metrics=metrics)
        loop.run(leader)
        stop.set()
        if leader is not None:
            leader.join(timeout=5)
            if leader.refused is not None:
                where = f"leader election: Lease {lease_namespace}/kubespread-rebalancer"
                err.print(f"error: {leader.refused.advice(where)}", markup=False, highlight=False)
                raise typer.Exit(1)
            if leader.lost.is_set():
                raise typer.Exit(1)
        err.print(f"rebalance --every: stopped after {len(loop.reports)} runs", markup=False, highlight=False)
