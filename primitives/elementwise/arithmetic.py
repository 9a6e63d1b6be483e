"""Elementwise arithmetic: the cheap, piecewise-polynomial primitives.

Binary operations broadcast like numpy (a Python scalar stays a scalar literal, no
array of it is ever materialised), so their transposes sum the cotangent back down
to the operand's shape and dtype with `unbroadcast_cotangent`, and their jvp
contributions are fitted to the output with `defjvp_elementwise`.

All of them are cheap, so partial evaluation may recompute them (`def_recomputable`)
rather than keep their outputs for the backward pass.
"""

from __future__ import annotations

import operator

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, tangent_aval
from ...core.backends import operator_impl
from ...core.errors import DTypeError
from ...core.ir import Literal, Var
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import jvp_rules
from ...interpreters.batching import defvectorized
from ...interpreters.cse import simplify_rules
from ...interpreters.fusion import deffused, deffused_ufunc, ufunc_expr
from ...interpreters.partial_eval import def_recomputable
from ...interpreters.transpose import def_elementwise_transpose, is_linear, transpose_rules
from ...interpreters.vector_math import numpy_form
from ..shape import structural
from ..shape.structural import convert_element_type
from .complex_parts import conj, is_complex, real
from .piecewise import and_, eq, ge, gt, lt, round, select_n
from .ufunc_rules import (
    defbroadcasting,
    defjvp_elementwise,
    fit_tangent,
    ufunc_abstract_eval,
    unbroadcast_cotangent,
    zero_scalar,
)

neg_p = Primitive("neg")


def neg(x: ArrayLike) -> np.ndarray:
    return neg_p.bind(x)


impl_rules[neg_p] = np.negative
deffused_ufunc(neg_p, np.negative)
abstract_eval_rules[neg_p] = ufunc_abstract_eval(np.negative, "neg")
defjvp_elementwise(neg_p, lambda t, out, x: neg(t))
transpose_rules[neg_p] = lambda ct, x: [neg(ct)]
def_elementwise_transpose(neg_p)
defvectorized(neg_p)
def_recomputable(neg_p)

add_p = Primitive("add")


