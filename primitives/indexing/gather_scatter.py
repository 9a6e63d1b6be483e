"""The indexing family: reading and writing the parts of an array that integer
operands point at.

Index operands are integer arrays, so they are inactive by type: they reach a jvp
rule with a `Zero` tangent and are never differentiated, yet they may be traced (a
loop counter, the result of an argsort). (`dynamic_slices` holds the block reads and
writes at scalar starts.)

`gather` / `scatter_add` / `scatter` / `scatter_mul` are numpy's advanced
indexing. One description serves all four: integer arrays `indices`, one per axis
in the increasing `axes`, every other axis taken whole. The indexed region is
`x[ix]` where `ix` has `indices[i]` at `axes[i]` and `:` elsewhere, so each impl is
one numpy statement and the index dimensions sit where numpy puts them (in place
if `axes` are consecutive, else in front). Negative indices wrap as in numpy;
an index out of bounds does what the primitive's `mode` says, as in JAX: a
gather clamps it or reads a fill value, a scatter drops its update or clamps it
(`bounds`). The rules keep the mode: a clamping gather transposes to a clamping
scatter-add, a filling one to a dropping one.

`getitem` and `index_update` turn any numpy index into these primitives (with the
structural ones for basic indexing); `index_expressions` reads the index.
"""

from __future__ import annotations

import contextlib
import math
import operator

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, tangent_aval
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import add_tangents, instantiate_zeros, jvp_rules, zeros
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.fusion import literal_text
from ...interpreters.fusion_loops import Unsupported, native_rules
from ...interpreters.transpose import is_linear, transpose_rules
from ...interpreters.vector_math import allocation
from ..elementwise import div, eq, mul, select_n
from ..shape.structural import (
    aval_of,
    batch_axis_first,
    broadcast_in_dim,
    checked_impl,
    convert_element_type,
    iota,
    matchaxis,
    moveaxis,
    reshape,
    transpose,
)
from . import bounds
from .index_expressions import (
    basic_getitem,
    fit_updates,
    index_plan,
    is_index_array,
    normalize_index,
)


def deflinear_in_leading(prim: Primitive, n_linear: int) -> None:
    """`prim` is linear jointly in its first `n_linear` operands; the others are
    integer indices, whose tangents are always Zero. The tangent is `prim` applied to
    the tangents of the linear operands (zeros for inactive ones) and the indices."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        linear = [instantiate_zeros(t) for t in tangents[:n_linear]]
        return [out], [prim.bind(*linear, *primals[n_linear:], **params)]

    jvp_rules[prim] = rule


def full(value, dtype, shape):
    """A constant array for a rule's known computations (`zeros` is for tangents:
    the transpose takes it for the zero linear map)."""
    return broadcast_in_dim(np.dtype(dtype).type(value), shape, ())


# ---------------------------------------------------------------------------------
# Advanced indexing: the description shared by gather and the scatters


def full_index(ndim: int, axes, indices) -> tuple:
    """numpy's index for the region: `indices[i]` at `axes[i]`, `:` elsewhere."""
    ix = [slice(None)] * ndim
    for axis, index in zip(axes, indices):
        ix[axis] = index
    return tuple(ix)


def region_native(fn, eqn, indices: list[str], axes, mode: str) -> tuple[list[str], str]:
    """Inside a native loop (jit's numba backend): the region's index for scalar indices
    on leading axes (`x[i]`, `x.at[i]`), wrapped when negative and, in mode "clip",
    clamped (numba's indexing checks nothing). Also the condition that the index is in
    bounds, for a drop scatter's guard."""
    if mode == "fill" or not axes or tuple(axes) != tuple(range(len(axes))) or any(
            a.aval.shape for a in eqn.inputs[len(eqn.inputs) - len(axes):]):
        raise Unsupported(f"{eqn.primitive.name} with index arrays, on axes {axes} or in "
                          f"mode {mode}")
    sizes = eqn.inputs[0].aval.shape
    index = fn.assign([f"{i} + {n} if {i} < 0 else {i}" for i, n in zip(indices, sizes)], "j")
    if mode == "clip":
        index = fn.assign([f"min(max({j}, 0), {n - 1})" for j, n in zip(index, sizes)], "j")
    return index, " and ".join(f"0 <= {j} < {n}" for j, n in zip(index, sizes))


