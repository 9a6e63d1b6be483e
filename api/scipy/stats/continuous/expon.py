"""`inert.scipy.stats.expon`: the exponential distribution, scipy's `loc`/`scale`."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import all_of, floats, inside, location_scale, log_probability, nan_unless


def _standardized(x, loc, scale):
    z, log_scale, valid = location_scale(x, loc, scale)
    support = inp.greater_equal(z, 0)
    return inside(support, z, 0.0), log_scale, valid, support


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid, support = _standardized(x, loc, scale)
    return nan_unless(valid, inp.where(support, -z - log_scale, -np.inf))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid, _ = _standardized(x, loc, scale)
    return nan_unless(valid, -inp.expm1(-z))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid, _ = _standardized(x, loc, scale)
    return nan_unless(valid, inp.exp(-z))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid, _ = _standardized(x, loc, scale)
    return nan_unless(valid, -z)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-log1p(-q), scaled: inf at 1, nan outside [0, 1]."""
    q, loc, scale = floats(q, loc, scale)
    valid = all_of(inp.greater(scale, 0), inp.greater_equal(q, 0), inp.less_equal(q, 1))
    below_one = inp.less(q, 1)
    standard = inp.where(below_one, -inp.log1p(-inside(all_of(valid, below_one), q, 0.5)), np.inf)
    return nan_unless(valid, loc + inside(valid, scale, 1.0) * standard)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
