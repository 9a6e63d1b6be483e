"""Cholesky factors and triangular solves: `cholesky` and `triangular_solve`.

Both act on stacks of matrices `(..., n, n)` natively (numpy's cholesky is batched;
scipy's `solve_triangular` loops over a stack in its own Python code, LAPACK having
no batched triangular solve). Their batching rules move batch axes, never loop: a
triangular solve with one matrix and batched right-hand sides is one solve with more
columns.

Domains of the rules:

* `cholesky` reads the lower triangle only (LAPACK's potrf), and its jvp
  differentiates exactly that function: the tangent's upper triangle is ignored and
  its lower one mirrored. A matrix that is not positive definite gives NaNs, as in
  JAX (no error, no warning); so do its derivatives.
* `triangular_solve` reads one triangle of `a` (without the diagonal if
  `unit_diagonal`), and its jvp differentiates that triangle. A zero on the diagonal
  (a singular matrix) raises `LinAlgError`, as scipy does.
* `cholesky` takes real symmetric and complex Hermitian matrices (its rule conjugates
  where the Hermitian factor needs it: `lower_read`, the right solve with Lᴴ);
  `triangular_solve` complex ones too (holomorphic, like `solve`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype
from ...core.errors import LinAlgError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.fusion_loops import native_rules
from ...interpreters.transpose import is_linear, transpose_rules
from ...interpreters.vector_math import allocation
from ..elementwise import conj, eq, ge, mul, neg, select_n, sub
from ..shape.structural import checked_impl, matchaxis, moveaxis
from .matrices import (
    check_float,
    fold_lanes,
    lower_read,
    matmul,
    matrix_aval,
    mT,
    native_matrices,
    row_and_column_indices,
    tril,
    triu,
    unfold_lanes,
)

cholesky_p = Primitive("cholesky")


def cholesky(a):
    """The lower Cholesky factor `L` of each matrix, `a = L Lᵀ`, from `a`'s lower
    triangle (jax.lax.linalg.cholesky without symmetrizing)."""
    return cholesky_p.bind(a)


def cholesky_impl(a):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return _cholesky_or_nan(a)


def _cholesky_or_nan(a):
    """Some matrix of the stack is not positive definite: it gets NaNs (as in JAX), the
    others their factor. This failure path is the only one that loops over the stack."""
    a = np.asarray(a)
    flat = a.reshape(-1, *a.shape[-2:])
    out = np.full_like(flat, np.nan)
    for i, matrix in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            pass
    return out.reshape(a.shape)


abstract_eval_rules[cholesky_p] = lambda a: matrix_aval("cholesky", a, complex_ok=True).strong()
impl_rules[cholesky_p] = checked_impl(cholesky_impl, abstract_eval_rules[cholesky_p])


def cholesky_native(fn, eqn, operands):
    """Inside a native loop: `vector_math`'s Cholesky loop, NaNs where the matrix is not
    positive definite, as the impl gives (numba's `np.linalg.cholesky` raises there).
    At every size: a loop slower than LAPACK still beats running the loop's body from
    Python."""
    (a,) = native_matrices(eqn, operands)
    return [f"small_cholesky({a})"]


native_rules[cholesky_p] = cholesky_native


def _halved_lower_triangle(shape):
    """Φ's weights: 1 below the diagonal, 1/2 on it, 0 above (one product applies Φ)."""
    rows, cols = row_and_column_indices(shape)
    return select_n(ge(rows, cols), 0.0, select_n(eq(rows, cols), 1.0, 0.5))


def cholesky_jvp(primals, tangents):
    """L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ), Φ the lower triangle with the diagonal halved (Murray,
    2016), for the symmetric (Hermitian) matrix the lower triangle of Ȧ stands for. Two
    triangular solves and a product: no inverse is formed. For a complex L the right
    solve is with conj(L)ᵀ = Lᴴ (the solve's transpose does not conjugate, as JAX's
    does not)."""
    (a,), (da,) = primals, tangents
    l_factor = cholesky(a)
    y = triangular_solve(l_factor, lower_read(da), left_side=True, lower=True)
    if get_aval(l_factor).dtype.kind == "c":
        x = triangular_solve(conj(l_factor), y, left_side=False, lower=True,
                             transpose_a=True)
    else:
        x = triangular_solve(l_factor, y, left_side=False, lower=True, transpose_a=True)
    return [l_factor], [matmul(l_factor, mul(x, _halved_lower_triangle(get_aval(x).shape)))]



jvp_rules[cholesky_p] = cholesky_jvp
# transpose: none, not linear


def cholesky_batch(vals, dims):
    (a,), (d,) = vals, dims
    return [cholesky(moveaxis(a, d, 0))], [0]


batch_rules[cholesky_p] = cholesky_batch

# ---------------------------------------------------------------------------------
triangular_solve_p = Primitive("triangular_solve", operand_names=("a", "b"))


def triangular_solve(a, b, *, left_side: bool, lower: bool, transpose_a: bool = False,
                     unit_diagonal: bool = False):
    """`x` with `op(a) @ x = b` (`left_side`) or `x @ op(a) = b`, `op(a)` being `aᵀ` if
    `transpose_a`, for triangular `a` (its `lower` triangle, or upper) with the same
    leading axes as `b`."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   unit_diagonal=bool(unit_diagonal))


def triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    if left_side:
        return _solve_triangular(a, b, lower, transpose_a, unit_diagonal)
    # x op(a) = b is op(a)ᵀ xᵀ = bᵀ
    return np.swapaxes(_solve_triangular(a, np.swapaxes(b, -1, -2), lower, not transpose_a,
                                         unit_diagonal), -1, -2)


def _solve_triangular(a, b, lower, transpose_a, unit_diagonal):
    dtype = np.result_type(a, b)
    try:
        x = scipy.linalg.solve_triangular(a, b, trans=int(transpose_a), lower=lower,
                                          unit_diagonal=unit_diagonal, check_finite=False)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"triangular_solve: singular matrix {np.shape(a)} ({e}); "
                          "solve, inv and lu_solve of a singular matrix stop here") from None
    return np.asarray(x, dtype)


def triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    matrix_aval("triangular_solve", a, complex_ok=True)
    check_float("triangular_solve", a, b, complex_ok=True)
    m = a.shape[-1]
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or \
            b.shape[-2 if left_side else -1] != m:
        side = f"({m}, k)" if left_side else f"(k, {m})"
        raise ShapeError(f"triangular_solve: b {b.str_short()} must be a stack of {side} "
                         f"matrices like a {a.str_short()} (left_side={left_side})")
    return ShapedArray(b.shape, result_dtype(a.strong(), b.strong()))


abstract_eval_rules[triangular_solve_p] = triangular_solve_abstract_eval
impl_rules[triangular_solve_p] = checked_impl(triangular_solve_impl,
                                              triangular_solve_abstract_eval)


def triangular_solve_native(fn, eqn, operands, *, left_side, lower, transpose_a,
                            unit_diagonal):
    """Inside a native loop: `vector_math`'s substitution loop (numba binds no
    triangular solve); `x op(a) = b` is `op(a)ᵀ xᵀ = bᵀ`, whose solution's transpose is
    copied into a C-ordered array by loops (numba's `np.ascontiguousarray` is a
    function it compiles, 0.15-0.2 s)."""
    a, b = native_matrices(eqn, operands)
    if left_side:
        return [f"small_triangular_solve({a}, {b}, {lower}, {transpose_a}, {unit_diagonal})"]
    (solved,) = fn.assign([f"small_triangular_solve({a}, {b}.T, {lower}, {not transpose_a}, "
                           f"{unit_diagonal}).T"])
    out = eqn.outputs[0].aval
    (x,) = fn.assign([allocation(out.shape, out.dtype)])
    fn.copy(x, solved, out.shape)
    return [x]


native_rules[triangular_solve_p] = triangular_solve_native


def triangular_solve_jvp(primals, tangents, **params):
    """ẋ = solve(a, ḃ - op(ȧ) x) (or ḃ - x op(ȧ)): one more solve, with the triangle
    of ȧ that the solve reads."""
    (a, b), (da, db) = primals, tangents
    x = triangular_solve(a, b, **params)
    rhs = db
    if type(da) is not Zero:
        k = 1 if params["unit_diagonal"] else 0
        da = tril(da, -k) if params["lower"] else triu(da, k)
        op = mT(da) if params["transpose_a"] else da
        product = matmul(op, x) if params["left_side"] else matmul(x, op)
        rhs = neg(product) if type(db) is Zero else sub(db, product)
    return [x], [triangular_solve(a, rhs, **params)]


jvp_rules[triangular_solve_p] = triangular_solve_jvp


def triangular_solve_transpose(ct, a, b, *, transpose_a, **params):
    """Linear in `b`: x = op(a)⁻¹ b transposes to b̄ = op(a)⁻ᵀ x̄."""
    assert not is_linear(a), "triangular_solve is not linear in a"
    return [None, triangular_solve(a, ct, transpose_a=not transpose_a, **params)]


transpose_rules[triangular_solve_p] = triangular_solve_transpose


def triangular_solve_batch(vals, dims, **params):
    """One matrix for every lane: the lanes of `b` are more right-hand sides of one
    solve. Otherwise both stacks get the lanes first."""
    (a, b), (da, db) = vals, dims
    size = batch_size(vals, dims)
    if da is None:
        axis = get_aval(b).ndim - (2 if params["left_side"] else 3)
        x = triangular_solve(a, fold_lanes(b, db, axis), **params)
        return [unfold_lanes(x, axis, size)], [axis]
    return [triangular_solve(moveaxis(a, da, 0), matchaxis(b, db, 0, size), **params)], [0]


batch_rules[triangular_solve_p] = triangular_solve_batch
