"""Special functions: scipy.special's values, with derivatives by their identities.

Values always come from scipy.special (never hand-written numerics), and result
dtypes from the scipy ufunc's own type resolution, so float32 stays float32 where
scipy keeps it. The derivative rules are the textbook identities, written with bind
wrappers so that they are staged and differentiable again.

Several functions have an operand with no derivative: the order of a Bessel function
or of polygamma, `a` of the incomplete gamma functions, `a` and `b` of betainc, `x`
of zeta. Its jvp rule is `None`: the operand may be anything inactive (a Python
scalar, a numpy array, an `Inactive` argument, a `stop_gradient` value), and an active
one raises NonDifferentiableError naming the primitive and the operand.

A rule that computes with such a parameter first converts it to the result's real
dtype (`_param_like`): evaluated on its own, arithmetic on a Python scalar gives a
strongly typed numpy scalar that would promote a float32 result to float64, while
the staged program (weakly typed) says float32. scipy's loop converts the parameter
to that dtype anyway, so no precision is lost.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..interpreters.batching import defvectorized
from ..interpreters.transpose import is_linear, transpose_rules
from .elementwise import add, div, exp, log, mul, neg, sub
from .elementwise.ufunc_rules import (
    defbroadcasting,
    defjvp_elementwise,
    ufunc_abstract_eval,
    unbroadcast_cotangent,
)
from .shape.structural import convert_element_type

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _param_like(p, out):
    """The non-differentiable operand `p` in the real dtype of the result `out`."""
    return convert_element_type(p, np.finfo(get_aval(out).dtype).dtype)


def _erf_slope(x):
    return mul(_TWO_OVER_SQRT_PI, exp(neg(mul(x, x))))


def _log_normal_pdf(x):
    return sub(mul(-0.5, mul(x, x)), _LOG_SQRT_2PI)


def _real_function_impl(fn, abstract_eval):
    """The impl of a scipy *function* (not a ufunc, so without a type resolution of its
    own): its result in the dtype that the abstract eval promises."""

    def impl(*args):
        dtype = abstract_eval(*(get_aval(a) for a in args)).dtype
        return np.asarray(fn(*args)).astype(dtype, copy=False)

    return impl


# ---------------------------------------------------------------------------------
# Error functions and the normal distribution

erf_p = Primitive("erf")


def erf(x):
    return erf_p.bind(x)


impl_rules[erf_p] = sc.erf
abstract_eval_rules[erf_p] = ufunc_abstract_eval(sc.erf)
defjvp_elementwise(erf_p, lambda t, out, x: mul(t, _erf_slope(x)))
# transpose: none, not linear (nor is anything else below but xlogy and xlog1py)
defvectorized(erf_p)

erfc_p = Primitive("erfc")


def erfc(x):
    return erfc_p.bind(x)


impl_rules[erfc_p] = sc.erfc
abstract_eval_rules[erfc_p] = ufunc_abstract_eval(sc.erfc)
defjvp_elementwise(erfc_p, lambda t, out, x: neg(mul(t, _erf_slope(x))))
defvectorized(erfc_p)

erfinv_p = Primitive("erfinv")


def erfinv(x):
    return erfinv_p.bind(x)


impl_rules[erfinv_p] = sc.erfinv
abstract_eval_rules[erfinv_p] = ufunc_abstract_eval(sc.erfinv)
defjvp_elementwise(erfinv_p, lambda t, out, x: mul(t, mul(_SQRT_PI_OVER_TWO, exp(mul(out, out)))))
defvectorized(erfinv_p)

ndtr_p = Primitive("ndtr")


def ndtr(x):
    return ndtr_p.bind(x)


impl_rules[ndtr_p] = sc.ndtr
abstract_eval_rules[ndtr_p] = ufunc_abstract_eval(sc.ndtr)
defjvp_elementwise(ndtr_p, lambda t, out, x: mul(t, exp(_log_normal_pdf(x))))
defvectorized(ndtr_p)

log_ndtr_p = Primitive("log_ndtr")


def log_ndtr(x):
    return log_ndtr_p.bind(x)


impl_rules[log_ndtr_p] = sc.log_ndtr
abstract_eval_rules[log_ndtr_p] = ufunc_abstract_eval(sc.log_ndtr)
# pdf / cdf as one exponential: neither underflows alone far in the lower tail
defjvp_elementwise(log_ndtr_p, lambda t, out, x: mul(t, exp(sub(_log_normal_pdf(x), out))))
defvectorized(log_ndtr_p)

# ---------------------------------------------------------------------------------
# The gamma function family

gammaln_p = Primitive("gammaln")


def gammaln(x):
    return gammaln_p.bind(x)


impl_rules[gammaln_p] = sc.gammaln
abstract_eval_rules[gammaln_p] = ufunc_abstract_eval(sc.gammaln)
defjvp_elementwise(gammaln_p, lambda t, out, x: mul(t, digamma(x)))
defvectorized(gammaln_p)

digamma_p = Primitive("digamma")


def digamma(x):
    return digamma_p.bind(x)


impl_rules[digamma_p] = sc.digamma
abstract_eval_rules[digamma_p] = ufunc_abstract_eval(sc.digamma)
defjvp_elementwise(digamma_p, lambda t, out, x: mul(t, polygamma(1, x)))
defvectorized(digamma_p)

# polygamma and zeta are Python functions in scipy, without dtypes of their own. They
# take those of a real two-argument ufunc whose float32 loop comes first (poch: 'ff->f',
# 'dd->d'), so that a Python-int order keeps float32, as digamma does.
polygamma_p = Primitive("polygamma", operand_names=("n", "x"))


def polygamma(n, x):
    return polygamma_p.bind(n, x)


abstract_eval_rules[polygamma_p] = ufunc_abstract_eval(sc.poch, "polygamma")
impl_rules[polygamma_p] = _real_function_impl(sc.polygamma, abstract_eval_rules[polygamma_p])
defjvp_elementwise(polygamma_p,
                   None,
                   lambda t, out, n, x: mul(t, polygamma(add(_param_like(n, out), 1.0), x)))
defbroadcasting(polygamma_p)

betaln_p = Primitive("betaln", operand_names=("a", "b"))


def betaln(a, b):
    return betaln_p.bind(a, b)


impl_rules[betaln_p] = sc.betaln
abstract_eval_rules[betaln_p] = ufunc_abstract_eval(sc.betaln)
defjvp_elementwise(betaln_p,
                   lambda t, out, a, b: mul(t, sub(digamma(a), digamma(add(a, b)))),
                   lambda t, out, a, b: mul(t, sub(digamma(b), digamma(add(a, b)))))
defbroadcasting(betaln_p)


def _gamma_density(a, x, out):
    """x^(a-1) e^(-x) / Gamma(a), in log space: the power and Gamma(a) overflow alone."""
    a = _param_like(a, out)
    return exp(sub(sub(xlogy(sub(a, 1.0), x), x), gammaln(a)))


igamma_p = Primitive("igamma", operand_names=("a", "x"))


def igamma(a, x):
    """The regularized lower incomplete gamma function, scipy's `gammainc`."""
    return igamma_p.bind(a, x)


