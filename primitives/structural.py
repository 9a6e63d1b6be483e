"""Structural primitives: change the layout of an array, not its values.

All of them are linear. `reduce_sum` lives here, not with the reductions, because it
is the transpose of `broadcast_in_dim` (and the other way round), and the elementwise
family needs both to undo numpy broadcasting in its transposes (`unbroadcast`).

This family sits below the elementwise one, so its rules cannot subtract or multiply:
they are written with structural primitives and `add_any` only (see `pad`).
"""

from __future__ import annotations

import builtins

import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray, is_float, result_dtype, tangent_aval
from ..core.errors import DTypeError, ShapeError
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..interpreters.ad import (
    add_any_p,
    add_tangents,
    defjvp_zero,
    deflinear,
    instantiate_zeros,
    jvp_rules,
)
from ..interpreters.batching import (
    batch_rules,
    batch_size,
    batched_axis,
    defnullary,
    defreducer,
    defvectorized,
)
from ..interpreters.partial_eval import def_recomputable
from ..interpreters.transpose import def_elementwise_transpose, is_linear, transpose_rules


def canonical_axes(axes, ndim: int) -> tuple[int, ...]:
    """Axes as sorted non-negative ints (-1 is the last axis); out-of-range ones are
    kept as they are, for the abstract eval to report with the primitive's name."""
    return tuple(sorted(int(a) + ndim if -ndim <= int(a) < 0 else int(a) for a in axes))


def check_axes(name: str, axes, x: ShapedArray) -> None:
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: axes {tuple(axes)} out of range or repeated for "
                         f"{x.str_short()}")


def checked_impl(impl, abstract_eval):
    """`impl`, after the abstract eval has checked the operands: for the primitives
    whose numpy implementation would accept what the abstract eval rejects (clipping
    out-of-range indices, casting, reshaping instead of transposing) rather than fail
    and let `eval_primitive` explain why."""

    def checked(*args, **params):
        abstract_eval(*map(get_aval, args), **params)
        return impl(*args, **params)

    return checked


def aval_of(x) -> ShapedArray:
    """The aval of a transpose rule's operand, linear or known."""
    return x.aval if is_linear(x) else get_aval(x)


# ---------------------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast `x` to `shape`; axis i of `x` becomes axis `broadcast_dimensions[i]`."""
    return broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if any(a >= b for a, b in zip(dims, dims[1:])) or (dims and dims[0] < 0):
        # numpy would reshape instead of failing: let the abstract eval say why not
        broadcast_in_dim_abstract_eval(get_aval(x), shape=shape, broadcast_dimensions=dims)
    expanded = [1] * len(shape)
    for axis, dim in zip(broadcast_dimensions, np.shape(x)):
        expanded[axis] = dim
    return np.broadcast_to(np.reshape(x, expanded), shape)


def broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    fits = len(broadcast_dimensions) == x.ndim and all(
        0 <= d < len(shape) and x.shape[i] in (1, shape[d])
        for i, d in enumerate(broadcast_dimensions))
    if not fits or list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim: cannot broadcast {x.str_short()} to {shape} with "
                         f"broadcast_dimensions={broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


impl_rules[broadcast_in_dim_p] = broadcast_in_dim_impl
abstract_eval_rules[broadcast_in_dim_p] = broadcast_in_dim_abstract_eval
deflinear(broadcast_in_dim_p)


def broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    return [unbroadcast_to(ct, x.aval, broadcast_dimensions)]


transpose_rules[broadcast_in_dim_p] = broadcast_in_dim_transpose


def broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    """The batch axis lands right after where the operand's axis before it lands, so
    `broadcast_dimensions` stay increasing and no data moves."""
    (x,), (d,) = vals, dims
    out_dim = broadcast_dimensions[d - 1] + 1 if d else 0
    new_dims = [batched_axis(b, out_dim) for b in broadcast_dimensions]
    new_dims.insert(d, out_dim)
    return [broadcast_in_dim(x, inserted(shape, out_dim, get_aval(x).shape[d]),
                             new_dims)], [out_dim]


batch_rules[broadcast_in_dim_p] = broadcast_in_dim_batch
def_recomputable(broadcast_in_dim_p)

