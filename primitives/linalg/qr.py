"""QR decompositions: `qr`, numpy's batched Householder QR on stacks `(..., m, n)`.

Domain of the jvp: real matrices whose first min(m, n) columns have full rank (it
solves with their R). A wide matrix [X | Y] (m < n) has the Q of its square part X,
as Householder QR only reflects by the first m columns, and R = [R_X | Qᵀ Y]: its
tangent is X's, with Ṙ_Y = Q̇ᵀ Y + Qᵀ Ẏ (as JAX has it). The complete factors of a
tall matrix are not unique in their last m - n columns: they raise
NonDifferentiableError, as JAX refuses them. The signs of R's diagonal are LAPACK's,
which vary smoothly, so the tangent is that of the function numpy computes.

Complex matrices have JAX's rule: the transposes below are conjugate ones, and Ω's
diagonal is `i Im(diag(C))`, which keeps R's diagonal real, as LAPACK's is (its
reflectors make it so): then Q and R are unique again, and the tangent is that of
numpy's factors.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import NonDifferentiableError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import add, complex, imag, mul, sub
from ..shape.slicing import concatenate, slice
from ..shape.structural import checked_impl, expand_dims, moveaxis
from .cholesky import triangular_solve
from .matrices import diagonal, eye_like, matmul, matrix_aval, mH, tril

qr_p = Primitive("qr", multiple_results=True)


def qr(a, *, full_matrices: bool = False):
    """`(q, r)` of each matrix: `a = q r`, q with orthonormal columns, r upper
    triangular; `full_matrices` gives the square q of numpy's mode 'complete'."""
    return qr_p.bind(a, full_matrices=bool(full_matrices))


def qr_impl(a, *, full_matrices):
    return list(np.linalg.qr(a, mode="complete" if full_matrices else "reduced"))



def qr_abstract_eval(a, *, full_matrices):
    matrix_aval("qr", a, square=False, complex_ok=True)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)]


abstract_eval_rules[qr_p] = qr_abstract_eval
impl_rules[qr_p] = checked_impl(qr_impl, abstract_eval_rules[qr_p])


def qr_jvp(primals, tangents, *, full_matrices):
    (a,), (da,) = primals, tangents
    m, n = get_aval(a).shape[-2:]
    if full_matrices and m > n:
        raise NonDifferentiableError(
            f"qr: the complete factors of a tall {m}x{n} matrix are not unique, and have "
            "no derivative (as in JAX); use full_matrices=False").with_source(user_source_info())
    q, r = qr(a, full_matrices=full_matrices)
    if m >= n:
        return [q, r], list(_qr_tangents(q, r, da))
    square, rest = (_columns(x, 0, m) for x in (r, da)), _columns(a, m, n)
    dq, dr_square = _qr_tangents(q, *square)
    dr_rest = add(matmul(mH(dq), rest), matmul(mH(q), _columns(da, m, n)))
    return [q, r], [dq, concatenate([dr_square, dr_rest], get_aval(a).ndim - 1)]


def _qr_tangents(q, r, da):
    """With C = Qᴴ Ȧ R⁻¹ and Ω the skew-Hermitian matrix of C's strict lower triangle
    (and, complex, of the imaginary part of its diagonal): Q̇ = Q (Ω - C) + Ȧ R⁻¹ and
    Ṙ = (C - Ω) R (C - Ω is upper triangular, with a real diagonal)."""
    da_rinv = triangular_solve(r, da, left_side=False, lower=False)
    c = matmul(mH(q), da_rinv)
    below = tril(c, -1)
    omega = sub(below, mH(below))
    if get_aval(c).dtype.kind == "c":
        phases = complex(0.0, imag(diagonal(c)))
        omega = add(omega, mul(eye_like(c), expand_dims(phases, (get_aval(c).ndim - 2,))))
    return add(matmul(q, sub(omega, c)), da_rinv), matmul(sub(c, omega), r)


def _columns(x, start: int, stop: int):
    shape = get_aval(x).shape
    return slice(x, (0,) * len(shape), (*shape[:-1], stop)) if start == 0 else slice(
        x, (0,) * (len(shape) - 1) + (start,), shape)


jvp_rules[qr_p] = qr_jvp
# transpose: none, not linear


def qr_batch(vals, dims, *, full_matrices):
    (a,), (d,) = vals, dims
    return qr(moveaxis(a, d, 0), full_matrices=full_matrices), [0, 0]


batch_rules[qr_p] = qr_batch
