"""`inert.scipy.stats.multivariate_normal`: the normal distribution of mean `mean`
(shape (n,), or a scalar) and covariance `cov` ((n, n), or a scalar times I) over x of
shape (..., n), as jax.scipy.stats. Through one Cholesky factor of the covariance and
one triangular solve for every point (no inverse, no determinant): with an inactive
covariance the backward pass keeps only the factor. A covariance that is not
positive definite gives NaN, as in JAX."""

from __future__ import annotations

import numpy as np

from .... import numpy as inp
from ....numpy._arrays import shape_error
from ...linalg import solve_triangular
from .._common import floats

_LOG_2PI = float(np.log(2.0 * np.pi))


def logpdf(x, mean, cov, allow_singular=None):
    """log N(x; mean, cov) for each point, the last axis of x its coordinates."""
    del allow_singular  # as in JAX: a singular covariance gives nan, never an error
    x, mean, cov = floats(x, mean, cov)
    diff = x - mean
    if inp.ndim(cov) == 0:
        n = inp.shape(diff)[-1] if inp.ndim(diff) else 1
        squares = inp.sum(diff * diff, axis=-1) if inp.ndim(diff) else diff * diff
        return -0.5 * squares / cov - 0.5 * n * (_LOG_2PI + inp.log(cov))
    n = inp.shape(cov)[-1]
    if inp.shape(cov) != (n, n) or inp.ndim(diff) < 1 or inp.shape(diff)[-1] != n:
        raise shape_error(f"multivariate_normal.logpdf: cov must be (n, n) and x, mean "
                          f"(..., n), got cov {inp.shape(cov)}, x - mean {inp.shape(diff)}")
    chol = inp.linalg.cholesky(cov)
    points = inp.reshape(diff, (-1, n)).T  # one column per point: a single solve
    z = solve_triangular(chol, points, lower=True)
    half_log_det = inp.sum(inp.log(inp.diagonal(chol)))
    squares = inp.reshape(inp.sum(z * z, axis=0), inp.shape(diff)[:-1])
    return -0.5 * squares - 0.5 * n * _LOG_2PI - half_log_det


def pdf(x, mean, cov, allow_singular=None):
    return inp.exp(logpdf(x, mean, cov, allow_singular))


__all__ = ["logpdf", "pdf"]


def __dir__():
    return __all__
