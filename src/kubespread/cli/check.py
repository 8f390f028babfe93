"""``kubespread check --cluster CLUSTER -f CHANGED``: the release gate a pipeline runs.

Parses, loads, calls :func:`kubespread.plan.check.check` and renders: a table of every check
of every changed object, one line per finding (``file:line: severity: check: object:
message``), ``-o json|yaml``, ``--junit FILE`` and ``--format github`` (workflow-command
annotations). Exit 0 when every check passes, 3 when one fails, 1 on an input error, 2 on a
usage error."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from kubespread.cli.common import (
    Output,
    err,
    load_or_exit,
    out,
    print_data,
    print_problems,
    progress_bar,
    require_nodes,
    table,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    MaxPodsOption,
    OutputOption,
    ProgressOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
    split_files,
)
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import Validation

if TYPE_CHECKING:
    from kubespread.api.schedconfig import KubeSchedulerConfiguration

__all__ = ["EXIT_FAILED", "check_command"]

#: a check failed (1 is an error in the input, 2 a usage error), as ``schedule --fail-on-pending``
EXIT_FAILED = 3


class Format(StrEnum):
    text = "text"
    github = "github"


def _escape_data(text: str) -> str:
    """A workflow command's message, as GitHub's toolkit escapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(result: object) -> list[str]:
    """``::error file=F,line=L,title=T::message`` per finding (``::warning`` for one that does not
    fail the gate), as GitHub Actions turns into annotations on the pull request's files."""
    from kubespread.plan.findings import CheckResult

    assert isinstance(result, CheckResult)
    lines = []
    for f in result.findings:
        level = "error" if result.fails(f) else "warning"
        props = []
        if f.file is not None:
            props.append(f"file={_escape_property(f.file)}")
            if f.line is not None:
                props.append(f"line={f.line}")
        props.append(f"title={_escape_property(f'kubespread check {f.check}: {f.object}')}")
        lines.append(f"::{level} {','.join(props)}::{_escape_data(f.message)}")
    return lines


def _short(ref: str) -> str:
    """``deploy/shop/api`` for ``Deployment shop/api``, as the tables spell objects."""
    from kubespread.cluster.workloads import short_kind

    kind, _, key = ref.partition(" ")
    namespace, _, name = key.rpartition("/")
    name = name if namespace in ("", "default") else f"{namespace}/{name}"
    return f"{_SHORT.get(kind) or short_kind(kind)}/{name}"


#: kubectl's short names of the kinds a change may be that are not workloads
_SHORT = {
    "PodDisruptionBudget": "pdb",
    "Namespace": "ns",
    "Service": "svc",
    "PriorityClass": "pc",
    "Node": "no",
}


def _print_table(result: object) -> None:
    from kubespread.plan.findings import CheckResult

    assert isinstance(result, CheckResult)
    t = table("check", "object", "file", "result")
    for case in result.cases:
        where = "-" if case.file is None else case.file if case.line is None else f"{case.file}:{case.line}"
        failing = sum(1 for f in case.findings if result.fails(f))
        if failing:
            verdict = Text(f"FAIL ({failing})" if failing > 1 else "FAIL", style="red bold")
        elif case.findings:
            verdict = Text(f"warn ({len(case.findings)})", style="yellow")
        else:
            verdict = Text("pass", style="green")
        t.add_row(case.check, _short(case.object), where, verdict)
    out.print(t)
    if result.findings:
        out.print()
    for f in result.findings:
        style = "red" if result.fails(f) else "yellow"
        out.print(
            Text.assemble(
                f"{f.where}: ", (f.severity, style), f": {f.check}: {_short(f.object)}: {f.message}"
            ),
            soft_wrap=False,
        )
    if not result.failed:  # a failure's summary is the error line on stderr
        out.print()
        out.print(Text(_summary(result), style="bold"))


def _summary(result: object) -> str:
    from kubespread.plan.findings import ERROR, WARNING, CheckResult

    assert isinstance(result, CheckResult)
    failed = sum(1 for c in result.cases if result.case_failed(c))
    errors = sum(1 for f in result.findings if f.severity == ERROR)
    warnings = sum(1 for f in result.findings if f.severity == WARNING)
    counts = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    strict = " (--strict: warnings fail)" if result.strict else ""
    if failed:
        return f"{failed} of {len(result.cases)} checks failed ({counts}){strict}"
    return f"passed: {len(result.cases)} checks ({counts}){strict}"


