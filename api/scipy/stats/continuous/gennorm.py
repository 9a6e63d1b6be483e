"""`inert.scipy.stats.gennorm`: the generalized normal distribution with shape `beta`
(2: a normal, 1: a Laplace), density beta / (2 Gamma(1/beta)) e^(-|z|^beta).

The cdf is the regularized upper incomplete gamma function of |z|^beta, differentiable
in its `a` = 1/beta too (`igamma_grad_a`). |z|^beta is e^(beta log|z|), 0 at z = 0
(with a zero derivative in beta there, where the power form's log 0 would make it nan).
"""

from __future__ import annotations

from .....core.typing import ArrayLike
from .... import numpy as inp
from ....numpy._array import Array
from ...special import gammaincc, gammaln
from .._common import all_of, floats, inside, location_scale, nan_unless


def _standardized(x, beta, loc, scale):
    """(|z|^beta, sign(z), beta (1 where invalid), log(scale), valid)."""
    x, beta, loc, scale = floats(x, beta, loc, scale)
    z, log_scale, valid = location_scale(x, loc, scale)
    beta_valid = inp.greater(beta, 0)
    beta = inside(beta_valid, beta, 1.0)
    nonzero = inp.not_equal(z, 0)
    power = inp.where(nonzero, inp.exp(beta * inp.log(inp.abs(inside(nonzero, z, 1.0)))), 0.0)
    return power, inp.sign(z), beta, log_scale, all_of(valid, beta_valid)


def logpdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    power, _, beta, log_scale, valid = _standardized(x, beta, loc, scale)
    log_norm = inp.log(0.5 * beta) - gammaln(1.0 / beta)
    return nan_unless(valid, log_norm - power - log_scale)


def pdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    return inp.exp(logpdf(x, beta, loc, scale))


def cdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """(1/2 + c) - c gammaincc(1/beta, |z|^beta) with c = sign(z) / 2, as scipy."""
    power, sign, beta, _, valid = _standardized(x, beta, loc, scale)
    c = 0.5 * sign
    return nan_unless(valid, (0.5 + c) - c * gammaincc(1.0 / beta, power))


__all__ = ["cdf", "logpdf", "pdf"]


def __dir__():
    return __all__
