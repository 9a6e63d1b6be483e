"""numpy's array construction on inert values: the `r_`/`c_` index tricks, `pad`,
`kron`, `select`/`piecewise`, `put_along_axis`, and the index helpers (tril_indices
and friends, which are numpy's own: their results depend only on shapes).

`pad`'s non-constant modes are one gather per axis by an index map of the padded
positions into the original ones (clamped, periodic or mirrored), so they are linear
and their derivatives are scatter-adds back through the same map.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ...primitives.indexing import gather_scatter as ix
from ..vmap import vmap
from ._array import Array
from ._arrays import (
    arange,
    asarray,
    astype,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concatenate,
    full,
    linspace,
    normalize_axis,
    operand,
    promote,
    shape_error,
    zeros_like,
)
from ._shape import atleast_1d, diag, moveaxis, ravel, reshape, take
from ._ufuncs import _as_bool, clip, logical_not, logical_or, multiply, power, where

# ---------------------------------------------------------------------------------
# r_ and c_


class _AxisConcatenator:
    """`r_[...]`/`c_[...]`: slices become ranges (a complex step: that many points,
    as linspace), scalars 1-d arrays; then all are joined along `axis`. A leading
    string gives the axis ("0", "1", ...); matrix directives are not supported."""

    def __init__(self, axis: int, min_ndim: int):
        self.axis, self.min_ndim = axis, min_ndim

    def _item(self, item):
        if isinstance(item, slice):
            start, stop, step = item.start or 0, item.stop, item.step
            if isinstance(step, complex):
                return linspace(start, stop, int(abs(step)))
            return arange(start, stop, 1 if step is None else step)
        item = atleast_1d(asarray(item) if not isinstance(item, Tracer) else item)
        while get_aval(item).ndim < self.min_ndim:
            item = reshape(item, (*get_aval(item).shape, 1))
        return item

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis = self.axis
        if items and isinstance(items[0], str):
            directive, *items = items
            if not directive.lstrip("-").isdigit():
                raise ValueError(f"r_/c_: the directive {directive!r} is not supported")
            axis = int(directive)
        arrays = promote(*(self._item(i) for i in items))
        return concatenate(arrays, axis)

    def __len__(self):
        return 0


r_ = _AxisConcatenator(0, 1)
c_ = _AxisConcatenator(-1, 2)

# ---------------------------------------------------------------------------------
# pad


def _pad_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each padded position along an axis of size n, the original position it
    copies."""
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":  # mirrored about the end elements, which are not repeated
        if n == 1:
            return np.zeros_like(i)
        j = i % (2 * n - 2)
        return np.where(j >= n, 2 * n - 2 - j, j)
    j = i % (2 * n)  # symmetric: mirrored, the end elements repeated
    return np.where(j >= n, 2 * n - 1 - j, j)


_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


def pad(array: ArrayLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
        mode: str = "constant", *, constant_values: ArrayLike = 0) -> Array:
    """numpy.pad in the modes constant, edge, wrap, reflect and symmetric."""
    array = operand(array)
    shape = get_aval(array).shape
    if mode not in _MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; use one of {_MODES}")
    widths = np.broadcast_to(np.asarray(pad_width, np.int64), (len(shape), 2))
    if np.any(widths < 0):
        raise shape_error(f"pad: negative pad widths {pad_width}")
    values = np.broadcast_to(np.asarray(constant_values, object), (len(shape), 2))
    for axis, ((before, after), (low, high)) in enumerate(zip(widths, values)):
        n = get_aval(array).shape[axis]
        if before == after == 0:
            continue
        if mode == "constant":
            side = list(get_aval(array).shape)
            parts = []
            for width, value in ((before, low), (after, high)):
                side[axis] = width
                parts.append(full(tuple(side), value, get_aval(array).dtype))
            array = concatenate([parts[0], array, parts[1]], axis)
        elif n == 0:
            raise shape_error(f"pad: cannot pad an empty axis in mode {mode!r}")
        else:
            array = take(array, _pad_index(n, int(before), int(after), mode), axis)
    return array


