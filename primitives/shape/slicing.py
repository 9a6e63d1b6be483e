"""Slicing and joining: `slice`, `pad` and `concatenate`, which are each other's
transposes (a slice's cotangent is a zero-padded one; a padding's and a join's are
slices), so they live together, above the layout primitives of `structural`.

Like the structural family this one sits below the elementwise one, so its rules are
written with layout primitives and `add_any` only (see `pad`'s padding cotangent).
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Sequence

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype
from ...core.backends import array_api_impls, as_array, to_backend
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import add_tangents, deflinear, instantiate_zeros, jvp_rules
from ...interpreters.batching import batch_rules, batch_size, batched_axis
from ...interpreters.fusion import deffused_gather
from ...interpreters.fusion_loops import Unsupported, assembly_rules, native_rules, view_rules
from ...interpreters.partial_eval import def_recomputable
from ...interpreters.transpose import is_linear, transpose_rules
from ...interpreters.vector_math import allocation, strided_index
from .structural import (
    aval_of,
    broadcast_in_dim,
    checked_impl,
    convert_element_type,
    expand_dims,
    inserted,
    matchaxis,
    reduce_sum,
    reshape,
)

# ---------------------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> np.ndarray:
    """Join arrays of one dtype along axis `dimension` (their other axes must agree)."""
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    dimension = int(dimension)
    if operands and dimension < 0:
        dimension += get_aval(operands[0]).ndim
    return concatenate_p.bind(*operands, dimension=dimension)


# casting="no": numpy would promote operands of different dtypes
impl_rules[concatenate_p] = lambda *xs, dimension: np.concatenate(xs, dimension, casting="no")
array_api_impls[concatenate_p] = lambda xp, *xs, dimension: xp.concat(
    [to_backend(xp, x, get_aval(x).dtype) for x in xs], axis=dimension)


def concatenate_abstract_eval(*xs, dimension):
    shapes = [list(x.shape) for x in xs]
    for s in shapes:
        s[dimension:dimension + 1] = []
    if not xs or not 0 <= dimension < xs[0].ndim or any(
            x.ndim != xs[0].ndim or s != shapes[0] for x, s in zip(xs, shapes)):
        raise ShapeError(f"concatenate: cannot join {', '.join(x.str_short() for x in xs)} "
                         f"along dimension {dimension}")
    if any(x.dtype != xs[0].dtype for x in xs):
        raise DTypeError(f"concatenate: operands of different dtypes "
                         f"{', '.join(x.str_short() for x in xs)}")
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))


abstract_eval_rules[concatenate_p] = concatenate_abstract_eval
deflinear(concatenate_p)


def concatenate_transpose(ct, *xs, dimension):
    cts, start = [], 0
    for x in xs:
        stop = start + aval_of(x).shape[dimension]
        cts.append(slice_in_dim(ct, start, stop, axis=dimension) if is_linear(x) else None)
        start = stop
    return cts


transpose_rules[concatenate_p] = concatenate_transpose


def concatenate_batch(vals, dims, *, dimension):
    """Unbatched operands are stacked for every lane; all batch axes go to one place."""
    size = batch_size(vals, dims)
    d = dims[0] if all(d == dims[0] for d in dims) else 0
    xs = [matchaxis(x, xd, d, size) for x, xd in zip(vals, dims)]
    return [concatenate(xs, batched_axis(dimension, d))], [d]


batch_rules[concatenate_p] = concatenate_batch
def_recomputable(concatenate_p)


def concatenate_offsets(eqn, *, dimension) -> list[tuple]:
    """Where each operand starts along each axis of the result."""
    sizes = [a.aval.shape[dimension] for a in eqn.inputs]
    ndim = len(eqn.outputs[0].aval.shape)
    return [tuple(start if d == dimension else 0 for d in range(ndim))
            for start in np.cumsum([0, *sizes[:-1]]).tolist()]


def concatenate_native(fn, eqn, operands, *, dimension):
    """Inside a native function, a new array each operand is copied into by loops
    (the operands' dtypes are one): numba's `np.concatenate` is a function it compiles
    for each number and kind of operands, 0.15 to 0.4 s each. An operand a cluster
    computes for it alone is in place already (`assembly_rules`)."""
    out = eqn.outputs[0].aval
    if out.dtype.kind not in "biuf" or out.dtype == np.float16:
        raise Unsupported(f"concatenate of {out.dtype}")
    result, written = fn.assembled.pop(eqn.outputs[0], (None, ()))
    if result is None:
        (result,) = fn.assign([allocation(out.shape, out.dtype)])
    offsets = concatenate_offsets(eqn, dimension=dimension)
    for k, (x, a) in enumerate(zip(operands, eqn.inputs)):
        if k not in written:
            fn.copy(result, x, a.aval.shape, offsets[k])
    return [result]


native_rules[concatenate_p] = concatenate_native
assembly_rules[concatenate_p] = concatenate_offsets

# ---------------------------------------------------------------------------------
pad_p = Primitive("pad")


def pad(x: ArrayLike, padding_value: ArrayLike,
        padding_config: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """lax.pad: `(low, high, interior)` per axis puts `interior` padding values between
    neighbours and `low`/`high` ones at the ends; a negative `low`/`high` crops."""
    padding_config = tuple(tuple(int(p) for p in c) for c in padding_config)
    if len(padding_config) == get_aval(x).ndim and all(c == (0, 0, 0) for c in padding_config):
        return x
    return pad_p.bind(x, padding_value, padding_config=padding_config)


def _dilated_size(n: int, interior: int) -> int:
    return (n - 1) * (interior + 1) + 1 if n else 0


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
def pad_abstract_eval(x, padding_value, *, padding_config):
    if len(padding_config) != x.ndim or any(len(c) != 3 or c[2] < 0 for c in padding_config):
        raise ShapeError(f"pad: padding_config {padding_config} needs one (low, high, "
                         f"interior >= 0) per axis of {x.str_short()}")
    shape = tuple(lo + _dilated_size(n, interior) + hi
                  for n, (lo, hi, interior) in zip(x.shape, padding_config))
    if any(d < 0 for d in shape):
        raise ShapeError(f"pad: padding_config {padding_config} crops {x.str_short()} to a "
                         f"negative size {shape}")
    if padding_value.shape != ():
        raise ShapeError(f"pad: the padding value must be a scalar, not "
                         f"{padding_value.str_short()}")
    if padding_value.dtype != x.dtype and not (
            padding_value.weak_type and result_dtype(x, padding_value) == x.dtype):
        raise DTypeError(f"pad: padding value {padding_value.str_short()} for an operand "
                         f"{x.str_short()} of another dtype")
    return ShapedArray(shape, x.dtype, x.weak_type)


def pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    grown = [max(lo, 0) + _dilated_size(n, interior) + max(hi, 0)
             for n, (lo, hi, interior) in zip(x.shape, padding_config)]
    out = np.full(grown, padding_value, x.dtype)
    out[tuple(builtins.slice(max(lo, 0), max(lo, 0) + _dilated_size(n, interior), interior + 1)
              for n, (lo, _, interior) in zip(x.shape, padding_config))] = x
    return out[tuple(builtins.slice(-min(lo, 0), g + min(hi, 0))
                     for g, (lo, hi, _) in zip(grown, padding_config))]


impl_rules[pad_p] = checked_impl(pad_impl, pad_abstract_eval)


def pad_fused(i, shape, out_shape, /, *, padding_config):
    """Output element `i` reads `(i - low) / (interior + 1)` on each axis, where that is
    a whole index of the operand; the padding value elsewhere."""
    index, valid = [], []
    for v, n, (lo, _, interior) in zip(i, shape, padding_config):
        step = interior + 1
        offset = f"({v} - {lo})"
        index.append(f"{offset} // {step}")
        valid.append(f"{offset} >= 0 and {offset} % {step} == 0 and {offset} // {step} < {n}")
    return index, " and ".join(f"({c})" for c in valid) or None


deffused_gather(pad_p, pad_fused, view=False)
abstract_eval_rules[pad_p] = pad_abstract_eval


def pad_jvp(primals, tangents, *, padding_config):
    """Linear in both operands; an inactive padding value pads with a zero tangent."""
    (x, padding_value), (tx, tv) = primals, tangents
    out = pad(x, padding_value, padding_config)
    tv = 0 if type(tv) is Zero else convert_element_type(tv, get_aval(out).dtype)
    return [out], [pad(instantiate_zeros(tx), tv, padding_config)]


jvp_rules[pad_p] = pad_jvp


def pad_transpose(ct, x, padding_value, *, padding_config):
    ct_value = None
    if is_linear(padding_value):
        ct_value = _padding_sum(ct, x, padding_config)
        if type(ct_value) is not Zero:
            ct_value = convert_element_type(ct_value, padding_value.aval.dtype)
    return [_unpad(ct, padding_config) if is_linear(x) else None, ct_value]


transpose_rules[pad_p] = pad_transpose


def _unpad(ct, padding_config):
    """The operand's elements of a padded array: undo the low/high padding (cropped
    elements come back as zeros), then step over the interior padding."""
    whole = pad(ct, 0, [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    shape = get_aval(whole).shape
    return slice(whole, [0] * len(shape), shape, [interior + 1 for _, _, interior in
                                                  padding_config])


def _padding_sum(ct, x, padding_config):
    """The sum of `ct` over the positions `pad` filled with the padding value.

    It is sum(ct) minus the operand's part, but this family cannot subtract, so the
    padding is peeled off one axis at a time (`_peel_axis`); what is left of `ct` after
    an axis, the operand's part along it, goes on to the next axis.
    """
    total = Zero(ShapedArray((), get_aval(ct).dtype))
    for axis, (n, (lo, hi, interior)) in enumerate(zip(aval_of(x).shape, padding_config)):
        if (lo, hi, interior) != (0, 0, 0):
            ct, pieces = _peel_axis(ct, axis, n, lo, interior + 1)
            for piece in pieces:
                total = add_tangents(total, reduce_sum(piece, range(get_aval(piece).ndim)))
    return total


def _peel_axis(ct, axis: int, n: int, low: int, stride: int):
    """Split `ct` along `axis` into the operand's part and the padding: the margins,
    and, once operand element i sits at i * stride and the axis is cut into n blocks
    of `stride`, every column of the blocks but the first (the operand's)."""
    shape = get_aval(ct).shape
    length, end = shape[axis], low + n * stride
    margins = [slice_in_dim(ct, 0, min(max(low, 0), length), axis=axis),
               slice_in_dim(ct, min(max(end, 0), length), length, axis=axis)]
    config = [(0, 0, 0)] * len(shape)
    config[axis] = (-low, end - length, 0)
    blocks = reshape(pad(ct, 0, config), (*shape[:axis], n, stride, *shape[axis + 1:]))
    interior = slice_in_dim(blocks, 1, stride, axis=axis + 1)
    operand = reshape(slice_in_dim(blocks, 0, 1, axis=axis + 1),
                      (*shape[:axis], n, *shape[axis + 1:]))
    return operand, [p for p in (*margins, interior) if get_aval(p).size]


def pad_batch(vals, dims, *, padding_config):
    """A padding value the same for every lane pads the batch axis by nothing. One per
    lane cannot be `pad`'s scalar: each axis is then padded by concatenating copies of
    the lanes' values (`_pad_axis_per_lane`)."""
    (x, value), (dx, dv) = vals, dims
    if dv is None:
        return [pad(x, value, inserted(padding_config, dx, (0, 0, 0)))], [dx]
    x = matchaxis(x, dx, 0, get_aval(value).shape[0])
    value = convert_element_type(value, get_aval(x).dtype)
    for axis, (low, high, interior) in enumerate(padding_config, 1):
        x = _pad_axis_per_lane(x, value, axis, low, high, interior)
    return [x], [0]


def _pad_axis_per_lane(x, value, axis: int, low: int, high: int, interior: int):
    """`pad` along `axis` of `x` (lanes along axis 0) with `value[lane]`: interleave
    copies of it between the elements, add copies at the ends, then crop."""
    shape = get_aval(x).shape
    n = shape[axis]
    if interior and n > 1:
        gaps = _lane_values(value, inserted(shape, axis + 1, interior))
        x = concatenate([expand_dims(x, (axis + 1,)), gaps], axis + 1)
        x = reshape(x, (*shape[:axis], n * (interior + 1), *shape[axis + 1:]))
        x = slice_in_dim(x, 0, _dilated_size(n, interior), axis=axis)
    shape = get_aval(x).shape
    ends = [_lane_values(value, (*shape[:axis], k, *shape[axis + 1:])) if k > 0 else None
            for k in (low, high)]
    x = concatenate([p for p in (ends[0], x, ends[1]) if p is not None], axis)
    length = get_aval(x).shape[axis]
    return slice_in_dim(x, -min(low, 0), length + min(high, 0), axis=axis)


def _lane_values(value, shape):
    """An array of `shape` holding `value[lane]` everywhere in lane `lane` (axis 0)."""
    return broadcast_in_dim(value, shape, (0,))


batch_rules[pad_p] = pad_batch
def_recomputable(pad_p)

# ---------------------------------------------------------------------------------
slice_p = Primitive("slice")


def slice(x: ArrayLike, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> np.ndarray:  # noqa: A001 — lax's name
    """`x[start:limit:stride]` along every axis (lax.slice); the indices must be in range."""
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = (1,) * len(start_indices) if strides is None else tuple(int(s) for s in strides)
    shape = get_aval(x).shape
    if limit_indices == tuple(shape) and not any(start_indices) and set(strides) <= {1}:
        return x
    return slice_p.bind(x, start_indices=start_indices, limit_indices=limit_indices,
                        strides=strides)


def slice_in_dim(x: ArrayLike, start_index: int, limit_index: int, stride: int = 1,
                 axis: int = 0) -> np.ndarray:
    """`slice` along one axis only (lax.slice_in_dim)."""
    shape = get_aval(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, starts, limits, strides)


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
def slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    fits = len(start_indices) == len(limit_indices) == len(strides) == x.ndim and all(
        0 <= a <= b <= n and s >= 1
        for a, b, s, n in zip(start_indices, limit_indices, strides, x.shape))
    if not fits:
        raise ShapeError(f"slice: start_indices {start_indices}, limit_indices "
                         f"{limit_indices} and strides {strides} do not fit {x.str_short()}")
    shape = tuple(-(-(b - a) // s) for a, b, s in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, x.weak_type)


def slice_impl(x, *, start_indices, limit_indices, strides):
    return as_array(x)[tuple(builtins.slice(a, b, s) for a, b, s in
                             zip(start_indices, limit_indices, strides))]


impl_rules[slice_p] = checked_impl(slice_impl, slice_abstract_eval)
array_api_impls[slice_p] = lambda xp, x, **params: slice_impl(x, **params)
deffused_gather(slice_p, lambda i, shape, out_shape, /, *, start_indices, strides, **_: (
    [strided_index(v, start, stride) for v, start, stride in
     zip(i, start_indices, strides or (1,) * len(shape))], None))
abstract_eval_rules[slice_p] = slice_abstract_eval
deflinear(slice_p)


def slice_view(x: str, eqn, *, start_indices, limit_indices, strides) -> str | None:
    """Inside a native function: numba's basic slice `x[start:limit]` where the slice
    cuts the leading axis alone, by unit steps, a C-contiguous view (elsewhere numba's
    view is strided, and a function taking it compiles again for that layout)."""
    shape = eqn.inputs[0].aval.shape
    cut = [d for d, (a, b, n) in enumerate(zip(start_indices, limit_indices, shape))
           if (a, b) != (0, n)]
    if any(s != 1 for s in strides or ()) or cut not in ([], [0]):
        return None
    return f"{x}[{start_indices[0]}:{limit_indices[0]}]"


view_rules[slice_p] = slice_view


def slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    """Put the cotangent back where the elements came from, zeros elsewhere."""
    config = [(a, n - a - _dilated_size(m, s - 1), s - 1) for a, n, m, s in
              zip(start_indices, x.aval.shape, get_aval(ct).shape, strides)]
    return [pad(ct, 0, config)]


transpose_rules[slice_p] = slice_transpose


def slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    size = get_aval(x).shape[d]
    return [slice(x, inserted(start_indices, d, 0), inserted(limit_indices, d, size),
                  inserted(strides, d, 1))], [d]


batch_rules[slice_p] = slice_batch
def_recomputable(slice_p)
