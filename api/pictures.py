"""Pictures of what activity analysis decides, in one look: the activity graph of a
jaxpr (`draw_jaxpr`, SVG, what `inert.draw_activity` returns), and the helpers that give
the residual bar chart and the memory-profile curve (`api/residuals.py`, matplotlib) the
same style. A value's colour means the same everywhere: orange carries a derivative, blue
is kept for the backward pass, grey is known work.

The SVG is written directly (no graphviz, no matplotlib: a picture must not need an
optional dependency, and one code path draws the same picture on every machine, which
the tests and `docs/pictures.py` can then check) with a layered layout computed in one
pass over the equations: the inputs on the top row, each equation one row below the
lowest of its operands' producers (so a row holds work that could run at once, in
program order), the outputs at the bottom. Rows wider than `ROW_NODES` wrap. Nothing is
recursive and nothing is quadratic, so a 10,000-equation program draws in about the time
it takes to trace. Equations with bodies (`scan`, `cond`, `checkpoint`) are one node
each. matplotlib is imported only when a chart is drawn: it is an optional dependency
(the `dev` and `notebooks` extras)."""

from __future__ import annotations

import html
import math
import os
from collections import defaultdict, deque
from typing import Sequence

import attrs

from ..core.ir import Jaxpr, Var
from ..interpreters.linearize import ResidualInfo

ACTIVE = "#e8833a"  # carries a derivative
ACTIVE_EDGE = "#a4501a"
INACTIVE = "#e4e4e4"  # known: computed in the forward pass, no derivative reads it for it
INACTIVE_EDGE = "#8c8c8c"
RESIDUAL = "#3b75af"  # kept between the forward and the backward pass
TEXT = "#262626"
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"  # matplotlib's default font first

_UNITS = ("B", "kB", "MB", "GB", "TB")


def human_bytes(n: float) -> str:
    """`n` bytes in decimal units, as the benchmark and docs write them: 512 B, 16.4 kB."""
    value, unit = float(n), 0
    while abs(value) >= 1000 and unit < len(_UNITS) - 1:
        value, unit = value / 1000, unit + 1
    return f"{value:.0f} {_UNITS[unit]}" if unit == 0 else f"{value:.3g} {_UNITS[unit]}"


def new_axes(ax=None, figsize=(7.0, 3.5)):
    """`ax`, or the axes of a new figure, styled as every inert chart: no top or right
    spine, a light grid behind the data."""
    import matplotlib.pyplot as plt  # noqa: PLC0415 — optional, only to draw

    if ax is None:
        ax = plt.figure(figsize=figsize).gca()
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_axisbelow(True)
    ax.grid(True, color=INACTIVE, linewidth=0.8)
    return ax


def bytes_axis(axis) -> None:
    """Label a matplotlib axis's ticks in bytes (`human_bytes`)."""
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415 — optional, only to draw

    axis.set_major_formatter(FuncFormatter(lambda value, _: human_bytes(value)))


# ---------------------------------------------------------------------------------
# The activity graph

ROW_NODES = 12  # nodes per row before a layer wraps
ROW_HEIGHT = 66  # pixels from one row to the next
NODE_HEIGHT = 26
CHAR_WIDTH = 7  # of the 12-pixel font, near enough to size a box around a label
GAP = 16  # between neighbours in a row
MARGIN = 20
LEGEND_HEIGHT = 34
LARGEST_RESIDUAL = 44  # the side of the square of the largest residual, in pixels
SMALLEST_RESIDUAL = 5  # the side below which a square would not be seen
MAX_LABEL = 40


