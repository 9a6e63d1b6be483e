"""`inert.numpy.linalg`: jax.numpy.linalg's functions, on the linalg primitives.

The decompositions and solves are in `_linalg`, the norms in `_norms`; both document
which derivative each function gets and where it is defined.
"""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

from ._dot import matmul, tensordot
from ._linalg import (
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    multi_dot,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
)
from ._norms import cond, matrix_rank, norm

__all__ = [
    "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "det", "eigh",
    "eigvalsh", "inv", "lstsq", "matmul", "matrix_power", "matrix_rank", "multi_dot", "norm",
    "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve",
]


def __dir__():
    return __all__
