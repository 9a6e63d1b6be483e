"""`inert.scipy.stats.binom`: successes in `n` trials of probability `p`. An integer
`n` is inactive by type; a float one is differentiable (the gamma-function form of
the binomial coefficient)."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import gammaln, xlog1py, xlogy
from .._common import all_of, floats, inside, lattice, nan_unless, probability


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    k, n, p, loc = floats(k, n, p, loc)
    k, support = lattice(k, loc, 0)
    n_valid = all_of(inp.greater_equal(n, 0), inp.equal(n, inp.floor(n)))
    n = inside(n_valid, n, 0.0)
    support = all_of(support, inp.less_equal(k, n))
    k = inside(support, k, 0.0)
    p, p_valid = probability(p)
    log_choose = gammaln(n + 1.0) - (gammaln(k + 1.0) + gammaln(n - k + 1.0))
    log_pmf = log_choose + xlogy(k, p) + xlog1py(n - k, -p)
    return nan_unless(all_of(n_valid, p_valid), inp.where(support, log_pmf, -np.inf))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
