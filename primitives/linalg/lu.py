"""LU factorisations and general solves: `lu` and `solve`.

`lu` factors each square matrix of a stack `(..., n, n)` with partial pivoting,
`a[perm] = L U`, as LAPACK's getrf (scipy's `lu_factor`, which loops over a stack in
its own code: LAPACK has no batched LU); `solve` is numpy's batched gesv. `lu_solve`
solves with a factorisation: the two triangular solves after a permutation, which
is a product with a one-hot matrix, so that it transposes and batches like a matmul.

Why `solve` is a primitive rather than `lu_solve(lu(a), b)`: its jvp
`ẋ = A⁻¹ (ḃ - Ȧ x)` reuses one factorisation for the primal and the tangent, so the
backward pass keeps exactly the factor and its permutation (with A inactive), plus
the solution `x` (with A active): never `A`, an inverse, or the intermediate
solution that differentiating two triangular solves would keep.

Domains: real or complex square matrices (the rules are holomorphic: plain
transposes, as JAX's, no conjugates; `a` and `b` of one kind). A singular matrix has an
LU factorisation (with a zero on U's diagonal), but `solve` raises `LinAlgError`,
like numpy, and so does differentiating `lu` there (its jvp solves with U).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype, tangent_aval
from ...core.errors import LinAlgError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters import vector_math
from ...interpreters.ad import defjvp_zero, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.fusion_loops import native_rules
from ...interpreters.transpose import is_linear, transpose_rules
from ..elementwise import add, neg, sub
from ..shape.structural import checked_impl, matchaxis, moveaxis
from .cholesky import triangular_solve
from .matrices import (
    check_float,
    eye_like,
    fold_lanes,
    matmul,
    matrix_aval,
    mT,
    native_matrices,
    permutation_matrix,
    tril,
    triu,
    unfold_lanes,
)

lu_p = Primitive("lu", multiple_results=True)


def lu(a: ArrayLike) -> list[np.ndarray]:
    """`(lu, pivots, permutation)` of each matrix: `lu` holds L (unit diagonal, below)
    and U (on and above the diagonal), `pivots` the row swaps LAPACK made, and
    `permutation` their result: `a[permutation] = L U` (jax.lax.linalg.lu)."""
    return lu_p.bind(a)


def lu_impl(a):
    with warnings.catch_warnings():  # scipy warns of an exactly singular matrix
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        factors, pivots = scipy.linalg.lu_factor(a, check_finite=False)
    return [factors, pivots, permutation_of_pivots(pivots, np.shape(a)[-1])]


def permutation_of_pivots(pivots, size: int):
    """The permutation of `size` rows that LAPACK's row swaps (row i with row
    pivots[i], in turn) make, for a whole stack at once: one step per swap."""
    pivots = np.asarray(pivots)
    perm = np.broadcast_to(np.arange(size, dtype=np.int32), (*pivots.shape[:-1], size)).copy()
    rows = perm.reshape(-1, size)
    lanes = np.arange(rows.shape[0])
    for i, j in enumerate(pivots.reshape(rows.shape[0], -1).T):
        rows[lanes, i], rows[lanes, j] = rows[lanes, j], rows[lanes, i]
    return perm



def lu_abstract_eval(a):
    matrix_aval("lu", a, complex_ok=True)
    indices = ShapedArray(a.shape[:-1], np.dtype(np.int32))
    return [a.strong(), indices, indices]


abstract_eval_rules[lu_p] = lu_abstract_eval
impl_rules[lu_p] = checked_impl(lu_impl, abstract_eval_rules[lu_p])


def lu_jvp(primals, tangents):
    """With X = L⁻¹ P Ȧ U⁻¹: L̇ = L (X below the diagonal), U̇ = (X on and above it) U,
    packed like the factor. Two triangular solves, no inverse."""
    (a,), (da,) = primals, tangents
    factors, pivots, perm = lu(a)
    lower, upper = unit_lower(factors), triu(factors)
    permuted = matmul(permutation_matrix(perm, get_aval(a).dtype), da)
    y = triangular_solve(factors, permuted, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(factors, y, left_side=False, lower=False)
    d_factors = add(matmul(lower, tril(x, -1)), matmul(triu(x), upper))
    return [factors, pivots, perm], [d_factors, *(Zero(tangent_aval(get_aval(p)))
                                                  for p in (pivots, perm))]


jvp_rules[lu_p] = lu_jvp
# transpose: none, not linear


def lu_batch(vals, dims):
    (a,), (d,) = vals, dims
    return lu(moveaxis(a, d, 0)), [0, 0, 0]


batch_rules[lu_p] = lu_batch


def unit_lower(factors):
    """L of a packed factorisation: its strict lower triangle and ones on the diagonal."""
    return add(tril(factors, -1), eye_like(factors))


def lu_solve(factors, perm, b, trans: int = 0):
    """`x` with `a x = b` (`aᵀ x = b` if `trans`) from the factorisation of `a`,
    `b` a stack `(..., n, k)` like it."""
    p = permutation_matrix(perm, get_aval(factors).dtype)
    if trans:  # aᵀ = Uᵀ Lᵀ P
        y = triangular_solve(factors, b, left_side=True, lower=False, transpose_a=True)
        z = triangular_solve(factors, y, left_side=True, lower=True, transpose_a=True,
                             unit_diagonal=True)
        return matmul(mT(p), z)
    y = triangular_solve(factors, matmul(p, b), left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(factors, y, left_side=True, lower=False)


# ---------------------------------------------------------------------------------
lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> np.ndarray:
    """The permutation that `lu`'s row swaps make (jax.lax.linalg's function), for
    `lu_solve` from scipy's `(lu, piv)` pair."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def lu_pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
    if pivots.dtype.kind not in "iu" or pivots.ndim < 1 or \
            pivots.shape[-1] > permutation_size:
        raise ShapeError(f"lu_pivots_to_permutation: pivots must be integers (..., k) with "
                         f"k <= {permutation_size}, got {pivots.str_short()}")
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


