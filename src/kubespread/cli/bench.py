"""``kubespread bench``: scheduling throughput on a benchmark input (../shared/bench), one
JSON object on stdout; a progress bar on stderr when it is a terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

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
) -> None:
    """Schedule the incoming pods one after another and print pods/s, timing the cycles only.

    INPUT is a benchmark input (the conformance schema, JSON)."""
    import cProfile

    from kubespread.scheduler.bench import run_bench
    from kubespread.scheduler.evaluate import EvaluateError

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
        result = run_bench(input_file, on_pod=on_pod, profiler=profiler)
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
    typer.echo(json.dumps(result.to_dict()))
