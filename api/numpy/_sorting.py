"""numpy's sorting and order statistics on inert values, and the functions whose
result size depends on the data (nonzero, argwhere, unique).

Everything is built on the `sort` primitive, whose derivative gathers the tangent by
the sorting permutation: quantiles and medians are differentiable as in JAX (the
gradient goes to the order statistics they interpolate). A data-dependent size is
known when the input's value is (eagerly, or under grad); while tracing for jit or
make_jaxpr it must be given as `size=` (and `fill_value=`), else a
ConcretizationError says so.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence

import numpy as np

from ...core.avals import is_float
from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike
from ...primitives import elementwise as ew
from ...primitives import sorting
from ...primitives.indexing import gather_scatter as ix
from . import _ufuncs
from ._array import Array
from ._arrays import arange, astype, broadcast_to, concatenate, normalize_axis, operand, stack
from ._reductions import any as any_
from ._reductions import cumsum, sum
from ._shape import flip, moveaxis, ravel, reshape, take, take_along_axis
from ._ufuncs import clip, isnan, logical_not, not_equal, where


def _prepared(a, axis, name: str):
    """(a, axis): raveled for axis None, else the axis made non-negative."""
    a = operand(a)
    if axis is None:
        return ravel(a), 0
    return a, normalize_axis(axis, get_aval(a).ndim, name)


def sort(a: ArrayLike, axis: int = -1, kind: str | None = None, order: str | None = None,
         stable: bool = True, descending: bool = False) -> Array:
    """numpy.sort (stable); `descending` as in the array API."""
    a, axis = _prepared(a, axis, "sort")
    if descending:
        return flip(sorting.sort(flip(a, axis), axis)[0], axis)
    return sorting.sort(a, axis)[0]


def argsort(a: ArrayLike, axis: int = -1, kind: str | None = None, order: str | None = None,
            stable: bool = True, descending: bool = False) -> Array:
    """numpy.argsort (stable): descending keeps ties in their original order."""
    a, axis = _prepared(a, axis, "argsort")
    if not descending:
        return sorting.sort(a, axis)[1]
    n = get_aval(a).shape[axis]
    return ew.sub(n - 1, flip(sorting.sort(flip(a, axis), axis)[1], axis))


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """numpy.partition: a full sort, which satisfies its contract (the k-th element in
    place, smaller ones before it, larger after)."""
    return sort(a, axis)


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Array:
    """numpy.argpartition, as the permutation of a full sort (see `partition`)."""
    return argsort(a, axis)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None,
                 method: str | None = None) -> Array:
    """Indices into the sorted 1-d `a` where `v` would be inserted: the count of
    elements below (left) or not above (right) each v, by comparing with all of a."""
    a, v = operand(a), operand(v)
    if get_aval(a).ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-d, got shape {get_aval(a).shape}")
    if sorter is not None:
        a = take(a, sorter)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    compare = ew.lt if side == "left" else ew.le
    return sum(compare(a, reshape(v, get_aval(v).shape + (1,))), axis=-1)


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """The bin of each x: for increasing bins, searchsorted on the other side."""
    return searchsorted(bins, x, side="left" if right else "right")


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False,
         invert: bool = False) -> Array:
    """Whether each element equals any of the (raveled) test elements."""
    element = operand(element)
    tests = ravel(test_elements)
    found = any_(ew.eq(reshape(element, get_aval(element).shape + (1,)), tests), axis=-1)
    return logical_not(found) if invert else found


# ---------------------------------------------------------------------------------
# Order statistics

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _positions(q, count, method: str):
    """(lower index, upper index, weight of the upper) of quantile q in `count`
    sorted values, by numpy's `method`."""
    pos = ew.mul(q, ew.sub(count, 1.0))
    lower, upper = ew.floor(pos), ew.ceil(pos)
    weight = ew.sub(pos, lower)
    if method == "lower":
        upper, weight = lower, ew.mul(weight, 0.0)
    elif method == "higher":
        lower, weight = upper, ew.mul(weight, 0.0)
    elif method == "midpoint":
        weight = where(ew.eq(lower, upper), 0.0, 0.5)
    elif method == "nearest":
        nearest = ew.round(pos)  # halves to even, as numpy's "nearest"
        lower = upper = nearest
        weight = ew.mul(weight, 0.0)
    return lower, upper, ew.stop_gradient(weight) if method != "linear" else weight


