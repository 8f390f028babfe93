"""The report's pictures: read back from their pixels (not blank, the domain colours really
drawn) and from their figures (what was grouped, marked, greyed, left out)."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from matplotlib.colors import rgb_to_hsv, to_rgb
from PIL import Image

from kubespread.report import pending_png, plots, pods_per_domain_png, score_heatmap_png, skew_png

pytestmark = pytest.mark.slow

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
ZONE = "topology.kubernetes.io/zone"
TIGHT = [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "minDomains": None}]


# ------------------------------------------------------------------ data


def row(
    name: str, counts: list[int], *, owner: str = "", rs: str = "", constraints: Any = None, key: str = ZONE
) -> dict[str, Any]:
    domains = dict(zip(ZONES, counts, strict=True))
    return {
        "workload": {"kind": "ReplicaSet", "namespace": "shop", "name": rs or f"{name}-7d9f"},
        "owner": {"kind": "Deployment", "name": owner} if owner else {"kind": "", "name": ""},
        "topologyKey": key,
        "domains": domains,
        "skew": max(counts) - min(counts),
        "pods": sum(counts),
        "constraints": TIGHT if constraints is None else constraints,
    }


def pod(name: str, node: str | None) -> dict[str, Any]:
    return {"namespace": "shop", "name": name, "node": node, "phase": "Running" if node else "Pending"}


def steps() -> list[dict[str, Any]]:
    """Three steps of two Deployments over three zones: web is spread, then scaled (skew 1),
    then a zone fails (skew 3 > maxSkew 1) and one search pod stays pending."""
    return [
        {
            "label": "step 1: apply web, search",
            "time": 0.0,
            "distribution": [row("web", [2, 2, 2], owner="web"), row("search", [1, 1, 1], owner="search")],
            "pending": [],
            "pods": [pod(f"web-{i}", f"n{i}") for i in range(6)]
            + [pod(f"search-{i}", "n1") for i in range(3)],
        },
        {
            "label": "step 2: scale deploy/web to 7",
            "time": 30.0,
            "distribution": [row("web", [3, 2, 2], owner="web"), row("search", [1, 1, 1], owner="search")],
            "pending": [],
            "pods": [pod(f"web-{i}", f"n{i}") for i in range(7)]
            + [pod(f"search-{i}", "n1") for i in range(3)],
        },
        {
            "label": "step 3: fail zone eu-west-1c",
            "time": 90.0,
            "distribution": [
                row("web", [4, 3, 0], owner="web"),
                row("search", [1, 1, 0], owner="search", constraints=[]),
            ],
            "pending": [
                {"namespace": "shop", "name": "search-5c-abcde", "message": "0/6 nodes are available"}
            ],
            "pods": [pod(f"web-{i}", f"n{i}") for i in range(7)]
            + [pod(f"search-{i}", "n1") for i in range(2)]
            + [pod("search-5c-abcde", None)],
        },
    ]


PLUGINS = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "ImageLocality"]


def scores(values: list[int]) -> dict[str, dict[str, int]]:
    return {
        p: {"raw": v, "normalized": v, "weight": 1, "weighted": v}
        for p, v in zip(PLUGINS, values, strict=True)
    }


def explanation(n_nodes: int = 3) -> dict[str, Any]:
    """A winner, a feasible node, a node filtered by PodTopologySpread (then more feasible
    ones when n_nodes asks for them)."""
    nodes = [
        {
            "name": "ip-10-20-33-41.eu-west-1.compute.internal",
            "zone": "eu-west-1a",
            "feasible": True,
            "winner": True,
            "scores": scores([100, 0, 40, 100, 10]),
            "total": 250,
        },
        {
            "name": "ip-10-20-34-7.eu-west-1.compute.internal",
            "zone": "eu-west-1b",
            "feasible": True,
            "winner": False,
            "scores": scores([100, 0, 60, 20, 0]),
            "total": 180,
        },
    ]
    for i in range(max(0, n_nodes - 3)):
        nodes.append(
            {
                "name": f"ip-10-20-40-{i}.eu-west-1.compute.internal",
                "zone": ZONES[i % 3],
                "feasible": True,
                "winner": False,
                "scores": scores([100, 0, 10, 10, 0]),
                "total": 120,
            }
        )
    nodes.append(
        {
            "name": "ip-10-20-35-9.eu-west-1.compute.internal",
            "zone": "eu-west-1c",
            "feasible": False,
            "winner": False,
            "rejectedAt": "Filter",
            "plugin": "PodTopologySpread",
            "reasons": ["node(s) didn't match pod topology spread constraints"],
            "scores": {},
            "total": None,
        }
    )
    return {
        "pod": "shop/search-5c-abcde",
        "scheduled": True,
        "selectedNode": nodes[0]["name"],
        "fitError": None,
        "plugins": PLUGINS,
        "nodes": nodes,
        "hints": ["eu-west-1c already holds more search pods than maxSkew allows"],
    }


# ------------------------------------------------------------------ pixels


def pixels(png: bytes) -> np.ndarray:
    """The picture as an (h, w, 3) uint8 array."""
    assert png[:8] == PNG_SIGNATURE
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def assert_not_blank(
    png: bytes, *, min_width: int = 600, min_height: int = 250, colours: int = 5
) -> np.ndarray:
    img = pixels(png)
    h, w, _ = img.shape
    assert min_width <= w <= 1400 and min_height <= h <= 3000, (w, h)
    background = img[0, 0]
    assert tuple(background) == (255, 255, 255)
    differing = np.any(img != background, axis=2).mean()
    assert differing > 0.01, f"only {differing:.2%} of the pixels are drawn"
    distinct = len(np.unique(img.reshape(-1, 3), axis=0))
    assert distinct >= colours, distinct
    return img


def count_colour(img: np.ndarray, colour: str, tolerance: int = 3) -> int:
    target = np.array([round(c * 255) for c in to_rgb(colour)])
    return int(np.all(np.abs(img.astype(int) - target) <= tolerance, axis=2).sum())


def saturated_hues(img: np.ndarray, min_pixels: int = 300) -> int:
    """How many 10-degree hue bins hold at least min_pixels clearly coloured pixels."""
    hsv = rgb_to_hsv(img.astype(float) / 255)
    vivid = (hsv[..., 1] > 0.4) & (hsv[..., 2] > 0.3)
    bins = np.bincount((hsv[..., 0][vivid] * 36).astype(int) % 36, minlength=36)
    return int((bins >= min_pixels).sum())


# ------------------------------------------------------------------ pods per domain


def test_pods_per_domain_draws_every_domain_in_its_colour() -> None:
    img = assert_not_blank(pods_per_domain_png(steps()))
    assert saturated_hues(img) >= len(ZONES)
    for colour in plots.TAB10[: len(ZONES)]:  # the three zones' bar colours, in large areas
        assert count_colour(img, colour) > 2000, colour


def test_pods_per_domain_sums_a_rollouts_replicasets_in_one_panel() -> None:
    rollout = [
        {
            "label": "rollout",
            "distribution": [
                row("web", [2, 1, 0], owner="web", rs="web-old"),
                row("web", [0, 1, 2], owner="web", rs="web-new"),
            ],
            "pending": [],
            "pods": [],
        }
    ]
    fig = plots._pods_per_domain_figure(rollout)
    assert fig is not None
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title(loc="left")]
    assert [ax.get_title(loc="left") for ax in panels] == ["deploy/web [shop] by zone"]
    heights = sorted(p.get_height() for p in panels[0].patches)
    assert heights == [2, 2, 2]  # each zone: old + new


def test_pods_per_domain_groups_by_workload_and_key() -> None:
    fig = plots._pods_per_domain_figure(steps())
    assert fig is not None
    titles = [ax.get_title(loc="left") for ax in fig.axes if ax.get_visible() and ax.get_title(loc="left")]
    assert titles == ["deploy/web [shop] by zone", "deploy/search [shop] by zone"]
    web = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("deploy/web"))
    per_step = [0.0, 0.0, 0.0]
    for bar in web.patches:
        per_step[round(bar.get_x() + bar.get_width() / 2)] += bar.get_height()
    assert per_step == [6, 7, 7]


def test_pods_per_domain_caps_panels_and_says_how_many_were_left_out() -> None:
    many = [{"label": "s", "distribution": [row(f"app{i}", [1, 2, 3], owner=f"app{i}") for i in range(11)]}]
    fig = plots._pods_per_domain_figure(many)
    assert fig is not None
    assert len([ax for ax in fig.axes if ax.get_visible()]) == plots.MAX_PANELS
    assert "3 more workload/key panels left out" in [t.get_text() for t in fig.texts]
    assert_not_blank(pods_per_domain_png(many), min_height=800)
    few = plots._pods_per_domain_figure(steps())
    assert few is not None and not any("left out" in t.get_text() for t in few.texts)


def test_pods_per_domain_lumps_the_quiet_domains_of_a_big_key_in_grey() -> None:
    hosts = {f"ip-10-0-0-{i}.ec2.internal": (1 if i < 22 else 0) for i in range(30)}
    big = [
        {
            "label": "s",
            "distribution": [
                {
                    "workload": {"kind": "StatefulSet", "namespace": "default", "name": "db"},
                    "owner": {"kind": "", "name": ""},
                    "topologyKey": "kubernetes.io/hostname",
                    "domains": hosts,
                    "skew": 1,
                    "pods": 22,
                    "constraints": [],
                }
            ],
        }
    ]
    fig = plots._pods_per_domain_figure(big)
    assert fig is not None
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert len(labels) == plots.MAX_DOMAINS
    assert f"{30 - plots.MAX_DOMAINS + 1} other domains" in labels
    assert "ip-10-0-0-0" in labels  # hostnames shortened to their first label
    assert count_colour(pixels(pods_per_domain_png(big) or b""), plots.OTHER_COLOUR) > 500


def test_pods_per_domain_is_none_without_distribution() -> None:
    assert pods_per_domain_png([]) is None
    assert pods_per_domain_png([{"label": "empty", "distribution": [], "pending": [], "pods": []}]) is None


# ------------------------------------------------------------------ skew


def test_skew_marks_steps_over_max_skew_and_draws_the_limit() -> None:
    fig = plots._skew_figure(steps())
    assert fig is not None
    (ax,) = fig.axes
    breaches = [c for c in ax.collections if c.get_gid() == "breach"]
    assert len(breaches) == 1
    assert breaches[0].get_label() == "skew > maxSkew"
    assert breaches[0].get_offsets().tolist() == [[2, 4]]  # web at step 3: 4 - 0 > 1
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    web = lines["deploy/web [shop] zone (maxSkew 1)"]
    assert list(web.get_ydata()) == [0, 1, 4]
    search = lines["deploy/search [shop] zone (maxSkew 1)"]
    assert list(search.get_ydata()) == [0, 0, 1]  # over its old maxSkew, but without one at step 3
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [tuple(line.get_ydata()) for line in dashed] == [(1, 1), (1, 1)]
    assert [line.get_color() for line in dashed] == [web.get_color(), search.get_color()]
    img = assert_not_blank(skew_png(steps()) or b"")
    assert count_colour(img, plots.BREACH_COLOUR, tolerance=20) > 30


def test_skew_without_constraints_has_no_limit_line() -> None:
    loose = [{"label": "s", "distribution": [row("batch", [3, 1, 0], owner="batch", constraints=[])]}]
    fig = plots._skew_figure(loose)
    assert fig is not None
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.get_lines()] == ["deploy/batch [shop] zone"]
    assert not ax.collections  # no limit, so nothing is over it


def view_row(rs: str, owner: str, **fields: Any) -> dict[str, Any]:
    """A distribution row as scheduler.views writes it (the scheduler's fields and the raw ones)."""
    base: dict[str, Any] = {
        "namespace": "shop",
        "workload": {"kind": "ReplicaSet", "namespace": "shop", "name": rs},
        "owner": {"kind": "Deployment", "name": owner},
        "pod": f"{rs}-x",
        "topologyKey": ZONE,
        "pods": 6,
        "constraints": [],
        "maxSkew": None,
        "whenUnsatisfiable": None,
        "domains": None,
        "skew": None,
        "withinMaxSkew": None,
        "leftOutDomains": [],
        "rawDomains": dict(zip(ZONES, [3, 3, 0], strict=True)),
        "rawSkew": 3,
    }
    return {**base, **fields}


def test_view_rows_draw_own_pods_once_and_the_schedulers_skew() -> None:
    """honor: a hard and a soft constraint on zone, its failed zone left out (skew 0, raw 3);
    batch: no constraint (raw view only). Pods per domain come from rawDomains, once per
    ReplicaSet and key; the skew line is the scheduler's; batch has none."""
    honor = {
        "domains": {ZONES[0]: 3, ZONES[1]: 3},
        "leftOutDomains": [ZONES[2]],
        "skew": 0,
        "withinMaxSkew": True,
    }
    rows = [
        view_row("honor-1", "honor", maxSkew=1, whenUnsatisfiable="DoNotSchedule", **honor),
        view_row("honor-1", "honor", maxSkew=5, whenUnsatisfiable="ScheduleAnyway", **honor),
        view_row("batch-1", "batch"),
    ]
    data = [{"label": "zone c failed", "distribution": rows, "pending": [], "pods": []}]
    fig = plots._pods_per_domain_figure(data)
    assert fig is not None
    honor_ax = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("deploy/honor"))
    assert sorted(p.get_height() for p in honor_ax.patches) == [0, 3, 3]  # not 6/6: counted once
    skew = plots._skew_figure(data)
    assert skew is not None
    (ax,) = skew.axes
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert list(lines) == ["deploy/honor [shop] zone (maxSkew 1/5)"]
    assert list(lines["deploy/honor [shop] zone (maxSkew 1/5)"].get_ydata()) == [0]
    assert not [c for c in ax.collections if c.get_gid() == "breach"]


