"""numpy's elementwise functions on inert values: the elementwise primitives under
numpy's names, and the few numpy functions that are compositions of them.

The primitives already broadcast like numpy and give numpy's result dtypes (an
integer input to `sin` gives float64), so most names here are the primitive with
sequence arguments turned into arrays.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.avals import is_float
from ...core.backends import is_backend_array
from ...core.trace import Tracer, get_aval
from ...primitives import elementwise as ew
from ._arrays import broadcast_shapes, broadcast_to, full_like, operand, promote


def _ufunc(primitive, name: str):
    def ufunc(*args):
        return primitive(*map(operand, args))

    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = f"numpy.{name}: the `{primitive.__name__}` primitive."
    return ufunc


add = _ufunc(ew.add, "add")
subtract = _ufunc(ew.sub, "subtract")
multiply = _ufunc(ew.mul, "multiply")
divide = true_divide = _ufunc(ew.div, "divide")
negative = _ufunc(ew.neg, "negative")
maximum = _ufunc(ew.max, "maximum")
minimum = _ufunc(ew.min, "minimum")
fmod = _ufunc(ew.rem, "fmod")
abs = absolute = _ufunc(ew.abs, "absolute")  # noqa: A001 — numpy's name
sign = _ufunc(ew.sign, "sign")
floor = _ufunc(ew.floor, "floor")
ceil = _ufunc(ew.ceil, "ceil")
square = _ufunc(ew.square, "square")
sqrt = _ufunc(ew.sqrt, "sqrt")
cbrt = _ufunc(ew.cbrt, "cbrt")
exp = _ufunc(ew.exp, "exp")
exp2 = _ufunc(ew.exp2, "exp2")
expm1 = _ufunc(ew.expm1, "expm1")
log = _ufunc(ew.log, "log")
log1p = _ufunc(ew.log1p, "log1p")
sin = _ufunc(ew.sin, "sin")
cos = _ufunc(ew.cos, "cos")
tan = _ufunc(ew.tan, "tan")
arcsin = asin = _ufunc(ew.asin, "arcsin")
arccos = acos = _ufunc(ew.acos, "arccos")
arctan = atan = _ufunc(ew.atan, "arctan")
arctan2 = atan2 = _ufunc(ew.atan2, "arctan2")
sinh = _ufunc(ew.sinh, "sinh")
cosh = _ufunc(ew.cosh, "cosh")
tanh = _ufunc(ew.tanh, "tanh")
arcsinh = asinh = _ufunc(ew.asinh, "arcsinh")
arccosh = acosh = _ufunc(ew.acosh, "arccosh")
arctanh = atanh = _ufunc(ew.atanh, "arctanh")
equal = _ufunc(ew.eq, "equal")
not_equal = _ufunc(ew.ne, "not_equal")
less = _ufunc(ew.lt, "less")
less_equal = _ufunc(ew.le, "less_equal")
greater = _ufunc(ew.gt, "greater")
greater_equal = _ufunc(ew.ge, "greater_equal")
bitwise_and = _ufunc(ew.and_, "bitwise_and")
bitwise_or = _ufunc(ew.or_, "bitwise_or")
bitwise_xor = _ufunc(ew.xor, "bitwise_xor")
bitwise_not = invert = _ufunc(ew.not_, "bitwise_not")
stop_gradient = _ufunc(ew.stop_gradient, "stop_gradient")


def positive(x):
    return operand(x)


def power(x1, x2):
    """A Python integer exponent is an `integer_pow` (exact, and differentiable at
    x = 0); any other exponent is `pow`."""
    if type(x2) is int:
        return ew.integer_pow(operand(x1), x2)
    return ew.pow(operand(x1), operand(x2))


def reciprocal(x):
    """1 / x. Unlike numpy (integer division), an integer input gives a float."""
    return ew.div(1, operand(x))


def round(a, decimals=0):  # noqa: A001 — numpy's name
    """numpy.round: halves to even; `decimals` scales by a power of ten."""
    a = operand(a)
    if decimals == 0 or not is_float(get_aval(a).dtype):
        return ew.round(a)
    scale = 10.0 ** decimals
    return ew.div(ew.round(ew.mul(a, scale)), scale)


around = round


def trunc(x):
    x = operand(x)
    return where(ew.lt(x, 0), ew.ceil(x), ew.floor(x))


fix = trunc


def remainder(x1, x2):
    """numpy's `mod`: the sign of the divisor (floor division), from C's `rem`."""
    x1, x2 = promote(x1, x2)
    r = ew.rem(x1, x2)
    wrong_sign = ew.and_(ew.ne(r, 0), ew.ne(ew.lt(r, 0), ew.lt(x2, 0)))
    return where(wrong_sign, ew.add(r, x2), r)


mod = remainder


def floor_divide(x1, x2):
    return ew.floor_divide(*promote(x1, x2))


def log2(x):
    return ew.div(ew.log(operand(x)), math.log(2.0))


def log10(x):
    return ew.div(ew.log(operand(x)), math.log(10.0))


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow; NaN only where an input is NaN. The
    shift by the larger input is a constant (stop_gradient), as in logsumexp, so the
    derivative is the softmax weights everywhere, ties included."""
    x1, x2 = promote(x1, x2)
    delta = ew.sub(x1, x2)
    shift = ew.stop_gradient(ew.max(x1, x2))
    shift = where(ew.is_finite(shift), shift, 0.0)
    stable = ew.add(shift, ew.log(ew.add(ew.exp(ew.sub(x1, shift)), ew.exp(ew.sub(x2, shift)))))
    return where(isnan(delta), ew.add(x1, x2), stable)


