"""Structural primitives: change the layout of an array, not its values.

All of them are linear. `reduce_sum` lives here, not with the reductions, because it
is the transpose of `broadcast_in_dim` (and the other way round), and the elementwise
family needs both to undo numpy broadcasting in its transposes (`unbroadcast`).

This family sits below the elementwise one, so its rules cannot subtract or multiply:
they are written with structural primitives and `add_any` only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, is_float, tangent_aval
from ...core.backends import array_api_impls, backend_dtype
from ...core.errors import ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...core.typing import ArrayLike, DTypeLike
from ...interpreters.ad import (
    add_any_p,
    defjvp_zero,
    deflinear,
    jvp_rules,
)
from ...interpreters.batching import (
    batch_rules,
    batch_size,
    batched_axis,
    defnullary,
    defreducer,
    defvectorized,
)
from ...interpreters.fusion import (
    broadcast_index,
    deffused,
    deffused_gather,
    deffused_reduction,
)
from ...interpreters.fusion_loops import native_rules
from ...interpreters.partial_eval import def_recomputable
from ...interpreters.transpose import def_elementwise_transpose, is_linear, transpose_rules
from ...interpreters.vector_math import allocation


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

    checked.unchecked = impl  # what compiled code calls: its program was checked when staged
    return checked


def aval_of(x) -> ShapedArray:
    """The aval of a transpose rule's operand, linear or known."""
    return x.aval if is_linear(x) else get_aval(x)


# ---------------------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(x: ArrayLike, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> np.ndarray:
    """Broadcast `x` to `shape`; axis i of `x` becomes axis `broadcast_dimensions[i]`."""
    return broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    scalar = np.asarray(x) if not dims else None
    if scalar is not None and scalar.dtype.kind in "biufc":
        # a number (a cotangent seed, a zero): a quarter of np.broadcast_to's cost
        out = np.ndarray(shape, scalar.dtype, scalar, 0, (0,) * len(shape))
        out.flags.writeable = False  # every element is the one scalar, as broadcast_to's
        return out
    if any(a >= b for a, b in zip(dims, dims[1:])) or (dims and dims[0] < 0):
        # numpy would reshape instead of failing: let the abstract eval say why not
        broadcast_in_dim_abstract_eval(get_aval(x), shape=shape, broadcast_dimensions=dims)
    expanded = [1] * len(shape)
    for axis, dim in zip(broadcast_dimensions, np.shape(x)):
        expanded[axis] = dim
    return np.broadcast_to(np.reshape(x, expanded), shape)


