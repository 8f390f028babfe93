"""Reports a person reads after a run: pictures of how the pods spread step by step, and of
why one pod's node won, in a single HTML file that needs no server, network or viewer.

matplotlib is only imported when a picture is drawn, so importing this package (as the CLI
does) costs nothing until a report is asked for."""

from kubespread.report.html import render_report, write_report
from kubespread.report.plots import pending_png, pods_per_domain_png, score_heatmap_png, skew_png, timings_png

__all__ = [
    "pending_png",
    "pods_per_domain_png",
    "render_report",
    "score_heatmap_png",
    "skew_png",
    "timings_png",
    "write_report",
]