def test_a_view_row_over_its_own_max_skew_is_a_breach() -> None:
    """Breaches follow each row's withinMaxSkew: a soft constraint's skew 4 is within its
    maxSkew 5 even though a hard one on the same key has maxSkew 1."""
    soft = view_row("web-1", "web", maxSkew=5, whenUnsatisfiable="ScheduleAnyway", skew=4, withinMaxSkew=True)
    hard = view_row("web-1", "web", maxSkew=1, whenUnsatisfiable="DoNotSchedule", skew=1, withinMaxSkew=True)
    fig = plots._skew_figure([{"label": "s", "distribution": [hard, soft]}])
    assert fig is not None
    assert not [c for c in fig.axes[0].collections if c.get_gid() == "breach"]
    over = dict(hard, skew=2, withinMaxSkew=False)
    fig = plots._skew_figure([{"label": "s", "distribution": [over, soft]}])
    assert fig is not None
    (breach,) = [c for c in fig.axes[0].collections if c.get_gid() == "breach"]
    assert breach.get_offsets().tolist() == [[0, 4]]  # the panel's largest skew, marked over


def test_skew_is_none_without_distribution() -> None:
    assert skew_png([]) is None
    assert skew_png([{"label": "x", "distribution": []}]) is None


# ------------------------------------------------------------------ pending


