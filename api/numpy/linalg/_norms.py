"""numpy.linalg's norms, condition numbers and ranks on inert values.

The spectral norms (ord 2, -2, 'nuc'), `cond` and `matrix_rank` use the singular
values alone, whose derivative divides by no gaps (`svdvals`); the others are
reductions of absolute values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ....core.avals import is_float
from ....core.trace import get_aval
from ....core.typing import ArrayLike
from ....primitives import elementwise as ew
from ....primitives.elementwise.complex_parts import real_dtype
from .. import _reductions as nr
from .._array import Array
from .._arrays import abs_squared, cast, normalize_axes, operand, shape_error
from .._shape import expand_dims, moveaxis, squeeze
from ._linalg import float_matrices, inv, svdvals


def norm(x: ArrayLike, ord: int | float | str | None = None,
         axis: int | Sequence[int] | None = None,
         keepdims: bool = False) -> Array:  # noqa: A002 — numpy's signature
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two (the
    Frobenius norm by default). Integer inputs are converted to float64 first."""
    x = operand(x)
    if not is_float(get_aval(x).dtype):
        x = cast(x, np.float64)
    ndim = get_aval(x).ndim
    if axis is None and ord is None:
        return ew.sqrt(nr.sum(abs_squared(x), None, keepdims=keepdims))
    axes = normalize_axes(axis, ndim, "norm")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise shape_error(f"norm: a norm is over one axis or two, not {axes}")


def _vector_norm(x, ord, axes, keepdims: bool):  # noqa: A002
    if ord is None or ord == 2:
        return ew.sqrt(nr.sum(abs_squared(x), axes, keepdims=keepdims))
    if ord == np.inf:
        return nr.max(ew.abs(x), axes, keepdims=keepdims)
    if ord == -np.inf:
        return nr.min(ew.abs(x), axes, keepdims=keepdims)
    if ord == 0:
        return cast(nr.count_nonzero(x, axes, keepdims=keepdims), real_dtype(get_aval(x).dtype))
    if ord == 1:
        return nr.sum(ew.abs(x), axes, keepdims=keepdims)
    powers = ew.pow(ew.abs(x), float(ord))
    return ew.pow(nr.sum(powers, axes, keepdims=keepdims), 1.0 / ord)


_MATRIX_NORMS = {
    # ord: (the absolute sums, the reduction of the sums, which of the two axes is summed)
    1: (nr.sum, nr.max, 0),
    -1: (nr.sum, nr.min, 0),
    np.inf: (nr.sum, nr.max, 1),
    -np.inf: (nr.sum, nr.min, 1),
}


_SPECTRAL_NORMS = {2: nr.max, -2: nr.min, "nuc": nr.sum}


def _matrix_norm(x, ord, axes, keepdims: bool):  # noqa: A002
    """Frobenius, the max/min absolute column (ord ±1) or row (ord ±inf) sum, or a
    function of the singular values (ord ±2, 'nuc')."""
    if ord is None or ord == "fro":
        return ew.sqrt(nr.sum(abs_squared(x), axes, keepdims=keepdims))
    if ord in _SPECTRAL_NORMS:
        s = svdvals(moveaxis(x, axes, (-2, -1)))
        out = _SPECTRAL_NORMS[ord](s, -1)
        return expand_dims(out, tuple(axes)) if keepdims else out
    if ord not in _MATRIX_NORMS:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    inner, outer, summed = _MATRIX_NORMS[ord]
    sums = inner(ew.abs(x), axes[summed], keepdims=True)
    out = outer(sums, axes[1 - summed], keepdims=True)
    return out if keepdims else squeeze(out, axes)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False,
                ord: int | float | str | None = "fro") -> Array:  # noqa: A002 — the array API's
    """The norm of each matrix of a stack (the last two axes)."""
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x: ArrayLike, /, *, axis: int | Sequence[int] | None = None,
                keepdims: bool = False, ord: int | float | str | None = 2) -> Array:  # noqa: A002
    """A vector norm over `axis` (all of `x`, flattened, if None)."""
    x = operand(x)  # complex too: every order is of absolute values
    if not is_float(get_aval(x).dtype):
        x = cast(x, np.float64)
    ndim = get_aval(x).ndim
    axes = tuple(range(ndim)) if axis is None else normalize_axes(axis, ndim, "vector_norm")
    return _vector_norm(x, ord, axes, keepdims)


def matrix_rank(M: ArrayLike, rtol: float | None = None, *, tol: float | None = None) -> Array:  # noqa: N803 — JAX's name
    """How many singular values exceed `tol` (by default `rtol` times the largest,
    `rtol` by default max(m, n)·eps); a vector has rank 1 unless it is all zeros."""
    M = float_matrices("matrix_rank", M, min_ndim=0, complex_ok=True)  # noqa: N806
    aval = get_aval(M)
    if aval.ndim < 2:
        return cast(nr.any(ew.ne(M, 0.0)), np.int32)
    s = svdvals(M)
    if tol is None:
        rtol = max(aval.shape[-2:]) * np.finfo(aval.dtype).eps if rtol is None else rtol
        tol = ew.mul(nr.max(s, -1, keepdims=True), rtol)
    else:
        tol = expand_dims(tol, -1) if get_aval(operand(tol)).ndim else tol
    return nr.sum(cast(ew.gt(s, tol), np.int32), -1)


def cond(x: ArrayLike, p: int | float | str | None = None) -> Array:
    """The condition number: the ratio of the extreme singular values (p None, 2,
    -2), else `norm(x, p) * norm(inv(x), p)`."""
    x = float_matrices("cond", x, square=p not in (None, 2, -2), complex_ok=True)
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = nr.max(s, -1), nr.min(s, -1)
        return ew.div(big, small) if p != -2 else ew.div(small, big)
    return ew.mul(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
