"""Elementwise primitives: numpy ufuncs, with numpy's broadcasting and dtypes.

The family is imported from here. Arithmetic (`arithmetic`) and the piecewise-constant
operations and selection (`piecewise`) sit below the transcendental functions
(`transcendental`), so that their rules can use each other without an import cycle;
the typing and broadcasting rules they all share are in `ufunc_rules`.
"""



from __future__ import annotations

from .arithmetic import (
    abs,
    add,
    clamp,
    copysign,
    div,
    integer_pow,
    max,
    min,
    mul,
    neg,
    rem,
    square,
    sub,
)
from .complex_parts import complex, conj, imag, real
from .piecewise import (
    RoundingMethod,
    and_,
    ceil,
    eq,
    floor,
    floor_divide,
    ge,
    gt,
    is_finite,
    le,
    lt,
    ne,
    nextafter,
    not_,
    or_,
    round,
    select_n,
    sign,
    stop_gradient,
    xor,
)
from .transcendental import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    cos,
    cosh,
    exp,
    exp2,
    expm1,
    log,
    log1p,
    logistic,
    pow,
    rsqrt,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
)
from .ufunc_rules import (
    defbroadcasting,
    defjvp_elementwise,
    fit_tangent,
    ufunc_abstract_eval,
    unbroadcast_cotangent,
    zero_scalar,
)

__all__ = [
    # arithmetic
    "abs", "add", "clamp", "copysign", "div", "integer_pow", "max", "min", "mul", "neg", "rem",
    "square", "sub",
    # complex numbers' parts
    "complex", "conj", "imag", "real",
    # piecewise constant, selection
    "RoundingMethod", "and_", "ceil", "eq", "floor", "floor_divide", "ge", "gt", "is_finite",
    "le", "lt",
    "ne", "nextafter", "not_", "or_", "round", "select_n", "sign", "stop_gradient", "xor",
    # transcendental functions and powers
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "cos", "cosh",
    "exp", "exp2", "expm1", "log", "log1p", "logistic", "pow", "rsqrt", "sin", "sinh",
    "sqrt", "tan", "tanh",
    # for other families' elementwise primitives
    "defbroadcasting", "defjvp_elementwise", "fit_tangent", "ufunc_abstract_eval",
    "unbroadcast_cotangent", "zero_scalar",
]

