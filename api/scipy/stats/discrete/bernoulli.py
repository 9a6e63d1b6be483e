"""`inert.scipy.stats.bernoulli`: one trial with success probability `p`."""

from __future__ import annotations

import numpy as np

from .... import numpy as inp
from ...special import xlog1py, xlogy
from .._common import all_of, floats, inside, lattice, nan_unless, probability


def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc)
    k, support = lattice(k, loc, 0)
    support = all_of(support, inp.less_equal(k, 1))
    k = inside(support, k, 0.0)
    p, valid = probability(p)
    return nan_unless(valid, inp.where(support, xlogy(k, p) + xlog1py(1.0 - k, -p), -np.inf))


def pmf(k, p, loc=0):
    return inp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
