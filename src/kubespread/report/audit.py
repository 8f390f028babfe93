"""The audit's report: a failure-by-workload heat map of availability (running / desired
after each failure), the ranking, and the pending reasons beside it, in the one-page HTML
report ``schedule`` and ``simulate`` write (``report.html.write_report``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubespread.plan.results import AuditResult, AuditSeconds, FailureRecord, VaryResult
from kubespread.report.html import write_report
from kubespread.report.plots import _new_figure, _png, _truncate, short_key

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["availability_heatmap_png", "write_audit_report"]

#: failure rows drawn before the rest are left out (the most harmful are kept)
MAX_FAILURES = 40
#: workload columns drawn (the most harmed across the failures are kept)
MAX_WORKLOADS = 30
#: pending-reason rows listed in the report
MAX_REASONS = 200


def _label(record: FailureRecord) -> str:
    return f"{short_key(record.key)}={record.value}"


def _workload_label(key: str) -> str:
    namespace, _kind, name = key.split("/", 2)
    return name if namespace == "default" else f"{namespace}/{name}"


def _columns(failures: Sequence[FailureRecord]) -> list[str]:
    """The workloads to draw: most replicas lost over every failure first, then by name."""
    lost: dict[str, int] = {}
    for r in failures:
        for w in r.workloads:
            lost[w.owner] = lost.get(w.owner, 0) + w.unavailable + w.pending
    return sorted(lost, key=lambda k: (-lost[k], k))[:MAX_WORKLOADS]


def _availability_figure(doc: AuditResult) -> Figure | None:
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    failures = list(doc.failures)[:MAX_FAILURES]
    columns = _columns(failures)
    if not failures or not columns:
        return None
    values = np.full((len(failures), len(columns)), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for r, record in enumerate(failures):
        found = {w.owner: w for w in record.workloads}
        for c, key in enumerate(columns):
            w = found.get(key)
            if w is None or not w.desired:
                continue
            values[r, c] = min(w.running / w.desired, 1.0)
            labels[(r, c)] = f"{w.running}/{w.desired}"
    rows, cols = values.shape
    fig = _new_figure(min(11.0, 2.5 + 0.55 * cols), 1.8 + 0.3 * rows)
    ax = fig.subplots()
    cmap = colormaps["RdYlGn"].with_extremes(bad="#f7f7f7")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=Normalize(0.0, 1.0), aspect="auto")
    if rows * cols <= 600:
        for (r, c), text in labels.items():
            ax.text(c, r, text, ha="center", va="center", fontsize=7, color="black")
    ax.set_yticks(range(rows), [f"#{f.rank} {_truncate(_label(f), 40)}" for f in failures], fontsize=8)
    ax.set_xticks(
        range(cols),
        [_truncate(_workload_label(k), 30) for k in columns],
        fontsize=8,
        rotation=35,
        ha="left",
        rotation_mode="anchor",
    )
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    bar = fig.colorbar(image, ax=ax, location="bottom", shrink=0.5, aspect=40, pad=0.02)
    bar.set_label("running / desired after the failure", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    fig.suptitle("Availability per failure and workload", fontsize=11, x=0.01, ha="left")
    return fig


def availability_heatmap_png(doc: AuditResult) -> bytes | None:
    """One row per failure (ranked), one column per workload: running / desired after it;
    None when there is nothing to draw."""
    fig = _availability_figure(doc)
    return None if fig is None else _png(fig)


def _tables(doc: AuditResult) -> list[tuple[str, list[str], list[list[Any]]]]:
    ranking: list[list[Any]] = [
        [
            r.rank,
            r.domain,
            len(r.nodes),
            r.harm.unavailable,
            r.harm.pending,
            r.harm.pdbs_broken,
            r.harm.unrecovered,
        ]
        for r in doc.failures
    ]
    reasons: list[list[Any]] = [
        [r.domain, w.owner, len(p.pods), p.message, " ".join(p.hints)]
        for r in doc.failures
        for w in r.workloads
        for p in w.pending_reasons
    ][:MAX_REASONS]
    return [
        (
            "Failures ranked by harm",
            ["#", "failure", "nodes", "replicas lost", "pending", "budgets broken", "workloads short"],
            ranking,
        ),
        (
            "Pending pods and why",
            ["failure", "workload", "pods", "kube-scheduler's message", "hints"],
            reasons,
        ),
    ]


def write_audit_report(directory: Path | str, doc: AuditResult | VaryResult) -> Path:
    """``DIR/report.html`` for an audit; for a ``--vary`` result, the variants' ranking and
    the best one's audit."""
    tables: list[tuple[str, list[str], list[list[Any]]]] = []
    if isinstance(doc, VaryResult):
        tables.append(
            (
                "Settings ranked (survives every failure of the first key, then fewest pending)",
                ["#", "setting", "survives", "pending", "unavailable", "error"],
                [
                    [
                        v.rank,
                        ", ".join(f"{k}={x}" for k, x in v.changes.items()) or "(as given)",
                        "yes" if v.survives else "no",
                        "-" if v.error is not None else v.pending,
                        "-" if v.error is not None else v.unavailable,
                        v.error or "",
                    ]
                    for v in doc.variants
                ],
            )
        )
        best = next((v.audit for v in doc.variants if v.audit is not None), None)
        nothing = AuditResult(doc.domains, doc.after, 0, (), (), AuditSeconds(0.0, 0.0))
        audit = best if best is not None else nothing
    else:
        audit = doc
    tables += _tables(audit)
    picture = (
        availability_heatmap_png(audit),
        "Heat map of running over desired replicas per failure (rows) and workload (columns)",
        "Each row is one failure domain, most harmful first; each column a workload. Green: every "
        "replica runs again after the failure; red: none. The cells read running/desired; the "
        "pending pods' reasons are listed below.",
    )
    return write_report(
        directory,
        title="kubespread audit",
        subtitle=f"failures of {', '.join(audit.domains)}",
        steps=[],
        tables=tables,
        figures=[picture],
    )
