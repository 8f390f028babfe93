"""``kubespread explain POD -f ...``: every node's verdict and scores for one pod, with hints.

The pod is decided against the cluster as ``schedule`` leaves it (the input settled, new
objects created): a pending pod as the scheduler would retry it now, a bound pod as if it
were being scheduled now without itself, a pod manifest as if it were created now.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from kubespread.cli.common import (
    WideOutput,
    err,
    kube_features,
    load_or_exit,
    out,
    print_data,
    run_placement,
    table,
    timings_table,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    MaxPodsOption,
    ProgressOption,
    ReportOption,
    SchedulerConfigOption,
    SeedOption,
    ValidateOption,
    WideOutputOption,
)
from kubespread.cli.render.placement import node_namer, print_preemptions, write_placement_report
from kubespread.cluster.errors import DEFAULT_MAX_PODS
from kubespread.io.loader import LoadedObject, Validation

if TYPE_CHECKING:
    from kubespread.scheduler.explain import Explanation

__all__ = ["explain_command"]

#: short column titles so a default profile's seven score plugins fit 80 columns
_SHORT_PLUGINS = {
    "TaintToleration": "Taint",
    "NodeAffinity": "NodeAff",
    "NodeResourcesFit": "Fit",
    "PodTopologySpread": "Spread",
    "InterPodAffinity": "PodAff",
    "NodeResourcesBalancedAllocation": "Balance",
    "ImageLocality": "Image",
    "VolumeBinding": "Volume",
}


def _manifest_pod(path: Path, validate: Validation) -> LoadedObject:
    """The one Pod of a manifest file (exit 2 when it holds anything else)."""
    from kubespread.api.core import Pod

    manifests = load_or_exit([path], validate=validate)
    pods = [lo for lo in manifests.objects if isinstance(lo.obj, Pod)]
    if len(pods) != 1 or len(manifests.objects) != 1:
        err.print(
            f"error: {path}: POD must be namespace/name or a file holding exactly one Pod", markup=False
        )
        raise typer.Exit(2)
    return pods[0]


def _verdict(row: dict[str, Any], notes: dict[str, int], wide: bool) -> str:
    """``fits``, or the filter that rejected the node: its short name and a note number (the
    note under the table), or with ``wide`` the plugin and its reasons in full."""
    if row["feasible"]:
        return "[green]fits[/]"
    if not row["examined"]:
        return "[dim]not examined[/]"
    text = f"{row['plugin']}: {'; '.join(row['reasons'])}"
    if wide:
        return f"[red]x[/] {escape(text)}"
    n = notes.setdefault(text, len(notes) + 1)
    return f"[red]x[/] {_SHORT_PLUGINS.get(row['plugin'], row['plugin'])} [{n}]"


def _print_explanation(e: Explanation, wide: bool = False) -> None:
    """``wide``: node and plugin names whole, each rejection's reasons in its row."""
    d = e.to_dict()
    short, note = (str, "") if wide else node_namer([r["name"] for r in d["nodes"]])
    names = {} if wide else _SHORT_PLUGINS
    if d["scheduled"]:
        how = "scored" if d["selectionReason"] == "scored" else "the only feasible node"
        head = f"{d['pod']} goes to {short(d['selectedNode'])} ({how})"
        if d["runningOn"] and d["runningOn"] != d["selectedNode"]:
            head = f"{d['pod']} runs on {short(d['runningOn'])}; scheduled now it would go to "
            head += f"{short(d['selectedNode'])} ({how})"
    else:
        head = f"{d['pod']} is unschedulable"
    out.print(Text(head, style="bold"))
    if d["fitError"]:
        out.print(d["fitError"], markup=False, highlight=False, soft_wrap=False)
    if d.get("samplingSummary"):
        out.print(Text(d["samplingSummary"], style="dim"), soft_wrap=False)
    plugins = d["plugins"]
    t = table("node", "zone", "verdict")
    weights: dict[str, int] = {}
    for r in d["nodes"]:
        for p, s in r["scores"].items():
            weights[p] = s["weight"]
    sep = "\n" if out.is_terminal and not wide else " "  # the weight under the name only in 80 columns
    for p in plugins:
        t.add_column(f"{names.get(p, p)}{sep}x{weights.get(p, 1)}", justify="right", overflow="fold")
    t.add_column("total", justify="right", overflow="fold")
    notes: dict[str, int] = {}
    for r in d["nodes"]:
        cells = [str(r["scores"][p]["normalized"]) if p in r["scores"] else "" for p in plugins]
        total = "" if r["total"] is None else str(r["total"])
        name = ("* " if r["winner"] else "  ") + short(r["name"])
        t.add_row(name, r["zone"] or "-", _verdict(r, notes, wide), *cells, total)
    out.print(t)
    legend = "* the chosen node; " if d["scheduled"] else ""
    legend += "scores are normalized (0-100) and multiplied by each plugin's weight (xN) for the total"
    if note:
        legend += f"; {note}"
    out.print(Text(legend, style="dim"), soft_wrap=False)
    for text, n in notes.items():
        out.print(f"[{n}] {text}", markup=False, highlight=False, soft_wrap=False)
    if e.preemptions:
        out.print()
        print_preemptions(e.preemptions, short)
    if d["hints"]:
        out.print()
        out.print(Text("hints", style="bold"))
        for h in d["hints"]:
            out.print(Text("- " + h), soft_wrap=False)


