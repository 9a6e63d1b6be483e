"""Bessel functions: derivatives in z by the recurrences, none in the order v.

The real-order functions (jv, yv, iv, kv and the exponentially scaled ive, kve) take
the order as an operand without a derivative; integer orders are inactive by type.
The fixed-order functions (j0, j1, y0, y1, i0, i1 and their scaled forms) are scipy's
own, faster and more accurate routines, with the same recurrences as derivatives.
The scaled forms carry the scale's derivative too: ive(v, z) = iv(v, z) e^-|z|, so
ive' = (ive(v-1) + ive(v+1)) / 2 - sign(z) ive, and kve = kv e^z gains + kve.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...core.typing import ArrayLike
from ..elementwise import add, mul, neg, sign, sub
from ..elementwise.ufunc_rules import defbroadcasting, defjvp_elementwise, ufunc_abstract_eval
from .common import def_unary, param_like

# not linear in any operand: no transposes in this module


def def_bessel(name: str, fn, slope) -> Primitive:
    """The Bessel function `fn(v, z)` as a primitive: no derivative in the order `v`;
    in `z`, `slope(f, v, z, out)`, where `f(order)` is the same function at `z`."""
    prim = Primitive(name, operand_names=("v", "z"))
    impl_rules[prim] = fn
    abstract_eval_rules[prim] = ufunc_abstract_eval(fn)

    def z_jvp(t, out, v, z):
        v = param_like(v, out)
        return mul(t, slope(lambda order: prim.bind(order, z), v, z, out))

    defjvp_elementwise(prim, None, z_jvp)
    defbroadcasting(prim)
    return prim


def _half_difference(f, v):
    return mul(0.5, sub(f(sub(v, 1.0)), f(add(v, 1.0))))


def _half_sum(f, v):
    return mul(0.5, add(f(sub(v, 1.0)), f(add(v, 1.0))))


jv_p = def_bessel("jv", sc.jv, lambda f, v, z, out: _half_difference(f, v))


def jv(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """The Bessel function of the first kind of real order v."""
    return jv_p.bind(v, z)


yv_p = def_bessel("yv", sc.yv, lambda f, v, z, out: _half_difference(f, v))


def yv(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """The Bessel function of the second kind of real order v."""
    return yv_p.bind(v, z)


iv_p = def_bessel("iv", sc.iv, lambda f, v, z, out: _half_sum(f, v))


def iv(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """The modified Bessel function of the first kind of real order v."""
    return iv_p.bind(v, z)


kv_p = def_bessel("kv", sc.kv, lambda f, v, z, out: neg(_half_sum(f, v)))


def kv(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """The modified Bessel function of the second kind of real order v."""
    return kv_p.bind(v, z)


ive_p = def_bessel("ive", sc.ive,
                   lambda f, v, z, out: sub(_half_sum(f, v), mul(sign(z), out)))


def ive(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """`iv(v, z) e^-|z|`, finite where iv overflows."""
    return ive_p.bind(v, z)


kve_p = def_bessel("kve", sc.kve, lambda f, v, z, out: add(neg(_half_sum(f, v)), out))


def kve(v: ArrayLike, z: ArrayLike) -> np.ndarray:
    """kv(v, z) e^z, finite where kv underflows."""
    return kve_p.bind(v, z)


j0_p = def_unary("j0", sc.j0, lambda z, out: neg(j1(z)))


def j0(z: ArrayLike) -> np.ndarray:
    return j0_p.bind(z)


j1_p = def_unary("j1", sc.j1, lambda z, out: mul(0.5, sub(j0(z), jv(2.0, z))))


def j1(z: ArrayLike) -> np.ndarray:
    return j1_p.bind(z)


y0_p = def_unary("y0", sc.y0, lambda z, out: neg(y1(z)))


def y0(z: ArrayLike) -> np.ndarray:
    return y0_p.bind(z)


y1_p = def_unary("y1", sc.y1, lambda z, out: mul(0.5, sub(y0(z), yv(2.0, z))))


def y1(z: ArrayLike) -> np.ndarray:
    return y1_p.bind(z)


i0_p = def_unary("i0", sc.i0, lambda z, out: i1(z))


def i0(z: ArrayLike) -> np.ndarray:
    return i0_p.bind(z)


i1_p = def_unary("i1", sc.i1, lambda z, out: mul(0.5, add(i0(z), iv(2.0, z))))


def i1(z: ArrayLike) -> np.ndarray:
    return i1_p.bind(z)


i0e_p = def_unary("i0e", sc.i0e, lambda z, out: sub(i1e(z), mul(sign(z), out)))


def i0e(z: ArrayLike) -> np.ndarray:
    """`i0(z) e^-|z|`."""
    return i0e_p.bind(z)


i1e_p = def_unary("i1e", sc.i1e, lambda z, out: sub(mul(0.5, add(i0e(z), ive(2.0, z))),
                                                    mul(sign(z), out)))


def i1e(z: ArrayLike) -> np.ndarray:
    """`i1(z) e^-|z|`."""
    return i1e_p.bind(z)