# ---------------------------------------------------------------------------------
reshape_p = Primitive("reshape")


def reshape(x, new_sizes):
    new_sizes = tuple(int(d) for d in new_sizes)
    if tuple(get_aval(x).shape) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


impl_rules[reshape_p] = lambda x, *, new_sizes: np.reshape(x, new_sizes)


def reshape_abstract_eval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise ShapeError(f"reshape: cannot reshape {x.str_short()} to {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


abstract_eval_rules[reshape_p] = reshape_abstract_eval
deflinear(reshape_p)
transpose_rules[reshape_p] = lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)]


def reshape_batch(vals, dims, *, new_sizes):
    """Row-major order mixes axes: the batch axis goes first, where it stays separate."""
    x = moveaxis(vals[0], dims[0], 0)
    return [reshape(x, (get_aval(x).shape[0], *new_sizes))], [0]


batch_rules[reshape_p] = reshape_batch
def_recomputable(reshape_p)

# ---------------------------------------------------------------------------------
reduce_sum_p = Primitive("reduce_sum")


def reduce_sum(x, axes):
    return reduce_sum_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


impl_rules[reduce_sum_p] = lambda x, *, axes: np.sum(x, axis=axes)


def reduce_sum_abstract_eval(x, *, axes):
    check_axes("reduce_sum", axes, x)
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    dtype = np.sum(np.zeros((1,), x.dtype)).dtype  # numpy's accumulator (bool -> int64)
    return ShapedArray(shape, dtype, x.weak_type)


abstract_eval_rules[reduce_sum_p] = reduce_sum_abstract_eval
deflinear(reduce_sum_p)


def reduce_sum_transpose(ct, x, *, axes):
    kept = [i for i in range(x.aval.ndim) if i not in axes]
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


transpose_rules[reduce_sum_p] = reduce_sum_transpose
defreducer(reduce_sum_p)

# ---------------------------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")


def convert_element_type(x, new_dtype):
    new_dtype = np.dtype(new_dtype)
    aval = get_aval(x)
    if aval.dtype == new_dtype and not aval.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


impl_rules[convert_element_type_p] = lambda x, *, new_dtype: np.asarray(x).astype(new_dtype)
abstract_eval_rules[convert_element_type_p] = lambda x, *, new_dtype: ShapedArray(
    x.shape, new_dtype)


def convert_element_type_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = convert_element_type(x, new_dtype)
    if not is_float(new_dtype):
        return [out], [Zero(tangent_aval(get_aval(out)))]
    return [out], [convert_element_type(t, new_dtype)]


jvp_rules[convert_element_type_p] = convert_element_type_jvp
transpose_rules[convert_element_type_p] = lambda ct, x, *, new_dtype: [
    convert_element_type(ct, x.aval.dtype)]
def_recomputable(convert_element_type_p)
def_elementwise_transpose(convert_element_type_p)
defvectorized(convert_element_type_p)

# ---------------------------------------------------------------------------------
transpose_p = Primitive("transpose")


