"""The elementwise family: one table of cases drives impl-vs-numpy, abstract eval,
jvp-vs-finite-differences, vjp dot-product, staging and hypothesis checks; the
tests after the table pin down behaviour the table cannot see (ties, zeros,
residuals, errors)."""

from __future__ import annotations

import functools
import warnings
from typing import Callable

import attrs
import numpy as np
import pytest
from harness import (
    assert_allclose,
    check_abstract_eval,
    check_grads,
    check_jit_backends,
    check_jvp,
    check_staged,
    check_vjp,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import inert
import inert.numpy as inp
from inert.core.avals import ShapedArray, tangent_dtype
from inert.core.trace import Primitive, abstract_eval, abstract_eval_rules, impl_rules
from inert.errors import DTypeError, ShapeError
from inert.interpreters.ad import jvp_rules
from inert.interpreters.partial_eval import _recomputable
from inert.interpreters.transpose import transpose_rules
from inert.primitives import elementwise as ew
from inert.primitives.elementwise import arithmetic as elementwise_arithmetic
from inert.primitives.elementwise import piecewise as elementwise_piecewise

# ---------------------------------------------------------------------------------
# Domains: each operand is drawn where its function is smooth and finite


def real(rng, shape):
    return rng.standard_normal(shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def unit(rng, shape):
    return rng.uniform(-0.9, 0.9, shape)


def above_one(rng, shape):
    return rng.uniform(1.2, 3.0, shape)


def nonzero(rng, shape):
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def below(rng, shape):
    return rng.uniform(-1.5, -0.5, shape)


def above(rng, shape):
    return rng.uniform(0.5, 1.5, shape)


def boolean(rng, shape):
    return rng.random(shape) < 0.5


def integer(rng, shape):
    return rng.integers(-5, 6, shape)


def choice3(rng, shape):
    return rng.integers(0, 3, shape).astype(np.int32)


FIXED_DTYPE = {boolean, integer, choice3}
FLOAT_DTYPES = (np.float64, np.float32)
ALL_DTYPES = (np.float64, np.float32, np.int64)


@attrs.frozen
class Case:
    name: str
    fn: Callable
    ref: Callable
    domains: tuple
    smooth: bool = True  # differentiable almost everywhere, not piecewise constant
    dtypes: tuple = ALL_DTYPES  # for the operands whose domain has no fixed dtype

    def args(self, rng, shapes=None, dtype=np.float64):
        shapes = shapes or [(3, 4)] * len(self.domains)
        out = []
        for domain, shape in zip(self.domains, shapes):
            value = domain(rng, shape)
            if domain not in FIXED_DTYPE:
                value = (np.round(value) if dtype == np.int64 else value).astype(dtype)
            out.append(value)
        return tuple(out)


def unary(name, fn, ref, domain=real, **kw):
    return Case(name, fn, ref, (domain,), **kw)


def binary(name, fn, ref, domains=(real, real), **kw):
    return Case(name, fn, ref, domains, **kw)


AWAY = ew.RoundingMethod.AWAY_FROM_ZERO

CASES = [
    unary("neg", ew.neg, np.negative),
    unary("sin", ew.sin, np.sin),
    unary("cos", ew.cos, np.cos),
    unary("tan", ew.tan, np.tan, unit),
    unary("asin", ew.asin, np.arcsin, unit),
    unary("acos", ew.acos, np.arccos, unit),
    unary("atan", ew.atan, np.arctan),
    unary("sinh", ew.sinh, np.sinh),
    unary("cosh", ew.cosh, np.cosh),
    unary("tanh", ew.tanh, np.tanh),
    unary("asinh", ew.asinh, np.arcsinh),
    unary("acosh", ew.acosh, np.arccosh, above_one),
    unary("atanh", ew.atanh, np.arctanh, unit),
    unary("exp", ew.exp, np.exp),
    unary("exp2", ew.exp2, np.exp2),
    unary("expm1", ew.expm1, np.expm1),
    unary("log", ew.log, np.log, positive),
    unary("log1p", ew.log1p, np.log1p, positive),
    unary("logistic", ew.logistic, lambda x: 1 / (1 + np.exp(-x))),
    unary("sqrt", ew.sqrt, np.sqrt, positive),
    unary("rsqrt", ew.rsqrt, lambda x: np.power(x, -0.5), positive),
    unary("cbrt", ew.cbrt, np.cbrt),
    unary("square", ew.square, np.square),
    unary("abs", ew.abs, np.abs),
    unary("integer_pow_3", functools.partial(ew.integer_pow, y=3), lambda x: x ** 3),
    unary("integer_pow_0", functools.partial(ew.integer_pow, y=0), lambda x: x ** 0),
    unary("integer_pow_m2", functools.partial(ew.integer_pow, y=-2), lambda x: x ** -2.0,
          nonzero, dtypes=FLOAT_DTYPES),
    unary("sign", ew.sign, np.sign, smooth=False),
    unary("floor", ew.floor, np.floor, smooth=False),
    unary("ceil", ew.ceil, np.ceil, smooth=False),
    unary("round", ew.round, np.round, smooth=False),
    unary("round_away", functools.partial(ew.round, rounding_method=AWAY),
          lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), smooth=False, dtypes=FLOAT_DTYPES),
    unary("is_finite", ew.is_finite, np.isfinite, smooth=False),
    unary("not_bool", ew.not_, np.logical_not, boolean, smooth=False),
    unary("not_int", ew.not_, np.invert, integer, smooth=False),
    binary("add", ew.add, np.add),
    binary("sub", ew.sub, np.subtract),
    binary("mul", ew.mul, np.multiply),
    binary("div", ew.div, np.true_divide, (real, nonzero)),
    binary("rem", ew.rem, np.fmod, (real, nonzero)),
    binary("pow", ew.pow, np.power, (positive, real), dtypes=FLOAT_DTYPES),
    binary("atan2", ew.atan2, np.arctan2, (real, nonzero)),
    binary("max", ew.max, np.maximum),
    binary("min", ew.min, np.minimum),
    *(binary(name, getattr(ew, name), ref, smooth=False) for name, ref in [
        ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
        ("gt", np.greater), ("ge", np.greater_equal)]),
    *(binary(f"{name}_{domain.__name__}", getattr(ew, name + "_"), ref, (domain, domain),
             smooth=False)
      for name, ref in [("and", np.bitwise_and), ("or", np.bitwise_or)]
      for domain in (boolean, integer)),
    binary("xor", ew.xor, np.logical_xor, (boolean, boolean), smooth=False),
    Case("select_n", ew.select_n, lambda w, a, b: np.where(w, b, a), (boolean, real, real)),
    Case("select_n_3", ew.select_n, lambda w, *cs: np.choose(w, np.broadcast_arrays(*cs)),
         (choice3, real, real, real), dtypes=FLOAT_DTYPES),
    Case("clamp", ew.clamp, lambda lo, x, hi: np.clip(x, lo, hi), (below, real, above)),
]
SMOOTH = [c for c in CASES if c.smooth]
BY_NAME = {c.name: c for c in CASES}


def cases(selection):
    return pytest.mark.parametrize("case", selection, ids=lambda c: c.name)


def the_equation(case, args):
    """The single equation staging `case.fn` gives: its primitive and params."""
    eqns = inert.make_jaxpr(case.fn)(*args).jaxpr.eqns
    assert len(eqns) == 1, eqns
    return eqns[0].primitive, eqns[0].params


def of_float_operands(case, args):
    """`case.fn` as a function of its float operands, the others closed over: the
    harness pairs tangents with cotangents leaf by leaf, and the `None` cotangent of
    a boolean operand has no leaf (see the report on harness._inner)."""
    floats = [i for i, a in enumerate(args) if a.dtype.kind == "f"]

    def f(*xs):
        it = iter(xs)
        return case.fn(*(next(it) if i in floats else a for i, a in enumerate(args)))

    return f, tuple(args[i] for i in floats)


def with_python_scalar(args):
    """The first non-boolean operand as a Python scalar (weakly typed, NEP 50)."""
    i = next((i for i, a in enumerate(args) if a.dtype != np.bool_), 0)
    return [a.flat[0].item() if j == i else a for j, a in enumerate(args)]


# ---------------------------------------------------------------------------------
# The table's checks


@cases(CASES)
def test_impl_matches_numpy(case, rng):
    args = case.args(rng)
    got, want = case.fn(*args), case.ref(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert_allclose(got, want, rtol=1e-13, atol=0)


@cases(CASES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("scalar", [False, True], ids=["arrays", "python_scalar"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_abstract_eval_matches_impl_and_numpy(case, dtype, scalar, rng):
    if dtype not in case.dtypes or (set(case.domains) <= FIXED_DTYPE and dtype != np.float64):
        pytest.skip(f"{case.name} has no {np.dtype(dtype).name} operands")
    args = case.args(rng, dtype=dtype)
    prim, params = the_equation(case, args)
    if scalar:
        args = with_python_scalar(args)
    check_abstract_eval(prim, args, params)
    assert np.asarray(case.fn(*args)).dtype == np.asarray(case.ref(*args)).dtype


@cases(SMOOTH)
def test_jvp_matches_finite_differences(case, rng):
    check_jvp(*of_float_operands(case, case.args(rng)), rng)


@cases(SMOOTH)
def test_vjp_dot_product(case, rng):
    check_vjp(*of_float_operands(case, case.args(rng)), rng)


SECOND_ORDER = ["tan", "asin", "acosh", "logistic", "sqrt", "rsqrt", "cbrt", "exp2",
                "integer_pow_3", "div", "pow", "atan2", "rem", "max", "select_n", "clamp"]


@cases([BY_NAME[n] for n in SECOND_ORDER])
def test_second_order(case, rng):
    check_grads(*of_float_operands(case, case.args(rng, [(3,)] * len(case.domains))), rng,
                order=2)


@cases(CASES)
def test_staged(case, rng):
    check_staged(case.fn, case.args(rng))


@cases(CASES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_jit_backends_agree(case, dtype, rng):
    """Each primitive fused by the numba backend (alone, with a broadcast operand, and
    inside its derivative) computes what numpy computes, in the same dtype."""
    if dtype not in case.dtypes:
        pytest.skip("no such operand dtype")
    args = case.args(rng, dtype=dtype)
    check_jit_backends(case.fn, args)
    if dtype != np.float64:
        return  # each kernel compiles: the broadcast and derivative variants once
    if len(args) > 1:
        check_jit_backends(case.fn, (args[0][:1], *args[1:]))
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    if case.smooth and floats:
        check_jit_backends(inert.grad(lambda *a: inp.sum(case.fn(*a)), argnums=floats), args)


BROADCAST_SHAPES = {
    1: [[(2, 3)], [()]],
    2: [[(3, 1), (4,)], [(), (2, 3)], [(2, 3), ()]],
    3: [[(3, 1), (4,), ()], [(), (2, 3), (3,)], [(2, 1), (1, 3), (2, 3)]],
    4: [[(3, 1), (4,), (), (3, 4)]],
}


@cases(SMOOTH)
def test_broadcasting_derivatives(case, rng):
    for shapes in BROADCAST_SHAPES[len(case.domains)]:
        args = case.args(rng, shapes)
        assert np.shape(case.fn(*args)) == np.broadcast_shapes(*shapes)
        check_jvp(*of_float_operands(case, args), rng)
        check_vjp(*of_float_operands(case, args), rng)


@cases(SMOOTH)
def test_tangents_and_cotangents_have_their_values_type(case, rng):
    """With float32 and float64 operands of different shapes, and any one of them
    active, the tangent has exactly the output's shape and dtype, and each cotangent
    its operand's."""
    shapes = BROADCAST_SHAPES[len(case.domains)][0]
    args = case.args(rng, shapes)
    args = [a.astype(np.float32) if i % 2 == 0 and a.dtype == np.float64 else a
            for i, a in enumerate(args)]
    out = case.fn(*args)
    for i, a in enumerate(args):
        if a.dtype.kind != "f":
            continue
        primals = [a if j == i else inert.Inactive(b) for j, b in enumerate(args)]
        tangents = [np.ones_like(a) if j == i else None for j in range(len(args))]
        _, t = inert.jvp(case.fn, primals, tangents)
        assert (t.shape, t.dtype) == (out.shape, out.dtype), f"operand {i}"
        _, vjp_fn = inert.vjp(case.fn, *primals)
        ct = vjp_fn(np.ones_like(out))[i]
        assert (ct.shape, ct.dtype) == (a.shape, a.dtype), f"operand {i}"


@cases(SMOOTH)
def test_python_scalar_operands_keep_the_arrays_dtype(case, rng):
    """`f32 * 2.0` is float32, and so are its tangent and cotangent, computed at once
    or staged and then evaluated: arithmetic on the Python scalars alone must not
    promote them to float64."""
    args = [a.astype(np.float32) if a.dtype == np.float64 else a for a in case.args(rng)]
    i = next(i for i, a in enumerate(args) if a.dtype == np.float32)
    scalars = [a.flat[0].item() for a in args]
    f = lambda x: case.fn(*(x if j == i else s for j, s in enumerate(scalars)))  # noqa: E731
    x = args[i]
    out, t = inert.jvp(f, (x,), (np.ones_like(x),))
    assert out.dtype == t.dtype == np.float32 and t.shape == out.shape == x.shape
    (ct,) = inert.vjp(f, x)[1](np.ones_like(x))
    assert ct.dtype == np.float32
    closed = inert.make_jaxpr(lambda x, t: inert.jvp(f, (x,), (t,))[1])(x, x)
    (staged_t,) = inert.eval_jaxpr(closed.jaxpr, closed.consts, [x, x])
    assert closed.out_avals[0].dtype == np.asarray(staged_t).dtype == np.float32


@cases([c for c in CASES if not c.smooth])
def test_piecewise_constant_derivatives_are_zero(case, rng):
    args = case.args(rng)
    out = np.asarray(case.fn(*args))
    active = [a.dtype.kind == "f" for a in args]
    primals = [a if act else inert.Inactive(a) for a, act in zip(args, active)]
    tangents = [np.ones_like(a) if act else None for a, act in zip(args, active)]
    _, t = inert.jvp(case.fn, primals, tangents)
    assert (t.shape, t.dtype) == (out.shape, tangent_dtype(out.dtype))
    assert t.dtype == inert.float0 or not np.any(t)
    _, vjp_fn = inert.vjp(case.fn, *args)
    cts = vjp_fn(np.ones(out.shape, tangent_dtype(out.dtype)))
    assert all(ct is None if not act else not np.any(ct) for ct, act in zip(cts, active))


def _cases_and_shapes():
    return st.sampled_from(CASES).flatmap(lambda case: st.tuples(
        st.just(case),
        hnp.mutually_broadcastable_shapes(num_shapes=len(case.domains), max_dims=3,
                                          max_side=3),
        st.integers(0, 2**32 - 1)))


@settings(max_examples=25, deadline=None)
@given(_cases_and_shapes())
def test_hypothesis_shapes(drawn):
    case, shapes, seed = drawn
    rng = np.random.default_rng(seed)
    args = case.args(rng, shapes.input_shapes)
    out = case.fn(*args)
    assert np.shape(out) == shapes.result_shape
    assert_allclose(out, case.ref(*args), rtol=1e-13, atol=0)
    prim, params = the_equation(case, args)
    check_abstract_eval(prim, args, params)
    if case.smooth:
        check_vjp(*of_float_operands(case, args), rng)


# ---------------------------------------------------------------------------------
# What the table cannot see


def primitives_of(module) -> set:
    return {v for v in vars(module).values() if isinstance(v, Primitive)}


def test_every_primitive_has_its_rules():
    arithmetic = elementwise_arithmetic
    piecewise = elementwise_piecewise
    cheap = primitives_of(arithmetic) | (primitives_of(piecewise) - {piecewise.stop_gradient_p})
    linear = {arithmetic.neg_p, arithmetic.add_p, arithmetic.sub_p, arithmetic.mul_p,
              arithmetic.div_p, piecewise.select_n_p}
    for p in primitives_of(ew) | primitives_of(arithmetic) | primitives_of(piecewise):
        assert p in impl_rules and p in abstract_eval_rules and p in jvp_rules, p
        assert (p in transpose_rules) == (p in linear), p
        assert (p in _recomputable) == (p in cheap), p


def test_extremum_ties_split_the_tangent_in_half():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 5.0, 0.0])
    tx, ty = np.array([10.0, 20.0, 30.0]), np.array([100.0, 200.0, 300.0])
    _, t = inert.jvp(ew.max, (x, y), (tx, ty))
    np.testing.assert_array_equal(t, [55.0, 200.0, 30.0])
    _, t = inert.jvp(ew.min, (x, y), (tx, ty))
    np.testing.assert_array_equal(t, [55.0, 20.0, 300.0])
    _, t = inert.jvp(ew.max, (x, inert.Inactive(y)), (tx, None))
    np.testing.assert_array_equal(t, [5.0, 0.0, 30.0])


def test_nondifferentiable_points_follow_jax():
    zero = np.zeros(2)
    ones = np.ones(2)
    assert np.all(inert.jvp(ew.abs, (zero,), (ones,))[1] == 1.0)
    # d/dy 0**y is 0 there, not 0 * log(0) = nan
    assert np.all(inert.jvp(lambda y: ew.pow(zero, y), (ones,), (ones,))[1] == 0.0)
    x = np.array([-2.0, 0.5, 2.0])
    lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    t_lo, t_x, t_hi = np.full(3, 1.0), np.full(3, 10.0), np.full(3, 100.0)
    _, t = inert.jvp(ew.clamp, (lo, x, hi), (t_lo, t_x, t_hi))
    np.testing.assert_array_equal(t, [1.0, 10.0, 100.0])


def test_integer_pow_small_exponents():
    x, t = np.array([0.0, 2.0]), np.array([1.0, 3.0])
    out, t0 = inert.jvp(lambda x: ew.integer_pow(x, 0), (x,), (t,))
    np.testing.assert_array_equal(out, [1.0, 1.0])
    np.testing.assert_array_equal(t0, [0.0, 0.0])
    np.testing.assert_array_equal(inert.jvp(lambda x: ew.integer_pow(x, 1), (x,), (t,))[1], t)


def test_round_ties():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 3.2])
    np.testing.assert_array_equal(ew.round(x), [0, 2, 2, -0.0, -2, 0, 3])
    np.testing.assert_array_equal(ew.round(x, AWAY), [1, 2, 3, -1, -3, 0, 3])
    assert ew.round(np.array([3, -4])).dtype == np.int64


def test_select_n_keeps_only_the_mask_and_one_float_array():
    """`where(x > 0, sqrt(x), 0)`: the backward pass keeps the mask and sqrt's
    derivative data, never an array of zeros for the inactive case."""
    x = np.linspace(-1.0, 1.0, 10)
    f = lambda x: ew.select_n(ew.gt(x, 0.0), 0.0, ew.sqrt(x))  # noqa: E731
    with np.errstate(invalid="ignore"):
        residuals = inert.saved_residuals(f, x)
        jaxpr = inert.make_jaxpr(lambda x, t: inert.jvp(f, (x,), (t,))[1])(x, x)
    kinds = sorted((r.aval.dtype.name, r.aval.shape) for r in residuals)
    assert kinds == [("bool", (10,)), ("float64", (10,))]
    assert sum(r.nbytes for r in residuals) == 10 + 80
    assert not {"zeros", "broadcast_in_dim"} & {e.primitive.name for e in jaxpr.jaxpr.eqns}


@pytest.mark.parametrize("fn, arity", [(ew.max, 2), (ew.abs, 1)], ids=["max", "abs"])
def test_piecewise_linear_ops_keep_one_byte_per_element(fn, arity, rng):
    args = [rng.standard_normal(8) for _ in range(arity)]
    residuals = inert.saved_residuals(fn, *args)
    assert sum(r.nbytes for r in residuals) == 8
    check_vjp(fn, args, rng)


BAD = [
    (ew.add, [np.ones(3), np.ones(4)], ShapeError, ["add", "(3,)", "(4,)"]),
    (ew.atan2, [np.ones((2, 3)), np.ones(2)], ShapeError, ["atan2", "(2, 3)", "(2,)"]),
    (ew.select_n, [np.ones(3, bool), np.ones(3), np.ones(4)], ShapeError, ["select_n"]),
    (ew.clamp, [0.0, np.ones(3), np.ones(2)], ShapeError, ["clamp"]),
    (ew.and_, [np.ones(3), np.ones(3)], DTypeError, ["and", "float64"]),
    (ew.not_, [np.ones(3)], DTypeError, ["not", "float64"]),
    (ew.sign, [np.ones(3, bool)], DTypeError, ["sign", "bool"]),
    (ew.round, [np.ones(3, bool)], DTypeError, ["round", "bool"]),
    (ew.select_n, [np.ones(3), np.ones(3), np.ones(3)], DTypeError, ["select_n", "float64"]),
    (ew.select_n, [np.ones(3, bool)] + [np.ones(3)] * 3, DTypeError, ["select_n", "two"]),
    (lambda x: ew.integer_pow(x, -1), [np.arange(3)], DTypeError, ["integer_pow", "-1"]),
]


@pytest.mark.parametrize("fn, args, error, words", BAD,
                         ids=[f"{words[0]}-{i}" for i, (*_, words) in enumerate(BAD)])
@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
def test_bad_operands(fn, args, error, words, staged):
    with pytest.raises(error) as info:
        inert.make_jaxpr(fn)(*args) if staged else fn(*args)
    for word in words:
        assert word in str(info.value)
    assert __file__ in str(info.value)


def test_logic_on_weakly_typed_booleans():
    """A weakly typed boolean combines with another (numpy's type resolution takes no
    Python `bool`); the result is a plain boolean: booleans are never weak, as in JAX
    (so a comparison of Python scalars gives a plain boolean too)."""
    weak = ShapedArray((), np.dtype(np.bool_), True)
    strong = ShapedArray((), np.dtype(np.bool_))
    assert abstract_eval(elementwise_piecewise.and_p, [weak, weak], {}) == [strong]
    weak_float = ShapedArray((), np.dtype(np.float64), True)
    assert abstract_eval(elementwise_piecewise.gt_p, [weak_float, weak_float], {}) == [strong]


_SCALAR_OPERANDS = [np.float64(0.3), np.float32(1.5), np.float16(2.0), np.int64(3), np.int8(-3),
                    np.int8(100), np.uint8(7), np.uint8(250), np.bool_(True),
                    np.complex64(1 + 2j), np.array(0.5), np.array([1.0, 2.0], np.float32),
                    np.float64(1e308), 2.0, 3, 200, True]


@pytest.mark.parametrize("name, ufunc", [("add", np.add), ("sub", np.subtract),
                                         ("mul", np.multiply), ("div", np.true_divide)])
def test_arithmetic_impls_give_the_ufuncs_results_and_types(name, ufunc):
    """The impls run numpy's scalar arithmetic through Python's operators: the same
    value, type and warnings (integers wrap silently; a float overflow warns) as the
    ufunc for every pair of operand kinds, or the same error."""
    impl = impl_rules[getattr(elementwise_arithmetic, f"{name}_p")]
    assert impl.ufunc is ufunc  # what the Array-API backends look up
    for x in _SCALAR_OPERANDS:
        for y in _SCALAR_OPERANDS:
            with warnings.catch_warnings(record=True) as want_warnings:
                warnings.simplefilter("always")
                try:
                    want = ufunc(x, y)
                except (TypeError, OverflowError) as e:
                    with pytest.raises(type(e)):
                        impl(x, y)
                    continue
            with warnings.catch_warnings(record=True) as got_warnings:
                warnings.simplefilter("always")
                got = impl(x, y)
            assert [w.category for w in got_warnings] == \
                [w.category for w in want_warnings], (x, y)
            assert type(got) is type(want), (x, y)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (x, y)
            np.testing.assert_array_equal(got, want)


def test_a_cotangent_is_summed_in_the_wider_type_then_cast_once():
    """A float32 input meeting float64 values: its cotangent is the float64 sum over
    the broadcast axes, correctly rounded to float32 (as JAX's), not a float32 sum
    of float32 roundings (off by 5e-5 relative here before)."""
    rng = np.random.default_rng(0)
    x, e = rng.standard_normal(3).astype(np.float32), rng.standard_normal((1000, 3)) * 100
    g = inert.grad(lambda x: inert.numpy.sum((x + e) ** 2))(x)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, (2 * (x.astype(np.float64) + e)).sum(0).astype(np.float32))