def test_pending_counts_per_step() -> None:
    fig = plots._pending_figure(steps())
    running_ax, pending_ax = fig.axes
    assert list(running_ax.get_lines()[0].get_ydata()) == [9, 10, 9]
    assert [bar.get_height() for bar in pending_ax.patches] == [0, 0, 1]
    img = assert_not_blank(pending_png(steps()))
    assert count_colour(img, plots.TAB10[1]) > 500  # the pending bar


def test_pending_without_steps_still_draws_a_labelled_frame() -> None:
    fig = plots._pending_figure([])
    assert "no steps" in [t.get_text() for ax in fig.axes for t in ax.texts]
    assert pending_png([])[:8] == PNG_SIGNATURE


# ------------------------------------------------------------------ score heatmap


def test_heatmap_rows_columns_winner_and_filtered_node() -> None:
    fig = plots._score_heatmap_figure(explanation())
    assert fig is not None
    main, total, _colourbar = fig.axes
    labels = [t.get_text() for t in main.get_yticklabels()]
    assert labels == [
        "\u2605 ip-10-20-33-41 (eu-west-1a)",
        "ip-10-20-34-7 (eu-west-1b)",
        "ip-10-20-35-9 (eu-west-1c)",
    ]
    assert main.get_yticklabels()[0].get_fontweight() == "bold"
    assert [t.get_text() for t in main.get_xticklabels()] == PLUGINS
    assert [t.get_text() for t in total.get_xticklabels()] == ["total"]
    texts = [t.get_text() for t in main.texts]
    assert "filtered: PodTopologySpread (node(s) didn't match pod topology spread constraints)" in texts
    assert texts.count("100") == 3  # annotated cells: weighted scores
    assert sorted(t.get_text() for t in total.texts) == ["-", "180", "250"]
    img = assert_not_blank(score_heatmap_png(explanation()) or b"", colours=20)
    assert count_colour(img, plots.FILTERED_COLOUR) > 2000  # the greyed row


