"""The gamma function family: gamma, its logarithm, sign and reciprocal, digamma and
polygamma, the beta function, the incomplete gamma and beta functions and zeta.

Derivatives by the identities Gamma' = Gamma psi, psi^(n)' = psi^(n+1), B_a = B (psi(a) -
psi(a + b)), and the densities for the incomplete functions' last operand. The
incomplete gamma functions' derivative in their shape `a` is the primitive
`igamma_grad_a` (`incomplete_gamma`: scipy has none), as in JAX; the incomplete beta
function's shapes, the order of polygamma and `x` of zeta have no derivative here
(their jvp rule is `None`, see the package docstring).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import defjvp_zero
from ...interpreters.batching import defvectorized
from ..elementwise import add, exp, log, mul, neg, sub
from ..elementwise.ufunc_rules import defbroadcasting, defjvp_elementwise, ufunc_abstract_eval
from .common import def_unary, param_like, real_function_impl
from .incomplete_gamma import gammainc_slope_a
from .logarithmic import xlog1py, xlogy

# not linear in any operand: no transposes in this module
gammaln_p = def_unary("gammaln", sc.gammaln, lambda x, out: digamma(x))


def gammaln(x: ArrayLike) -> np.ndarray:
    """`log |Gamma(x)|`."""
    return gammaln_p.bind(x)


loggamma_p = def_unary("loggamma", sc.loggamma, lambda x, out: digamma(x))


def loggamma(x: ArrayLike) -> np.ndarray:
    """log Gamma(x) for real x > 0 (nan elsewhere, as scipy's real loggamma)."""
    return loggamma_p.bind(x)


gamma_p = def_unary("gamma", sc.gamma, lambda x, out: mul(out, digamma(x)))


def gamma(x: ArrayLike) -> np.ndarray:
    return gamma_p.bind(x)


rgamma_p = def_unary("rgamma", sc.rgamma, lambda x, out: neg(mul(out, digamma(x))))


def rgamma(x: ArrayLike) -> np.ndarray:
    """1 / Gamma(x): entire, 0 at the poles of Gamma."""
    return rgamma_p.bind(x)


gammasgn_p = Primitive("gammasgn")


def gammasgn(x: ArrayLike) -> np.ndarray:
    """The sign of Gamma(x): piecewise constant, so its derivative is zero."""
    return gammasgn_p.bind(x)


impl_rules[gammasgn_p] = sc.gammasgn
abstract_eval_rules[gammasgn_p] = ufunc_abstract_eval(sc.gammasgn)
defjvp_zero(gammasgn_p)
defvectorized(gammasgn_p)

digamma_p = def_unary("digamma", sc.digamma, lambda x, out: polygamma(1, x))


def digamma(x: ArrayLike) -> np.ndarray:
    return digamma_p.bind(x)


# polygamma and zeta are Python functions in scipy, without dtypes of their own. They
# take those of a real two-argument ufunc whose float32 loop comes first (poch: 'ff->f',
# 'dd->d'), so that a Python-int order keeps float32, as digamma does.
polygamma_p = Primitive("polygamma", operand_names=("n", "x"))


def polygamma(n: ArrayLike, x: ArrayLike) -> np.ndarray:
    return polygamma_p.bind(n, x)


abstract_eval_rules[polygamma_p] = ufunc_abstract_eval(sc.poch, "polygamma")
impl_rules[polygamma_p] = real_function_impl(sc.polygamma, abstract_eval_rules[polygamma_p])
defjvp_elementwise(polygamma_p,
                   None,
                   lambda t, out, n, x: mul(t, polygamma(add(param_like(n, out), 1.0), x)))
defbroadcasting(polygamma_p)


def _beta_slope(a, b):
    """d/da log B(a, b) = psi(a) - psi(a + b)."""
    return sub(digamma(a), digamma(add(a, b)))


betaln_p = Primitive("betaln", operand_names=("a", "b"))


def betaln(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """`log |B(a, b)|`."""
    return betaln_p.bind(a, b)


impl_rules[betaln_p] = sc.betaln
abstract_eval_rules[betaln_p] = ufunc_abstract_eval(sc.betaln)
defjvp_elementwise(betaln_p,
                   lambda t, out, a, b: mul(t, _beta_slope(a, b)),
                   lambda t, out, a, b: mul(t, _beta_slope(b, a)))
defbroadcasting(betaln_p)

beta_p = Primitive("beta", operand_names=("a", "b"))


def beta(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    return beta_p.bind(a, b)


impl_rules[beta_p] = sc.beta
abstract_eval_rules[beta_p] = ufunc_abstract_eval(sc.beta)
defjvp_elementwise(beta_p,
                   lambda t, out, a, b: mul(t, mul(out, _beta_slope(a, b))),
                   lambda t, out, a, b: mul(t, mul(out, _beta_slope(b, a))))
defbroadcasting(beta_p)


poch_p = Primitive("poch", operand_names=("z", "m"))


def poch(z: ArrayLike, m: ArrayLike) -> np.ndarray:
    """The rising factorial Gamma(z + m) / Gamma(z), accurate where the two gammas are
    huge (scipy computes it without forming them)."""
    return poch_p.bind(z, m)


impl_rules[poch_p] = sc.poch
abstract_eval_rules[poch_p] = ufunc_abstract_eval(sc.poch)
defjvp_elementwise(poch_p,
                   lambda t, out, z, m: mul(t, mul(out, sub(digamma(add(z, m)), digamma(z)))),
                   lambda t, out, z, m: mul(t, mul(out, digamma(add(z, m)))))
defbroadcasting(poch_p)


binom_p = Primitive("binom", operand_names=("n", "k"))


def binom(n: ArrayLike, k: ArrayLike) -> np.ndarray:
    """The binomial coefficient of real n and k, Gamma(n+1) / (Gamma(k+1) Gamma(n-k+1))."""
    return binom_p.bind(n, k)


impl_rules[binom_p] = sc.binom
abstract_eval_rules[binom_p] = ufunc_abstract_eval(sc.binom)
defjvp_elementwise(
    binom_p,
    lambda t, out, n, k: mul(t, mul(out, sub(digamma(add(n, 1.0)), digamma(add(sub(n, k), 1.0))))),
    lambda t, out, n, k: mul(t, mul(out, sub(digamma(add(sub(n, k), 1.0)), digamma(add(k, 1.0))))))
defbroadcasting(binom_p)


def _gamma_density(a, x, out):
    """x^(a-1) e^(-x) / Gamma(a), in log space: the power and Gamma(a) overflow alone."""
    a = param_like(a, out)
    return exp(sub(sub(xlogy(sub(a, 1.0), x), x), gammaln(a)))


igamma_p = Primitive("igamma", operand_names=("a", "x"))


def igamma(a: ArrayLike, x: ArrayLike) -> np.ndarray:
    """The regularized lower incomplete gamma function, scipy's `gammainc`."""
    return igamma_p.bind(a, x)


impl_rules[igamma_p] = sc.gammainc
abstract_eval_rules[igamma_p] = ufunc_abstract_eval(sc.gammainc, "igamma")
defjvp_elementwise(igamma_p, lambda t, out, a, x: mul(t, igamma_grad_a(a, x)),
                   lambda t, out, a, x: mul(t, _gamma_density(a, x, out)))
defbroadcasting(igamma_p)

igammac_p = Primitive("igammac", operand_names=("a", "x"))


def igammac(a: ArrayLike, x: ArrayLike) -> np.ndarray:
    """The regularized upper incomplete gamma function, scipy's `gammaincc`."""
    return igammac_p.bind(a, x)


impl_rules[igammac_p] = sc.gammaincc
abstract_eval_rules[igammac_p] = ufunc_abstract_eval(sc.gammaincc, "igammac")
defjvp_elementwise(igammac_p, lambda t, out, a, x: neg(mul(t, igamma_grad_a(a, x))),
                   lambda t, out, a, x: neg(mul(t, _gamma_density(a, x, out))))
defbroadcasting(igammac_p)

igamma_grad_a_p = Primitive("igamma_grad_a", operand_names=("a", "x"))


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> np.ndarray:
    """d gammainc(a, x) / da (JAX's `lax.igamma_grad_a`); d gammaincc / da is its negative."""
    return igamma_grad_a_p.bind(a, x)


impl_rules[igamma_grad_a_p] = real_function_impl(
    gammainc_slope_a, ufunc_abstract_eval(sc.gammainc, "igamma_grad_a"))
abstract_eval_rules[igamma_grad_a_p] = ufunc_abstract_eval(sc.gammainc, "igamma_grad_a")
# d/dx of dP/da is d/da of the density: density * (log x - psi(a)); a second derivative
# in `a` is not built (as in JAX)
defjvp_elementwise(igamma_grad_a_p, None, lambda t, out, a, x: mul(t, mul(
    _gamma_density(a, x, out), sub(log(x), digamma(param_like(a, out))))))
defbroadcasting(igamma_grad_a_p)


def _beta_density(a, b, x, out):
    """x^(a-1) (1-x)^(b-1) / B(a, b), in log space like `_gamma_density`."""
    a, b = param_like(a, out), param_like(b, out)
    log_power = add(xlogy(sub(a, 1.0), x), xlog1py(sub(b, 1.0), neg(x)))
    return exp(sub(log_power, betaln(a, b)))


betainc_p = Primitive("betainc", operand_names=("a", "b", "x"))


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> np.ndarray:
    """The regularized incomplete beta function."""
    return betainc_p.bind(a, b, x)


impl_rules[betainc_p] = sc.betainc
abstract_eval_rules[betainc_p] = ufunc_abstract_eval(sc.betainc)
defjvp_elementwise(betainc_p, None, None,
                   lambda t, out, a, b, x: mul(t, _beta_density(a, b, x, out)))
defbroadcasting(betainc_p)

zeta_p = Primitive("zeta", operand_names=("x", "q"))


def zeta(x: ArrayLike, q: ArrayLike) -> np.ndarray:
    """The Hurwitz zeta function: sum over k >= 0 of (k + q)^-x."""
    return zeta_p.bind(x, q)


abstract_eval_rules[zeta_p] = ufunc_abstract_eval(sc.poch, "zeta")
impl_rules[zeta_p] = real_function_impl(sc.zeta, abstract_eval_rules[zeta_p])


def zeta_q_jvp(t, out, x, q):
    x = param_like(x, out)
    return neg(mul(t, mul(x, zeta(add(x, 1.0), q))))


defjvp_elementwise(zeta_p, None, zeta_q_jvp)
defbroadcasting(zeta_p)
