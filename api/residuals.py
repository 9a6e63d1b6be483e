"""Seeing what activity analysis decides: which values are active (`print_activity`,
`draw_activity`), what the backward pass keeps (`saved_residuals`, `print_saved_residuals`,
and as bars per line, `saved_residuals(...).plot()`), and the memory alive over both
passes (`memory_profile`). The pictures are drawn by `api/pictures.py`."""

from __future__ import annotations

import html
import re
import tracemalloc
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from ..core.activity import Inactive
from ..core.ir import Literal, Var, pp_jaxpr
from ..core.trace import eval_primitive, get_aval
from ..interpreters.ad import active_vars, jvp_jaxpr
from ..interpreters.linearize import ResidualInfo
from ..interpreters.partial_eval import partial_eval_jaxpr
from ..interpreters.remat import Cost
from ..interpreters.transpose import backward_pass
from ..primitives.control.common import with_consts_as_invars
from .arguments import as_tuple, check_argnums, flatten_args
from .pictures import (
    ACTIVE,
    INACTIVE,
    RESIDUAL,
    ActivityDrawing,
    bytes_axis,
    draw_jaxpr,
    human_bytes,
    new_axes,
)
from .transforms import trace_to_closed_jaxpr, vjp

# ---------------------------------------------------------------------------------
# Seeing residuals


class ResidualReport(list):
    """The residuals `saved_residuals` found: a list of `ResidualInfo`, so code can
    count and sum them, whose repr is the table `print_saved_residuals` prints (the
    REPL shows it) and which a notebook renders as an HTML table. `recomputed`: what
    the backward pass computes again instead (checkpointed bodies), or None."""

    def __init__(self, infos, recomputed: Cost | None = None):
        super().__init__(infos)
        self.recomputed = recomputed

    def __repr__(self) -> str:
        return format_residuals(self, self.recomputed)

    def _repr_html_(self) -> str:
        header = "".join(f"<th>{h}</th>" for h in
                         ("shape", "dtype", "bytes", "produced by", "source"))
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) +
                       "</tr>" for r in self)
        total = sum(r.nbytes for r in self)
        return (f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>"
                f"<p>{_count(len(self))}, {total:,} bytes in total</p>")

    def by_source(self) -> dict[str, int]:
        """Bytes kept per user's line (an input's or constant's residual under its
        origin), in the order the lines first appear: what `plot` draws."""
        totals: dict[str, int] = {}
        for r in self:
            line = str(r.source_info) if r.source_info else r.origin
            totals[line] = totals.get(line, 0) + r.nbytes
        return totals

    def plot(self, ax=None):
        """A bar per source line of the bytes its residuals keep (matplotlib): where in
        the user's code the backward pass's memory comes from. Returns the axes.
        `docs/activity.md` shows one."""
        totals = self.by_source()
        ax = new_axes(ax, figsize=(7.0, 0.9 + 0.35 * max(1, len(totals))))
        lines = list(totals)
        ax.barh(range(len(lines)), list(totals.values()), color=RESIDUAL, height=0.6)
        ax.set_yticks(range(len(lines)), lines)
        ax.invert_yaxis()  # the program's first line on top
        ax.grid(False, axis="y")
        bytes_axis(ax.xaxis)
        ax.set_xlabel("bytes kept for the backward pass")
        ax.set_title(f"{_count(len(self))}, {human_bytes(sum(totals.values()))} in total")
        return ax


def saved_residuals(f: Callable, *args: Any) -> ResidualReport:
    """What the backward pass of `vjp(f, *args)` keeps: one `ResidualInfo` per residual
    (its type, bytes, the primitive or input it came from and the user's line), as a
    list whose repr is the table `print_saved_residuals` prints.

    Args:
        f: the function, as `vjp` would take it.
        *args: its arguments; one wrapped in `Inactive` is data, not differentiated.

    Returns:
        A `ResidualReport`: a list of `ResidualInfo`, with `recomputed`.

    Differences from JAX:
        `jax.ad_checkpoint.saved_residuals` returns pairs of an aval and a
        description; inert's entries carry the bytes and the user's line as well.

    Example:
        >>> f = lambda w, x: jnp.sum(jnp.tanh(x * w))
        >>> report = inert.saved_residuals(f, np.ones(3), inert.Inactive(np.ones(3)))
        >>> [r.origin for r in report], sum(r.nbytes for r in report)
        (['input 1', 'tanh'], 48)
    """
    _, vjp_fn = vjp(f, *args)
    return ResidualReport(vjp_fn.linear.residual_info, vjp_fn.linear.recomputed())


