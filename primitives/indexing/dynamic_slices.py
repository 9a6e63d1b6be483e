"""`dynamic_slice` / `dynamic_update_slice`: read and write a contiguous block at
scalar (possibly traced) start indices, clamped like XLA so that the block stays in
bounds. Starts that differ between vmap lanes make them a gather or scatter of the
block's index arrays (`gather_scatter`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import zeros
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.transpose import is_linear, transpose_rules
from ..elementwise import add, clamp
from ..shape.structural import (
    aval_of,
    checked_impl,
    convert_element_type,
    inserted,
    iota,
    matchaxis,
    reshape,
)
from .gather_scatter import deflinear_in_leading, gather_p, scatter_p


def _check_scalar_indices(name: str, starts, x: ShapedArray) -> None:
    if len(starts) != x.ndim:
        raise ShapeError(f"{name}: {len(starts)} start indices for the {x.ndim} axes of "
                         f"{x.str_short()}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise DTypeError(f"{name}: start indices must be integer scalars, but start "
                             f"index {i} is {s.str_short()}")


def _block(shape, starts, sizes) -> tuple[slice, ...]:
    """The block of `sizes` at `starts`, each start clamped into [0, dim - size]."""
    begins = [min(max(int(s), 0), d - k) for s, d, k in zip(starts, shape, sizes)]
    return tuple(slice(b, b + k) for b, k in zip(begins, sizes))


def _block_indices(starts, start_dims, shape, sizes) -> tuple[list, list]:
    """Index arrays for the block of `sizes` at `starts` (clamped like `_block`), one
    per axis of `shape`, for a gather or scatter over all axes: what a dynamic slice
    or update becomes when its starts differ between lanes. Array i is start i plus
    0, 1, ... along axis i; a batched start (one per lane) puts the lanes first.
    Returns the arrays and their batch axes."""
    indices = []
    for i, (start, d) in enumerate(zip(starts, start_dims)):
        start = clamp(0, convert_element_type(start, np.int64), shape[i] - sizes[i])
        if d is not None:
            start = reshape(start, (get_aval(start).shape[0],) + (1,) * len(shape))
        offsets = iota(np.int64, tuple(k if j == i else 1 for j, k in enumerate(sizes)), i)
        indices.append(add(start, offsets))
    return indices, [None if d is None else 0 for d in start_dims]


def _unbatched_shape(x, dim: int | None) -> tuple[int, ...]:
    shape = get_aval(x).shape
    return shape if dim is None else shape[:dim] + shape[dim + 1:]


# ---------------------------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice", operand_names=("operand",))


def dynamic_slice(x: ArrayLike, start_indices: Sequence[ArrayLike],
                  slice_sizes: Sequence[int]) -> np.ndarray:
    """jax.lax.dynamic_slice: the block of `slice_sizes` at (traced) `start_indices`."""
    return dynamic_slice_p.bind(x, *start_indices,
                                slice_sizes=tuple(int(k) for k in slice_sizes))


def dynamic_slice_abstract_eval(x, *starts, slice_sizes):
    _check_scalar_indices("dynamic_slice", starts, x)
    if len(slice_sizes) != x.ndim or any(not 0 <= k <= d for k, d in zip(slice_sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: slice_sizes {slice_sizes} do not fit in "
                         f"{x.str_short()}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    return x[_block(x.shape, starts, slice_sizes)]


# numpy would truncate a float start index: check first (as for all this family)
impl_rules[dynamic_slice_p] = checked_impl(dynamic_slice_impl, dynamic_slice_abstract_eval)
abstract_eval_rules[dynamic_slice_p] = dynamic_slice_abstract_eval
deflinear_in_leading(dynamic_slice_p, 1)


def dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    return [dynamic_update_slice(zeros(x.aval), ct, starts), *[None] * len(starts)]


transpose_rules[dynamic_slice_p] = dynamic_slice_transpose


def dynamic_slice_batch(vals, dims, *, slice_sizes):
    """Starts the same for every lane: the block spans the whole batch axis. Starts
    that differ: each lane's block is gathered."""
    (x, *starts), (dx, *start_dims) = vals, dims
    if all(d is None for d in start_dims):
        size = get_aval(x).shape[dx]
        return [dynamic_slice(x, inserted(starts, dx, 0), inserted(slice_sizes, dx, size))], [dx]
    shape = _unbatched_shape(x, dx)
    indices, index_dims = _block_indices(starts, start_dims, shape, slice_sizes)
    return batch_rules[gather_p]([x, *indices], [dx, *index_dims], axes=tuple(range(len(shape))),
                                 mode="clip", fill_value=None)


batch_rules[dynamic_slice_p] = dynamic_slice_batch

# ---------------------------------------------------------------------------------
dynamic_update_slice_p = Primitive("dynamic_update_slice", operand_names=("operand", "update"))


def dynamic_update_slice(x: ArrayLike, update: ArrayLike,
                         start_indices: Sequence[ArrayLike]) -> np.ndarray:
    """jax.lax.dynamic_update_slice: `x` with the block at `start_indices` replaced."""
    return dynamic_update_slice_p.bind(x, update, *start_indices)


def dynamic_update_slice_abstract_eval(x, update, *starts):
    _check_scalar_indices("dynamic_update_slice", starts, x)
    if update.ndim != x.ndim or any(k > d for k, d in zip(update.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {update.str_short()} does not fit in "
                         f"{x.str_short()}")
    if update.dtype != x.dtype:
        raise DTypeError(f"dynamic_update_slice: update {update.str_short()} and operand "
                         f"{x.str_short()} have different dtypes")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    out[_block(out.shape, starts, np.shape(update))] = update
    return out


impl_rules[dynamic_update_slice_p] = checked_impl(dynamic_update_slice_impl,
                                                  dynamic_update_slice_abstract_eval)
abstract_eval_rules[dynamic_update_slice_p] = dynamic_update_slice_abstract_eval
deflinear_in_leading(dynamic_update_slice_p, 2)


def dynamic_update_slice_transpose(ct, x, update, *starts):
    ct_x = dynamic_update_slice(ct, zeros(aval_of(update)), starts) if is_linear(x) else None
    ct_update = (dynamic_slice(ct, starts, update.aval.shape) if is_linear(update) else None)
    return [ct_x, ct_update, *[None] * len(starts)]


transpose_rules[dynamic_update_slice_p] = dynamic_update_slice_transpose


def dynamic_update_slice_batch(vals, dims):
    """Starts the same for every lane: the block spans the whole batch axis. Starts
    that differ: each lane's block is scattered."""
    (x, update, *starts), (dx, du, *start_dims) = vals, dims
    size = batch_size(vals, dims)
    if all(d is None for d in start_dims):
        d = dx if dx is not None else du
        x, update = matchaxis(x, dx, d, size), matchaxis(update, du, d, size)
        return [dynamic_update_slice(x, update, inserted(starts, d, 0))], [d]
    shape = _unbatched_shape(x, dx)
    indices, index_dims = _block_indices(starts, start_dims, shape, _unbatched_shape(update, du))
    return batch_rules[scatter_p]([x, update, *indices], [dx, du, *index_dims],
                                  axes=tuple(range(len(shape))), mode="clip")


batch_rules[dynamic_update_slice_p] = dynamic_update_slice_batch
