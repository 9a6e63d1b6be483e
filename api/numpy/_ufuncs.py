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
from ...core.typing import ArrayLike
from ...primitives import elementwise as ew
from ...primitives import reductions as red
from ...primitives import special as sp
from ._array import Array
from ._arrays import astype, broadcast_shapes, broadcast_to, full_like, operand, promote


def _ufunc(primitive, name: str):
    def ufunc(*args: ArrayLike) -> Array:
        return primitive(*map(operand, args))

    ufunc.binds = (primitive, operand)  # what inert.numpy's entry does (returning_arrays)
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


def positive(x: ArrayLike) -> Array:
    return operand(x)


def power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """A Python integer exponent is an `integer_pow` (exact, and differentiable at
    x = 0); any other exponent is `pow`."""
    if type(x2) is int:
        return ew.integer_pow(operand(x1), x2)
    return ew.pow(operand(x1), operand(x2))


def reciprocal(x: ArrayLike) -> Array:
    """1 / x. Unlike numpy (integer division), an integer input gives a float."""
    return ew.div(1, operand(x))


def round(a: ArrayLike, decimals: int = 0) -> Array:  # noqa: A001 — numpy's name
    """numpy.round: halves to even; `decimals` scales by a power of ten."""
    a = operand(a)
    if decimals == 0 or not is_float(get_aval(a).dtype):
        return ew.round(a)
    scale = 10.0 ** decimals
    return ew.div(ew.round(ew.mul(a, scale)), scale)


around = round


def trunc(x: ArrayLike) -> Array:
    x = operand(x)
    return where(ew.lt(x, 0), ew.ceil(x), ew.floor(x))


fix = trunc


def remainder(x1: ArrayLike, x2: ArrayLike) -> Array:
    """numpy's `mod`: the sign of the divisor (floor division), from C's `rem`."""
    x1, x2 = promote(x1, x2)
    r = ew.rem(x1, x2)
    wrong_sign = ew.and_(ew.ne(r, 0), ew.ne(ew.lt(r, 0), ew.lt(x2, 0)))
    return where(wrong_sign, ew.add(r, x2), r)


mod = remainder


def floor_divide(x1: ArrayLike, x2: ArrayLike) -> Array:
    return ew.floor_divide(*promote(x1, x2))


def log2(x: ArrayLike) -> Array:
    return ew.div(ew.log(operand(x)), math.log(2.0))


def log10(x: ArrayLike) -> Array:
    return ew.div(ew.log(operand(x)), math.log(10.0))


def logaddexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """log(exp(x1) + exp(x2)) without overflow; NaN only where an input is NaN. The
    shift by the larger input is a constant (stop_gradient), as in logsumexp, so the
    derivative is the softmax weights everywhere, ties included."""
    x1, x2 = promote(x1, x2)
    delta = ew.sub(x1, x2)
    shift = ew.stop_gradient(ew.max(x1, x2))
    shift = where(ew.is_finite(shift), shift, 0.0)
    stable = ew.add(shift, ew.log(ew.add(ew.exp(ew.sub(x1, shift)), ew.exp(ew.sub(x2, shift)))))
    return where(isnan(delta), ew.add(x1, x2), stable)


def hypot(x1: ArrayLike, x2: ArrayLike) -> Array:
    x1, x2 = promote(x1, x2)
    return ew.sqrt(ew.add(ew.mul(x1, x1), ew.mul(x2, x2)))


def deg2rad(x: ArrayLike) -> Array:
    return ew.mul(operand(x), np.pi / 180)


def rad2deg(x: ArrayLike) -> Array:
    return ew.mul(operand(x), 180 / np.pi)


radians, degrees = deg2rad, rad2deg


def fmax(x1: ArrayLike, x2: ArrayLike) -> Array:
    """maximum that ignores a NaN operand."""
    x1, x2 = promote(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, ew.max(x1, x2)))


def fmin(x1: ArrayLike, x2: ArrayLike) -> Array:
    """minimum that ignores a NaN operand."""
    x1, x2 = promote(x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, ew.min(x1, x2)))


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """numpy.polyval by Horner's rule; `p` holds the coefficients, highest power first."""
    out = 0
    for coefficient in p:
        out = ew.add(ew.mul(out, operand(x)), operand(coefficient))
    return out


def clip(a: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None, *,
         min: ArrayLike | None = None,
         max: ArrayLike | None = None) -> Array:  # noqa: A002 — numpy's names
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


def logical_and(x1: ArrayLike, x2: ArrayLike) -> Array:
    return ew.and_(_as_bool(x1), _as_bool(x2))


def logical_or(x1: ArrayLike, x2: ArrayLike) -> Array:
    return ew.or_(_as_bool(x1), _as_bool(x2))


def logical_xor(x1: ArrayLike, x2: ArrayLike) -> Array:
    return ew.xor(_as_bool(x1), _as_bool(x2))


def logical_not(x: ArrayLike) -> Array:
    return ew.not_(_as_bool(x))


