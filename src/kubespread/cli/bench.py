"""``kubespread bench``: scheduling throughput on a benchmark input (../shared/bench), one
JSON object on stdout (``-o table``: a table); a progress bar on stderr when it is a terminal.
``--by-plugin`` adds where the cycles' time went; ``--no-timings`` runs the cycles untimed, so
the timing's own cost can be measured (benchmarks/run.py), and ``--overhead`` measures it per
cycle (each one run timed and untimed in turn)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kubespread.cli.common import Output, out, print_data, table, timings_table
from kubespread.cli.options import KubeVersionOption, OutputOption

if TYPE_CHECKING:
    from kubespread.harness.bench import BenchResult

__all__ = ["bench_command"]


def bench_command(
    input_file: Annotated[
        Path, typer.Argument(metavar="INPUT", hidden=True, help="Benchmark input (conformance schema, JSON).")
    ],
    placements: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help='Write {"namespace/name": node} (null when unschedulable) to this file.'
        ),
    ] = None,
    profile_out: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Profile the scheduling cycles with cProfile; write pstats data here."
        ),
    ] = None,
    by_plugin: Annotated[
        bool,
        typer.Option(
            "--by-plugin",
            help="Also show where the cycles' time went: per extension point and plugin, total µs, "
            "µs per pod and share of the cycles' time (JSON: byPlugin).",
        ),
    ] = False,
    timings: Annotated[
        bool,
        typer.Option(
            "--timings/--no-timings",
            help="Time every plugin call (the default); --no-timings reads no clock inside the "
            "cycles, to measure what timing costs.",
        ),
    ] = True,
    overhead: Annotated[
        bool,
        typer.Option(
            "--overhead",
            help="Run every cycle twice on the same state, timed and untimed (which first "
            "alternating), and report how much longer the timed ones took (JSON: overhead); pods/s "
            "counts the timed cycles only.",
        ),
    ] = False,
    output: OutputOption = Output.json,
    kube_version: KubeVersionOption = None,
) -> None:
    """Schedule the incoming pods one after another and print pods/s, timing the cycles only.

    INPUT is a benchmark input (the conformance schema, JSON)."""
    import cProfile

    from kubespread.harness.bench import run_bench
    from kubespread.harness.evaluate import EvaluateError

    for flag, asked in (("--by-plugin", by_plugin), ("--overhead", overhead)):
        if asked and not timings:
            typer.echo(f"error: {flag} needs timed cycles; drop --no-timings", err=True)
            raise typer.Exit(2)

    profiler = cProfile.Profile() if profile_out is not None else None
    progress = None
    on_pod = None
    if sys.stderr.isatty():
        from kubespread.cli.common import progress_bar

        progress = progress_bar()
        task = progress.add_task("scheduling", total=None)

        def on_pod(done: int, total: int) -> None:
            if done % 50 == 0 or done == total:
                progress.update(task, completed=done, total=total)

        progress.start()
    try:
        result = run_bench(
            input_file,
            on_pod=on_pod,
            profiler=profiler,
            timed=timings,
            paired=overhead,
            features=kube_version,
        )
    except EvaluateError as e:
        typer.echo(f"error: {input_file}: {e}", err=True)
        raise typer.Exit(2) from None
    finally:
        if progress is not None:
            progress.stop()
    try:
        if placements is not None:
            placements.write_text(json.dumps(result.placements, indent=0, sort_keys=True) + "\n")
        if profiler is not None:
            profiler.dump_stats(str(profile_out))
    except OSError as e:
        typer.echo(f"error: {e.filename}: {e.strerror or e}", err=True)
        raise typer.Exit(2) from None
    data = result.to_dict(by_plugin=by_plugin)
    if output is Output.json:
        typer.echo(json.dumps(data))  # one line: benchmarks/run.py reads it
    elif output is Output.yaml:
        print_data(data, output)
    else:
        _print_table(result, by_plugin)


def _print_table(result: BenchResult, by_plugin: bool) -> None:
    t = table(
        ("pods", "right"),
        ("scheduled", "right"),
        ("unschedulable", "right"),
        ("pods/s", "right"),
        ("wall s", "right"),
        "timed",
    )
    t.add_row(
        str(result.pods),
        str(result.scheduled),
        str(result.unschedulable),
        f"{result.pods_per_second:,.1f}",
        f"{result.wall_seconds:.3f}",
        "yes" if result.timings is not None else "no",
    )
    out.print(t)
    if result.paired_ns is not None:
        on, off = result.paired_ns
        out.print(
            f"timing overhead: timed cycles {on / 1e9:.3f} s, the same cycles untimed {off / 1e9:.3f} s "
            f"({100 * (on / off - 1):+.1f}%; median per cycle {result.paired_median_percent:+.1f}%)",
            markup=False,
            highlight=False,
        )
    if by_plugin and result.timings is not None:
        rows, summary = timings_table(result.timings, pods=result.pods)
        out.print()
        out.print(rows)
        out.print(summary, markup=False, highlight=False, soft_wrap=False)
