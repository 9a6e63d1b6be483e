"""`inert.scipy.stats.gumbel_r`: the right-skewed Gumbel (extreme value) distribution:
cdf exp(-e^-z)."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import exp_or_inf, location_scale, log_probability, nan_unless, quantile


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid = location_scale(x, loc, scale)
    tail = exp_or_inf(-z)  # where it overflows, the log density is -inf (gradient 0)
    return nan_unless(valid, inp.where(inp.isinf(tail), -np.inf, -z - tail - log_scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, -exp_or_inf(-z))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logcdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, -inp.expm1(-exp_or_inf(-z)))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(sf(x, loc, scale), cdf(x, loc, scale))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-log(-log q), scaled; -inf and inf at 0 and 1, nan outside [0, 1]."""
    return quantile(q, loc, scale, lambda q: -inp.log(-inp.log(q)))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
