"""`inert.scipy.linalg`: the scipy.linalg subset, on inert's linalg primitives.

Names and signatures are scipy's (and jax.scipy.linalg's); `overwrite_*` and
`check_finite` are accepted and ignored (inert never overwrites, and NaNs propagate
as in JAX). Unlike `inert.numpy.linalg`, these read one triangle of a symmetric
matrix, as LAPACK does (`lower`), instead of symmetrizing it.

Complex matrices are taken wherever the primitives take them (Hermitian ones for the
Cholesky and eigh routines), with scipy's conjugate transposes (`trans='C'`, `trans=2`,
`a = Uᴴ U`).

A factorisation is a value like any other: `cho_factor`/`lu_factor` of an inactive
matrix runs once in the forward pass, and `cho_solve`/`lu_solve` keep only the
factor for the backward pass (by reference if it is an input).
"""

from __future__ import annotations

import numpy as np

from ...core.trace import get_aval
from ...core.typing import ArrayLike
from ...primitives.linalg import cholesky as ch
from ...primitives.linalg import eigh as eg
from ...primitives.linalg import expm as ex
from ...primitives.linalg import lu as lu_prims
from ...primitives.linalg import sylvester as sy
from ...primitives.linalg.matrices import mH, mT, permutation_matrix, triu
from ...primitives.shape import structural as st
from ..numpy._array import Array, return_arrays_from
from ..numpy._arrays import cast, concatenate, conj_if_complex, operand, shape_error, zeros
from ..numpy._dot import matmul
from ..numpy._ufuncs import where
from ..numpy.linalg import _linalg as nl

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm",
    "expm_frechet", "inv", "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_banded",
    "solve_sylvester", "solve_triangular", "sqrtm", "svd",
]


def _as_columns(name: str, factor, b):
    """The matrix and `b` of one dtype (complex if either is), `b` as a stack of columns
    `(..., n, k)` fitting the matrix, and whether it was one vector."""
    factor, b = nl.float_matrices(name, factor, b, min_ndim=0, complex_ok=True)
    n, shape = get_aval(factor).shape[-1], get_aval(b).shape
    vector = len(shape) == get_aval(factor).ndim - 1
    columns = st.reshape(b, (*shape, 1)) if vector else b
    if get_aval(columns).shape[:-1] != get_aval(factor).shape[:-1]:
        raise shape_error(f"{name}: b of shape {shape} does not fit a matrix of shape "
                             f"{get_aval(factor).shape} (n = {n})")
    return factor, columns, vector


def _restore(x, vector: bool):
    return st.reshape(x, get_aval(x).shape[:-1]) if vector else x


def cholesky(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor, upper (`a = Uᴴ U`, from the upper triangle) by default, as
    scipy; NaNs if `a` is not positive definite, as in JAX."""
    a = nl.float_matrices("cholesky", a, complex_ok=True)
    return ch.cholesky(a) if lower else mH(ch.cholesky(mH(a)))


def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """`(c, lower)` for `cho_solve`; c is triangular (zeros in the other triangle)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """`x` with `a x = b` from `cho_factor(a)`: two triangular solves with the factor."""
    c, lower = c_and_lower
    c = nl.float_matrices("cho_solve", c, complex_ok=True)
    c, columns, vector = _as_columns("cho_solve", c, b)
    # a = L Lᴴ: solve with L, then Lᴴ; a = Uᴴ U: with Uᴴ, then U (the same two solves);
    # a solve with Lᴴ is one with conj(L), transposed
    y = ch.triangular_solve(c if lower else conj_if_complex(c), columns, left_side=True,
                            lower=lower, transpose_a=not lower)
    x = ch.triangular_solve(conj_if_complex(c) if lower else c, y, left_side=True, lower=lower,
                            transpose_a=lower)
    return _restore(x, vector)


def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: None = None, check_finite: bool = True) -> Array:
    """`x` with `op(a) x = b` for the `lower` (else upper) triangle of `a`; `trans` 0
    or 'N' (op(a) = a), 1 or 'T' (aᵀ), 2 or 'C' (aᴴ)."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"solve_triangular: invalid trans {trans!r}")
    a = nl.float_matrices("solve_triangular", a, complex_ok=True)
    a, columns, vector = _as_columns("solve_triangular", a, b)
    a = conj_if_complex(a) if trans in (2, "C") else a
    x = ch.triangular_solve(a, columns, left_side=True, lower=lower,
                            transpose_a=trans not in (0, "N"), unit_diagonal=unit_diagonal)
    return _restore(x, vector)


def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Array, ...]:
    """`(p, l, u)` with `a = p @ l @ u` (`(p @ l, u)` if `permute_l`)."""
    a = nl.float_matrices("lu", a, complex_ok=True)
    factors, _, perm = lu_prims.lu(a)
    p = mT(permutation_matrix(perm, get_aval(a).dtype))
    lower = lu_prims.unit_lower(factors)
    if permute_l:
        return matmul(p, lower), triu(factors)
    return p, lower, triu(factors)


def lu_factor(a: ArrayLike, overwrite_a: bool = False,
              check_finite: bool = True) -> tuple[Array, Array]:
    """`(lu, piv)`: L and U packed, and LAPACK's row swaps, as scipy."""
    a = nl.float_matrices("lu_factor", a, complex_ok=True)
    factors, pivots, _ = lu_prims.lu(a)
    return factors, pivots


