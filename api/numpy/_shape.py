"""numpy's shape functions on inert values: reshapes, transposes, joins and splits,
flips and rolls, repeats, and the index-based ones (take, diagonal).

Everything here is a composition of the structural and indexing primitives, so it
is linear and its derivatives come for free. Shapes are static: arguments such as
`shape`, `axis`, `shift` and `repeats` must be concrete.
"""

from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike
from ...primitives import elementwise as ew
from ...primitives.indexing import gather_scatter as ix
from ...primitives.indexing.dynamic_slices import dynamic_slice
from ...primitives.shape import slicing as sl
from ...primitives.shape import structural as st
from ._array import Array
from ._arrays import (
    broadcast_to,
    canonical_shape,
    concatenate,
    full_like,
    normalize_axes,
    normalize_axis,
    operand,
    shape_error,
)
from ._ufuncs import remainder, where

# ---------------------------------------------------------------------------------
# Reshapes and transposes


def reshape(a: ArrayLike, shape: int | Sequence[int]) -> Array:
    """numpy.reshape; one dimension may be -1 (inferred). Always C order.

    Example:
        >>> jnp.reshape(jnp.arange(6), (2, -1))
        Array([[0, 1, 2],
               [3, 4, 5]])
    """
    a = operand(a)
    size = get_aval(a).size
    shape = canonical_shape(shape, "reshape")
    if shape.count(-1) == 1:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise shape_error(f"reshape: cannot reshape an array of size {size} into {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    return st.reshape(a, shape)


def ravel(a: ArrayLike) -> Array:
    return reshape(a, -1)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    a = operand(a)
    ndim = get_aval(a).ndim
    perm = tuple(reversed(range(ndim))) if axes is None else normalize_axes(axes, ndim,
                                                                           "transpose")
    if len(perm) != ndim:
        raise shape_error(f"transpose: axes {axes} do not match an array of dimension {ndim}")
    return a if perm == tuple(range(ndim)) else st.transpose(a, perm)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    a = operand(a)
    ndim = get_aval(a).ndim
    source = normalize_axes(source, ndim, "moveaxis")
    destination = normalize_axes(destination, ndim, "moveaxis")
    if len(source) != len(destination):
        raise shape_error("moveaxis: source and destination need the same number of axes")
    rest = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        rest.insert(dest, src)
    return transpose(a, rest)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    a = operand(a)
    perm = list(range(get_aval(a).ndim))
    i, j = normalize_axis(axis1, len(perm), "swapaxes"), normalize_axis(axis2, len(perm),
                                                                        "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    a = operand(a)
    shape = get_aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = normalize_axes(axis, len(shape), "squeeze")
    if any(shape[i] != 1 for i in axes):
        raise shape_error(f"squeeze: cannot select an axis of size other than one from "
                          f"{axes} of shape {tuple(shape)}")
    return st.reshape(a, [d for i, d in enumerate(shape) if i not in axes])


def expand_dims(a: ArrayLike, axis: int | Sequence[int]) -> Array:
    a = operand(a)
    shape = list(get_aval(a).shape)
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    for i in sorted(normalize_axes(axis, len(shape) + n_new, "expand_dims")):
        shape.insert(i, 1)
    return st.reshape(a, shape)


def atleast_1d(*arys: ArrayLike) -> Array | list[Array]:
    out = [reshape(a, (1,)) if get_aval(operand(a)).ndim == 0 else operand(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: ArrayLike) -> Array | list[Array]:
    out = [operand(a) for a in arys]
    out = [reshape(a, (1,) * (2 - get_aval(a).ndim) + tuple(get_aval(a).shape))
           if get_aval(a).ndim < 2 else a for a in out]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: ArrayLike) -> Array | list[Array]:
    """numpy.atleast_3d: a 1-d (n,) becomes (1, n, 1), a 2-d (m, n) becomes (m, n, 1)."""
    out = []
    for a in map(operand, arys):
        shape = tuple(get_aval(a).shape)
        new = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(len(shape), shape)
        out.append(reshape(a, new) if new != shape else a)
    return out[0] if len(out) == 1 else out


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """numpy.rollaxis: `axis` moved to before `start`."""
    a = operand(a)
    ndim = get_aval(a).ndim
    axis = normalize_axis(axis, ndim, "rollaxis")
    start = start + ndim if start < 0 else start
    if not 0 <= start <= ndim:
        raise shape_error(f"rollaxis: start {start} is out of bounds for {ndim} dimensions")
    return moveaxis(a, axis, start - 1 if start > axis else start)


def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """numpy.rot90: k quarter turns from the first axis towards the second."""
    m = operand(m)
    a0, a1 = normalize_axes(axes, get_aval(m).ndim, "rot90")
    if a0 == a1:
        raise shape_error("rot90: the axes must differ")
    k %= 4
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(get_aval(m).ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1) if k == 3 else m


def permute_dims(a: ArrayLike, axes: Sequence[int] | None) -> Array:
    """The array API's name for transpose."""
    return transpose(a, axes)


def matrix_transpose(x: ArrayLike) -> Array:
    """The last two axes swapped."""
    return swapaxes(x, -1, -2)


# ---------------------------------------------------------------------------------
# Joining and splitting


def hstack(tup: Sequence[ArrayLike]) -> Array:
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if get_aval(arrays[0]).ndim == 1 else 1)


def vstack(tup: Sequence[ArrayLike]) -> Array:
    return concatenate([atleast_2d(a) for a in tup], 0)


row_stack = vstack
concat = concatenate


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Array, ...]:
    """The slices along `axis`, as a tuple (the array API's inverse of stack)."""
    x = operand(x)
    axis = normalize_axis(axis, get_aval(x).ndim, "unstack")
    return tuple(squeeze(_slice_axis(x, i, i + 1, axis), axis)
                 for i in range(get_aval(x).shape[axis]))


