"""Singular value decompositions: `svd`, numpy's batched LAPACK gesdd on `(..., m, n)`.

With `compute_uv=False` the output is the singular values alone, whose tangent
`ṡᵢ = uᵢᵀ Ȧ vᵢ` involves no gaps: exact at repeated singular values (norms `nuc` and
2 differentiate through it). Domain of the factors' tangent, `full_matrices=False`
(or square) only, as in JAX: with `Fᵢⱼ = 1/(sⱼ² - sᵢ²)` (0 where equal) and
`P = Uᵀ Ȧ V`, `U̇ = U (F ∘ (P S + S Pᵀ))` and `V̇ = V (F ∘ (S P + Pᵀ S))`, plus the
parts outside the span of U (tall) or V (wide), divided by s (0 where s is 0). So it
is finite everywhere, exact for functions invariant to rotations within subspaces
of equal singular values, large near them.

Complex matrices have JAX's rule: `P = Uᴴ Ȧ V`, `ṡ = Re diag(P)`, the transposes above
conjugate ones, and the imaginary part of `diag(P)` (a change of each pair's common
phase, `uᵢ → e^{iθ} uᵢ`, `vᵢ → e^{iθ} vᵢ`, leaves `a` alone) is given to U:
`U̇ += U diag(i Im(Pᵢᵢ) / sᵢ)`. LAPACK fixes those phases its own way, so only
functions invariant under them (`U diag(s) Vᴴ`, `|U|`, `U Vᴴ`, projectors) have a
derivative that matches finite differences of numpy's factors, as in JAX.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import NonDifferentiableError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules
from ..elementwise import add, complex, imag, mul, real, sub
from ..elementwise.complex_parts import real_dtype
from ..shape.structural import checked_impl, expand_dims, moveaxis
from .matrices import diagonal, matmul, matrix_aval, mH, pairs, safe_reciprocal

svd_p = Primitive("svd", multiple_results=True)


def svd(a, *, full_matrices: bool = True, compute_uv: bool = True):
    """`[s, u, vt]` (or `[s]` without `compute_uv`): `a = u diag(s) vt`, s descending."""
    return svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def svd_impl(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [np.linalg.svd(a, compute_uv=False)]
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return [s, u, vt]



def svd_abstract_eval(a, *, full_matrices, compute_uv):
    matrix_aval("svd", a, square=False, complex_ok=True)
    *batch, m, n = a.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, ku), a.dtype), ShapedArray((*batch, kv, n), a.dtype)]


abstract_eval_rules[svd_p] = svd_abstract_eval
impl_rules[svd_p] = checked_impl(svd_impl, abstract_eval_rules[svd_p])


def _factor_tangents(s, u, v, p, da):
    """U̇ and V̇ from the singular values, the reduced factors and P = Uᴴ Ȧ V."""
    m, n = get_aval(da).shape[-2:]
    s_i, s_j = pairs(s)
    f = safe_reciprocal(sub(mul(s_j, s_j), mul(s_i, s_i)))  # 0 for equal values
    du = matmul(u, mul(f, add(mul(p, s_j), mul(s_i, mH(p)))))
    dv = matmul(v, mul(f, add(mul(s_i, p), mul(mH(p), s_j))))
    inv_s = safe_reciprocal(expand_dims(s, (get_aval(s).ndim - 1,)))  # per column
    if get_aval(p).dtype.kind == "c":  # the pairs' common phases, given to U
        diag = diagonal(p)
        du = add(du, mul(u, mul(complex(0.0, imag(diag)), inv_s)))
    if m > n:  # the part of Ȧ V outside the span of U
        da_v = matmul(da, v)
        du = add(du, mul(sub(da_v, matmul(u, matmul(mH(u), da_v))), inv_s))
    if n > m:
        dah_u = matmul(mH(da), u)
        dv = add(dv, mul(sub(dah_u, matmul(v, matmul(mH(v), dah_u))), inv_s))
    return du, dv


def svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    m, n = get_aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NonDifferentiableError(
            f"svd: the derivative of the full factors of a {m}x{n} matrix is not defined "
            "(their extra columns are arbitrary); use full_matrices=False"
        ).with_source(user_source_info())
    s, u, vt = svd(a, full_matrices=False)
    v = mH(vt)
    p = matmul(mH(u), matmul(da, v))
    ds = diagonal(p)
    ds = real(ds) if get_aval(ds).dtype.kind == "c" else ds
    if not compute_uv:
        return [s], [ds]
    du, dv = _factor_tangents(s, u, v, p, da)
    return [s, u, vt], [ds, du, mH(dv)]


jvp_rules[svd_p] = svd_jvp
# transpose: none, not linear


def svd_batch(vals, dims, **params):
    (a,), (d,) = vals, dims
    outs = svd(moveaxis(a, d, 0), **params)
    return outs, [0] * len(outs)


batch_rules[svd_p] = svd_batch
