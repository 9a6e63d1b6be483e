"""`inert.scipy.stats.lognorm`: the log-normal distribution with shape `s`: log of the
standardised value is normal with standard deviation s."""

from __future__ import annotations

import math

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import ndtr
from .._common import all_of, floats, inside, location_scale, nan_unless

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _standardized(x, s, loc, scale):
    """(log z (0 outside z > 0), log(scale), s (1 where invalid), valid, z > 0)."""
    x, s, loc, scale = floats(x, s, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    s_valid = inp.greater(s, 0)
    support = inp.greater(z, 0)
    log_z = inp.log(inside(support, z, 1.0))
    return log_z, log_scale, inside(s_valid, s, 1.0), all_of(valid, s_valid), support


def logpdf(x: ArrayLike, s: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    log_z, log_scale, s, valid, support = _standardized(x, s, loc, scale)
    density = -inp.square(log_z) / (2.0 * inp.square(s)) - (inp.log(s) + log_z + _LOG_SQRT_2PI)
    return nan_unless(valid, inp.where(support, density - log_scale, -np.inf))


def pdf(x: ArrayLike, s: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, s, loc, scale))


def cdf(x: ArrayLike, s: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    log_z, _, s, valid, support = _standardized(x, s, loc, scale)
    return nan_unless(valid, inp.where(support, ndtr(log_z / s), 0.0))


__all__ = ["cdf", "logpdf", "pdf"]


def __dir__():
    return __all__
