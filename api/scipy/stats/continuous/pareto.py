"""`inert.scipy.stats.pareto`: the Pareto distribution with shape `b` on z >= 1,
computed in logs (z^-b = e^(-b log z)), accurate near z = 1 where 1 - z^-b cancels."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import (
    all_of,
    floats,
    inside,
    location_scale,
    log_probability,
    nan_unless,
)


def _standardized(x, b, loc, scale):
    """(-b log z (0 below the support), log b, log(scale), valid, z >= 1)."""
    x, b, loc, scale = floats(x, b, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    b_valid = inp.greater(b, 0)
    b = inside(b_valid, b, 1.0)
    support = inp.greater_equal(z, 1)
    log_tail = -b * inp.log(inside(support, z, 1.0))
    return log_tail, b, log_scale, all_of(valid, b_valid), support


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    log_tail, b, log_scale, valid, support = _standardized(x, b, loc, scale)
    density = inp.log(b) + log_tail * (b + 1.0) / b - log_scale
    return nan_unless(valid, inp.where(support, density, -np.inf))


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, b, loc, scale))


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    log_tail, _, _, valid, _ = _standardized(x, b, loc, scale)
    return nan_unless(valid, -inp.expm1(log_tail))


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    log_tail, _, _, valid, _ = _standardized(x, b, loc, scale)
    return nan_unless(valid, log_tail)


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logsf(x, b, loc, scale))


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return log_probability(cdf(x, b, loc, scale), sf(x, b, loc, scale))


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(1 - q)^(-1/b), scaled: 1 at q = 0, inf at 1, nan outside [0, 1]."""
    q, b, loc, scale = floats(q, b, loc, scale)
    valid = all_of(inp.greater(b, 0), inp.greater(scale, 0), inp.greater_equal(q, 0),
                   inp.less_equal(q, 1))
    below_one = inp.less(q, 1)
    q = inside(all_of(valid, below_one), q, 0.5)
    standard = inp.where(below_one, inp.exp(-inp.log1p(-q) / inside(valid, b, 1.0)), np.inf)
    return nan_unless(valid, loc + inside(valid, scale, 1.0) * standard)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
