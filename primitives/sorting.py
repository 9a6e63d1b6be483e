"""Sorting: `sort` gives the sorted values and the permutation that sorts them.

Its derivative is a gather of the tangent by that permutation (sorting is linear in
the values once the order is fixed, and piecewise constant in it), so the backward
pass keeps only the integer permutation and scatters the cotangent back through it.
argsort, median, quantiles, partitions and `unique` are built on it in inert.numpy.
NaNs sort last, as in numpy; ties keep their order (a stable sort).
"""

from __future__ import annotations

import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray, tangent_aval
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules, batched_axis
from .indexing.gather_scatter import gather
from .shape.structural import check_axes

sort_p = Primitive("sort", multiple_results=True)


def sort(x, axis: int):
    """(sorted values, permutation) along `axis` (non-negative)."""
    return sort_p.bind(x, axis=axis)


def sort_impl(x, *, axis):
    perm = np.argsort(x, axis=axis, kind="stable")
    return [np.take_along_axis(np.asarray(x), perm, axis), perm.astype(np.int64)]


impl_rules[sort_p] = sort_impl


def sort_abstract_eval(x, *, axis):
    check_axes("sort", (axis,), x)
    return [x, ShapedArray(x.shape, np.dtype(np.int64))]


abstract_eval_rules[sort_p] = sort_abstract_eval


def take_along(x, perm, axis: int):
    """x[..., perm, ...] along `axis`, the other axes kept by broadcasting iotas: a
    gather, which is linear in x and transposes to a scatter-add."""
    shape = get_aval(perm).shape
    index = [perm if i == axis else
             np.arange(d).reshape([d if j == i else 1 for j in range(len(shape))])
             for i, d in enumerate(shape)]
    return gather(x, *index, axes=tuple(range(len(shape))))


def sort_jvp(primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    values, perm = sort(x, axis)
    perm_tangent = Zero(tangent_aval(get_aval(perm)))
    if type(t) is Zero:
        return [values, perm], [t, perm_tangent]
    return [values, perm], [take_along(t, perm, axis), perm_tangent]


jvp_rules[sort_p] = sort_jvp
# transpose: none, sorting is not linear in the values (the order depends on them)


def sort_batch(vals, dims, *, axis):
    (x,), (d,) = vals, dims
    return sort(x, batched_axis(axis, d)), [d, d]


batch_rules[sort_p] = sort_batch
