"""x log y and the information measures built on it (entr, kl_div, rel_entr), and logit.

xlogy and xlog1py are 0 wherever x is 0, even where the logarithm is infinite. The
tangent in x is therefore `xlogy(t, y)`, not `t * log(y)`: a zero tangent stays zero
at y = 0. Being linear in t, it has a transpose. The tangent in y, t x / y, is nan at
x = y = 0 (as in JAX): the function is flat there along y, but not differentiable.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.batching import defvectorized
from ...interpreters.transpose import is_linear, transpose_rules
from ..elementwise import add, div, log, mul, neg, sub
from ..elementwise.ufunc_rules import (
    defbroadcasting,
    defjvp_elementwise,
    ufunc_abstract_eval,
    unbroadcast_cotangent,
)


def _transpose_linear_in_x(fn):
    """Transpose of `fn(x, y)` in x, for an `fn` linear in its first operand."""

    def transpose(ct, x, y):
        assert is_linear(x) and not is_linear(y), "linear in its first operand only"
        return [unbroadcast_cotangent(fn(ct, y), x.aval), None]

    return transpose


xlogy_p = Primitive("xlogy", operand_names=("x", "y"))


def xlogy(x: ArrayLike, y: ArrayLike) -> np.ndarray:
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


def xlog1py(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """x * log1p(y), and 0 where x is 0."""
    return xlog1py_p.bind(x, y)


impl_rules[xlog1py_p] = sc.xlog1py
abstract_eval_rules[xlog1py_p] = ufunc_abstract_eval(sc.xlog1py)
defjvp_elementwise(xlog1py_p,
                   lambda t, out, x, y: xlog1py(t, y),
                   lambda t, out, x, y: mul(t, div(x, add(y, 1.0))))
transpose_rules[xlog1py_p] = _transpose_linear_in_x(xlog1py)
defbroadcasting(xlog1py_p)

# transpose: none below, these are not linear in any operand
entr_p = Primitive("entr")


def entr(x: ArrayLike) -> np.ndarray:
    """-x log x for x > 0, 0 at 0, -inf below."""
    return entr_p.bind(x)


impl_rules[entr_p] = sc.entr
abstract_eval_rules[entr_p] = ufunc_abstract_eval(sc.entr)
defjvp_elementwise(entr_p, lambda t, out, x: neg(mul(t, add(log(x), 1.0))))
defvectorized(entr_p)

rel_entr_p = Primitive("rel_entr", operand_names=("x", "y"))


def rel_entr(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """x log(x / y) for x, y > 0, 0 at x = 0, inf elsewhere."""
    return rel_entr_p.bind(x, y)


impl_rules[rel_entr_p] = sc.rel_entr
abstract_eval_rules[rel_entr_p] = ufunc_abstract_eval(sc.rel_entr)
defjvp_elementwise(rel_entr_p,
                   lambda t, out, x, y: mul(t, add(sub(log(x), log(y)), 1.0)),
                   lambda t, out, x, y: neg(mul(t, div(x, y))))
defbroadcasting(rel_entr_p)

kl_div_p = Primitive("kl_div", operand_names=("x", "y"))


def kl_div(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """x log(x / y) - x + y for x, y > 0, y at x = 0, inf elsewhere."""
    return kl_div_p.bind(x, y)


impl_rules[kl_div_p] = sc.kl_div
abstract_eval_rules[kl_div_p] = ufunc_abstract_eval(sc.kl_div)
defjvp_elementwise(kl_div_p,
                   lambda t, out, x, y: mul(t, sub(log(x), log(y))),
                   lambda t, out, x, y: mul(t, sub(1.0, div(x, y))))
defbroadcasting(kl_div_p)

logit_p = Primitive("logit")


def logit(x: ArrayLike) -> np.ndarray:
    """log(x / (1 - x)), the inverse of expit."""
    return logit_p.bind(x)


impl_rules[logit_p] = sc.logit
abstract_eval_rules[logit_p] = ufunc_abstract_eval(sc.logit)
defjvp_elementwise(logit_p, lambda t, out, x: div(t, mul(x, sub(1.0, x))))
defvectorized(logit_p)