# ---------------------------------------------------------------------------------
# Products, choices and updates


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """The Kronecker product: the outer product with the axes of a and b interleaved."""
    a, b = operand(a), operand(b)
    ndim = max(get_aval(a).ndim, get_aval(b).ndim)
    sa = (1,) * (ndim - get_aval(a).ndim) + tuple(get_aval(a).shape)
    sb = (1,) * (ndim - get_aval(b).ndim) + tuple(get_aval(b).shape)
    a = reshape(a, [d for s in sa for d in (s, 1)])
    b = reshape(b, [d for s in sb for d in (1, s)])
    return reshape(multiply(a, b), [x * y for x, y in zip(sa, sb)])


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Array:
    """numpy.select: the first choice whose condition holds, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    out = operand(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where(cond, choice, out)
    return out


def piecewise(x: ArrayLike, condlist: Sequence[ArrayLike],
              funclist: Sequence[Callable[..., ArrayLike] | ArrayLike], *args: Any,
              **kw: Any) -> Array:
    """numpy.piecewise: each function (or constant) where its condition holds, a later
    condition overriding an earlier one; the extra function (if any) where none holds;
    0 elsewhere. Every function is evaluated on all of x (no data-dependent shapes)."""
    x = operand(x)
    conds = [_as_bool(c) for c in (condlist if isinstance(condlist, (list, tuple))
                                   else [condlist])]
    if len(funclist) == len(conds) + 1:
        none_held = conds[0]
        for cond in conds[1:]:
            none_held = logical_or(none_held, cond)
        conds.append(logical_not(none_held))
    elif len(funclist) != len(conds):
        raise ValueError("piecewise: funclist needs one function per condition (or one more)")
    out = zeros_like(x)
    for cond, f in zip(conds, funclist):
        out = where(cond, f(x, *args, **kw) if callable(f) else f, out)
    return out


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int,
                   inplace: bool = True, mode: str | None = None) -> Array:
    """numpy.put_along_axis as a new array (inert arrays are immutable, so
    `inplace=False` must be passed, as in JAX)."""
    if inplace:
        raise ValueError("put_along_axis: inert arrays are immutable; pass inplace=False")
    arr, indices = operand(arr), operand(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = get_aval(arr).shape
    axis = normalize_axis(axis, len(shape), "put_along_axis")
    index = tuple(indices if i == axis else
                  np.arange(d).reshape([d if j == i else 1 for j in range(len(shape))])
                  for i, d in enumerate(shape))
    return ix.index_update(arr, index, values, "set")


# ---------------------------------------------------------------------------------
# Index helpers: numpy's own (static shapes in, integer arrays out)

tril_indices = np.tril_indices
triu_indices = np.triu_indices
diag_indices = np.diag_indices


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    rows, cols = get_aval(operand(arr)).shape[-2:]
    return np.tril_indices(rows, k, cols)


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    rows, cols = get_aval(operand(arr)).shape[-2:]
    return np.triu_indices(rows, k, cols)


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    shape = get_aval(operand(arr)).shape
    if len(set(shape)) != 1 or len(shape) < 2:
        raise shape_error(f"diag_indices_from: needs a square array, got shape {shape}")
    return np.diag_indices(shape[0], len(shape))


# ---------------------------------------------------------------------------------
# Grids and special matrices; like arange and linspace, numpy constants when their
# arguments are plain (they depend on shapes only)

geomspace, logspace, tri, indices, ix_ = np.geomspace, np.logspace, np.tri, np.indices, np.ix_
mgrid, ogrid, s_, index_exp = np.mgrid, np.ogrid, np.s_, np.index_exp


def empty_like(prototype: ArrayLike, dtype: DTypeLike | None = None,
               shape: int | Sequence[int] | None = None) -> Array:
    """Zeros (inert has no uninitialised memory) of the prototype's shape and dtype."""
    return zeros_like(prototype, dtype, shape)


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:  # noqa: N803 — numpy's name
    """The Vandermonde matrix: columns are powers of x (decreasing by default)."""
    x = operand(x)
    n = get_aval(x).shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return power(reshape(x, (-1, 1)), powers)


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A matrix with the flattened v on its k-th diagonal."""
    return diag(ravel(v), k)


bartlett, blackman, hamming, hanning, kaiser = (
    np.bartlett, np.blackman, np.hamming, np.hanning, np.kaiser)
mask_indices, histogram_bin_edges = np.mask_indices, np.histogram_bin_edges


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """inert values are immutable: the array itself (numpy's copy for plain arrays)."""
    a = operand(a)
    return np.array(a) if isinstance(a, np.ndarray) else a


def choose(a: ArrayLike, choices: ArrayLike, mode: str = "raise") -> Array:
    """numpy.choose: choices[a] elementwise (a select_n), indices clipped or wrapped as
    `mode` says ("raise" clips under tracing, as JAX does)."""
    a = operand(a)
    n = len(choices)
    a = ew.rem(ew.add(ew.rem(a, n), n), n) if mode == "wrap" else clip(a, 0, n - 1)
    choices = broadcast_arrays(*promote(*choices))
    shape = broadcast_shapes(get_aval(a).shape, get_aval(choices[0]).shape)
    return ew.select_n(broadcast_to(a, shape), *(broadcast_to(c, shape) for c in choices))


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *,
                  inplace: bool = True) -> Array:
    """numpy.fill_diagonal as a new array (pass inplace=False, as in JAX)."""
    if inplace:
        raise ValueError("fill_diagonal: inert arrays are immutable; pass inplace=False")
    a = operand(a)
    shape = get_aval(a).shape
    n = min(shape)
    index = tuple(np.arange(n) for _ in shape)
    return ix.index_update(a, index, val, "set")


