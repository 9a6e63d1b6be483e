"""The special family: one table of cases drives values against scipy, abstract eval
against impl, jvp against finite differences and the vjp dot-product test; then the
behaviour of non-differentiable operands, numerical stability and bad inputs."""

from __future__ import annotations

from typing import Callable

import attrs
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
import scipy.special as sc
from harness import check_abstract_eval, check_grads, check_jvp, check_staged, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.scipy.special as isp
from inert.core.trace import abstract_eval, get_aval
from inert.errors import DTypeError, NonDifferentiableError, ShapeError
from inert.primitives import special as sp


@attrs.frozen
class Real:
    """A differentiable operand, drawn from (lo, hi)."""

    lo: float
    hi: float

    def sample(self, shape, rng):
        return rng.uniform(self.lo, self.hi, shape)


@attrs.frozen
class Param:
    """A non-differentiable operand (an order, a shape parameter), drawn from `values`."""

    values: tuple

    def sample(self, shape, rng):
        return rng.choice(np.asarray(self.values), shape)


@attrs.frozen
class Case:
    prim: inert.core.trace.Primitive
    fn: Callable  # the bind wrapper
    ref: Callable  # scipy's function
    domains: tuple

    @property
    def name(self) -> str:
        return self.prim.name

    def sample(self, rng):
        """Operands broadcasting to (2, 3): the first of several is (3,)."""
        n = len(self.domains)
        return [d.sample((3,) if i == 0 and n > 1 else (2, 3), rng)
                for i, d in enumerate(self.domains)]

    @property
    def differentiable(self) -> list[int]:
        return [i for i, d in enumerate(self.domains) if type(d) is Real]

    def of_differentiable(self, args):
        """The function of the differentiable operands, the others closed over."""
        diff = self.differentiable

        def f(*xs):
            full = list(args)
            for i, x in zip(diff, xs):
                full[i] = x
            return self.fn(*full)

        return f, tuple(args[i] for i in diff)


ORDERS = Param((0.0, 0.5, 1.0, 2.5))
SHAPES = Param((0.5, 1.5, 3.0, 4.5))
POSITIVE = Real(0.5, 5.0)

