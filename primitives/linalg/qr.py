"""QR decompositions: `qr`, numpy's batched Householder QR on stacks `(..., m, n)`.

Domain of the jvp: real matrices with m ≥ n and the reduced factors (or square
ones), of full column rank (it solves with R). The complete factors of a tall matrix
are not unique in their last m - n columns, and a wide matrix's Q depends on how its
first m columns were factored: both raise NonDifferentiableError, as JAX refuses
them. The signs of R's diagonal are LAPACK's, which vary smoothly, so the tangent is
that of the function numpy computes.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import NonDifferentiableError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import add, sub
from ..shape.structural import checked_impl, moveaxis
from .cholesky import triangular_solve
from .matrices import matmul, matrix_aval, mT, tril

qr_p = Primitive("qr", multiple_results=True)


def qr(a, *, full_matrices: bool = False):
    """`(q, r)` of each matrix: `a = q r`, q with orthonormal columns, r upper
    triangular; `full_matrices` gives the square q of numpy's mode 'complete'."""
    return qr_p.bind(a, full_matrices=bool(full_matrices))


def qr_impl(a, *, full_matrices):
    return list(np.linalg.qr(a, mode="complete" if full_matrices else "reduced"))



def qr_abstract_eval(a, *, full_matrices):
    matrix_aval("qr", a, square=False)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)]


abstract_eval_rules[qr_p] = qr_abstract_eval
impl_rules[qr_p] = checked_impl(qr_impl, abstract_eval_rules[qr_p])


def qr_jvp(primals, tangents, *, full_matrices):
    """With C = Qᵀ Ȧ R⁻¹ and Ω the skew-symmetric matrix of C's strict lower triangle:
    Q̇ = Q (Ω - C) + Ȧ R⁻¹ and Ṙ = (C - Ω) R (C - Ω is upper triangular)."""
    (a,), (da,) = primals, tangents
    m, n = get_aval(a).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NonDifferentiableError(
            f"qr: the derivative needs m >= n and reduced factors, got a matrix {m}x{n}"
            f"{' with full_matrices=True' if full_matrices else ''}"
        ).with_source(user_source_info())
    q, r = qr(a, full_matrices=full_matrices)
    da_rinv = triangular_solve(r, da, left_side=False, lower=False)
    c = matmul(mT(q), da_rinv)
    below = tril(c, -1)
    omega = sub(below, mT(below))
    dq = add(matmul(q, sub(omega, c)), da_rinv)
    dr = matmul(sub(c, omega), r)
    return [q, r], [dq, dr]


jvp_rules[qr_p] = qr_jvp
# transpose: none, not linear


def qr_batch(vals, dims, *, full_matrices):
    (a,), (d,) = vals, dims
    return qr(moveaxis(a, d, 0), full_matrices=full_matrices), [0, 0]


batch_rules[qr_p] = qr_batch