def delete(arr: ArrayLike, obj: int | slice | ArrayLike, axis: int | None = None) -> Array:
    """numpy.delete with static indices (a slice, an int or a sequence)."""
    arr = operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis(axis, get_aval(arr).ndim, "delete")
    n = get_aval(arr).shape[axis]
    keep = np.delete(np.arange(n), obj)
    return take(arr, keep, axis)


def insert(arr: ArrayLike, obj: int | slice | ArrayLike, values: ArrayLike,
           axis: int | None = None) -> Array:
    """numpy.insert of `values` (broadcast to the inserted block) before the static
    index or indices `obj`."""
    arr = operand(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis(axis, get_aval(arr).ndim, "insert")
    n = get_aval(arr).shape[axis]
    positions = np.insert(np.arange(n), obj, -1)  # -1 marks an inserted slot
    inserted = np.flatnonzero(positions == -1)
    shape = list(get_aval(arr).shape)
    shape[axis] = len(inserted)
    new = broadcast_to(operand(values), tuple(shape))  # values fill the inserted block
    joined = concatenate([arr, astype(new, get_aval(arr).dtype)], axis)
    order = np.where(positions == -1, n + np.cumsum(positions == -1) - 1, positions)
    return take(joined, order, axis)


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Array:
    """numpy.resize: the raveled data repeated to fill `new_shape`."""
    a = ravel(a)
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    total = int(np.prod(shape))
    n = get_aval(a).shape[0]
    return reshape(take(a, np.arange(total) % max(n, 1)), shape)


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *,
        inplace: bool = True) -> Array:
    """numpy.put as a new array: the flat positions `ind` set to `v`."""
    if inplace:
        raise ValueError("put: inert arrays are immutable; pass inplace=False")
    a = operand(a)
    flat = ix.index_update(ravel(a), (operand(ind),), v, "set")
    return reshape(flat, get_aval(a).shape)


def apply_along_axis(func1d: Callable[..., ArrayLike], axis: int, arr: ArrayLike, *args: Any,
                     **kwargs: Any) -> Array:
    """numpy.apply_along_axis: func1d vmapped over every other axis."""
    arr = operand(arr)
    axis = normalize_axis(axis, get_aval(arr).ndim, "apply_along_axis")
    moved = moveaxis(arr, axis, -1)
    lead = get_aval(moved).shape[:-1]
    flat = reshape(moved, (-1, get_aval(moved).shape[-1]))
    out = vmap(lambda row: func1d(row, *args, **kwargs))(flat)
    out = reshape(out, lead + get_aval(out).shape[1:])
    if get_aval(out).ndim == len(lead):
        return out
    return moveaxis(out, tuple(range(len(lead), get_aval(out).ndim)),
                    tuple(range(axis, axis + get_aval(out).ndim - len(lead))))