CASES = [
    Case(sp.erf_p, sp.erf, sc.erf, (Real(-2, 2),)),
    Case(sp.erfc_p, sp.erfc, sc.erfc, (Real(-2, 2),)),
    Case(sp.erfinv_p, sp.erfinv, sc.erfinv, (Real(-0.9, 0.9),)),
    Case(sp.ndtr_p, sp.ndtr, sc.ndtr, (Real(-3, 3),)),
    Case(sp.log_ndtr_p, sp.log_ndtr, sc.log_ndtr, (Real(-6, 3),)),
    Case(sp.gammaln_p, sp.gammaln, sc.gammaln, (POSITIVE,)),
    Case(sp.digamma_p, sp.digamma, sc.digamma, (POSITIVE,)),
    Case(sp.polygamma_p, sp.polygamma, sc.polygamma, (Param((0, 1, 2, 3)), POSITIVE)),
    Case(sp.betaln_p, sp.betaln, sc.betaln, (POSITIVE, POSITIVE)),
    Case(sp.igamma_p, sp.igamma, sc.gammainc, (SHAPES, Real(0.1, 5))),
    Case(sp.igammac_p, sp.igammac, sc.gammaincc, (SHAPES, Real(0.1, 5))),
    Case(sp.betainc_p, sp.betainc, sc.betainc, (SHAPES, SHAPES, Real(0.05, 0.95))),
    Case(sp.zeta_p, sp.zeta, sc.zeta, (Param((2.0, 3.0, 4.5)), POSITIVE)),
    Case(sp.jv_p, sp.jv, sc.jv, (ORDERS, POSITIVE)),
    Case(sp.iv_p, sp.iv, sc.iv, (ORDERS, POSITIVE)),
    Case(sp.kv_p, sp.kv, sc.kv, (ORDERS, POSITIVE)),
    Case(sp.xlogy_p, sp.xlogy, sc.xlogy, (Real(-2, 2), Real(0.1, 3))),
    Case(sp.xlog1py_p, sp.xlog1py, sc.xlog1py, (Real(-2, 2), Real(-0.5, 2))),
    Case(sp.entr_p, sp.entr, sc.entr, (Real(0.1, 3),)),
    Case(sp.logit_p, sp.logit, sc.logit, (Real(0.05, 0.95),)),
    Case(sp.erfcinv_p, sp.erfcinv, sc.erfcinv, (Real(0.1, 1.9),)),
    Case(sp.ndtri_p, sp.ndtri, sc.ndtri, (Real(0.05, 0.95),)),
    Case(sp.gamma_p, sp.gamma, sc.gamma, (Real(-2.9, 4.5),)),
    Case(sp.rgamma_p, sp.rgamma, sc.rgamma, (Real(-2.9, 4.5),)),
    Case(sp.gammasgn_p, sp.gammasgn, sc.gammasgn, (Real(-2.9, 4.5),)),
    Case(sp.beta_p, sp.beta, sc.beta, (POSITIVE, POSITIVE)),
    Case(sp.yv_p, sp.yv, sc.yv, (ORDERS, POSITIVE)),
    Case(sp.ive_p, sp.ive, sc.ive, (ORDERS, POSITIVE)),
    Case(sp.kve_p, sp.kve, sc.kve, (ORDERS, POSITIVE)),
    Case(sp.j0_p, sp.j0, sc.j0, (Real(-6, 6),)),
    Case(sp.j1_p, sp.j1, sc.j1, (Real(-6, 6),)),
    Case(sp.y0_p, sp.y0, sc.y0, (POSITIVE,)),
    Case(sp.y1_p, sp.y1, sc.y1, (POSITIVE,)),
    Case(sp.i0_p, sp.i0, sc.i0, (Real(-4, 4),)),
    Case(sp.i1_p, sp.i1, sc.i1, (Real(-4, 4),)),
    Case(sp.i0e_p, sp.i0e, sc.i0e, (Real(-4, 4),)),
    Case(sp.i1e_p, sp.i1e, sc.i1e, (Real(-4, 4),)),
    Case(sp.rel_entr_p, sp.rel_entr, sc.rel_entr, (Real(0.1, 3), Real(0.1, 3))),
    Case(sp.kl_div_p, sp.kl_div, sc.kl_div, (Real(0.1, 3), Real(0.1, 3))),
    Case(sp.spence_p, sp.spence, sc.spence, (Real(0.1, 3),)),
    Case(sp.expi_p, sp.expi, sc.expi, (Real(0.2, 3),)),
    Case(sp.exp1_p, sp.exp1, sc.exp1, (Real(0.2, 3),)),
    Case(sp.sinc_p, sp.sinc, np.sinc, (Real(-2, 2),)),
    Case(sp.cosm1_p, sp.cosm1, sc.cosm1, (Real(-3, 3),)),
    Case(sp.erfcx_p, sp.erfcx, sc.erfcx, (Real(-2, 5),)),
    Case(sp.dawsn_p, sp.dawsn, sc.dawsn, (Real(-3, 3),)),
    Case(sp.loggamma_p, sp.loggamma, sc.loggamma, (POSITIVE,)),
    Case(sp.binom_p, sp.binom, sc.binom, (Real(3, 8), Real(0.5, 2.5))),
    Case(sp.expn_p, sp.expn, sc.expn, (Param((1, 2, 3)), Real(0.2, 3))),
    Case(sp.hyp1f1_p, sp.hyp1f1, sc.hyp1f1, (SHAPES, Param((1.5, 2.0, 3.5)), Real(-2, 2))),
    Case(sp.hyp2f1_p, sp.hyp2f1, sc.hyp2f1,
         (SHAPES, Param((0.5, 1.0, 2.5)), Param((3.5, 5.0)), Real(-0.8, 0.8))),
    Case(sp.boxcox_p, sp.boxcox, sc.boxcox, (POSITIVE, Param((-0.5, 0.0, 0.7, 2.0)))),
    Case(sp.boxcox1p_p, sp.boxcox1p, sc.boxcox1p, (Real(-0.5, 3), Param((-0.5, 0.0, 0.7)))),
    Case(sp.poch_p, sp.poch, sc.poch, (POSITIVE, Real(-0.4, 3))),
]
CASE_IDS = [c.name for c in CASES]
by_case = pytest.mark.parametrize("case", CASES, ids=CASE_IDS)