def scatter_native(write: str):
    """`out = x.copy(); out[index] <write> updates`, inside a native loop (an update out
    of bounds dropped or clamped)."""

    def rule(fn, eqn, operands, *, axes, mode):
        x, updates, *indices = operands
        (out,) = fn.assign([f"{x}.copy()"])
        index, in_bounds = region_native(fn, eqn, indices, axes, mode)
        with fn.block(f"if {in_bounds}:"):
            fn.line(f"{out}[{', '.join(index)}] {write} {updates}")
        return [out]

    return rule


def region_shape(shape, axes, index_shape) -> tuple[int, ...]:
    """The shape of `x[full_index(...)]`: numpy puts the index dimensions in place of
    the indexed axes if these are consecutive, in front otherwise."""
    rest = [d for i, d in enumerate(shape) if i not in axes]
    consecutive = tuple(axes) == tuple(range(axes[0], axes[0] + len(axes))) if axes else True
    at = axes[0] if axes and consecutive else 0
    return (*rest[:at], *index_shape, *rest[at:])


def region_aval(name: str, x: ShapedArray, indices, axes) -> ShapedArray:
    """The aval of the indexed region, checking the index description."""
    if len(indices) != len(axes) or list(axes) != sorted(set(axes)) or any(
            not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"{name}: axes {axes} must be increasing axes of {x.str_short()}, "
                         f"one per index array (got {len(indices)} index arrays)")
    for i, index in enumerate(indices):
        if index.dtype.kind not in "iu":
            raise DTypeError(f"{name}: index arrays must have an integer dtype, but index "
                             f"{i} is {index.str_short()}")
    try:
        index_shape = np.broadcast_shapes(*(index.shape for index in indices))
    except ValueError:
        raise ShapeError(f"{name}: index arrays of shapes "
                         f"{', '.join(str(i.shape) for i in indices)} do not broadcast "
                         "together") from None
    return ShapedArray(region_shape(x.shape, axes, index_shape), x.dtype, x.weak_type)


def scatter_abstract_eval(name: str):
    """Scatters write `updates`, exactly the indexed region's shape and dtype."""

    def abstract_eval(x, updates, *indices, axes, mode):
        _check_mode(name, mode, bounds.SCATTER_MODES)
        region = region_aval(name, x, indices, axes)
        if updates.shape != region.shape:
            raise ShapeError(f"{name}: updates {updates.str_short()} do not have the shape "
                             f"{region.shape} of the region of {x.str_short()} they write")
        if updates.dtype != x.dtype:
            raise DTypeError(f"{name}: updates {updates.str_short()} and operand "
                             f"{x.str_short()} have different dtypes")
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    return abstract_eval


def _check_mode(name: str, mode: str, modes) -> None:
    if mode not in modes:
        raise ValueError(f"{name}: mode must be one of {modes}, got {mode!r}")


def scatter_impl(write, abstract_eval):
    """`write(out, index, updates)` on a copy of `x`: numpy's `ufunc.at` or `setitem`.
    Checked first: numpy would broadcast and cast the updates, and read a boolean
    index array as a mask. Updates out of bounds are clamped, or dropped: written
    into a slot past each indexed axis's end, which the result leaves out."""

    def impl(x, updates, *indices, axes, mode):
        x = np.asarray(x)
        sizes = [x.shape[a] for a in axes]
        if mode == "clip":
            indices = [bounds.clipped(i, n) for i, n in zip(indices, sizes)]
        out = np.array(x, copy=True)
        try:  # numpy refuses an index out of bounds: in bounds costs no check
            write(out, full_index(out.ndim, axes, indices), updates)
            return out
        except IndexError:
            pass  # out may be half written: dropped with it
        inner = tuple(slice(0, d) for d in x.shape)
        padded = np.zeros([d + (a in axes) for a, d in enumerate(x.shape)], x.dtype)
        padded[inner] = x
        write(padded, full_index(x.ndim, axes, bounds.dumped(indices, sizes)), updates)
        return padded[inner].copy()

    return checked_impl(impl, abstract_eval)


def axes_param(axes) -> tuple[int, ...]:
    return tuple(int(a) for a in axes)


# Batching: with the same indices for every lane, the lanes of `x` go on an axis after
# the indexed ones, which keep their numbers; with indices that differ, the lanes lead
# the index arrays, and if `x` is batched too a lane index array picks each lane's `x`.


def index_dims_start(axes) -> int:
    """Where numpy puts the index dimensions among the unindexed axes (`region_shape`)."""
    consecutive = tuple(axes) == tuple(range(axes[0], axes[0] + len(axes))) if axes else True
    return axes[0] if axes and consecutive else 0


