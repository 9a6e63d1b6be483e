"""The error functions and the normal distribution's cdf, its logarithm and inverse;
the scaled erfc and Dawson's integral.

The derivatives of the inverses come from the value: (f^-1)'(x) = 1 / f'(f^-1(x)),
so erfinv' = sqrt(pi)/2 exp(y^2) and ndtri' = sqrt(2 pi) exp(y^2 / 2) for the result y.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...core.typing import ArrayLike
from ..elementwise import exp, mul, neg, sub
from .common import SQRT_PI_OVER_TWO, TWO_OVER_SQRT_PI, def_unary, erf_slope, log_normal_pdf

_SQRT_2PI = math.sqrt(2.0 * math.pi)


erf_p = def_unary("erf", sc.erf, lambda x, out: erf_slope(x))


def erf(x: ArrayLike) -> np.ndarray:
    return erf_p.bind(x)


erfc_p = def_unary("erfc", sc.erfc, lambda x, out: neg(erf_slope(x)))


def erfc(x: ArrayLike) -> np.ndarray:
    """1 - erf(x), accurate where erf(x) is near 1."""
    return erfc_p.bind(x)


erfinv_p = def_unary("erfinv", sc.erfinv,
                     lambda x, out: mul(SQRT_PI_OVER_TWO, exp(mul(out, out))))


def erfinv(x: ArrayLike) -> np.ndarray:
    return erfinv_p.bind(x)


erfcinv_p = def_unary("erfcinv", sc.erfcinv,
                      lambda x, out: mul(-SQRT_PI_OVER_TWO, exp(mul(out, out))))


def erfcinv(x: ArrayLike) -> np.ndarray:
    """The inverse of erfc, on (0, 2)."""
    return erfcinv_p.bind(x)


ndtr_p = def_unary("ndtr", sc.ndtr, lambda x, out: exp(log_normal_pdf(x)))


def ndtr(x: ArrayLike) -> np.ndarray:
    """The standard normal cdf."""
    return ndtr_p.bind(x)


ndtri_p = def_unary("ndtri", sc.ndtri,
                    lambda x, out: mul(_SQRT_2PI, exp(mul(0.5, mul(out, out)))))


def ndtri(x: ArrayLike) -> np.ndarray:
    """The standard normal quantile function, the inverse of ndtr."""
    return ndtri_p.bind(x)


# pdf / cdf as one exponential: neither underflows alone far in the lower tail
log_ndtr_p = def_unary("log_ndtr", sc.log_ndtr,
                       lambda x, out: exp(sub(log_normal_pdf(x), out)))


def log_ndtr(x: ArrayLike) -> np.ndarray:
    """log ndtr(x), finite far into the lower tail and accurate in the upper one."""
    return log_ndtr_p.bind(x)


erfcx_p = def_unary("erfcx", sc.erfcx,
                    lambda x, out: sub(mul(mul(2.0, x), out), TWO_OVER_SQRT_PI))


def erfcx(x: ArrayLike) -> np.ndarray:
    """The scaled complementary error function e^(x^2) erfc(x), finite for large x."""
    return erfcx_p.bind(x)


dawsn_p = def_unary("dawsn", sc.dawsn, lambda x, out: sub(1.0, mul(mul(2.0, x), out)))


def dawsn(x: ArrayLike) -> np.ndarray:
    """Dawson's integral e^(-x^2) times the integral from 0 to x of e^(t^2)."""
    return dawsn_p.bind(x)
