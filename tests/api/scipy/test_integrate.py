"""odeint against scipy's solve_ivp, its adjoint gradients and its forward-mode
derivatives against finite differences, and what its backward pass keeps compared
with a naive scan-based fixed-step solve of the same problem."""

from __future__ import annotations

import numpy as np
import pytest
from harness import assert_allclose, numerical_jvp
from scipy.integrate import solve_ivp

import inert
import inert.numpy as jnp
from inert.scipy.integrate import odeint

T = np.array([0.0, 0.4, 1.1, 2.0])
Y0 = np.array([1.0, 0.0])
K = np.array([2.0, 0.3])
TOL = {"rtol": 1e-10, "atol": 1e-10}


def oscillator(y, t, k):
    """A damped oscillator with a time-dependent damping."""
    return jnp.stack([y[1], -k[0] * y[0] - k[1] * y[1] * jnp.cos(t)])


def reference(y0, t, k):
    def rhs(t, y):
        return [y[1], -k[0] * y[0] - k[1] * y[1] * np.cos(t)]
    return solve_ivp(rhs, (t[0], t[-1]), y0, method="DOP853", t_eval=t, rtol=1e-13,
                     atol=1e-13).y.T


def test_values_match_solve_ivp():
    ys = odeint(oscillator, Y0, T, K, **TOL)
    np.testing.assert_allclose(ys, reference(Y0, T, K), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(inert.jit(lambda y0: odeint(oscillator, y0, T, K, **TOL))(Y0),
                               ys, rtol=1e-13)
    assert inert.experimental.ode.odeint is odeint


def test_pytree_state_and_arguments():
    def decay(state, t, rates):
        return {"a": -rates["a"] * state["a"], "b": (-rates["b"] * state["b"][0],)}

    state = {"a": np.array([1.0, 2.0]), "b": (np.array(3.0),)}
    rates = {"a": 0.5, "b": np.array(1.5)}
    ys = odeint(decay, state, T, rates, **TOL)
    np.testing.assert_allclose(ys["a"], np.exp(-0.5 * T)[:, None] * [1.0, 2.0], rtol=1e-8)
    np.testing.assert_allclose(ys["b"][0], 3.0 * np.exp(-1.5 * T), rtol=1e-8)
    g = inert.grad(lambda r: jnp.sum(odeint(decay, state, T, r, **TOL)["b"][0]))(rates)
    np.testing.assert_allclose(g["b"], np.sum(-3.0 * T * np.exp(-1.5 * T)), rtol=1e-7)
    np.testing.assert_allclose(g["a"], 0.0)


def _loss(y0, t, k, differentiation="adjoint"):
    ys = odeint(oscillator, y0, t, k, differentiation=differentiation, **TOL)
    return jnp.sum(ys ** 2 * np.arange(1.0, 5.0)[:, None])


def test_adjoint_gradients_match_finite_differences(rng):
    grads = inert.grad(_loss, argnums=(0, 1, 2))(Y0, T, K)
    for i, g in enumerate(grads):
        direction = rng.standard_normal(np.shape(g))
        args = [Y0, T, K]
        tangents = [np.zeros_like(a) for a in args]
        tangents[i] = direction
        want = numerical_jvp(_loss, tuple(args), tuple(tangents), eps=1e-6)
        np.testing.assert_allclose(np.vdot(g, direction), want, rtol=1e-6)


def test_forward_mode_through_the_solver_matches_finite_differences(rng):
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in (Y0, T, K))
    f = lambda *a: _loss(*a, differentiation="forward")  # noqa: E731
    _, tangent = inert.jvp(f, (Y0, T, K), tangents)
    assert_allclose(tangent, numerical_jvp(_loss, (Y0, T, K), tangents), rtol=1e-6, atol=1e-6)
    jac = inert.jacfwd(lambda k: odeint(oscillator, Y0, T[:3], k, differentiation="forward",
                                        **TOL))(K)
    np.testing.assert_allclose(jac, inert.jacrev(lambda k: odeint(oscillator, Y0, T[:3], k,
                                                                  **TOL))(K), rtol=1e-6,
                               atol=1e-9)


def test_each_version_refuses_the_other_mode():
    with pytest.raises(TypeError, match="forward-mode differentiation"):
        inert.jvp(lambda k: odeint(oscillator, Y0, T, k), (K,), (K,))
    with pytest.raises(Exception, match="while_loop"):
        inert.grad(lambda k: _loss(Y0, T, k, "forward"))(K)
    with pytest.raises(ValueError, match="differentiation must be"):
        odeint(oscillator, Y0, T, K, differentiation="both")
    with pytest.raises(ValueError, match="increasing"):
        odeint(oscillator, Y0, T[::-1], K)


