"""The spread table ``schedule`` and ``simulate`` print: rows of
``kubespread.scheduler.views.spread_rows`` (as dicts), rendered and nothing else. The numbers
are the view's; this module only chooses how they look in 80 columns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from rich.table import Table

from kubespread.cli.common import table
from kubespread.cli.render.workload import workload_label
from kubespread.cluster.workloads import WorkloadRef

__all__ = [
    "OUT_LEGEND",
    "RAW_LEGEND",
    "domains_text",
    "has_left_out",
    "has_raw_column",
    "skew_text",
    "spread_table",
]

#: what the ``raw`` column means, printed under a table that has one
RAW_LEGEND = "raw: the workload's own running pods, max - min over every domain of the key"

#: what ``(d=n)`` means, printed under a table that shows some
OUT_LEGEND = "(d=n): domain d left out by nodeAffinityPolicy/nodeTaintsPolicy; n: own pods"

Label = Literal["owner", "controller"]


def domains_text(
    domains: Mapping[str, int],
    short: Callable[[str], str] = str,
    left_out: Sequence[str] = (),
    raw: Mapping[str, int] | None = None,
) -> str:
    """Every domain when few; a count of domains per pod count when many (hostname keys);
    then the domains the scheduler leaves out in parentheses, named when few, with the
    workload's own pods there (``raw``: its rawDomains)."""
    if not domains:
        text = "(no eligible domain)" if left_out else "(no node has this key)"
    elif len(domains) <= 6:
        text = "  ".join(f"{short(d)}={n}" for d, n in domains.items())
    else:
        hist = Counter(domains.values())
        counts = ", ".join(f"{hist[n]} with {n}" for n in sorted(hist, reverse=True))
        text = f"{len(domains)} domains: {counts}"
    if left_out:
        few = len(domains) <= 6 and len(left_out) <= 2
        raw = raw or {}
        if few:
            text += "".join(f"  ({short(d)}={raw[d]})" if d in raw else f"  ({short(d)})" for d in left_out)
        else:
            text += f"  (+{len(left_out)} left out)"
    return text


def has_raw_column(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the raw skew says something the scheduler's does not: it differs, or a row has
    no constraint (raw view only)."""
    return any(r["skew"] is None or r["rawSkew"] != r["skew"] for r in rows)


def has_left_out(rows: Sequence[Mapping[str, Any]]) -> bool:
    return any(r["leftOutDomains"] for r in rows)


def _owner(r: Mapping[str, Any]) -> tuple[str, str, str] | None:
    o = r.get("owner")
    return (r["namespace"], o["kind"], o["name"]) if o else None


def _label(r: Mapping[str, Any], label: Label, shared: set[tuple[str, str, str] | None]) -> str:
    ns = r["namespace"]
    w = r["workload"]
    if w is None:
        return workload_label(None, ns, r["pod"])
    if label == "owner" and r.get("owner") and _owner(r) not in shared:
        kind, name = r["owner"]["kind"], r["owner"]["name"]
    else:
        kind, name = w["kind"], w["name"]
    return workload_label(WorkloadRef(ns, kind, name))


def skew_text(r: Mapping[str, Any]) -> str:
    """``skew/maxSkew``, ``soft`` for ScheduleAnyway, ``over`` beyond maxSkew; ``-`` without a
    constraint."""
    if r["skew"] is None:
        return "-"
    hard = "" if r["whenUnsatisfiable"] == "DoNotSchedule" else " soft"
    over = "" if r["withinMaxSkew"] else " [red]over[/]"
    return f"{r['skew']}/{r['maxSkew']}{hard}{over}"


def spread_table(
    rows: Sequence[Mapping[str, Any]], short: Callable[[str], str] = str, label: Label = "owner"
) -> Table:
    """One line per row: the workload (its ``owner``, the Deployment, unless it has several
    ReplicaSets in the rows; or its ``controller``, the ReplicaSet), the key's last segment,
    the scheduler's pods per eligible domain (the workload's own pods per domain for a row
    without a constraint), skew/maxSkew, and the raw skew when ``has_raw_column``. ``short``
    shortens hostname domains."""
    t = table("workload" if label == "owner" else "controller", "key", "pods per domain", ("skew", "right"))
    # an owner with several controllers in the rows (a Deployment mid-rollout): name those
    controllers: dict[tuple[str, str, str] | None, set[str]] = {}
    for r in rows:
        if r["workload"] is not None:
            controllers.setdefault(_owner(r), set()).add(r["workload"]["name"])
    shared = {o for o, names in controllers.items() if len(names) > 1}
    raw = has_raw_column(rows)
    if raw:
        t.add_column("raw", justify="right", overflow="fold")
    for r in rows:
        key = r["topologyKey"]
        name = key.rsplit("/", 1)[-1] + (" (default)" if r["defaulted"] else "")
        shorten = short if "hostname" in key else str
        if r["skew"] is None:
            domains = domains_text(r["rawDomains"], shorten)
        else:
            domains = domains_text(r["domains"], shorten, r["leftOutDomains"], r["rawDomains"])
        cells = [_label(r, label, shared), name, domains, skew_text(r)]
        if raw:
            cells.append(str(r["rawSkew"]))
        t.add_row(*cells)
    return t
