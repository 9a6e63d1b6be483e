"""numpy.linalg's decompositions and solves on inert values (the norms are in
`_norms`), with jax.numpy.linalg's names, signatures and result tuples.

Everything is a composition of the linalg primitives, so derivatives, batching and
activity come from their rules: `solve` with an inactive matrix factors it once in
the forward pass and keeps only the factor; `det`, `slogdet` and `inv` go through
one LU factorisation; `pinv`, `lstsq`, `matrix_rank` and `cond` through an SVD.

Checks happen here, so errors name the function the user called: matrices must be
square where numpy requires it (a ShapeError with the shapes and the user's line),
integers become float64 as in numpy, and complex matrices are refused by the
functions whose rules do not take them yet (`tensorsolve`, `tensorinv`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ....core.errors import DTypeError
from ....core.trace import get_aval, user_source_info
from ....core.typing import ArrayLike, DTypeLike
from ....primitives import elementwise as ew
from ....primitives import reductions as red
from ....primitives.linalg import cholesky as ch
from ....primitives.linalg import eig as eig_prims
from ....primitives.linalg import eigh as eg
from ....primitives.linalg import lu as lu_prims
from ....primitives.linalg import svd as svd_prims
from ....primitives.linalg.matrices import diagonal as diagonals
from ....primitives.linalg.matrices import mH, mT, symmetrize
from ....primitives.linalg.qr import qr as qr_prim
from ....primitives.shape import structural as st
from .._array import Array
from .._arrays import (
    abs_squared,
    broadcast_shapes,
    broadcast_to,
    cast,
    eye,
    ndim,
    operand,
    promote,
    shape,
    shape_error,
)
from .._dot import matmul
from .._dot import outer as _outer
from .._reductions import sum as _sum
from .._shape import diagonal as _diagonal


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class SVDResult(NamedTuple):
    U: Array  # noqa: N815 — numpy's field names
    S: Array  # noqa: N815
    Vh: Array  # noqa: N815


class QRResult(NamedTuple):
    Q: Array  # noqa: N815
    R: Array  # noqa: N815


def float_matrices(name: str, *arrays, square: bool = True, min_ndim: int = 2,
                   complex_ok: bool = False):
    """The operands as real floating arrays (integers and booleans as float64),
    checked to be (stacks of) matrices, square if asked; with `complex_ok`, all of one
    complex dtype if one is complex."""
    arrays = [operand(a) for a in arrays]
    if complex_ok and any(get_aval(a).dtype.kind == "c" for a in arrays):
        dtype = np.result_type(np.complex64, *(get_aval(a).dtype for a in arrays))
        arrays = [cast(a, dtype) for a in arrays]
    out = []
    for a in arrays:
        aval = get_aval(a)
        if aval.dtype.kind == "c" and not complex_ok:
            raise DTypeError(f"{name}: complex matrices are not supported, got "
                             f"{aval.str_short()}").with_source(user_source_info())
        if aval.dtype.kind not in "fc":
            a = cast(a, np.float64)
        out.append(a)
    if min_ndim:
        check_matrix(name, out[0], square)
    return out if len(out) > 1 else out[0]


def check_matrix(name: str, a, square: bool = True) -> None:
    shape = get_aval(a).shape
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        kind = "square matrices (..., n, n)" if square else "matrices (..., m, n)"
        raise shape_error(f"{name}: needs {kind}, got an array of shape {shape}")


def _lower(uplo) -> bool:
    if uplo not in (None, "L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {uplo!r}")
    return uplo != "U"


# ---------------------------------------------------------------------------------
# Factorisations


def cholesky(a: ArrayLike, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor (upper: its conjugate transpose) of each matrix of
    (a + aᴴ)/2, real or complex Hermitian; NaNs for a matrix that is not positive
    definite, as in JAX."""
    a = float_matrices("cholesky", a, complex_ok=True)
    factor = ch.cholesky(symmetrize(a) if symmetrize_input else a)
    return mH(factor) if upper else factor


