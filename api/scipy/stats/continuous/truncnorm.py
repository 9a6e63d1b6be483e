"""`inert.scipy.stats.truncnorm`: the standard normal truncated to [a, b] (in
standardised units), then located and scaled, as in scipy.

Everything is a difference of log normal masses (`log_diff_ndtr`), accurate in both
tails. As in scipy, a log cdf near 0 is computed from the log survival function
instead (log1p(-e^logsf)), and the other way round, which avoids the cancellation of
1 - cdf. The bounds a and b are differentiable like every float parameter.
"""

from __future__ import annotations

import math

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import all_of, floats, inside, location_scale, log_diff_ndtr, nan_unless

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_NEAR_ZERO = -0.1  # scipy's switch between the two forms


def _standardized(x, a, b, loc, scale):
    """(z, log(scale), a, b (-1, 1 where invalid), valid, log mass of [a, b])."""
    x, a, b, loc, scale = floats(x, a, b, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    bounds_valid = inp.less(a, b)
    a, b = inside(bounds_valid, a, -1.0), inside(bounds_valid, b, 1.0)
    return z, log_scale, a, b, all_of(valid, bounds_valid), log_diff_ndtr(a, b)


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    z, log_scale, a, b, valid, log_mass = _standardized(x, a, b, loc, scale)
    support = all_of(inp.greater_equal(z, a), inp.less_equal(z, b))
    z = inside(support, z, _interior_point(a, b))
    density = -0.5 * inp.square(z) - (_LOG_SQRT_2PI + log_mass + log_scale)
    return nan_unless(valid, inp.where(support, density, -np.inf))


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, a, b, loc, scale))


def _log_tails(z, a, b, log_mass):
    """(log P(Z <= z), log P(Z >= z)) for z strictly inside (a, b)."""
    return log_diff_ndtr(a, z) - log_mass, log_diff_ndtr(z, b) - log_mass


def _interior_point(a, b):
    """A point strictly inside (a, b), either bound possibly infinite."""
    finite_a, finite_b = inp.isfinite(a), inp.isfinite(b)
    a, b = inside(finite_a, a, 0.0), inside(finite_b, b, 0.0)
    one_sided = inp.where(finite_a, a + 1.0, inp.where(finite_b, b - 1.0, 0.0))
    return inp.where(all_of(finite_a, finite_b), 0.5 * (a + b), one_sided)


def _log_complement_near_zero(log_p, log_q):
    """log p, or log1p(-q) where log p > -0.1 (p and q = 1 - p given as logs)."""
    near_zero = inp.greater(log_p, _NEAR_ZERO)
    return inp.where(near_zero, inp.log1p(-inp.exp(inside(near_zero, log_q, -1.0))), log_p)


def _log_cdf_and_sf(x, a, b, loc, scale):
    """(logcdf, logsf, valid), each switched to log1p(-e^other) where it is near 0."""
    z, _, a, b, valid, log_mass = _standardized(x, a, b, loc, scale)
    interior = all_of(inp.greater(z, a), inp.less(z, b))
    lower, upper = _log_tails(inside(interior, z, _interior_point(a, b)), a, b, log_mass)
    log_cdf = _log_complement_near_zero(lower, upper)
    log_sf = _log_complement_near_zero(upper, lower)
    at_or_above_b = inp.greater_equal(z, b)
    at_or_below_a = inp.less_equal(z, a)
    log_cdf = inp.where(at_or_below_a, -np.inf, inp.where(at_or_above_b, 0.0, log_cdf))
    log_sf = inp.where(at_or_above_b, -np.inf, inp.where(at_or_below_a, 0.0, log_sf))
    return nan_unless(valid, log_cdf), nan_unless(valid, log_sf)


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    return _log_cdf_and_sf(x, a, b, loc, scale)[0]


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    return inp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
          scale: ArrayLike = 1) -> Array:
    return _log_cdf_and_sf(x, a, b, loc, scale)[1]


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logsf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__():
    return __all__
