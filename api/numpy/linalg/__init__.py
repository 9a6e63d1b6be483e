"""`inert.numpy.linalg`: jax.numpy.linalg's functions, on the linalg primitives.

A package (api/numpy holds at most 15 modules): the decompositions and solves are in
`_linalg`, the norms in `_norms`; both say which derivative each function gets and
where it is defined.
"""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

import numpy as np

from .._array import return_arrays_from
from .._dot import matmul, tensordot
from ._linalg import (
    EighResult,
    EigResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    matrix_transpose,
    multi_dot,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    trace,
    vecdot,
)
from ._norms import cond, matrix_norm, matrix_rank, norm, vector_norm

__all__ = [
    "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond",
    "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul",
    "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet",
    "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
    "vector_norm",
]
# Eager results are immutable Arrays, as inert.numpy's are (see api/numpy/_array).
return_arrays_from(globals(), [name for name in __all__ if not isinstance(globals()[name], type)],
                   like=np.linalg)


def __dir__():
    return __all__