def test_heatmap_caps_rows() -> None:
    fig = plots._score_heatmap_figure(explanation(n_nodes=45))
    assert fig is not None
    assert len(fig.axes[0].get_yticklabels()) == plots.MAX_NODES
    assert "5 more nodes left out" in [t.get_text() for t in fig.texts]


def test_heatmap_is_none_without_nodes() -> None:
    assert score_heatmap_png({"pod": "a/b", "plugins": PLUGINS, "nodes": []}) is None


# ------------------------------------------------------------------ time per plugin


def _call(point: str, us: float, plugin: str = "PodTopologySpread") -> dict[str, Any]:
    return {"name": plugin, "extensionPoint": point, "status": "Success", "microseconds": us}


def timings() -> dict[str, Any]:
    """A scored cycle's CycleTimings.to_dict: PreFilter and Score with their framework work, a
    NormalizeScore call, and two framework steps."""
    return {
        "cycleMicroseconds": 200.0,
        "pluginMicroseconds": 150.0,
        "frameworkMicroseconds": 40.0,
        "otherMicroseconds": 10.0,
        "extensionPoints": [
            {
                "name": "PreFilter",
                "status": "Success",
                "microseconds": 60.0,
                "frameworkMicroseconds": 10.0,
                "plugins": [_call("PreFilter", 50.0)],
            },
            {
                "name": "Score",
                "status": "Success",
                "microseconds": 110.0,
                "frameworkMicroseconds": 10.0,
                "plugins": [_call("Score", 80.0), _call("NormalizeScore", 20.0)],
            },
        ],
        "frameworkSteps": [
            {"name": "Snapshot", "microseconds": 5.0},
            {"name": "SelectHost", "microseconds": 15.0},
        ],
    }


