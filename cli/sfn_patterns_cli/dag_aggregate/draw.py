"""Draw the reduced DAG as a self-contained SVG (no graphviz binary needed).

Levels are columns (left to right), so every edge points rightwards; each node is
filled with the colour of its L_ij group and a legend maps colours to groups. Inside a
column nodes are ordered by group, then name, so a group forms a visible block.
"""

from __future__ import annotations

from html import escape

from sfn_patterns_cli.dag_aggregate.planner import Plan

PALETTE = (
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
    "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f",
)  # fmt: skip
CHAR_W = 7.2
NODE_H = 34
ROW_GAP = 14
COL_GAP = 90
MARGIN = 30
HEADER = 30


def _group_of(plan: Plan) -> dict[str, str]:
    return {task: key for key, tasks in plan.groups.items() for task in tasks}


def svg(plan: Plan, title: str = "dag-aggregate") -> str:
    """The plan's reduced DAG as an SVG document string."""
    group_of = _group_of(plan)
    colour = {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(plan.groups)}
    columns: dict[int, list[str]] = {}
    for task, level in plan.level.items():
        columns.setdefault(level, []).append(task)
    order = {key: i for i, key in enumerate(plan.groups)}
    for tasks in columns.values():
        tasks.sort(key=lambda t: (order[group_of[t]], t))
    width_of = {lvl: max(len(t) for t in tasks) * CHAR_W + 24 for lvl, tasks in columns.items()}
    x_of: dict[int, float] = {}
    x = float(MARGIN)
    for lvl in sorted(columns):
        x_of[lvl] = x
        x += width_of[lvl] + COL_GAP
    tallest = max(len(tasks) for tasks in columns.values())
    legend_top = HEADER + MARGIN + tallest * (NODE_H + ROW_GAP) + 10
    legend_rows = (len(plan.groups) + 3) // 4
    width = max(x - COL_GAP + MARGIN, 4 * 180 + 2 * MARGIN)
    height = legend_top + legend_rows * 22 + MARGIN

    pos: dict[str, tuple[float, float, float]] = {}  # task -> (x, y, w)
    for lvl, tasks in columns.items():
        for row, task in enumerate(tasks):
            y = HEADER + MARGIN + row * (NODE_H + ROW_GAP)
            pos[task] = (x_of[lvl], y, width_of[lvl])

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for lvl in sorted(columns):
        out.append(
            f'<text x="{x_of[lvl]:.1f}" y="{MARGIN:.0f}" font-weight="bold">level {lvl}</text>'
        )
    out.append('<g class="edges" fill="none" stroke="#555" stroke-width="1.2">')
    for parent, child in sorted(plan.reduced.edges):
        px, py, pw = pos[parent]
        cx, cy, _ = pos[child]
        x1, y1, x2, y2 = px + pw, py + NODE_H / 2, cx, cy + NODE_H / 2
        bend = max((x2 - x1) / 2, 20)
        out.append(
            f'<path d="M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} '
            f'{x2:.1f},{y2:.1f}" marker-end="url(#arrow)"><title>{escape(parent)} -&gt; '
            f"{escape(child)}</title></path>"
        )
    out.append("</g>")
    out.append('<g class="nodes">')
    for task in sorted(pos):
        tx, ty, tw = pos[task]
        key = group_of[task]
        out.append(
            f'<g class="node" data-task="{escape(task)}" data-group="{key}">'
            f"<title>{escape(task)} ({key})</title>"
            f'<rect x="{tx:.1f}" y="{ty:.1f}" width="{tw:.1f}" height="{NODE_H}" rx="6" '
            f'fill="{colour[key]}" stroke="#333"/>'
            f'<text x="{tx + 12:.1f}" y="{ty + 15:.1f}">{escape(task)}</text>'
            f'<text x="{tx + 12:.1f}" y="{ty + 28:.1f}" font-size="10" fill="#444">{key}</text>'
            "</g>"
        )
    out.append("</g>")
    out.append(f'<g class="legend"><text x="{MARGIN}" y="{legend_top:.0f}" font-weight="bold">')
    out.append("groups L_ij: level i, earliest reader on level j (E = read by no task)</text>")
    for i, key in enumerate(plan.groups):
        lx = MARGIN + (i % 4) * 180
        ly = legend_top + 10 + (i // 4) * 22
        out.append(
            f'<rect x="{lx}" y="{ly:.0f}" width="14" height="14" fill="{colour[key]}" '
            f'stroke="#333"/><text x="{lx + 20}" y="{ly + 12:.0f}">{key} '
            f"({len(plan.groups[key])})</text>"
        )
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def html(plan: Plan, title: str = "dag-aggregate") -> str:
    """A standalone HTML page embedding :func:`svg` inline."""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head>\n<body>\n<h1>{escape(title)}</h1>\n"
        f"{svg(plan, title)}</body></html>\n"
    )
