"""numpy's reductions and scans on inert values: `axis` (None, an int, a tuple,
negative) and `keepdims` become the reduction primitives' `axes` parameter and a
reshape; result dtypes are numpy's (a sum of int32 or bool is int64, a mean of
integers is float64).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.avals import is_float
from ...core.trace import get_aval
from ...primitives import elementwise as ew
from ...primitives import reductions as red
from ...primitives.shape import structural as st
from ._arrays import (
    abs_squared,
    broadcast_to,
    cast,
    concatenate,
    normalize_axes,
    normalize_axis,
    operand,
    promote,
)
from ._ufuncs import not_equal


def _accumulator_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype numpy sums and multiplies in: small integers and bool widen to int64."""
    return np.sum(np.zeros(1, dtype)).dtype


def _reduce(reducer, name: str, a, axis, keepdims: bool, dtype=None):
    """Apply `reducer(x, axes)` with numpy's axis and keepdims conventions."""
    a = operand(a)
    if dtype is not None:
        a = cast(a, dtype)
    shape = get_aval(a).shape
    axes = normalize_axes(axis, len(shape), name)
    out = reducer(a, axes)
    if keepdims:
        out = st.reshape(out, [1 if i in axes else d for i, d in enumerate(shape)])
    return out


def _count(a, axis, name: str) -> int:
    """How many elements each reduction over `axis` combines."""
    shape = get_aval(a).shape
    return math.prod(shape[i] for i in normalize_axes(axis, len(shape), name))


def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001 — numpy's name
    a = operand(a)
    dtype = _accumulator_dtype(get_aval(a).dtype) if dtype is None else dtype
    return _reduce(st.reduce_sum, "sum", a, axis, keepdims, dtype)


def prod(a, axis=None, dtype=None, keepdims=False):
    a = operand(a)
    dtype = _accumulator_dtype(get_aval(a).dtype) if dtype is None else dtype
    return _reduce(red.reduce_prod, "prod", a, axis, keepdims, dtype)


def max(a, axis=None, keepdims=False):  # noqa: A001 — numpy's name
    return _reduce(red.reduce_max, "max", a, axis, keepdims)


def min(a, axis=None, keepdims=False):  # noqa: A001 — numpy's name
    return _reduce(red.reduce_min, "min", a, axis, keepdims)


amax, amin = max, min


def any(a, axis=None, keepdims=False):  # noqa: A001 — numpy's name
    return _reduce(red.reduce_or, "any", _as_bool(a), axis, keepdims)


def all(a, axis=None, keepdims=False):  # noqa: A001 — numpy's name
    return _reduce(red.reduce_and, "all", _as_bool(a), axis, keepdims)


def _as_bool(a):
    a = operand(a)
    return a if get_aval(a).dtype == np.bool_ else not_equal(a, 0)


def count_nonzero(a, axis=None, keepdims=False):
    return sum(_as_bool(a), axis, keepdims=keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    """The sum divided by the count; integers average in float64, as in numpy."""
    a = operand(a)
    if dtype is None and not is_float(get_aval(a).dtype):
        dtype = np.float64
    total = sum(a, axis, dtype, keepdims)
    return ew.div(total, float(_count(a, axis, "mean")))


def average(a, axis=None, weights=None, keepdims=False):
    """numpy.average; 1-d weights along one `axis` of an n-d array are allowed."""
    if weights is None:
        return mean(a, axis, keepdims=keepdims)
    a, weights = promote(a, weights)
    shape, w_shape = get_aval(a).shape, get_aval(weights).shape
    if w_shape != shape and len(w_shape) == 1 and axis is not None:
        axis = normalize_axis(axis, len(shape), "average")
        weights = st.reshape(weights, [d if i == axis else 1 for i, d in enumerate(shape)])
    weights = broadcast_to(weights, shape)
    return ew.div(sum(ew.mul(a, weights), axis, keepdims=keepdims),
                  sum(weights, axis, keepdims=keepdims))


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """The mean squared deviation, divided by `count - ddof` as numpy does."""
    a = operand(a)
    deviation = ew.sub(a, mean(a, axis, dtype, keepdims=True))
    squares = sum(abs_squared(deviation), axis, keepdims=keepdims)
    return ew.div(squares, float(_count(a, axis, "var") - ddof))


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return ew.sqrt(var(a, axis, dtype, ddof, keepdims))


def _arg_reduce(reducer, name: str, a, axis, keepdims: bool):
    """argmax/argmin: `axis=None` means over the flattened array."""
    a = operand(a)
    shape = get_aval(a).shape
    if axis is None:
        out = reducer(st.reshape(a, (math.prod(shape),)), 0, np.dtype(np.int64))
        return st.reshape(out, (1,) * len(shape)) if keepdims else out
    axis = normalize_axis(axis, len(shape), name)
    out = reducer(a, axis, np.dtype(np.int64))
    if keepdims:
        out = st.reshape(out, [1 if i == axis else d for i, d in enumerate(shape)])
    return out


def argmax(a, axis=None, keepdims=False):
    return _arg_reduce(red.argmax, "argmax", a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    return _arg_reduce(red.argmin, "argmin", a, axis, keepdims)


def _scan(scanner, name: str, a, axis, dtype):
    """cumsum/cumprod: `axis=None` means over the flattened array."""
    a = operand(a)
    a = cast(a, _accumulator_dtype(get_aval(a).dtype) if dtype is None else dtype)
    if axis is None:
        return scanner(st.reshape(a, (get_aval(a).size,)), 0)
    return scanner(a, normalize_axis(axis, get_aval(a).ndim, name))


def cumsum(a, axis=None, dtype=None):
    return _scan(red.cumsum, "cumsum", a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    return _scan(red.cumprod, "cumprod", a, axis, dtype)


def ptp(a, axis=None, keepdims=False):
    """The range, max - min."""
    return ew.sub(max(a, axis, keepdims), min(a, axis, keepdims))


def _cumulative(scan, identity, name: str, x, axis, dtype, include_initial: bool):
    """The array API's cumulative_sum/prod: `axis` may be omitted only for 1-d x; with
    `include_initial`, the identity comes first."""
    x = operand(x)
    if axis is None:
        if get_aval(x).ndim != 1:
            raise ValueError(f"{name}: axis is required for arrays of more than one dimension")
        axis = 0
    out = scan(x, axis, dtype)
    if not include_initial:
        return out
    axis = normalize_axis(axis, get_aval(out).ndim, name)
    shape = list(get_aval(out).shape)
    shape[axis] = 1
    first = broadcast_to(cast(identity, get_aval(out).dtype), tuple(shape))
    return concatenate([first, out], axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumsum, 0, "cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(cumprod, 1, "cumulative_prod", x, axis, dtype, include_initial)