@by_case
def test_values_match_scipy(case, rng):
    args = case.sample(rng)
    got = case.fn(*args)
    np.testing.assert_allclose(got, case.ref(*args), rtol=1e-14)
    assert np.shape(got) == (2, 3) and np.asarray(got).dtype == np.float64


def _variants(args):
    """The same operands as float32, as ints, and with the first a Python scalar."""
    yield [a.astype(np.float32) for a in args]
    yield [np.ceil(a).astype(np.int64) for a in args]
    yield [float(args[0].flat[0]), *args[1:]]
    yield [float(args[0].flat[0]), *(a.astype(np.float32) for a in args[1:])]
    yield [a.flat[0].item() for a in args]


@by_case
def test_abstract_eval_matches_impl(case, rng):
    with np.errstate(all="ignore"):
        for args in _variants(case.sample(rng)):
            check_abstract_eval(case.prim, args, {})


@by_case
def test_float32_stays_float32(case, rng):
    """float32 operands give float32 values and tangents (scipy has float32 loops)."""
    args = [a.astype(np.float32) for a in case.sample(rng)]
    f, xs = case.of_differentiable(args)
    out, tangent = inert.jvp(f, xs, [np.ones_like(x) for x in xs])
    assert out.dtype == np.float32
    assert tangent.dtype == np.float32


@by_case
def test_jvp_matches_finite_differences(case, rng):
    f, xs = case.of_differentiable(case.sample(rng))
    check_jvp(f, xs, rng, rtol=1e-7, atol=1e-7)  # scipy's values are accurate to ~1e-15


@by_case
def test_vjp_dot_product(case, rng):
    f, xs = case.of_differentiable(case.sample(rng))
    check_vjp(f, xs, rng)


@by_case
def test_staged_matches_eager(case, rng):
    f, xs = case.of_differentiable(case.sample(rng))
    check_staged(f, xs)
    check_staged(inert.grad(lambda *xs: inert.numpy.sum(f(*xs))), xs)


@by_case
def test_second_derivatives(case, rng):
    f, xs = case.of_differentiable(case.sample(rng))
    check_grads(f, xs, rng, order=2, rtol=1e-6, atol=1e-6)


def test_nested_grad_of_jv_in_z():
    z = 1.7
    d2 = inert.grad(inert.grad(lambda z: sp.jv(0.5, z)))(z)
    # Bessel's equation: z^2 J'' + z J' + (z^2 - v^2) J = 0
    d1 = inert.grad(lambda z: sp.jv(0.5, z))(z)
    np.testing.assert_allclose(z * z * d2 + z * d1 + (z * z - 0.25) * sc.jv(0.5, z), 0,
                               atol=1e-12)


# ---------------------------------------------------------------------------------
# Non-differentiable operands: anything inactive works, an active one is an error

# igamma's and igammac's `a` is differentiable once (its derivative, igamma_grad_a, is
# not again: tests/primitives/test_incomplete_gamma.py); the table holds it fixed
DIFFERENTIABLE_ONCE = {sp.igamma_p, sp.igammac_p}
PARAM_CASES = [(c, i) for c in CASES for i, d in enumerate(c.domains)
               if type(d) is Param and c.prim not in DIFFERENTIABLE_ONCE]
by_param = pytest.mark.parametrize(
    "case, i", PARAM_CASES, ids=[f"{c.name}-{c.prim.operand_names[i]}" for c, i in PARAM_CASES])


