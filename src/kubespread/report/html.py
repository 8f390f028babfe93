"""One self-contained HTML page per run: pictures inlined as data URIs, CSS inline, no
scripts and no external URLs, so the file can be mailed, attached to a ticket or opened
offline and still show everything. Every string that comes from manifests or messages is
escaped: pod names and scheduler messages are user data."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

__all__ = ["REPORT_FILE", "render_report", "write_report"]

#: the one file write_report creates
REPORT_FILE = "report.html"
#: pod names listed under one pending message before the rest are counted
_MAX_NAMES = 20

Table = tuple[str, Sequence[str], Sequence[Sequence[Any]]]
#: (png bytes or None, alt text, caption)
Picture = tuple[bytes | None, str, str]

_CSS = """
*{box-sizing:border-box}
body{margin:0;background:#fff;color:#1f1f1f;
 font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px 16px 48px}
header{border-bottom:2px solid #1f77b4;margin-bottom:20px;padding-bottom:8px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}
.subtitle{color:#555;margin:0}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px;max-width:100%}
th,td{border:1px solid #c8c8c8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}
td.node{white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.winner td{background:#e3f1e6;font-weight:600}
tr.filtered td{color:#5c5c5c}
figure{margin:16px 0 28px}
figure img{display:block;max-width:100%;height:auto;border:1px solid #e2e2e2}
figcaption{font-size:14px;color:#444;margin-top:6px;max-width:900px}
code,.msg{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,monospace;font-size:13px}
.msg{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;border-left:3px solid #ff7f0e;
 padding:4px 8px;margin:4px 0}
details{margin:6px 0}
summary{cursor:pointer;font-weight:600}
p.pods{margin:2px 0 12px 12px}
.muted{color:#666}
footer{margin-top:40px;color:#777;font-size:13px}
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure(png: bytes | None, alt: str, caption: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{_e(alt)}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _step_label(step: Mapping[str, Any], index: int) -> str:
    return str(step.get("label") or step.get("description") or f"step {index}")


def _fmt_time(t: Any) -> str:
    return f"{t:g}s" if isinstance(t, int | float) else ""


def _steps_section(steps: Sequence[Mapping[str, Any]]) -> str:
    from kubespread.report.plots import running_pods

    rows = [
        [i, _fmt_time(s.get("time")), _step_label(s, i), running_pods(s), len(s.get("pending") or ())]
        for i, s in enumerate(steps)
    ]
    return (
        "<section><h2>Steps</h2>"
        '<p class="muted">The pictures number the steps as in the first column.</p>'
        + _table(["#", "time", "step", "running", "pending"], rows, numeric=(0, 1, 3, 4))
        + "</section>"
    )


def _spans(indices: Sequence[int]) -> str:
    """Step numbers as runs: ``#2-#5, #8``."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"#{r[0]}" if len(r) == 1 else f"#{r[0]}-#{r[-1]}" for r in runs)


def _pending_section(steps: Sequence[Mapping[str, Any]]) -> str:
    """One entry per distinct message (a FitError says the same thing at every step a pod
    stays pending): the steps it spans and the pods that got it, first seen first."""
    with_pending = [(i, s) for i, s in enumerate(steps) if s.get("pending")]
    if not with_pending:
        return "<section><h2>Pending pods</h2><p>No pod was left pending at any step.</p></section>"
    seen: dict[str, tuple[list[int], dict[str, None], str]] = {}
    for i, step in with_pending:
        for p in step["pending"]:
            name = p.get("name", "")
            ns = p.get("namespace")
            full = f"{ns}/{name}" if ns and ns != "default" else str(name)
            message = str(
                p.get("message")
                or "(no message: not tried yet, gated, or no scheduler with its schedulerName)"
            )
            at, pods, _ = seen.setdefault(message, ([], {}, _step_label(step, i)))
            if not at or at[-1] != i:
                at.append(i)
            pods[full] = None
    parts = ["<section><h2>Pending pods</h2>"]
    for message, (at, pods, first_label) in seen.items():
        names = list(pods)
        listed = ", ".join(names[:_MAX_NAMES])
        if len(names) > _MAX_NAMES:
            listed += f" and {len(names) - _MAX_NAMES} more"
        n = len(at)
        parts.append(
            f'<div class="msg">{_e(message)}</div>'
            f'<p class="pods">steps {_e(_spans(at))} ({n} step{"s" if n != 1 else ""}, from '
            f"{_e(first_label)}); pods: <code>{_e(listed)}</code></p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _short(namespace: Any, name: Any) -> str:
    return str(name) if not namespace or namespace == "default" else f"{namespace}/{name}"


def _evictions_section(steps: Sequence[Mapping[str, Any]]) -> str:
    """Who was evicted where: per step, each preemption's victims (the node, their priority,
    the budget their eviction breaks, the preemptor, where it then ran and why that node
    won), then the other evictions (drains, taints, the Eviction API) with their message."""
    preempted: list[list[Any]] = []
    others: list[list[Any]] = []
    for i, step in enumerate(steps):
        for entry in step.get("preemptions") or ():
            ran = entry.get("scheduledNode")
            then = f"{ran} at {_fmt_time(entry.get('scheduledAt'))}" if ran else "waiting"
            for v in entry["victims"]:
                preempted.append(
                    [
                        i,
                        _fmt_time(entry.get("time")),
                        _short(v["namespace"], v["name"]),
                        v["node"],
                        v["priority"],
                        v["pdb"] or "-",
                        str(entry["pod"]).removeprefix("default/"),
                        then,
                        entry.get("reason") or "-",
                    ]
                )
        for e in step.get("evictions") or ():
            if e.get("reason") == "Preempted":
                continue
            o = e.get("object") or {}
            others.append(
                [
                    i,
                    _fmt_time(e.get("time")),
                    _short(o.get("namespace"), o.get("name")),
                    e.get("reason"),
                    e.get("message"),
                ]
            )
    if not preempted and not others:
        return ""
    parts = ["<section><h2>Evictions</h2>"]
    if preempted:
        parts.append(
            '<h3>Preempted</h3><p class="muted">Each victim gets the DisruptionTarget condition '
            "(PreemptionByScheduler) and terminates gracefully; the preemptor waits nominated to "
            "that node, then runs there. Scheduler preemption does not ask the budgets: the PDB "
            "column names one the eviction breaks.</p>"
        )
        parts.append(
            _table(
                [
                    "#",
                    "time",
                    "victim",
                    "node",
                    "priority",
                    "PDB",
                    "preemptor",
                    "then running on",
                    "why that node",
                ],
                preempted,
                numeric=(0, 1, 4),
            )
        )
    if others:
        parts.append(
            "<h3>Evicted</h3>" + _table(["#", "time", "pod", "reason", "message"], others, numeric=(0, 1))
        )
    parts.append("</section>")
    return "".join(parts)


def _domains(domains: Mapping[str, Any] | None) -> str:
    return " ".join(f"{d}={n}" for d, n in (domains or {}).items()) or "-"


def _spread_section(step: Mapping[str, Any]) -> str:
    """The last step's distribution rows: per workload and constraint, the scheduler's view
    (pods per eligible domain, global minimum, skew/maxSkew) beside the raw one (the workload's
    own running pods over every domain of the key)."""
    rows = []
    for r in step.get("distribution") or ():
        workload = r.get("workload") or {}
        owner = r.get("owner") or {}
        name = owner.get("name") or workload.get("name") or r.get("pod", "")
        ns = r.get("namespace") or workload.get("namespace") or ""
        label = f"{ns}/{name}" if ns and ns != "default" else str(name)
        if workload.get("name") and workload.get("name") != name:
            label += f" ({workload['name']})"
        if r.get("skew") is None:
            constraint, skew = "none", "-"
        else:
            soft = "" if r.get("whenUnsatisfiable") == "DoNotSchedule" else ", soft"
            constraint = f"maxSkew {r.get('maxSkew')}{soft}" + (" (default)" if r.get("defaulted") else "")
            skew = f"{r['skew']}" + ("" if r.get("withinMaxSkew", True) else " (over)")
        out = r.get("leftOutDomains") or []
        rows.append(
            [
                label,
                r.get("topologyKey", ""),
                constraint,
                "-" if r.get("skew") is None else _domains(r.get("domains")),
                ", ".join(out) or "-",
                "-" if r.get("globalMinimum") is None else r["globalMinimum"],
                skew,
                _domains(r.get("rawDomains")),
                "-" if r.get("rawSkew") is None else r["rawSkew"],
            ]
        )
    if not rows:
        return ""
    headers = [
        "workload",
        "topology key",
        "constraint",
        "pods per eligible domain",
        "left out",
        "global min",
        "skew",
        "raw: own pods per domain",
        "raw skew",
    ]
    return (
        f"<section><h2>Spread at the end: {_e(_step_label(step, 0))}</h2>"
        '<p class="muted">As the scheduler counts it: the pods each constraint\'s labelSelector '
        "matches per eligible domain, skew = max - global minimum. Raw: the workload's own running "
        "pods over every domain of the key, max - min.</p>"
        + _table(headers, rows, numeric=(5, 6, 8))
        + "</section>"
    )


def _verdict(node: Mapping[str, Any]) -> str:
    if node.get("winner"):
        return "winner"
    if node.get("feasible"):
        return "feasible"
    plugin = node.get("plugin") or f"{node.get('rejectedAt') or 'Filter'}"
    reasons = "; ".join(str(r) for r in node.get("reasons") or ())
    return f"filtered by {plugin}: {reasons}" if reasons else f"filtered by {plugin}"


def _explanation_section(
    explanation: Mapping[str, Any], heatmap: bytes | None, timings: bytes | None = None
) -> str:
    """``timings``: the time-per-plugin chart, shown when the explanation was timed."""
    pod = explanation.get("pod", "")
    parts = [f"<section><h2>Scheduling explanation for <code>{_e(pod)}</code></h2>"]
    if explanation.get("at"):
        parts.append(f'<p class="at">As the scheduler saw it at {_e(explanation["at"])}.</p>')
    if explanation.get("scheduled") or explanation.get("selectedNode"):
        parts.append(f"<p>Scheduled on <code>{_e(explanation.get('selectedNode'))}</code>.</p>")
    else:
        parts.append("<p>Not schedulable on any node.</p>")
    if explanation.get("fitError"):
        parts.append(f'<div class="msg">{_e(explanation["fitError"])}</div>')
    parts.append(
        _figure(
            heatmap,
            f"Score heatmap for {pod}: one row per node, one column per score plugin",
            "One row per node, best first; one column per score plugin in profile order. A cell is the "
            "plugin's normalized score times its weight (brighter is higher), so a row's cells add up to "
            "its total, drawn on its own blue scale at the right. Grey rows were filtered out before "
            "scoring, with the plugin that rejected them; the star marks the chosen node.",
        )
    )
    rows = []
    for node in explanation.get("nodes") or ():
        cls = "winner" if node.get("winner") else ("" if node.get("feasible") else "filtered")
        total = node.get("total")
        rows.append(
            f'<tr class="{cls}"><td class="node"><code>{_e(node.get("name"))}</code></td>'
            f'<td class="node">{_e(node.get("zone"))}</td>'
            f'<td>{_e(_verdict(node))}</td><td class="num">{_e("" if total is None else total)}</td></tr>'
        )
    if rows:
        parts.append(
            "<table><thead><tr><th>node</th><th>zone</th><th>verdict</th><th>total</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    hints = explanation.get("hints") or []
    if hints:
        parts.append("<h3>Hints</h3><ul>" + "".join(f"<li>{_e(h)}</li>" for h in hints) + "</ul>")
    if timings is not None:
        parts.append("<h3>Time per plugin</h3>")
        parts.append(
            _figure(
                timings,
                f"Horizontal bars of the time each plugin took in the scheduling cycle for {pod}",
                "One bar per plugin at each extension point the cycle ran, top to bottom in cycle order, "
                "coloured by extension point (NormalizeScore is a Score plugin's normalization); grey bars "
                "are the framework's own work: inside a point outside its plugins (merging node sets, "
                "weighting scores), and steps outside the points (copying the node list, selecting the "
                "host, the FitError message). Figures are microseconds of this one cycle and vary from "
                "run to run; the first cycle on a cluster also fills caches.",
            )
        )
    parts.append("</section>")
    return "".join(parts)


def render_report(
    *,
    title: str,
    subtitle: str = "",
    steps: Sequence[Mapping[str, Any]],
    explanation: Mapping[str, Any] | None = None,
    tables: Sequence[Table] = (),
    figures: Sequence[Picture] = (),
) -> str:
    """The report page: header, the caller's pictures and tables, the steps, the pictures
    with how to read them, the pending pods and why, and (given one) a pod's scheduling
    explanation.

    ``tables`` are (title, column headers, rows); every cell is escaped. ``figures`` are
    (png, alt text, caption), shown first (``audit``'s heat map)."""
    from kubespread import __version__
    from kubespread.report import plots

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>",
        f"<header><h1>{_e(title)}</h1>",
        f'<p class="subtitle">{_e(subtitle)}</p>' if subtitle else "",
        "</header>",
    ]
    drawn = [_figure(png, alt, caption) for png, alt, caption in figures]
    if any(drawn):
        parts.append("<section>" + "".join(drawn) + "</section>")
    for table_title, headers, rows in tables:
        parts.append(f"<section><h2>{_e(table_title)}</h2>{_table(headers, rows)}</section>")
    if steps:
        parts.append(_steps_section(steps))
        parts.append(_spread_section(steps[-1]))
        pictures = [
            _figure(
                plots.pods_per_domain_png(steps),
                "Stacked bars of running pods per topology domain at each step, one panel per workload/key",
                "One panel per workload (a Deployment's ReplicaSets summed) and topology key; one bar per "
                "step, split into the workload's running pods in each domain of the key. Equal segments "
                "are an even spread; a segment that shrinks or vanishes is a domain losing its pods.",
            ),
            _figure(
                plots.skew_png(steps),
                "Line chart of each workload's skew per step against its maxSkew",
                "Skew as the scheduler counts it: the most pods the constraint's labelSelector matches "
                "in one eligible domain minus the global minimum (domains left out by nodeAffinityPolicy "
                "or nodeTaintsPolicy do not count; with fewer domains than minDomains the minimum is 0); "
                "a workload without a spread constraint has no line. Dashed lines are the workload's "
                "maxSkew in the same colour; a red cross marks a step where a constraint's skew exceeds "
                "its maxSkew. Series are nudged sideways so equal values stay visible; for a rollout the "
                "largest skew of its ReplicaSets is drawn.",
            ),
            _figure(
                plots.pending_png(steps),
                "Running and pending pod counts per step",
                "Top: pods running on a node. Bottom: pods waiting for a node; their messages follow.",
            ),
        ]
        if any(pictures):
            parts.append("<section><h2>Pictures</h2>" + "".join(pictures) + "</section>")
        parts.append(_pending_section(steps))
        parts.append(_evictions_section(steps))
    if explanation is not None:
        timed = explanation.get("timings")
        parts.append(
            _explanation_section(
                explanation, plots.score_heatmap_png(explanation), plots.timings_png(timed) if timed else None
            )
        )
    parts.append(f"<footer>Made by kubespread {_e(__version__)}.</footer></main></body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def write_report(
    directory: Path | str,
    *,
    title: str,
    subtitle: str = "",
    steps: Sequence[Mapping[str, Any]],
    explanation: Mapping[str, Any] | None = None,
    tables: Sequence[Table] = (),
    figures: Sequence[Picture] = (),
) -> Path:
    """Write ``report.html`` into ``directory`` (created if missing) and return its path;
    nothing else is written, the pictures are inside the page."""
    path = Path(directory) / REPORT_FILE
    page = render_report(
        title=title, subtitle=subtitle, steps=steps, explanation=explanation, tables=tables, figures=figures
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
