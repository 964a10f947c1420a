"""Gantt charts of DAG task runs as self-contained SVG (no plotting library, no script).

One row per task, ordered by start time; the x axis is seconds since the execution
started. Bars are coloured by stage (the Map state or group that ran the task), so a
strategy's waves are visible at a glance; a failed task is red with a dark outline.
Every label goes through :func:`html.escape`: task names come from SQL file names
and must never break the report's markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

# Stage colours (ColorBrewer Set2, readable behind black text), then the failure colour.
STAGE_COLOURS = (
    "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854",
    "#ffd92f", "#e5c494", "#b3b3b3", "#80b1d3", "#bc80bd",
)  # fmt: skip
FAILED_COLOUR = "#d62728"
CHAR_W = 7.2
ROW_H = 22
BAR_H = 14
TOP = 34
AXIS_H = 28
PLOT_W = 640
MARGIN = 12


@dataclass(frozen=True)
class TaskSpan:
    """One task's run: seconds since the execution started, and the stage that ran it."""

    task: str
    start: float
    end: float
    stage: str = ""
    status: str = "SUCCEEDED"

    @property
    def seconds(self) -> float:
        """How long the task ran (never negative)."""
        return max(self.end - self.start, 0.0)


def nice_step(total: float, ticks: int = 8) -> float:
    """A 1/2/5 x 10^n tick spacing giving at most about ``ticks`` ticks over ``total``."""
    if total <= 0:
        return 1.0
    raw = total / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover - the loop always returns


def _fmt(seconds: float) -> str:
    return f"{seconds:.0f}" if seconds == int(seconds) else f"{seconds:.1f}"


def svg(spans: Sequence[TaskSpan], title: str) -> str:
    """The spans as an SVG document string; an empty list gives a one-line placeholder."""
    if not spans:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLOT_W}" height="40" '
            f'viewBox="0 0 {PLOT_W} 40" font-family="sans-serif" font-size="12" role="img">'
            f"<title>{escape(title)}</title>"
            f'<text x="{MARGIN}" y="24" fill="#666">no task timings recorded</text></svg>'
        )
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.task))
    stages = list(dict.fromkeys(s.stage for s in ordered))
    colour = {stage: STAGE_COLOURS[i % len(STAGE_COLOURS)] for i, stage in enumerate(stages)}
    total = max(1e-3, *(s.end for s in ordered))
    step = nice_step(total)
    axis_end = math.ceil(total / step) * step
    label_w = max(len(s.task) for s in ordered) * CHAR_W + 2 * MARGIN
    scale = PLOT_W / axis_end
    width = label_w + PLOT_W + 3 * MARGIN
    legend_y = TOP + len(ordered) * ROW_H + AXIS_H
    legend_rows = math.ceil(len(stages) / 4)
    height = legend_y + legend_rows * 20 + MARGIN

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12" '
        'role="img">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="20" font-weight="bold">{escape(title)}</text>',
        '<g class="grid" stroke="#e0e0e0" font-size="10" fill="#555">',
    ]
    bottom = TOP + len(ordered) * ROW_H
    for i in range(round(axis_end / step) + 1):
        t = i * step
        x = label_w + t * scale
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom:.0f}"/>'
            f'<text x="{x:.1f}" y="{bottom + 14:.0f}" text-anchor="middle" stroke="none">'
            f"{_fmt(t)}</text>"
        )
    out.append(
        f'<text x="{label_w + PLOT_W / 2:.0f}" y="{bottom + 26:.0f}" text-anchor="middle" '
        'stroke="none">seconds since the execution started</text></g>'
    )
    out.append('<g class="bars">')
    for row, span in enumerate(ordered):
        y = TOP + row * ROW_H
        failed = span.status != "SUCCEEDED"
        fill = FAILED_COLOUR if failed else colour[span.stage]
        bar_w = max(span.seconds * scale, 2.0)
        tip = (
            f"{span.task}: {span.start:.2f}-{span.end:.2f} s ({span.seconds:.2f} s), "
            f"{span.stage or 'no stage'}, {span.status}"
        )
        out.append(
            f'<g class="span" data-task="{escape(span.task)}" data-status="{escape(span.status)}">'
            f"<title>{escape(tip)}</title>"
            f'<text x="{label_w - MARGIN:.1f}" y="{y + 14}" text-anchor="end">'
            f"{escape(span.task)}</text>"
            f'<rect x="{label_w + span.start * scale:.1f}" y="{y + 3}" width="{bar_w:.1f}" '
            f'height="{BAR_H}" rx="2" fill="{fill}"'
            + (' stroke="#5a0000" stroke-width="1.5"' if failed else "")
            + "/></g>"
        )
    out.append("</g>")
    out.append('<g class="legend">')
    for i, stage in enumerate(stages):
        lx = MARGIN + (i % 4) * 190
        ly = legend_y + (i // 4) * 20
        out.append(
            f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{colour[stage]}"/>'
            f'<text x="{lx + 18}" y="{ly + 11}">{escape(stage or "(no stage)")}</text>'
        )
    out.append("</g></svg>")
    return "\n".join(out) + "\n"