def print_saved_residuals(f: Callable, *args: Any) -> None:
    """Print what the backward pass of `vjp(f, *args)` keeps: a table of the residuals
    (shape, dtype, bytes, what produced each, the user's line) and their total, then
    what it recomputes instead of keeping (checkpointed bodies run again: equations and
    an estimate of their flops). Returns None, as JAX's does (a returned report would be
    shown twice at the REPL); `saved_residuals` returns the same table as a value.

    Args:
        f: the function, as `vjp` would take it.
        *args: its arguments; one wrapped in `Inactive` is data, not differentiated.

    Example:
        >>> def loss(w, x):
        ...     return jnp.sum(jnp.tanh(x * w) * x)
        >>> inert.print_saved_residuals(loss, np.ones(4), inert.Inactive(np.ones(4)))
        shape   dtype    bytes  produced by  source
        f64[4]  float64     32  input 1
        f64[4]  float64     32  tanh         ...
        2 residuals, 64 bytes in total
        recomputed in the backward pass: 2 equations, about 8 flops
    """
    print(repr(saved_residuals(f, *args)))


def format_residuals(infos: list[ResidualInfo], recomputed: Cost | None = None) -> str:
    """The table `print_saved_residuals` prints: one row per residual, then the total
    (and what is recomputed, if asked)."""
    rows = [("shape", "dtype", "bytes", "produced by", "source"), *map(_cells, infos)]
    total = sum(r.nbytes for r in infos)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths))) + "  " + row[4] for row in rows]
    lines.append(f"{_count(len(infos))}, {total:,} bytes in total")
    if recomputed is not None:
        lines.append(f"recomputed in the backward pass: {recomputed.eqns:,} equation"
                     f"{'s' if recomputed.eqns != 1 else ''}, about {recomputed.flops:,} flops")
    return "\n".join(line.rstrip() for line in lines)


def _cells(r: ResidualInfo) -> tuple[str, ...]:
    return (r.aval.str_short(), r.aval.dtype.name, f"{r.nbytes:,}", r.origin,
            str(r.source_info) if r.source_info else "")


def _count(n: int) -> str:
    return f"{n} residual{'s' if n != 1 else ''}"


# ---------------------------------------------------------------------------------
# Seeing activity


def print_activity(f: Callable, *args: Any, argnums: int | Sequence[int] | None = None) -> None:
    """Print the jaxpr of `f` with each active variable marked `*`: those that carry a
    derivative when differentiating in `argnums` (default: every float argument not
    wrapped in `Inactive`).

    Args:
        f: the function.
        *args: its arguments; one wrapped in `Inactive` is inactive.
        argnums: the positions of the active arguments, instead of `Inactive` markers.

    Example:
        >>> f = lambda w, x: jnp.sum(jnp.sin(x) * w)
        >>> inert.print_activity(f, np.ones(3), np.ones(3), argnums=0)
        { lambda ; a*:f64[3] b:f64[3]. let
            c:f64[3] = sin b
            d*:f64[3] = mul c a*
            e*:f64[] = reduce_sum[axes=(0,)] d*
          in (e*,) }
    """
    print(activity_jaxpr(f, *args, argnums=argnums))


class ActivityReport(tuple):
    """`(closed_jaxpr, active_vars)`, what `activity_jaxpr` returns: a pair to unpack,
    whose repr is the jaxpr with active variables marked `*` (what `print_activity`
    prints), rendered in a notebook as that text with the active variables in bold."""

    def __new__(cls, closed, active):
        return super().__new__(cls, (closed, active))

    def __repr__(self) -> str:
        closed, active = self
        return pp_jaxpr(closed.jaxpr, marked=active)

    def _repr_html_(self) -> str:
        marked = re.sub(r"(\w+\*)", r"<b>\1</b>", html.escape(repr(self)))
        return f"<pre>{marked}</pre><p>active values are marked <b>*</b></p>"


def activity_jaxpr(f: Callable, *args: Any, argnums: int | Sequence[int] | None = None
                   ) -> ActivityReport:
    """`(closed_jaxpr, active_vars)`: the jaxpr of `f` and the variables that carry a
    derivative, what `print_activity` shows (its repr is that text). The arguments are
    `print_activity`'s.

    Example:
        >>> f = lambda w, x: jnp.sum(jnp.sin(x) * w)
        >>> closed, active = inert.activity_jaxpr(f, np.ones(3), np.ones(3), argnums=0)
        >>> len(closed.jaxpr.eqns), len(active)  # sin(x) is inactive
        (3, 3)
    """
    nums = None if argnums is None else check_argnums(as_tuple(argnums), len(args))
    flat = flatten_args(args, nums)
    closed, _ = trace_to_closed_jaxpr(lambda *a: f(*flat.unflatten(a)),
                                       tuple(flat.leaves), ())
    return ActivityReport(closed, active_vars(closed.jaxpr, closed.consts, flat.active))


