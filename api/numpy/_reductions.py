"""numpy's reductions and scans on inert values: `axis` (None, an int, a tuple,
negative) and `keepdims` become the reduction primitives' `axes` parameter and a
reshape; result dtypes are numpy's (a sum of int32 or bool is int64, a mean of
integers is float64).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...core.avals import is_float
from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ...primitives import reductions as red
from ...primitives.shape import structural as st
from ._array import Array
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
from ._ufuncs import where as _where


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


def _no_out(out, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"{name}: out= is not supported (inert's arrays are "
                                  "immutable, as JAX's are); use the returned value")


def _masked(a, where, identity, name: str):
    """`a` with the elements `where` is False replaced by the reduction's `identity`
    (None: the reduction has none, so `initial` must be given, as numpy and JAX say)."""
    if where is None:
        return a
    if identity is None:
        raise ValueError(f"{name}: the reduction has no identity, so to use a where mask "
                         "one has to specify 'initial'")
    return _where(where, a, identity)


def _reduction(reducer, name: str, identity, a, axis, dtype, keepdims, initial, where, fold):
    """A reduction with numpy's `initial` (folded into the result by `fold`) and `where`
    (masked elements replaced by the identity, or by `initial` where there is none)."""
    a = operand(a)
    if dtype is not None:
        a = cast(a, dtype)
    a = _masked(a, where, initial if identity is None else identity, name)
    out = _reduce(reducer, name, a, axis, keepdims)
    return out if initial is None else fold(out, initial)


def _integer_reduction(reducer, name, identity, a, axis, dtype, keepdims, initial, where, fold,
                       promote_integers: bool):
    """sum or prod: the primitives accumulate small integers and bools in int64, as numpy
    does; `promote_integers=False` (JAX's) casts an integer result back, which wraps as
    accumulating in the narrow type would."""
    a = operand(a)
    out = _reduction(reducer, name, identity, a, axis, dtype, keepdims, initial, where, fold)
    narrow = get_aval(a).dtype
    if dtype is None and not promote_integers and narrow.kind in "iu":
        return cast(out, narrow)
    return out


def sum(a: ArrayLike, axis: int | Sequence[int] | None = None,  # noqa: A001
        dtype: DTypeLike | None = None, out: None = None, keepdims: bool = False,
        initial: ArrayLike | None = None, where: ArrayLike | None = None,
        promote_integers: bool = True) -> Array:
    """numpy.sum; small integers and bools sum in int64 (JAX's `promote_integers`;
    False keeps an integer dtype).

    Example:
        >>> x = jnp.array([[1, 2], [3, 4]])
        >>> jnp.sum(x), jnp.sum(x, axis=0)
        (Array(10), Array([4, 6]))
        >>> jnp.sum(np.array([1, 2], np.int8)).dtype, jnp.sum(np.array([1, 2], np.int8),
        ...                                                   promote_integers=False).dtype
        (dtype('int64'), dtype('int8'))
    """
    _no_out(out, "sum")
    return _integer_reduction(st.reduce_sum, "sum", 0, a, axis, dtype, keepdims, initial,
                              where, ew.add, promote_integers)


def prod(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
         out: None = None, keepdims: bool = False, initial: ArrayLike | None = None,
         where: ArrayLike | None = None,
         promote_integers: bool = True) -> Array:
    _no_out(out, "prod")
    return _integer_reduction(red.reduce_prod, "prod", 1, a, axis, dtype, keepdims, initial,
                              where, ew.mul, promote_integers)


def max(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
        keepdims: bool = False, initial: ArrayLike | None = None,
        where: ArrayLike | None = None) -> Array:  # noqa: A001
    _no_out(out, "max")
    return _reduction(red.reduce_max, "max", None, a, axis, None, keepdims, initial, where,
                      ew.max)


def min(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
        keepdims: bool = False, initial: ArrayLike | None = None,
        where: ArrayLike | None = None) -> Array:  # noqa: A001
    _no_out(out, "min")
    return _reduction(red.reduce_min, "min", None, a, axis, None, keepdims, initial, where,
                      ew.min)


amax, amin = max, min


def any(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
        keepdims: bool = False, *, where: ArrayLike | None = None) -> Array:  # noqa: A001
    _no_out(out, "any")
    return _reduction(red.reduce_or, "any", False, _as_bool(a), axis, None, keepdims, None,
                      where, None)


def all(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
        keepdims: bool = False, *, where: ArrayLike | None = None) -> Array:  # noqa: A001
    _no_out(out, "all")
    return _reduction(red.reduce_and, "all", True, _as_bool(a), axis, None, keepdims, None,
                      where, None)


def _as_bool(a):
    a = operand(a)
    return a if get_aval(a).dtype == np.bool_ else not_equal(a, 0)


def count_nonzero(a: ArrayLike, axis: int | Sequence[int] | None = None,
                  keepdims: bool = False) -> Array:
    return sum(_as_bool(a), axis, keepdims=keepdims)


def _counted(a, axis, keepdims: bool, where, name: str):
    """How many elements each reduction combines: a Python number, or with `where` the
    count of its True elements (broadcast to `a`) as an array."""
    if where is None:
        return float(_count(a, axis, name))
    return sum(broadcast_to(where, get_aval(a).shape), axis, np.float64, keepdims=keepdims)


def mean(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
         out: None = None, keepdims: bool = False, *, where: ArrayLike | None = None) -> Array:
    """numpy.mean: the sum divided by the count; integers average in float64, as in numpy.

    Example:
        >>> jnp.mean(np.array([[1.0, 2.0], [3.0, 5.0]]), axis=1)
        Array([1.5, 4. ])
    """
    _no_out(out, "mean")
    a = operand(a)
    if dtype is None and not is_float(get_aval(a).dtype):
        dtype = np.float64
    total = sum(a, axis, dtype, keepdims=keepdims, where=where)
    return ew.div(total, _counted(a, axis, keepdims, where, "mean"))


def average(a: ArrayLike, axis: int | Sequence[int] | None = None,
            weights: ArrayLike | None = None, keepdims: bool = False) -> Array:
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


def var(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
        out: None = None, ddof: int = 0, keepdims: bool = False, *,
        where: ArrayLike | None = None) -> Array:
    """The mean squared deviation, divided by `count - ddof` as numpy does."""
    _no_out(out, "var")
    a = operand(a)
    deviation = ew.sub(a, mean(a, axis, dtype, keepdims=True, where=where))
    squares = sum(abs_squared(deviation), axis, keepdims=keepdims, where=where)
    return ew.div(squares, ew.sub(_counted(a, axis, keepdims, where, "var"), float(ddof)))


def std(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
        out: None = None, ddof: int = 0, keepdims: bool = False, *,
        where: ArrayLike | None = None) -> Array:
    return ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where))


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


def argmax(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg_reduce(red.argmax, "argmax", a, axis, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    return _arg_reduce(red.argmin, "argmin", a, axis, keepdims)


def _scan(scanner, name: str, a, axis, dtype):
    """cumsum/cumprod: `axis=None` means over the flattened array."""
    a = operand(a)
    a = cast(a, _accumulator_dtype(get_aval(a).dtype) if dtype is None else dtype)
    if axis is None:
        return scanner(st.reshape(a, (get_aval(a).size,)), 0)
    return scanner(a, normalize_axis(axis, get_aval(a).ndim, name))


def cumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    return _scan(red.cumsum, "cumsum", a, axis, dtype)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    return _scan(red.cumprod, "cumprod", a, axis, dtype)


def ptp(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    """The range, max - min."""
    return ew.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


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


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                   include_initial: bool = False) -> Array:
    return _cumulative(cumsum, 0, "cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                    include_initial: bool = False) -> Array:
    return _cumulative(cumprod, 1, "cumulative_prod", x, axis, dtype, include_initial)