def transpose(x, permutation):
    """Axis i of the result is axis `permutation[i]` of `x` (numpy's `transpose`)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(get_aval(x).ndim)):
        return x
    return transpose_p.bind(x, permutation=permutation)


impl_rules[transpose_p] = lambda x, *, permutation: np.transpose(x, permutation)


def transpose_abstract_eval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {permutation} is not a permutation of the "
                         f"axes of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


abstract_eval_rules[transpose_p] = transpose_abstract_eval
deflinear(transpose_p)
transpose_rules[transpose_p] = lambda ct, x, *, permutation: [
    transpose(ct, np.argsort(permutation))]


def transpose_batch(vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    return [transpose(x, (d, *(batched_axis(p, d) for p in permutation)))], [0]


batch_rules[transpose_p] = transpose_batch
def_recomputable(transpose_p)

# ---------------------------------------------------------------------------------
squeeze_p = Primitive("squeeze")


def squeeze(x, dimensions):
    """Drop the given axes, each of size 1."""
    return squeeze_p.bind(x, dimensions=canonical_axes(dimensions, get_aval(x).ndim))


impl_rules[squeeze_p] = lambda x, *, dimensions: np.squeeze(x, dimensions)


def squeeze_abstract_eval(x, *, dimensions):
    check_axes("squeeze", dimensions, x)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ShapeError(f"squeeze: dimensions {dimensions} of {x.str_short()} are not all 1")
    shape = tuple(n for i, n in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


abstract_eval_rules[squeeze_p] = squeeze_abstract_eval
deflinear(squeeze_p)
transpose_rules[squeeze_p] = lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)]
defreducer(squeeze_p, "dimensions")
def_recomputable(squeeze_p)

# ---------------------------------------------------------------------------------
expand_dims_p = Primitive("expand_dims")


def expand_dims(x, dimensions):
    """Insert axes of size 1; `dimensions` are their positions in the result."""
    ndim = get_aval(x).ndim + len(dimensions)
    return expand_dims_p.bind(x, dimensions=canonical_axes(dimensions, ndim))


impl_rules[expand_dims_p] = lambda x, *, dimensions: np.expand_dims(x, dimensions)


def expand_dims_abstract_eval(x, *, dimensions):
    ndim = x.ndim + len(dimensions)
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ShapeError(f"expand_dims: dimensions {dimensions} out of range or repeated for "
                         f"{x.str_short()}")
    shape = iter(x.shape)
    return ShapedArray(tuple(1 if i in dimensions else next(shape) for i in range(ndim)),
                       x.dtype, x.weak_type)


abstract_eval_rules[expand_dims_p] = expand_dims_abstract_eval
deflinear(expand_dims_p)
transpose_rules[expand_dims_p] = lambda ct, x, *, dimensions: [squeeze(ct, dimensions)]


def expand_dims_batch(vals, dims, *, dimensions):
    """The batch axis lands right after where the operand's axis before it lands."""
    (x,), (d,) = vals, dims
    kept = [i for i in range(get_aval(x).ndim - 1 + len(dimensions)) if i not in dimensions]
    out_dim = kept[d - 1] + 1 if d else 0
    return [expand_dims(x, [batched_axis(e, out_dim) for e in dimensions])], [out_dim]


batch_rules[expand_dims_p] = expand_dims_batch
def_recomputable(expand_dims_p)

# ---------------------------------------------------------------------------------
rev_p = Primitive("rev")


def rev(x, dimensions):
    """Reverse the order of the elements along the given axes (numpy's `flip`)."""
    dimensions = canonical_axes(dimensions, get_aval(x).ndim)
    return rev_p.bind(x, dimensions=dimensions) if dimensions else x


impl_rules[rev_p] = lambda x, *, dimensions: np.flip(x, dimensions)


def rev_abstract_eval(x, *, dimensions):
    check_axes("rev", dimensions, x)
    return x


abstract_eval_rules[rev_p] = rev_abstract_eval
deflinear(rev_p)
transpose_rules[rev_p] = lambda ct, x, *, dimensions: [rev(ct, dimensions)]


def rev_batch(vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    return [rev(x, [batched_axis(a, d) for a in dimensions])], [d]


batch_rules[rev_p] = rev_batch
def_recomputable(rev_p)

# ---------------------------------------------------------------------------------
iota_p = Primitive("iota")


def iota(dtype, shape, dimension):
    """0, 1, 2, ... along axis `dimension`, broadcast to `shape` (lax.broadcasted_iota)."""
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(int(d) for d in shape),
                       dimension=int(dimension))


