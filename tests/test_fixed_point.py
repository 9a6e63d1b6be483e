"""A program using a custom rule as people write one: a fixed-point solver with a Python
`while` loop on concrete values, wrapped in `custom_vjp(nondiff_argnums=(0,))` whose
backward pass is the implicit-function theorem, itself solving a fixed point through
the same custom_vjp (JAX's custom-derivatives notebook, autograd's `fixed_points`).
So `bwd` is differentiable, and grad of grad works, as in JAX without jit.
"""

import functools

import numpy as np
import pytest

import inert
import inert.numpy as inp
from inert.api import replaying
from inert.errors import ConcretizationError

calls: list[str] = []


@functools.partial(inert.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    """The x with x = f(a, x), by iterating f until it stops moving."""
    calls.append("solve")
    x, x_new = x_guess, f(a, x_guess)
    while inp.max(inp.abs(x_new - x)) > 1e-13:  # on concrete values: Python decides
        x, x_new = x_new, f(a, x_new)
    return x_new


def fixed_point_fwd(f, a, x_guess):
    x_star = fixed_point(f, a, x_guess)
    return x_star, (a, x_star)


def _adjoint_step(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = inert.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def fixed_point_bwd(f, res, x_star_bar):
    """By the implicit-function theorem: u = x̄ + u ∂f/∂x (a fixed point again), and
    ā = u ∂f/∂a."""
    calls.append("bwd")
    a, x_star = res
    _, vjp_a = inert.vjp(lambda a: f(a, x_star), a)
    u = fixed_point(functools.partial(_adjoint_step, f), (a, x_star, x_star_bar), x_star_bar)
    return vjp_a(u)[0], inp.zeros_like(x_star)


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def newton_sqrt(a):
    return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)


def test_the_square_root_and_its_first_two_derivatives():
    calls.clear()
    assert newton_sqrt(2.0) == pytest.approx(np.sqrt(2.0), rel=1e-15)
    assert calls == ["solve"]
    for a in (0.5, 2.0, 9.0):  # each a first call (JAX's sequences are of first calls)
        replaying._entries.clear()
        calls.clear()
        assert inert.grad(newton_sqrt)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)
        assert calls == ["solve", "bwd", "solve"]  # JAX 0.10.2's sequence
        calls.clear()
        d2 = inert.grad(inert.grad(newton_sqrt))(a)
        assert d2 == pytest.approx(-0.25 * a ** -1.5, rel=1e-10)
        assert calls == ["solve", "bwd", "solve", "bwd", "solve", "bwd", "solve"]  # as JAX


def _contraction(params, x):
    w, b = params
    return inp.tanh(w @ x + b)


def _loss(params, c):
    x_star = fixed_point(_contraction, params, inp.zeros_like(params[1]))
    return inp.sum(x_star * c)


def _central_differences(fn, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (fn(x + e) - fn(x - e)) / (2 * h)
    return g


def test_a_vector_fixed_point_matches_finite_differences(rng):
    w, b, c = 0.4 * rng.standard_normal((3, 3)) / 3, rng.standard_normal(3), rng.standard_normal(3)
    gw, gb = inert.grad(_loss)((w, b), c)
    np.testing.assert_allclose(gw, _central_differences(lambda w: _loss((w, b), c), w),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, _central_differences(lambda b: _loss((w, b), c), b),
                               rtol=1e-6, atol=1e-8)
    # the second derivative: grad of <grad_b, v>, through bwd's own fixed point
    v = rng.standard_normal(3)

    def directional(b):
        return inp.vdot(inert.grad(_loss)((w, b), c)[1], v)

    np.testing.assert_allclose(inert.grad(directional)(b),
                               _central_differences(lambda b: float(directional(b)), b, 1e-5),
                               rtol=1e-5, atol=1e-7)


def test_grad_called_again_still_solves_and_calls_bwd_each_time():
    """The solver asks Python for values: the function stays on the plain path, where
    each call solves and calls bwd; only the call that recorded it (its second) ran the
    body once more, as the recording staged it."""
    replaying._entries.clear()
    for k in range(4):
        calls.clear()
        assert inert.grad(newton_sqrt)(4.0) == pytest.approx(0.25, rel=1e-12)
        assert calls == ["solve"] * (k == 1) + ["solve", "bwd", "solve"]


def test_under_jit_or_vmap_the_while_loop_cannot_see_values_as_in_jax():
    with pytest.raises(ConcretizationError):
        inert.jit(inert.grad(newton_sqrt))(2.0)
    with pytest.raises(ConcretizationError):
        inert.vmap(inert.grad(newton_sqrt))(np.array([2.0, 3.0]))
