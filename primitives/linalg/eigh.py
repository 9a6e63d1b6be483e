"""Symmetric eigendecompositions: `eigh` (eigenvectors and eigenvalues) and
`eigvalsh` (eigenvalues only), numpy's batched LAPACK syevd on stacks `(..., n, n)`.

Both read one triangle of the matrix (`lower`, else the upper one), and their jvps
differentiate exactly that function. Domains:

* The eigenvalues' tangent is `ẇᵢ = vᵢᵀ Ȧ vᵢ`: no eigenvalue gap appears in it, so it
  is exact at repeated eigenvalues (the gradient of `sum(w)` is I, that of `sum(w²)`
  is 2A, whatever the multiplicities). `eigvalsh` has only this rule; `eigh`'s
  eigenvalue output uses it too, and in reverse mode the eigenvector tangent is
  dropped when the eigenvectors are not used.
* The eigenvectors' tangent `V̇ = V (F ∘ Vᵀ Ȧ V)`, `Fᵢⱼ = 1/(wⱼ - wᵢ)`, is not defined
  at repeated eigenvalues (any rotation within an eigenspace is an eigenbasis). The
  rule takes `Fᵢⱼ = 0` for equal eigenvalues: exact for functions of V invariant
  under those rotations (projectors onto whole eigenspaces), finite but arbitrary
  for the rest, where JAX gives inf/NaN. Close eigenvalues give large tangents.
* The signs of the eigenvectors are LAPACK's; they vary smoothly, so the tangent is
  that of the function numpy computes (for a complex Hermitian matrix, the phases:
  only functions invariant under each vector's phase have a meaningful derivative).
  Real symmetric and complex Hermitian matrices; the eigenvalues are real.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import conj, mul, real, sub
from ..elementwise.complex_parts import real_dtype
from ..shape.structural import checked_impl, moveaxis, reduce_sum
from .matrices import lower_read, matmul, matrix_aval, mH, mT, pairs, safe_reciprocal

eigh_p = Primitive("eigh", multiple_results=True)


def eigh(a, *, lower: bool = True):
    """`(v, w)`: eigenvectors (columns of v) and ascending eigenvalues of each
    symmetric matrix, from its lower triangle (upper if not `lower`)."""
    return eigh_p.bind(a, lower=bool(lower))


def eigh_impl(a, *, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return [v, w]



def eigh_abstract_eval(a, *, lower):
    matrix_aval("eigh", a, complex_ok=True)
    return [a.strong(), ShapedArray(a.shape[:-1], real_dtype(a.dtype))]


abstract_eval_rules[eigh_p] = eigh_abstract_eval
impl_rules[eigh_p] = checked_impl(eigh_impl, abstract_eval_rules[eigh_p])


def read_triangle(x, lower: bool):
    """The symmetric matrix that a routine reading one triangle of `x` sees."""
    return lower_read(x) if lower else mT(lower_read(mT(x)))


def eigenvalue_tangent(v, d_sym):
    """ẇᵢ = vᵢᴴ Ȧ vᵢ for each eigenvector, from the symmetric (Hermitian) tangent: no
    gaps; real."""
    along = reduce_sum(mul(_conj(v), matmul(d_sym, v)), (get_aval(v).ndim - 2,))
    return real(along) if get_aval(v).dtype.kind == "c" else along


def _conj(x):
    return conj(x) if get_aval(x).dtype.kind == "c" else x


def eigh_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    v, w = eigh(a, lower=lower)
    d_sym = read_triangle(da, lower)
    rotated = matmul(mH(v), matmul(d_sym, v))
    w_i, w_j = pairs(w)
    gaps = safe_reciprocal(sub(w_j, w_i))  # 0 for equal eigenvalues
    dv = matmul(v, mul(gaps, rotated))
    return [v, w], [dv, eigenvalue_tangent(v, d_sym)]


jvp_rules[eigh_p] = eigh_jvp
# transpose: none, not linear


def eigh_batch(vals, dims, *, lower):
    (a,), (d,) = vals, dims
    return eigh(moveaxis(a, d, 0), lower=lower), [0, 0]


batch_rules[eigh_p] = eigh_batch

# ---------------------------------------------------------------------------------
eigvalsh_p = Primitive("eigvalsh")


def eigvalsh(a, *, lower: bool = True):
    """The ascending eigenvalues of each symmetric matrix, from one triangle."""
    return eigvalsh_p.bind(a, lower=bool(lower))


abstract_eval_rules[eigvalsh_p] = lambda a, *, lower: eigh_abstract_eval(a, lower=lower)[1]
impl_rules[eigvalsh_p] = checked_impl(
    lambda a, *, lower: np.linalg.eigvalsh(a, UPLO="L" if lower else "U"),
    abstract_eval_rules[eigvalsh_p])


def eigvalsh_jvp(primals, tangents, *, lower):
    """The eigenvalue part of eigh's rule alone: the eigenvectors are computed (they
    are the tangent's coefficients) but never differentiated."""
    (a,), (da,) = primals, tangents
    v, w = eigh(a, lower=lower)
    return [w], [eigenvalue_tangent(v, read_triangle(da, lower))]


jvp_rules[eigvalsh_p] = eigvalsh_jvp


def eigvalsh_batch(vals, dims, *, lower):
    (a,), (d,) = vals, dims
    return [eigvalsh(moveaxis(a, d, 0), lower=lower)], [0]


batch_rules[eigvalsh_p] = eigvalsh_batch