def draw_activity(f: Callable, *args: Any, argnums: int | Sequence[int] | None = None,
                  residuals: bool = True) -> ActivityDrawing:
    """Draw the jaxpr of `f` at `args` as a graph: inputs at the top, an edge from each
    value's producer to each of its readers, the values that carry a derivative when
    differentiating in `argnums` orange (default: every float argument not wrapped in
    `Inactive`, as `print_activity`), the others grey. With `residuals`, each value
    `vjp` keeps for the backward pass is a blue square beside what produced it, its area
    in proportion to its bytes (hover for its type, bytes and line); those made inside a
    call's body (a `checkpoint`'s) are on the bottom row. Pass `residuals=False` for a
    program reverse mode does not take (a `while_loop`). Returns an `ActivityDrawing`
    (a notebook shows it; `.save(path)` writes the SVG). JAX has no such picture.

    Example:
        >>> def loss(w, x):
        ...     return jnp.sum(jnp.tanh(x * w) * x)
        >>> inert.draw_activity(loss, np.ones(4), inert.Inactive(np.ones(4)))
        <activity drawing: 7 nodes, 6 active, 2 residuals of 64 bytes>
    """
    closed, active = activity_jaxpr(f, *args, argnums=argnums)
    if not residuals:
        return draw_jaxpr(closed.jaxpr, active)
    nums = None if argnums is None else check_argnums(as_tuple(argnums), len(args))
    vjp_args = args if nums is None else tuple(
        a if i in nums or isinstance(a, Inactive) else Inactive(a) for i, a in enumerate(args))
    drawn = {}  # vjp leaves Python numbers out: its inputs are found by identity
    for i, leaf in enumerate(flatten_args(args, nums).leaves):
        drawn.setdefault(id(leaf), i)
    inputs = [drawn.get(id(leaf)) for leaf in flatten_args(vjp_args, keep_static=True).leaves]
    return draw_jaxpr(closed.jaxpr, active, saved_residuals(f, *vjp_args), inputs)


# ---------------------------------------------------------------------------------
# Seeing memory over time


@attrs.frozen
class MemoryStep:
    """One equation of one pass: the bytes alive once it has run (its operands still
    held), and the most alive while it ran (what was alive before, plus the impl's own
    allocations as tracemalloc saw them: a `dot_general`'s transposed copies)."""

    phase: str  # "forward" or "backward"
    eqn: str
    source: str
    live_bytes: int
    peak_bytes: int


@attrs.frozen
class MemoryProfile:
    """Live bytes after every equation of the forward and the backward pass of reverse
    mode (the arguments, which the caller holds, not counted)."""

    steps: tuple[MemoryStep, ...]

    @property
    def peak(self) -> MemoryStep:
        return max(self.steps, key=lambda s: s.peak_bytes)

    def __str__(self) -> str:
        peak = self.peak
        lines = [f"{'':2}{'pass':8}  {'live bytes':>12}  {'peak in it':>12}  equation  source"]
        for s in self.steps:
            mark = "> " if s is peak else "  "
            lines.append(f"{mark}{s.phase:8}  {s.live_bytes:>12,}  {s.peak_bytes:>12,}  "
                         f"{s.eqn}  {s.source}".rstrip())
        lines.append(f"peak: {peak.peak_bytes:,} bytes in the {peak.phase} pass, at {peak.eqn}"
                     + (f" ({peak.source})" if peak.source else ""))
        return "\n".join(lines)

    def plot(self, ax=None):
        """Live bytes over the equations, the backward pass shaded (matplotlib)."""
        ax = new_axes(ax)
        ax.plot([s.live_bytes for s in self.steps], color=RESIDUAL, label="after each equation")
        ax.plot([s.peak_bytes for s in self.steps], color=ACTIVE, label="while it runs")
        ax.legend()
        n_forward = sum(s.phase == "forward" for s in self.steps)
        ax.axvspan(n_forward - 0.5, len(self.steps) - 0.5, color=INACTIVE, alpha=0.6)
        peak = self.steps.index(self.peak)
        ax.annotate(self.peak.eqn, (peak, self.peak.peak_bytes))
        ax.set_xlabel("equation (forward, then backward)")
        ax.set_ylabel("live bytes")
        bytes_axis(ax.yaxis)
        return ax


