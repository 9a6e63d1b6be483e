"""`inert.scipy.stats.geom`: the number of trials up to the first success (k >= 1)."""

from __future__ import annotations

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import xlog1py
from .._common import floats, inside, lattice, nan_unless, probability


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    k, p, loc = floats(k, p, loc)
    k, support = lattice(k, loc, 1)
    k = inside(support, k, 1.0)
    p, valid = probability(p, open_at_zero=True)
    return nan_unless(valid, inp.where(support, xlog1py(k - 1.0, -p) + inp.log(p), -np.inf))


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    return inp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]


def __dir__():
    return __all__