@attrs.frozen
class ActivityDrawing:
    """What `inert.draw_activity` returns: the SVG text (`svg`), shown by a notebook
    (`_repr_svg_`) and written by `save`, and what it counts."""

    svg: str
    n_nodes: int  # inputs, equations and outputs drawn
    n_active: int
    n_residuals: int
    residual_bytes: int

    def _repr_svg_(self) -> str:
        return self.svg

    def save(self, path: str | os.PathLike) -> None:
        """Write the drawing to `path` as an SVG file (whatever its suffix)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)

    def __repr__(self) -> str:
        return (f"<activity drawing: {self.n_nodes} nodes, {self.n_active} active, "
                f"{self.n_residuals} residuals of {self.residual_bytes:,} bytes>")


def draw_jaxpr(jaxpr: Jaxpr, active: set[Var], residuals: Sequence[ResidualInfo] = (),
               residual_inputs: Sequence[int | None] = ()) -> ActivityDrawing:
    """The activity graph of `jaxpr` with the `active` variables marked, and each of the
    `residuals` beside what produced it; `residual_inputs[i]` is the position among
    `jaxpr.invars` of the input a residual `"input i"` names (None: not drawn)."""
    graph = _Graph.of(jaxpr, active)
    graph.attach(residuals, [None if i is None else graph.input_nodes[i]
                             for i in residual_inputs])
    return ActivityDrawing(_svg(graph), len(graph.labels), sum(graph.active),
                           sum(map(len, graph.residuals.values())) + len(graph.loose),
                           graph.residual_bytes())


@attrs.define(eq=False)
class _Graph:
    """The drawing's nodes as parallel lists (inputs, then equations, then outputs),
    its edges and each node's residuals."""

    labels: list[str] = attrs.Factory(list)
    tips: list[str] = attrs.Factory(list)
    active: list[bool] = attrs.Factory(list)
    levels: list[int] = attrs.Factory(list)
    edges: list[tuple[int, int]] = attrs.Factory(list)
    input_nodes: list[int] = attrs.Factory(list)
    eqn_nodes: list[int] = attrs.Factory(list)
    residuals: dict[int, list[ResidualInfo]] = attrs.Factory(lambda: defaultdict(list))
    loose: list[ResidualInfo] = attrs.Factory(list)  # made inside a body, or a constant
    jaxpr: Jaxpr | None = None

    @classmethod
    def of(cls, jaxpr: Jaxpr, active: set[Var]) -> _Graph:
        graph = cls(jaxpr=jaxpr)
        producer: dict[Var, int] = {}
        for v in jaxpr.constvars:
            producer[v] = graph.add(f"const {v.aval.str_short()}", "a constant", v in active, 0)
        for i, v in enumerate(jaxpr.invars):
            producer[v] = graph.add(f"in {i}: {v.aval.str_short()}", f"input {i}",
                                    v in active, 0)
            graph.input_nodes.append(producer[v])
        for eqn in jaxpr.eqns:
            sources = [producer[a] for a in eqn.inputs if type(a) is Var and a in producer]
            level = 1 + max((graph.levels[s] for s in sources), default=0)
            outs = ", ".join(v.aval.str_short() for v in eqn.outputs)
            node = graph.add(f"{eqn.primitive.name} {outs}", str(eqn.source_info or ""),
                             any(v in active for v in eqn.outputs), level, sources)
            graph.eqn_nodes.append(node)
            producer.update((v, node) for v in eqn.outputs)
        bottom = 1 + max(graph.levels, default=0)
        for i, v in enumerate(jaxpr.outvars):
            sources = [producer[v]] if type(v) is Var and v in producer else []
            graph.add(f"out {i}", f"output {i}", v in active, bottom, sources)
        return graph

    def add(self, label: str, tip: str, active: bool, level: int, sources=()) -> int:
        node = len(self.labels)
        label = label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + "…"
        self.labels.append(label)
        self.tips.append(f"{label}\n{tip}\n{'active' if active else 'inactive'}".strip())
        self.active.append(active)
        self.levels.append(level)
        self.edges.extend((s, node) for s in dict.fromkeys(sources))
        return node

    def attach(self, infos: Sequence[ResidualInfo], input_nodes: list[int | None]) -> None:
        """Hang each residual on the node that made it: an input's on the input, an
        equation's on the equation of its primitive, line and type (the k-th such
        residual on the k-th such equation), else on the last equation of its line and
        type, else of its line (a value a derivative rule computed there); the rest are
        loose."""
        same: dict[tuple, deque[int]] = defaultdict(deque)
        last_on_line: dict[tuple, int] = {}  # by line and type, and by line alone
        for eqn, node in zip(self.jaxpr.eqns, self.eqn_nodes):
            line = str(eqn.source_info or "")
            for v in eqn.outputs:
                same[eqn.primitive.name, line, v.aval.shape, v.aval.dtype].append(node)
                last_on_line[line, v.aval.shape, v.aval.dtype] = node
            last_on_line[line,] = node
        for r in infos:
            node = self._node_of(r, same, last_on_line, input_nodes)
            if node is None:
                self.loose.append(r)
            else:
                self.residuals[node].append(r)

    @staticmethod
    def _node_of(r: ResidualInfo, same, last_on_line, input_nodes) -> int | None:
        if r.origin.startswith("input "):
            return input_nodes[int(r.origin.split()[1])]
        if r.source_info is None:
            return None
        line = str(r.source_info)
        candidates = same.get((r.origin, line, r.aval.shape, r.aval.dtype))
        if candidates:
            return candidates.popleft()
        return last_on_line.get((line, r.aval.shape, r.aval.dtype), last_on_line.get((line,)))

    def residual_bytes(self) -> int:
        return sum(r.nbytes for rs in self.residuals.values() for r in rs) + \
            sum(r.nbytes for r in self.loose)


# ---------------------------------------------------------------------------------
# Layout and SVG