def _quantile(a, q, axis, method, keepdims, ignore_nan, name):
    """The q-quantiles (q's axes first) of `a` over one axis or all of it; with
    `ignore_nan`, of the non-NaN values of each lane (NaN sorts last)."""
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    a = operand(a)
    if not is_float(get_aval(a).dtype):
        a = astype(a, np.float64)
    ndim = get_aval(a).ndim
    a, axis_ = _prepared(a, axis, name)
    values = sorting.sort(moveaxis(a, axis_, -1), get_aval(a).ndim - 1)[0]
    *rest, n = get_aval(values).shape
    q = astype(operand(q), get_aval(values).dtype)
    q_shape = get_aval(q).shape
    nan = isnan(values)
    count = astype(sum(logical_not(nan), axis=-1, keepdims=True), get_aval(values).dtype) \
        if ignore_nan else float(n)
    lower, upper, weight = _positions(ravel(q), count, method)
    low, high = (take_along_axis(values, broadcast_to(astype(clip(i, 0, max(n - 1, 0)),
                                                             np.int64),
                                                      (*rest, math.prod(q_shape))), -1)
                 for i in (lower, upper))
    result = ew.add(low, ew.mul(weight, ew.sub(high, low)))
    undefined = ew.eq(count, 0.0) if ignore_nan else any_(nan, axis=-1, keepdims=True)
    result = reshape(where(undefined, np.nan, result), (*rest, *q_shape))
    result = moveaxis(result, tuple(range(len(rest), len(rest) + len(q_shape))),
                      tuple(range(len(q_shape))))
    if keepdims:
        kept = [1] * ndim if axis is None else rest[:axis_] + [1] + rest[axis_:]
        result = reshape(result, (*q_shape, *kept))
    return result


def quantile(a: ArrayLike, q: ArrayLike, axis: int | None = None,
             method: str = "linear", keepdims: bool = False) -> Array:
    return _quantile(a, q, axis, method, keepdims, False, "quantile")


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | None = None,
                method: str = "linear", keepdims: bool = False) -> Array:
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile")


def percentile(a: ArrayLike, q: ArrayLike, axis: int | None = None,
               method: str = "linear", keepdims: bool = False) -> Array:
    return _quantile(a, ew.div(operand(q), 100.0), axis, method, keepdims, False, "percentile")


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | None = None,
                  method: str = "linear", keepdims: bool = False) -> Array:
    return _quantile(a, ew.div(operand(q), 100.0), axis, method, keepdims, True,
                     "nanpercentile")


