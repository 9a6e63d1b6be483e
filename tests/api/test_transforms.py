"""linear_transpose: the transpose of a linear function, by the dot-product test."""

import gc

import numpy as np
import pytest
from harness import assert_allclose

import inert
import inert.numpy as inp
from inert.core.avals import ShapedArray
from inert.core.rules import MissingRuleError


def test_linear_transpose_by_the_dot_product_test(rng):
    A = rng.standard_normal((4, 3))
    f = lambda x, y: {"a": A @ x * 2.0 - y[:4], "b": inp.sum(y) * 3.0}
    x, y = rng.standard_normal(3), rng.standard_normal(5)
    f_t = inert.linear_transpose(f, x, ShapedArray((5,), np.float64))  # avals are enough
    u = {"a": rng.standard_normal(4), "b": rng.standard_normal()}
    ct_x, ct_y = f_t(u)
    out = f(x, y)
    lhs = np.dot(out["a"], u["a"]) + out["b"] * u["b"]
    np.testing.assert_allclose(lhs, np.dot(x, ct_x) + np.dot(y, ct_y), rtol=1e-12)


def test_linear_transpose_of_a_linearized_function_is_its_vjp(rng):
    f = lambda x: inp.sin(x) * inp.tanh(x[::-1])
    x = rng.standard_normal(6)
    _, f_jvp = inert.linearize(f, x)
    u = rng.standard_normal(6)
    assert_allclose(inert.linear_transpose(f_jvp, x)(u), inert.vjp(f, x)[1](u), rtol=1e-12)


def test_linear_transpose_refuses_a_nonlinear_function():
    with pytest.raises(MissingRuleError, match="sin"):
        inert.linear_transpose(inp.sin, np.ones(3))(np.ones(3))


def test_a_grad_call_leaves_no_cyclic_garbage():
    """Refcounting frees what a grad call (or make_jaxpr) traced: a reference cycle (a
    trace and its main trace, a trace caching its own tracers) would keep the whole
    program alive until the cyclic collector walks it, milliseconds per call for a
    long program."""
    f = lambda x: inp.sum(inp.sin(x) * 2.0 + 1.0) * 3.0
    x = np.ones(3)
    inert.grad(f)(x)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # keep what is collected, to see whose it is
    try:
        inert.grad(f)(x)
        inert.make_jaxpr(f)(x)
        gc.collect()
        # only inert's objects count: other threads (a Dask cluster's) make garbage too
        ours = [o for o in gc.garbage if type(o).__module__.startswith("inert.")]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_grad_does_not_compute_the_discarded_value():
    """grad's forward pass runs only what the gradient needs: the loss term log(y) of an
    inactive y feeds the value alone, so its NaN is never computed under grad (while
    value_and_grad computes, and reports, it)."""
    def f(x, y):
        return inp.sum(x * 2.0) + inp.log(y)

    x, y = np.ones(3), inert.Inactive(-1.0)
    with inert.debug_nans(True):
        assert_allclose(inert.grad(f)(x, y), np.full(3, 2.0))
        with pytest.raises(FloatingPointError, match="log"):
            inert.value_and_grad(f)(x, y)
    value, g = inert.value_and_grad(lambda x: inp.sum(x * x))(np.arange(3.0))
    assert_allclose(value, 5.0)
    assert_allclose(g, 2 * np.arange(3.0))
    g, aux = inert.grad(lambda x: (inp.sum(x * x), x + 1), has_aux=True)(np.arange(3.0))
    assert_allclose(aux, np.arange(3.0) + 1)