def _with_param(case, args, i):
    """`(p, x) -> sum(fn(...))` with the parameter `p` at operand i; each case with a
    parameter has exactly one differentiable operand, `x`."""
    (j,) = case.differentiable

    def f(p, x):
        full = list(args)
        full[i], full[j] = p, x
        return inert.numpy.sum(case.fn(*full))

    return f, args[j]


@by_param
def test_inactive_parameter_in_every_form(case, i, rng):
    args = case.sample(rng)
    args[i] = args[i].astype(np.float64)
    f, x = _with_param(case, args, i)
    want = inert.grad(f, argnums=1)(args[i], x)  # an array not differentiated
    value = args[i].flat[0].item()
    np.testing.assert_allclose(inert.grad(f, argnums=1)(value, x),
                               inert.grad(f, argnums=1)(np.full(np.shape(x), value), x),
                               rtol=1e-13)
    g_p, g_x = inert.grad(lambda p, x: f(inert.stop_gradient(p), x), argnums=(0, 1))(args[i], x)
    np.testing.assert_array_equal(g_p, 0)
    np.testing.assert_allclose(g_x, want, rtol=1e-13)
    g_p, g_x = inert.grad(f, argnums=(0, 1))(inert.Inactive(args[i]), x)
    assert g_p is None
    np.testing.assert_allclose(g_x, want, rtol=1e-13)


@by_param
def test_active_parameter_raises_naming_primitive_and_operand(case, i, rng):
    args = case.sample(rng)
    args[i] = args[i].astype(np.float64)
    f, x = _with_param(case, args, i)
    pattern = rf"^{case.name}: operand {i} \({case.prim.operand_names[i]}\) is active"
    with pytest.raises(NonDifferentiableError, match=pattern):
        inert.grad(f)(args[i], x)
    with pytest.raises(NonDifferentiableError, match=pattern):
        inert.jvp(f, (args[i], x), (np.ones_like(args[i]), np.zeros_like(x)))
    with pytest.raises(NonDifferentiableError, match=pattern):  # active at the outer level
        inert.grad(lambda p: inert.grad(f, argnums=1)(p, x).sum())(args[i])


def test_float32_gradient_is_float32_where_the_result_is_float64():
    """gammainc's float64 loop comes first, so a Python-float `a` makes the result
    float64; the gradient still has its argument's dtype."""
    z = np.linspace(0.5, 3, 4, dtype=np.float32)
    assert sp.igamma(2.0, z).dtype == np.float64
    g = inert.grad(lambda z: inert.numpy.sum(sp.igamma(2.0, z)))(z)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, z * np.exp(-z.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize("fn", [lambda z: sp.jv(0.5, z), lambda z: sp.polygamma(1, z),
                                lambda z: sp.betainc(2.0, 3, z), lambda z: sp.zeta(2.5, z)],
                         ids=["jv", "polygamma", "betainc", "zeta"])
def test_staged_derivative_evaluates_to_its_declared_dtype(fn):
    """A rule computing with a Python-scalar parameter must not let it become a float64
    numpy scalar: the staged program says float32 (the scalar is weakly typed), and
    evaluating it must give float32 too."""
    z = np.linspace(0.2, 0.9, 4, dtype=np.float32)
    tangent = lambda z: inert.jvp(fn, (z,), (np.ones(4, np.float32),))[1]  # noqa: E731
    closed = inert.make_jaxpr(tangent)(z)
    (out,) = inert.eval_jaxpr(closed.jaxpr, closed.consts, [z])
    assert closed.jaxpr.outvars[0].aval.dtype == np.float32
    assert np.asarray(out).dtype == np.float32


def test_xlogy_zero_tangent_stays_zero_where_log_is_infinite():
    y = np.array([0.0, 2.0])
    _, tangent = inert.jvp(lambda x: sp.xlogy(x, y), (np.array([0.0, 1.0]),),
                           (np.array([0.0, 1.0]),))
    np.testing.assert_array_equal(tangent, [0.0, np.log(2.0)])


def _central_difference(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name, fn, ref, x, h", [
    # x^(a-1) alone overflows (200^199), Gamma(200) too; their ratio is moderate
    ("igamma", lambda x: sp.igamma(200.0, x), lambda x: sc.gammainc(200.0, x),
     np.array([185.0, 200.0, 215.0]), 1e-4),
    # x^(a-1) (1-x)^(b-1) and B(a, b) both underflow
    ("betainc", lambda x: sp.betainc(600.0, 600.0, x), lambda x: sc.betainc(600.0, 600.0, x),
     np.array([0.48, 0.5, 0.52]), 1e-7),
    # pdf and cdf both underflow
    ("log_ndtr", sp.log_ndtr, sc.log_ndtr, np.array([-40.0, -30.0, 5.0]), 1e-5),
    ("kv", lambda z: sp.kv(2.5, z), lambda z: sc.kv(2.5, z), np.array([50.0, 300.0]), 1e-5),
])
def test_derivative_is_finite_where_its_factors_overflow(name, fn, ref, x, h):
    _, tangent = inert.jvp(fn, (x,), (np.ones_like(x),))
    assert np.all(np.isfinite(tangent)), name
    np.testing.assert_allclose(tangent, _central_difference(ref, x, h), rtol=1e-5)