def index_rank(indices, dims) -> int:
    """The rank of the index arrays broadcast together, for one lane."""
    return max((get_aval(i).ndim - (d is not None) for i, d in zip(indices, dims)), default=0)


def _lanes_after_indexed(x, dim, axes, size):
    """`x` with its lanes (moved or stacked) on an axis after every indexed one."""
    first_free = max(axes, default=-1) + 1
    if dim is not None and dim >= first_free:
        return x, dim
    return matchaxis(x, dim, first_free, size), first_free


def _region_lane_axis(dim: int, axes, k: int) -> int:
    """Where the lanes axis of `x`, after the indexed axes at `dim`, is in the region."""
    j = dim - len(axes)  # among the unindexed axes
    return j if j < index_dims_start(axes) else j + k


def _lanes_first(indices, dims, k: int) -> list:
    return [i if d is None else batch_axis_first(i, d, k) for i, d in zip(indices, dims)]


def _lane_indices(size: int, k: int):
    """The lane number, shaped to lead `k` index dimensions."""
    return iota(np.int64, (size,) + (1,) * k, 0)


def _swap_blocks(x, a: int, b: int):
    """Axes 1..a of `x` trade places with the b axes after them."""
    n = get_aval(x).ndim
    return transpose(x, (0, *range(1 + a, 1 + a + b), *range(1, 1 + a), *range(1 + a + b, n)))


def scatter_batch(prim: Primitive):
    """The batching rule of a scatter: the updates are laid out like the region the
    batched scatter writes (see `gather_batch`); a lane's writes stay in their order,
    so of duplicate indices the same update wins in every lane."""

    def rule(vals, dims, *, axes, mode):
        (x, updates, *indices), (dx, du, *index_dims) = vals, dims
        size, k = batch_size(vals, dims), index_rank(indices, index_dims)
        if all(d is None for d in index_dims):
            x, dx = _lanes_after_indexed(x, dx, axes, size)
            updates = matchaxis(updates, du, _region_lane_axis(dx, axes, k), size)
            return [prim.bind(x, updates, *indices, axes=axes, mode=mode)], [dx]
        indices = _lanes_first(indices, index_dims, k)
        updates = _swap_blocks(matchaxis(updates, du, 0, size), index_dims_start(axes), k)
        out = prim.bind(matchaxis(x, dx, 0, size), updates, _lane_indices(size, k), *indices,
                        axes=(0, *(a + 1 for a in axes)), mode=mode)
        return [out], [0]

    return rule


# ---------------------------------------------------------------------------------
gather_p = Primitive("gather", operand_names=("operand",))


def gather(x, *indices, axes, mode="clip", fill_value=None):
    """`x` indexed by the integer arrays `indices` on `axes` (numpy semantics), an index
    out of bounds clamped (mode "clip") or read as `fill_value` ("fill"; None: the
    dtype's default, NaN for floats)."""
    fill = bounds.fill_param(fill_value, get_aval(x).dtype) if mode == "fill" else None
    return gather_p.bind(x, *indices, axes=axes_param(axes), mode=mode, fill_value=fill)


def gather_abstract_eval(x, *indices, axes, mode, fill_value):
    _check_mode("gather", mode, bounds.GATHER_MODES)
    return region_aval("gather", x, indices, axes)


def gather_impl(x, *indices, axes, mode, fill_value):
    x = np.asarray(x)
    sizes = [x.shape[a] for a in axes]
    try:  # numpy refuses an index out of bounds: in bounds costs no check
        return x[full_index(x.ndim, axes, indices)]
    except IndexError:
        pass
    out = x[full_index(x.ndim, axes, [bounds.clipped(i, n) for i, n in zip(indices, sizes)])]
    if mode == "clip":
        return out
    keep = bounds.inside(indices, sizes)  # over the index dims: broadcast it to the region
    keep = keep.reshape(keep.shape + (1,) * (x.ndim - len(axes) - index_dims_start(axes)))
    fill = bounds.default_fill_value(x.dtype) if fill_value is None else fill_value
    return np.where(keep, out, np.asarray(fill, x.dtype))


impl_rules[gather_p] = checked_impl(gather_impl, gather_abstract_eval)


def gather_native(fn, eqn, operands, *, axes, mode, fill_value):
    """Inside a native loop: a read at scalar indices (`region_native`), or by index
    arrays (`gather_by_arrays_native`)."""
    x, *indices = operands
    if any(a.aval.shape for a in eqn.inputs[1:]):
        return [gather_by_arrays_native(fn, eqn, x, indices, axes, mode, fill_value)]
    index, _ = region_native(fn, eqn, indices, axes, mode)
    return [f"{x}[{', '.join(index)}]"]


