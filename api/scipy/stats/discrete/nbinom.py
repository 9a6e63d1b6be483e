"""`inert.scipy.stats.nbinom`: failures before the `n`-th success (n real, > 0)."""

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
    k = inside(support, k, 0.0)
    n_valid = inp.greater(n, 0)
    n = inside(n_valid, n, 1.0)
    p, p_valid = probability(p, open_at_zero=True)
    log_choose = gammaln(n + k) - gammaln(k + 1.0) - gammaln(n)
    log_pmf = log_choose + xlogy(n, p) + xlog1py(k, -p)
    return nan_unless(all_of(n_valid, p_valid), inp.where(support, log_pmf, -np.inf))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