def isnan(x: ArrayLike) -> Array:
    x = operand(x)
    return ew.ne(x, x) if is_float(get_aval(x).dtype) else full_like(x, False, np.bool_)


def isfinite(x: ArrayLike) -> Array:
    x = operand(x)
    return ew.is_finite(x) if is_float(get_aval(x).dtype) else full_like(x, True, np.bool_)


def isinf(x: ArrayLike) -> Array:
    x = operand(x)
    return ew.not_(ew.or_(isfinite(x), isnan(x)))


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Array:
    """`|a - b| <= atol + rtol |b|`, as numpy.isclose: infinities are close to equal
    infinities only, NaNs to nothing (to NaNs with `equal_nan`)."""
    a, b = promote(a, b)
    if not is_float(get_aval(a).dtype):
        return ew.le(ew.abs(ew.sub(a, b)), ew.add(atol, ew.mul(rtol, ew.abs(b))))
    finite = logical_and(isfinite(a), isfinite(b))
    a_, b_ = where(finite, a, 0.0), where(finite, b, 0.0)
    close = ew.le(ew.abs(ew.sub(a_, b_)), ew.add(atol, ew.mul(rtol, ew.abs(b_))))
    close = where(finite, close, ew.eq(a, b))
    return logical_or(close, logical_and(isnan(a), isnan(b))) if equal_nan else close


def where(condition, x=None, y=None):
    """The elementwise choice `condition ? x : y` (a `select_n`); the one-argument form
    (numpy.nonzero) is `_sorting.where`'s."""
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    condition = _as_bool(condition)
    x, y = promote(x, y)
    shape = broadcast_shapes(*(get_aval(v).shape for v in (condition, x, y)), name="where")
    return ew.select_n(broadcast_to(condition, shape), broadcast_to(y, shape),
                       broadcast_to(x, shape))


# ---------------------------------------------------------------------------------
# More of numpy's elementwise functions


def logaddexp2(x1: ArrayLike, x2: ArrayLike) -> Array:
    """log2(2^x1 + 2^x2), shifted by the maximum like logaddexp."""
    x1, x2 = promote(x1, x2)
    if not is_float(get_aval(x1).dtype):
        x1, x2 = astype(x1, np.float64), astype(x2, np.float64)
    return ew.div(logaddexp(ew.mul(x1, math.log(2.0)), ew.mul(x2, math.log(2.0))), math.log(2.0))


def fabs(x: ArrayLike) -> Array:
    """`|x|` as a float (numpy.fabs refuses nothing real; integers become float64)."""
    x = operand(x)
    return ew.abs(x if is_float(get_aval(x).dtype) else astype(x, np.float64))


def heaviside(x1: ArrayLike, x2: ArrayLike) -> Array:
    """0 below 0, 1 above, x2 at 0 (its derivative in x1 is zero)."""
    x1, x2 = promote(x1, x2)
    return where(ew.lt(x1, 0), 0.0, where(ew.gt(x1, 0), 1.0, x2))


copysign = _ufunc(ew.copysign, "copysign")
sinc = _ufunc(sp.sinc, "sinc")
nextafter = _ufunc(ew.nextafter, "nextafter")


def ldexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 * 2^x2 for integer x2: the power of two is exact."""
    x1 = operand(x1)
    if not is_float(get_aval(x1).dtype):
        x1 = astype(x1, np.float64)
    return ew.mul(x1, ew.exp2(astype(x2, get_aval(x1).dtype)))


def _is_complex(x) -> bool:
    return get_aval(x).dtype.kind == "c"


def real(val: ArrayLike) -> Array:
    val = operand(val)
    return ew.real(val) if _is_complex(val) else val


def imag(val: ArrayLike) -> Array:
    val = operand(val)
    return ew.imag(val) if _is_complex(val) else full_like(val, 0)


def conjugate(x: ArrayLike) -> Array:
    x = operand(x)
    return ew.conj(x) if _is_complex(x) else x


conj = conjugate


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument: atan2(imag, real) of a complex number; of a real one pi for
    negative ones, else 0 (zero derivative)."""
    z = operand(z)
    half_turn = 180.0 if deg else math.pi
    if not _is_complex(z):
        return where(ew.lt(z, 0), half_turn, 0.0)
    turn = ew.atan2(ew.imag(z), ew.real(z))
    return ew.mul(turn, 180.0 / math.pi) if deg else turn


def nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0,
               posinf: ArrayLike | None = None, neginf: ArrayLike | None = None) -> Array:
    """NaN, inf and -inf replaced by finite numbers (the largest ones by default)."""
    x = operand(x)
    dtype = get_aval(x).dtype
    if not is_float(dtype):
        return x
    big = np.finfo(dtype).max
    x = where(isnan(x), nan, x)
    x = where(ew.eq(x, np.inf), big if posinf is None else posinf, x)
    return where(ew.eq(x, -np.inf), -big if neginf is None else neginf, x)


