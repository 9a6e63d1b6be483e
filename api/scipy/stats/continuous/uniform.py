"""`inert.scipy.stats.uniform`: the uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

import numpy as np

from .... import numpy as inp
from .._common import all_of, floats, inside, location_scale, nan_unless


def logpdf(x, loc=0, scale=1):
    z, log_scale, valid = location_scale(x, loc, scale)
    support = all_of(inp.greater_equal(z, 0), inp.less_equal(z, 1))
    return nan_unless(valid, inp.where(support, -log_scale, -np.inf))


def pdf(x, loc=0, scale=1):
    return inp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _, valid = location_scale(x, loc, scale)
    return nan_unless(valid, inp.clip(z, 0.0, 1.0))


def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale)
    valid = all_of(inp.greater(scale, 0), inp.greater_equal(q, 0), inp.less_equal(q, 1))
    return nan_unless(valid, loc + q * inside(valid, scale, 1.0))


__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def __dir__():
    return __all__