def test_float32_state_stays_float32():
    ys = odeint(lambda y, t: -y * jnp.cos(t), Y0.astype(np.float32), T, rtol=1e-5, atol=1e-5)
    assert ys.dtype == np.float32
    np.testing.assert_allclose(ys[:, 0], np.exp(-np.sin(T)), rtol=1e-4)


def test_a_differentiated_value_closed_over_by_func_is_an_error():
    def loss(k):
        return jnp.sum(odeint(lambda y, t: -k * y, Y0, T))

    with pytest.raises(inert.errors.NonDifferentiableError, match="pass it as an argument"):
        inert.grad(loss)(0.5)


def test_mxstep_exhausted_gives_nan():
    ys = odeint(oscillator, Y0, np.array([0.0, 50.0]), K, mxstep=5)
    assert np.all(np.isnan(ys[1])) and np.all(ys[0] == Y0)


def _rk4_scan(y0, t_end, k, steps):
    """The naive alternative: fixed-step RK4 as a scan, differentiated by reverse mode
    through every step."""
    h = t_end / steps

    def step(y, t):
        k1 = oscillator(y, t, k)
        k2 = oscillator(y + h / 2 * k1, t + h / 2, k)
        k3 = oscillator(y + h / 2 * k2, t + h / 2, k)
        k4 = oscillator(y + h * k3, t + h, k)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    return inert.lax.scan(step, y0, np.arange(steps) * h)[1]


def test_the_adjoint_keeps_only_the_solution_at_the_requested_times():
    """Against a scan of RK4 steps, which keeps every stage of every step."""
    t = np.linspace(0.0, 2.0, 5)
    adjoint = inert.saved_residuals(lambda k: jnp.sum(odeint(oscillator, Y0, t, k, **TOL)), K)
    naive = inert.saved_residuals(lambda k: jnp.sum(_rk4_scan(Y0, 2.0, k, 200)), K)
    adjoint_bytes = sum(r.nbytes for r in adjoint)
    naive_bytes = sum(r.nbytes for r in naive)
    assert adjoint_bytes <= t.nbytes + Y0.nbytes * len(t) + K.nbytes
    assert naive_bytes > 50 * adjoint_bytes
    print(f"residual bytes: adjoint odeint {adjoint_bytes}, RK4 scan of 200 steps {naive_bytes}")


def test_vmap_over_initial_states_and_jit_of_the_gradient():
    decay = lambda y, t, k: -k * y  # noqa: E731
    y0s = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 0.1]])
    ys = inert.vmap(lambda y0: odeint(decay, y0, T, 0.7))(y0s)
    np.testing.assert_allclose(ys, y0s[:, None, :] * np.exp(-0.7 * T)[None, :, None],
                               rtol=1e-7)
    grads = inert.vmap(inert.jit(inert.grad(lambda k, y0: jnp.sum(odeint(decay, y0, T, k)))),
                       in_axes=(None, 0))(0.7, y0s)
    want = [np.sum(-T[:, None] * y0 * np.exp(-0.7 * T)[:, None]) for y0 in y0s]
    np.testing.assert_allclose(grads, want, rtol=1e-6)


def test_second_derivatives_through_the_adjoint_method():
    """The adjoint's backward pass is the adjoint solver again, so grad of grad works:
    y(1) = y0 exp(-k) for dy/dt = -k y, and a hessian of a two-state system matches
    central differences of its gradient (row by row: `hessian`'s vmap needs a batching
    rule for the custom rule's linear part, which it lacks)."""
    def decay(k, y0):
        return odeint(lambda y, t, k: -k * y, y0, np.array([0.0, 1.0]), k)[-1]

    k, y0 = 0.7, 1.5
    np.testing.assert_allclose(inert.grad(inert.grad(decay))(k, y0), y0 * np.exp(-k),
                               rtol=1e-6)
    np.testing.assert_allclose(inert.grad(inert.grad(decay), argnums=1)(k, y0), -np.exp(-k),
                               rtol=1e-6)

    def oscillator(p):
        ys = odeint(lambda y, t, p: jnp.stack([y[1], -p[0] * y[0] - p[1] * y[1]]),
                    np.array([1.0, 0.0]), np.array([0.0, 0.5, 1.0]), p)
        return jnp.sum(ys ** 2)

    p, h = np.array([2.0, 0.3]), 1e-4
    gradient = inert.grad(oscillator)
    hessian = np.stack([inert.grad(lambda p, i=i: gradient(p)[i])(p) for i in range(2)])
    numeric = np.stack([(gradient(p + h * e) - gradient(p - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-7)
