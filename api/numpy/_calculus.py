"""numpy's finite differences, integration and interpolation on inert values: diff,
ediff1d, gradient, trapezoid, cross, interp, and histogram.

All are compositions of slices, gathers and arithmetic, so they are differentiable
in every float argument (interp in x, xp and fp alike).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...core.errors import ConcretizationError
from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike
from ...primitives import elementwise as ew
from ._array import Array
from ._arrays import (
    astype,
    broadcast_arrays,
    broadcast_to,
    concatenate,
    normalize_axis,
    operand,
    stack,
)
from ._dot import matmul
from ._reductions import amax, amin, mean, sum
from ._shape import _slice_axis, diagonal, moveaxis, ravel, reshape, take
from ._sorting import _known, bincount, searchsorted
from ._ufuncs import clip, where


def _floating(a):
    a = operand(a)
    return a if np.issubdtype(get_aval(a).dtype, np.inexact) else astype(a, np.float64)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:
    """numpy.diff: the n-th forward difference along `axis`."""
    a = operand(a)
    axis = normalize_axis(axis, get_aval(a).ndim, "diff")
    parts = [operand(p) for p in (prepend, a, append) if p is not None]
    if len(parts) > 1:
        shape = list(get_aval(a).shape)
        side = (*shape[:axis], 1, *shape[axis + 1:])
        parts = [p if get_aval(p).ndim == len(shape) else broadcast_to(p, side) for p in parts]
        a = concatenate(parts, axis)
    for _ in range(n):
        size = get_aval(a).shape[axis]
        a = ew.sub(_slice_axis(a, 1, size, axis), _slice_axis(a, 0, max(size - 1, 0), axis))
    return a


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Array:
    """numpy.ediff1d: differences of the raveled array, with optional ends."""
    parts = [diff(ravel(ary))]
    if to_begin is not None:
        parts.insert(0, ravel(to_begin))
    if to_end is not None:
        parts.append(ravel(to_end))
    return concatenate(parts, 0) if len(parts) > 1 else parts[0]


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int = 1) -> Array | tuple[Array, ...]:
    """numpy.gradient with uniform spacings (scalars) and first-order edges: central
    differences inside, one-sided ones at the ends. A list for several axes."""
    f = _floating(f)
    ndim = get_aval(f).ndim
    axes = tuple(range(ndim)) if axis is None else \
        tuple(normalize_axis(a, ndim, "gradient") for a in np.atleast_1d(axis))
    if edge_order != 1:
        raise ValueError("gradient: only edge_order=1 is supported")
    spacings = varargs if len(varargs) == len(axes) else varargs * len(axes) or (1.0,) * len(axes)
    if any(np.ndim(h) for h in spacings):
        raise ValueError("gradient: only scalar spacings are supported")
    out = []
    for ax, h in zip(axes, spacings):
        n = get_aval(f).shape[ax]
        if n < 2:
            raise ValueError("gradient: each differentiated axis needs at least 2 points")
        first = ew.sub(_slice_axis(f, 1, 2, ax), _slice_axis(f, 0, 1, ax))
        last = ew.sub(_slice_axis(f, n - 1, n, ax), _slice_axis(f, n - 2, n - 1, ax))
        inner = ew.mul(ew.sub(_slice_axis(f, 2, n, ax), _slice_axis(f, 0, n - 2, ax)), 0.5)
        out.append(ew.div(concatenate([first, inner, last], ax), float(h)))
    return out[0] if len(out) == 1 else tuple(out)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0,
              axis: int = -1) -> Array:
    """numpy.trapezoid: the trapezoidal rule along `axis`, with sample points `x` or a
    uniform spacing `dx`."""
    y = _floating(y)
    axis = normalize_axis(axis, get_aval(y).ndim, "trapezoid")
    n = get_aval(y).shape[axis]
    mid = ew.mul(ew.add(_slice_axis(y, 1, n, axis), _slice_axis(y, 0, max(n - 1, 0), axis)), 0.5)
    if x is None:
        return ew.mul(sum(mid, axis=axis), dx)
    widths = diff(x, axis=-1 if get_aval(operand(x)).ndim == 1 else axis)
    if get_aval(widths).ndim == 1:  # along `axis` of y
        widths = moveaxis(reshape(widths, (*[1] * (get_aval(y).ndim - 1), n - 1)), -1, axis)
    return sum(ew.mul(mid, widths), axis=axis)


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Array:
    """numpy.cross of 3-vectors (and of 2-vectors: the z component) along the axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(operand(a), axisa, -1)
    b = moveaxis(operand(b), axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: vectors must have 2 or 3 components, got {na} and {nb}")
    ca = [take(a, i, -1) for i in range(na)] + ([0.0] if na == 2 else [])
    cb = [take(b, i, -1) for i in range(nb)] + ([0.0] if nb == 2 else [])
    z = ew.sub(ew.mul(ca[0], cb[1]), ew.mul(ca[1], cb[0]))
    if na == nb == 2:
        return z
    x = ew.sub(ew.mul(ca[1], cb[2]), ew.mul(ca[2], cb[1]))
    y = ew.sub(ew.mul(ca[2], cb[0]), ew.mul(ca[0], cb[2]))
    return moveaxis(stack(list(broadcast_arrays(x, y, z)), -1), -1, axisc)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
           right: ArrayLike | None = None, period: ArrayLike | None = None) -> Array:
    """numpy.interp: piecewise-linear through (xp, fp), xp increasing; fp[0] / fp[-1]
    (or `left` / `right`) outside. Differentiable in x, xp and fp."""
    if period is not None:
        raise ValueError("interp: period is not supported")
    x, xp, fp = _floating(x), _floating(xp), _floating(fp)
    n = get_aval(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x0, x1, f0, f1 = take(xp, i - 1), take(xp, i), take(fp, i - 1), take(fp, i)
    width = ew.sub(x1, x0)
    flat = ew.eq(width, 0)
    slope = ew.div(ew.sub(f1, f0), where(flat, 1.0, width))
    inside = where(flat, f1, ew.add(f0, ew.mul(slope, ew.sub(x, x0))))
    below = take(fp, 0) if left is None else left
    above = take(fp, n - 1) if right is None else right
    return where(ew.lt(x, take(xp, 0)), below, where(ew.gt(x, take(xp, n - 1)), above, inside))


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: tuple[float, float] | None = None,
              weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, Array]:  # noqa: A002
    """numpy.histogram: counts (or weight sums) and edges. Known values (eagerly, under
    grad) are numpy's own; traced ones (jit, vmap) need the number of edges to be
    known, as in JAX: `bins` an int or an array of edges. The counts are step functions
    of `a` (no derivative); weight sums are differentiable in the weights."""
    if not isinstance(weights, Tracer):  # (traced weights: the weight sums' derivative)
        try:
            return np.histogram(_known(a, "histogram"), _known(bins, "histogram"), range,
                                weights=None if weights is None else np.asarray(weights),
                                density=density)
        except ConcretizationError:
            pass
    a = ravel(_floating(a))
    edges = _edges(a, bins, range)
    n = get_aval(edges).shape[0]
    # bin i holds edges[i-1] <= a < edges[i]; the last bin is closed, so a == edges[-1]
    # goes in it; below and above the range: bins 0 and n, dropped
    index = where(ew.eq(a, edges[n - 1]), n - 1, searchsorted(edges, a, side="right"))
    counts = bincount(index, None if weights is None else ravel(weights), length=n + 1)
    counts = counts[1:n]
    if density:
        counts = ew.div(ew.div(astype(counts, np.float64), diff(edges)), sum(counts))
    return counts, edges