def gather_by_arrays_native(fn, eqn, x: str, indices: list[str], axes, mode: str,
                            fill_value) -> str:
    """Index arrays of one shape on leading axes (`x[idx]`, `x[rows, cols]`) inside a
    native loop: a loop over the index positions, each index wrapped when negative, then
    clamped (mode "clip") or, out of bounds, the fill value read (mode "fill"); the
    index dimensions lead the result, as in numpy."""
    shapes = {a.aval.shape for a in eqn.inputs[1:]}
    if len(shapes) != 1 or tuple(axes) != tuple(range(len(axes))):
        raise Unsupported(f"gather by index arrays of shapes {sorted(shapes)} on axes {axes}")
    (shape,), sizes, aval = shapes, eqn.inputs[0].aval.shape, eqn.outputs[0].aval
    (out,) = fn.assign([allocation(aval.shape, aval.dtype)])
    position = [fn.fresh("k") for _ in shape]
    with contextlib.ExitStack() as loops:
        for k, n in zip(position, shape):
            loops.enter_context(fn.block(f"for {k} in range({n}):"))
        at = ", ".join(position)
        js = fn.assign([f"np.int64({i}[{at}])" for i in indices], "j")
        js = fn.assign([f"{j} + {n} if {j} < 0 else {j}" for j, n in zip(js, sizes)], "j")
        if mode == "clip":
            js = fn.assign([f"min(max({j}, 0), {n - 1})" for j, n in zip(js, sizes)], "j")
            fn.line(f"{out}[{at}] = {x}[{', '.join(js)}]")
            return out
        fill = bounds.default_fill_value(aval.dtype) if fill_value is None else fill_value
        with fn.block(f"if {' and '.join(f'0 <= {j} < {n}' for j, n in zip(js, sizes))}:"):
            fn.line(f"{out}[{at}] = {x}[{', '.join(js)}]")
        with fn.block("else:"):
            fn.line(f"{out}[{at}] = {literal_text(fill, aval.dtype)}")
    return out


native_rules[gather_p] = gather_native
abstract_eval_rules[gather_p] = gather_abstract_eval


def gather_jvp(primals, tangents, *, axes, mode, fill_value):
    """Linear in `x` but for the fill value, a constant: the tangent reads 0 there."""
    x, *indices = primals
    out = gather(x, *indices, axes=axes, mode=mode, fill_value=fill_value)
    return [out], [gather(instantiate_zeros(tangents[0]), *indices, axes=axes, mode=mode,
                          fill_value=0)]


jvp_rules[gather_p] = gather_jvp


def gather_transpose(ct, x, *indices, axes, mode, fill_value):
    """What a clamping gather read is where a clamping scatter-add writes; what a
    filling one did not read gets nothing."""
    scatter_mode = "clip" if mode == "clip" else "drop"
    return [scatter_add(zeros(x.aval), ct, *indices, axes=axes, mode=scatter_mode),
            *[None] * len(indices)]


transpose_rules[gather_p] = gather_transpose


def gather_batch(vals, dims, *, axes, mode, fill_value):
    (x, *indices), (dx, *index_dims) = vals, dims
    k = index_rank(indices, index_dims)
    how = {"mode": mode, "fill_value": fill_value}
    if all(d is None for d in index_dims):
        x, dx = _lanes_after_indexed(x, dx, axes, None)
        return [gather(x, *indices, axes=axes, **how)], [_region_lane_axis(dx, axes, k)]
    indices = _lanes_first(indices, index_dims, k)
    if dx is None:  # the lanes lead the index dimensions, wherever numpy puts those
        return [gather(x, *indices, axes=axes, **how)], [index_dims_start(axes)]
    x = moveaxis(x, dx, 0)
    region = gather(x, _lane_indices(get_aval(x).shape[0], k), *indices,
                    axes=(0, *(a + 1 for a in axes)), **how)  # lanes, index dims, the rest
    return [_swap_blocks(region, k, index_dims_start(axes))], [0]


batch_rules[gather_p] = gather_batch

# ---------------------------------------------------------------------------------
scatter_add_p = Primitive("scatter_add", operand_names=("operand", "updates"))


def scatter_add(x, updates, *indices, axes, mode="drop"):
    """`x` with `updates` added at the region (np.add.at: duplicates accumulate); an
    update out of bounds is dropped (mode "drop") or added at the clamped index."""
    return scatter_add_p.bind(x, updates, *indices, axes=axes_param(axes), mode=mode)


