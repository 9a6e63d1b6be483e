"""Reductions and scans: `reduce_max`/`min`/`prod`, `argmax`/`argmin`, `reduce_and`/`or`,
and the cumulative `cumsum`, `cumprod`, `cummax`, `cummin` (JAX's lax names).

`reduce_sum` lives with the structural primitives: it is `broadcast_in_dim`'s
transpose. Reductions take `axes`, a tuple of axes; scans take one `axis`.

No derivative rule here divides by `x`: the product of the *other* elements comes
from cumulative products, and the tangents of the scans from doubling scans of the
jvp of their combining step. So they are exact where `x` has zeros, and, being made
of mul, add and shifts, they can be differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.avals import ShapedArray
from ..core.backends import array_api_impls, as_array
from ..core.errors import DTypeError, ShapeError
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..core.typing import ArrayLike, DTypeLike
from ..interpreters.ad import defjvp, defjvp_zero, deflinear
from ..interpreters.batching import batch_rules, batched_axis, defreducer
from ..interpreters.fusion import deffused_reduction
from ..interpreters.transpose import transpose_rules
from .elementwise import add, and_, div, eq, mul, ne, select_n
from .shape.slicing import pad
from .shape.structural import (
    broadcast_in_dim,
    canonical_axes,
    check_axes,
    checked_impl,
    convert_element_type,
    reduce_sum,
    reshape,
    transpose,
)


def _reduced_aval(name: str, x: ShapedArray, axes, dtype, needs_elements=False):
    """The aval of a reduction over `axes`; without an identity (max, argmax) it
    needs at least one element to reduce."""
    check_axes(name, axes, x)
    if needs_elements and any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"{name}: cannot reduce the empty axes {tuple(axes)} of "
                         f"{x.str_short()}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, dtype, x.weak_type and dtype == x.dtype)


def _accumulator_dtype(accumulate, dtype: np.dtype) -> np.dtype:
    """The dtype numpy accumulates in (an int32 sum or product is int64)."""
    return np.asarray(accumulate(np.zeros((1,), dtype), axis=0)).dtype


def _extremum_tangent(t, out, x, *, axes):
    """The tangent where the extremum is; ties share it equally (as JAX does): the
    mean of `t` over the locations equal to the result. What the backward pass keeps
    is the boolean mask of those locations and their count."""
    kept = [i for i in range(get_aval(x).ndim) if i not in axes]
    at_extremum = eq(x, broadcast_in_dim(out, get_aval(x).shape, kept))
    count = reduce_sum(convert_element_type(at_extremum, get_aval(t).dtype), axes)
    return div(reduce_sum(select_n(at_extremum, 0, t), axes), count)


def _shift(x, offset: int, axis: int, fill, reverse: bool):
    """`x` moved `offset` places along `axis` (to the end, or to the start if
    `reverse`), `fill` coming in: what a scan step combines with."""
    config = [(0, 0, 0)] * get_aval(x).ndim
    config[axis] = (-offset, offset, 0) if reverse else (offset, -offset, 0)
    return pad(x, fill, config)


# ---------------------------------------------------------------------------------
def def_extremum(name: str, np_fn, beats: str) -> Primitive:
    """`reduce_max` or `reduce_min`: the same rules around numpy's function; not
    linear, so no transpose. `beats` compares a candidate with the running extremum
    when fused; NaN wins, as in numpy, and so does the later of equal elements
    (numpy's max of [0.0, -0.0] is -0.0, of [-0.0, 0.0] 0.0)."""
    prim = Primitive(name)
    impl_rules[prim] = lambda x, *, axes: np_fn(x, axis=axes)
    def extremum_array_api(xp, x, *, axes):
        if x.dtype == xp.bool:  # the standard's max and min take numbers only
            return (xp.any if np_fn is np.max else xp.all)(x, axis=axes)
        return getattr(xp, np_fn.__name__)(x, axis=axes)

    array_api_impls[prim] = extremum_array_api
    deffused_reduction(
        prim, lambda acc, x: f"({x} if {x} {beats}= {acc} or {x} != {x} else {acc})",
        lambda dtype: _extremum_identity(dtype, beats == "<"))
    abstract_eval_rules[prim] = lambda x, *, axes: _reduced_aval(
        name, x, axes, x.dtype, needs_elements=True)
    defjvp(prim, _extremum_tangent)
    defreducer(prim)
    return prim


def _extremum_identity(dtype: np.dtype, smallest: bool):
    """What any element beats: the top of the dtype for a minimum, the bottom for a
    maximum."""
    if dtype.kind == "f":
        return np.inf if smallest else -np.inf
    if dtype.kind == "b":
        return smallest
    info = np.iinfo(dtype)
    return info.max if smallest else info.min


reduce_max_p = def_extremum("reduce_max", np.max, ">")
reduce_min_p = def_extremum("reduce_min", np.min, "<")


def reduce_max(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_max_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


def reduce_min(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_min_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


# ---------------------------------------------------------------------------------
reduce_prod_p = Primitive("reduce_prod")


def reduce_prod(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_prod_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


impl_rules[reduce_prod_p] = lambda x, *, axes: np.prod(x, axis=axes)
array_api_impls[reduce_prod_p] = lambda xp, x, *, axes: xp.prod(x, axis=axes)
deffused_reduction(reduce_prod_p, lambda acc, x: f"{acc} * {x}", lambda dtype: 1)
abstract_eval_rules[reduce_prod_p] = lambda x, *, axes: _reduced_aval(
    "reduce_prod", x, axes, _accumulator_dtype(np.cumprod, x.dtype))


def _product_of_others(x, axes):
    """For each element, the product of the others it is reduced with: the product
    of those before it times that of those after it, in a row of the reduced axes
    moved last."""
    shape = get_aval(x).shape
    kept = [i for i in range(len(shape)) if i not in axes]
    permutation = (*kept, *axes)
    moved = transpose(x, permutation)
    last = len(kept)
    rows = reshape(moved, (*(shape[i] for i in kept), math.prod(shape[a] for a in axes)))
    before = _shift(cumprod(rows, last), 1, last, 1, reverse=False)
    after = _shift(cumprod(rows, last, reverse=True), 1, last, 1, reverse=True)
    others = reshape(mul(before, after), get_aval(moved).shape)
    return transpose(others, np.argsort(permutation))


defjvp(reduce_prod_p, lambda t, out, x, *, axes: reduce_sum(
    mul(t, _product_of_others(x, axes)), axes))
# transpose: none, reduce_prod is not linear
defreducer(reduce_prod_p)

# ---------------------------------------------------------------------------------
argmax_p = Primitive("argmax")


def argmax(x: ArrayLike, axis: int, index_dtype: DTypeLike = np.int64) -> np.ndarray:
    """The index of the (first) largest element along `axis`, as `index_dtype`."""
    (axis,) = canonical_axes((axis,), get_aval(x).ndim)
    return argmax_p.bind(x, axis=axis, index_dtype=np.dtype(index_dtype))


def arg_reduction_abstract_eval(name: str):
    """argmax/argmin: an integer index per reduced row."""

    def abstract_eval(x, *, axis, index_dtype):
        if index_dtype.kind not in "iu":
            raise DTypeError(f"{name}: index_dtype must be an integer type, not {index_dtype}")
        return _reduced_aval(name, x, (axis,), index_dtype, needs_elements=True)

    return abstract_eval


abstract_eval_rules[argmax_p] = arg_reduction_abstract_eval("argmax")
impl_rules[argmax_p] = checked_impl(  # numpy would return any index_dtype asked for
    lambda x, *, axis, index_dtype: np.argmax(x, axis).astype(index_dtype),
    abstract_eval_rules[argmax_p])
defjvp_zero(argmax_p)
# transpose: none, an index is not linear in anything


def arg_reduction_batch(prim: Primitive):
    """argmax/argmin: the reduced axis is renumbered around the batch axis."""

    def rule(vals, dims, *, axis, index_dtype):
        (x,), (d,) = vals, dims
        out = prim.bind(x, axis=batched_axis(axis, d), index_dtype=index_dtype)
        return [out], [d - (axis < d)]

    return rule


batch_rules[argmax_p] = arg_reduction_batch(argmax_p)

# ---------------------------------------------------------------------------------
argmin_p = Primitive("argmin")


def argmin(x: ArrayLike, axis: int, index_dtype: DTypeLike = np.int64) -> np.ndarray:
    """The index of the (first) smallest element along `axis`, as `index_dtype`."""
    (axis,) = canonical_axes((axis,), get_aval(x).ndim)
    return argmin_p.bind(x, axis=axis, index_dtype=np.dtype(index_dtype))


abstract_eval_rules[argmin_p] = arg_reduction_abstract_eval("argmin")
impl_rules[argmin_p] = checked_impl(
    lambda x, *, axis, index_dtype: np.argmin(x, axis).astype(index_dtype),
    abstract_eval_rules[argmin_p])
defjvp_zero(argmin_p)
# transpose: none, an index is not linear in anything
batch_rules[argmin_p] = arg_reduction_batch(argmin_p)

# ---------------------------------------------------------------------------------
# Boolean reductions: numpy's `all` and `any`


def logical_reduction_abstract_eval(name: str):
    """numpy's `all`/`any` take any dtype; these take booleans (as `jnp.all` casts)."""

    def abstract_eval(x, *, axes):
        if x.dtype != np.bool_:
            raise DTypeError(f"{name}: needs a boolean operand, not {x.str_short()}")
        return _reduced_aval(name, x, axes, x.dtype)

    return abstract_eval


reduce_and_p = Primitive("reduce_and")


def reduce_and(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_and_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


abstract_eval_rules[reduce_and_p] = logical_reduction_abstract_eval("reduce_and")
impl_rules[reduce_and_p] = checked_impl(lambda x, *, axes: np.all(x, axis=axes),
                                        abstract_eval_rules[reduce_and_p])
defjvp_zero(reduce_and_p)
# transpose: none, booleans have no cotangents
defreducer(reduce_and_p)

reduce_or_p = Primitive("reduce_or")


def reduce_or(x: ArrayLike, axes: Sequence[int]) -> np.ndarray:
    return reduce_or_p.bind(x, axes=canonical_axes(axes, get_aval(x).ndim))


abstract_eval_rules[reduce_or_p] = logical_reduction_abstract_eval("reduce_or")
impl_rules[reduce_or_p] = checked_impl(lambda x, *, axes: np.any(x, axis=axes),
                                       abstract_eval_rules[reduce_or_p])
defjvp_zero(reduce_or_p)
# transpose: none, booleans have no cotangents
defreducer(reduce_or_p)

# ---------------------------------------------------------------------------------
# Scans: each takes one `axis`; `reverse` accumulates from the end


def cumulative_impl(accumulate, abstract_eval):
    """numpy's `accumulate(x, axis=)`, run from the end of the axis if `reverse`
    (checked first: numpy would scan a 0-d array as if it were 1-d)."""

    def impl(x, *, axis, reverse):
        x = as_array(x)
        if not reverse:
            return accumulate(x, axis=axis)
        return np.flip(accumulate(np.flip(x, axis), axis=axis), axis)

    return checked_impl(impl, abstract_eval)


def cumulative_abstract_eval(name: str, accumulate):
    """Same shape; numpy's accumulator dtype (an int32 cumsum is int64)."""

    def abstract_eval(x, *, axis, reverse):
        check_axes(name, (axis,), x)
        dtype = _accumulator_dtype(accumulate, x.dtype)
        return ShapedArray(x.shape, dtype, x.weak_type and dtype == x.dtype)

    return abstract_eval


def _scan_params(x, axis, reverse) -> dict:
    (axis,) = canonical_axes((axis,), get_aval(x).ndim)
    return dict(axis=axis, reverse=bool(reverse))


def cumulative_batch(prim: Primitive):
    """The scans keep their shape: the scanned axis is renumbered around the batch axis."""

    def rule(vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return [prim.bind(x, axis=batched_axis(axis, d), reverse=reverse)], [d]

    return rule


cumsum_p = Primitive("cumsum")


def cumsum(x: ArrayLike, axis: int = 0, reverse: bool = False) -> np.ndarray:
    return cumsum_p.bind(x, **_scan_params(x, axis, reverse))


abstract_eval_rules[cumsum_p] = cumulative_abstract_eval("cumsum", np.cumsum)
impl_rules[cumsum_p] = cumulative_impl(np.cumsum, abstract_eval_rules[cumsum_p])
deflinear(cumsum_p)
transpose_rules[cumsum_p] = lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)]
batch_rules[cumsum_p] = cumulative_batch(cumsum_p)

# ---------------------------------------------------------------------------------
cumprod_p = Primitive("cumprod")


def cumprod(x: ArrayLike, axis: int = 0, reverse: bool = False) -> np.ndarray:
    return cumprod_p.bind(x, **_scan_params(x, axis, reverse))


abstract_eval_rules[cumprod_p] = cumulative_abstract_eval("cumprod", np.cumprod)
impl_rules[cumprod_p] = cumulative_impl(np.cumprod, abstract_eval_rules[cumprod_p])


def _cumprod_tangent(t, out, x, *, axis, reverse):
    """A doubling scan (Hillis and Steele) of (product, tangent) pairs, combined like
    mul's jvp: (p, dp) then (q, dq) give (p q, dp q + p dq); log2(n) steps."""
    p, dp, step = x, t, 1
    while step < get_aval(x).shape[axis]:
        p_before = _shift(p, step, axis, 1, reverse)
        dp = add(mul(_shift(dp, step, axis, 0, reverse), p), mul(p_before, dp))
        p, step = mul(p_before, p), 2 * step
    return dp


defjvp(cumprod_p, _cumprod_tangent)
# transpose: none, cumprod is not linear
batch_rules[cumprod_p] = cumulative_batch(cumprod_p)

# ---------------------------------------------------------------------------------
cummax_p = Primitive("cummax")


def cummax(x: ArrayLike, axis: int = 0, reverse: bool = False) -> np.ndarray:
    return cummax_p.bind(x, **_scan_params(x, axis, reverse))


abstract_eval_rules[cummax_p] = cumulative_abstract_eval("cummax", np.maximum.accumulate)
impl_rules[cummax_p] = cumulative_impl(np.maximum.accumulate, abstract_eval_rules[cummax_p])


def _running_extremum_tangent(t, out, x, *, axis, reverse):
    """The tangent of `x` where the running extremum was last attained (on a tie,
    the latest position), carried along the axis by a doubling scan: a position
    keeps its own tangent if it attains the extremum, else takes its predecessor's."""
    tangent, missing, step = select_n(eq(x, out), 0, t), ne(x, out), 1
    while step < get_aval(x).shape[axis]:
        tangent = add(tangent, select_n(missing, 0, _shift(tangent, step, axis, 0, reverse)))
        missing, step = and_(missing, _shift(missing, step, axis, True, reverse)), 2 * step
    return tangent


defjvp(cummax_p, _running_extremum_tangent)
# transpose: none, cummax is not linear
batch_rules[cummax_p] = cumulative_batch(cummax_p)

# ---------------------------------------------------------------------------------
cummin_p = Primitive("cummin")


def cummin(x: ArrayLike, axis: int = 0, reverse: bool = False) -> np.ndarray:
    return cummin_p.bind(x, **_scan_params(x, axis, reverse))


abstract_eval_rules[cummin_p] = cumulative_abstract_eval("cummin", np.minimum.accumulate)
impl_rules[cummin_p] = cumulative_impl(np.minimum.accumulate, abstract_eval_rules[cummin_p])
defjvp(cummin_p, _running_extremum_tangent)
# transpose: none, cummin is not linear
batch_rules[cummin_p] = cumulative_batch(cummin_p)
