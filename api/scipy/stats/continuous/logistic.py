"""`inert.scipy.stats.logistic`: the logistic distribution; its cdf is expit."""

from __future__ import annotations

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import expit, logit
from .._common import floats, location_scale, nan_unless


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """-|z| - 2 log1p(e^-|z|): the density is symmetric, and e^-|z| never overflows."""
    z, log_scale, valid = location_scale(x, loc, scale)
    y = -inp.abs(z)
    return nan_unless(valid, y - 2.0 * inp.log1p(inp.exp(y)) - log_scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, expit(z))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, expit(-z))


def _quantile(q, loc, scale, sign):
    q, loc, scale = floats(q, loc, scale)
    valid = inp.greater(scale, 0)
    return nan_unless(valid, loc + sign * inp.where(valid, scale, 1.0) * logit(q))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return _quantile(q, loc, scale, 1.0)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return _quantile(q, loc, scale, -1.0)


__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def __dir__():
    return __all__
