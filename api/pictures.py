"""Pictures of what activity analysis decides: `draw_activity(f, *args)` draws the jaxpr
of `f` as a graph, each value that carries a derivative coloured, each residual the
backward pass keeps drawn beside the value it came from as a square whose area is its
bytes.

The SVG is written directly (no graphviz, no matplotlib: a picture must not need an
optional dependency) with a layered layout computed in one pass over the equations:
the inputs on the top row, each equation one row below the lowest of its operands'
producers (so a row holds work that could run at once, in program order), the outputs
at the bottom. Rows wider than `ROW_NODES` wrap. Nothing is recursive and nothing is
quadratic, so a 10,000-equation program draws in about the time it takes to trace.
Equations with bodies (`scan`, `cond`, `checkpoint`) are one node each."""

from __future__ import annotations

import html
import math
import os
from collections import defaultdict, deque
from typing import Callable, Sequence

import attrs

from ..core.activity import Inactive
from ..core.ir import Jaxpr, Var
from ..interpreters.linearize import ResidualInfo
from .arguments import as_tuple, check_argnums, flatten_args
from .plot_style import (
    ACTIVE,
    ACTIVE_EDGE,
    FONT,
    INACTIVE,
    INACTIVE_EDGE,
    RESIDUAL,
    TEXT,
)
from .residuals import activity_jaxpr, saved_residuals

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
    """What `draw_activity` returns: the SVG text (`svg`), shown by a notebook
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


def draw_activity(f: Callable, *args, argnums: int | Sequence[int] | None = None,
                  residuals: bool = True) -> ActivityDrawing:
    """Draw the jaxpr of `f` at `args` as a graph: inputs at the top, an edge from each
    value's producer to each of its readers, the values that carry a derivative when
    differentiating in `argnums` orange (default: every float argument not wrapped in
    `Inactive`, as `print_activity`), the others grey. With `residuals`, each value
    `vjp` keeps for the backward pass is a blue square beside what produced it, its area
    in proportion to its bytes (hover for its type, bytes and line); those made inside a
    call's body (a `checkpoint`'s) are on the bottom row. Pass `residuals=False` for a
    program reverse mode does not take (a `while_loop`). Returns an `ActivityDrawing`
    (a notebook shows it; `.save(path)` writes the SVG). JAX has no such picture."""
    closed, active = activity_jaxpr(f, *args, argnums=argnums)
    graph = _Graph.of(closed.jaxpr, active)
    if residuals:
        nums = None if argnums is None else check_argnums(as_tuple(argnums), len(args))
        vjp_args = _only_selected_active(args, nums)
        graph.attach(saved_residuals(f, *vjp_args), _input_nodes(graph, args, nums, vjp_args))
    return ActivityDrawing(_svg(graph), len(graph.labels), sum(graph.active),
                           sum(map(len, graph.residuals.values())) + len(graph.loose),
                           graph.residual_bytes())


def _only_selected_active(args: tuple, nums) -> tuple:
    """The arguments as `saved_residuals` must see them to differentiate in `nums` only."""
    if nums is None:
        return args
    return tuple(a if i in nums or isinstance(a, Inactive) else Inactive(a)
                 for i, a in enumerate(args))


def _input_nodes(graph: _Graph, args: tuple, nums, vjp_args: tuple) -> list[int | None]:
    """For each input `vjp` traces (it leaves Python numbers out), the node of the same
    leaf in the drawing (the leaves are the user's objects, so found by identity)."""
    drawn = {}
    for i, leaf in enumerate(flatten_args(args, nums).leaves):
        drawn.setdefault(id(leaf), graph.input_nodes[i])
    return [drawn.get(id(leaf)) for leaf in flatten_args(vjp_args, keep_static=True).leaves]


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

    def attach(self, infos: list[ResidualInfo], input_nodes: list[int | None]) -> None:
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
    height = LEGEND_HEIGHT + ROW_HEIGHT * (len(rows) + bool(graph.loose)) + 2 * MARGIN
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

