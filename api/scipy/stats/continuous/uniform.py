"""`inert.scipy.stats.uniform`: the uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import all_of, floats, inside, location_scale, nan_unless


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, log_scale, valid = location_scale(x, loc, scale)
    support = all_of(inp.greater_equal(z, 0), inp.less_equal(z, 1))
    return nan_unless(valid, inp.where(support, -log_scale, -np.inf))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, inp.clip(z, 0.0, 1.0))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    q, loc, scale = floats(q, loc, scale)
    valid = all_of(inp.greater(scale, 0), inp.greater_equal(q, 0), inp.less_equal(q, 1))
    return nan_unless(valid, loc + q * inside(valid, scale, 1.0))


__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def __dir__():
    return __all__