# ---------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize("fn, args", [
    (sp.jv, (np.ones(3), np.ones(4))),
    (sp.betainc, (np.ones(2), np.ones((3, 1)), np.ones(4))),
    (sp.xlogy, (np.ones((2, 3)), np.ones(2))),
], ids=["jv", "betainc", "xlogy"])
def test_shape_mismatch_names_the_primitive(fn, args):
    name = fn.__name__
    with pytest.raises(ShapeError, match=rf"^{name}: operand shapes"):
        fn(*args)
    with pytest.raises(ShapeError, match=rf"^{name}: operand shapes"):
        inert.make_jaxpr(fn)(*args)


@pytest.mark.parametrize("prim, args", [
    (sp.gammaln_p, [np.ones(2, np.complex128)]),
    (sp.erfinv_p, [np.ones(2, np.complex64)]),
    (sp.igamma_p, [np.ones(2), np.ones(2, np.complex128)]),
], ids=lambda p: getattr(p, "name", ""))
def test_unsupported_dtype_names_the_primitive(prim, args):
    with pytest.raises(DTypeError, match=rf"^{prim.name}: not defined for operand dtypes"):
        abstract_eval(prim, [get_aval(a) for a in args], {})
    with pytest.raises(DTypeError, match=rf"^{prim.name}: "):
        prim.bind(*args)


# ---------------------------------------------------------------------------------
# Properties over broadcast shapes

BROADCASTING = {c.name: c for c in CASES if c.name in ("jv", "xlogy", "betainc", "igammac")}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(BROADCASTING)), data=st.data())
def test_broadcasting_operands(name, data):
    case = BROADCASTING[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=len(case.domains),
                                                         max_dims=3, max_side=3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    args = [d.sample(s, rng) for d, s in zip(case.domains, shapes.input_shapes)]
    check_abstract_eval(case.prim, args, {})
    assert np.shape(case.fn(*args)) == shapes.result_shape
    f, xs = case.of_differentiable(args)
    check_vjp(f, xs, rng)


# ---------------------------------------------------------------------------------
# The namespace: logsumexp, softmax and log_softmax against scipy


def test_namespace_exports_scipy_names():
    for name in isp.__all__:
        assert callable(getattr(isp, name)), name
        assert hasattr(sc, name), name
    # the namespace's functions are the primitives' wrappers, returning inert Arrays
    assert isp.gammainc.__wrapped__ is sp.igamma and isp.gammaincc.__wrapped__ is sp.igammac


def test_expit_and_logit(rng):
    x = rng.uniform(-4, 4, (2, 3))
    np.testing.assert_allclose(isp.expit(x), sc.expit(x), rtol=1e-15)
    np.testing.assert_allclose(isp.logit(isp.expit(x)), x, rtol=1e-12)
    check_grads(lambda x: isp.logit(isp.expit(x) * 0.5 + 0.25), (x,), rng, order=2)


LOGSUMEXP_KWARGS = [
    {},
    {"axis": 1},
    {"axis": -1, "keepdims": True},
    {"axis": (0, 2)},
    {"axis": 0, "b": "positive"},
    {"axis": 1, "b": "signed", "return_sign": True},
    {"b": "signed", "return_sign": True, "keepdims": True},
]


def _logsumexp_args(kwargs, rng, scale=3.0):
    a = rng.normal(0, scale, (2, 3, 4))
    kwargs = dict(kwargs)
    if kwargs.get("b") == "positive":
        kwargs["b"] = rng.uniform(0.5, 2, (3, 4))
    elif kwargs.get("b") == "signed":
        kwargs["b"] = rng.uniform(-2, 2, (3, 1))
    return a, kwargs


@pytest.mark.parametrize("kwargs", LOGSUMEXP_KWARGS, ids=str)
@pytest.mark.parametrize("offset", [0.0, 1000.0, -1000.0])
def test_logsumexp_matches_scipy_without_overflow(kwargs, offset, rng):
    a, kwargs = _logsumexp_args(kwargs, rng)
    got = isp.logsumexp(a + offset, **kwargs)
    want = sc.logsumexp(a + offset, **kwargs)
    for g, w in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
        assert np.shape(g) == np.shape(w)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, w, rtol=1e-13)