def median(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    return _quantile(a, 0.5, axis, "linear", keepdims, False, "median")


def nanmedian(a: ArrayLike, axis: int | None = None,
              keepdims: bool = False) -> Array:
    return _quantile(a, 0.5, axis, "linear", keepdims, True, "nanmedian")


# ---------------------------------------------------------------------------------
# Results whose size depends on the data


def _known(x, name: str):
    """The numpy value of `x` if it is known (eagerly or under grad); while tracing
    for jit or make_jaxpr, a ConcretizationError saying that `size=` is needed."""
    if isinstance(x, Tracer):
        return np.asarray(x.concrete_value(
            f"{name} without size= (the shape of its result depends on the values; pass "
            f"size= and fill_value= to trace it)"))
    return np.asarray(x)


def _first_true(mask, size: int):
    """(positions of the first `size` True entries of the 1-d `mask` in order, whether
    each of the `size` slots holds one): a stable sort of ~mask puts them first."""
    n = get_aval(mask).shape[0]
    order = sorting.sort(logical_not(mask), 0)[1]
    if size > n:
        order = concatenate([order, np.zeros(size - n, np.int64)])
    slots = ix.getitem(order, slice(0, size))
    return slots, ew.lt(np.arange(size), sum(mask))


def nonzero(a: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike | None = None) -> tuple[Array, ...]:
    """numpy.nonzero; with `size`, the first `size` indices (filled with `fill_value`,
    0 by default), which traces."""
    a = operand(a)
    if size is None:
        return tuple(np.nonzero(_known(a, "nonzero")))
    shape = get_aval(a).shape or (1,)
    slots, filled = _first_true(not_equal(ravel(a), 0), size)
    fill = 0 if fill_value is None else fill_value
    fills = fill if isinstance(fill, tuple) else (fill,) * len(shape)
    return tuple(where(filled, i, f) for i, f in zip(unravel_index(slots, shape), fills))


def flatnonzero(a: ArrayLike, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Array:
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: ArrayLike, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Array:
    """numpy.argwhere: the indices of nonzero elements as rows."""
    a = operand(a)
    if get_aval(a).ndim == 0:
        a = reshape(a, (1,))
    indices = nonzero(a, size=size, fill_value=fill_value)
    return stack([operand(i) for i in indices], axis=-1)


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Array, ...]:
    """numpy.unravel_index: the multi-index of each flat index, by integer division."""
    indices = operand(indices)
    out = []
    for stride in np.cumprod((1, *shape[:0:-1]))[::-1]:
        out.append(ew.floor_divide(indices, int(stride)))
        indices = ew.sub(indices, ew.mul(out[-1], int(stride)))
    return tuple(out)


def ravel_multi_index(multi_index: ArrayLike, dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Array:
    """numpy.ravel_multi_index (C order): sum of index times stride; indices are
    clipped into range (JAX's behaviour under tracing) unless mode="wrap"."""
    if order != "C":
        raise ValueError("ravel_multi_index: only order='C' is supported")
    flat = 0
    for index, dim, stride in zip(multi_index, dims, np.cumprod((1, *dims[:0:-1]))[::-1]):
        index = operand(index)
        index = ew.rem(ew.add(ew.rem(index, dim), dim), dim) if mode == "wrap" else \
            clip(index, 0, dim - 1)
        flat = ew.add(flat, ew.mul(index, int(stride)))
    return flat


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None,
           *, equal_nan: bool = True, size: int | None = None,
           fill_value: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """numpy.unique of the flattened array; with `size`, the first `size` unique values
    (the rest `fill_value`, by default the smallest value), which traces."""
    if axis is not None:
        raise ValueError("unique: only axis=None is supported")
    ar = ravel(operand(ar))
    if size is None:
        out = np.unique(_known(ar, "unique"), return_index, return_inverse, return_counts)
        return out
    values, perm = sorting.sort(ar, 0)
    n = get_aval(values).shape[0]
    first = concatenate([np.ones(min(n, 1), bool),
                         not_equal(ix.getitem(values, slice(1, None)),
                                   ix.getitem(values, slice(0, n - 1)))])
    slots, filled = _first_true(first, size)
    fill = ix.getitem(values, 0) if fill_value is None else fill_value
    outs = [where(filled, take(values, slots), fill)]
    if return_index:
        outs.append(where(filled, take(perm, slots), 0))
    if return_inverse:
        group = ew.sub(cumsum(first), 1)
        outs.append(ix.index_update(np.zeros(n, np.int64), (perm,), group, "set"))
    if return_counts:
        ends = concatenate([ix.getitem(slots, slice(1, None)), np.full(1, n, np.int64)])
        ends = where(ew.lt(arange(size) + 1, sum(first)), ends, n)
        outs.append(where(filled, ew.sub(ends, slots), 0))
    return outs[0] if len(outs) == 1 else tuple(outs)


def where(condition: ArrayLike, x: ArrayLike | None = None,  # noqa: F811
          y: ArrayLike | None = None, *, size: int | None = None,
          fill_value: ArrayLike | None = None) -> Array | tuple[Array, ...]:
    """numpy.where: the elementwise choice, or with only a condition its nonzero
    indices (which need `size=` while tracing, as nonzero does).

    Example:
        >>> jnp.where(np.array([1.0, -2.0]) > 0, 1.0, 0.0)
        Array([1., 0.])

        The cotangent of the branch not taken is masked, so a guarded `sqrt` has a
        finite gradient at 0:

        >>> print(inert.grad(lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(x), 0.0)))(
        ...     np.array([4.0, 0.0])))
        [0.25 0.  ]
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    return _ufuncs.where(condition, x, y)


def lexsort(keys: ArrayLike | Sequence[ArrayLike], axis: int = -1) -> Array:
    """numpy.lexsort: the permutation sorting by the last key, ties by the one before,
    and so on (stable sorts from the first key to the last)."""
    keys = [operand(k) for k in keys]
    order = argsort(keys[0], axis)
    for key in keys[1:]:
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis), axis)
    return order


UniqueAll = collections.namedtuple("UniqueAll", "values indices inverse_indices counts")
UniqueCounts = collections.namedtuple("UniqueCounts", "values counts")
UniqueInverse = collections.namedtuple("UniqueInverse", "values inverse_indices")


def unique_values(x: ArrayLike, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> Array:
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x: ArrayLike, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> tuple[Array, Array]:
    return UniqueCounts(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x: ArrayLike, *, size: int | None = None,
                   fill_value: ArrayLike | None = None) -> tuple[Array, Array]:
    values, inverse = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return UniqueInverse(values, reshape(inverse, get_aval(operand(x)).shape))


def unique_all(x: ArrayLike, *, size: int | None = None,
               fill_value: ArrayLike | None = None) -> tuple[Array, Array, Array, Array]:
    values, index, inverse, counts = unique(x, True, True, True, size=size,
                                            fill_value=fill_value)
    return UniqueAll(values, index, reshape(inverse, get_aval(operand(x)).shape), counts)


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *,
             length: int | None = None) -> Array:
    """numpy.bincount of non-negative integers: counts (or weight sums) per value, a
    scatter-add; `length` (else known values) fixes the result's size."""
    x = ravel(x)
    if length is None:
        known = _known(x, "bincount")
        length = max(minlength, int(known.max()) + 1 if known.size else 0)
    updates = np.ones(get_aval(x).shape, np.int64) if weights is None else ravel(weights)
    dtype = np.int64 if weights is None else get_aval(operand(updates)).dtype
    return ix.index_update(np.zeros(length, dtype), (x,), updates, "add")
