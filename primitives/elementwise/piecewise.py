"""Piecewise-constant elementwise primitives, and selection.

Comparisons, bitwise logic and rounding have zero derivatives (`defjvp_zero`): their
outputs are integers or booleans, or floats that are locally constant. `select_n`
chooses between its cases elementwise; its derivative is the same choice between
the cases' tangents, and it is linear in its cases.

All of them are cheap, so partial evaluation may recompute them (`def_recomputable`)
rather than keep their outputs for the backward pass.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, is_float, result_dtype
from ...core.backends import array_api_impls, to_backend
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...core.typing import ArrayLike
from ...interpreters.ad import defjvp_zero, jvp_rules
from ...interpreters.batching import defvectorized
from ...interpreters.fusion import deffused, deffused_ufunc
from ...interpreters.partial_eval import def_recomputable
from ...interpreters.transpose import (
    Masked,
    def_elementwise_transpose,
    is_linear,
    transpose_rules,
)
from .ufunc_rules import (
    broadcast_shapes,
    defbroadcasting,
    fit_tangent,
    ufunc_abstract_eval,
    unbroadcast_cotangent,
    zero_scalar,
)

# ---------------------------------------------------------------------------------
# Comparisons, logic and rounding: piecewise constant, so their derivatives are zero.
# Each is a numpy ufunc with the same rules around it, so each is one row (rules as
# data); bitwise logic is on booleans and integers, floats are a DTypeError.


def def_piecewise_constant(name: str, ufunc: np.ufunc) -> Primitive:
    """The primitive `name` computing `ufunc`, with a zero derivative; cheap, so
    partial evaluation may recompute it."""
    prim = Primitive(name)
    impl_rules[prim] = ufunc
    deffused_ufunc(prim, ufunc)
    abstract_eval_rules[prim] = ufunc_abstract_eval(ufunc, name)
    defjvp_zero(prim)
    (defbroadcasting if ufunc.nin > 1 else defvectorized)(prim)
    def_recomputable(prim)
    return prim


eq_p = def_piecewise_constant("eq", np.equal)
ne_p = def_piecewise_constant("ne", np.not_equal)
lt_p = def_piecewise_constant("lt", np.less)
le_p = def_piecewise_constant("le", np.less_equal)
gt_p = def_piecewise_constant("gt", np.greater)
ge_p = def_piecewise_constant("ge", np.greater_equal)
is_finite_p = def_piecewise_constant("is_finite", np.isfinite)
and_p = def_piecewise_constant("and", np.bitwise_and)
or_p = def_piecewise_constant("or", np.bitwise_or)
xor_p = def_piecewise_constant("xor", np.bitwise_xor)
not_p = def_piecewise_constant("not", np.invert)
sign_p = def_piecewise_constant("sign", np.sign)
floor_p = def_piecewise_constant("floor", np.floor)
ceil_p = def_piecewise_constant("ceil", np.ceil)
floor_divide_p = def_piecewise_constant("floor_divide", np.floor_divide)
nextafter_p = def_piecewise_constant("nextafter", np.nextafter)  # zero derivative, as asked


def eq(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return eq_p.bind(x, y)


def ne(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return ne_p.bind(x, y)


def lt(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return lt_p.bind(x, y)


def le(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return le_p.bind(x, y)


def gt(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return gt_p.bind(x, y)


def ge(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return ge_p.bind(x, y)


def is_finite(x: ArrayLike) -> np.ndarray:
    return is_finite_p.bind(x)


def and_(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return and_p.bind(x, y)


def or_(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return or_p.bind(x, y)


def xor(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    return xor_p.bind(x, y)


def not_(x: ArrayLike) -> np.ndarray:
    return not_p.bind(x)


def sign(x: ArrayLike) -> np.ndarray:
    return sign_p.bind(x)


def floor(x: ArrayLike) -> np.ndarray:
    return floor_p.bind(x)


def ceil(x: ArrayLike) -> np.ndarray:
    return ceil_p.bind(x)


def floor_divide(x, y):
    """numpy.floor_divide, exact on integers (a step function: zero derivative)."""
    return floor_divide_p.bind(x, y)


def nextafter(x, y):
    """The next float after x towards y; its derivative is taken to be zero."""
    return nextafter_p.bind(x, y)


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties; the values are jax.lax.RoundingMethod's."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


round_p = Primitive("round")


def round(x: ArrayLike,
          rounding_method: RoundingMethod = RoundingMethod.TO_NEAREST_EVEN) -> np.ndarray:  # noqa: A001 — lax's name
    """Round to integral values; ties to even by default, as numpy.round does (note
    that jax.lax.round's default is AWAY_FROM_ZERO). Integers are returned as they are."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


_ROUNDABLE = "fiu"  # dtype kinds; numpy would round booleans to float16


def round_impl(x, *, rounding_method):
    dtype = np.result_type(x)
    if dtype.kind not in _ROUNDABLE:
        raise TypeError("round of a non-number")  # the abstract eval explains
    if rounding_method is RoundingMethod.TO_NEAREST_EVEN or not is_float(dtype):
        return np.round(x)
    whole = np.trunc(x)  # the fraction x - whole is exact
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0)


impl_rules[round_p] = round_impl


def round_fused(x: str, *, dtypes, rounding_method) -> str:
    """An integer as it is (numba's np.rint goes through float64: 2**53 + 1 is lost)."""
    if dtypes[0].kind != "f":
        return x
    if rounding_method is RoundingMethod.TO_NEAREST_EVEN:
        return f"np.rint({x})"
    return f"np.trunc({x}) + (np.sign({x}) if np.abs({x} - np.trunc({x})) >= 0.5 else 0)"