def _print_timings(e: Explanation) -> None:
    """Where the decision's cycle spent its time: per extension point and plugin, then the
    framework's own work, in µs and as a share of the cycle."""
    if e.timings is None:
        return
    rows, summary = timings_table(e.timings)
    out.print()
    out.print(Text("timings (this cycle; they vary from run to run)", style="bold"))
    out.print(rows)
    out.print(Text(summary, style="dim"), soft_wrap=False)


def explain_command(
    pod: Annotated[
        str, typer.Argument(metavar="POD", hidden=True, help="namespace/name, or a Pod manifest.")
    ],
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: WideOutputOption = WideOutput.table,
    scheduler_config: SchedulerConfigOption = None,
    seed: SeedOption = 0,
    report: ReportOption = None,
    progress: ProgressOption = True,
    validate: ValidateOption = Validation.STRICT,
    max_pods: MaxPodsOption = DEFAULT_MAX_PODS,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            metavar="NAMESPACE",
            help="The namespace of POD when it is given by name (kubectl get pod NAME -n NAMESPACE).",
        ),
    ] = None,
    timings: Annotated[
        bool,
        typer.Option(
            "--timings",
            help="Also show where the scheduling cycle's time went: per extension point and plugin, "
            "µs and share of the cycle (JSON/YAML: timings).",
        ),
    ] = False,
    kube_version: KubeVersionOption = None,
) -> None:
    """Why a pod goes where it goes, or stays pending: every node's filter verdict (plugin and
    reason) and score per plugin, best first, with hints for the failures seen.

    POD is a pod in the input or created by its workloads, named as kubectl names it:
    namespace/name, pod/NAME, or a name (in -n's namespace, else the one pod of that name in
    any namespace); or a Pod manifest to try (explain pod.yaml -f cluster/). With --report the
    cycle is always timed, for the report's chart."""
    from kubespread.sim.placement import (
        AmbiguousPod,
        ExplainRequest,
        NoProfile,
        PodNotFound,
        PodRefused,
        explain,
    )

    result = run_placement(
        files,
        scheduler_config,
        seed,
        progress,
        kubeconfig,
        context,
        validate,
        max_pods=max_pods,
        command="explain",
        features=kube_features(kube_version, kubeconfig, context),
    )
    timed = timings or report is not None
    path = Path(pod)
    try:
        is_file = path.is_file()
    except OSError:  # a name too long to be a file (ENAMETOOLONG): a pod name, or no pod at all
        is_file = False
    target: str | LoadedObject = pod
    if path.suffix in (".yaml", ".yml", ".json") or is_file:
        if not is_file:
            err.print(f"error: {pod}: no such file", markup=False)
            raise typer.Exit(2)
        target = _manifest_pod(path, validate)
    try:
        e = explain(ExplainRequest(result, target, timed, namespace))
    except (NoProfile, PodRefused, AmbiguousPod) as x:
        err.print(f"error: {x}", markup=False)
        raise typer.Exit(1) from None
    except PodNotFound as x:
        err.print(f"error: {x}", markup=False)
        if x.pending:
            err.print("pending pods: " + ", ".join(x.pending[:10]), markup=False)
        raise typer.Exit(1) from None
    data = e.to_dict()
    shown = data if timings else {k: v for k, v in data.items() if k != "timings"}
    if output.is_table:
        _print_explanation(e, wide=output is WideOutput.wide)
        if timings:
            _print_timings(e)
    else:
        print_data(shown, output)
    if report is not None:
        written = write_placement_report(report, result, f"kubespread explain {pod}", data)
        err.print(f"report: {written}", markup=False, highlight=False)
