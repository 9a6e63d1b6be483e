"""`inert.scipy.stats.t`: Student's t distribution with `df` degrees of freedom.

The normalising constant is log poch(df/2, 1/2) = log Gamma((df+1)/2) - log Gamma(df/2),
as scipy computes it: the difference of two gammaln values loses digits for large df.
The cdf family is the regularized incomplete beta function of df / (df + z^2), which
has no derivative in df here: it is differentiable in x, loc and scale, and an active
df raises NonDifferentiableError (betainc's `a`).
"""

from __future__ import annotations

import math

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import betainc, poch
from .._common import all_of, floats, location_scale, nan_unless


def _standardized(x, df, loc, scale):
    """(z, log(scale), df (1 where invalid), valid)."""
    x, df, loc, scale = floats(x, df, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    df_valid = inp.greater(df, 0)
    return z, log_scale, inp.where(df_valid, df, 1.0), all_of(valid, df_valid)


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, df, valid = _standardized(x, df, loc, scale)
    constant = inp.log(poch(0.5 * df, 0.5)) - 0.5 * (inp.log(df) + math.log(math.pi))
    tail = 0.5 * (df + 1.0) * inp.log1p(inp.square(z) / df)
    return nan_unless(valid, constant - (tail + log_scale))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, df, loc, scale))


def _tail(x, df, loc, scale):
    """(P(T > |z|), z < 0, valid): the far tail, to full relative precision."""
    z, _, df, valid = _standardized(x, df, loc, scale)
    return 0.5 * betainc(0.5 * df, 0.5, df / (df + inp.square(z))), inp.less(z, 0), valid


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    tail, left, valid = _tail(x, df, loc, scale)
    return nan_unless(valid, inp.where(left, tail, 1.0 - tail))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    tail, left, valid = _tail(x, df, loc, scale)
    return nan_unless(valid, inp.where(left, 1.0 - tail, tail))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """log of the cdf: of the tail itself on the left, log1p(-tail) on the right, so
    neither end loses its digits (scipy's log(cdf) is -0 past z ~ 1e8, this is not)."""
    tail, left, valid = _tail(x, df, loc, scale)
    return nan_unless(valid, inp.where(left, inp.log(tail), inp.log1p(-tail)))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    tail, left, valid = _tail(x, df, loc, scale)
    return nan_unless(valid, inp.where(left, inp.log1p(-tail), inp.log(tail)))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__():
    return __all__
