"""General eigendecompositions: `eig`, numpy's batched LAPACK geev on stacks `(..., n, n)`
of real or complex matrices, whose eigenvalues and eigenvectors are complex (for real
input too, as in JAX).

The tangent (JAX's rule): with `R = V⁻¹ Ȧ V` (one solve with V), the eigenvalues'
is `diag(R)` and the eigenvectors' `V (F ∘ R)`, `Fᵢⱼ = 1/(λⱼ - λᵢ)` (0 for equal
eigenvalues, as `eigh`'s), less each vector's component along itself that would change
its length (numpy's eigenvectors have unit norm): `V̇ -= V Re(diag(Vᴴ V̇))`. Their
phase is LAPACK's, so only functions of V invariant under a phase per eigenvector
(`|vᵢ|`, projectors) have a derivative that means anything, as in JAX.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import conj, mul, real, sub
from ..shape.structural import (
    checked_impl,
    convert_element_type,
    expand_dims,
    moveaxis,
    reduce_sum,
)
from .lu import solve
from .matrices import diagonal, matmul, pairs, safe_reciprocal

eig_p = Primitive("eig", multiple_results=True)


def eig(a):
    """`(w, v)`: the eigenvalues and eigenvectors (columns of v, unit norm) of each
    square matrix, complex."""
    return eig_p.bind(a)


def eig_abstract_eval(a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.dtype.kind not in "fc":
        raise ShapeError(f"eig: needs a square floating-point or complex matrix (..., n, n), "
                         f"got {a.str_short()}")
    dtype = np.result_type(a.dtype, np.complex64)
    return [ShapedArray(a.shape[:-1], dtype), ShapedArray(a.shape, dtype)]


def eig_impl(a):
    w, v = np.linalg.eig(a)
    dtype = eig_abstract_eval(get_aval(a))[0].dtype
    return [w.astype(dtype, copy=False), v.astype(dtype, copy=False)]


abstract_eval_rules[eig_p] = eig_abstract_eval
impl_rules[eig_p] = checked_impl(eig_impl, eig_abstract_eval)


def eig_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    w, v = eig(a)
    rotated = solve(v, matmul(convert_element_type(da, get_aval(v).dtype), v))
    w_i, w_j = pairs(w)
    dv = matmul(v, mul(safe_reciprocal(sub(w_j, w_i)), rotated))
    along = real(reduce_sum(mul(conj(v), dv), (get_aval(v).ndim - 2,)))
    ndim = get_aval(v).ndim
    dv = sub(dv, mul(v, convert_element_type(_as_row(along, ndim), get_aval(v).dtype)))
    return [w, v], [diagonal(rotated), dv]


def _as_row(x, ndim: int):
    """A stack of vectors (..., n) as rows (..., 1, n), to scale each column."""
    return expand_dims(x, (ndim - 2,))


jvp_rules[eig_p] = eig_jvp
# transpose: none, not linear


def eig_batch(vals, dims):
    (a,), (d,) = vals, dims
    return eig(moveaxis(a, d, 0)), [0, 0]


batch_rules[eig_p] = eig_batch