@pytest.mark.parametrize("kwargs", LOGSUMEXP_KWARGS, ids=str)
def test_logsumexp_derivatives(kwargs, rng):
    a, kwargs = _logsumexp_args(kwargs, rng, scale=1.0)
    if kwargs.get("return_sign"):
        f = lambda a: isp.logsumexp(a, **kwargs)[0]  # noqa: E731
    else:
        f = lambda a: isp.logsumexp(a, **kwargs)  # noqa: E731
    check_grads(f, (a,), rng, order=2)
    check_staged(f, (a,))


def test_logsumexp_gradient_is_softmax_at_large_inputs():
    a = np.array([1000.0, 1000.0, 999.0])
    g = inert.grad(isp.logsumexp)(a)
    np.testing.assert_allclose(g, sc.softmax(a), rtol=1e-14)
    np.testing.assert_allclose(g, isp.softmax(a), rtol=1e-14)


def test_logsumexp_of_all_minus_infinity_is_minus_infinity():
    a = np.full((2, 3), -np.inf)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(isp.logsumexp(a, axis=1), [-np.inf, -np.inf])


@pytest.mark.parametrize("fn", [isp.logsumexp, isp.softmax, isp.log_softmax])
def test_the_shift_is_a_constant_that_keeps_nothing(fn, rng):
    """The max is taken of a stop_gradient value: nothing about it (a mask of where the
    maximum is) is kept for the backward pass, only the exponentials and their sums."""
    residuals = inert.saved_residuals(lambda a: fn(a, axis=1), rng.normal(size=(3, 4)))
    assert {r.origin for r in residuals} == {"exp", "reduce_sum"}


def test_logsumexp_keeps_float32():
    a = np.linspace(-2, 1000, 6, dtype=np.float32)
    assert isp.logsumexp(a).dtype == np.float32
    assert inert.grad(isp.logsumexp)(a).dtype == np.float32


@pytest.mark.parametrize("fn, ref", [(isp.softmax, sc.softmax),
                                     (isp.log_softmax, sc.log_softmax)], ids=["softmax",
                                                                               "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_softmax_family_matches_scipy(fn, ref, axis, rng):
    x = rng.normal(0, 3, (3, 4))
    for offset in (0.0, 1000.0, -1000.0):
        got = fn(x + offset, axis=axis)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, ref(x + offset, axis=axis), rtol=1e-12, atol=1e-300)
    check_grads(lambda x: fn(x, axis=axis), (x,), rng, order=2)


def test_softmax_default_axis_is_scipys():
    """scipy normalises over all of x by default (jax.nn's softmax uses axis=-1)."""
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(isp.softmax(x), sc.softmax(x), rtol=1e-14)
    np.testing.assert_allclose(inert.numpy.sum(isp.softmax(x)), 1.0)