abstract_eval_rules[scatter_add_p] = scatter_abstract_eval("scatter_add")
impl_rules[scatter_add_p] = scatter_impl(np.add.at, abstract_eval_rules[scatter_add_p])
native_rules[scatter_add_p] = scatter_native("+=")
deflinear_in_leading(scatter_add_p, 2)


def scatter_add_transpose(ct, x, updates, *indices, axes, mode):
    read = bounds.read_mode_of(mode)
    return [ct if is_linear(x) else None,
            gather(ct, *indices, axes=axes, mode=read[0], fill_value=read[1])
            if is_linear(updates) else None,
            *[None] * len(indices)]


transpose_rules[scatter_add_p] = scatter_add_transpose
batch_rules[scatter_add_p] = scatter_batch(scatter_add_p)

# ---------------------------------------------------------------------------------
scatter_p = Primitive("scatter", operand_names=("operand", "updates"))


def scatter(x, updates, *indices, axes, mode="drop"):
    """`x` with the region set to `updates`; of duplicates, the last write wins; an
    update out of bounds is dropped (mode "drop") or written at the clamped index."""
    return scatter_p.bind(x, updates, *indices, axes=axes_param(axes), mode=mode)


abstract_eval_rules[scatter_p] = scatter_abstract_eval("scatter")
impl_rules[scatter_p] = scatter_impl(operator.setitem, abstract_eval_rules[scatter_p])
native_rules[scatter_p] = scatter_native("=")
deflinear_in_leading(scatter_p, 2)  # a selection of x's and the updates' entries


def landed_updates(x_shape, updates_shape, indices, axes, mode):
    """True for each update that `scatter` writes last to its position: only these
    reach the output. Scattering the updates' serial numbers, with the same indices,
    shows which one the write order kept (a dropped one reads -1)."""
    ids = reshape(iota(np.int64, (math.prod(updates_shape),), 0), updates_shape)
    winners = scatter(full(-1, np.int64, x_shape), ids, *indices, axes=axes, mode=mode)
    read = bounds.read_mode_of(mode)[0]
    return eq(gather(winners, *indices, axes=axes, mode=read, fill_value=-1), ids)


def scatter_transpose(ct, x, updates, *indices, axes, mode):
    """The region's old values never reach the output, nor do overwritten or dropped
    updates."""
    ct_x = ct_updates = None
    if is_linear(x):
        ct_x = scatter(ct, zeros(aval_of(updates)), *indices, axes=axes, mode=mode)
    if is_linear(updates):
        read = bounds.read_mode_of(mode)
        ct_updates = gather(ct, *indices, axes=axes, mode=read[0], fill_value=read[1])
        if updates.aval.size > 1:  # a single update lands, or is dropped (read as 0)
            kept = landed_updates(get_aval(ct).shape, updates.aval.shape, indices, axes, mode)
            ct_updates = select_n(kept, zeros(updates.aval), ct_updates)
    return [ct_x, ct_updates, *[None] * len(indices)]


transpose_rules[scatter_p] = scatter_transpose
batch_rules[scatter_p] = scatter_batch(scatter_p)

# ---------------------------------------------------------------------------------
scatter_mul_p = Primitive("scatter_mul", operand_names=("operand", "updates"))


def scatter_mul(x, updates, *indices, axes, mode="drop"):
    """`x` with the region multiplied by `updates` (np.multiply.at: duplicates
    multiply); an update out of bounds is dropped or clamped, as `mode` says."""
    return scatter_mul_p.bind(x, updates, *indices, axes=axes_param(axes), mode=mode)


abstract_eval_rules[scatter_mul_p] = scatter_abstract_eval("scatter_mul")
impl_rules[scatter_mul_p] = scatter_impl(np.multiply.at, abstract_eval_rules[scatter_mul_p])


