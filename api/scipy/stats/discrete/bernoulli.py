"""`inert.scipy.stats.bernoulli`: one trial with success probability `p`."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import xlog1py, xlogy
from .._common import all_of, floats, inside, lattice, nan_unless, probability


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    k, p, loc = floats(k, p, loc)
    k, support = lattice(k, loc, 0)
    support = all_of(support, inp.less_equal(k, 1))
    k = inside(support, k, 0.0)
    p, valid = probability(p)
    return nan_unless(valid, inp.where(support, xlogy(k, p) + xlog1py(1.0 - k, -p), -np.inf))


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """0 below 0, 1 - p on [0, 1), 1 from 1 on."""
    k, p, loc = floats(k, p, loc)
    k = k - loc
    p, valid = probability(p)
    return nan_unless(valid, inp.where(inp.less(k, 0), 0.0,
                                       inp.where(inp.less(k, 1), 1.0 - p, 1.0)))


def ppf(q: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The smallest k with cdf(k) >= q: -1 at q = 0 (scipy's convention), nan outside
    [0, 1]."""
    q, p, loc = floats(q, p, loc)
    p, valid = probability(p)
    valid = all_of(valid, inp.greater_equal(q, 0), inp.less_equal(q, 1))
    k = inp.where(inp.equal(q, 0), -1.0, inp.where(inp.less_equal(q, 1.0 - p), 0.0, 1.0))
    return nan_unless(valid, k + loc)


__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def __dir__():
    return __all__
