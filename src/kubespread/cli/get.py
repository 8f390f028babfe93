"""``kubespread get nodes|pods``: kubectl-like tables of what the manifests describe."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from kubespread.api.core import Node, Pod
from kubespread.api.keys import zone_of
from kubespread.api.quantity import Format, Quantity
from kubespread.api.resources import pod_requests
from kubespread.api.selectors import EVERYTHING, parse_selector
from kubespread.cli.common import WideOutput, err, load_or_exit, out, print_data, table
from kubespread.cli.options import (
    ContextOption,
    FilesOption,
    KubeconfigOption,
    ValidateOption,
)
from kubespread.io.dump import to_list_manifest
from kubespread.io.loader import Validation

__all__ = ["get_command"]


class Resource(StrEnum):
    nodes = "nodes"
    pods = "pods"


#: kubectl's names of the two resource types: plural, singular and short
RESOURCE_NAMES = {
    "nodes": Resource.nodes,
    "node": Resource.nodes,
    "no": Resource.nodes,
    "pods": Resource.pods,
    "pod": Resource.pods,
    "po": Resource.pods,
}


class GetOutput(StrEnum):
    """``-o`` of ``get``: kubectl's table, wide, json, yaml and name (``pod/NAME``)."""

    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"
    name = "name"


def resource_of(text: str) -> tuple[Resource, str | None]:
    """``pods``, ``po``, ``pod/NAME``, ... as kubectl reads a RESOURCE argument: the type and
    the name a TYPE/NAME form gives; a usage error for a type ``get`` does not list."""
    kind, slash, name = text.partition("/")
    resource = RESOURCE_NAMES.get(kind.lower())
    if resource is None:
        raise typer.BadParameter(
            f"{kind!r} is not one of 'nodes', 'pods' (nor node, no, pod, po)", param_hint="'RESOURCE'"
        )
    if slash and not name:
        raise typer.BadParameter(f"{text!r}: TYPE/NAME needs a name", param_hint="'RESOURCE'")
    return resource, name or None


def _zone(labels: dict[str, str]) -> str:
    return zone_of(labels) or "<none>"


def _labels(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items()) or "<none>"


def node_status(node: Node) -> str:
    """kubectl's STATUS: the Ready condition (nodes without conditions count as ready here,
    since simulated clusters rarely carry status), plus SchedulingDisabled when cordoned."""
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
    status = "Ready" if ready is None or ready.status == "True" else "NotReady"
    if node.spec.unschedulable:
        status += ",SchedulingDisabled"
    return status


def pod_status(pod: Pod) -> str:
    if pod.is_terminating:
        return "Terminating"
    if pod.spec.scheduling_gates and not pod.spec.node_name:
        return "SchedulingGated"
    return pod.status.phase or ("Pending" if not pod.spec.node_name else "Running")


def _resource(node: Node, name: str) -> str:
    q = node.allocatable.get(name)
    return q.canonical() if q is not None else "-"


#: what ``-o wide`` adds for nodes: well-known labels, one column each
_WIDE_NODE_LABELS = {
    "REGION": "topology.kubernetes.io/region",
    "INSTANCE-TYPE": "node.kubernetes.io/instance-type",
    "ARCH": "kubernetes.io/arch",
}


def nodes_table(nodes: list[Node], show_labels: bool, wide: bool = False) -> Table:
    extra = list(_WIDE_NODE_LABELS) if wide else []
    t = table(
        "NAME",
        "STATUS",
        "ZONE",
        "CPU",
        "MEMORY",
        "PODS",
        "TAINTS",
        *extra,
        *(["LABELS"] if show_labels else []),
    )
    for n in nodes:
        taints = ",".join(f"{x.key}{'=' + x.value if x.value else ''}:{x.effect}" for x in n.spec.taints)
        row = [
            n.name,
            node_status(n),
            _zone(n.labels),
            _resource(n, "cpu"),
            _resource(n, "memory"),
            _resource(n, "pods"),
            taints or "<none>",
        ]
        row += [n.labels.get(_WIDE_NODE_LABELS[c], "<none>") for c in extra]
        t.add_row(*row, *([_labels(n.labels)] if show_labels else []))
    return t


def _controlled_by(pod: Pod) -> str:
    ref = pod.metadata.controller_ref()
    return f"{ref.kind}/{ref.name}" if ref is not None else "<none>"


