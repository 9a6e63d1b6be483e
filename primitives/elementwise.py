"""Elementwise primitives: numpy ufuncs, with numpy's broadcasting and dtypes.

Binary operations broadcast like numpy (a Python scalar stays a scalar literal, no
array of it is ever materialised), so their transposes sum the cotangent back down
to the operand's shape with `unbroadcast_to`. Result dtypes come from numpy's own
ufunc type resolution, with Python scalars weakly typed (NEP 50).

Each primitive is one block: primitive, bind wrapper, impl, abstract eval, jvp,
transpose (or why it has none).
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.activity import Zero
from ..core.avals import ShapedArray
from ..core.errors import DTypeError, ShapeError
from ..core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ..interpreters.ad import defjvp, defjvp_zero, jvp_rules
from ..interpreters.partial_eval import def_recomputable
from ..interpreters.transpose import is_linear, transpose_rules
from .structural import broadcast_in_dim, unbroadcast_to


@functools.lru_cache(maxsize=4096)
def _resolve_dtype(ufunc: np.ufunc, operand_types: tuple) -> np.dtype:
    return ufunc.resolve_dtypes((*operand_types, None))[-1]


def ufunc_abstract_eval(ufunc: np.ufunc, name: str | None = None):
    """Abstract eval of a numpy ufunc: broadcast shapes, numpy's result dtype."""
    name = name or ufunc.__name__

    def abstract_eval(*avals: ShapedArray, **_params) -> ShapedArray:
        try:
            shape = np.broadcast_shapes(*(a.shape for a in avals))
        except ValueError:
            raise ShapeError(f"{name}: operand shapes {', '.join(str(a.shape) for a in avals)} "
                             "do not broadcast together") from None
        operand_types = tuple(type(a.dtype.type(0).item()) if a.weak_type else a.dtype
                              for a in avals)
        try:
            dtype = _resolve_dtype(ufunc, operand_types)
        except TypeError:
            raise DTypeError(f"{name}: not defined for operand dtypes "
                             f"{', '.join(a.dtype.name for a in avals)}") from None
        return ShapedArray(shape, dtype, all(a.weak_type for a in avals))

    return abstract_eval


# ---------------------------------------------------------------------------------
# Arithmetic

neg_p = Primitive("neg")


def neg(x):
    return neg_p.bind(x)


impl_rules[neg_p] = np.negative
abstract_eval_rules[neg_p] = ufunc_abstract_eval(np.negative, "neg")
defjvp(neg_p, lambda t, out, x: neg(t))
transpose_rules[neg_p] = lambda ct, x: [neg(ct)]
def_recomputable(neg_p)

add_p = Primitive("add")


def add(x, y):
    return add_p.bind(x, y)


impl_rules[add_p] = np.add
abstract_eval_rules[add_p] = ufunc_abstract_eval(np.add)


def add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    return [out], [_broadcast_tangent(tx if type(ty) is Zero else
                                      (ty if type(tx) is Zero else add(tx, ty)), out)]


jvp_rules[add_p] = add_jvp


def add_transpose(ct, x, y):
    return [unbroadcast_to(ct, x.aval) if is_linear(x) else None,
            unbroadcast_to(ct, y.aval) if is_linear(y) else None]


transpose_rules[add_p] = add_transpose
def_recomputable(add_p)

sub_p = Primitive("sub")


def sub(x, y):
    return sub_p.bind(x, y)


impl_rules[sub_p] = np.subtract
abstract_eval_rules[sub_p] = ufunc_abstract_eval(np.subtract, "sub")


def sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = sub(x, y)
    if type(ty) is Zero:
        return [out], [_broadcast_tangent(tx, out)]
    return [out], [_broadcast_tangent(neg(ty) if type(tx) is Zero else sub(tx, ty), out)]


jvp_rules[sub_p] = sub_jvp


def sub_transpose(ct, x, y):
    return [unbroadcast_to(ct, x.aval) if is_linear(x) else None,
            unbroadcast_to(neg(ct), y.aval) if is_linear(y) else None]


