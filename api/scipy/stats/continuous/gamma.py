"""`inert.scipy.stats.gamma`: the gamma distribution with shape `a`.

Every function is differentiable in x, a, loc and scale: the cdf family is the
regularized incomplete gamma function, whose derivative in `a` is `igamma_grad_a`'s.
"""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import gammainc, gammaincc, gammaln, xlogy
from .._common import all_of, floats, inside, location_scale, log_probability, nan_unless


def _standardized(x, a, loc, scale):
    """(z, log(scale), a (1 where invalid), valid, z >= 0)."""
    x, a, loc, scale = floats(x, a, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    a_valid = inp.greater(a, 0)
    return z, log_scale, inside(a_valid, a, 1.0), all_of(valid, a_valid), inp.greater_equal(z, 0)


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, a, valid, support = _standardized(x, a, loc, scale)
    z = inside(support, z, 1.0)
    density = xlogy(a - 1.0, z) - z - gammaln(a) - log_scale
    return nan_unless(valid, inp.where(support, density, -np.inf))


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, a, valid, support = _standardized(x, a, loc, scale)
    return nan_unless(valid, inp.where(support, gammainc(a, inside(support, z, 0.0)), 0.0))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, a, valid, support = _standardized(x, a, loc, scale)
    return nan_unless(valid, inp.where(support, gammaincc(a, inside(support, z, 0.0)), 1.0))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__():
    return __all__
