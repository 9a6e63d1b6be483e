"""Transcendental elementwise primitives and powers, with numpy's broadcasting and dtypes.

This module defines the transcendental functions and powers; the package
`primitives.elementwise` re-exports it with arithmetic, the piecewise-constant
operations and the shared typing rules.

Transcendental functions are not declared recomputable: partial evaluation keeps
their outputs for the backward pass rather than evaluate them twice. Their jvp rules
read as little primal data as they can (`exp` and `tanh` read only their output).

Each primitive is one block: primitive, bind wrapper, impl, abstract eval, jvp,
transpose (none here: nothing in this module is linear), batching.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.batching import defvectorized
from ...interpreters.fusion import deffused, deffused_ufunc
from .arithmetic import (
    add,
    div,
    integer_pow,
    mul,
    neg,
    square,
    sub,
)
from .piecewise import (
    eq,
    select_n,
)
from .ufunc_rules import (
    defbroadcasting,
    defjvp_elementwise,
    ufunc_abstract_eval,
)

# ---------------------------------------------------------------------------------
# Trigonometric functions

sin_p = Primitive("sin")


def sin(x: ArrayLike) -> np.ndarray:
    return sin_p.bind(x)


impl_rules[sin_p] = np.sin
deffused_ufunc(sin_p, np.sin)
abstract_eval_rules[sin_p] = ufunc_abstract_eval(np.sin)
defjvp_elementwise(sin_p, lambda t, out, x: mul(t, cos(x)))
defvectorized(sin_p)

cos_p = Primitive("cos")


def cos(x: ArrayLike) -> np.ndarray:
    return cos_p.bind(x)


impl_rules[cos_p] = np.cos
deffused_ufunc(cos_p, np.cos)
abstract_eval_rules[cos_p] = ufunc_abstract_eval(np.cos)
defjvp_elementwise(cos_p, lambda t, out, x: neg(mul(t, sin(x))))
defvectorized(cos_p)

tan_p = Primitive("tan")


def tan(x: ArrayLike) -> np.ndarray:
    return tan_p.bind(x)


impl_rules[tan_p] = np.tan
deffused_ufunc(tan_p, np.tan)
abstract_eval_rules[tan_p] = ufunc_abstract_eval(np.tan)
defjvp_elementwise(tan_p, lambda t, out, x: mul(t, add(1.0, mul(out, out))))
defvectorized(tan_p)

asin_p = Primitive("asin")


def asin(x: ArrayLike) -> np.ndarray:
    return asin_p.bind(x)


impl_rules[asin_p] = np.arcsin
deffused_ufunc(asin_p, np.arcsin)
abstract_eval_rules[asin_p] = ufunc_abstract_eval(np.arcsin, "asin")
defjvp_elementwise(asin_p, lambda t, out, x: mul(t, rsqrt(sub(1.0, mul(x, x)))))
defvectorized(asin_p)

acos_p = Primitive("acos")


def acos(x: ArrayLike) -> np.ndarray:
    return acos_p.bind(x)


impl_rules[acos_p] = np.arccos
deffused_ufunc(acos_p, np.arccos)
abstract_eval_rules[acos_p] = ufunc_abstract_eval(np.arccos, "acos")
defjvp_elementwise(acos_p, lambda t, out, x: neg(mul(t, rsqrt(sub(1.0, mul(x, x))))))
defvectorized(acos_p)

atan_p = Primitive("atan")


def atan(x: ArrayLike) -> np.ndarray:
    return atan_p.bind(x)


impl_rules[atan_p] = np.arctan
deffused_ufunc(atan_p, np.arctan)
abstract_eval_rules[atan_p] = ufunc_abstract_eval(np.arctan, "atan")
defjvp_elementwise(atan_p, lambda t, out, x: div(t, add(1.0, mul(x, x))))
defvectorized(atan_p)

atan2_p = Primitive("atan2")


def atan2(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """The angle of the point (y, x): arctan(x / y) in the right quadrant."""
    return atan2_p.bind(x, y)


impl_rules[atan2_p] = np.arctan2
deffused_ufunc(atan2_p, np.arctan2)
abstract_eval_rules[atan2_p] = ufunc_abstract_eval(np.arctan2, "atan2")


def _atan2_radius2(x, y):
    return add(mul(x, x), mul(y, y))


defjvp_elementwise(atan2_p,
                   lambda t, out, x, y: mul(t, div(y, _atan2_radius2(x, y))),
                   lambda t, out, x, y: mul(t, div(neg(x), _atan2_radius2(x, y))))
defbroadcasting(atan2_p)

# ---------------------------------------------------------------------------------
# Hyperbolic functions

sinh_p = Primitive("sinh")


def sinh(x: ArrayLike) -> np.ndarray:
    return sinh_p.bind(x)


impl_rules[sinh_p] = np.sinh
deffused_ufunc(sinh_p, np.sinh)
abstract_eval_rules[sinh_p] = ufunc_abstract_eval(np.sinh)
defjvp_elementwise(sinh_p, lambda t, out, x: mul(t, cosh(x)))
defvectorized(sinh_p)

cosh_p = Primitive("cosh")


def cosh(x: ArrayLike) -> np.ndarray:
    return cosh_p.bind(x)


impl_rules[cosh_p] = np.cosh
deffused_ufunc(cosh_p, np.cosh)
abstract_eval_rules[cosh_p] = ufunc_abstract_eval(np.cosh)
defjvp_elementwise(cosh_p, lambda t, out, x: mul(t, sinh(x)))
defvectorized(cosh_p)

tanh_p = Primitive("tanh")


def tanh(x: ArrayLike) -> np.ndarray:
    return tanh_p.bind(x)


impl_rules[tanh_p] = np.tanh
deffused_ufunc(tanh_p, np.tanh)
abstract_eval_rules[tanh_p] = ufunc_abstract_eval(np.tanh)
defjvp_elementwise(tanh_p, lambda t, out, x: mul(t, sub(1.0, mul(out, out))))
defvectorized(tanh_p)

asinh_p = Primitive("asinh")


def asinh(x: ArrayLike) -> np.ndarray:
    return asinh_p.bind(x)


impl_rules[asinh_p] = np.arcsinh
deffused_ufunc(asinh_p, np.arcsinh)
abstract_eval_rules[asinh_p] = ufunc_abstract_eval(np.arcsinh, "asinh")
defjvp_elementwise(asinh_p, lambda t, out, x: mul(t, rsqrt(add(mul(x, x), 1.0))))
defvectorized(asinh_p)

acosh_p = Primitive("acosh")


def acosh(x: ArrayLike) -> np.ndarray:
    return acosh_p.bind(x)


impl_rules[acosh_p] = np.arccosh
deffused_ufunc(acosh_p, np.arccosh)
abstract_eval_rules[acosh_p] = ufunc_abstract_eval(np.arccosh, "acosh")
# (x - 1)(x + 1) rather than x*x - 1: no cancellation near x = 1.
defjvp_elementwise(acosh_p, lambda t, out, x: mul(t, rsqrt(mul(sub(x, 1.0), add(x, 1.0)))))
defvectorized(acosh_p)

atanh_p = Primitive("atanh")


def atanh(x: ArrayLike) -> np.ndarray:
    return atanh_p.bind(x)


impl_rules[atanh_p] = np.arctanh
deffused_ufunc(atanh_p, np.arctanh)
abstract_eval_rules[atanh_p] = ufunc_abstract_eval(np.arctanh, "atanh")
defjvp_elementwise(atanh_p, lambda t, out, x: div(t, sub(1.0, mul(x, x))))
defvectorized(atanh_p)

# ---------------------------------------------------------------------------------
# Exponentials and logarithms

exp_p = Primitive("exp")


def exp(x: ArrayLike) -> np.ndarray:
    return exp_p.bind(x)


impl_rules[exp_p] = np.exp
deffused_ufunc(exp_p, np.exp)
abstract_eval_rules[exp_p] = ufunc_abstract_eval(np.exp)
defjvp_elementwise(exp_p, lambda t, out, x: mul(t, out))
defvectorized(exp_p)

exp2_p = Primitive("exp2")


def exp2(x: ArrayLike) -> np.ndarray:
    return exp2_p.bind(x)


impl_rules[exp2_p] = np.exp2
deffused_ufunc(exp2_p, np.exp2)
abstract_eval_rules[exp2_p] = ufunc_abstract_eval(np.exp2)
# A Python float keeps the output's dtype; np.log(2) would promote float32 to float64.
_LN2 = math.log(2.0)
defjvp_elementwise(exp2_p, lambda t, out, x: mul(t, mul(out, _LN2)))
defvectorized(exp2_p)

expm1_p = Primitive("expm1")


def expm1(x: ArrayLike) -> np.ndarray:
    return expm1_p.bind(x)


impl_rules[expm1_p] = np.expm1
deffused_ufunc(expm1_p, np.expm1)
abstract_eval_rules[expm1_p] = ufunc_abstract_eval(np.expm1)
defjvp_elementwise(expm1_p, lambda t, out, x: mul(t, add(out, 1.0)))
defvectorized(expm1_p)

log_p = Primitive("log")


def log(x: ArrayLike) -> np.ndarray:
    return log_p.bind(x)


impl_rules[log_p] = np.log
deffused_ufunc(log_p, np.log)
abstract_eval_rules[log_p] = ufunc_abstract_eval(np.log)
defjvp_elementwise(log_p, lambda t, out, x: div(t, x))
defvectorized(log_p)

log1p_p = Primitive("log1p")


def log1p(x: ArrayLike) -> np.ndarray:
    return log1p_p.bind(x)


impl_rules[log1p_p] = np.log1p
deffused_ufunc(log1p_p, np.log1p)
abstract_eval_rules[log1p_p] = ufunc_abstract_eval(np.log1p)
defjvp_elementwise(log1p_p, lambda t, out, x: div(t, add(x, 1.0)))
defvectorized(log1p_p)

logistic_p = Primitive("logistic")


def logistic(x: ArrayLike) -> np.ndarray:
    """1 / (1 + exp(-x)), without overflow (scipy.special.expit)."""
    return logistic_p.bind(x)


impl_rules[logistic_p] = scipy.special.expit
deffused(logistic_p, lambda x: f"1.0 / (1.0 + math.exp(-{x}))", vectorised=False)
abstract_eval_rules[logistic_p] = ufunc_abstract_eval(scipy.special.expit, "logistic")
defjvp_elementwise(logistic_p, lambda t, out, x: mul(t, mul(out, sub(1.0, out))))
defvectorized(logistic_p)

# ---------------------------------------------------------------------------------
# Roots and real powers

sqrt_p = Primitive("sqrt")


def sqrt(x: ArrayLike) -> np.ndarray:
    return sqrt_p.bind(x)


impl_rules[sqrt_p] = np.sqrt
deffused_ufunc(sqrt_p, np.sqrt)
abstract_eval_rules[sqrt_p] = ufunc_abstract_eval(np.sqrt)
defjvp_elementwise(sqrt_p, lambda t, out, x: mul(t, div(0.5, out)))  # (a coefficient: `x * 1`)
defvectorized(sqrt_p)

rsqrt_p = Primitive("rsqrt")


def rsqrt(x: ArrayLike) -> np.ndarray:
    return rsqrt_p.bind(x)


impl_rules[rsqrt_p] = lambda x: 1.0 / np.sqrt(x)
deffused(rsqrt_p, lambda x: f"1.0 / np.sqrt({x})")
abstract_eval_rules[rsqrt_p] = ufunc_abstract_eval(np.sqrt, "rsqrt")
# d/dx x^(-1/2) = -x^(-3/2) / 2 = -out^3 / 2
defjvp_elementwise(rsqrt_p, lambda t, out, x: mul(t, mul(integer_pow(out, 3), -0.5)))
defvectorized(rsqrt_p)

cbrt_p = Primitive("cbrt")


def cbrt(x: ArrayLike) -> np.ndarray:
    return cbrt_p.bind(x)


impl_rules[cbrt_p] = np.cbrt
deffused_ufunc(cbrt_p, np.cbrt)
abstract_eval_rules[cbrt_p] = ufunc_abstract_eval(np.cbrt)
defjvp_elementwise(cbrt_p, lambda t, out, x: div(t, mul(square(out), 3.0)))
defvectorized(cbrt_p)

pow_p = Primitive("pow")


def pow(x: ArrayLike, y: ArrayLike) -> np.ndarray:  # noqa: A001 — lax's name
    """x ** y for arrays x and y (integer_pow for a constant integer exponent)."""
    return pow_p.bind(x, y)


impl_rules[pow_p] = np.power
deffused_ufunc(pow_p, np.power)
abstract_eval_rules[pow_p] = ufunc_abstract_eval(np.power, "pow")


def _pow_jvp_y(t, out, x, y):
    """t * log(x) * x**y, with 0 rather than 0 * -inf = nan where x is 0 (as JAX)."""
    return mul(t, mul(log(select_n(eq(x, 0), x, 1)), out))


def _pow_jvp_x(t, out, x, y):
    """t * y * x**(y - 1), with the exponent replaced by 0 where y is 0: x**0 is the
    constant 1 (also at x = 0), so its derivative is 0, not 0 * 0**-1 = nan. At y = 1
    it is 1 everywhere (0**0 = 1)."""
    return mul(t, mul(y, pow(x, select_n(eq(y, 0), sub(y, 1), 0))))


defjvp_elementwise(pow_p, _pow_jvp_x, _pow_jvp_y)
defbroadcasting(pow_p)