deffused(round_p, round_fused, typed=True)


def round_abstract_eval(x, *, rounding_method):
    if x.dtype.kind not in _ROUNDABLE:
        raise DTypeError(f"round: not defined for operand dtype {x.dtype.name}")
    return x


abstract_eval_rules[round_p] = round_abstract_eval
defjvp_zero(round_p)
defvectorized(round_p)
def_recomputable(round_p)

# ---------------------------------------------------------------------------------
# Selection

select_n_p = Primitive("select_n", operand_names=("which",))


def select_n(which: ArrayLike, *cases: ArrayLike) -> np.ndarray:
    """`cases[which]` elementwise, like jax.lax.select_n: `which` is boolean (at most
    two cases: False picks the first) or integer; all operands broadcast like numpy
    and the cases' dtypes promote like numpy's."""
    return select_n_p.bind(which, *cases)


def _check_which(which_dtype: np.dtype, n_cases: int) -> None:
    """Checked by the impl too: numpy would accept a float `which`, or a boolean one
    with more cases, where a staged select_n would not."""
    if which_dtype.kind not in "biu":
        raise DTypeError(f"select_n: `which` must be boolean or integer, got {which_dtype.name}")
    if which_dtype == np.bool_ and n_cases > 2:
        raise DTypeError(f"select_n: a boolean `which` selects from at most two cases, "
                         f"got {n_cases}")


def select_n_impl(which, *cases):
    which_dtype = np.result_type(which)
    _check_which(which_dtype, len(cases))
    dtype = np.result_type(*cases)
    cases = [np.asarray(c, dtype) for c in cases]
    if len(cases) == 2 and which_dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases)


impl_rules[select_n_p] = select_n_impl


def select_n_array_api(xp, which, *cases):
    """select_n on an Array-API namespace: `where`, once per case after the first."""
    avals = [get_aval(c) for c in cases]
    _check_which(get_aval(which).dtype, len(cases))
    dtype = result_dtype(*avals)
    out = to_backend(xp, cases[0], dtype)
    for i, case in enumerate(cases[1:], 1):
        out = xp.where(which if len(cases) == 2 else which == i, to_backend(xp, case, dtype), out)
    return out


array_api_impls[select_n_p] = select_n_array_api
def select_n_fused(which, *cases):
    """Nested conditionals: `cases[k]` where `which == k` (False/True for booleans)."""
    expr = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        expr = f"({cases[k]} if {which} == {k} else {expr})"
    return expr


deffused(select_n_p, select_n_fused, operand_dtypes=lambda eqn: [
    None, *[eqn.outputs[0].aval.dtype] * (len(eqn.inputs) - 1)])


@functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
def select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise ShapeError("select_n: needs at least one case")
    _check_which(which.dtype, len(cases))
    shape = broadcast_shapes("select_n", (which, *cases))
    return ShapedArray(shape, result_dtype(*cases), all(c.weak_type for c in cases))


abstract_eval_rules[select_n_p] = select_n_abstract_eval


def select_n_jvp(primals, tangents):
    """The same choice between the cases' tangents; an inactive case's tangent is a
    scalar zero that broadcasts, never an array of zeros. `which`, boolean or
    integer, is always inactive."""
    which, *cases = primals
    out = select_n(which, *cases)
    zero = zero_scalar(out)
    t = select_n(which, *(zero if type(t) is Zero else t for t in tangents[1:]))
    return [out], [fit_tangent(t, out)]


jvp_rules[select_n_p] = select_n_jvp


def select_n_transpose(ct, which, *cases):
    """Linear in the cases: case i gets the cotangent where it was chosen, else zero.
    A case of the output's type gets it `Masked`, the mask applied as late as possible
    (see interpreters.transpose), so an infinite coefficient upstream in an unchosen
    case gives 0, not NaN."""
    assert not is_linear(which), "select_n is not linear in `which`"
    zero = zero_scalar(ct)
    ct_aval = get_aval(ct)

    def case_ct(i, case):
        def apply_mask(value):
            return select_n(which, *(value if j == i else zero for j in range(len(cases))))

        if case.aval.shape == ct_aval.shape and case.aval.dtype == ct_aval.dtype:
            return Masked(ct, apply_mask)
        return unbroadcast_cotangent(apply_mask(ct), case.aval)

    return [None] + [case_ct(i, c) if is_linear(c) else None for i, c in enumerate(cases)]


transpose_rules[select_n_p] = select_n_transpose
def_elementwise_transpose(select_n_p)  # its cases' cotangents stay masked, masks composed
defbroadcasting(select_n_p)
def_recomputable(select_n_p)

# ---------------------------------------------------------------------------------
stop_gradient_p = Primitive("stop_gradient")


def stop_gradient(x: Any) -> Any:
    """`x`, inactive at every level: no derivative flows through it.

    Example:
        >>> print(inert.grad(lambda x: x * inert.stop_gradient(x))(3.0))  # d/dx of 3x
        3.0
    """
    return stop_gradient_p.bind(x)


impl_rules[stop_gradient_p] = lambda x: x
deffused(stop_gradient_p, lambda x: x)
abstract_eval_rules[stop_gradient_p] = lambda x: x
defjvp_zero(stop_gradient_p)
# transpose: none; the output is never linear in anything
defvectorized(stop_gradient_p)
