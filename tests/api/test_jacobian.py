"""jacfwd, jacrev and hessian: pytrees in and out, agreement between the modes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import inert
import inert.numpy as inp


def softmax_cross_entropy(w, x):
    logits = x @ w
    return -inp.sum(logits[:, 0] - inp.log(inp.sum(inp.exp(logits), axis=1)))


def rosenbrock(x):
    return inp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_jacfwd_equals_jacrev_on_realistic_functions(rng):
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    f = lambda w: inp.tanh(x @ w).ravel() * 2.0
    np.testing.assert_allclose(inert.jacfwd(f)(w), inert.jacrev(f)(w), rtol=1e-12, atol=1e-14)
    assert inert.jacfwd(f)(w).shape == (15, 4, 3)
    g_fwd = inert.jacfwd(softmax_cross_entropy)(w, x)
    np.testing.assert_allclose(g_fwd, inert.grad(softmax_cross_entropy)(w, x), rtol=1e-10)


def test_hessian_is_symmetric_and_matches_reverse_over_reverse(rng):
    x = rng.standard_normal(6)
    h = inert.hessian(rosenbrock)(x)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(h, inert.jacrev(inert.grad(rosenbrock))(x), rtol=1e-12)
    eps = 1e-6
    fd = np.stack([(inert.grad(rosenbrock)(x + eps * e) - inert.grad(rosenbrock)(x - eps * e))
                   / (2 * eps) for e in np.eye(6)])
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-4)


def test_hessian_vector_product_equals_hessian_times_vector(rng):
    x, v = rng.standard_normal(8), rng.standard_normal(8)
    hvp = inert.jvp(inert.grad(rosenbrock), (x,), (v,))[1]
    np.testing.assert_allclose(hvp, inert.hessian(rosenbrock)(x) @ v, rtol=1e-10)


def test_pytrees_in_and_out_and_argnums(rng):
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal(3)

    def f(p, x):
        y = x @ p["w"] + p["b"]
        return {"y": y, "s": inp.sum(y * y)}

    for jac in (inert.jacfwd, inert.jacrev):
        j = jac(f)(params, x)
        assert j["y"]["w"].shape == (2, 3, 2) and j["s"]["b"].shape == (2,)
        np.testing.assert_allclose(j["y"]["b"], np.eye(2))
        jy = jac(f, argnums=(0, 1))(params, x)["y"]  # per output: one block per argnum
        np.testing.assert_allclose(jy[1], params["w"].T)


def test_jacobians_with_inactive_arguments_and_has_aux(rng):
    w, x = rng.standard_normal(3), rng.standard_normal(3)
    f = lambda w, x: (inp.sin(w * x), inp.sum(x))
    j, aux = inert.jacrev(f, has_aux=True)(w, inert.Inactive(x))
    np.testing.assert_allclose(j, np.diag(np.cos(w * x) * x))
    assert aux == pytest.approx(x.sum())
    with pytest.raises(TypeError, match="float inputs"):
        inert.jacfwd(lambda n: n * 2.0)(np.arange(3))


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_jacobian_modes_agree_on_random_shapes(m, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    f = lambda x: inp.tanh(a @ x) * inp.sum(x * x)
    x = rng.standard_normal(n)
    np.testing.assert_allclose(inert.jacfwd(f)(x), inert.jacrev(f)(x), rtol=1e-10, atol=1e-12)
    h = inert.hessian(lambda x: inp.sum(f(x)))(x)
    np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-12)


def test_integer_outputs_empty_inputs_and_float32():
    for jac in (inert.jacfwd, inert.jacrev):
        j, k = jac(lambda x: (x * 2.0, inp.argmax(x)))(np.ones(2))
        np.testing.assert_array_equal(j, 2 * np.eye(2))
        assert k.dtype == inert.float0 and k.shape == (2,)
        assert jac(lambda x: x * 2)(np.ones(0, np.float32)).dtype == np.float32
        assert jac(lambda x: x * 2)(np.ones(2, np.float32)).dtype == np.float32


def test_logaddexp_gradient_at_ties_is_one_half_each():
    g = inert.grad(lambda a, b: inp.logaddexp(a, b), argnums=(0, 1))(1.0, 1.0)
    np.testing.assert_allclose(g, (0.5, 0.5))
    g = inert.grad(lambda a, b: inp.logaddexp(a, b), argnums=(0, 1))(1.0, 3.0)
    np.testing.assert_allclose(g, (1 / (1 + np.exp(2)), 1 / (1 + np.exp(-2))))
