"""`inert.scipy.stats.wrapcauchy`: the wrapped Cauchy distribution on [0, 2 pi] with
concentration 0 < c < 1, JAX's signature `(x, c)`."""

from __future__ import annotations

import math

import numpy as np

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from .._common import all_of, floats, inside, nan_unless


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))) on [0, 2 pi], -inf off it."""
    x, c = floats(x, c)
    valid = all_of(inp.greater(c, 0), inp.less(c, 1))
    c = inside(valid, c, 0.5)
    support = all_of(inp.greater_equal(x, 0), inp.less_equal(x, 2 * math.pi))
    density = (inp.log1p(-c * c) - math.log(2 * math.pi)
               - inp.log(1.0 + c * c - 2.0 * c * inp.cos(x)))
    return nan_unless(valid, inp.where(support, density, -np.inf))


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    return inp.exp(logpdf(x, c))


__all__ = ["logpdf", "pdf"]


def __dir__():
    return __all__