transpose_rules[sub_p] = sub_transpose
def_recomputable(sub_p)

mul_p = Primitive("mul")


def mul(x, y):
    return mul_p.bind(x, y)


impl_rules[mul_p] = np.multiply
abstract_eval_rules[mul_p] = ufunc_abstract_eval(np.multiply, "mul")
defjvp(mul_p,
       lambda t, out, x, y: mul(t, y),
       lambda t, out, x, y: mul(x, t))


def mul_transpose(ct, x, y):
    """Linear in one operand: the other is a known coefficient."""
    if is_linear(x):
        return [unbroadcast_to(mul(ct, y), x.aval), None]
    return [None, unbroadcast_to(mul(x, ct), y.aval)]


transpose_rules[mul_p] = mul_transpose
def_recomputable(mul_p)

div_p = Primitive("div")


def div(x, y):
    return div_p.bind(x, y)


impl_rules[div_p] = np.true_divide
abstract_eval_rules[div_p] = ufunc_abstract_eval(np.true_divide, "div")
defjvp(div_p,
       lambda t, out, x, y: div(t, y),
       lambda t, out, x, y: neg(mul(t, div(out, y))))


def div_transpose(ct, x, y):
    assert not is_linear(y), "div is linear in its numerator only"
    return [unbroadcast_to(div(ct, y), x.aval), None]


transpose_rules[div_p] = div_transpose
def_recomputable(div_p)


def _broadcast_tangent(t, out):
    """A tangent of a broadcasting op must have the output's shape."""
    shape = get_aval(out).shape
    t_shape = get_aval(t).shape
    if tuple(t_shape) == tuple(shape):
        return t
    return broadcast_in_dim(t, shape, tuple(range(len(shape) - len(t_shape), len(shape))))


# ---------------------------------------------------------------------------------
# Transcendental functions

sin_p = Primitive("sin")


def sin(x):
    return sin_p.bind(x)


impl_rules[sin_p] = np.sin
abstract_eval_rules[sin_p] = ufunc_abstract_eval(np.sin)
defjvp(sin_p, lambda t, out, x: mul(t, cos(x)))
# transpose: none, sin is not linear

cos_p = Primitive("cos")


def cos(x):
    return cos_p.bind(x)


impl_rules[cos_p] = np.cos
abstract_eval_rules[cos_p] = ufunc_abstract_eval(np.cos)
defjvp(cos_p, lambda t, out, x: neg(mul(t, sin(x))))

exp_p = Primitive("exp")


def exp(x):
    return exp_p.bind(x)


impl_rules[exp_p] = np.exp
abstract_eval_rules[exp_p] = ufunc_abstract_eval(np.exp)
defjvp(exp_p, lambda t, out, x: mul(t, out))

log_p = Primitive("log")


def log(x):
    return log_p.bind(x)


impl_rules[log_p] = np.log
abstract_eval_rules[log_p] = ufunc_abstract_eval(np.log)
defjvp(log_p, lambda t, out, x: div(t, x))

tanh_p = Primitive("tanh")


def tanh(x):
    return tanh_p.bind(x)


impl_rules[tanh_p] = np.tanh
abstract_eval_rules[tanh_p] = ufunc_abstract_eval(np.tanh)
defjvp(tanh_p, lambda t, out, x: mul(t, sub(1.0, mul(out, out))))

# ---------------------------------------------------------------------------------
# Comparisons: boolean results, zero derivatives

gt_p = Primitive("gt")


def gt(x, y):
    return gt_p.bind(x, y)


impl_rules[gt_p] = np.greater
abstract_eval_rules[gt_p] = ufunc_abstract_eval(np.greater, "gt")
defjvp_zero(gt_p)

stop_gradient_p = Primitive("stop_gradient")


def stop_gradient(x):
    """`x`, inactive at every level: no derivative flows through it."""
    return stop_gradient_p.bind(x)


impl_rules[stop_gradient_p] = lambda x: x
abstract_eval_rules[stop_gradient_p] = lambda x: x
defjvp_zero(stop_gradient_p)
# transpose: none; the output is never linear in anything
