"""What the decompositions' rules share: stacks of matrices `(..., m, n)`, their
transposes and products, triangles, diagonals and permutations, all written with
primitives (so the rules that use them are differentiable again), and the checks
every decomposition makes of its operand.

Masks and identity matrices come from `iota` and comparisons, which partial
evaluation recomputes in the backward pass rather than keep: a rule that takes the
lower triangle of a tangent costs no residual for the mask.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import DTypeError, ShapeError
from ...core.trace import get_aval
from ...interpreters.fusion_loops import Unsupported
from ...interpreters.vector_math import cast
from ..elementwise import add, conj, div, eq, ge, mul, select_n, sub
from ..shape.structural import (
    broadcast_in_dim,
    convert_element_type,
    iota,
    moveaxis,
    reduce_sum,
    reshape,
    transpose,
)
from .dot_general import dot_general


def check_float(name: str, *avals: ShapedArray, complex_ok: bool = False) -> None:
    """Real floating operands only, unless `complex_ok` (lu and the solves, whose rules
    are holomorphic: JAX's transposes, no conjugates; all operands of one kind):
    complex matrices are refused by the rules that would need conjugates (Hermitian
    ones), integers are converted by the namespaces."""
    if complex_ok and len({aval.dtype.kind for aval in avals}) == 1 and \
            avals[0].dtype.kind == "c":
        return
    for aval in avals:
        if aval.dtype.kind != "f":
            raise DTypeError(f"{name}: needs real floating-point matrices, got "
                             f"{aval.str_short()}" + (" (complex matrices are not supported)"
                                                      if aval.dtype.kind == "c" else ""))


def matrix_aval(name: str, aval: ShapedArray, square: bool = True,
                complex_ok: bool = False) -> ShapedArray:
    """`aval`, checked to be a (stack of) real matrices `(..., m, n)`, square if asked."""
    if aval.ndim < 2 or (square and aval.shape[-1] != aval.shape[-2]):
        kind = "square matrix (..., n, n)" if square else "matrix (..., m, n)"
        raise ShapeError(f"{name}: needs a {kind} or a stack of them, got {aval.str_short()}")
    check_float(name, aval, complex_ok=complex_ok)
    return aval


def mT(x):  # noqa: N802 — numpy's name for the matrix transpose
    """The transpose of each matrix of a stack (the last two axes swapped)."""
    ndim = get_aval(x).ndim
    return transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def matmul(x, y):
    """Products of the matrices of two stacks with the same leading axes."""
    ndim = get_aval(x).ndim
    batch = tuple(range(ndim - 2))
    return dot_general(x, y, (((ndim - 1,), (ndim - 2,)), (batch, batch)))


def row_and_column_indices(shape):
    """Iotas of shapes (m, 1) and (1, n), which broadcast to the index grid."""
    m, n = shape[-2:]
    return iota(np.int32, (m, 1), 0), iota(np.int32, (1, n), 1)


def triangle_mask(shape, k: int = 0, lower: bool = True):
    """True on and below diagonal `k` (above it if not `lower`), for `(..., m, n)`."""
    rows, cols = row_and_column_indices(shape)
    if k:
        cols = sub(cols, k) if lower else cols
        rows = rows if lower else add(rows, k)
    return ge(rows, cols) if lower else ge(cols, rows)


def tril(x, k: int = 0):
    """The lower triangle, on and below diagonal `k`; zeros elsewhere."""
    return select_n(triangle_mask(get_aval(x).shape, k), 0.0, x)


def triu(x, k: int = 0):
    """The upper triangle, on and above diagonal `k`; zeros elsewhere."""
    return select_n(triangle_mask(get_aval(x).shape, k, lower=False), 0.0, x)


def eye_like(x):
    """The identity matrix of `x`'s last two axes and dtype (one matrix, broadcasts)."""
    aval = get_aval(x)
    return convert_element_type(eq(*row_and_column_indices(aval.shape)), aval.dtype)


def diagonal(x):
    """The diagonal of each matrix `(..., n, n) -> (..., n)`."""
    return reduce_sum(mul(x, eye_like(x)), (get_aval(x).ndim - 1,))


def mH(x):  # noqa: N802 — the conjugate transpose's usual name
    """The conjugate transpose of each matrix of a stack (the transpose of a real one)."""
    return conj(mT(x)) if get_aval(x).dtype.kind == "c" else mT(x)


def lower_read(x):
    """The symmetric (Hermitian) matrix a routine reading only the lower triangle of `x`
    sees: `x` on and below the diagonal, its (conjugate) transpose above. So a rule's
    tangent matches the function that LAPACK computes, even for a tangent that is not
    symmetric."""
    return select_n(triangle_mask(get_aval(x).shape), mH(x), x)


def symmetrize(x):
    """(x + xᴴ) / 2: what `eigh` and `cholesky` of the numpy namespace factor."""
    return mul(add(x, mH(x)), 0.5)


def pairs(v):
    """`(vᵢ, vⱼ)`: a stack of vectors `(..., k)` laid along the rows and along the
    columns of `(..., k, k)`, for coefficients of pairs (eigenvalue gaps)."""
    aval = get_aval(v)
    shape, ndim = (*aval.shape, aval.shape[-1]), aval.ndim
    return (broadcast_in_dim(v, shape, (*range(ndim - 1), ndim - 1)),
            broadcast_in_dim(v, shape, (*range(ndim - 1), ndim)))


def permutation_matrix(perm, dtype):
    """`P` with `P @ b == b[perm]` for each matrix of a stack, from integer `perm`
    `(..., n)`: a product with it is a permutation that transposes like any matmul."""
    aval = get_aval(perm)
    n = aval.shape[-1]
    shape = (*aval.shape, n)
    rows = broadcast_in_dim(perm, shape, tuple(range(aval.ndim)))
    return convert_element_type(eq(rows, iota(aval.dtype, shape, aval.ndim)), dtype)


def safe_reciprocal(x):
    """1/x, and 0 where x is 0 (no division by zero is evaluated)."""
    zero = eq(x, 0.0)
    return select_n(zero, div(1.0, select_n(zero, x, 1.0)), 0.0)


def fold_lanes(b, dim: int, axis: int):
    """The lanes of `b` (batch axis `dim`) folded into its axis `axis` of the unbatched
    value, next to it: a solve with one matrix and many right-hand sides is one solve
    with more columns (or rows), not one per lane."""
    b = moveaxis(b, dim, axis)
    shape = get_aval(b).shape
    return reshape(b, (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2:]))


def unfold_lanes(x, axis: int, size: int):
    """Undo `fold_lanes`: the lanes come back as axis `axis` of the result."""
    shape = get_aval(x).shape
    return reshape(x, (*shape[:axis], size, shape[axis] // size, *shape[axis + 1:]))



def native_matrices(eqn, operands: list[str]) -> list[str]:
    """Inside a native loop (jit's numba backend): the operands of a decomposition or
    solve as numba expressions, cast to its result's dtype as numpy casts them. Only
    single float32/float64 matrices: a stack, complex or float16 keeps the loop on its
    impl (`Unsupported`)."""
    dtype = eqn.outputs[0].aval.dtype
    if dtype not in (np.float32, np.float64) or any(a.aval.ndim != 2 for a in eqn.inputs):
        raise Unsupported(f"{eqn.primitive.name} of {[a.aval.str_short() for a in eqn.inputs]}")
    return [x if a.aval.dtype == dtype else f"{x}.astype({cast(dtype)})"
            for a, x in zip(eqn.inputs, operands)]