def test_timings_chart_has_a_bar_per_plugin_and_framework_row_in_cycle_order() -> None:
    fig = plots._timings_figure(timings())
    assert fig is not None
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [
        "PreFilter \u00b7 PodTopologySpread",
        "PreFilter \u00b7 (framework)",
        "Score \u00b7 PodTopologySpread",
        "NormalizeScore \u00b7 PodTopologySpread",
        "Score \u00b7 (framework)",
        "Snapshot \u00b7 (framework)",
        "SelectHost \u00b7 (framework)",
    ]
    widths = [bar.get_width() for bar in ax.patches]
    assert widths == [50.0, 10.0, 80.0, 20.0, 10.0, 5.0, 15.0]
    assert "80.0 \u00b5s (40.0%)" in [t.get_text() for t in ax.texts]  # share of the whole cycle
    assert fig.texts[0].get_text() == "Time per plugin: plugins 150 \u00b5s of the 200 \u00b5s cycle (75%)"
    img = assert_not_blank(plots.timings_png(timings()) or b"", min_height=200)
    assert count_colour(img, plots.POINT_COLOURS["Score"]) > count_colour(
        img, plots.POINT_COLOURS["PreFilter"]
    )
    assert count_colour(img, plots.FRAMEWORK_COLOUR) > 0


def test_timings_chart_is_none_without_time() -> None:
    assert plots.timings_png({"cycleMicroseconds": 0.0, "extensionPoints": [], "frameworkSteps": []}) is None


# ------------------------------------------------------------------ helpers and imports


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("ip-10-20-33-41.eu-west-1.compute.internal", "ip-10-20-33-41"),
        ("node-1", "node-1"),
        ("10.0.3.7", "10.0.3.7"),
    ],
)
def test_short_node(name: str, short: str) -> None:
    assert plots.short_node(name) == short


def test_importing_the_report_package_does_not_import_matplotlib() -> None:
    code = "import sys, kubespread.report; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_many_domains_get_distinct_colours_none_grey() -> None:
    """Up to MAX_DOMAINS - 1 domains of a key each get a colour of their own, none of them
    the grey that stands for "other domains"."""
    from matplotlib.colors import to_rgb

    zones = {f"zone-{i:02d}": 1 for i in range(plots.MAX_DOMAINS)}
    step = {
        "label": "s",
        "distribution": [
            {
                "workload": {"kind": "ReplicaSet", "namespace": "default", "name": "web"},
                "owner": {"kind": "", "name": ""},
                "topologyKey": "topology.kubernetes.io/zone",
                "domains": zones,
                "skew": 0,
                "pods": len(zones),
                "constraints": [],
            }
        ],
    }
    colours = plots._domain_colours(plots._panels([step]))
    assert len(colours) == len(zones) and len(set(colours.values())) == len(zones)
    for colour in colours.values():
        r, g, b = to_rgb(colour)
        assert max(r, g, b) - min(r, g, b) > 0.05, colour  # not a grey