def _reduce_all(mask):
    """Whether every element of the boolean `mask` holds (a 0-d boolean)."""
    mask = operand(mask)
    return red.reduce_and(mask, tuple(range(get_aval(mask).ndim)))


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Array:
    return _reduce_all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """Same shape and equal elements (NaNs equal with `equal_nan`)."""
    a1, a2 = operand(a1), operand(a2)
    if get_aval(a1).shape != get_aval(a2).shape:
        return np.bool_(False)
    equal = ew.eq(a1, a2)
    if equal_nan:
        equal = logical_or(equal, logical_and(isnan(a1), isnan(a2)))
    return _reduce_all(equal)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Equal after broadcasting together."""
    a1, a2 = operand(a1), operand(a2)
    try:
        broadcast_shapes(get_aval(a1).shape, get_aval(a2).shape)
    except ValueError:
        return np.bool_(False)
    return _reduce_all(ew.eq(a1, a2))


def signbit(x: ArrayLike) -> Array:
    """Whether the sign bit is set (so -0.0 counts as negative): copysign's sign."""
    x = operand(x)
    if not is_float(get_aval(x).dtype):
        return ew.lt(x, 0)
    return ew.lt(ew.copysign(1.0, x), 0)


def isposinf(x: ArrayLike) -> Array:
    return ew.eq(operand(x), np.inf)


def isneginf(x: ArrayLike) -> Array:
    return ew.eq(operand(x), -np.inf)


def isreal(x: ArrayLike) -> Array:
    return ew.eq(imag(x), 0)


def iscomplex(x: ArrayLike) -> Array:
    return ew.ne(imag(x), 0)


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """numpy.real_if_close: a complex `a` whose imaginary parts are all within `tol`
    machine epsilons of 0 (`tol` itself if below 1) as its real part, else `a`. The
    result's dtype depends on the values, so they must be known (eagerly, under grad);
    while tracing for jit it is a ConcretizationError."""
    a = operand(a)
    if not _is_complex(a):
        return a
    parts = imag(a)
    values = parts.concrete_value("real_if_close (its dtype depends on the values)") \
        if isinstance(parts, Tracer) else np.asarray(parts)
    eps = np.finfo(get_aval(a).dtype).eps
    return real(a) if np.all(np.abs(values) < (tol * eps if tol > 1 else tol)) else a


def isrealobj(x: ArrayLike) -> bool:
    return not iscomplexobj(x)


def iscomplexobj(x: ArrayLike) -> bool:
    return bool(np.issubdtype(get_aval(operand(x)).dtype, np.complexfloating))


def isscalar(element: ArrayLike) -> bool:
    """A Python or numpy scalar, or a 0-d inert value (as JAX counts it)."""
    return np.isscalar(element) or (isinstance(element, Tracer) and get_aval(element).ndim == 0)


def rint(x: ArrayLike) -> Array:
    """Round to the nearest integer, halves to even (a float, as numpy)."""
    x = operand(x)
    return ew.round(x if is_float(get_aval(x).dtype) else astype(x, np.float64))


def modf(x: ArrayLike) -> tuple[Array, Array]:
    """(fractional part, integral part), both with x's sign."""
    x = operand(x)
    whole = trunc(x if is_float(get_aval(x).dtype) else astype(x, np.float64))
    return ew.sub(x, whole), whole


def divmod(x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:  # noqa: A001 — numpy's name
    return floor_divide(x1, x2), remainder(x1, x2)


def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """x1 ** x2 in float64 at least."""
    x1, x2 = promote(x1, x2)
    dtype = np.promote_types(get_aval(x1).dtype, np.float64)
    return ew.pow(astype(x1, dtype), astype(x2, dtype))


i0 = _ufunc(sp.i0, "i0")


def frexp(x: ArrayLike) -> tuple[Array, Array]:
    """`(mantissa, exponent)` with `x = mantissa 2^exponent` and `1/2 <= |mantissa| < 1` (0,
    inf and nan keep exponent 0). The mantissa is x times a power of two: its
    derivative is that power; the exponent is an int32, as numpy's."""
    x = operand(x)
    if not is_float(get_aval(x).dtype):
        x = astype(x, np.float64)
    regular = logical_and(isfinite(x), ew.ne(x, 0))
    magnitude = ew.abs(where(regular, x, 1.0))
    exponent = ew.add(ew.floor(log2(magnitude)), 1.0)
    for _ in range(2):  # log2 may round across a power of two: correct by one
        scaled = _times_power_of_two(magnitude, ew.neg(exponent))
        exponent = where(ew.ge(scaled, 1.0), ew.add(exponent, 1.0),
                         where(ew.lt(scaled, 0.5), ew.sub(exponent, 1.0), exponent))
    exponent = where(regular, exponent, 0.0)
    return _times_power_of_two(x, ew.neg(exponent)), astype(exponent, np.int32)


def _times_power_of_two(x, e):
    """x 2^e for integral e, in two exact halves (2^e alone may over- or underflow)."""
    half = ew.floor(ew.mul(e, 0.5))
    return ew.mul(ew.mul(x, ew.exp2(half)), ew.exp2(ew.sub(e, half)))