def broadcast_in_dim_array_api(xp, x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for axis, dim in zip(broadcast_dimensions, x.shape):
        expanded[axis] = dim
    return xp.broadcast_to(xp.reshape(x, tuple(expanded)), shape)


array_api_impls[broadcast_in_dim_p] = broadcast_in_dim_array_api


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
def broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    fits = len(broadcast_dimensions) == x.ndim and all(
        0 <= d < len(shape) and x.shape[i] in (1, shape[d])
        for i, d in enumerate(broadcast_dimensions))
    if not fits or list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim: cannot broadcast {x.str_short()} to {shape} with "
                         f"broadcast_dimensions={broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


impl_rules[broadcast_in_dim_p] = broadcast_in_dim_impl
deffused_gather(broadcast_in_dim_p, lambda i, in_shape, out_shape, /, *, broadcast_dimensions,
                **_: ([broadcast_index(i, n, d, out_shape)
                       for n, d in zip(in_shape, broadcast_dimensions)], None))
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


def reshape(x: ArrayLike, new_sizes: Sequence[int]) -> np.ndarray:
    """lax.reshape: every size given (numpy's -1 is inert.numpy.reshape's)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if any(d < 0 for d in new_sizes):
        raise ShapeError(f"reshape: negative size in {new_sizes}; inert.numpy.reshape infers "
                         "a -1").with_source(user_source_info())
    if tuple(get_aval(x).shape) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


impl_rules[reshape_p] = lambda x, *, new_sizes: np.reshape(x, new_sizes)
array_api_impls[reshape_p] = lambda xp, x, *, new_sizes: xp.reshape(x, new_sizes)


def reshape_native(fn, eqn, operands, *, new_sizes):
    """Inside a native loop (jit's numba backend), where every array is C-contiguous
    and 0-d values are scalars: numba's reshape, a view; to or from one element, its
    index or a new array filled by a loop, and dropping leading axes of one element, an
    index (numba's `ravel`, `np.full` and `reshape` are functions it compiles, 0.1 to
    0.35 s each)."""
    (x,), aval = operands, eqn.outputs[0].aval
    ndim = len(eqn.inputs[0].aval.shape)
    if not new_sizes:
        return [f"{x}[{', '.join('0' * ndim)}]" if ndim else x]
    if not ndim:
        return [fn.full(new_sizes, aval.dtype, x)]
    shape = eqn.inputs[0].aval.shape
    lead = len(shape) - len(new_sizes)
    if lead > 0 and shape[lead:] == tuple(new_sizes) and set(shape[:lead]) == {1}:
        return [f"{x}[{', '.join('0' * lead)}]"]  # a view too, with no reshape to compile
    return [f"{x}.reshape({new_sizes!r})"]


native_rules[reshape_p] = reshape_native


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
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


def reduce_sum(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_sum_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


impl_rules[reduce_sum_p] = lambda x, *, axes: np.sum(x, axis=axes)
deffused_reduction(reduce_sum_p, lambda acc, x: f"{acc} + {x}", lambda dtype: 0)


def reduce_sum_array_api(xp, x, *, axes):
    if x.dtype == xp.bool:  # the standard sums numbers only; numpy counts booleans
        x = xp.astype(x, xp.int64)
    return xp.sum(x, axis=axes)


array_api_impls[reduce_sum_p] = reduce_sum_array_api


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
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


def convert_element_type(x: ArrayLike, new_dtype: DTypeLike) -> np.ndarray:
    new_dtype = np.dtype(new_dtype)
    aval = get_aval(x)
    if aval.dtype == new_dtype and not aval.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)




def convert_element_type_impl(x, *, new_dtype):
    """numpy's cast; complex to real keeps the real part (as lax does), without
    numpy's warning: the transpose of real-to-complex promotion is that real part."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = x.real
    return x.astype(new_dtype)


impl_rules[convert_element_type_p] = convert_element_type_impl
array_api_impls[convert_element_type_p] = lambda xp, x, *, new_dtype: xp.astype(
    x, backend_dtype(xp, new_dtype))
deffused(convert_element_type_p,  # the cast to the result's dtype is the conversion
         lambda x, *, new_dtype: f"{x} != 0" if new_dtype == np.bool_ else x,
         operand_dtypes=lambda eqn: [None])
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


def transpose(x: ArrayLike, permutation: Sequence[int]) -> np.ndarray:
    """Axis i of the result is axis `permutation[i]` of `x` (numpy's `transpose`)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(get_aval(x).ndim)):
        return x
    return transpose_p.bind(x, permutation=permutation)


impl_rules[transpose_p] = lambda x, *, permutation: np.transpose(x, permutation)
array_api_impls[transpose_p] = lambda xp, x, *, permutation: xp.permute_dims(x, permutation)
deffused_gather(transpose_p, lambda i, shape, out_shape, /, *, permutation: (
    [i[permutation.index(d)] for d in range(len(shape))], None))


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
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


def squeeze(x: ArrayLike, dimensions: Sequence[int]) -> np.ndarray:
    """Drop the given axes, each of size 1."""
    return squeeze_p.bind(x, dimensions=canonical_axes(dimensions, get_aval(x).ndim))


impl_rules[squeeze_p] = lambda x, *, dimensions: np.squeeze(x, dimensions)
array_api_impls[squeeze_p] = lambda xp, x, *, dimensions: xp.squeeze(x, dimensions)


def _with_zeros_at(indices: list[str], dimensions, rank: int) -> list[str]:
    """The operand index of a squeeze: index 0 on each squeezed axis."""
    rest = iter(indices)
    return ["0" if d in dimensions else next(rest) for d in range(rank)]


deffused_gather(squeeze_p, lambda i, shape, out_shape, /, *, dimensions: (
    _with_zeros_at(i, dimensions, len(shape)), None))


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
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


def expand_dims(x: ArrayLike, dimensions: Sequence[int]) -> np.ndarray:
    """Insert axes of size 1; `dimensions` are their positions in the result."""
    ndim = get_aval(x).ndim + len(dimensions)
    return expand_dims_p.bind(x, dimensions=canonical_axes(dimensions, ndim))


impl_rules[expand_dims_p] = lambda x, *, dimensions: np.expand_dims(x, dimensions)
deffused_gather(expand_dims_p, lambda i, shape, out_shape, /, *, dimensions: (
    [v for d, v in enumerate(i) if d not in dimensions], None))


def expand_dims_array_api(xp, x, *, dimensions):
    for d in sorted(dimensions):  # the standard's expand_dims takes one axis
        x = xp.expand_dims(x, axis=d)
    return x


array_api_impls[expand_dims_p] = expand_dims_array_api


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
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


def rev(x: ArrayLike, dimensions: Sequence[int]) -> np.ndarray:
    """Reverse the order of the elements along the given axes (numpy's `flip`)."""
    dimensions = canonical_axes(dimensions, get_aval(x).ndim)
    return rev_p.bind(x, dimensions=dimensions) if dimensions else x


impl_rules[rev_p] = lambda x, *, dimensions: np.flip(x, dimensions)
array_api_impls[rev_p] = lambda xp, x, *, dimensions: xp.flip(x, axis=dimensions)
deffused_gather(rev_p, lambda i, shape, out_shape, /, *, dimensions: (
    [f"{n - 1} - {v}" if d in dimensions else v for d, (n, v) in enumerate(zip(shape, i))],
    None))


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


def iota(dtype: DTypeLike, shape: Sequence[int], dimension: int) -> np.ndarray:
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


def iota_native(fn, eqn, operands, *, dtype, shape, dimension):
    """Inside a native loop (jit's numba backend): an array filled by loops (fori_loop's
    indices, `eye`'s row and column numbers; numba's `np.arange` and `astype` are
    functions it compiles)."""
    (out,) = fn.assign([allocation(shape, dtype)])
    index = [fn.fresh("i") for _ in shape]
    with fn.loops(index, shape):
        fn.line(f"{out}[{', '.join(index)}] = {index[dimension]}")
    return [out]


native_rules[iota_p] = iota_native

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
