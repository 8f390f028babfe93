"""Pictures of a simulation's steps and of one pod's scores, as PNG bytes.

Every figure is a ``matplotlib.figure.Figure`` drawn on its own Agg canvas: no pyplot, no
global backend switch, no display, so reports can be made from threads and on headless
machines. matplotlib is imported inside the functions, so importing this module (and the
CLI that imports it) stays cheap until a picture is asked for.

Each public function has an internal ``_..._figure`` twin returning the Figure; tests read
its texts and artists instead of guessing them back from pixels.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubespread.cluster.workloads import short_kind

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["pending_png", "pods_per_domain_png", "score_heatmap_png", "skew_png", "timings_png"]

#: output resolution; figure sizes below are in inches, so 11 in is 1100 px (the page width)
DPI = 100
#: panels drawn in the pods-per-domain grid before the rest are left out
MAX_PANELS = 8
#: node rows drawn in the score heatmap before the rest are left out
MAX_NODES = 40
#: series drawn in the skew chart before the rest are left out (tab20 has 18 that are not red)
MAX_SERIES = 18
#: a domain set larger than this is drawn as its busiest domains plus one grey "other"
MAX_DOMAINS = 16
#: heatmap cells get their number written in them up to this many cells
MAX_ANNOTATED_CELLS = 400

#: matplotlib's tab10 (Tableau 10), safe for the common colour-vision deficiencies
TAB10 = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
#: one colour per domain: tab10's strong colours, then tab20's light ones, without the greys
#: (grey is the "other domains" of a key with more than MAX_DOMAINS - 1): 18 distinct
DOMAIN_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
    "#dbdb8d", "#9edae5",
)  # fmt: skip
OTHER_COLOUR = "#c7c7c7"
FILTERED_COLOUR = "#d9d9d9"
BREACH_COLOUR = "#d62728"
TEXT_COLOUR = "#222222"

_HOSTNAME_KEY = "kubernetes.io/hostname"


# ------------------------------------------------------------------ helpers


def short_node(name: str) -> str:
    """A node's first DNS label (``ip-10-0-1-2`` for ``ip-10-0-1-2.eu-west-1.compute.internal``);
    an IPv4 address is kept whole, as its first label would say nothing."""
    parts = name.split(".")
    if len(parts) == 4 and all(p.isdigit() for p in parts):
        return name
    return parts[0] or name


def short_key(key: str) -> str:
    """The part of a topology key after its prefix: ``zone`` for topology.kubernetes.io/zone."""
    return key.rsplit("/", 1)[-1] or key


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return buf.getvalue()


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained", facecolor="white")


def _integer_axis(axis: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, nbins="auto", min_n_ticks=1))


def _step_axis(ax: Any, n_steps: int) -> None:
    """Steps are numbered 0, 1, ... (the report's step table gives their full labels)."""
    _integer_axis(ax.xaxis)
    ax.set_xlim(-0.6, n_steps - 0.4)
    ax.set_xlabel("step", fontsize=9)
    ax.tick_params(labelsize=8)


#: the shading of a step with failed nodes, and with cordoned or tainted ones only
FAILED_SHADE = "#d62728"
HELD_SHADE = "#bcbd22"


def node_marks(step: Mapping[str, Any]) -> tuple[str, str]:
    """(shade, label) of a step from its node states: ``failed`` when some node is down,
    ``held`` when some is only cordoned or tainted, ``""`` when every node is up; the label
    names them by zone: ``zone-c: 2 failed``."""
    nodes = step.get("nodes") or []
    if not nodes:
        return "", ""
    failed: dict[str, int] = {}
    held: dict[str, int] = {}
    for node in nodes:
        zone = node.get("zone") or short_node(str(node.get("name", "")))
        target = failed if node.get("failed") else held
        target[zone] = target.get(zone, 0) + 1
    parts = [f"{z}: {k} failed" for z, k in sorted(failed.items())]
    parts += [f"{z}: {k} cordoned/tainted" for z, k in sorted(held.items())]
    return ("failed" if failed else "held"), "; ".join(parts)


def _shade_node_states(
    axes: Sequence[Any], steps: Sequence[Mapping[str, Any]], *, label_axis: Any = None
) -> bool:
    """Shade each step whose nodes are not all up (red: some failed; olive: some cordoned or
    tainted) on every axis, and write what is down above the steps of ``label_axis``.
    True when some step was shaded."""
    shaded = False
    for i, step in enumerate(steps):
        kind, text = node_marks(step)
        if not kind:
            continue
        shaded = True
        colour = FAILED_SHADE if kind == "failed" else HELD_SHADE
        for ax in axes:
            ax.axvspan(i - 0.5, i + 0.5, color=colour, alpha=0.10, zorder=0, linewidth=0, gid=f"nodes-{kind}")
        if label_axis is not None and len(steps) <= 30:
            label_axis.text(
                i, 1.0, _truncate(text, 40), transform=label_axis.get_xaxis_transform(), rotation=90,
                ha="center", va="top", fontsize=7, color="#7a0000" if kind == "failed" else "#5a5a00",
                bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1},
            )  # fmt: skip
    return shaded