def hypot(x1, x2):
    x1, x2 = promote(x1, x2)
    return ew.sqrt(ew.add(ew.mul(x1, x1), ew.mul(x2, x2)))


def deg2rad(x):
    return ew.mul(operand(x), np.pi / 180)


def rad2deg(x):
    return ew.mul(operand(x), 180 / np.pi)


radians, degrees = deg2rad, rad2deg


def fmax(x1, x2):
    """maximum that ignores a NaN operand."""
    x1, x2 = promote(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, ew.max(x1, x2)))


def fmin(x1, x2):
    """minimum that ignores a NaN operand."""
    x1, x2 = promote(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, ew.min(x1, x2)))


def polyval(p, x):
    """numpy.polyval by Horner's rule; `p` holds the coefficients, highest power first."""
    out = 0
    for coefficient in p:
        out = ew.add(ew.mul(out, operand(x)), operand(coefficient))
    return out


def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 — numpy's names
    """numpy.clip; `min`/`max` are numpy 2's (and JAX's) names for the bounds."""
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    out = operand(a)
    if a_min is not None:
        out = ew.max(out, operand(a_min))
    if a_max is not None:
        out = ew.min(out, operand(a_max))
    return out


# ---------------------------------------------------------------------------------
# Predicates and logic


def _as_bool(x):
    """`x != 0`, unless `x` is boolean already; numpy converts plain values."""
    x = operand(x)
    if not isinstance(x, Tracer) and not is_backend_array(x):
        return np.asarray(x, np.bool_)
    return x if get_aval(x).dtype == np.bool_ else ew.ne(x, 0)


def logical_and(x1, x2):
    return ew.and_(_as_bool(x1), _as_bool(x2))


def logical_or(x1, x2):
    return ew.or_(_as_bool(x1), _as_bool(x2))


def logical_xor(x1, x2):
    return ew.xor(_as_bool(x1), _as_bool(x2))


def logical_not(x):
    return ew.not_(_as_bool(x))


def isnan(x):
    x = operand(x)
    return ew.ne(x, x) if is_float(get_aval(x).dtype) else full_like(x, False, np.bool_)


def isfinite(x):
    x = operand(x)
    return ew.is_finite(x) if is_float(get_aval(x).dtype) else full_like(x, True, np.bool_)


def isinf(x):
    x = operand(x)
    return ew.not_(ew.or_(isfinite(x), isnan(x)))


def isclose(a, b, rtol=1e-05, atol=1e-08):
    """|a - b| <= atol + rtol |b|, as numpy.isclose for finite values."""
    a, b = promote(a, b)
    return ew.le(ew.abs(ew.sub(a, b)), ew.add(atol, ew.mul(rtol, ew.abs(b))))


def where(condition, x=None, y=None):
    """The elementwise choice `condition ? x : y` (a `select_n`). With only a condition
    it is numpy.nonzero, which needs the condition's concrete value."""
    if x is None and y is None:
        return np.nonzero(np.asarray(condition))
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    condition = _as_bool(condition)
    x, y = promote(x, y)
    shape = broadcast_shapes(*(get_aval(v).shape for v in (condition, x, y)), name="where")
    return ew.select_n(broadcast_to(condition, shape), broadcast_to(y, shape),
                       broadcast_to(x, shape))
