"""`inert.scipy.stats.beta`: the beta distribution with shapes `a` and `b` on [0, 1].

The density is differentiable in x, a, b, loc and scale. The cdf family is the
regularized incomplete beta function, without derivatives in `a` and `b` here (an
active shape raises NonDifferentiableError); the survival function is betainc with
the shapes swapped at 1 - z, exact in the upper tail.
"""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import betainc, betaln, xlog1py, xlogy
from .._common import all_of, floats, inside, location_scale, log_probability, nan_unless


def _standardized(x, a, b, loc, scale):
    """(z, log(scale), a, b (1 where invalid), valid, 0 <= z <= 1)."""
    x, a, b, loc, scale = floats(x, a, b, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    shapes_valid = all_of(inp.greater(a, 0), inp.greater(b, 0))
    a, b = inside(shapes_valid, a, 1.0), inside(shapes_valid, b, 1.0)
    support = all_of(inp.greater_equal(z, 0), inp.less_equal(z, 1))
    return z, log_scale, a, b, all_of(valid, shapes_valid), support


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    z, log_scale, a, b, valid, support = _standardized(x, a, b, loc, scale)
    z = inside(support, z, 0.5)
    density = xlog1py(b - 1.0, -z) + xlogy(a - 1.0, z) - betaln(a, b) - log_scale
    return nan_unless(valid, inp.where(support, density, -np.inf))


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
        scale: ArrayLike = 1) -> Array:
    z, _, a, b, valid, _ = _standardized(x, a, b, loc, scale)
    return nan_unless(valid, betainc(a, b, inp.clip(z, 0.0, 1.0)))


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
           scale: ArrayLike = 1) -> Array:
    return log_probability(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, a, b, valid, _ = _standardized(x, a, b, loc, scale)
    return nan_unless(valid, betainc(b, a, 1.0 - inp.clip(z, 0.0, 1.0)))


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0,
          scale: ArrayLike = 1) -> Array:
    return log_probability(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__():
    return __all__
