"""`inert.lax.linalg`: jax.lax.linalg's decompositions, each one primitive.

Names, signatures and defaults are JAX's (`triangular_solve` solves `x @ op(a) = b`
unless `left_side`, with an upper `a` unless `lower`). `symmetrize_input` replaces
the matrix by (a + aᵀ)/2 before factoring, as JAX does by default; without it one
triangle is read. Real matrices, and complex ones where the primitives take them.
"""

from __future__ import annotations

from ...core.typing import ArrayLike
from ...primitives.elementwise import conj
from ...primitives.elementwise.complex_parts import is_complex
from ...primitives.linalg import cholesky as _cholesky
from ...primitives.linalg import eigh as _eigh
from ...primitives.linalg import svd as _svd
from ...primitives.linalg.lu import lu, lu_pivots_to_permutation
from ...primitives.linalg.matrices import symmetrize as _symmetrize
from ...primitives.linalg.qr import qr as _qr
from ..numpy._array import Array, return_arrays_from

__all__ = ["cholesky", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd",
           "triangular_solve"]


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor of each matrix; NaNs where it is not positive definite."""
    return _cholesky.cholesky(_symmetrize(x) if symmetrize_input else x)


def triangular_solve(a: ArrayLike, b: ArrayLike, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """`x` with `op(a) @ x = b` (`left_side`) or `x @ op(a) = b`."""
    if conjugate_a and is_complex(a):
        a = conj(a)
    return _cholesky.triangular_solve(a, b, left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def eigh(x: ArrayLike, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True) -> tuple[Array, Array]:
    """`(v, w)`: eigenvectors as columns and ascending eigenvalues (LAPACK sorts them)."""
    del sort_eigenvalues  # always sorted
    v, w = _eigh.eigh(_symmetrize(x) if symmetrize_input else x, lower=lower)
    return v, w


def qr(x: ArrayLike, *, full_matrices: bool = True) -> tuple[Array, Array]:
    """`(q, r)`, complete by default as in jax.lax.linalg."""
    q, r = _qr(x, full_matrices=full_matrices)
    return q, r


def svd(x: ArrayLike, *, full_matrices: bool = True,
        compute_uv: bool = True) -> Array | tuple[Array, Array, Array]:
    """`(u, s, vh)`, or the singular values alone without `compute_uv`."""
    if not compute_uv:
        return _svd.svd(x, full_matrices=full_matrices, compute_uv=False)[0]
    s, u, vh = _svd.svd(x, full_matrices=full_matrices)
    return u, s, vh


# Eager results are immutable Arrays, as inert.numpy's are (see api/numpy/_array).
return_arrays_from(globals(), __all__)


def __dir__():
    return __all__
