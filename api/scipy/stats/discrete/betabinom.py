"""`inert.scipy.stats.betabinom`: the beta-binomial distribution, k successes in `n`
trials whose probability is beta(a, b) distributed; scipy's form in betaln."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import betaln
from .._common import all_of, floats, inside, lattice, nan_unless


def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    k, n, a, b, loc = floats(k, n, a, b, loc)
    k, support = lattice(k, loc, 0)
    valid = all_of(inp.greater_equal(n, 0), inp.equal(n, inp.floor(n)), inp.greater(a, 0),
                   inp.greater(b, 0))
    n, a, b = inside(valid, n, 0.0), inside(valid, a, 1.0), inside(valid, b, 1.0)
    support = all_of(support, inp.less_equal(k, n))
    k = inside(support, k, 0.0)
    log_choose = -inp.log(n + 1.0) - betaln(n - k + 1.0, k + 1.0)
    log_pmf = log_choose + betaln(k + a, n - k + b) - betaln(a, b)
    return nan_unless(valid, inp.where(support, log_pmf, -np.inf))


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, n, a, b, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