def _svg(graph: _Graph) -> str:
    largest = max([r.nbytes for rs in graph.residuals.values() for r in rs] +
                  [r.nbytes for r in graph.loose] + [1])
    side = lambda r: max(SMALLEST_RESIDUAL, LARGEST_RESIDUAL * math.sqrt(r.nbytes / largest))
    node_width = [CHAR_WIDTH * len(label) + 16 for label in graph.labels]
    slot_width = [w + sum(side(r) + 3 for r in graph.residuals.get(n, ()))
                  for n, w in enumerate(node_width)]
    rows = _rows(graph.levels)
    loose_width = sum(side(r) + 4 for r in graph.loose)
    width = max([sum(slot_width[n] + GAP for n in row) for row in rows] +
                [loose_width, LEGEND_WIDTH])
    height = _row_y(len(rows) + bool(graph.loose) - 1) + LARGEST_RESIDUAL / 2 + MARGIN
    x, y = [0.0] * len(graph.labels), [0.0] * len(graph.labels)
    for r, row in enumerate(rows):
        left = MARGIN + (width - sum(slot_width[n] + GAP for n in row)) / 2
        for n in row:
            x[n], y[n] = left + node_width[n] / 2, _row_y(r)
            left += slot_width[n] + GAP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 2 * MARGIN:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width + 2 * MARGIN:.0f} {height:.0f}" '
             f'font-family="{FONT}" font-size="12">', _legend()]
    parts.append('<g fill="none" stroke="#9a9a9a" stroke-width="1">')
    parts += [_edge(x[a], y[a], x[b], y[b]) for a, b in graph.edges]
    parts.append("</g>")
    for n, label in enumerate(graph.labels):
        parts.append(_node(x[n], y[n], node_width[n], label, graph.tips[n], graph.active[n]))
        left = x[n] + node_width[n] / 2 + 3
        for r in graph.residuals.get(n, ()):
            parts.append(_residual(left, y[n], side(r), r))
            left += side(r) + 3
    if graph.loose:
        ry = _row_y(len(rows))
        parts.append(f'<text x="{MARGIN}" y="{ry - 26:.1f}" fill="{TEXT}">kept from inside '
                     "calls' bodies, or constants:</text>")
        left = float(MARGIN)
        for r in graph.loose:
            parts.append(_residual(left, ry, side(r), r))
            left += side(r) + 4
    parts.append("</svg>")
    return "\n".join(parts)


def _rows(levels: list[int]) -> list[list[int]]:
    """Nodes by level, in order, each level cut into rows of at most `ROW_NODES`."""
    by_level: dict[int, list[int]] = defaultdict(list)
    for node, level in enumerate(levels):
        by_level[level].append(node)
    return [nodes[i:i + ROW_NODES] for level in sorted(by_level)
            for nodes in [by_level[level]] for i in range(0, len(nodes), ROW_NODES)]


def _row_y(row: int) -> float:
    return MARGIN + LEGEND_HEIGHT + ROW_HEIGHT * row + NODE_HEIGHT / 2


def _edge(x1: float, y1: float, x2: float, y2: float) -> str:
    y1, y2 = y1 + NODE_HEIGHT / 2, y2 - NODE_HEIGHT / 2
    mid = (y1 + y2) / 2
    return (f'<path class="edge" d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} '
            f'{x2:.1f},{y2:.1f}"/>')


def _node(x: float, y: float, width: float, label: str, tip: str, active: bool) -> str:
    fill, stroke = (ACTIVE, ACTIVE_EDGE) if active else (INACTIVE, INACTIVE_EDGE)
    return (f'<g class="node{" active" if active else ""}"><title>{html.escape(tip)}</title>'
            f'<rect x="{x - width / 2:.1f}" y="{y - NODE_HEIGHT / 2:.1f}" width="{width:.1f}" '
            f'height="{NODE_HEIGHT}" rx="5" fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" fill="{TEXT}">'
            f"{html.escape(label)}</text></g>")


def _residual(left: float, y: float, side: float, r: ResidualInfo) -> str:
    tip = (f"residual {r.aval.str_short()}: {r.nbytes:,} bytes\nfrom {r.origin}"
           + (f" at {r.source_info}" if r.source_info else ""))
    return (f'<rect class="residual" x="{left:.1f}" y="{y - side / 2:.1f}" width="{side:.1f}" '
            f'height="{side:.1f}" fill="{RESIDUAL}" fill-opacity="0.85">'
            f"<title>{html.escape(tip)}</title></rect>")


_LEGEND = [(ACTIVE, ACTIVE_EDGE, "active: carries a derivative"),
           (INACTIVE, INACTIVE_EDGE, "inactive: known"),
           (RESIDUAL, RESIDUAL, "residual kept for the backward pass (area: bytes)")]
LEGEND_WIDTH = sum(17 + CHAR_WIDTH * len(text) + 18 for *_, text in _LEGEND)


def _legend() -> str:
    y = MARGIN + 8
    parts, left = [], MARGIN
    for fill, stroke, text in _LEGEND:
        parts.append(f'<rect x="{left}" y="{y - 6}" width="12" height="12" fill="{fill}" '
                     f'stroke="{stroke}"/><text x="{left + 17}" y="{y + 4}" fill="{TEXT}">'
                     f"{html.escape(text)}</text>")
        left += 17 + CHAR_WIDTH * len(text) + 18
    return '<g class="legend">' + "".join(parts) + "</g>"

