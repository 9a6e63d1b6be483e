"""`inert.scipy.stats.multinomial`: counts x (the last axis the categories) of `n`
draws with category probabilities p; -inf unless the counts are non-negative
integers summing to n."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import gammaln, xlogy
from .._common import all_of, floats, inside, nan_unless


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    x, n, p = floats(x, n, p)
    n_valid = all_of(inp.greater_equal(n, 0), inp.equal(n, inp.floor(n)))
    p_valid = all_of(inp.all(inp.greater_equal(p, 0), axis=-1),
                     inp.all(inp.less_equal(p, 1), axis=-1),
                     inp.less_equal(inp.abs(inp.sum(p, axis=-1) - 1.0), 1e-9))
    counts = all_of(inp.all(inp.greater_equal(x, 0), axis=-1),
                    inp.all(inp.equal(x, inp.floor(x)), axis=-1),
                    inp.equal(inp.sum(x, axis=-1), n))
    x = inside(inp.expand_dims(counts, -1), x, 0.0)
    log_pmf = gammaln(n + 1.0) + inp.sum(xlogy(x, p) - gammaln(x + 1.0), axis=-1)
    return nan_unless(all_of(n_valid, p_valid), inp.where(counts, log_pmf, -np.inf))


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    return inp.exp(logpmf(x, n, p))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
