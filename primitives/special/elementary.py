"""Functions defined by an integral, a series or a quotient of elementary functions: the
dilogarithm (spence), the exponential integrals expi, exp1 and expn, 1F1 and 2F1,
the Box-Cox transforms, cosm1 and sinc. Orders and shape parameters (n, a, b, lmbda)
have no derivative here.

Their derivatives are the integrands: spence' = log z / (1 - z) (scipy's convention,
spence(1) = 0), Ei' = e^x / x, E1' = -e^-x / x. sinc' = (cos(pi x) - sinc(x)) / x
cancels near 0, where it is a Taylor polynomial instead, so that every order of
derivative is right at and around 0.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.batching import defvectorized
from ..elementwise import abs, add, cos, div, exp, log, lt, mul, neg, select_n, sin, sub
from ..elementwise.ufunc_rules import defbroadcasting, defjvp_elementwise, ufunc_abstract_eval
from .common import def_unary, param_like, real_function_impl

# not linear in any operand: no transposes in this module
spence_p = def_unary("spence", sc.spence, lambda z, out: div(log(z), sub(1.0, z)))


def spence(z: ArrayLike) -> np.ndarray:
    """The dilogarithm: the integral from 1 to z of log t / (1 - t)."""
    return spence_p.bind(z)


expi_p = def_unary("expi", sc.expi, lambda x, out: div(exp(x), x))


def expi(x: ArrayLike) -> np.ndarray:
    """The exponential integral Ei(x)."""
    return expi_p.bind(x)


exp1_p = def_unary("exp1", sc.exp1, lambda x, out: neg(div(exp(neg(x)), x)))


def exp1(x: ArrayLike) -> np.ndarray:
    """The exponential integral E1(x), the integral from x to inf of e^-t / t."""
    return exp1_p.bind(x)


cosm1_p = def_unary("cosm1", sc.cosm1, lambda x, out: neg(sin(x)))


def cosm1(x: ArrayLike) -> np.ndarray:
    """cos(x) - 1, accurate near 0."""
    return cosm1_p.bind(x)


expn_p = Primitive("expn", operand_names=("n", "x"))


def expn(n: ArrayLike, x: ArrayLike) -> np.ndarray:
    """The generalized exponential integral E_n(x); E_n' = -E_(n-1)."""
    return expn_p.bind(n, x)


impl_rules[expn_p] = sc.expn
abstract_eval_rules[expn_p] = ufunc_abstract_eval(sc.expn)
defjvp_elementwise(expn_p, None,
                   lambda t, out, n, x: neg(mul(t, expn(sub(param_like(n, out), 1.0), x))))
defbroadcasting(expn_p)

hyp1f1_p = Primitive("hyp1f1", operand_names=("a", "b", "x"))


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> np.ndarray:
    """Kummer's confluent hypergeometric function; d/dx = a/b 1F1(a+1; b+1; x)."""
    return hyp1f1_p.bind(a, b, x)


impl_rules[hyp1f1_p] = sc.hyp1f1
abstract_eval_rules[hyp1f1_p] = ufunc_abstract_eval(sc.hyp1f1)


def _hyp1f1_x_jvp(t, out, a, b, x):
    a, b = param_like(a, out), param_like(b, out)
    return mul(t, mul(div(a, b), hyp1f1(add(a, 1.0), add(b, 1.0), x)))


defjvp_elementwise(hyp1f1_p, None, None, _hyp1f1_x_jvp)
defbroadcasting(hyp1f1_p)


hyp2f1_p = Primitive("hyp2f1", operand_names=("a", "b", "c", "x"))


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> np.ndarray:
    """Gauss's hypergeometric function; d/dx = ab/c 2F1(a+1, b+1; c+1; x)."""
    return hyp2f1_p.bind(a, b, c, x)


impl_rules[hyp2f1_p] = sc.hyp2f1
abstract_eval_rules[hyp2f1_p] = ufunc_abstract_eval(sc.hyp2f1)


def _hyp2f1_x_jvp(t, out, a, b, c, x):
    a, b, c = param_like(a, out), param_like(b, out), param_like(c, out)
    return mul(t, mul(div(mul(a, b), c), hyp2f1(add(a, 1.0), add(b, 1.0), add(c, 1.0), x)))


defjvp_elementwise(hyp2f1_p, None, None, None, _hyp2f1_x_jvp)
defbroadcasting(hyp2f1_p)


def def_boxcox(name: str, fn, shift: float) -> Primitive:
    """A Box-Cox transform `fn(x, lmbda)` of x + shift: d/dx = (x + shift)^(lmbda - 1);
    no derivative in lmbda here."""
    prim = Primitive(name, operand_names=("x", "lmbda"))
    impl_rules[prim] = fn
    abstract_eval_rules[prim] = ufunc_abstract_eval(fn)

    def x_jvp(t, out, x, lmbda):
        lmbda = param_like(lmbda, out)
        return mul(t, exp(mul(sub(lmbda, 1.0), log(add(x, shift)))))

    defjvp_elementwise(prim, x_jvp, None)
    defbroadcasting(prim)
    return prim


boxcox_p = def_boxcox("boxcox", sc.boxcox, 0.0)


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> np.ndarray:
    """(x^lmbda - 1) / lmbda, log x at lmbda = 0."""
    return boxcox_p.bind(x, lmbda)


boxcox1p_p = def_boxcox("boxcox1p", sc.boxcox1p, 1.0)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> np.ndarray:
    """boxcox of 1 + x, accurate for small x."""
    return boxcox1p_p.bind(x, lmbda)


# Below this |x|, the quotient loses more digits (eps / x^2) than the polynomial's
# truncation does (pi^4 x^4 / 280).
_SINC_TAYLOR_BELOW = 1e-3


def _sinc_slope(x, out):
    small = lt(abs(x), _SINC_TAYLOR_BELOW)
    safe_x = select_n(small, x, 1.0)
    quotient = div(sub(cos(mul(math.pi, x)), out), safe_x)
    x2 = mul(x, x)
    taylor = mul(x, add(-math.pi ** 2 / 3.0, mul(math.pi ** 4 / 30.0, x2)))
    return select_n(small, quotient, taylor)


sinc_p = Primitive("sinc")


def sinc(x: ArrayLike) -> np.ndarray:
    """sin(pi x) / (pi x), and 1 at 0 (numpy's normalised sinc)."""
    return sinc_p.bind(x)


abstract_eval_rules[sinc_p] = ufunc_abstract_eval(np.sin, "sinc")
impl_rules[sinc_p] = real_function_impl(np.sinc, abstract_eval_rules[sinc_p])
defjvp_elementwise(sinc_p, lambda t, out, x: mul(t, _sinc_slope(x, out)))
defvectorized(sinc_p)