abstract_eval_rules[lu_pivots_to_permutation_p] = lu_pivots_to_permutation_abstract_eval
impl_rules[lu_pivots_to_permutation_p] = checked_impl(
    lambda pivots, *, permutation_size: permutation_of_pivots(pivots, permutation_size),
    lu_pivots_to_permutation_abstract_eval)
defjvp_zero(lu_pivots_to_permutation_p)  # integers: no derivative
# transpose: none, not linear


def lu_pivots_to_permutation_batch(vals, dims, *, permutation_size):
    (pivots,), (d,) = vals, dims
    return [lu_pivots_to_permutation(moveaxis(pivots, d, 0), permutation_size)], [0]


batch_rules[lu_pivots_to_permutation_p] = lu_pivots_to_permutation_batch

# ---------------------------------------------------------------------------------
solve_p = Primitive("solve", operand_names=("a", "b"))


def solve(a, b):
    """`x` with `a @ x = b`, for stacks `a (..., n, n)` and `b (..., n, k)`."""
    return solve_p.bind(a, b)


def solve_impl(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"solve: singular matrix {np.shape(a)}") from None



def solve_abstract_eval(a, b):
    matrix_aval("solve", a, complex_ok=True)
    check_float("solve", a, b, complex_ok=True)
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ShapeError(f"solve: b {b.str_short()} must be a stack of ({a.shape[-1]}, k) "
                         f"matrices like a {a.str_short()}")
    return ShapedArray(b.shape, result_dtype(a.strong(), b.strong()))


abstract_eval_rules[solve_p] = solve_abstract_eval
impl_rules[solve_p] = checked_impl(solve_impl, abstract_eval_rules[solve_p])


def solve_native(fn, eqn, operands):
    """Inside a native loop: `vector_math`'s LU solve for a matrix of up to
    `vector_math.SMALL_SOLVE` rows (2-4x faster than numba's LAPACK call there), LAPACK's
    gesv through numba's binding above, where the operands are finite (numba's refuses
    an infinity or NaN, which numpy's passes on: the loop does too)."""
    if eqn.inputs[0].aval.shape[0] <= vector_math.SMALL_SOLVE:
        return ["small_solve({}, {})".format(*native_matrices(eqn, operands))]
    a, b = fn.assign(native_matrices(eqn, operands))
    return [f"np.linalg.solve({a}, {b}) if np.isfinite({a}).all() and np.isfinite({b}).all() "
            f"else small_solve({a}, {b})"]


native_rules[solve_p] = solve_native


def solve_jvp(primals, tangents):
    """x and ẋ = A⁻¹ (ḃ - Ȧ x), both from one LU factorisation of A."""
    (a, b), (da, db) = primals, tangents
    factors, _, perm = lu(a)
    x = lu_solve(factors, perm, b)
    rhs = db
    if type(da) is not Zero:
        rhs = neg(matmul(da, x)) if type(db) is Zero else sub(db, matmul(da, x))
    return [x], [lu_solve(factors, perm, rhs)]


jvp_rules[solve_p] = solve_jvp


def solve_transpose(ct, a, b):
    """Linear in `b` (the jvp emits triangular solves, but a linear program may hold a
    solve): x = A⁻¹ b transposes to b̄ = A⁻ᵀ x̄."""
    assert not is_linear(a), "solve is not linear in a"
    return [None, solve(mT(a), ct)]


transpose_rules[solve_p] = solve_transpose


def solve_batch(vals, dims):
    """One matrix for every lane: the lanes of `b` are more right-hand sides."""
    (a, b), (da, db) = vals, dims
    size = batch_size(vals, dims)
    if da is None:
        axis = get_aval(b).ndim - 2
        return [unfold_lanes(solve(a, fold_lanes(b, db, axis)), axis, size)], [axis]
    return [solve(moveaxis(a, da, 0), matchaxis(b, db, 0, size))], [0]


batch_rules[solve_p] = solve_batch