def memory_profile(f: Callable, *args: Any) -> MemoryProfile:
    """Run reverse mode of `f` at `args` (cotangent ones for every output) as `vjp`
    splits it: its forward program one equation at a time, then the backward pass
    itself, recording the bytes alive after each equation and the most while it ran
    (tracemalloc measures what the impls allocate: its peak is reset per equation).

    Args:
        f: the function, as `vjp` would take it.
        *args: its arguments; one wrapped in `Inactive` is data, not differentiated.

    Returns:
        A `MemoryProfile`: one `MemoryStep` per equation of each pass; its `str` is a
        table, its `plot()` draws the curve.

    Example:
        >>> p = inert.memory_profile(lambda x: jnp.sum(jnp.sin(x) * x), np.ones(1000))
        >>> [s.live_bytes for s in p.steps if s.phase == "forward"]  # sin, cos, the product
        [8000, 16000, 24000, 24000]
    """
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        return _memory_profile(f, args)
    finally:
        if not tracing:
            tracemalloc.stop()


def _memory_profile(f: Callable, args: tuple) -> MemoryProfile:
    flat = flatten_args(args)
    closed, _ = trace_to_closed_jaxpr(lambda *a: f(*flat.unflatten(a)), tuple(flat.leaves), ())
    program = with_consts_as_invars(closed.jaxpr)
    active = [False] * len(closed.consts) + [
        act and np.issubdtype(get_aval(x).dtype, np.inexact)
        for x, act in zip(flat.leaves, flat.active)]
    n_out = len(program.outvars)
    jvp, jvp_consts, out_nonzero = jvp_jaxpr(program, active, [True] * n_out)
    jvp = with_consts_as_invars(jvp)
    n_known = len(jvp_consts) + len(program.invars)
    n_tangents = len(jvp.invars) - n_known
    split = partial_eval_jaxpr(jvp, [False] * n_known + [True] * n_tangents,
                               [False] * n_out + [True] * (len(jvp.outvars) - n_out))
    steps: list[MemoryStep] = []
    known_args = [*jvp_consts, *closed.consts, *flat.leaves]
    outside = {id(_base(x)) for x in known_args}  # the caller's (and the program's)
    outs = _profiled(split.known, known_args, _Recorder("forward", steps, outside))
    residuals = outs[n_out:]
    del outs
    cts = [np.ones(v.aval.shape, v.aval.dtype) for v in split.unknown.outvars]
    backward_pass(split.unknown, (), residuals, [False] * len(residuals) + [True] * n_tangents,
                  cts, observe=_Recorder("backward", steps, outside, held=residuals))
    return MemoryProfile(tuple(steps))


def _profiled(jaxpr, args, record) -> list:
    """Evaluate `jaxpr` as the forward pass does, freeing each value after its last
    use, and `record` each equation."""
    last = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.inputs:
            if type(a) is Var:
                last[a] = i
    for a in jaxpr.outvars:
        last.pop(a, None)
    env = dict(zip(jaxpr.invars, args))
    for i, eqn in enumerate(jaxpr.eqns):
        out = eval_primitive(eqn.primitive, [a.val if type(a) is Literal else env[a]
                                             for a in eqn.inputs], eqn.params, eqn.source_info)
        env.update(zip(eqn.outputs, out if eqn.primitive.multiple_results else [out]))
        del out
        record(eqn, env)
        for a in eqn.inputs:
            if type(a) is Var and last.get(a) == i:
                env.pop(a, None)
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


class _Recorder:
    """Called after each equation (operands still held) with the environments alive:
    appends its step. The peak while it ran is the larger of what was alive after the
    previous equation and what is alive now that it freed, plus what tracemalloc saw it
    allocate above that (its peak is reset after each equation)."""

    def __init__(self, phase: str, steps: list, outside: set, held=()):
        self.phase, self.steps, self.outside, self.held = phase, steps, outside, held
        self.live = _live_bytes(held, outside)
        self._restart()

    def _restart(self):
        tracemalloc.reset_peak()
        self.start = tracemalloc.get_traced_memory()[0]

    def __call__(self, eqn, *envs):
        during = tracemalloc.get_traced_memory()[1] - self.start
        live = _live_bytes([*self.held, *(v for env in envs for v in env.values())],
                           self.outside)
        outs = ", ".join(v.aval.str_short() for v in eqn.outputs)
        self.steps.append(MemoryStep(self.phase, f"{eqn.primitive.name} -> {outs}",
                                     str(eqn.source_info or ""), live,
                                     max(live, self.live + during)))
        self.live = live
        self._restart()


def _live_bytes(values, outside: set) -> int:
    """Bytes of the distinct buffers among `values` (a view counts its base)."""
    bases = {id(b): b.nbytes for b in map(_base, values)
             if isinstance(b, np.ndarray) and id(b) not in outside}
    return sum(bases.values())


def _base(x):
    while isinstance(x, np.ndarray) and isinstance(x.base, np.ndarray):
        x = x.base
    return x
