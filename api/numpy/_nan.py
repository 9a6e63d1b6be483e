"""numpy's NaN-ignoring reductions on inert values: each replaces NaNs by the
reduction's identity (0 for sums, 1 for products, -inf/inf for extrema) and counts
only the non-NaN elements for means and variances. The replacement is a `where`, so
a NaN element's gradient is exactly 0. nanmedian and the nan quantiles live with the
order statistics (`_sorting`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...core.avals import is_float
from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ._array import Array
from ._arrays import operand
from ._reductions import argmax, argmin, cumprod, cumsum, max, min, prod, sum
from ._ufuncs import isnan, logical_not, where


def _replaced(a, identity):
    """(a with NaNs replaced by `identity`, the NaN mask); integers have no NaNs."""
    a = operand(a)
    if not is_float(get_aval(a).dtype):
        return a, None
    nan = isnan(a)
    return where(nan, identity, a), nan


def nansum(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           keepdims: bool = False) -> Array:
    return sum(_replaced(a, 0)[0], axis, dtype, keepdims=keepdims)


def nanprod(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
            keepdims: bool = False) -> Array:
    return prod(_replaced(a, 1)[0], axis, dtype, keepdims=keepdims)


def _extremum(reduce, identity, a, axis, keepdims):
    """max/min over the non-NaN elements; NaN where all of a lane is NaN (numpy warns
    there, inert does not)."""
    replaced, nan = _replaced(a, identity)
    out = reduce(replaced, axis, keepdims=keepdims)
    if nan is None:
        return out
    all_nan = ew.eq(sum(logical_not(nan), axis, keepdims=keepdims), 0)
    return where(all_nan, np.nan, out)


def nanmax(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    return _extremum(max, -np.inf, a, axis, keepdims)


def nanmin(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    return _extremum(min, np.inf, a, axis, keepdims)


def nanargmax(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    return argmax(_replaced(a, -np.inf)[0], axis, keepdims)


def nanargmin(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    return argmin(_replaced(a, np.inf)[0], axis, keepdims)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    return cumsum(_replaced(a, 0)[0], axis, dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    return cumprod(_replaced(a, 1)[0], axis, dtype)


def _count(a, axis, keepdims):
    replaced, nan = _replaced(a, 0)
    if nan is None:
        return replaced, sum(ew.eq(replaced, replaced), axis, keepdims=keepdims)
    return replaced, sum(logical_not(nan), axis, keepdims=keepdims)


def nanmean(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
            keepdims: bool = False) -> Array:
    """The mean of the non-NaN elements (NaN for a lane of NaNs only)."""
    replaced, count = _count(a, axis, keepdims)
    total = sum(replaced, axis, dtype if dtype is not None else
                (None if is_float(get_aval(replaced).dtype) else np.float64), keepdims=keepdims)
    return ew.div(total, where(ew.eq(count, 0), np.nan, count))


def nanvar(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           ddof: int = 0, keepdims: bool = False) -> Array:
    """The variance of the non-NaN elements, divided by their count - ddof."""
    replaced, nan = _replaced(a, 0)
    deviation = ew.sub(replaced, nanmean(a, axis, dtype, keepdims=True))
    if nan is not None:
        deviation = where(nan, 0.0, deviation)
    squares = sum(ew.mul(deviation, deviation), axis, keepdims=keepdims)
    dof = ew.sub(_count(a, axis, keepdims)[1], ddof)
    return ew.div(squares, where(ew.le(dof, 0), np.nan, dof))


def nanstd(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           ddof: int = 0, keepdims: bool = False) -> Array:
    return ew.sqrt(nanvar(a, axis, dtype, ddof, keepdims))
