"""The options more than one command takes, and their checks. A command's own options stay
in its module; what two commands share is declared here once, so no command imports another."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kubespread.api.features import KUBE_VERSION_ENV, KUBE_VERSIONS, FeatureGates, VersionError, features_for
from kubespread.cli.common import Output, WideOutput
from kubespread.io.loader import Validation

__all__ = [
    "ContextOption",
    "FilesOption",
    "KubeVersionOption",
    "KubeconfigOption",
    "MaxPodsOption",
    "NamespaceOption",
    "OutputOption",
    "ProgressOption",
    "ReportOption",
    "SchedulerConfigOption",
    "SeedOption",
    "ValidateOption",
    "WideOutputOption",
    "at_least_one",
    "kube_version",
    "not_negative",
    "positive_seconds",
    "split_files",
]


def at_least_one(value: int) -> int:
    """A count option's lower bound, said in words (Click's range would print ``x>=1``)."""
    if value < 1:
        raise typer.BadParameter(f"must be at least 1, got {value}")
    return value


def not_negative(value: int | None) -> int | None:
    """A count that may be 0 (None: not given), said in words."""
    if value is not None and value < 0:
        raise typer.BadParameter(f"must be 0 or more, got {value}")
    return value


def positive_seconds(value: float) -> float:
    """A time limit: more than 0 seconds."""
    if value <= 0:
        raise typer.BadParameter(f"must be more than 0 seconds, got {value:g}")
    return value


def split_files(paths: list[Path] | None) -> list[Path]:
    """kubectl's ways of naming several files: ``-f a.yaml,b.yaml`` (split at commas) and
    ``-f=a.yaml`` (a short option's ``=`` kept by the parser, dropped here)."""
    out: list[Path] = []
    for p in paths or []:
        text = str(p)
        if text.startswith("="):
            text = text[1:]
        out += [Path(part) for part in text.split(",") if part] if "," in text else [Path(text)]
    return out


def kube_version(value: str | None) -> FeatureGates | None:
    """--kube-version's value as the gates of that version (None: not given, so the command
    asks the API server's /version in live modes and answers as 1.35 otherwise)."""
    if value is None or isinstance(value, FeatureGates):
        return value
    try:
        return features_for(value)
    except VersionError as e:
        raise typer.BadParameter(str(e)) from None


_VERSIONS = "|".join(str(v) for v in KUBE_VERSIONS)

KubeVersionOption = Annotated[
    FeatureGates | None,
    typer.Option(
        "--kube-version",
        metavar="VERSION",
        envvar=KUBE_VERSION_ENV,
        parser=kube_version,
        help=f"Answer as kube-scheduler and kube-apiserver of this Kubernetes version ({_VERSIONS}; "
        f"env {KUBE_VERSION_ENV}; default 1.35, or the API server's /version in live modes). See "
        'the README\'s "What changes between versions".',
        show_default=False,
    ),
]

FilesOption = Annotated[
    list[Path],
    typer.Option(
        "-f",
        "--filename",
        metavar="FILE",
        callback=split_files,
        help="Manifest file, directory (recursive: *.yaml, *.yml, *.json) or - for stdin. "
        "Repeatable; a,b for several.",
    ),
]
OutputOption = Annotated[
    Output, typer.Option("-o", "--output", metavar="FORMAT", help="Output format: table, json or yaml.")
]
WideOutputOption = Annotated[
    WideOutput,
    typer.Option(
        "-o",
        "--output",
        metavar="FORMAT",
        help="Output format: table, wide (the table with more columns), json or yaml.",
    ),
]
ValidateOption = Annotated[
    Validation,
    typer.Option(
        "--validate",
        metavar="MODE",
        help="Unknown or duplicate fields in a manifest: strict (an error, as kubectl's default), "
        "warn (a warning, the field is ignored) or ignore. Values the API server cannot decode "
        "(a string for an integer, an int32 field over 2147483647) are errors in every mode.",
        case_sensitive=False,
    ),
]
MaxPodsOption = Annotated[
    int,
    typer.Option(
        "--max-pods",
        metavar="N",
        callback=at_least_one,
        help="Stop with an error when the run would hold more pods than this at once (a "
        "runaway replicas: 1000000000 fails at once rather than running for hours).",
    ),
]
KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        metavar="FILE",
        help="Also read the cluster (nodes, pods, namespaces, workloads, WorkloadSpreads) from the "
        "API server of this kubeconfig; read-only. Needs kubespread[live].",
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context", metavar="NAME", help="The kubeconfig context to read (default: its current context)."
    ),
]

SchedulerConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--scheduler-config",
        metavar="FILE",
        help="A KubeSchedulerConfiguration file (default: v1.35's defaults).",
    ),
]
NamespaceOption = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="Create the manifests' objects that name no namespace in this one, as kubectl apply -n "
        "(one naming another is an error).",
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", metavar="N", help="Seed for generated pod names and score ties.")
]
ProgressOption = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr (terminals only).")
]
ReportOption = Annotated[
    Path | None,
    typer.Option(
        "--report", metavar="DIR", help="Write DIR/report.html: one self-contained page with pictures."
    ),
]
