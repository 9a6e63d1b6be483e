"""`inert.scipy.stats.laplace`: the Laplace (double exponential) distribution."""

from __future__ import annotations

import math

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import location_scale, nan_unless


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid = location_scale(x, loc, scale)
    return nan_unless(valid, -(inp.abs(z) + log_scale + math.log(2.0)))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """1 - e^-z / 2 above 0, e^z / 2 below, from e^-|z| (which never overflows)."""
    z, _, valid = location_scale(x, loc, scale)
    half_tail = 0.5 * inp.exp(-inp.abs(z))
    return nan_unless(valid, inp.where(inp.greater(z, 0), 1.0 - half_tail, half_tail))


__all__ = ["cdf", "logpdf", "pdf"]


def __dir__():
    return __all__
