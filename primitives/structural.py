"""Structural primitives: change the layout of an array, not its values.

All of them are linear. `reduce_sum` lives here, not with the reductions, because it
is the transpose of `broadcast_in_dim` (and the other way round), and the elementwise
family needs both to undo numpy broadcasting in its transposes (`unbroadcast`).
"""

from __future__ import annotations

import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray, is_float, tangent_aval
from ..core.errors import ShapeError
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..interpreters.ad import deflinear, jvp_rules
from ..interpreters.partial_eval import def_recomputable
from ..interpreters.transpose import transpose_rules

# ---------------------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast `x` to `shape`; axis i of `x` becomes axis `broadcast_dimensions[i]`."""
    return broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for axis, dim in zip(broadcast_dimensions, np.shape(x)):
        expanded[axis] = dim
    return np.broadcast_to(np.reshape(x, expanded), shape)


impl_rules[broadcast_in_dim_p] = broadcast_in_dim_impl


def broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions):
    fits = len(broadcast_dimensions) == x.ndim and all(
        0 <= d < len(shape) and x.shape[i] in (1, shape[d])
        for i, d in enumerate(broadcast_dimensions))
    if not fits or list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim: cannot broadcast {x.str_short()} to {shape} with "
                         f"broadcast_dimensions={broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


abstract_eval_rules[broadcast_in_dim_p] = broadcast_in_dim_abstract_eval
deflinear(broadcast_in_dim_p)


def broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    return [unbroadcast_to(ct, x.aval, broadcast_dimensions)]


transpose_rules[broadcast_in_dim_p] = broadcast_in_dim_transpose
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
def_recomputable(reshape_p)

# ---------------------------------------------------------------------------------
reduce_sum_p = Primitive("reduce_sum")


def reduce_sum(x, axes):
    return reduce_sum_p.bind(x, axes=tuple(sorted(int(a) for a in axes)))


impl_rules[reduce_sum_p] = lambda x, *, axes: np.sum(x, axis=axes)


def reduce_sum_abstract_eval(x, *, axes):
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"reduce_sum: axes {axes} out of range for {x.str_short()}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    dtype = np.sum(np.zeros((1,), x.dtype)).dtype  # numpy's accumulator (bool -> int64)
    return ShapedArray(shape, dtype, x.weak_type)


abstract_eval_rules[reduce_sum_p] = reduce_sum_abstract_eval
deflinear(reduce_sum_p)


def reduce_sum_transpose(ct, x, *, axes):
    kept = [i for i in range(x.aval.ndim) if i not in axes]
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


transpose_rules[reduce_sum_p] = reduce_sum_transpose

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