def iota_abstract_eval(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(d < 0 for d in shape):
        raise ShapeError(f"iota: dimension {dimension} out of range for shape {shape}")
    return ShapedArray(shape, dtype)


def iota_impl(*, dtype, shape, dimension):
    values = np.arange(shape[dimension], dtype=dtype)
    return broadcast_in_dim_impl(values, shape=shape, broadcast_dimensions=(dimension,))


impl_rules[iota_p] = checked_impl(iota_impl, iota_abstract_eval)
abstract_eval_rules[iota_p] = iota_abstract_eval
defjvp_zero(iota_p)
# transpose: none, iota has no operands
defnullary(iota_p)
def_recomputable(iota_p)

# ---------------------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


def concatenate(operands, dimension):
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

# ---------------------------------------------------------------------------------
pad_p = Primitive("pad")


def pad(x, padding_value, padding_config):
    """lax.pad: `(low, high, interior)` per axis puts `interior` padding values between
    neighbours and `low`/`high` ones at the ends; a negative `low`/`high` crops."""
    padding_config = tuple(tuple(int(p) for p in c) for c in padding_config)
    if len(padding_config) == get_aval(x).ndim and all(c == (0, 0, 0) for c in padding_config):
        return x
    return pad_p.bind(x, padding_value, padding_config=padding_config)


def _dilated_size(n: int, interior: int) -> int:
    return (n - 1) * (interior + 1) + 1 if n else 0


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


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 — lax's name
    """`x[start:limit:stride]` along every axis (lax.slice); the indices must be in range."""
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = (1,) * len(start_indices) if strides is None else tuple(int(s) for s in strides)
    shape = get_aval(x).shape
    if limit_indices == tuple(shape) and not any(start_indices) and set(strides) <= {1}:
        return x
    return slice_p.bind(x, start_indices=start_indices, limit_indices=limit_indices,
                        strides=strides)


def slice_in_dim(x, start_index, limit_index, stride=1, axis=0):
    """`slice` along one axis only (lax.slice_in_dim)."""
    shape = get_aval(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, starts, limits, strides)


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
    return np.asarray(x)[tuple(builtins.slice(a, b, s) for a, b, s in
                               zip(start_indices, limit_indices, strides))]


impl_rules[slice_p] = checked_impl(slice_impl, slice_abstract_eval)
abstract_eval_rules[slice_p] = slice_abstract_eval
deflinear(slice_p)


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


# ---------------------------------------------------------------------------------
# Undoing numpy broadcasting: the one place the transposes of broadcasting ops share


def unbroadcast_to(ct, aval: ShapedArray, broadcast_dimensions=None):
    """Sum `ct` down to `aval`'s shape: the transpose of broadcasting to ct's shape.

    Without `broadcast_dimensions`, numpy's rule applies: `aval`'s axes are aligned
    with ct's trailing axes.
    """
    ct_shape = get_aval(ct).shape
    if broadcast_dimensions is None:
        offset = len(ct_shape) - aval.ndim
        broadcast_dimensions = tuple(range(offset, len(ct_shape)))
    if tuple(ct_shape) == tuple(aval.shape):
        return ct
    summed = [i for i in range(len(ct_shape)) if i not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if aval.shape[i] == 1 != ct_shape[d]]
    out = reduce_sum(ct, summed) if summed else ct
    return reshape(out, aval.shape)


# ---------------------------------------------------------------------------------
# Batch axes: moving and materialising them, for every family's batching rules


def moveaxis(x, src: int, dst: int):
    """`x` with axis `src` moved to position `dst` (numpy's `moveaxis`)."""
    if src == dst:
        return x
    perm = [i for i in range(get_aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def inserted(values, index: int, value) -> tuple:
    """`values` as a tuple with `value` inserted at `index`: a param of a batched
    operation gains an entry for the batch axis."""
    values = list(values)
    values.insert(index, value)
    return tuple(values)


def matchaxis(x, src: int | None, dst: int, size: int):
    """`x` batched along `dst`: its batch axis moved there from `src`, or, if it has
    none (`src` None, the same value for every lane), `size` copies stacked there."""
    if src is not None:
        return moveaxis(x, src, dst)
    shape = inserted(get_aval(x).shape, dst, size)
    return broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != dst])


def batch_axis_first(x, dim: int, rank: int):
    """`x` with its batch axis first, then unit axes up to `rank` data axes: batched,
    it broadcasts like numpy against unbatched operands of rank up to `rank`, whose
    axes numpy aligns with the trailing ones."""
    x = moveaxis(x, dim, 0)
    missing = rank + 1 - get_aval(x).ndim
    return expand_dims(x, range(1, 1 + missing)) if missing else x


def add_any_batch(vals, dims):
    """`add_any` lives in interpreters.ad, which cannot move axes: its rule is here,
    next to `matchaxis` (as interpreters.transpose registers its transpose)."""
    size = batch_size(vals, dims)
    dim = next(d for d in dims if d is not None)
    return [add_any_p.bind(*(matchaxis(v, d, dim, size) for v, d in zip(vals, dims)))], [dim]


batch_rules[add_any_p] = add_any_batch