def check_command(
    changed: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[CHANGED]...", hidden=True, help="Changed manifests, as -f.", show_default=False
        ),
    ] = None,
    cluster: Annotated[
        list[Path],
        typer.Option(
            "--cluster",
            metavar="CLUSTER",
            help="The cluster as it is: a kubectl dump, Node manifests, a directory. Repeatable; "
            "a,b for several.",
        ),
    ] = [],  # noqa: B006 - Typer reads the default
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy", metavar="FILE", help="A CheckPolicy file: which checks run, and how strictly."
        ),
    ] = None,
    domains: Annotated[
        str | None,
        typer.Option(
            "--domains",
            metavar="KEY",
            help="The node label whose each value is lost in turn (default: the policy's, else "
            "topology.kubernetes.io/zone).",
        ),
    ] = None,
    strict: Annotated[
        bool | None,
        typer.Option("--strict/--no-strict", help="Warnings fail the gate too (default: the policy's)."),
    ] = None,
    output: OutputOption = Output.table,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="text, or github: the table then one workflow-command annotation per finding "
            "(::error file=...,line=...::), which GitHub Actions shows on the pull request.",
            case_sensitive=False,
        ),
    ] = Format.text,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write the result as JUnit XML (one test case per check and object).",
        ),
    ] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    scheduler_config: SchedulerConfigOption = None,
    seed: SeedOption = 0,
    progress: ProgressOption = True,
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
) -> None:
    """Check changed manifests against a cluster before they merge: admission, placement (no
    pod pending, spread within maxSkew), rollout (completes, or the deadlock and a strategy
    that completes), failure survival (every zone lost in turn; PodDisruptionBudgets hold) and,
    when the policy asks, capacity headroom. Exit 0 when all pass, 3 when a check fails.

    CHANGED files may also be given as arguments (what a pre-commit hook passes)."""
    from kubespread.plan.check import CheckError, CheckRequest, check
    from kubespread.plan.policy import CheckPolicy, PolicyError, load_policy

    cluster_files = split_files(cluster)
    changed_files = split_files([*files, *(changed or [])])
    if not cluster_files and kubeconfig is None and context is None:
        err.print(
            "error: no cluster: give --cluster FILE (a kubectl dump, Node manifests) or --kubeconfig FILE"
        )
        raise typer.Exit(2)
    if not changed_files:
        err.print("error: no changes: give the changed manifests with -f FILE (or as arguments)")
        raise typer.Exit(2)
    if fmt is Format.github and output is not Output.table:
        err.print("error: --format github annotates the table; it does not go with -o json|yaml")
        raise typer.Exit(2)
    rules = CheckPolicy()
    if policy is not None:
        try:
            rules = load_policy(policy)
        except PolicyError as e:
            print_problems(e.problems, "in the policy file")
            raise typer.Exit(1) from None
    config = _config(scheduler_config, validate)
    base = load_or_exit(cluster_files, kubeconfig=kubeconfig, context=context, validate=validate)
    require_nodes(base, "check")
    changes = load_or_exit(changed_files, validate=validate)
    request = CheckRequest(
        tuple(base.objects),
        tuple(changes.objects),
        rules,
        config=config,
        domains=domains,
        strict=strict,
        seed=seed,
        max_pods=max_pods,
    )
    with progress_bar(progress) as bar:
        task = bar.add_task("checking", total=None)
        try:
            result = check(
                request, on_progress=lambda what: bar.update(task, description=what[:40], refresh=True)
            )
        except CheckError as e:
            bar.stop()
            print_problems(e.problems, "in the input; nothing was checked")
            raise typer.Exit(1) from None
    if output is Output.table:
        _print_table(result)
        if fmt is Format.github:
            for line in github_annotations(result):
                out.print(line, markup=False, highlight=False, soft_wrap=True)
    else:
        print_data(result.to_dict(), output)
    if junit is not None:
        from kubespread.report.junit import write_junit

        try:
            written = write_junit(result, junit)
        except OSError as e:
            err.print(f"error: --junit {junit}: {e.strerror or e}", markup=False, highlight=False)
            raise typer.Exit(1) from None
        err.print(f"junit: {written}", markup=False, highlight=False)
    if result.failed:
        err.print(f"error: {_summary(result)}", markup=False, highlight=False)
        raise typer.Exit(EXIT_FAILED)


def _config(path: Path | None, validate: Validation) -> KubeSchedulerConfiguration | None:
    """The KubeSchedulerConfiguration object (the failure runs rebuild its profiles)."""
    from kubespread.api.schedconfig import KubeSchedulerConfiguration
    from kubespread.cli.common import scheduler_profiles_or_exit

    if path is None:
        return None
    scheduler_profiles_or_exit(path, validate)  # exits 1 on a bad file
    obj = load_or_exit([path], validate=validate).objects[0].obj
    assert isinstance(obj, KubeSchedulerConfiguration)
    return obj