def eigh(a: ArrayLike, UPLO: str | None = None,  # noqa: N803 — numpy's name
         symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors of each symmetric or Hermitian
    matrix."""
    a = float_matrices("eigh", a, complex_ok=True)
    v, w = eg.eigh(symmetrize(a) if symmetrize_input else a, lower=_lower(UPLO))
    return EighResult(w, v)


def eigvalsh(a: ArrayLike, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:  # noqa: N803
    """The eigenvalues alone: their derivative never divides by eigenvalue gaps."""
    a = float_matrices("eigvalsh", a, complex_ok=True)
    return eg.eigvalsh(symmetrize(a) if symmetrize_input else a, lower=_lower(UPLO))


def eig(a: ArrayLike) -> EigResult:
    """Eigenvalues and eigenvectors (unit columns) of each square matrix, complex also
    for real input (as JAX's; numpy's are real where they can be). Differentiable:
    the eigenvectors' derivative means something only for functions invariant under
    each vector's phase (`primitives/linalg/eig.py`)."""
    w, v = eig_prims.eig(float_matrices("eig", a, complex_ok=True))
    return EigResult(w, v)


def eigvals(a: ArrayLike) -> Array:
    """The eigenvalues of each square matrix, complex (see `eig`)."""
    return eig(a).eigenvalues


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Array | SVDResult:
    """`SVDResult(U, S, Vh)` with `a = U diag(S) Vh`, or S alone without `compute_uv`.
    `hermitian` changes nothing here: the general SVD of a symmetric matrix is one."""
    del hermitian
    a = float_matrices("svd", a, square=False, complex_ok=True)
    if not compute_uv:
        return svd_prims.svd(a, compute_uv=False)[0]
    s, u, vh = svd_prims.svd(a, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x: ArrayLike) -> Array:
    return svd(x, compute_uv=False)


def qr(a: ArrayLike, mode: str = "reduced") -> Array | QRResult:
    """`QRResult(Q, R)` ('reduced' or 'complete'), or R alone for mode 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f"qr: mode {mode!r} is not supported ('reduced', "
                                  "'complete' and 'r' are)")
    a = float_matrices("qr", a, square=False, complex_ok=True)
    q, r = qr_prim(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# ---------------------------------------------------------------------------------
# Solves, inverses and determinants


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """`x` with `a @ x = b`: `b` is a vector (n,) if 1-d, else a stack of (n, k)
    matrices; leading axes broadcast. One LU factorisation (kept as the only
    residual when `a` is inactive), and LinAlgError for a singular matrix."""
    a, b = float_matrices("solve", a, b, complex_ok=True)
    a_shape, given = get_aval(a).shape, get_aval(b).shape
    vector = len(given) == 1
    b_shape = (*given, 1) if vector else given
    if len(b_shape) < 2 or b_shape[-2] != a_shape[-1]:
        raise shape_error(f"solve: b of shape {given} does not fit a of shape {a_shape} "
                          "(b is (n,) or a stack of (n, k) matrices)")
    b = st.reshape(b, b_shape)
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2], name="solve")
    a, b = broadcast_to(a, (*batch, *a_shape[-2:])), broadcast_to(b, (*batch, *b_shape[-2:]))
    dtype = np.result_type(get_aval(a).dtype, get_aval(b).dtype)
    x = lu_prims.solve(cast(a, dtype), cast(b, dtype))
    return st.reshape(x, get_aval(x).shape[:-1]) if vector else x


def inv(a: ArrayLike) -> Array:
    """The inverse of each matrix, as the solution of `a x = I`."""
    a = float_matrices("inv", a, complex_ok=True)
    shape = get_aval(a).shape
    return solve(a, broadcast_to(eye(shape[-1], dtype=get_aval(a).dtype), shape))


def _lu_diagonal_and_parity(a):
    """U's diagonal and the sign of the row permutation, from one LU factorisation."""
    factors, pivots, _ = lu_prims.lu(a)
    swaps = ew.ne(pivots, st.iota(np.int32, get_aval(pivots).shape, get_aval(pivots).ndim - 1))
    odd = ew.rem(st.reduce_sum(cast(swaps, np.int32), (get_aval(pivots).ndim - 1,)), 2)
    parity = ew.sub(1.0, ew.mul(2.0, cast(odd, get_aval(a).dtype)))
    return diagonals(factors), parity


def det(a: ArrayLike) -> Array:
    """The determinant: the sign of the pivoting times the product of U's diagonal
    (a product whose derivative divides by nothing). Differentiating it at an exactly
    singular matrix raises LinAlgError (the LU's derivative solves with U)."""
    a = float_matrices("det", a, complex_ok=True)
    d, parity = _lu_diagonal_and_parity(a)
    return ew.mul(parity, red.reduce_prod(d, (get_aval(d).ndim - 1,)))


def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """`SlogdetResult(sign, logabsdet)`: 0 and -inf for a singular matrix, no warning."""
    del method
    a = float_matrices("slogdet", a, complex_ok=True)
    d, parity = _lu_diagonal_and_parity(a)
    axis = (get_aval(d).ndim - 1,)
    zero = ew.eq(d, 0.0)
    magnitudes = ew.abs(ew.select_n(zero, d, 1.0))
    logs = ew.select_n(zero, ew.log(magnitudes), -np.inf)
    # a complex sign d/|d| has a derivative (sign's is zero): 0 where d is
    units = ew.div(d, magnitudes) if get_aval(d).dtype.kind == "c" else ew.sign(d)
    sign = ew.mul(parity, red.reduce_prod(units, axis))
    return SlogdetResult(sign, st.reduce_sum(logs, axis))


def _pseudo_inverse_of_values(s, cutoff):
    """1/s above the cutoff, 0 below it (no division by a small value is evaluated)."""
    keep = ew.gt(s, cutoff)
    return ew.select_n(keep, 0.0, ew.div(1.0, ew.select_n(keep, 1.0, s)))


def _largest(s):
    """The largest singular value of each matrix, kept as an axis of size 1."""
    axis = get_aval(s).ndim - 1
    return st.expand_dims(red.reduce_max(s, (axis,)), (axis,))


def pinv(a: ArrayLike, rtol: float | None = None, hermitian: bool = False) -> Array:
    """The pseudo-inverse from the reduced SVD: singular values below `rtol` times the
    largest are taken as 0 (by default 10·max(m, n)·eps, as in JAX). Differentiable
    where the rank is constant."""
    del hermitian
    a = float_matrices("pinv", a, square=False, complex_ok=True)
    aval = get_aval(a)
    if rtol is None:
        rtol = 10.0 * max(aval.shape[-2:]) * np.finfo(aval.dtype).eps
    s, u, vh = svd_prims.svd(a, full_matrices=False)
    s_inv = _pseudo_inverse_of_values(s, ew.mul(rtol, ew.stop_gradient(_largest(s))))
    return matmul(ew.mul(mH(vh), st.expand_dims(s_inv, (aval.ndim - 2,))), mH(u))


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """`(x, residuals, rank, s)` minimising `|a x - b|`, through the SVD of `a` (one
    matrix (m, n); `b` (m,) or (m, k)). Singular values below `rcond` times the largest
    (by default max(m, n)·eps, as numpy) are taken as 0. `residuals` are the squared
    norms of the columns of `b - a x`; with `numpy_resid`, empty unless a has full
    column rank and m > n, as numpy."""
    a, b = float_matrices("lstsq", a, b, square=False, complex_ok=True)
    (m, n), b_shape = get_aval(a).shape, get_aval(b).shape
    if get_aval(a).ndim != 2 or len(b_shape) not in (1, 2) or b_shape[0] != m:
        raise shape_error(f"lstsq: needs a matrix (m, n) and b of shape (m,) or (m, k), "
                          f"got {get_aval(a).shape} and {b_shape}")
    if rcond is None:
        rcond = max(m, n) * np.finfo(get_aval(a).dtype).eps
    s, u, vh = svd_prims.svd(a, full_matrices=False)
    s_inv = _pseudo_inverse_of_values(s, ew.mul(rcond, ew.stop_gradient(_largest(s))))
    rhs = b if len(b_shape) == 2 else st.reshape(b, (m, 1))
    x = matmul(mH(vh), ew.mul(st.expand_dims(s_inv, (1,)), matmul(mH(u), rhs)))
    rank = st.reduce_sum(cast(ew.gt(s_inv, 0.0), np.int32), (0,))
    diff = ew.sub(rhs, matmul(a, x))
    resid = st.reduce_sum(abs_squared(diff), (0,))
    if len(b_shape) == 1:
        x = st.reshape(x, (n,))
    if numpy_resid and (m <= n or int(rank) != n):
        resid = np.zeros((0,), get_aval(s).dtype)
    return x, resid, rank, s


def matrix_power(a: ArrayLike, n: int) -> Array:
    """`a` multiplied by itself `n` times (by repeated squaring; the inverse's powers
    for negative `n`, the identity for 0)."""
    a = float_matrices("matrix_power", a, complex_ok=True)
    n = int(n)
    shape = get_aval(a).shape
    if n < 0:
        a, n = inv(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return broadcast_to(eye(shape[-1], dtype=get_aval(a).dtype), shape) if result is None \
        else result


def multi_dot(arrays: Sequence[ArrayLike], *, precision: Any = None) -> Array:
    """The product of a chain of matrices in the cheapest order (numpy's dynamic
    programme over the chain's shapes); the first may be a row vector, the last a
    column vector."""
    del precision
    arrays = [operand(x) for x in arrays]
    if len(arrays) < 2:
        raise shape_error("multi_dot: needs at least two arrays")
    first_1d, last_1d = get_aval(arrays[0]).ndim == 1, get_aval(arrays[-1]).ndim == 1
    if first_1d:
        arrays[0] = st.reshape(arrays[0], (1, get_aval(arrays[0]).shape[0]))
    if last_1d:
        arrays[-1] = st.reshape(arrays[-1], (get_aval(arrays[-1]).shape[0], 1))
    dims = [get_aval(x).shape[0] for x in arrays] + [get_aval(arrays[-1]).shape[1]]
    out = _chain_product(arrays, _chain_order(dims), 0, len(arrays) - 1)
    shape = get_aval(out).shape
    return st.reshape(out, tuple(d for d, drop in zip(shape, (first_1d, last_1d)) if not drop))


def _chain_order(dims: list[int]) -> list[list[int]]:
    """split[i][j]: where the cheapest product of matrices i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(arrays, split, i: int, j: int):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return matmul(_chain_product(arrays, split, i, k), _chain_product(arrays, split, k + 1, j))


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """`x` with `tensordot(a, x, x.ndim) = b`, as one matrix solve."""
    a, b = float_matrices("tensorsolve", a, b, min_ndim=0)
    if axes is not None:
        moved = [ax % get_aval(a).ndim for ax in axes]
        rest = [i for i in range(get_aval(a).ndim) if i not in moved]
        a = st.transpose(a, (*rest, *moved))
    shape = get_aval(a).shape
    x_shape = shape[get_aval(b).ndim:]
    rows, cols = get_aval(b).size, math.prod(x_shape)
    if rows != cols:
        raise shape_error(f"tensorsolve: a of shape {shape} with b of shape "
                          f"{get_aval(b).shape} is not square ({rows} x {cols})")
    x = solve(st.reshape(a, (rows, cols)), st.reshape(b, (rows,)))
    return st.reshape(x, x_shape)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of `a` seen as a matrix of its first `ind` axes by the rest."""
    a = float_matrices("tensorinv", a, min_ndim=0)
    shape = get_aval(a).shape
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise shape_error(f"tensorinv: a of shape {shape} is not square for ind={ind} "
                          f"({rows} x {cols})")
    return st.reshape(inv(st.reshape(a, (rows, cols))), (*shape[ind:], *shape[:ind]))


# ---------------------------------------------------------------------------------
# The array API's functions of numpy.linalg (stacks of matrices, the last two axes)


def matrix_transpose(x: ArrayLike, /) -> Array:
    return mT(operand(x))


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    return _diagonal(x, offset, -2, -1)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike | None = None) -> Array:
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two vectors."""
    if ndim(x1) != 1 or ndim(x2) != 1:
        raise shape_error(f"outer: needs two vectors, got shapes {shape(x1)} and {shape(x2)}")
    return _outer(x1, x2)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The dot products of the vectors along `axis` (real: no conjugate)."""
    return _sum(ew.mul(*promote(x1, x2)), axis=axis)