def _edges(a, bins, range):  # noqa: A002
    """The bin edges: `bins` itself, or `bins` + 1 of them evenly over `range` (else
    over a's min and max, widened by 0.5 each way when equal, as numpy does)."""
    if not isinstance(bins, (int, np.integer)):
        return _floating(bins)
    lo, hi = (amin(a), amax(a)) if range is None else (_floating(v) for v in range)
    equal = ew.eq(lo, hi)
    lo, hi = where(equal, ew.sub(lo, 0.5), lo), where(equal, ew.add(hi, 0.5), hi)
    k = np.arange(int(bins) + 1, dtype=np.float64)  # as numpy.linspace: k * step + lo, hi last
    evenly = ew.add(ew.mul(k, ew.div(ew.sub(hi, lo), float(bins))), lo)
    return where(k == bins, hi, evenly)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None) -> Array:
    """numpy.cov without weights: the covariance of the variables (rows by default)."""
    m = _floating(m)
    x = m if get_aval(m).ndim > 1 else reshape(m, (1, -1))
    if not rowvar:
        x = moveaxis(x, 0, 1)
    if y is not None:
        y = _floating(y)
        y = y if get_aval(y).ndim > 1 else reshape(y, (1, -1))
        x = concatenate([x, y if rowvar else moveaxis(y, 0, 1)], 0)
    n = get_aval(x).shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = ew.sub(x, mean(x, axis=1, keepdims=True))
    out = ew.div(matmul(centered, moveaxis(centered, 0, 1)), float(n - ddof))
    return reshape(out, ()) if get_aval(out).shape == (1, 1) else out


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Array:
    """The correlation coefficients: the covariance scaled by the standard deviations."""
    c = cov(x, y, rowvar)
    if get_aval(c).ndim == 0:
        return ew.div(c, c)
    d = ew.sqrt(diagonal(c))
    return clip(ew.div(ew.div(c, reshape(d, (-1, 1))), reshape(d, (1, -1))), -1.0, 1.0)