def lu_solve(lu_and_piv: tuple[ArrayLike, ArrayLike], b: ArrayLike, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """`x` with `a x = b` (`aᵀ x = b` for trans 1, `aᴴ x = b` for 2) from
    `lu_factor(a)`: conj(a)'s factors are the conjugates of a's."""
    factors, piv = lu_and_piv
    factors = nl.float_matrices("lu_solve", factors, complex_ok=True)
    factors, columns, vector = _as_columns("lu_solve", factors, b)
    factors = conj_if_complex(factors) if trans == 2 else factors
    perm = lu_prims.lu_pivots_to_permutation(piv, get_aval(factors).shape[-1])
    return _restore(lu_prims.lu_solve(factors, perm, columns, trans=int(trans in (1, 2))),
                    vector)


_GENERAL = ("gen", "general", "sym", "symmetric", "her", "hermitian")
_POSITIVE = ("pos", "positive definite")


def solve(a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: None = None,
          check_finite: bool = True, assume_a: str = "gen", transposed: bool = False) -> Array:
    """`x` with `a x = b` (`aᵀ x = b` if `transposed`): by LU for a general or
    symmetric matrix, by Cholesky for `assume_a='pos'` (from its `lower` triangle,
    else the upper one)."""
    a = nl.float_matrices("solve", a, complex_ok=True)
    if transposed:
        a = mT(a)
    if assume_a in _POSITIVE:
        return cho_solve(cho_factor(a, lower=lower), b)
    if assume_a not in _GENERAL:
        raise NotImplementedError(f"solve: assume_a={assume_a!r} is not supported "
                                  "('gen', 'sym', 'her' and 'pos' are)")
    a, columns, vector = _as_columns("solve", a, b)
    return _restore(nl.solve(a, columns), vector)


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse of a square matrix (or a stack), as scipy's; `overwrite_a` and
    `check_finite` are accepted and change nothing (inert's arrays are immutable). A
    singular matrix raises `LinAlgError`."""
    return nl.inv(a)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant of a square matrix (or a stack), by LU as scipy's; `overwrite_a` and
    `check_finite` are accepted and change nothing."""
    return nl.det(a)


def eigh(a: ArrayLike, b: ArrayLike | None = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False,
         type: int = 1, check_finite: bool = True, subset_by_index: None = None,
         subset_by_value: None = None,  # noqa: A002
         driver: str | None = None) -> Array | tuple[Array, Array]:
    """`(w, v)` (or `w` alone) of a symmetric matrix, from its `lower` triangle (else
    the upper one). The eigenvalues alone have a derivative free of gap divisions."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise NotImplementedError("eigh: generalized and subset problems are not supported")
    a = nl.float_matrices("eigh", a, complex_ok=True)
    if eigvals_only:
        return eg.eigvalsh(a, lower=lower)
    v, w = eg.eigh(a, lower=lower)
    return w, v


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Array | tuple[Array, Array, Array]:
    """`(U, s, Vh)`, or `s` alone without `compute_uv`."""
    out = nl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def qr(a: ArrayLike, overwrite_a: bool = False, lwork: None = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Array, ...]:
    """`(Q, R)` for mode 'full' (complete) or 'economic' (reduced); `(R,)` for 'r',
    the complete R: the reduced one and rows of zeros, so differentiable."""
    if pivoting or mode not in ("full", "economic", "r"):
        raise NotImplementedError(f"qr: mode={mode!r}, pivoting={pivoting} is not supported")
    if mode != "r":
        return tuple(nl.qr(a, mode="complete" if mode == "full" else "reduced"))
    r = nl.qr(a, mode="r")
    *batch, k, n = get_aval(r).shape
    m = get_aval(operand(a)).shape[-2]
    return (concatenate([r, zeros((*batch, m - k, n), get_aval(r).dtype)], axis=-2),)


def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:  # noqa: N803 — scipy's name
    """The matrix exponential (scipy's Padé approximation with scaling and squaring);
    its derivative is the exact Fréchet derivative, and it keeps only `A`."""
    return ex.expm(nl.float_matrices("expm", A, complex_ok=True))


def expm_frechet(A: ArrayLike, E: ArrayLike, method: str | None = None, compute_expm: bool = True,
                 check_finite: bool = True) -> Array | tuple[Array, Array]:  # noqa: N803
    """`(expm(A), L(A, E))`, or the Fréchet derivative `L(A, E)` alone."""
    A, E = nl.float_matrices("expm_frechet", A, E, complex_ok=True)  # noqa: N806
    frechet = ex.expm_frechet(A, E)
    return (ex.expm(A), frechet) if compute_expm else frechet


def sqrtm(A: ArrayLike, disp: bool = True, blocksize: int = 64) -> Array:  # noqa: N803 — scipy's name
    """The principal square root (scipy's); its derivative solves X Ẋ + Ẋ X = Ȧ, so the
    backward pass keeps the root alone. A matrix without a real root (an eigenvalue
    below 0) raises LinAlgError: complex results are not supported."""
    return sy.sqrtm(nl.float_matrices("sqrtm", A))


def solve_sylvester(a: ArrayLike, b: ArrayLike, q: ArrayLike) -> Array:
    """X with a X + X b = q (scipy's Bartels–Stewart), differentiable in all three."""
    a, b = nl.float_matrices("solve_sylvester", a, b)
    q = nl.float_matrices("solve_sylvester", q, square=False)
    return sy.solve_sylvester(a, b, q)


def solve_banded(l_and_u: tuple[int, int], ab: ArrayLike, b: ArrayLike, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """x with a x = b for the banded a that scipy's `ab` stores (`ab[u + i - j, j] ==
    a[i, j]`): the dense matrix is gathered from the bands and solved by LU, so it
    costs O(n^3) (scipy's banded solver O(n (l + u)^2)); the derivative reaches `ab`
    through the gather, zero outside the bands."""
    lower, upper = (int(k) for k in l_and_u)
    ab = nl.float_matrices("solve_banded", ab, square=False, complex_ok=True)
    rows, n = get_aval(ab).shape
    if rows != lower + upper + 1:
        raise shape_error(f"solve_banded: ab must have l + u + 1 = {lower + upper + 1} rows "
                          f"for (l, u) = {(lower, upper)}, got {get_aval(ab).shape}")
    i, j = np.indices((n, n))
    band = upper + i - j
    inside = (band >= 0) & (band < rows)
    dense = where(inside, ab[np.clip(band, 0, rows - 1), j], 0.0)
    return solve(dense, b)


def block_diag(*arrs: ArrayLike) -> Array:
    """The arrays on the diagonal of a matrix of zeros (scalars and vectors as 1-row
    matrices, as scipy)."""
    if not arrs:
        return np.zeros((1, 0))
    blocks = [_as_block(operand(a)) for a in arrs]
    dtype = np.result_type(*(get_aval(b).dtype for b in blocks))
    widths = [get_aval(b).shape[1] for b in blocks]
    rows, start = [], 0
    for block, width in zip(blocks, widths):
        height = get_aval(block).shape[0]
        parts = [zeros((height, start), dtype), cast(block, dtype),
                 zeros((height, sum(widths) - start - width), dtype)]
        rows.append(concatenate(parts, axis=1))
        start += width
    return concatenate(rows, axis=0)


def _as_block(a):
    shape = get_aval(a).shape
    if len(shape) > 2:
        raise shape_error(f"block_diag: arrays must have at most 2 dimensions, got {shape}")
    return st.reshape(a, (1, shape[0]) if len(shape) == 1 else (1, 1) if not shape else shape)


# Eager results are immutable Arrays, as inert.numpy's are (see api/numpy/_array).
return_arrays_from(globals(), __all__)


def __dir__():
    return __all__