def pods_table(pods: list[Pod], zones: dict[str, str], show_labels: bool, wide: bool = False) -> Table:
    extra = ["PRIORITY", "NOMINATED NODE", "CONTROLLED BY"] if wide else []
    t = table(
        "NAMESPACE",
        "NAME",
        "STATUS",
        "NODE",
        "ZONE",
        "CPU",
        "MEMORY",
        *extra,
        *(["LABELS"] if show_labels else []),
    )
    for p in pods:
        node = p.spec.node_name
        req = pod_requests(p)  # what kube-scheduler counts: init containers, sidecars, overhead
        row = [
            p.namespace,
            p.name,
            pod_status(p),
            node or "<none>",
            zones.get(node, "<none>") if node else "<none>",
            Quantity.from_milli(req.milli_cpu).canonical(),
            Quantity.from_int(req.memory, Format.BINARY_SI).canonical(),
        ]
        if wide:
            priority = "<none>" if p.spec.priority is None else str(p.spec.priority)
            row += [priority, p.status.nominated_node_name or "<none>", _controlled_by(p)]
        t.add_row(*row, *([_labels(p.labels)] if show_labels else []))
    return t


def get_command(
    resource: Annotated[
        str,
        typer.Argument(metavar="RESOURCE", hidden=True, help="nodes or pods, or TYPE/NAME."),
    ],
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="[NAME]...", hidden=True, help="Only these objects.", show_default=False),
    ] = None,
    files: FilesOption = [],  # noqa: B006 - Typer reads the default
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: Annotated[
        GetOutput,
        typer.Option(
            "-o",
            "--output",
            metavar="FORMAT",
            help="Output format: table, wide (the table with more columns), json, yaml or name "
            "(pod/NAME, one a line).",
        ),
    ] = GetOutput.table,
    namespace: Annotated[
        str | None, typer.Option("-n", "--namespace", metavar="NAMESPACE", help="Only this namespace (pods).")
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option(
            "-A",
            "--all-namespaces",
            help="Pods of every namespace (what get lists without -n); wins over -n.",
        ),
    ] = False,
    show_labels: Annotated[bool, typer.Option("--show-labels", help="Add a LABELS column.")] = False,
    selector: Annotated[
        str | None,
        typer.Option(
            "-l",
            "--selector",
            metavar="SELECTOR",
            help="Label selector, kubectl syntax (app=web,env in (a,b)).",
        ),
    ] = None,
    validate: ValidateOption = Validation.STRICT,
) -> None:
    """List nodes or pods from manifests, like kubectl get.

    RESOURCE is nodes or pods (node, no, pod, po), or TYPE/NAME (pod/web-0); NAMEs after it
    list only those objects."""
    kind, named = resource_of(resource)
    wanted = [*([named] if named else []), *(names or [])]
    if all_namespaces:
        namespace = None
    try:
        sel = parse_selector(selector) if selector is not None else EVERYTHING
    except ValueError as e:
        err.print(f"error: {e}", markup=False)
        raise typer.Exit(2) from None
    manifests = load_or_exit(files, kubeconfig=kubeconfig, context=context, validate=validate)
    wide = output is GetOutput.wide
    all_nodes = manifests.of_kind(Node)
    if kind is Resource.nodes:
        nodes = [n for n in all_nodes if sel.matches(n.labels) and (not wanted or n.name in wanted)]
        if nodes or not wanted:  # names none of which is there: only their errors
            _show(nodes, output, "nodes", lambda: nodes_table(nodes, show_labels, wide))
        _not_found("nodes", wanted, {n.name for n in nodes})
        return
    pods = [
        p
        for p in manifests.of_kind(Pod)
        if (namespace is None or p.namespace == namespace)
        and sel.matches(p.labels)
        and (not wanted or p.name in wanted)
    ]
    zones = {n.name: _zone(n.labels) for n in all_nodes}  # every node's zone, whatever the selector
    if pods or not wanted:
        _show(pods, output, "pods", lambda: pods_table(pods, zones, show_labels, wide))
    _not_found("pods", wanted, {p.name for p in pods})


def _not_found(what: str, wanted: list[str], found: set[str]) -> None:
    """kubectl's answer to names that are not there, after listing those that are: one line
    each on stderr, exit 1."""
    missing = [name for name in dict.fromkeys(wanted) if name not in found]
    for name in missing:
        err.print(f'Error from server (NotFound): {what} "{name}" not found', markup=False, highlight=False)
    if missing:
        raise typer.Exit(1)


def _show(objs: list[Node] | list[Pod], output: GetOutput, what: str, render: Callable[[], Table]) -> None:
    """kubectl's outcomes: a List for -o json|yaml, ``kind/name`` lines for -o name, "No X
    found." (a table of nothing), or the table."""
    if output in (GetOutput.json, GetOutput.yaml):
        print_data(to_list_manifest(objs), WideOutput(output.value))
    elif output is GetOutput.name:
        for obj in objs:
            out.print(f"{obj.KIND.lower()}/{obj.metadata.name}", markup=False, highlight=False)
    elif not objs:
        out.print(f"No {what} found.", markup=False, highlight=False)
    else:
        out.print(render())
