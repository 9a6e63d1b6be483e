"""Nested differentiation: levels keep derivatives apart (no perturbation confusion)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp


def test_classic_perturbation_confusion():
    # d/dx [x * d/dy (x + y)]_{y=1} at x=1 is 1: the inner derivative must not see x.
    f = lambda x: x * inert.grad(lambda y: x + y)(1.0)
    assert inert.grad(f)(1.0) == pytest.approx(1.0)
    _, t = inert.jvp(f, (1.0,), (1.0,))
    assert t == pytest.approx(1.0)


def test_inner_derivative_depends_on_outer_variable():
    # d/dx [x * d/dy (x*y)]_{y=2} = d/dx x^2 = 2x
    f = lambda x: x * inert.grad(lambda y: x * y)(2.0)
    for x in (0.5, 3.0):
        assert inert.grad(f)(x) == pytest.approx(2 * x)


def test_inner_inactive_stays_active_for_outer_level():
    # inner: d/dx (x*y*y) = y^2 with y Inactive for the inner grad; outer: d/dy y^2 = 2y
    inner = lambda y: inert.grad(lambda x, yy: x * yy * yy)(1.0, inert.Inactive(y))
    assert inert.grad(inner)(3.0) == pytest.approx(6.0)
    _, t = inert.jvp(inner, (3.0,), (1.0,))
    assert t == pytest.approx(6.0)


def test_stop_gradient_is_inactive_at_every_level():
    inner = lambda y: inert.grad(lambda x: x * inert.stop_gradient(y * y))(1.0)
    assert inert.grad(inner)(3.0) == 0.0


def test_jvp_of_jvp_is_second_derivative():
    d2 = lambda x: inert.jvp(lambda x: inert.jvp(inp.sin, (x,), (1.0,))[1], (x,), (1.0,))[1]
    np.testing.assert_allclose(d2(0.7), -np.sin(0.7))


def test_third_derivative_all_mode_mixes():
    f = lambda x: inp.sin(x) * x
    want = -3 * np.sin(1.0) - np.cos(1.0)
    g = inert.grad
    fwd = lambda h: (lambda x: inert.jvp(h, (x,), (1.0,))[1])
    for third in (g(g(g(f))), fwd(g(g(f))), g(fwd(g(f))), fwd(fwd(fwd(f)))):
        np.testing.assert_allclose(third(1.0), want, rtol=1e-12)


def test_grad_of_grad_with_closure_over_outer_tracer():
    def f(x):
        h = lambda y: inp.sum(inp.exp(x * y))
        return inert.grad(h)(np.float64(0.5))
    # f(x) = x * exp(x/2);  f'(x) = exp(x/2) (1 + x/2)
    np.testing.assert_allclose(inert.grad(f)(1.2), np.exp(0.6) * 1.6)


_unary = [inp.sin, inp.cos, inp.tanh, lambda x: inp.exp(-x * x), lambda x: x * x,
          lambda x: x * 0.5 + 1.0]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, len(_unary) - 1), min_size=1, max_size=4),
       st.floats(-1.0, 1.0), st.lists(st.booleans(), min_size=2, max_size=2))
def test_random_nested_compositions_agree_across_modes(ops, x, modes):
    """A random chain, differentiated twice in every combination of modes, agrees."""
    def f(x):
        for i in ops:
            x = _unary[i](x)
        return x

    def d(h, reverse):
        return inert.grad(h) if reverse else (lambda x: inert.jvp(h, (x,), (1.0,))[1])

    reference = d(d(f, False), False)(x)
    got = d(d(f, modes[0]), modes[1])(x)
    np.testing.assert_allclose(got, reference, rtol=1e-10, atol=1e-12)
    eps = 1e-5
    fd = (d(f, True)(x + eps) - d(f, True)(x - eps)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6)