def _node_state_handles(steps: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Legend entries for the shading the steps use."""
    from matplotlib.patches import Patch

    kinds = {node_marks(s)[0] for s in steps} - {""}
    out = []
    if "failed" in kinds:
        out.append(Patch(facecolor=FAILED_SHADE, alpha=0.25, label="nodes failed"))
    if "held" in kinds:
        out.append(Patch(facecolor=HELD_SHADE, alpha=0.25, label="nodes cordoned or tainted"))
    return out


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------ panels: one workload x key


@dataclass
class _Panel:
    """One workload (its top owner, so a rollout's ReplicaSets are one) on one topology key."""

    namespace: str
    kind: str
    name: str
    key: str
    counts: list[dict[str, int] | None]  # per step: pods per domain, None when absent
    skews: list[int | None]  # per step: the scheduler's skew, None without a constraint
    domains: list[str] = field(default_factory=list)
    over: list[bool] = field(default_factory=list)  # per step: some constraint over its maxSkew
    limits: set[int] = field(default_factory=set)  # every maxSkew seen

    @property
    def workload(self) -> str:
        kind = short_kind(self.kind)
        label = f"{kind}/{self.name}" if kind else self.name
        return label if self.namespace in ("", "default") else f"{label} [{self.namespace}]"


def _row_limits(row: Mapping[str, Any]) -> list[int]:
    """The maxSkew a row is held to: its constraint's, else (older documents) those its pods carry."""
    if row.get("maxSkew") is not None:
        return [row["maxSkew"]]
    if "maxSkew" in row:  # a row without a constraint
        return []
    return [c["maxSkew"] for c in row.get("constraints") or () if c.get("maxSkew") is not None]


def _panels(steps: Sequence[Mapping[str, Any]]) -> list[_Panel]:
    """Distribution rows grouped by (namespace, owner, key), in order of first appearance.

    Pods per domain are the workload's own running pods over every domain of the key
    (``rawDomains``; ``domains`` in documents from before it), summed over the group's
    ReplicaSets (a rollout's two), each counted once however many constraints name the key.
    The skew kept is the largest of the group's rows', the scheduler's as the library
    computed it; a step is over when some row's skew exceeds its own maxSkew."""
    panels: dict[tuple[str, str, str, str], _Panel] = {}
    n = len(steps)
    for i, step in enumerate(steps):
        counted: set[tuple[str, str, str]] = set()
        for row in step.get("distribution") or ():
            workload = row.get("workload") or {}
            owner = row.get("owner") or {}
            if owner.get("name"):
                kind, name = owner.get("kind", ""), owner["name"]
            elif workload:
                kind, name = workload.get("kind", ""), workload.get("name", "")
            else:
                kind, name = "Pod", row.get("pod", "")
            namespace = row.get("namespace") or workload.get("namespace", "")
            key = row.get("topologyKey", "")
            panel = panels.get((namespace, kind, name, key))
            if panel is None:
                panel = _Panel(namespace, kind, name, key, [None] * n, [None] * n, over=[False] * n)
                panels[(namespace, kind, name, key)] = panel
            counts = panel.counts[i]
            if counts is None:
                counts = panel.counts[i] = {}
            own = (namespace, str(workload.get("name") or row.get("pod", "")), key)
            if own not in counted:
                counted.add(own)
                raw = row.get("rawDomains")
                for domain, pods in (row.get("domains") if raw is None else raw or {}).items():
                    counts[domain] = counts.get(domain, 0) + int(pods)
                    if domain not in panel.domains:
                        panel.domains.append(domain)
            limits = _row_limits(row)
            panel.limits.update(limits)
            skew = row.get("skew")
            if skew is not None:
                previous = panel.skews[i]
                panel.skews[i] = skew if previous is None else max(previous, skew)
                within = row.get("withinMaxSkew")
                if within is not None:
                    panel.over[i] = panel.over[i] or not within
                elif limits and skew > min(limits):
                    panel.over[i] = True
    for panel in panels.values():
        panel.domains.sort()
    return list(panels.values())


def _domain_label(key: str, domain: str) -> str:
    return short_node(domain) if key == _HOSTNAME_KEY else domain


def _domain_colours(panels: Iterable[_Panel]) -> dict[tuple[str, str], str]:
    """One colour per (key, domain), the same in every panel of that key.

    A key with more than MAX_DOMAINS domains (hostname on a big cluster) keeps colours for its
    busiest MAX_DOMAINS - 1 domains only; the others are drawn together, in grey."""
    by_key: dict[str, dict[str, int]] = {}
    for panel in panels:
        peak = by_key.setdefault(panel.key, {})
        for counts in panel.counts:
            for domain, pods in (counts or {}).items():
                peak[domain] = max(peak.get(domain, 0), pods)
    colours: dict[tuple[str, str], str] = {}
    for key, peak in by_key.items():
        domains = sorted(peak)
        if len(domains) > MAX_DOMAINS:
            busiest = sorted(domains, key=lambda d: (-peak[d], d))[: MAX_DOMAINS - 1]
            domains = sorted(busiest)
        for i, domain in enumerate(domains):
            colours[(key, domain)] = DOMAIN_COLOURS[i % len(DOMAIN_COLOURS)]
    return colours


# ------------------------------------------------------------------ pods per domain


def _pods_per_domain_figure(steps: Sequence[Mapping[str, Any]]) -> Figure | None:
    panels = [p for p in _panels(steps) if any(c for c in p.counts)]
    if not panels:
        return None
    shown, left_out = panels[:MAX_PANELS], len(panels) - MAX_PANELS
    colours = _domain_colours(shown)
    ncols = 1 if len(shown) == 1 else 2
    nrows = math.ceil(len(shown) / ncols)
    fig = _new_figure(11, 0.9 + 2.7 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    legends: list[tuple[tuple[str, str], ...]] = []
    n = len(steps)
    for ax, panel in zip(axes, shown, strict=False):
        bottoms = [0] * n
        entries: list[tuple[str, str]] = []
        named = [d for d in panel.domains if (panel.key, d) in colours]
        others = [d for d in panel.domains if (panel.key, d) not in colours]
        layers = [(d, [d], colours[(panel.key, d)], _domain_label(panel.key, d)) for d in named]
        if others:
            layers.append(("", others, OTHER_COLOUR, f"{len(others)} other domains"))
        for _, members, colour, label in layers:
            heights = [sum((c or {}).get(d, 0) for d in members) for c in panel.counts]
            ax.bar(
                range(n), heights, bottom=bottoms, color=colour, width=0.7, edgecolor="white", linewidth=0.5
            )
            bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
            entries.append((label, colour))
        legends.append(tuple(entries))
        ax.set_title(f"{panel.workload} by {short_key(panel.key)}", fontsize=10, loc="left")
        ax.set_ylabel("pods", fontsize=9)
        _integer_axis(ax.yaxis)
        _step_axis(ax, n)
        ax.set_ylim(0, max(1, *bottoms) * 1.08)
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in axes[len(shown) :]:
        ax.set_visible(False)
    if _shade_node_states(list(axes[: len(shown)]), steps, label_axis=axes[0]):
        fig.legend(
            handles=_node_state_handles(steps), loc="outside lower center", ncols=2, fontsize=8, frameon=False
        )
    _domain_legends(fig, axes, legends)
    fig.suptitle("Running pods per topology domain, by step", fontsize=12, x=0.01, ha="left")
    if left_out > 0:
        fig.text(
            0.99,
            0.995,
            f"{left_out} more workload/key panel{'s' if left_out != 1 else ''} left out",
            ha="right",
            va="top",
            fontsize=9,
            color="#a00000",
        )
    return fig


def _domain_legends(fig: Figure, axes: Any, legends: list[tuple[tuple[str, str], ...]]) -> None:
    """One legend above the grid when every panel has the same domains, else one per panel."""
    from matplotlib.patches import Patch

    def handles(entries: tuple[tuple[str, str], ...]) -> list[Patch]:
        return [Patch(facecolor=colour, label=label) for label, colour in entries]

    if len(set(legends)) == 1:
        entries = legends[0]
        fig.legend(
            handles=handles(entries),
            loc="outside upper center",
            ncols=min(len(entries), 8),
            fontsize=9,
            frameon=False,
            title="domain",
            title_fontsize=9,
        )
        return
    for ax, entries in zip(axes, legends, strict=False):
        ax.legend(
            handles=handles(entries)[::-1],  # top of the stack first
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=8,
            frameon=False,
        )


def pods_per_domain_png(steps: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Stacked bars of running pods per domain at every step, one panel per workload and key,
    so a drifting spread (a zone emptied, a rollout piling up in one zone) shows at a glance.

    None when no step has any distribution row."""
    fig = _pods_per_domain_figure(steps)
    return None if fig is None else _png(fig)


# ------------------------------------------------------------------ skew


def _skew_figure(steps: Sequence[Mapping[str, Any]]) -> Figure | None:
    panels = [p for p in _panels(steps) if any(s is not None for s in p.skews)]
    if not panels:
        return None
    shown, left_out = panels[:MAX_SERIES], len(panels) - MAX_SERIES
    # no reds among the series: red is kept for the crosses
    palette = [c for c in (TAB10 if len(shown) < len(TAB10) else _tab20()) if c not in ("#d62728", "#ff9896")]
    markers = "osD^vP*X"
    n = len(steps)
    fig = _new_figure(11, 4.6 + 0.22 * math.ceil(len(shown) / 2))
    ax = fig.subplots()
    from matplotlib.transforms import offset_copy

    top = 1
    # series that share a skew would hide each other: shift each a few points sideways
    # (in points, not steps, so a chart of three steps is not visibly off its ticks)
    step_points = 10 * 72 / max(n, 1)  # the axes are about 10 in wide
    spacing = min(6.0, 0.4 * step_points / len(shown))
    breach_label = "skew > maxSkew"
    for i, panel in enumerate(shown):
        colour = palette[i % len(palette)]
        nudge = offset_copy(ax.transData, fig=fig, x=(i - (len(shown) - 1) / 2) * spacing, units="points")
        ys = [math.nan if s is None else s for s in panel.skews]
        limits = sorted(panel.limits)
        label = f"{panel.workload} {short_key(panel.key)}"
        if limits:
            label += f" (maxSkew {'/'.join(str(m) for m in limits)})"
        ax.plot(
            range(n),
            ys,
            color=colour,
            marker=markers[i % len(markers)],
            markersize=5,
            linewidth=1.6,
            label=label,
            transform=nudge,
        )
        for limit in limits:
            ax.axhline(limit, color=colour, linestyle=(0, (5, 3)), linewidth=1.1, alpha=0.9)
            top = max(top, limit)
        breaches: list[tuple[int, int]] = []
        for j, skew in enumerate(panel.skews):
            if skew is None:
                continue
            top = max(top, skew)
            if panel.over[j]:
                breaches.append((j, skew))
        if breaches:
            ax.scatter(
                [x for x, _ in breaches],
                [y for _, y in breaches],
                marker="x",
                s=80,
                linewidths=2.0,
                color=BREACH_COLOUR,
                zorder=5,
                label=breach_label,  # in the legend once
                gid="breach",
                transform=nudge,
            )
            breach_label = "_" + breach_label
    ax.set_ylim(-0.3, top + 0.8)
    _integer_axis(ax.yaxis)
    _step_axis(ax, n)
    ax.set_ylabel("skew (max - global minimum, as the scheduler counts)", fontsize=9)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(
        "Skew per workload and key; dashed: its maxSkew",
        fontsize=12,
        loc="left",
    )
    _shade_node_states([ax], steps)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda k: labels[k] == "skew > maxSkew")  # the crosses last
    states = _node_state_handles(steps)
    fig.legend(
        [handles[k] for k in order] + states,
        [labels[k] for k in order] + [h.get_label() for h in states],
        loc="outside lower center",
        ncols=2,
        fontsize=8,
        frameon=False,
    )
    if left_out > 0:
        fig.text(
            0.99, 0.995, f"{left_out} more series left out", ha="right", va="top", fontsize=9, color="#a00000"
        )
    return fig


def _tab20() -> tuple[str, ...]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["tab20"]
    return tuple(to_hex(cmap(i)) for i in range(20))


def skew_png(steps: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Skew of every workload on every key over the steps, against its maxSkew (dashed),
    with red crosses where it is exceeded: where a spread constraint stopped holding.

    None when no step has any distribution row."""
    fig = _skew_figure(steps)
    return None if fig is None else _png(fig)


# ------------------------------------------------------------------ pending


def running_pods(step: Mapping[str, Any]) -> int:
    """Pods on a node and Running, not terminating (what ``simulate`` calls running)."""
    return sum(
        1
        for p in step.get("pods") or ()
        if p.get("node") and p.get("phase", "Running") == "Running" and not p.get("terminating")
    )


def _pending_figure(steps: Sequence[Mapping[str, Any]]) -> Figure:
    n = len(steps)
    pending = [len(s.get("pending") or ()) for s in steps]
    running = [running_pods(s) for s in steps]
    fig = _new_figure(11, 4.4)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[1, 1])
    top.plot(range(n), running, color=TAB10[0], marker="o", markersize=4, linewidth=1.6)
    top.set_ylabel("running", fontsize=9)
    top.set_ylim(0, max(1, *running, 0) * 1.15)
    bottom.bar(range(n), pending, color=TAB10[1], width=0.7)
    for x, count in enumerate(pending):
        if count and n <= 40:
            bottom.annotate(
                str(count),
                (x, count),
                ha="center",
                va="bottom",
                fontsize=8,
                xytext=(0, 1),
                textcoords="offset points",
            )
    bottom.set_ylabel("pending", fontsize=9)
    bottom.set_ylim(0, max(1, *pending, 0) * 1.25)
    for ax in (top, bottom):
        _integer_axis(ax.yaxis)
        ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=8)
    _step_axis(bottom, max(n, 1))
    if _shade_node_states([top, bottom], steps, label_axis=top):
        top.legend(handles=_node_state_handles(steps), loc="lower left", fontsize=8, frameon=False)
    top.set_title("Running and pending pods, by step", fontsize=12, loc="left")
    if n == 0:
        bottom.text(0.5, 0.5, "no steps", transform=bottom.transAxes, ha="center", va="center", fontsize=10)
    return fig


def pending_png(steps: Sequence[Mapping[str, Any]]) -> bytes:
    """Running pods and pending pods at every step: when capacity or a constraint ran out."""
    return _png(_pending_figure(steps))


# ------------------------------------------------------------------ score heatmap


def _node_label(node: Mapping[str, Any]) -> str:
    label = short_node(str(node.get("name", "")))
    if node.get("zone"):
        label += f" ({node['zone']})"
    return ("\u2605 " + label) if node.get("winner") else label


def _verdict(node: Mapping[str, Any]) -> str:
    """Why a node was not a candidate, in one short line."""
    plugin = node.get("plugin")
    where = node.get("rejectedAt") or "Filter"
    text = f"filtered: {plugin}" if plugin else f"rejected at {where}"
    reasons = node.get("reasons") or []
    if reasons:
        text += f" ({'; '.join(str(r) for r in reasons)})"
    return text


def _score_heatmap_figure(explanation: Mapping[str, Any]) -> Figure | None:
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    nodes = list(explanation.get("nodes") or ())
    if not nodes:
        return None
    shown, left_out = nodes[:MAX_NODES], len(nodes) - MAX_NODES
    plugins = list(explanation.get("plugins") or ())
    for node in shown:
        for name in node.get("scores") or {}:
            if name not in plugins:
                plugins.append(name)
    rows, cols = len(shown), max(len(plugins), 1)
    values = np.full((rows, cols), np.nan)
    totals = np.full((rows, 1), np.nan)
    for r, node in enumerate(shown):
        if not node.get("feasible"):
            continue
        for c, name in enumerate(plugins):
            score = (node.get("scores") or {}).get(name)
            if score is not None and score.get("weighted") is not None:
                values[r, c] = score["weighted"]
        if node.get("total") is not None:
            totals[r, 0] = node["total"]
    annotate = rows * (cols + 1) <= MAX_ANNOTATED_CELLS

    label_width = max((len(_node_label(n)) for n in shown), default=10)
    width = min(11.0, 1.6 + 0.075 * label_width + 0.95 * (cols + 1.3))
    width = max(width, 7.0)
    # about 0.06 in per character at 8 pt: how much of a filtered node's reason fits its row
    verdict_chars = int((width - 0.3 - 0.065 * label_width) * cols / (cols + 1.3) / 0.06)
    head = 0.04 * max((len(p) for p in plugins), default=5)  # column labels at 35 degrees
    fig = _new_figure(width, 1.5 + head + 0.28 * rows)
    main, total_ax = fig.subplots(1, 2, sharey=True, width_ratios=[cols, 1.3], gridspec_kw={"wspace": 0.02})

    main_cmap = colormaps["viridis"].with_extremes(bad="#f7f7f7")
    finite = values[np.isfinite(values)]
    main_norm = Normalize(
        vmin=min(0.0, float(finite.min())) if finite.size else 0.0,
        vmax=float(finite.max()) if finite.size and finite.max() > 0 else 1.0,
    )
    image = main.imshow(np.ma.masked_invalid(values), cmap=main_cmap, norm=main_norm, aspect="auto")
    total_cmap = colormaps["Blues"].with_extremes(bad="#f7f7f7")
    finite_totals = totals[np.isfinite(totals)]
    total_norm = Normalize(
        vmin=float(finite_totals.min()) * 0.8 if finite_totals.size else 0.0,
        vmax=float(finite_totals.max()) if finite_totals.size and finite_totals.max() > 0 else 1.0,
    )
    total_ax.imshow(np.ma.masked_invalid(totals), cmap=total_cmap, norm=total_norm, aspect="auto")

    from matplotlib.patches import Rectangle

    for r, node in enumerate(shown):
        if node.get("feasible"):
            continue
        for ax, span in ((main, cols), (total_ax, 1)):
            ax.add_patch(Rectangle((-0.5, r - 0.5), span, 1, facecolor=FILTERED_COLOUR, edgecolor="none"))
        main.text(
            (cols - 1) / 2,
            r,
            _truncate(_verdict(node), max(verdict_chars, 30)),
            ha="center",
            va="center",
            fontsize=8,
            color="#444444",
            clip_on=True,
        )
        total_ax.text(0, r, "-", ha="center", va="center", fontsize=8, color="#444444")
    if annotate:
        for r in range(rows):
            for c in range(cols):
                v = values[r, c]
                if np.isfinite(v):
                    shade = main_norm(v)
                    colour = "white" if shade < 0.6 else "black"
                    main.text(c, r, f"{v:g}", ha="center", va="center", fontsize=8, color=colour)
            t = totals[r, 0]
            if np.isfinite(t):
                colour = "white" if total_norm(t) > 0.6 else "black"
                total_ax.text(
                    0, r, f"{t:g}", ha="center", va="center", fontsize=8, fontweight="bold", color=colour
                )

    main.set_yticks(range(rows), [_node_label(n) for n in shown], fontsize=8)
    for tick, node in zip(main.get_yticklabels(), shown, strict=True):
        if node.get("winner"):
            tick.set_fontweight("bold")
        elif not node.get("feasible"):
            tick.set_color("#666666")
    main.set_xticks(range(cols), plugins or [""], fontsize=8, rotation=35, ha="left", rotation_mode="anchor")
    total_ax.set_xticks(
        [0], ["total"], fontsize=8, fontweight="bold", rotation=35, ha="left", rotation_mode="anchor"
    )
    for ax in (main, total_ax):
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        ax.set_xticks(np.arange(-0.5, ax.get_xlim()[1], 1), minor=True)
        ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.2)
        ax.tick_params(which="minor", length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
    total_ax.tick_params(labelleft=False)
    colourbar = fig.colorbar(image, ax=[main, total_ax], location="bottom", shrink=0.5, aspect=40, pad=0.02)
    colourbar.set_label("weighted score (plugin columns; total has its own blue scale)", fontsize=8)
    colourbar.ax.tick_params(labelsize=7)

    pod = str(explanation.get("pod", "pod"))
    if explanation.get("scheduled") or explanation.get("selectedNode"):
        outcome = f"scheduled on {short_node(str(explanation.get('selectedNode') or ''))}"
    else:
        outcome = "unschedulable"
    fig.suptitle(f"Scores for {pod}: {outcome}", fontsize=11, x=0.01, ha="left")
    if left_out > 0:
        fig.text(
            0.99,
            0.005,
            f"{left_out} more node{'s' if left_out != 1 else ''} left out",
            ha="right",
            va="bottom",
            fontsize=9,
            color="#a00000",
        )
    return fig


def score_heatmap_png(explanation: Mapping[str, Any]) -> bytes | None:
    """Each node's weighted score per plugin and its total, best node first, filtered nodes
    greyed with the plugin that rejected them: why the scheduler chose (or found) no node.

    None when the explanation lists no nodes."""
    fig = _score_heatmap_figure(explanation)
    return None if fig is None else _png(fig)


# ------------------------------------------------------------------ time per plugin

#: one colour per extension point (NormalizeScore shares Score's hue, lighter); the
#: framework's own work is grey whatever its point
POINT_COLOURS = {
    "PreFilter": "#1f77b4",
    "Filter": "#ff7f0e",
    "PostFilter": "#d62728",
    "PreScore": "#2ca02c",
    "Score": "#9467bd",
    "NormalizeScore": "#c5b0d5",
}
FRAMEWORK_COLOUR = "#8c8c8c"


def timing_bars(timings: Mapping[str, Any]) -> list[tuple[str, str, float, bool]]:
    """(extension point, name, µs, is the framework's) per bar, in cycle order, from
    CycleTimings.to_dict: each point's plugins, then its framework work, then the steps."""
    bars: list[tuple[str, str, float, bool]] = []
    for point in timings.get("extensionPoints") or ():
        for plugin in point.get("plugins") or ():
            bars.append(
                (str(plugin["extensionPoint"]), str(plugin["name"]), float(plugin["microseconds"]), False)
            )
        if point.get("frameworkMicroseconds"):
            bars.append((str(point["name"]), "(framework)", float(point["frameworkMicroseconds"]), True))
    for step in timings.get("frameworkSteps") or ():
        bars.append((str(step["name"]), "(framework)", float(step["microseconds"]), True))
    return bars


def _timings_figure(timings: Mapping[str, Any]) -> Figure | None:
    from matplotlib.patches import Patch

    bars = timing_bars(timings)
    if not bars:
        return None
    cycle = float(timings.get("cycleMicroseconds") or 0) or sum(b[2] for b in bars) or 1.0
    fig = _new_figure(9.0, 1.3 + 0.24 * len(bars))
    ax = fig.subplots()
    y = list(range(len(bars)))
    colours = [FRAMEWORK_COLOUR if fw else POINT_COLOURS.get(point, OTHER_COLOUR) for point, _, _, fw in bars]
    ax.barh(y, [b[2] for b in bars], color=colours, height=0.75)
    ax.set_yticks(y, [f"{point} \u00b7 {name}" for point, name, _, _ in bars], fontsize=8)
    ax.invert_yaxis()  # cycle order, top to bottom
    top = max(b[2] for b in bars)
    for i, (_, _, us, _) in enumerate(bars):
        ax.text(us + top * 0.01, i, f"{us:,.1f} \u00b5s ({100 * us / cycle:.1f}%)", va="center", fontsize=7)
    ax.set_xlim(0, top * 1.25)
    ax.set_xlabel("\u00b5s in this cycle (share of the whole cycle)", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    points = list(dict.fromkeys(point for point, _, _, fw in bars if not fw))
    handles = [Patch(color=POINT_COLOURS.get(p, OTHER_COLOUR), label=p) for p in points]
    if any(fw for *_, fw in bars):
        handles.append(Patch(color=FRAMEWORK_COLOUR, label="framework (outside plugins)"))
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    plugins = float(timings.get("pluginMicroseconds") or 0)
    fig.suptitle(
        f"Time per plugin: plugins {plugins:,.0f} \u00b5s of the {cycle:,.0f} \u00b5s cycle "
        f"({100 * plugins / cycle:.0f}%)",
        fontsize=11,
        x=0.01,
        ha="left",
    )
    return fig


def timings_png(timings: Mapping[str, Any]) -> bytes | None:
    """A horizontal bar per plugin and extension point (and the framework's own work), in
    cycle order, coloured by extension point: where one scheduling cycle spent its time.

    ``timings`` is CycleTimings.to_dict; None when it holds no time."""
    fig = _timings_figure(timings)
    return None if fig is None else _png(fig)
