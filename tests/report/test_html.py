"""The HTML report: one self-contained, escaped page, and what a browser really shows of it."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_plots import PNG_SIGNATURE, count_colour, explanation, pixels, steps, timings

from kubespread.report import plots, render_report, write_report

pytestmark = pytest.mark.slow

EVIL = "<script>alert('x')</script>"
DATA_URI = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]+)">')


def evil_steps() -> list[dict[str, Any]]:
    """The sample steps with markup in a step label, a pending pod's name and its message."""
    data = steps()
    data[2]["label"] = f"step 3: {EVIL}"
    data[2]["pending"] = [{"namespace": "shop", "name": f"web-{EVIL}", "message": f"0/6 nodes: {EVIL}"}]
    return data


def images(page: str) -> list[bytes]:
    return [base64.b64decode(data) for data, _alt in DATA_URI.findall(page)]


def test_page_is_self_contained_with_all_four_pictures() -> None:
    page = render_report(title="zone failure", subtitle="seed 7", steps=steps(), explanation=explanation())
    assert page.startswith("<!DOCTYPE html>")
    assert page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower() and "<link" not in page.lower()
    sources = re.findall(r'src="([^"]*)"', page)
    assert len(sources) == 4 and all(s.startswith("data:image/png;base64,") for s in sources)
    pictures = images(page)
    assert len(pictures) == 4
    assert all(p[:8] == PNG_SIGNATURE for p in pictures)
    assert all(alt.strip() for _data, alt in DATA_URI.findall(page))
    assert page.count("<figcaption>") == 4


def test_pictures_follow_the_data() -> None:
    without_explanation = render_report(title="t", steps=steps())
    assert len(images(without_explanation)) == 3
    no_distribution = [dict(s, distribution=[]) for s in steps()]
    assert len(images(render_report(title="t", steps=no_distribution))) == 1  # pending only
    only_explanation = render_report(title="t", steps=[], explanation=explanation())
    assert len(images(only_explanation)) == 1
    assert "Steps</h2>" not in only_explanation


def test_user_strings_are_escaped() -> None:
    expl = explanation()
    expl["pod"] = f"shop/{EVIL}"
    expl["nodes"][-1]["reasons"] = [EVIL]
    expl["hints"] = [EVIL]
    page = render_report(
        title=f"title {EVIL}",
        subtitle=EVIL,
        steps=evil_steps(),
        explanation=expl,
        tables=[(f"table {EVIL}", ["name", EVIL], [["a", EVIL], [EVIL, 3]])],
    )
    assert "<script" not in page
    escaped = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
    # title x2, subtitle, table title, header, 2 cells, step label x3 (steps table, the spread
    # at the end and pending), pod name, message, explanation pod x2 (heading, heatmap alt),
    # filtered reason, hint
    assert page.count(escaped) == 16


def test_tables_steps_pending_and_explanation_are_shown() -> None:
    page = render_report(
        title="t",
        steps=steps(),
        explanation=explanation(),
        tables=[("Summary", ["metric", "value"], [["evictions", 4]])],
    )
    assert "<th>metric</th><th>value</th>" in page and "<td>evictions</td><td>4</td>" in page
    assert "step 2: scale deploy/web to 7" in page
    assert '<div class="msg">0/6 nodes are available</div>' in page
    assert "shop/search-5c-abcde" in page
    assert "<td>winner</td>" in page and "<td>feasible</td>" in page
    assert "filtered by PodTopologySpread: node(s) didn&#x27;t match pod topology spread constraints" in page
    assert "<li>eu-west-1c already holds more search pods than maxSkew allows</li>" in page


def test_a_timed_explanation_shows_the_time_per_plugin_chart() -> None:
    untimed = render_report(title="t", steps=[], explanation=explanation())
    assert "Time per plugin" not in untimed and len(images(untimed)) == 1  # the heatmap
    page = render_report(title="t", steps=[], explanation={**explanation(), "timings": timings()})
    assert "<h3>Time per plugin</h3>" in page
    assert "Horizontal bars of the time each plugin took" in page
    assert len(images(page)) == 2 and all(png.startswith(PNG_SIGNATURE) for png in images(page))