def dstack(tup: Sequence[ArrayLike]) -> Array:
    return concatenate([atleast_3d(a) for a in tup], 2)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """numpy.append: raveled and joined for axis None, else joined along `axis`."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([operand(arr), operand(values)], axis)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    arrays = [operand(a) for a in tup]
    return concatenate([reshape(a, (-1, 1)) if get_aval(a).ndim < 2 else a
                        for a in arrays], 1)


def _slice_axis(a, start: int, stop: int, axis: int):
    shape = get_aval(a).shape
    if (start, stop) == (0, shape[axis]):
        return a
    starts = [start if i == axis else 0 for i in range(len(shape))]
    limits = [stop if i == axis else d for i, d in enumerate(shape)]
    return sl.slice(a, starts, limits)


def _split_at(a, points, axis: int) -> list:
    n = get_aval(a).shape[axis]
    bounds = [0, *(min(int(p), n) for p in points), n]
    return [_slice_axis(a, lo, max(lo, hi), axis) for lo, hi in zip(bounds, bounds[1:])]


def split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """numpy.split: into equal sections (which must divide the axis) or at indices."""
    a = operand(ary)
    axis = normalize_axis(axis, get_aval(a).ndim, "split")
    n = get_aval(a).shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % indices_or_sections:
            raise shape_error(f"split: an axis of size {n} does not split into "
                              f"{indices_or_sections} equal sections")
        step = n // indices_or_sections
        indices_or_sections = range(step, n, step)
    return _split_at(a, indices_or_sections, axis)


def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int],
                axis: int = 0) -> list[Array]:
    """numpy.array_split: like split, but sections may differ in size by one."""
    a = operand(ary)
    axis = normalize_axis(axis, get_aval(a).ndim, "array_split")
    if isinstance(indices_or_sections, (int, np.integer)):
        size, extra = divmod(get_aval(a).shape[axis], indices_or_sections)
        sizes = [size + 1] * extra + [size] * (indices_or_sections - extra)
        indices_or_sections = np.cumsum(sizes)[:-1]
    return _split_at(a, indices_or_sections, axis)


def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    return split(ary, indices_or_sections, 1 if get_aval(operand(ary)).ndim > 1 else 0)


def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    return split(ary, indices_or_sections, 0)


def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------------------------
# Rearranging


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    m = operand(m)
    return st.rev(m, normalize_axes(axis, get_aval(m).ndim, "flip"))


def fliplr(m: ArrayLike) -> Array:
    return flip(m, 1)


def flipud(m: ArrayLike) -> Array:
    return flip(m, 0)


def roll(a: ArrayLike, shift: int | Sequence[int],
         axis: int | Sequence[int] | None = None) -> Array:
    """numpy.roll, as slices and a concatenate per rolled axis (for a traced shift, a
    dynamic slice of the axis doubled)."""
    a = operand(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), get_aval(a).shape)
    if isinstance(shift, Tracer):
        return _roll_traced(a, shift, axis)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis(int(ax), get_aval(a).ndim, "roll")
        n = get_aval(a).shape[ax]
        s = int(s) % n if n else 0
        if s:
            a = concatenate([_slice_axis(a, n - s, n, ax), _slice_axis(a, 0, n - s, ax)], ax)
    return a


def _roll_traced(a, shift, axis):
    """Rolling by `s` is the block of length n starting at n - (s mod n) of the axis
    concatenated with itself: the start is in (0, n], so the block always fits."""
    shift_shape, axes = get_aval(shift).shape, np.asarray(axis)
    shape = np.broadcast_shapes(shift_shape, axes.shape)
    shifts = reshape(broadcast_to(shift, shape), (-1,)) if shape else reshape(shift, (1,))
    for k, ax in enumerate(np.broadcast_to(axes, shape).ravel()):
        x_shape = get_aval(a).shape
        ax = normalize_axis(int(ax), len(x_shape), "roll")
        n = x_shape[ax]
        if n:
            starts = [0] * len(x_shape)
            starts[ax] = n - remainder(shifts[k], n)
            a = dynamic_slice(concatenate([a, a], ax), starts, x_shape)
    return a


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """numpy.tile: one broadcast to (r0, d0, r1, d1, ...) and a reshape."""
    a = operand(A)
    reps = canonical_shape(reps, "tile")
    if any(r < 0 for r in reps):
        raise shape_error(f"tile: negative repetitions {reps}")
    shape = tuple(get_aval(a).shape)
    ndim = max(len(reps), len(shape))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    interleaved = [n for pair in zip(reps, shape) for n in pair]
    tiled = st.broadcast_in_dim(st.reshape(a, shape), interleaved, range(1, 2 * ndim, 2))
    return st.reshape(tiled, [r * d for r, d in zip(reps, shape)])


def repeat(a: ArrayLike, repeats: ArrayLike, axis: int | None = None) -> Array:
    """numpy.repeat: a broadcast for one repeat count, a `take` for one per element."""
    a = operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = tuple(get_aval(a).shape)
    axis = normalize_axis(axis, len(shape), "repeat")
    if np.any(np.asarray(repeats) < 0):
        raise shape_error(f"repeat: negative repeats {repeats}")
    if np.ndim(repeats) == 0:
        r = operator.index(repeats)
        expanded = (*shape[:axis + 1], r, *shape[axis + 1:])
        dims = [*range(axis + 1), *range(axis + 2, len(shape) + 1)]
        out = st.broadcast_in_dim(a, expanded, dims)
        return st.reshape(out, (*shape[:axis], shape[axis] * r, *shape[axis + 1:]))
    return take(a, np.repeat(np.arange(shape[axis]), repeats), axis)


# ---------------------------------------------------------------------------------
# Index-based


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, out: None = None,
         mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: ArrayLike | None = None) -> Array:
    """jax.numpy.take: as numpy's, but an index out of bounds reads `fill_value` (mode
    None or "fill": NaN for floats, after negative indices wrap), is clamped into
    [0, n - 1] ("clip", with no wrap, as in JAX) or wraps around ("wrap")."""
    if out is not None:
        raise NotImplementedError("take: the 'out' argument is not supported (arrays are "
                                  "immutable)")
    a, indices = operand(a), operand(indices)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, get_aval(a).ndim, "take")
    n = get_aval(a).shape[axis]
    if mode == "clip":
        indices, mode = ew.clamp(0, indices, max(n - 1, 0)), "clip"
    elif mode == "wrap":
        indices, mode = remainder(indices, n), "clip"
    elif mode in (None, "fill"):
        mode = "fill"
    else:
        raise ValueError(f"take: mode must be 'fill', 'clip' or 'wrap' (got {mode!r}; "
                         "'raise' is not supported, as in JAX)")
    return ix.getitem(a, (slice(None),) * axis + (indices,), mode, fill_value)


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int, mode: str | None = None,
                    fill_value: ArrayLike | None = None) -> Array:
    """numpy.take_along_axis: `indices` picks along `axis`, every other axis is kept
    by an iota index that broadcasts against it. An index out of bounds reads
    `fill_value` (mode None or "fill", NaN for floats) or is clamped ("clip"), as in
    JAX."""
    arr, indices = operand(arr), operand(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = get_aval(arr).shape
    axis = normalize_axis(axis, len(shape), "take_along_axis")
    if get_aval(indices).ndim != len(shape):
        raise shape_error(f"take_along_axis: indices of dimension {get_aval(indices).ndim} "
                          f"for an array of dimension {len(shape)}")
    index = tuple(indices if i == axis else
                  np.arange(d).reshape([d if j == i else 1 for j in range(len(shape))])
                  for i, d in enumerate(shape))
    return ix.getitem(arr, index, "fill" if mode is None else mode, fill_value)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """numpy.diagonal: the diagonal goes last, after the remaining axes. The indices
    are iotas, which the backward pass recomputes rather than keeps."""
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = get_aval(a).shape[-2:]
    length = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    rows, cols = (_counting(length, max(-offset, 0)), _counting(length, max(offset, 0)))
    return ix.getitem(a, (Ellipsis, rows, cols))


def _counting(length: int, start: int):
    """start, start + 1, ..., as an iota."""
    values = st.iota(np.int64, (length,), 0)
    return ew.add(values, start) if start else values


def diag(v: ArrayLike, k: int = 0) -> Array:
    """numpy.diag: the k-th diagonal of a matrix, or a matrix with `v` on it."""
    v = operand(v)
    if get_aval(v).ndim == 2:
        return diagonal(v, k)
    if get_aval(v).ndim != 1:
        raise shape_error("diag: the input must be 1-d or 2-d")
    n = get_aval(v).shape[0] + abs(k)
    rows = np.arange(n - abs(k)) + max(-k, 0)
    cols = np.arange(n - abs(k)) + max(k, 0)
    return ix.index_update(full_like(v, 0, shape=(n, n)), (rows, cols), v, "set")


def tril(m: ArrayLike, k: int = 0) -> Array:
    m = operand(m)
    rows, cols = get_aval(m).shape[-2:]
    return where(np.tri(rows, cols, k, dtype=bool), m, 0)


def triu(m: ArrayLike, k: int = 0) -> Array:
    m = operand(m)
    rows, cols = get_aval(m).shape[-2:]
    return where(np.tri(rows, cols, k - 1, dtype=bool), 0, m)


def meshgrid(*xi: ArrayLike, indexing: str = "xy") -> tuple[Array, ...]:
    """numpy.meshgrid (not sparse): broadcasts of the raveled inputs."""
    xs = [ravel(x) for x in xi]
    shape = [get_aval(x).shape[0] for x in xs]
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(xs) > 1 else i
        out.append(broadcast_to(reshape(x, [-1 if j == axis else 1 for j in range(len(xs))]),
                                shape))
    return tuple(out)
