"""`inert.scipy.stats.multivariate_normal`: the normal distribution of mean `mean`
(shape (n,), or a scalar) and covariance `cov` ((n, n), or a scalar times I) over x of
shape (..., n), as jax.scipy.stats. Through one Cholesky factor of the covariance and
one triangular solve for every point (no inverse, no determinant): with an inactive
covariance the backward pass keeps only the factor. A covariance that is not
positive definite gives NaN, as in JAX; with `allow_singular=True` the density is
scipy's degenerate one instead, on the covariance's range, by an eigendecomposition:
its pseudo-determinant and pseudo-inverse, -inf off the range."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ....numpy._arrays import shape_error
from ...linalg import solve_triangular
from .._common import floats

_LOG_2PI = float(np.log(2.0 * np.pi))


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike,
           allow_singular: bool | None = None) -> Array:
    """log N(x; mean, cov) for each point, the last axis of x its coordinates."""
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
    if allow_singular:
        return _degenerate_logpdf(diff, cov)
    chol = inp.linalg.cholesky(cov)
    points = inp.reshape(diff, (-1, n)).T  # one column per point: a single solve
    z = solve_triangular(chol, points, lower=True)
    half_log_det = inp.sum(inp.log(inp.diagonal(chol)))
    squares = inp.reshape(inp.sum(z * z, axis=0), inp.shape(diff)[:-1])
    return -0.5 * squares - 0.5 * n * _LOG_2PI - half_log_det


def _degenerate_logpdf(diff, cov):
    """scipy's density for a positive semi-definite `cov` of rank r: eigenvalues up to
    scipy's cutoff (1e6 eps times the largest, 1e3 eps in float32) count as zero; the
    rest give the pseudo-determinant and the whitening of the points' coordinates in
    their eigenvectors; a point whose component in the null space is beyond the cutoff
    lies off the support (-inf)."""
    values, vectors = inp.linalg.eigh(cov)
    factor = 1e3 if inp.result_type(values) == np.float32 else 1e6
    cutoff = factor * np.finfo(inp.result_type(values)).eps * inp.max(inp.abs(values))
    kept = values > cutoff
    safe = inp.where(kept, values, 1.0)
    coordinates = diff @ vectors  # (..., n): each point along each eigenvector
    whitened = inp.where(kept, coordinates / inp.sqrt(safe), 0.0)
    off_range = inp.sqrt(inp.sum(inp.where(kept, 0.0, coordinates) ** 2, axis=-1))
    rank = inp.sum(kept)
    log_pdet = inp.sum(inp.where(kept, inp.log(safe), 0.0))
    out = -0.5 * (rank * _LOG_2PI + log_pdet + inp.sum(whitened * whitened, axis=-1))
    return inp.where(off_range < cutoff, out, -inp.inf)


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: bool | None = None) -> Array:
    return inp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: ArrayLike | None = None, cov: ArrayLike = 1,
            allow_singular: bool = False) -> Array:
    """scipy's differential entropy, (n/2)(1 + log 2 pi) + (1/2) log det cov, the
    determinant from the Cholesky factor (the pseudo-determinant over the rank with
    `allow_singular`); `mean` does not enter."""
    (cov,) = floats(cov)
    if inp.ndim(cov) == 0:
        n = 1 if mean is None else max(inp.size(mean), 1)
        return 0.5 * n * (1.0 + _LOG_2PI) + 0.5 * n * inp.log(cov)
    if allow_singular:
        values = inp.linalg.eigvalsh(cov)
        factor = 1e3 if inp.result_type(values) == np.float32 else 1e6
        kept = values > factor * np.finfo(inp.result_type(values)).eps * inp.max(values)
        log_pdet = inp.sum(inp.where(kept, inp.log(inp.where(kept, values, 1.0)), 0.0))
        return 0.5 * inp.sum(kept) * (1.0 + _LOG_2PI) + 0.5 * log_pdet
    half_log_det = inp.sum(inp.log(inp.diagonal(inp.linalg.cholesky(cov))))
    return 0.5 * inp.shape(cov)[-1] * (1.0 + _LOG_2PI) + half_log_det


__all__ = ["entropy", "logpdf", "pdf"]


def __dir__():
    return __all__
