"""`inert.scipy.stats.cauchy`: the Cauchy distribution, scipy's `loc`/`scale`.

The cdf and survival function are angles, atan2(1, -z) / pi and atan2(1, z) / pi, as
scipy computes them: neither cancels in its far tail as 1/2 + atan(z) / pi would.
"""

from __future__ import annotations

import math

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import all_of, floats, inside, location_scale, log_probability, nan_unless


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid = location_scale(x, loc, scale)
    return nan_unless(valid, -inp.add(inp.add(inp.log1p(inp.square(z)), log_scale),
                                      math.log(math.pi)))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, inp.arctan2(1.0, -z) / math.pi)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, inp.arctan2(1.0, z) / math.pi)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(sf(x, loc, scale), cdf(x, loc, scale))


def _quantile(q, loc, scale, sign):
    """-cot(pi q) below 1/2 and cot(pi (1 - q)) above: tan(pi (q - 1/2)) would lose the
    digits of q - 1/2 in the tails. -inf and inf at 0 and 1, nan outside [0, 1]."""
    q, loc, scale = floats(q, loc, scale)
    valid = all_of(inp.greater(scale, 0), inp.greater_equal(q, 0), inp.less_equal(q, 1))
    interior = all_of(inp.greater(q, 0), inp.less(q, 1))
    lower = inp.less(q, 0.5)
    q = inside(interior, q, 0.5)
    standard = inp.where(lower, -1.0, 1.0) / inp.tan(math.pi * inp.where(lower, q, 1.0 - q))
    standard = inp.where(interior, standard, inp.where(lower, -np.inf, np.inf))
    return nan_unless(valid, loc + sign * inside(valid, scale, 1.0) * standard)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return _quantile(q, loc, scale, 1.0)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return _quantile(q, loc, scale, -1.0)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
