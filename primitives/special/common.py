"""What the special-function modules share: operand conversion for parameters
without a derivative, impls of scipy functions that are not ufuncs, and the normal
density the error-function rules are built from."""

from __future__ import annotations

import math

import numpy as np

from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.batching import defvectorized
from ..elementwise import exp, mul, neg, sub
from ..elementwise.ufunc_rules import defjvp_elementwise, ufunc_abstract_eval
from ..shape.structural import convert_element_type

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def param_like(p, out):
    """The non-differentiable operand `p` in the real dtype of the result `out`."""
    return convert_element_type(p, np.finfo(get_aval(out).dtype).dtype)


def erf_slope(x):
    """erf'(x) = 2 / sqrt(pi) exp(-x^2)."""
    return mul(TWO_OVER_SQRT_PI, exp(neg(mul(x, x))))


def log_normal_pdf(x):
    """log of the standard normal density, -x^2 / 2 - log sqrt(2 pi)."""
    return sub(mul(-0.5, mul(x, x)), LOG_SQRT_2PI)


def real_function_impl(fn, abstract_eval):
    """The impl of a scipy or numpy *function* (not a ufunc, so without a type
    resolution of its own): its result in the dtype that the abstract eval promises."""

    def impl(*args):
        dtype = abstract_eval(*(get_aval(a) for a in args)).dtype
        return np.asarray(fn(*args)).astype(dtype, copy=False)

    return impl


def def_unary(name: str, fn, slope) -> Primitive:
    """The one-operand scipy ufunc `fn` as a primitive whose derivative is
    `slope(x, out)`; not linear, so no transpose."""
    prim = Primitive(name)
    impl_rules[prim] = fn
    abstract_eval_rules[prim] = ufunc_abstract_eval(fn, name)
    defjvp_elementwise(prim, lambda t, out, x: mul(t, slope(x, out)))
    defvectorized(prim)
    return prim
