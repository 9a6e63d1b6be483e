"""`inert.scipy.stats.chi2`: the chi-squared distribution, a gamma distribution with
shape df / 2 and twice the scale, which is how its functions are computed."""

from __future__ import annotations

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from . import gamma


def _as_gamma(fn):
    def of_chi2(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
        return fn(x, inp.multiply(0.5, df), loc, inp.multiply(2.0, scale))

    of_chi2.__name__ = of_chi2.__qualname__ = fn.__name__
    of_chi2.__doc__ = f"chi2.{fn.__name__}: gamma.{fn.__name__} with a = df / 2, scale 2 scale."
    return of_chi2


logpdf = _as_gamma(gamma.logpdf)
pdf = _as_gamma(gamma.pdf)
cdf = _as_gamma(gamma.cdf)
logcdf = _as_gamma(gamma.logcdf)
sf = _as_gamma(gamma.sf)
logsf = _as_gamma(gamma.logsf)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def __dir__():
    return __all__