def other_factors(updates, x_shape, indices, axes, mode):
    """For each update, the product of the *other* updates at its position: the
    derivative of the product with respect to it. Computed without dividing by a
    zero update: a zero's own factor is the product of the nonzero ones if it is the
    only zero there, and any factor is 0 where another zero shares its position.
    Differentiating this again treats that case analysis as constant, so second
    derivatives are exact except at zero updates (where they miss the terms of
    the zeros that share a position)."""
    aval = get_aval(updates)
    is_zero = eq(updates, aval.dtype.type(0))
    nonzero = select_n(is_zero, updates, full(1, aval.dtype, aval.shape))
    read, fill = bounds.read_mode_of(mode)  # a dropped update's factor: never used
    product = gather(scatter_mul(full(1, aval.dtype, x_shape), nonzero, *indices, axes=axes,
                                 mode=mode), *indices, axes=axes, mode=read, fill_value=fill)
    zero_counts = scatter_add(full(0, np.int64, x_shape), convert_element_type(is_zero, np.int64),
                              *indices, axes=axes, mode=mode)
    zeros_here = gather(zero_counts, *indices, axes=axes, mode=read, fill_value=fill)
    nothing = full(0, aval.dtype, aval.shape)
    return select_n(is_zero,
                    select_n(eq(zeros_here, 0), nothing, div(product, nonzero)),
                    select_n(eq(zeros_here, 1), nothing, product))


def scatter_mul_jvp(primals, tangents, *, axes, mode):
    x, updates, *indices = primals
    t_x, t_updates = tangents[:2]
    out = scatter_mul(x, updates, *indices, axes=axes, mode=mode)
    t_out = Zero(tangent_aval(get_aval(out)))
    if type(t_x) is not Zero:
        t_out = scatter_mul(t_x, updates, *indices, axes=axes, mode=mode)
    if type(t_updates) is not Zero:
        x_shape = get_aval(x).shape
        factors = other_factors(updates, x_shape, indices, axes, mode)
        t_product = scatter_add(zeros(tangent_aval(get_aval(x))), mul(t_updates, factors),
                                *indices, axes=axes, mode=mode)
        t_out = add_tangents(t_out, mul(x, t_product))
    return [out], [t_out]


jvp_rules[scatter_mul_p] = scatter_mul_jvp


def scatter_mul_transpose(ct, x, updates, *indices, axes, mode):
    """Linear in `x` only (the jvp never makes it linear in the updates): a diagonal
    scaling, its own transpose."""
    assert not is_linear(updates), "scatter_mul is linear in its operand only"
    return [scatter_mul(ct, updates, *indices, axes=axes, mode=mode), None,
            *[None] * len(indices)]


transpose_rules[scatter_mul_p] = scatter_mul_transpose
batch_rules[scatter_mul_p] = scatter_batch(scatter_mul_p)


# ---------------------------------------------------------------------------------
# numpy indexing: `x[idx]` and `x.at[idx].set/add/multiply(values)`


def getitem(x, idx, mode=None, fill_value=None):
    """`x[idx]` with numpy's semantics: ints, slices (any step), None, Ellipsis,
    integer arrays (numpy or traced, traced scalars included) and concrete boolean
    masks. Basic indexing is a reverse, a strided slice and a reshape; any integer
    array makes the whole index one gather. An index out of bounds is clamped, or
    with `mode="fill"` reads `fill_value`, as JAX's `x.at[idx].get(mode=...)`."""
    mode = bounds.gather_mode(mode)
    if is_index_array(idx) and idx.dtype.kind in "iu":  # the most common advanced index
        return gather(x, idx, axes=(0,), mode=mode, fill_value=fill_value)
    shape = get_aval(x).shape
    entries = normalize_index(idx, shape)
    if any(is_index_array(e) for e in entries):
        plan = index_plan(entries, shape)
        region = gather(x, *plan.indices, axes=plan.axes, mode=mode, fill_value=fill_value)
        return reshape(region, plan.shape)
    return basic_getitem(x, entries, shape)


_SCATTERS = {"set": scatter, "add": scatter_add, "multiply": scatter_mul}


def index_update(x, idx, values, kind, mode=None):
    """`x.at[idx].set(values)` (kind "set"), `.add` ("add") or `.multiply`
    ("multiply"), or any other scatter passed as `kind`: one scatter over the region
    `x[idx]`, with `values` cast to x's dtype and broadcast to the region like numpy's
    `x[idx] = values`. An update out of bounds is dropped, or with `mode="clip"`
    written at the clamped index, as JAX's `.at[idx].set(..., mode=...)`."""
    if not callable(kind) and kind not in _SCATTERS:
        raise ValueError(f"index_update: kind must be one of {sorted(_SCATTERS)}, got {kind!r}")
    mode = bounds.scatter_mode(mode)
    aval = get_aval(x)
    plan = index_plan(normalize_index(idx, aval.shape), aval.shape)
    updates = fit_updates(values, aval.dtype, plan)
    scatter_fn = kind if callable(kind) else _SCATTERS[kind]
    return scatter_fn(x, updates, *plan.indices, axes=plan.axes, mode=mode)