def test_the_spread_at_the_end_shows_the_schedulers_skew_and_the_raw_one() -> None:
    """The last step's rows of the real zone-failure scenario, stopped with zone-c down: the
    Honor Deployment's skew is 0 as the scheduler counts it (zone-c left out), 3 raw."""
    import dataclasses

    from kubespread.sim.run import simulate
    from kubespread.sim.scenario import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "examples/scenarios/zone-failure.yaml")
    result = simulate(dataclasses.replace(scenario, steps=scenario.steps[:4]))
    page = render_report(title="t", steps=[{**result.final.to_dict(), "label": "zone-c down"}])
    section = page[page.index("<h2>Spread at the end: zone-c down</h2>") :]
    section = section[: section.index("</section>")]
    assert "<th>skew</th>" in section and "<th>raw skew</th>" in section and "<th>left out</th>" in section
    honor = next(r for r in section.split("<tr>") if r.startswith("<td>honor (honor-"))
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", honor)
    assert cells == [
        cells[0],
        "topology.kubernetes.io/zone",
        "maxSkew 1",
        "zone-a=3 zone-b=3",
        "zone-c",
        "3",
        "0",
        "zone-a=3 zone-b=3 zone-c=0",
        "3",
    ]


def test_no_pending_pods_is_said_plainly() -> None:
    quiet = [dict(s, pending=[]) for s in steps()]
    assert "No pod was left pending at any step." in render_report(title="t", steps=quiet)


def test_write_report_writes_exactly_one_file(tmp_path: Path) -> None:
    target = tmp_path / "out" / "nested"
    path = write_report(target, title="t", steps=steps(), explanation=explanation())
    assert path == target / "report.html"
    assert [p.name for p in target.iterdir()] == ["report.html"]
    assert path.read_text(encoding="utf-8") == render_report(
        title="t", steps=steps(), explanation=explanation()
    )
    again = write_report(str(target), title="second", steps=[])  # an existing directory is fine
    assert again == path and "second" in path.read_text(encoding="utf-8")
    assert len(list(target.iterdir())) == 1


