"""`inert.scipy.stats.vonmises`: the von Mises distribution on the circle, JAX's
signature `(x, kappa)`. As scipy computes it: kappa cosm1(x) - log(2 pi i0e(kappa)),
finite for large kappa where exp(kappa cos x) and i0(kappa) overflow."""

from __future__ import annotations

import math

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import cosm1, i0e
from .._common import floats, inside, nan_unless


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    x, kappa = floats(x, kappa)
    valid = inp.greater(kappa, 0)
    kappa = inside(valid, kappa, 1.0)
    return nan_unless(valid, kappa * cosm1(x) - inp.log(i0e(kappa)) - math.log(2 * math.pi))


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    return inp.exp(logpdf(x, kappa))


__all__ = ["logpdf", "pdf"]


def __dir__():
    return __all__
