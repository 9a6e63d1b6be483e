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
    for _ in range(10):  # an earlier test's garbage goes in layers: a compiled loop body
        if not gc.collect():  # is released (a weak dict's value) once its jaxpr is freed,
            break  # and its nested loops' after it
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


def _apply(fn, x, n, name, cls, flag, nothing):
    """Uses each non-differentiated argument as Python would: a function, a Python int
    in `range`, a string, a class, a bool in an `if`, None."""
    assert isinstance(n, int) and name == "scale" and cls is float and nothing is None
    for _ in range(n):
        x = fn(x)
    return inp.sum(x * cls(2)) if flag else inp.sum(x)


def test_arguments_not_differentiated_reach_the_function_as_they_are():
    """As in JAX: grad, value_and_grad, jacfwd, jacrev and hessian pass functions,
    strings, classes, None, bools and Python ints they do not differentiate to `f`
    unchanged (arrays and floats are traced, inactive); vjp does so for what an
    `Inactive` holds."""
    assert_allclose(inert.grad(lambda f, x: f(x), 1)(inp.sin, 1.0), np.cos(1.0))
    x = np.array([0.3, 0.7])
    args = (inp.sin, x, 2, "scale", float, True, None)
    want = 2 * np.cos(np.sin(x)) * np.cos(x)
    assert_allclose(inert.grad(_apply, 1)(*args), want)
    assert_allclose(inert.value_and_grad(_apply, 1)(*args)[1], want)
    assert_allclose(inert.jacfwd(_apply, 1)(*args), want)
    assert_allclose(inert.jacrev(_apply, 1)(*args), want)
    assert inert.hessian(_apply, 1)(*args).shape == (2, 2)
    out, pull = inert.vjp(lambda f, y: f(y), inert.Inactive(inp.sin), x)
    assert_allclose(out, np.sin(x))
    assert pull(np.ones(2))[0] is None
    assert_allclose(pull(np.ones(2))[1], np.cos(x))
    with pytest.raises(TypeError, match="not a valid inert value"):
        inert.grad(lambda f, x: f(x), 0)(inp.sin, 1.0)  # differentiated: refused


def test_keyword_arguments_pass_through_undifferentiated():
    """`grad(f)(x, key=value)` calls `f(x, key=value)`, as JAX does; arrays among them
    are inactive."""
    f = lambda x, *, w, power=1: inp.sum(w * x ** power)
    x, w = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    assert_allclose(inert.grad(f)(x, w=w, power=2), 2 * w * x)
    value, g = inert.value_and_grad(f)(x, w=w)
    assert_allclose(value, w @ x)
    assert_allclose(g, w)
    assert_allclose(inert.jacrev(f)(x, w=w), w)
    assert_allclose(inert.jacfwd(f)(x, w=w, power=2), 2 * w * x)
    assert_allclose(inert.hessian(f)(x, w=w, power=2), np.diag(2 * w))
    assert_allclose(inert.grad(f, argnums=-1)(x, w=w), w)  # argnums count positional ones
