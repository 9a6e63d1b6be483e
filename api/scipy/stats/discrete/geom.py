"""`inert.scipy.stats.geom`: the number of trials up to the first success (k >= 1)."""

from __future__ import annotations

import numpy as np

from .... import numpy as inp
from ...special import xlog1py
from .._common import floats, inside, lattice, nan_unless, probability


def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc)
    k, support = lattice(k, loc, 1)
    k = inside(support, k, 1.0)
    p, valid = probability(p, open_at_zero=True)
    return nan_unless(valid, inp.where(support, xlog1py(k - 1.0, -p) + inp.log(p), -np.inf))


def pmf(k, p, loc=0):
    return inp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