impl_rules[igamma_p] = sc.gammainc
abstract_eval_rules[igamma_p] = ufunc_abstract_eval(sc.gammainc, "igamma")
defjvp_elementwise(igamma_p, None, lambda t, out, a, x: mul(t, _gamma_density(a, x, out)))
defbroadcasting(igamma_p)

igammac_p = Primitive("igammac", operand_names=("a", "x"))


def igammac(a, x):
    """The regularized upper incomplete gamma function, scipy's `gammaincc`."""
    return igammac_p.bind(a, x)


impl_rules[igammac_p] = sc.gammaincc
abstract_eval_rules[igammac_p] = ufunc_abstract_eval(sc.gammaincc, "igammac")
defjvp_elementwise(igammac_p, None, lambda t, out, a, x: neg(mul(t, _gamma_density(a, x, out))))
defbroadcasting(igammac_p)


def _beta_density(a, b, x, out):
    """x^(a-1) (1-x)^(b-1) / B(a, b), in log space like `_gamma_density`."""
    a, b = _param_like(a, out), _param_like(b, out)
    log_power = add(xlogy(sub(a, 1.0), x), xlog1py(sub(b, 1.0), neg(x)))
    return exp(sub(log_power, betaln(a, b)))


betainc_p = Primitive("betainc", operand_names=("a", "b", "x"))


def betainc(a, b, x):
    """The regularized incomplete beta function."""
    return betainc_p.bind(a, b, x)


impl_rules[betainc_p] = sc.betainc
abstract_eval_rules[betainc_p] = ufunc_abstract_eval(sc.betainc)
defjvp_elementwise(betainc_p, None, None,
                   lambda t, out, a, b, x: mul(t, _beta_density(a, b, x, out)))
defbroadcasting(betainc_p)

zeta_p = Primitive("zeta", operand_names=("x", "q"))


def zeta(x, q):
    """The Hurwitz zeta function: sum over k >= 0 of (k + q)^-x."""
    return zeta_p.bind(x, q)


abstract_eval_rules[zeta_p] = ufunc_abstract_eval(sc.poch, "zeta")
impl_rules[zeta_p] = _real_function_impl(sc.zeta, abstract_eval_rules[zeta_p])