def add(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return add_p.bind(x, y)


impl_rules[add_p] = operator_impl(np.add, operator.add)
deffused_ufunc(add_p, np.add)
abstract_eval_rules[add_p] = ufunc_abstract_eval(np.add)
defjvp_elementwise(add_p,
                   lambda t, out, x, y: t,
                   lambda t, out, x, y: t)


def add_transpose(ct, x, y):
    return [unbroadcast_cotangent(ct, x.aval) if is_linear(x) else None,
            unbroadcast_cotangent(ct, y.aval) if is_linear(y) else None]


transpose_rules[add_p] = add_transpose
def_elementwise_transpose(add_p)
defbroadcasting(add_p)
def_recomputable(add_p)

sub_p = Primitive("sub")


def sub(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return sub_p.bind(x, y)


impl_rules[sub_p] = operator_impl(np.subtract, operator.sub)
deffused_ufunc(sub_p, np.subtract)
abstract_eval_rules[sub_p] = ufunc_abstract_eval(np.subtract, "sub")
defjvp_elementwise(sub_p,
                   lambda t, out, x, y: t,
                   lambda t, out, x, y: neg(t))


def sub_transpose(ct, x, y):
    return [unbroadcast_cotangent(ct, x.aval) if is_linear(x) else None,
            unbroadcast_cotangent(neg(ct), y.aval) if is_linear(y) else None]


transpose_rules[sub_p] = sub_transpose
def_elementwise_transpose(sub_p)
defbroadcasting(sub_p)
def_recomputable(sub_p)

mul_p = Primitive("mul")


def mul(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return mul_p.bind(x, y)


impl_rules[mul_p] = operator_impl(np.multiply, operator.mul)
deffused_ufunc(mul_p, np.multiply)
abstract_eval_rules[mul_p] = ufunc_abstract_eval(np.multiply, "mul")
defjvp_elementwise(mul_p,
                   lambda t, out, x, y: mul(t, y),
                   lambda t, out, x, y: mul(x, t))


def mul_transpose(ct, x, y):
    """Linear in one operand: the other is a known coefficient."""
    if is_linear(x):
        return [unbroadcast_cotangent(mul(ct, y), x.aval), None]
    return [None, unbroadcast_cotangent(mul(x, ct), y.aval)]


transpose_rules[mul_p] = mul_transpose
def_elementwise_transpose(mul_p)
defbroadcasting(mul_p)
def_recomputable(mul_p)


def mul_simplify(eqn, producers):
    """`x * 1` is `x`, bit for bit (nan, inf and -0.0 too): the backward pass of a sum
    multiplies its cotangent, a broadcast 1, into each coefficient. A signaling NaN
    would come out quieted (no arithmetic makes one; XLA drops `x * 1` too). Not for
    complex numbers: `(a + bi)(1 + 0i)` computes `b * 0`, a NaN where `b` is infinite,
    and its real part `-0.0 * 1 - (-0.0) * 0` is +0.0."""
    (out,) = eqn.outputs
    if out.aval.dtype.kind == "c":
        return None
    x, y = eqn.inputs
    for one, other in ((x, y), (y, x)):
        if type(other) is Var and other.aval == out.aval and _is_one(one, producers):
            return other
    return None


def _is_one(atom, producers) -> bool:
    """A literal 1, or a broadcast of one."""
    if type(atom) is not Literal:
        eqn = producers.get(atom)
        if eqn is None or eqn.primitive is not structural.broadcast_in_dim_p:
            return False
        atom = eqn.inputs[0]
    return type(atom) is Literal and type(atom.val) is not bool and atom.val == 1


simplify_rules[mul_p] = mul_simplify

div_p = Primitive("div")


def div(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return div_p.bind(x, y)


impl_rules[div_p] = operator_impl(np.true_divide, operator.truediv)
deffused_ufunc(div_p, np.true_divide)
abstract_eval_rules[div_p] = ufunc_abstract_eval(np.true_divide, "div")
defjvp_elementwise(div_p,
                   lambda t, out, x, y: div(t, y),
                   lambda t, out, x, y: neg(mul(t, div(out, y))))


def div_transpose(ct, x, y):
    assert not is_linear(y), "div is linear in its numerator only"
    return [unbroadcast_cotangent(div(ct, y), x.aval), None]


transpose_rules[div_p] = div_transpose
def_elementwise_transpose(div_p)
defbroadcasting(div_p)
def_recomputable(div_p)

rem_p = Primitive("rem")


def rem(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """The remainder of truncated division, with x's sign (C's fmod, like jax.lax.rem)."""
    return rem_p.bind(x, y)


impl_rules[rem_p] = np.fmod
deffused_ufunc(rem_p, np.fmod, kinds="f")  # numba's integer fmod takes the divisor's sign
abstract_eval_rules[rem_p] = ufunc_abstract_eval(np.fmod, "rem")
# x - rem(x, y) is exactly y * trunc(x / y), so rounding recovers the exact quotient.
defjvp_elementwise(rem_p,
                   lambda t, out, x, y: t,
                   lambda t, out, x, y: neg(mul(t, round(div(sub(x, out), y)))))
defbroadcasting(rem_p)
def_recomputable(rem_p)

# ---------------------------------------------------------------------------------
# Powers

square_p = Primitive("square")


def square(x: ArrayLike) -> np.ndarray:
    return square_p.bind(x)


impl_rules[square_p] = np.square
deffused_ufunc(square_p, np.square)
abstract_eval_rules[square_p] = ufunc_abstract_eval(np.square)
defjvp_elementwise(square_p, lambda t, out, x: mul(t, mul(2, x)))
defvectorized(square_p)
def_recomputable(square_p)

integer_pow_p = Primitive("integer_pow")


def integer_pow(x: ArrayLike, y: int) -> np.ndarray:
    """`x ** y` for a constant integer `y` (a parameter, so never differentiated)."""
    return integer_pow_p.bind(x, y=operator.index(y))


impl_rules[integer_pow_p] = lambda x, *, y: np.power(x, y)


def integer_pow_fused(x: str, *, dtypes, y: int) -> str:
    """Small positive powers as products: numba's `np.power` calls libm's `pow` per
    element (38 ns, not vectorised) where `x * x * x` is one vector multiply each
    (integers wrap as numpy's do; floats round within a few ulp of numpy's `pow`).
    Other integer powers are numpy's exact ones, not numba's through float64."""
    if 1 <= y <= 4:
        return f"({' * '.join([x] * y)})"
    return numpy_form("power", dtypes[0])(x, str(y)) if dtypes[0].kind in "iu" else \
        f"np.power({x}, {y})"


deffused(integer_pow_p, integer_pow_fused, typed=True)
_power_abstract_eval = ufunc_abstract_eval(np.power, "integer_pow")


def integer_pow_abstract_eval(x, *, y):
    if y < 0 and x.dtype.kind in "biu":
        raise DTypeError(f"integer_pow: integer {x.str_short()} to the negative power {y}")
    return _power_abstract_eval(x, ShapedArray((), np.int64, weak_type=True))


abstract_eval_rules[integer_pow_p] = integer_pow_abstract_eval


def integer_pow_jvp(t, out, x, *, y):
    if y == 0:
        return Zero(tangent_aval(get_aval(out)))
    if y == 1:
        return t
    return mul(t, mul(y, x if y == 2 else integer_pow(x, y - 1)))


defjvp_elementwise(integer_pow_p, integer_pow_jvp)
defvectorized(integer_pow_p)
def_recomputable(integer_pow_p)

# ---------------------------------------------------------------------------------
# Piecewise-linear: abs, max, min, clamp

abs_p = Primitive("abs")


def abs(x: ArrayLike) -> np.ndarray:  # noqa: A001 — lax's name
    return abs_p.bind(x)


impl_rules[abs_p] = np.abs
deffused_ufunc(abs_p, np.abs)
abstract_eval_rules[abs_p] = ufunc_abstract_eval(np.abs, "abs")


def abs_jvp(t, out, x):
    """Real x: a boolean mask is all the backward pass keeps (not x, nor a float
    sign(x)). Complex x: `Re(t conj(x)) / |x|`, 0 at 0 (as JAX), keeping x alone (|x|
    is recomputed from it). Dividing the real part, not x, by |x| rounds as JAX does:
    `grad(abs(z)**2)(3+4j)` is exactly `6-8j` (numpy's `(3+4j)/5` is not `0.6+0.8j`)."""
    if not is_complex(x):
        return select_n(ge(x, 0), neg(t), t)
    return div(real(mul(t, conj(x))), select_n(eq(out, 0), out, 1))


defjvp_elementwise(abs_p, abs_jvp)
defvectorized(abs_p)
def_recomputable(abs_p)


def _extremum_jvp(prim: Primitive, x_wins):
    """The jvp of max or min: the tangent of the operand that wins, and at ties the
    mean of both (as JAX does). `which` (0: y, 1: x, 2: a tie) is an int8 array, the
    only value the backward pass keeps."""

    def rule(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = prim.bind(x, y)
        which = select_n(eq(x, y), convert_element_type(x_wins(x, y), np.int8), np.int8(2))
        if type(tx) is Zero:
            tx, tie = zero_scalar(out), mul(0.5, ty)
        elif type(ty) is Zero:
            ty, tie = zero_scalar(out), mul(0.5, tx)
        else:
            tie = mul(0.5, add(tx, ty))
        return [out], [fit_tangent(select_n(which, ty, tx, tie), out)]

    return rule


max_p = Primitive("max")


def max(x: ArrayLike, y: ArrayLike) -> np.ndarray:  # noqa: A001 — lax's name
    return max_p.bind(x, y)


impl_rules[max_p] = np.maximum
deffused_ufunc(max_p, np.maximum)
abstract_eval_rules[max_p] = ufunc_abstract_eval(np.maximum, "max")
jvp_rules[max_p] = _extremum_jvp(max_p, gt)
defbroadcasting(max_p)
def_recomputable(max_p)

min_p = Primitive("min")


def min(x: ArrayLike, y: ArrayLike) -> np.ndarray:  # noqa: A001 — lax's name
    return min_p.bind(x, y)


impl_rules[min_p] = np.minimum
deffused_ufunc(min_p, np.minimum)
abstract_eval_rules[min_p] = ufunc_abstract_eval(np.minimum, "min")
jvp_rules[min_p] = _extremum_jvp(min_p, lt)
defbroadcasting(min_p)
def_recomputable(min_p)

clamp_p = Primitive("clamp", operand_names=("min", "x", "max"))


def clamp(lo: ArrayLike, x: ArrayLike, hi: ArrayLike) -> np.ndarray:
    """`min(max(x, lo), hi)`, like jax.lax.clamp (but broadcasting like numpy)."""
    return clamp_p.bind(lo, x, hi)


impl_rules[clamp_p] = lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)
_fused_max, _fused_min = ufunc_expr(np.maximum), ufunc_expr(np.minimum)  # numpy's ties
deffused(clamp_p, lambda lo, x, hi: _fused_min(_fused_max(x, lo), hi))
_clamp_below = ufunc_abstract_eval(np.maximum, "clamp")
_clamp_above = ufunc_abstract_eval(np.minimum, "clamp")
abstract_eval_rules[clamp_p] = lambda lo, x, hi: _clamp_above(_clamp_below(x, lo), hi)


def _tangent_where(mask, t, out):
    return select_n(mask, zero_scalar(out), t)


# Each operand's tangent flows where the output is that operand (JAX's conditions).
defjvp_elementwise(clamp_p,
                   lambda t, out, lo, x, hi: _tangent_where(and_(gt(lo, x), lt(lo, hi)), t, out),
                   lambda t, out, lo, x, hi: _tangent_where(and_(gt(x, lo), lt(x, hi)), t, out),
                   lambda t, out, lo, x, hi: _tangent_where(lt(hi, x), t, out))
defbroadcasting(clamp_p)
def_recomputable(clamp_p)

# ---------------------------------------------------------------------------------
copysign_p = Primitive("copysign", operand_names=("x", "y"))


def copysign(x, y):
    """|x| with the sign (bit) of y: piecewise linear in x, piecewise constant in y."""
    return copysign_p.bind(x, y)


impl_rules[copysign_p] = np.copysign
abstract_eval_rules[copysign_p] = ufunc_abstract_eval(np.copysign)
defjvp_elementwise(copysign_p,
                   lambda t, out, x, y: mul(t, mul(copysign(1.0, x), copysign(1.0, y))),
                   lambda t, out, x, y: Zero(tangent_aval(get_aval(out))))
# transpose: none, copysign is not linear (its sign depends on x)
defbroadcasting(copysign_p)
def_recomputable(copysign_p)
