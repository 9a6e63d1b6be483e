"""`inert.scipy.stats.poisson`: the Poisson distribution with mean `mu`."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import gammaincc, gammaln, xlogy
from .._common import floats, inside, lattice, nan_unless


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    k, mu, loc = floats(k, mu, loc)
    k, support = lattice(k, loc, 0)
    valid = inp.greater_equal(mu, 0)
    k, mu = inside(support, k, 0.0), inside(valid, mu, 1.0)
    log_pmf = xlogy(k, mu) - gammaln(k + 1.0) - mu
    return nan_unless(valid, inp.where(support, log_pmf, -np.inf))


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """P(K <= k) = gammaincc(floor(k) + 1, mu): differentiable in mu."""
    k, mu, loc = floats(k, mu, loc)
    k = inp.floor(k - loc)
    valid, support = inp.greater_equal(mu, 0), inp.greater_equal(k, 0)
    k, mu = inside(support, k, 0.0), inside(valid, mu, 1.0)
    return nan_unless(valid, inp.where(support, gammaincc(k + 1.0, mu), 0.0))


__all__ = ["cdf", "logpmf", "pmf"]


def __dir__():
    return __all__