def zeta_q_jvp(t, out, x, q):
    x = _param_like(x, out)
    return neg(mul(t, mul(x, zeta(add(x, 1.0), q))))


defjvp_elementwise(zeta_p, None, zeta_q_jvp)
defbroadcasting(zeta_p)

# ---------------------------------------------------------------------------------
# Bessel functions: derivatives in z by the recurrences, none in the order v


def def_bessel(name: str, fn, scale: float, combine) -> Primitive:
    """The Bessel function `fn(v, z)` as a primitive: no derivative in the order `v`;
    in `z`, by the recurrence `scale * combine(f(v - 1, z), f(v + 1, z))`."""
    prim = Primitive(name, operand_names=("v", "z"))
    impl_rules[prim] = fn
    abstract_eval_rules[prim] = ufunc_abstract_eval(fn)

    def z_jvp(t, out, v, z):
        v = _param_like(v, out)
        below, above = prim.bind(sub(v, 1.0), z), prim.bind(add(v, 1.0), z)
        return mul(t, mul(scale, combine(below, above)))

    defjvp_elementwise(prim, None, z_jvp)
    defbroadcasting(prim)
    return prim


jv_p = def_bessel("jv", sc.jv, 0.5, sub)  # J'_v = (J_{v-1} - J_{v+1}) / 2
iv_p = def_bessel("iv", sc.iv, 0.5, add)  # I'_v = (I_{v-1} + I_{v+1}) / 2
kv_p = def_bessel("kv", sc.kv, -0.5, add)  # K'_v = -(K_{v-1} + K_{v+1}) / 2


def jv(v, z):
    """The Bessel function of the first kind of real order v."""
    return jv_p.bind(v, z)


def iv(v, z):
    """The modified Bessel function of the first kind of real order v."""
    return iv_p.bind(v, z)


def kv(v, z):
    """The modified Bessel function of the second kind of real order v."""
    return kv_p.bind(v, z)

# ---------------------------------------------------------------------------------
# x log y and friends: 0 wherever x is 0, even where the logarithm is infinite. The
# tangent in x is therefore `xlogy(t, y)`, not `t * log(y)`: a zero tangent stays zero
# at y = 0. Being linear in t, it has a transpose. The tangent in y, t x / y, is nan at
# x = y = 0 (as in JAX): the function is flat there along y, but not differentiable.


def _transpose_linear_in_x(fn):
    """Transpose of `fn(x, y)` in x, for an `fn` linear in its first operand."""

    def transpose(ct, x, y):
        assert is_linear(x) and not is_linear(y), "linear in its first operand only"
        return [unbroadcast_cotangent(fn(ct, y), x.aval), None]

    return transpose


xlogy_p = Primitive("xlogy", operand_names=("x", "y"))


def xlogy(x, y):
    """x * log(y), and 0 where x is 0."""
    return xlogy_p.bind(x, y)


impl_rules[xlogy_p] = sc.xlogy
abstract_eval_rules[xlogy_p] = ufunc_abstract_eval(sc.xlogy)
defjvp_elementwise(xlogy_p,
                   lambda t, out, x, y: xlogy(t, y),
                   lambda t, out, x, y: mul(t, div(x, y)))
transpose_rules[xlogy_p] = _transpose_linear_in_x(xlogy)
defbroadcasting(xlogy_p)

xlog1py_p = Primitive("xlog1py", operand_names=("x", "y"))


def xlog1py(x, y):
    """x * log1p(y), and 0 where x is 0."""
    return xlog1py_p.bind(x, y)


impl_rules[xlog1py_p] = sc.xlog1py
abstract_eval_rules[xlog1py_p] = ufunc_abstract_eval(sc.xlog1py)
defjvp_elementwise(xlog1py_p,
                   lambda t, out, x, y: xlog1py(t, y),
                   lambda t, out, x, y: mul(t, div(x, add(y, 1.0))))
transpose_rules[xlog1py_p] = _transpose_linear_in_x(xlog1py)
defbroadcasting(xlog1py_p)

entr_p = Primitive("entr")


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    return entr_p.bind(x)


impl_rules[entr_p] = sc.entr
abstract_eval_rules[entr_p] = ufunc_abstract_eval(sc.entr)
defjvp_elementwise(entr_p, lambda t, out, x: neg(mul(t, add(log(x), 1.0))))
defvectorized(entr_p)

logit_p = Primitive("logit")


def logit(x):
    """log(x / (1 - x)), the inverse of expit."""
    return logit_p.bind(x)


impl_rules[logit_p] = sc.logit
abstract_eval_rules[logit_p] = ufunc_abstract_eval(sc.logit)
defjvp_elementwise(logit_p, lambda t, out, x: div(t, mul(x, sub(1.0, x))))
defvectorized(logit_p)
