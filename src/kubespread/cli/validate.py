"""``kubespread validate``: every problem in every object, as kube-apiserver would report it."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Set
from pathlib import Path

import typer

from kubespread.admission.framework import AdmissionContext
from kubespread.api.apps import PriorityClass
from kubespread.api.core import Pod
from kubespread.api.features import FeatureGates
from kubespread.api.meta import KubeObject
from kubespread.cli.common import (
    Output,
    err,
    input_namespaces,
    kube_features,
    load_or_exit,
    missing_namespace,
    out,
    print_data,
    warn_assumed_namespaces,
)
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    KubeVersionOption,
    OutputOption,
    ValidateOption,
)
from kubespread.io.loader import STDIN, LoadedObject, LoadProblem, Validation

__all__ = ["validate_command"]


def _known_priority_classes(objs: Iterable[KubeObject]) -> Set[str]:
    """The built-in PriorityClasses and those among the objects: what a pod may name."""
    given = [o for o in objs if isinstance(o, PriorityClass)]
    return set(AdmissionContext.create(priority_classes=given).priority_classes)


def _problem(lo: LoadedObject, message: str, field: str | None) -> LoadProblem:
    """A problem of one object's field, located at the field's own line."""
    return LoadProblem(lo.source, message, line=lo.line_of(field), ref=lo.ref, field=field)


def collect_problems(
    files: FilesOption,
    kubeconfig: Path | None = None,
    context: str | None = None,
    validate: Validation = Validation.STRICT,
    features: FeatureGates | None = None,
) -> tuple[list[LoadProblem], Counter[str], list[str]]:
    """Load, and judge each object as creating it would (a stored one as stored); returns
    (errors, objects per source, sources in order). A Pod naming a PriorityClass that is
    neither built in nor among the objects is refused as the Priority admission plugin refuses
    it, unless it was already stored (a dump's pod has a uid: it was admitted, and a dump
    seldom carries the cluster's PriorityClasses)."""
    from kubespread.admission.apiserver import creation_errors, is_stored

    manifests = load_or_exit(
        files, allow_errors=True, kubeconfig=kubeconfig, context=context, validate=validate
    )
    problems = list(manifests.errors)
    warn_assumed_namespaces(manifests)
    namespaces = input_namespaces(manifests)
    per_source: Counter[str] = Counter()
    classes = _known_priority_classes(lo.obj for lo in manifests.objects)
    for lo in manifests.objects:
        per_source[lo.source] += 1
        refusal = missing_namespace(lo.obj, namespaces)
        if refusal is not None:
            problems.append(_problem(lo, refusal, "metadata.namespace"))
        for fe in creation_errors(lo.obj, features):
            problems.append(_problem(lo, fe.body(), fe.field or None))
        name = lo.obj.spec.priority_class_name if isinstance(lo.obj, Pod) else ""
        if name and name not in classes and not is_stored(lo.obj):
            # the Priority admission plugin's refusal (403, no field path: it is located here)
            why = f'pods "{lo.obj.metadata.name}" is forbidden: no PriorityClass with name {name} was found'
            problems.append(_problem(lo, why, "spec.priorityClassName"))
    for source, kind in dict.fromkeys((src, kind) for src, _, kind in manifests.own_documents):
        if kind == "Scenario":
            found, objects = scenario_problems(source, validate)
            problems += found
            per_source[source] += objects
        else:  # a CheckPolicy, as ``check --policy`` reads it
            problems += policy_problems(source)
            per_source[source] += 1
    sources = list(dict.fromkeys(manifests.sources + [p.source for p in problems]))
    return problems, per_source, sources


def policy_problems(source: str) -> list[LoadProblem]:
    """A ``check`` policy file's problems (each at its line), as ``check --policy`` finds them."""
    from kubespread.plan.policy import PolicyError, load_policy

    if source == STDIN:
        return [LoadProblem(source, "a policy is validated from its file (check reads no stdin)")]
    try:
        load_policy(source)
    except PolicyError as e:
        located = re.compile(rf"^{re.escape(source)}(?::(\d+))?: (.*)$", re.S)
        found = []
        for p in e.problems:
            m = located.match(p)
            found.append(
                LoadProblem(source, m.group(2), line=int(m.group(1)) if m.group(1) else None)
                if m
                else LoadProblem(source, p)
            )
        return found
    return []


def scenario_problems(source: str, validate: Validation) -> tuple[list[LoadProblem], int]:
    """A scenario file checked as ``simulate`` reads it (its fields, steps, the files it names
    and every manifest it holds, each as creating it would be judged): the problems, each
    worded as ``simulate`` words it, and the objects it holds. A scenario read from stdin
    cannot name files relative to anything: it is checked from the current directory."""
    from kubespread.sim.scenario import ScenarioError, load_scenario

    if source == STDIN:
        return [LoadProblem(source, "a scenario is validated from its file (simulate reads no stdin)")], 0
    try:
        scenario = load_scenario(source, validation=validate)
    except ScenarioError as e:
        prefix = f"{source}: "
        return [LoadProblem(source, p.removeprefix(prefix)) for p in e.problems], 0
    applied = sum(len(step.objects) for step in scenario.steps)
    return [], len(scenario.cluster) + applied


def validate_command(
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: OutputOption = Output.table,
    validate: ValidateOption = Validation.STRICT,
    kube_version: KubeVersionOption = None,
) -> None:
    """Validate manifests as kube-apiserver would: every error, with its field path."""
    features = kube_features(kube_version, kubeconfig, context)
    problems, per_source, sources = collect_problems(files, kubeconfig, context, validate, features)
    by_source: dict[str, list[LoadProblem]] = defaultdict(list)
    for p in problems:
        by_source[p.source].append(p)
    if output is not Output.table:
        print_data(
            {
                "valid": not problems,
                "files": [
                    {
                        "file": s,
                        "objects": per_source.get(s, 0),
                        "errors": [
                            {"ref": p.ref, "field": p.field, "message": p.message, "line": p.line}
                            for p in by_source.get(s, [])
                        ],
                    }
                    for s in sources
                ],
            },
            output,
        )
    else:
        for s in sources:
            errs = by_source.get(s)
            if not errs:
                n = per_source.get(s, 0)
                out.print(f"{s}: {n} object{'s' if n != 1 else ''} valid", markup=False)
                continue
            for p in errs:  # FILE:LINE: Kind namespace/name: field.path: message, as every command
                out.print(str(p), markup=False)
    if problems:
        n_files = len(by_source)
        err.print(
            f"{len(problems)} error{'s' if len(problems) != 1 else ''} in {n_files} "
            f"file{'s' if n_files != 1 else ''}",
            markup=False,
        )
        raise typer.Exit(1)