# ------------------------------------------------------------------ a real browser


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    why = "chromium not installed: no chromium or chromium-browser on PATH"
    if os.environ.get("KUBESPREAD_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"{why}, and KUBESPREAD_REQUIRE_CHROMIUM=1")
    pytest.skip(why)


def screenshot(browser: str, page: Path, out: Path, profile: Path) -> None:
    """Headless Chromium's picture of the page; older builds want --headless, some newer ones
    --headless=new, so both are tried."""
    errors = []
    for headless in ("--headless", "--headless=new"):
        out.unlink(missing_ok=True)
        result = subprocess.run(
            [
                browser,
                headless,
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--window-size=1200,2400",
                f"--screenshot={out}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode == 0 and out.exists() and out.stat().st_size > 0:
            return
        errors.append(f"{headless}: exit {result.returncode}: {result.stderr[-800:]}")
    pytest.fail("chromium made no screenshot:\n" + "\n".join(errors))


def test_chromium_renders_the_report(tmp_path: Path) -> None:
    browser = chromium()
    page = write_report(tmp_path / "report", title="zone failure", steps=steps(), explanation=explanation())
    shot = tmp_path / "shot.png"
    screenshot(browser, page, shot, tmp_path / "profile")
    img = pixels(shot.read_bytes())
    assert img.shape[:2] == (2400, 1200)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50
    white = np.all(img >= 250, axis=2).mean()
    assert white < 0.97, f"{white:.1%} of the screenshot is white"
    # the stacked bars' zone colours (the page's own CSS uses none of green or orange in area)
    assert count_colour(img, plots.TAB10[2], tolerance=12) > 2000
    assert count_colour(img, plots.TAB10[1], tolerance=12) > 2000


def test_one_entry_per_distinct_message_with_the_steps_it_spans() -> None:
    pending = [
        {"namespace": "default", "name": "web-1", "message": "0/3 nodes are available: 3 Insufficient cpu."}
    ]
    other = [
        {"namespace": "shop", "name": "db-0", "message": "0/3 nodes are available: 3 node(s) had taint."}
    ]
    steps_ = [
        {"label": "apply", "pending": []},
        {"label": "scale", "pending": pending},
        {"label": "advance", "pending": pending + other},
        {"label": "recover", "pending": []},
        {"label": "fail", "pending": pending},
    ]
    page = render_report(title="t", steps=steps_)
    section = page[page.index("<h2>Pending pods</h2>") :]
    section = section[: section.index("</section>")]
    assert section.count('<div class="msg">') == 2
    assert "steps #1-#2, #4 (3 steps, from scale); pods: <code>web-1</code>" in section
    assert "steps #2 (1 step, from advance); pods: <code>shop/db-0</code>" in section


ZONE_FAILURE = Path(__file__).resolve().parents[2] / "examples/scenarios/zone-failure.yaml"


def _shade_rgb(colour: str) -> str:
    """The shading colour as drawn: ``colour`` at alpha 0.10 over white."""
    from matplotlib.colors import to_hex, to_rgb

    return to_hex(tuple(0.9 + 0.1 * c for c in to_rgb(colour)))


def _zone_failure_report() -> tuple[Any, Any]:
    """The zone-failure run, and the per-step explanations ``simulate`` makes of pending pods."""
    from kubespread.sim.hints import PendingHints
    from kubespread.sim.run import simulate
    from kubespread.sim.scenario import load_scenario

    hints = PendingHints()
    result = simulate(load_scenario(ZONE_FAILURE), after_step=hints)
    return result, hints


def test_failed_nodes_are_shaded_on_the_charts_and_the_pending_pod_explained_at_its_step(
    tmp_path: Path,
) -> None:
    """zone-failure.yaml: zone-c's nodes fail at steps 2 and 3 and recover at 5 and 6; the
    pods of strict and min-domains are pending only at step 4 (after the 300 s toleration,
    before the recovery). The charts shade steps 2-5 in red; the report explains the first
    pending pod as the scheduler saw it at step 4, not at the end (nothing is pending then)."""
    from typer.testing import CliRunner

    from kubespread.cli.app import app

    result, hints = _zone_failure_report()
    assert hints.first is not None
    index, explanation = hints.first
    assert index == 3 and explanation["pod"].startswith("default/") and explanation.get("fitError")
    assert not result.final.pending  # at the end there is nothing pending to explain
    doc = result.to_dict()
    steps_ = [{**doc["initial"], "label": "initial"}] + [
        {**s, "label": s["description"]} for s in doc["steps"]
    ]
    assert [plots.node_marks(s)[0] for s in steps_] == ["", "", "failed", "failed", "failed", "failed", ""]
    assert plots.node_marks(steps_[3])[1] == "zone-c: 2 failed"
    img = pixels(plots.pods_per_domain_png(steps_) or b"")
    shade = _shade_rgb(plots.FAILED_SHADE)
    assert count_colour(img, shade, tolerance=4) > 5000
    quiet = [dict(s, nodes=[]) for s in steps_]
    assert count_colour(pixels(plots.pods_per_domain_png(quiet) or b""), shade, tolerance=4) == 0
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["simulate", str(ZONE_FAILURE), "--no-progress", "--report", str(out)])
    assert r.exit_code == 0, r.stderr
    page = (out / "report.html").read_text()
    assert "As the scheduler saw it at step 4: advance 300s." in page


def test_chromium_shows_the_failed_zone_shading(tmp_path: Path) -> None:
    browser = chromium()
    from typer.testing import CliRunner

    from kubespread.cli.app import app

    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["simulate", str(ZONE_FAILURE), "--no-progress", "--report", str(out)])
    assert r.exit_code == 0, r.stderr
    html = (out / "report.html").read_text()
    # the pictures first, so the screenshot holds them
    first = html.index("<section><h2>Pictures</h2>")
    page = tmp_path / "pictures.html"
    page.write_text(html[: html.index("<section>")] + html[first:])
    shot = tmp_path / "shot.png"
    screenshot(browser, page, shot, tmp_path / "profile")
    img = pixels(shot.read_bytes())
    assert count_colour(img, _shade_rgb(plots.FAILED_SHADE), tolerance=6) > 3000
