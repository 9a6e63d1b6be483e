"""`inert.scipy.stats.norm`: the normal distribution, scipy's `loc`/`scale`.

The cdf family uses ndtr and log_ndtr of the standardised value, mirrored for the
survival functions, so that logcdf(-40) and logsf(40) are finite, as in scipy.
"""

from __future__ import annotations

import math

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import log_ndtr, ndtr, ndtri
from .._common import floats, location_scale, nan_unless

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid = location_scale(x, loc, scale)
    return nan_unless(valid, -0.5 * inp.square(z) - (log_scale + _LOG_SQRT_2PI))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, ndtr(z))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, log_ndtr(z))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, ndtr(-z))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, log_ndtr(-z))


def _quantile(q, loc, scale, sign):
    q, loc, scale = floats(q, loc, scale)
    valid = inp.logical_and(inp.greater(scale, 0),
                            inp.logical_and(inp.greater_equal(q, 0), inp.less_equal(q, 1)))
    q = inp.where(valid, q, 0.5)
    return nan_unless(valid, loc + sign * inp.where(valid, scale, 1.0) * ndtri(q))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The quantile function: -inf at 0, inf at 1, nan outside [0, 1]."""
    return _quantile(q, loc, scale, 1.0)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """The inverse of the survival function."""
    return _quantile(q, loc, scale, -1.0)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
